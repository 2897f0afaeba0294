"""Stage 1: independent, blinded review by k annotators per item.

Assignment is seeded and balanced; each annotator works through their own seeded order, with gold
items (known verdicts) hidden among the rest. An annotator's view holds the question, the codebook,
their own decision and their own progress, and nothing about anyone else's work. When the k-th
decision on an item's current version lands, the item is routed: all accepted -> consensus_accepted
(a seeded audit share still goes to an expert), any flag -> flagged.
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from reviewer.errors import ReviewError
from reviewer.review.decision import Decision
from reviewer.review.ledger import (
    EFFECTIVE,
    Item,
    User,
    find_item,
    find_user,
    frozen_in,
    get_user,
    item_by_id,
    now,
    question,
    record_event,
    require_bank,
    set_state,
    write_decision,
)
from reviewer.review.rules import check_confidence, codebook, quality_settings, workflow
from reviewer.store import Store

#: decisions that complete an annotator's work on an item (skip postpones it)
VERDICTS = ("accept", "flag")
CLOSED = ("accepted", "rejected", "corrected", "frozen")


def draw(seed: int, purpose: str, bank: str, qid: str) -> float:
    """A seeded uniform number in [0, 1) per item: samples that do not depend on arrival order."""
    digest = hashlib.sha256(f"{seed}:{purpose}:{bank}:{qid}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


# ----------------------------------------------------------------------------- settings


def settings(store: Store, bank: str) -> dict[str, Any] | None:
    rows = list(store.db.query("SELECT * FROM bank_review WHERE bank = ?", [bank]))
    return rows[0] if rows else None


def set_rule(
    store: Store,
    bank: str,
    *,
    user: str | None,
    audit_share: float | None = None,
    adjudicate_share: float | None = None,
    rest_rule: str | None = None,
    route_uncertain: bool | None = None,
) -> dict[str, Any]:
    """Change the stage-2 settings of a bank (maintainer); the change is an event. `route_uncertain`: route by the
    reliability model (`reviewer review route`)."""
    actor = get_user(store, user)
    workflow().require("settings", actor.role, actor.name)
    for name, value in (("audit_share", audit_share), ("adjudicate_share", adjudicate_share)):
        if value is not None and not (0 <= value <= 1):
            raise ReviewError(f"{name} must be between 0 and 1, not {value}")
    if adjudicate_share is not None and adjudicate_share == 0:
        raise ReviewError("adjudicate_share must be above 0 (use rest_rule for the items outside the sample)")
    if rest_rule is not None and rest_rule not in ("reject", "accept", "open"):
        raise ReviewError(f"rest_rule must be reject, accept or open, not {rest_rule!r}")
    with store.transaction() as db:
        before = settings(store, bank)
        if before is None:
            raise ReviewError(f"bank {bank!r} has not been assigned yet (`reviewer review assign`)")
        change = {
            k: v
            for k, v in (
                ("audit_share", audit_share),
                ("adjudicate_share", adjudicate_share),
                ("rest_rule", rest_rule),
                ("route_uncertain", None if route_uncertain is None else int(route_uncertain)),
            )
            if v is not None
        }
        if change:
            db.execute(
                f"UPDATE bank_review SET {', '.join(f'{k} = ?' for k in change)} WHERE bank = ?",
                [*change.values(), bank],
            )
            record_event(
                store,
                actor.name,
                "settings",
                bank=bank,
                before=json.dumps({k: before[k] for k in change}),
                after=json.dumps(change),
            )
    return settings(store, bank) or {}


# ----------------------------------------------------------------------------- assignment


def _load_gold(path: Path) -> list[dict[str, Any]]:
    from reviewer import schemas
    from reviewer.bank.io import parse_line, record_problems

    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewError(f"{path}: cannot read gold items: {exc}") from exc
    for n, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        doc = parse_line(text, path=path, line=n)
        schemas.validate(doc, "gold", path=path, line=n)
        found = record_problems(doc["question"], "question")
        if found:
            from reviewer.errors import SchemaError

            raise SchemaError(found[0][1], path=path, line=n, field=f"question.{found[0][0]}")
        if doc["verdict"] == "flag":
            codebook().check_flags(doc.get("reasons", []), item=doc["question"]["id"])
        out.append(doc)
    return out


def _import_gold(store: Store, bank: str, gold: list[dict[str, Any]], user: str) -> list[int]:
    from reviewer.bank.io import dumps_line
    from reviewer.review.items import sync_question

    ids = []
    base = store.db.execute("SELECT coalesce(max(position), -1) FROM items WHERE bank = ?", [bank]).fetchone()[0]
    for i, g in enumerate(gold):
        q = g["question"]
        row = store.db.execute("SELECT gold FROM items WHERE bank = ? AND qid = ?", [bank, q["id"]]).fetchone()
        if row is not None and not row[0]:
            raise ReviewError(f"gold item {q['id']!r} has the id of a question of bank {bank}")
        item_id, _ = sync_question(store, bank, base + 1 + i, q, dumps_line(q, "question"), user=user, gold=True)
        store.db.execute(
            "INSERT INTO gold (item, verdict, reasons, note) VALUES (?, ?, ?, ?) ON CONFLICT (item) DO UPDATE SET "
            "verdict = excluded.verdict, reasons = excluded.reasons, note = excluded.note",
            [item_id, g["verdict"], json.dumps(g.get("reasons", [])), g.get("note")],
        )
        ids.append(item_id)
    return ids


def _annotators(store: Store, names: list[str]) -> list[User]:
    users = []
    for name in dict.fromkeys(n.strip() for n in names if n.strip()):
        u = find_user(store, name)
        if not workflow().allowed("annotate", u.role):
            raise ReviewError(f"user {u.name} is {u.role}: cannot review in stage 1")
        users.append(u)
    return users


def assign(
    store: Store,
    bank: str,
    *,
    annotators: list[str],
    k: int,
    seed: int,
    user: str | None,
    gold: str | Path | None = None,
    gold_share: float = 0.0,
) -> dict[str, Any]:
    """Give every unassigned item of the bank to k distinct annotators, balanced and seeded.

    Assigning again later (new items, more annotators) extends what was assigned and never
    reshuffles it. Gold items are hidden at random places in each annotator's order.
    """
    actor = get_user(store, user)
    workflow().require("assign", actor.role, actor.name)
    require_bank(store, bank)
    people = _annotators(store, annotators)
    if k < 1 or k > len(people):
        raise ReviewError(f"k must be between 1 and the number of annotators ({len(people)}), not {k}")
    if not 0 <= gold_share < 1:
        raise ReviewError(f"gold share must be in [0, 1), not {gold_share}")
    gold_docs = _load_gold(Path(gold)) if gold else []
    if (
        gold_share
        and not gold_docs
        and not store.db.execute("SELECT 1 FROM items WHERE bank = ? AND gold = 1 LIMIT 1", [bank]).fetchone()
    ):
        raise ReviewError("a gold share needs gold items (--gold GOLD.jsonl)")
    with store.transaction() as db:
        current = settings(store, bank)
        if current and current["k"] != k:
            raise ReviewError(f"bank {bank} is assigned with k={current['k']}; k cannot change once review began")
        if current and current["seed"] != seed:
            raise ReviewError(f"bank {bank} is assigned with seed {current['seed']}; use the same seed to extend it")
        batch = (current["batches"] if current else 0) + 1
        if current is None:
            db.execute(
                "INSERT INTO bank_review (bank, k, seed, gold_share, batches) VALUES (?, ?, ?, ?, 1)",
                [bank, k, seed, gold_share],
            )
        else:
            db.execute("UPDATE bank_review SET batches = ?, gold_share = ? WHERE bank = ?", [batch, gold_share, bank])
        if gold_docs:
            _import_gold(store, bank, gold_docs, actor.name)
        plan = _plan(store, bank, people, k, seed, batch, gold_share)
        stamp = now()
        db.conn.executemany(
            "INSERT INTO assignments (item, user, rank, created) VALUES (?, ?, ?, ?)",
            [(item, name, rank, stamp) for name, ranks in plan["ranks"].items() for item, rank in ranks],
        )
        for item_id in plan["items"] + plan["gold"]:
            set_state(store, item_by_id(store, item_id), "assign", actor.role, actor.name)
        record_event(
            store,
            actor.name,
            "assign",
            bank=bank,
            detail={
                "batch": batch,
                "k": k,
                "seed": seed,
                "annotators": [p.name for p in people],
                "items": len(plan["items"]),
                "gold_items": len(plan["gold"]),
                "gold_share": gold_share,
            },
        )
    return {
        "bank": bank,
        "batch": batch,
        "items": len(plan["items"]),
        "gold_items": len(plan["gold"]),
        "per_annotator": {n: len(r) for n, r in plan["ranks"].items()},
    }


def _plan(
    store: Store, bank: str, people: list[User], k: int, seed: int, batch: int, gold_share: float
) -> dict[str, Any]:
    """Which new item goes to whom, and at which rank in each annotator's order."""
    db = store.db
    new = [
        r[0]
        for r in db.execute(
            "SELECT id FROM items WHERE bank = ? AND gold = 0 AND state IN ('generated', 'drafted') ORDER BY position",
            [bank],
        )
    ]
    load = {p.name: 0 for p in people}
    for name, n in db.execute(
        "SELECT a.user, count(*) FROM assignments a JOIN items i ON i.id = a.item "
        "WHERE i.bank = ? AND i.gold = 0 GROUP BY a.user",
        [bank],
    ):
        if name in load:
            load[name] = n
    rng = random.Random(f"{seed}:{bank}:assign:{batch}")
    order = new[:]
    rng.shuffle(order)
    mine: dict[str, list[int]] = {p.name: [] for p in people}
    for item in order:
        ties = {name: rng.random() for name in load}
        for name in sorted(load, key=lambda n: (load[n], ties[n]))[:k]:
            mine[name].append(item)
            load[name] += 1
    pool = [r[0] for r in db.execute("SELECT id FROM items WHERE bank = ? AND gold = 1 ORDER BY position", [bank])]
    gold_used: set[int] = set()
    ranks: dict[str, list[tuple[int, float]]] = {}
    for p in people:
        had = {r[0] for r in db.execute("SELECT item FROM assignments WHERE user = ?", [p.name])}
        urng = random.Random(f"{seed}:{bank}:order:{p.name}:{batch}")
        want = round(gold_share * len(mine[p.name]) / (1 - gold_share)) if mine[p.name] and gold_share else 0
        if gold_share and mine[p.name]:
            want = max(want, 1)
        free = [g for g in pool if g not in had]
        golds = urng.sample(free, min(want, len(free)))
        gold_used.update(g for g in golds)
        todo = [i for i in mine[p.name] if i not in had] + golds
        urng.shuffle(todo)
        base = db.execute("SELECT coalesce(max(rank), 0) FROM assignments WHERE user = ?", [p.name]).fetchone()[0]
        ranks[p.name] = [(item, float(int(base) + 1 + i)) for i, item in enumerate(todo)]
    gold_new = [
        g
        for g in sorted(gold_used)
        if db.execute("SELECT state FROM items WHERE id = ?", [g]).fetchone()[0] in ("generated", "drafted")
    ]
    return {"items": order, "gold": gold_new, "ranks": ranks}


