"""Items and their immutable versions: what an import adds or revises, and an item's history.

An item is one question of one bank (bank name + question id). Its content lives in item versions;
a re-import adds a version only when the canonical question text changed, and an item that changed
after review started goes back to review (its old decisions stay attached to the old version).
"""

from __future__ import annotations

import json
from typing import Any

from reviewer.errors import ReviewError
from reviewer.review.ledger import Item, find_item, get_user, now, record_event, set_state
from reviewer.review.rules import workflow
from reviewer.store import Store, sha256_text


def add_version(store: Store, item: Item, text: str, *, origin: str, created_by: str, reason: str | None) -> int:
    """Append a version of an item's question (call inside a transaction); returns its number."""
    version = item.version + 1
    store.db.execute(
        "INSERT INTO item_versions (item, version, json, sha256, origin, created_by, reason, created) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [item.id, version, text, sha256_text(text), origin, created_by, reason, now()],
    )
    store.db.execute("UPDATE items SET current_version = ?, audit = 0 WHERE id = ?", [version, item.id])
    # a new version needs everyone's decision again (a correction closes the item, so it stays out of queues)
    store.db.execute("UPDATE assignments SET open = 1, skipped = 0 WHERE item = ?", [item.id])
    return version


def sync_question(
    store: Store,
    bank: str,
    position: int,
    q: dict[str, Any],
    text: str,
    *,
    user: str | None,
    gold: bool = False,
    frozen: bool = False,
) -> tuple[int, int]:
    """Add or revise the item of one imported question; returns (item id, current version).

    Call inside the import's transaction.
    """
    db = store.db
    sha = sha256_text(text)
    row = db.execute(
        "SELECT i.id, i.state, i.current_version, v.sha256 FROM items i "
        "JOIN item_versions v ON v.item = i.id AND v.version = i.current_version WHERE i.bank = ? AND i.qid = ?",
        [bank, q["id"]],
    ).fetchone()
    created_by = user or "import"
    # a question of a frozen bank imported from elsewhere was reviewed there: it arrives read-only
    state = "frozen" if frozen else "generated"
    if row is None:
        cur = db.execute(
            "INSERT INTO items (bank, qid, position, site, class, task, reference_source, gold, state, current_version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
            [bank, q["id"], position, q["site"], q["class"], q.get("task"), q["reference_source"], int(gold), state],
        )
        item_id = int(cur.lastrowid)
        db.execute(
            "INSERT INTO item_versions (item, version, json, sha256, origin, created_by, reason, created) "
            "VALUES (?, 1, ?, ?, 'generated', ?, ?, ?)",
            [item_id, text, sha, created_by, "gold item" if gold else "imported", now()],
        )
        record_event(store, user, "item_add", bank=bank, item=item_id, version=1, after=state)
        return item_id, 1
    item_id, state, version, old_sha = row
    if old_sha == sha:
        return item_id, version
    item = find_item(store, q["id"], bank)
    new = add_version(store, item, text, origin="generated", created_by=created_by, reason="content changed on import")
    db.execute(
        "UPDATE items SET position = ?, class = ?, task = ?, reference_source = ? WHERE id = ?",
        [position, q["class"], q.get("task"), q["reference_source"], item_id],
    )
    action = "revise_unassigned" if state in ("generated", "drafted", "redraft", "needs_reference") else "revise"
    revised = Item(item.id, item.bank, item.qid, state, new, item.gold, False, q["reference_source"])
    set_state(
        store, revised, action, "tool", user, detail={"reason": "content changed on import", "from_version": version}
    )
    return item_id, new


def history(store: Store, key: str, *, user: str | None) -> dict[str, Any]:
    """An item's versions, decisions and events in order (experts and maintainers; an annotator sees only
    their own decisions and events)."""
    actor = get_user(store, user)
    item = find_item(store, key)
    see_all = workflow().allowed("see_all", actor.role)
    if (
        not see_all
        and not store.db.execute(
            "SELECT 1 FROM assignments WHERE item = ? AND user = ?", [item.id, actor.name]
        ).fetchone()
    ):
        raise ReviewError(f"item {item.key} is not assigned to {actor.name}")
    versions = [
        {**r, "question": json.loads(r.pop("json"))}
        for r in store.db.query(
            "SELECT version, json, sha256, origin, created_by, reason, created FROM item_versions "
            "WHERE item = ? ORDER BY version",
            [item.id],
        )
    ]
    where = "" if see_all else " AND user = :user"
    events = list(
        store.db.query(
            "SELECT id, at, user, action, version, before, after, detail, tool_version, hash FROM events "
            f"WHERE item = :item{where} ORDER BY id",
            {"item": item.id, "user": actor.name},
        )
    )
    for e in events:
        e["detail"] = json.loads(e["detail"]) if e["detail"] else None
    decisions = list(
        store.db.query(
            "SELECT id, version, user, stage, verdict, reasons, comment, correction, rationale, view, seconds, "
            f"retracts, created FROM decisions WHERE item = :item{where} ORDER BY id",
            {"item": item.id, "user": actor.name},
        )
    )
    for d in decisions:
        for k in ("reasons", "correction", "view"):
            d[k] = json.loads(d[k]) if d[k] else None
    out: dict[str, Any] = {"item": item.key, "versions": versions, "decisions": decisions, "events": events}
    if see_all:
        out["state"] = item.state
        out["current_version"] = item.version
    else:
        out["versions"] = [v for v in versions if v["version"] == item.version]
    return out
