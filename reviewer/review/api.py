"""The review API: the one face the CLI, the app's review dock and review packages call.

Roles, blinding and legal transitions are enforced below this line (stage1, stage2, items); this
module only gathers them and adds the views that span both stages (queue, agreement, status).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewer.errors import ReviewError
from reviewer.review.decision import Decision
from reviewer.review.drafts import draft_queue, draft_view, review_draft
from reviewer.review.items import history
from reviewer.review.ledger import (
    EFFECTIVE,
    add_user,
    bind_login,
    find_item,
    get_user,
    list_users,
    login_bindings,
    require_bank,
    verify_chain,
    verify_log,
    working_profiles,
)
from reviewer.review.rules import codebook, workflow
from reviewer.review.stage1 import (
    annotator_queue,
    assign,
    decide,
    next_item,
    progress,
    set_rule,
    settings,
    undo,
)
from reviewer.review.stage2 import adjudicate, allow, apply_rule, expert_queue, expert_view, reopen
from reviewer.store import Store

__all__ = [
    "Decision",
    "add_user",
    "adjudicate",
    "agreement",
    "allow",
    "apply_audit",
    "apply_rule",
    "assign",
    "bind_login",
    "decide",
    "draft_queue",
    "draft_view",
    "expert_view",
    "find_item",
    "history",
    "list_users",
    "login_bindings",
    "my_items",
    "next_item",
    "open_item",
    "progress",
    "queue",
    "reopen",
    "review_draft",
    "review_banks",
    "set_rule",
    "site_folder",
    "settings",
    "status",
    "undo",
    "verify_chain",
    "verify_log",
    "working_profiles",
]


def apply_audit(store: Store, audit_doc: Any, **kwargs: Any) -> dict[str, Any]:
    """The maintainer's action on a pilot-run audit (reviewer.review.audit.apply_audit; imported when used,
    so review verbs scripted in loops do not pay for the audit rules)."""
    from reviewer.review.audit import apply_audit as apply

    return apply(store, audit_doc, **kwargs)


def queue(store: Store, bank: str, *, user: str | None, own: list[str] | None = None) -> list[dict[str, Any]]:
    """A user's queue in order: an annotator's remaining items, an expert's adjudication queue (`own`, if given,
    receives the items waiting for stage 2 that the expert decided at stage 1: left to another expert)."""
    actor = get_user(store, user)
    require_bank(store, bank)
    if actor.role == "expert":
        return expert_queue(store, bank, actor, own=own)
    if actor.role == "annotator":
        ids = annotator_queue(store, bank, actor)
        rows = (
            store.db.execute(f"SELECT id, qid FROM items WHERE id IN ({', '.join('?' * len(ids))})", ids).fetchall()
            if ids
            else []
        )
        qid = dict(rows)
        return [{"item": f"{bank}/{qid[i]}", "id": qid[i]} for i in ids]
    raise ReviewError(f"user {actor.name} is {actor.role}: a maintainer has no queue (see `reviewer review status`)")


def stage1_table(store: Store, bank: str) -> list[tuple[str, str, str, list[str]]]:
    """(item, annotator, verdict, reasons) of the effective stage-1 decisions, per item on the latest version
    stage 1 judged (an expert's correction afterwards does not drop them)."""
    import json

    return [
        (r[0], r[1], r[2], [] if r[3] == "[]" else json.loads(r[3]))  # most are accepts: no parse
        for r in store.db.execute(
            "WITH judged AS (SELECT d.item, max(d.version) AS version FROM decisions d JOIN items i ON i.id = d.item "
            f"WHERE i.bank = ? AND i.gold = 0 AND d.stage = 1 AND d.verdict IN ('accept', 'flag') AND {EFFECTIVE} "
            "GROUP BY d.item) "
            "SELECT i.qid, d.user, d.verdict, d.reasons FROM decisions d JOIN judged j ON j.item = d.item "
            "AND j.version = d.version JOIN items i ON i.id = d.item "
            f"WHERE d.stage = 1 AND d.verdict IN ('accept', 'flag') AND {EFFECTIVE} ORDER BY d.id",
            [bank],
        )
    ]


def agreement(store: Store, bank: str, *, user: str | None, csv_dir: str | Path | None = None) -> dict[str, Any]:
    """Agreement of stage 1 overall, per flag reason and per task, and gold accuracy per annotator."""
    from reviewer.fileio import check_output_folder
    from reviewer.review.agreement import CSV_FILES, agreement_report, per_task_report, write_csv

    actor = get_user(store, user)
    workflow().require("see_all", actor.role, actor.name)
    require_bank(store, bank)
    if csv_dir is not None:  # before the work: a folder holding others' files is refused
        check_output_folder(csv_dir, field="csv", ours=CSV_FILES)
    table = stage1_table(store, bank)
    report = agreement_report(table, codebook().flag_codes("annotator"))
    # a question without a task (insufficient evidence) under its class: "insufficient", not "none"
    task_of = dict(
        store.db.execute("SELECT qid, coalesce(task, class) FROM items WHERE bank = ? AND gold = 0", [bank]).fetchall()
    )
    report["per_task"] = per_task_report(table, task_of)
    report["gold"] = [
        {k: r[k] for k in ("user", "gold_decided", "gold_correct", "gold_accuracy")}
        for r in progress(store, bank, user=actor.name)
    ]
    if csv_dir is not None:
        report["csv"] = [str(p) for p in write_csv(report, Path(csv_dir))]
    return report


def status(store: Store, bank: str, *, user: str | None) -> dict[str, Any]:
    """Progress per annotator and, for experts and maintainers, item counts per state and the settings."""
    actor = get_user(store, user)
    out: dict[str, Any] = {"bank": bank, "annotators": progress(store, bank, user=actor.name)}
    if workflow().allowed("see_all", actor.role):
        out["states"] = dict(
            store.db.execute(
                "SELECT state, count(*) FROM items WHERE bank = ? AND gold = 0 GROUP BY state ORDER BY state", [bank]
            ).fetchall()
        )
        out["settings"] = settings(store, bank)
    return out


# ----------------------------------------------------------------------------- views for the app's review dock


def review_banks(store: Store, *, user: str | None) -> list[str]:
    """Banks the user can work on: an annotator's banks with work assigned to them, an expert's banks under review or with AI drafts to review,
    and for a maintainer every bank with items (one imported but not yet assigned is drafted and assigned here)."""
    actor = get_user(store, user)
    if actor.role == "annotator":
        sql = "SELECT DISTINCT i.bank FROM assignments a JOIN items i ON i.id = a.item WHERE a.user = ? ORDER BY i.bank"
        return [r[0] for r in store.db.execute(sql, [actor.name])]
    if actor.role == "maintainer":
        return [r[0] for r in store.db.execute("SELECT DISTINCT bank FROM items ORDER BY bank")]
    sql = (  # under review, or with AI drafts to review / references to set (before assignment)
        "SELECT bank FROM bank_review UNION "
        "SELECT DISTINCT bank FROM items WHERE state IN ('drafted', 'needs_reference') ORDER BY 1"
    )
    return [r[0] for r in store.db.execute(sql)]


def my_items(store: Store, bank: str, *, user: str | None) -> list[dict[str, Any]]:
    """Every item assigned to an annotator in their order, with their own standing on it, for a queue list.

    Blinded like `next_item`: the question (to show or prefetch its evidence) and nothing about other decisions, the item's state or gold status; `open` says
    whether the annotator can still decide it (False once it is decided by them or adjudicated)."""
    import json

    from reviewer.review.stage1 import CLOSED

    actor = get_user(store, user)
    workflow().require("annotate", actor.role, actor.name)
    require_bank(store, bank)
    rows = store.db.execute(
        "SELECT i.qid, i.current_version, i.state, a.open, a.skipped, v.json, "
        "(SELECT d.verdict FROM decisions d WHERE d.item = i.id AND d.version = i.current_version AND d.user = a.user "
        f"AND d.stage = 1 AND d.verdict != 'retract' AND {EFFECTIVE} ORDER BY d.id DESC LIMIT 1) FROM assignments a "
        "JOIN items i ON i.id = a.item JOIN item_versions v ON v.item = i.id AND v.version = i.current_version "
        "WHERE a.user = ? AND i.bank = ? ORDER BY a.rank",
        [actor.name, bank],
    ).fetchall()
    out = []
    for qid, version, state, open_, skipped, text, mine in rows:
        q = json.loads(text)
        out.append(
            {
                "item": f"{bank}/{qid}",
                "id": qid,
                "version": version,
                "site": q.get("site"),
                "task": q.get("task"),
                "mine": mine,
                "skipped": bool(skipped),
                "open": bool(open_) and state not in CLOSED,
                "question": q,
            }
        )
    return out


def open_item(store: Store, key: str, *, user: str | None, bank: str | None = None) -> dict[str, Any]:
    """An annotator's view of one of their assigned items (what `next_item` gives), for going back and forth.

    Starts its clock like `next_item`: the decision's seconds count from here."""
    import time

    from reviewer.review.ledger import find_item
    from reviewer.review.stage1 import annotator_view

    actor = get_user(store, user)
    workflow().require("annotate", actor.role, actor.name)
    item = find_item(store, key, bank)
    with store.transaction() as db:
        if not db.execute("SELECT 1 FROM assignments WHERE item = ? AND user = ?", [item.id, actor.name]).fetchone():
            raise ReviewError(f"item {item.key} is not assigned to {actor.name}")
        db.execute(
            "INSERT INTO shown (user, item, at) VALUES (?, ?, ?) ON CONFLICT (user, item) DO UPDATE SET at = excluded.at",
            [actor.name, item.id, time.time()],
        )
    return annotator_view(store, item, actor)


def site_folder(store: Store, site_id: str) -> str | None:
    """The folder of a site record by its id: of the scanned folders of that id that still exist, one whose
    scan found scenes, most recently scanned first (a broken copy of a site does not shadow the record)."""
    rows = store.db.execute(
        "SELECT s.site_dir FROM sites s WHERE s.site_id = ? ORDER BY "
        "EXISTS (SELECT 1 FROM scenes c WHERE c.site_dir = s.site_dir) DESC, s.scanned_at DESC, s.rowid DESC",
        [site_id],
    ).fetchall()
    for (folder,) in rows:
        if Path(folder).is_dir():
            return str(folder)
    return None