# ----------------------------------------------------------------------------- the annotator's view


def _own_decision(store: Store, item: Item, user: str) -> dict[str, Any] | None:
    row = store.db.execute(
        "SELECT d.id, d.verdict, d.reasons, d.comment, d.correction, d.created, d.confidence FROM decisions d "
        f"WHERE d.item = ? AND d.version = ? AND d.user = ? AND d.stage = 1 AND d.verdict != 'retract' AND {EFFECTIVE} "
        "ORDER BY d.id DESC LIMIT 1",
        [item.id, item.version, user],
    ).fetchone()
    if row is None:
        return None
    return {
        "decision": row[0],
        "verdict": row[1],
        "reasons": json.loads(row[2]),
        "comment": row[3],
        "correction": json.loads(row[4]) if row[4] else None,
        "at": row[5],
        "confidence": row[6],
    }


def _progress(store: Store, bank: str, user: str) -> dict[str, int]:
    assigned, done = store.db.execute(
        "SELECT count(*), sum(a.open = 0) FROM assignments a JOIN items i ON i.id = a.item "
        "WHERE a.user = ? AND i.bank = ?",
        [user, bank],
    ).fetchone()
    return {"done": int(done or 0), "assigned": int(assigned)}


def _mark(store: Store, item_id: int, user: str | None, *, open_: bool, skipped: bool = False) -> None:
    """Keep an assignment's queue flags with the decision that changes them (same transaction)."""
    where, args = ("item = ?", [item_id]) if user is None else ("item = ? AND user = ?", [item_id, user])
    store.db.execute(f"UPDATE assignments SET open = ?, skipped = ? WHERE {where}", [int(open_), int(skipped), *args])


def annotator_view(store: Store, item: Item, user: User) -> dict[str, Any]:
    """Everything an annotator needs to judge an item, and nothing about anyone else's work.

    Not here, on purpose: the item's state, other decisions or their count, who else reviews it,
    whether it is a gold item, stage-2 outcomes.
    """
    return {
        "item": item.key,
        "bank": item.bank,
        "id": item.qid,
        "version": item.version,
        "question": question(store, item.id, item.version),
        "flag_reasons": codebook().as_dict(user.role)["flag_reasons"],
        "your_decision": _own_decision(store, item, user.name),
        "progress": _progress(store, item.bank, user.name),
    }


def _pending(store: Store, bank: str, user: str, *, skipped: bool, limit: int | None) -> list[int]:
    sql = (
        "SELECT a.item FROM assignments a INDEXED BY assignments_open JOIN items i ON i.id = a.item "
        "WHERE a.user = ? AND a.skipped = ? AND a.open = 1 AND i.bank = ? "
        f"AND i.state NOT IN ({', '.join(repr(s) for s in CLOSED)}) ORDER BY a.rank"
        + (f" LIMIT {int(limit)}" if limit else "")
    )
    return [r[0] for r in store.db.execute(sql, [user, int(skipped), bank])]


def annotator_queue(store: Store, bank: str, user: User, *, limit: int | None = None) -> list[int]:
    """Item ids left for an annotator, in their order; skipped items come last."""
    first = _pending(store, bank, user.name, skipped=False, limit=limit)
    if limit and len(first) >= limit:
        return first
    rest = _pending(store, bank, user.name, skipped=True, limit=(limit - len(first)) if limit else None)
    return first + rest


def next_item(store: Store, bank: str, *, user: str | None) -> dict[str, Any] | None:
    """The next item in an annotator's order with everything they need to judge it; None when done."""
    actor = get_user(store, user)
    workflow().require("annotate", actor.role, actor.name)
    require_bank(store, bank)
    ids = annotator_queue(store, bank, actor, limit=1)
    if not ids:
        return None
    item = item_by_id(store, ids[0])
    with store.transaction() as db:
        db.execute(
            "INSERT INTO shown (user, item, at) VALUES (?, ?, ?) ON CONFLICT (user, item) DO UPDATE SET at = excluded.at",
            [actor.name, item.id, time.time()],
        )
    return annotator_view(store, item, actor)


# ----------------------------------------------------------------------------- decisions


def check_correction(correction: dict[str, Any], q: dict[str, Any], item: Item) -> dict[str, Any]:
    """A correction must fit its schema and leave a valid question; returns the corrected question."""
    from reviewer import schemas
    from reviewer.bank.io import record_problems

    found = schemas.problems(correction, "correction")
    if found:
        raise ReviewError(f"item {item.key}: correction field '{found[0][0]}': {found[0][1]}")
    fixed = apply_correction(q, correction)
    problems = record_problems(fixed, "question")
    if problems:
        raise ReviewError(f"item {item.key}: the corrected question is not valid: {problems[0][0]}: {problems[0][1]}")
    from reviewer.bank.consistency import new_problems

    broken = new_problems(q, fixed)
    if broken:
        raise ReviewError(f"item {item.key}: the corrected reference breaks rule {broken[0][0]}: {broken[0][1]}")
    return fixed


def apply_correction(q: dict[str, Any], correction: dict[str, Any]) -> dict[str, Any]:
    """The question with the correction's parts replaced (the original is not changed)."""
    fixed = json.loads(json.dumps(q))
    if "text" in correction:
        fixed["text"] = correction["text"]
    for name, options in correction.get("options", {}).items():
        for f in fixed["fields"]:
            if f["name"] == name:
                f["options"] = list(options)
    for part in ("reference", "reference_range", "accept"):
        if part in correction:
            fixed.setdefault(part, {}).update(correction[part])
    if "reference" in correction and isinstance(fixed.get("provenance"), dict):
        pending = fixed["provenance"].pop("reference_pending", None)
        if pending is not None:
            fixed["provenance"]["reference_from"] = "set by review"
    return fixed


def require_writable(store: Store, item: Item, version: int | None) -> None:
    if item.state == "frozen":
        v = frozen_in(store, item)
        raise ReviewError(
            f"item {item.key} is frozen in bank {item.bank} version {v}: read-only; a maintainer's "
            f"`reviewer review reopen` starts the next version"
        )
    if version is not None and version != item.version:
        raise ReviewError(
            f"item {item.key}: version {version} is no longer current (current: {item.version}); load it again"
        )


def decide(
    store: Store,
    key: str,
    decision: Decision,
    *,
    user: str | None,
    version: int | None = None,
    bank: str | None = None,
) -> dict[str, Any]:
    """Record one annotator's stage-1 decision (accept, flag with reasons, or skip), durably.

    A stage-1 decision has a comment, no rationale; `decision.confidence` is the annotator's own low / medium /
    high (assets/review/quality.json), or None. `version`: the item version the annotator saw (refused if it is
    no longer current).

    Returns what the annotator may see: the decision id, item and version (not the item's state).
    `decision.created` is the time a decision made elsewhere was made (a review package's, merged on import):
    its `seconds` are then taken as given, not measured here.
    """
    decision.only(("comment", "correction", "view", "seconds", "confidence", "created"), "a stage-1 decision")
    verdict, reasons, correction, seconds = decision.verdict, decision.reasons, decision.correction, decision.seconds
    actor = get_user(store, user)
    workflow().require("annotate", actor.role, actor.name)
    view = decision.view
    if view is not None:  # the view the decision rests on is an evidence view, stored in its full JSON
        from reviewer.bank.evidence import check_view

        view = check_view(view)
    if verdict not in (*VERDICTS, "skip"):
        raise ReviewError(f"a stage-1 decision is accept, flag or skip, not {verdict!r}")
    confidence = check_confidence(decision.confidence, item=key)
    with store.transaction() as db:
        item = find_item(store, key, bank)
        require_writable(store, item, version)
        if not db.execute("SELECT 1 FROM assignments WHERE item = ? AND user = ?", [item.id, actor.name]).fetchone():
            raise ReviewError(f"item {item.key} is not assigned to {actor.name}")
        if item.state in CLOSED:
            raise ReviewError(f"item {item.key}: stage 1 is closed (the item was adjudicated)")
        own = _own_decision(store, item, actor.name)
        if own and own["verdict"] in VERDICTS:
            raise ReviewError(f"item {item.key}: {actor.name} decided it already ({own['verdict']}); undo it first")
        codes = codebook().check_flags(list(reasons), item=item.key, role=actor.role) if verdict == "flag" else []
        if reasons and verdict != "flag":
            raise ReviewError(f"item {item.key}: reasons go with a flag, not with {verdict}")
        if correction is not None:
            check_correction(correction, question(store, item.id, item.version), item)
        if seconds is None and decision.created is None:
            shown = db.execute("SELECT at FROM shown WHERE user = ? AND item = ?", [actor.name, item.id]).fetchone()
            seconds = round(time.time() - shown[0], 3) if shown else None
        if seconds is not None and not (0 <= seconds < 86400 * 7):
            raise ReviewError(f"item {item.key}: seconds must be between 0 and a week, not {seconds}")
        decision_id = write_decision(
            store,
            item,
            actor.name,
            replace(decision, reasons=tuple(codes), view=view, seconds=seconds, confidence=confidence),
            stage=1,
            action="decide",
            detail={"reasons": codes, "correction": correction is not None, "confidence": confidence},
        )
        _mark(store, item.id, actor.name, open_=verdict not in VERDICTS, skipped=verdict == "skip")
        if verdict in VERDICTS:
            _route(store, item, actor)
    return {
        "decision": decision_id,
        "item": item.key,
        "version": item.version,
        "verdict": verdict,
        "reasons": codes,
        "confidence": confidence,
    }


def stage1_decisions(store: Store, item: Item) -> list[dict[str, Any]]:
    """The effective accept/flag decisions on an item's current version, in the order made."""
    return [
        {
            **r,
            "reasons": json.loads(r["reasons"]),
            "correction": json.loads(r["correction"]) if r["correction"] else None,
        }
        for r in store.db.query(
            "SELECT d.id, d.user, d.verdict, d.reasons, d.comment, d.correction, d.seconds, d.created, d.confidence "
            "FROM decisions d WHERE d.item = ? AND d.version = ? AND d.stage = 1 "
            f"AND d.verdict IN ('accept', 'flag') AND {EFFECTIVE} ORDER BY d.id",
            [item.id, item.version],
        )
    ]


def needs_reference(store: Store, item: Item) -> bool:
    """A visual item whose reference is still the generator's draft cannot end accepted without an expert."""
    if item.reference_source != "visual":
        return False
    prov = question(store, item.id, item.version).get("provenance") or {}
    return bool(prov.get("reference_pending"))


def _route(store: Store, item: Item, actor: User) -> None:
    """After a decision: route the item once all of its annotators decided its current version."""
    if item.gold:
        return
    item = item_by_id(store, item.id)
    if item.state != "in_review":
        return
    k = store.db.execute("SELECT count(*) FROM assignments WHERE item = ?", [item.id]).fetchone()[0]
    made = stage1_decisions(store, item)
    if len(made) < k:
        return
    cfg = settings(store, item.bank) or {"seed": 0, "audit_share": 0.1}
    if all(d["verdict"] == "accept" for d in made):
        q = quality_settings()
        draft = needs_reference(store, item)
        unsure = q.low_confidence_to_expert and any(d["confidence"] == q.confidence[0] for d in made)
        audit = draft or unsure or draw(cfg["seed"], "audit", item.bank, item.qid) < cfg["audit_share"]
        store.db.execute("UPDATE items SET audit = ? WHERE id = ?", [int(audit), item.id])
        detail = {"decisions": [d["id"] for d in made], "audit": audit}
        if draft:
            detail["why_audit"] = "visual reference still a draft"
        elif unsure:
            detail["why_audit"] = f"a unanimous accept with a {q.confidence[0]}-confidence decision"
        set_state(store, item, "route_consensus", actor.role, actor.name, detail=detail)
    else:
        set_state(store, item, "route_flagged", actor.role, actor.name, detail={"decisions": [d["id"] for d in made]})


def undo(store: Store, bank: str, *, user: str | None, created: str | None = None) -> dict[str, Any]:
    """Take back the user's own last stage-1 decision in a bank: a new decision that retracts it.

    `created`: the time of an undo made elsewhere (a review package's, merged on import).
    """
    actor = get_user(store, user)
    workflow().require("annotate", actor.role, actor.name)
    with store.transaction() as db:
        row = db.execute(
            "SELECT d.id, d.item, d.version, d.verdict FROM decisions d JOIN items i ON i.id = d.item "
            f"WHERE d.user = ? AND i.bank = ? AND d.stage = 1 AND d.verdict != 'retract' AND {EFFECTIVE} "
            "ORDER BY d.id DESC LIMIT 1",
            [actor.name, bank],
        ).fetchone()
        if row is None:
            raise ReviewError(f"{actor.name} has no decision to undo in bank {bank}")
        decision_id, item_id, version, verdict = row
        item = item_by_id(store, item_id)
        require_writable(store, item, None)
        if item.state in CLOSED:
            raise ReviewError(f"item {item.key}: adjudicated already; a maintainer can reopen it")
        if version != item.version:
            raise ReviewError(f"item {item.key}: that decision was on version {version}, which is no longer current")
        undone = Item(item.id, item.bank, item.qid, item.state, version, item.gold, item.audit, item.reference_source)
        write_decision(
            store,
            undone,
            actor.name,
            Decision("retract", retracts=decision_id, created=created),
            stage=1,
            action="undo",
            before=verdict,
            detail={"retracts": decision_id},
        )
        _mark(store, item.id, actor.name, open_=True)
        if item.state in ("consensus_accepted", "flagged"):
            db.execute("UPDATE items SET audit = 0 WHERE id = ?", [item.id])
            set_state(store, item, "undo_stage1", actor.role, actor.name, detail={"retracts": decision_id})
    return {"undone": decision_id, "item": item.key, "verdict": verdict}


# ----------------------------------------------------------------------------- progress


def progress(store: Store, bank: str, *, user: str | None) -> list[dict[str, Any]]:
    """Per annotator: done / assigned, median seconds per item, gold accuracy. An annotator sees their own row."""
    actor = get_user(store, user)
    require_bank(store, bank)
    names = [
        r[0]
        for r in store.db.execute(
            "SELECT DISTINCT a.user FROM assignments a JOIN items i ON i.id = a.item WHERE i.bank = ? ORDER BY a.user",
            [bank],
        )
    ]
    if not workflow().allowed("see_all", actor.role):
        names = [n for n in names if n == actor.name]
    rows = []
    for name in names:
        p = _progress(store, bank, name)
        secs = [
            r[0]
            for r in store.db.execute(
                "SELECT d.seconds FROM decisions d JOIN items i ON i.id = d.item WHERE d.user = ? AND i.bank = ? "
                f"AND d.stage = 1 AND d.verdict IN ('accept', 'flag') AND d.seconds IS NOT NULL AND {EFFECTIVE}",
                [name, bank],
            )
        ]
        gold = store.db.execute(
            "SELECT count(*), sum(d.verdict = g.verdict) FROM decisions d JOIN gold g ON g.item = d.item "
            "JOIN items i ON i.id = d.item "
            f"WHERE d.user = ? AND i.bank = ? AND d.stage = 1 AND d.verdict IN ('accept', 'flag') AND {EFFECTIVE}",
            [name, bank],
        ).fetchone()
        rows.append(
            {
                "user": name,
                "done": p["done"],
                "assigned": p["assigned"],
                "median_seconds": statistics.median(secs) if secs else None,
                "gold_decided": int(gold[0]),
                "gold_correct": int(gold[1] or 0),
                "gold_accuracy": (gold[1] or 0) / gold[0] if gold[0] else None,
            }
        )
    return rows
