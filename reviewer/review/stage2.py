"""Stage 2: expert adjudication of flagged items (and the audit sample of consensus items).

The queue puts split decisions first, then unanimous flags, then audit items. The ChronoBench rule is
a setting: a seeded share of the flagged items is adjudicated and a rule (reject, accept or leave
open) is applied to the rest. An expert sees every stage-1 decision with the annotators
pseudonymised, and cannot adjudicate an item they reviewed in stage 1 unless a maintainer allowed
it. A correction is a new item version; an adjudicated item is final (a maintainer may reopen it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from reviewer.errors import ReviewError
from reviewer.review.decision import Decision
from reviewer.review.items import add_version
from reviewer.review.ledger import (
    EFFECTIVE,
    Item,
    User,
    find_item,
    find_user,
    get_user,
    items_of,
    question,
    record_event,
    require_bank,
    set_state,
    write_decision,
)
from reviewer.review.rules import check_confidence, codebook, workflow
from reviewer.review.stage1 import (
    CLOSED,
    check_correction,
    draw,
    needs_reference,
    require_writable,
    settings,
    stage1_decisions,
)
from reviewer.store import Store


def in_sample(cfg: dict[str, Any], item: Item) -> bool:
    """Is a flagged item in the seeded adjudication sample?"""
    return draw(cfg["seed"], "adjudicate", item.bank, item.qid) < cfg["adjudicate_share"]


def _annotated(store: Store, item_id: int, user: str) -> bool:
    return bool(store.db.execute("SELECT 1 FROM assignments WHERE item = ? AND user = ?", [item_id, user]).fetchone())


def _allowed(store: Store, item_id: int, user: str) -> bool:
    return bool(store.db.execute("SELECT 1 FROM allowances WHERE item = ? AND user = ?", [item_id, user]).fetchone())


def _settled_by(store: Store, item: Item) -> str:
    """' by fay (decision 33, 2026-12-05 00:02 UTC)': who settled a closed item, for a refusal that names it (another
    expert in another process may have decided it while this one read it)."""
    row = store.db.execute(
        "SELECT d.user, d.id, d.created FROM decisions d WHERE d.item = ? AND d.stage = 2 AND d.verdict != 'retract' "
        f"AND {EFFECTIVE} ORDER BY d.id DESC LIMIT 1",
        [item.id],
    ).fetchone()
    return f" by {row[0]} (decision {row[1]}, {row[2][:16].replace('T', ' ')} UTC)" if row else ""


def expert_queue(store: Store, bank: str, expert: User, *, own: list[str] | None = None) -> list[dict[str, Any]]:
    """Items waiting for this expert, by disagreement: split decisions, unanimous flags, audit items. `own`, if
    given, receives the items left out because this expert decided them at stage 1 (another expert's, unless a
    maintainer allows this one: `review allow`)."""
    cfg = settings(store, bank)
    if cfg is None:
        return []
    rows = store.db.execute(
        "SELECT i.id, i.qid, i.state, i.audit, i.current_version, "
        "sum(d.verdict = 'flag'), count(d.id) FROM items i "
        "JOIN decisions d ON d.item = i.id AND d.version = i.current_version AND d.stage = 1 "
        f"AND d.verdict IN ('accept', 'flag') AND {EFFECTIVE} "
        "WHERE i.bank = ? AND i.gold = 0 AND (i.state = 'flagged' OR (i.state = 'consensus_accepted' AND i.audit = 1)) "
        "GROUP BY i.id ORDER BY i.position",
        [bank],
    ).fetchall()
    out = []
    for item_id, qid, state, audit, version, flags, n in rows:
        item = Item(item_id, bank, qid, state, version, False, bool(audit), "")
        if state == "flagged" and not audit and not in_sample(cfg, item):
            continue
        if _annotated(store, item_id, expert.name) and not _allowed(store, item_id, expert.name):
            if own is not None:
                own.append(f"{bank}/{qid}")
            continue
        if state == "flagged" and audit:
            kind, order = "pilot audit", 0  # sent back by the maintainer: first
        elif state == "flagged":
            kind, order = ("split", 1) if flags < n else ("unanimous flag", 2)
        else:
            kind, order = "audit", 3
        # within split decisions, the closest to an even split first
        spread = abs(flags / n - 0.5) if n else 0.5
        out.append(
            {
                "item": f"{bank}/{qid}",
                "id": qid,
                "kind": kind,
                "flags": int(flags),
                "decisions": int(n),
                "_key": (order, spread, len(out)),
            }
        )
    out.sort(key=lambda r: r.pop("_key"))
    return out


def expert_view(store: Store, key: str, *, user: str | None, bank: str | None = None) -> dict[str, Any]:
    """An item with every stage-1 decision, annotators pseudonymised (annotator 1, 2, ... in decision order)."""
    actor = get_user(store, user)
    workflow().require("adjudicate", actor.role, actor.name)
    item = find_item(store, key, bank)
    made = stage1_decisions(store, item)
    return {
        "item": item.key,
        "bank": item.bank,
        "id": item.qid,
        "version": item.version,
        "state": item.state,
        "audit": item.audit,
        "question": question(store, item.id, item.version),
        "needs_reference": needs_reference(store, item),
        "stage1": [
            {
                "annotator": f"annotator {i}",
                "verdict": d["verdict"],
                "reasons": d["reasons"],
                "comment": d["comment"],
                "correction": d["correction"],
                "seconds": d["seconds"],
                "confidence": d["confidence"],
            }
            for i, d in enumerate(made, start=1)
        ],
        "reject_reasons": codebook().as_dict()["reject_reasons"],
    }


def adjudicate(
    store: Store,
    key: str,
    decision: Decision,
    *,
    user: str | None,
    version: int | None = None,
    bank: str | None = None,
) -> dict[str, Any]:
    """An expert's final stage-2 decision: accept, reject (with a reason) or correct (a new version), with a
    rationale; `decision.confidence` is the expert's own low / medium / high, or None."""
    decision.only(("correction", "rationale", "view", "confidence"), "an adjudication")
    verdict, reasons, correction, rationale = (
        decision.verdict,
        decision.reasons,
        decision.correction,
        decision.rationale,
    )
    actor = get_user(store, user)
    workflow().require("adjudicate", actor.role, actor.name)
    confidence = check_confidence(decision.confidence, item=key)
    if verdict not in ("accept", "reject", "correct"):
        raise ReviewError(f"adjudication is accept, reject or correct, not {verdict!r}")
    with store.transaction():
        item = find_item(store, key, bank)
        require_writable(store, item, version)
        if item.gold:
            raise ReviewError(f"item {item.key} is a gold item: it is not adjudicated")
        if item.state in CLOSED:
            raise ReviewError(
                f"item {item.key} is {item.state}{_settled_by(store, item)}: an adjudicated item is final "
                "(a maintainer may reopen it)"
            )
        if item.state == "consensus_accepted" and not item.audit:
            raise ReviewError(f"item {item.key}: consensus accepted and not in the audit sample; nothing to adjudicate")
        if _annotated(store, item.id, actor.name) and not _allowed(store, item.id, actor.name):
            raise ReviewError(
                f"item {item.key}: {actor.name} reviewed it in stage 1 and cannot adjudicate it "
                "(a maintainer can allow it: `reviewer review allow`)"
            )
        if not (rationale and rationale.strip()):
            raise ReviewError(f"item {item.key}: an adjudication needs a rationale")
        view = decision.view
        if view is not None:  # an evidence view, stored in its full JSON (as with a stage-1 decision)
            from reviewer.bank.evidence import check_view

            view = check_view(view)
        codes: list[str] = []
        if verdict == "reject":
            codes = codebook().check_reject(list(reasons), item=item.key)
        if verdict == "correct":
            if correction is None:
                raise ReviewError(f"item {item.key}: a correction needs the corrected parts (JSON)")
            fixed = check_correction(correction, question(store, item.id, item.version), item)
        elif correction is not None:
            raise ReviewError(f"item {item.key}: a correction goes with --correct")
        if verdict == "accept" and needs_reference(store, item):
            raise ReviewError(
                f"item {item.key}: a visual-reference item cannot be accepted while its reference is a draft; "
                "correct it with the reference"
            )
        decision_id = write_decision(
            store,
            item,
            actor.name,
            replace(decision, reasons=tuple(codes), view=view, confidence=confidence),
            stage=2,
            action="adjudicate",
            detail={"reasons": codes, "rationale": rationale, "confidence": confidence},
        )
        new_version = None
        if verdict == "correct":
            from reviewer.bank.io import dumps_line

            new_version = add_version(
                store, item, dumps_line(fixed, "question"), origin="corrected", created_by=actor.name, reason=rationale
            )
            record_event(
                store,
                actor.name,
                "new_version",
                bank=item.bank,
                item=item.id,
                version=new_version,
                before=str(item.version),
                after=str(new_version),
                detail={"decision": decision_id, "origin": "corrected"},
            )
        set_state(store, item, f"adjudicate_{verdict}", actor.role, actor.name, detail={"decision": decision_id})
    return {
        "decision": decision_id,
        "item": item.key,
        "verdict": verdict,
        "new_version": new_version,
        "confidence": confidence,
    }


def allow(store: Store, key: str, expert: str, *, user: str | None, reason: str, bank: str | None = None) -> None:
    """A maintainer lets an expert adjudicate an item the expert reviewed in stage 1."""
    actor = get_user(store, user)
    workflow().require("allow", actor.role, actor.name)
    if not reason.strip():
        raise ReviewError("an allowance needs a reason")
    target = find_user(store, expert)
    with store.transaction() as db:
        item = find_item(store, key, bank)
        db.execute(
            "INSERT INTO allowances (item, user, granted_by, reason) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [item.id, target.name, actor.name, reason],
        )
        record_event(
            store,
            actor.name,
            "allow",
            bank=item.bank,
            item=item.id,
            version=item.version,
            after=target.name,
            detail={"reason": reason},
        )


def reopen(store: Store, key: str, *, user: str | None, reason: str, bank: str | None = None) -> dict[str, Any]:
    """A maintainer sends a decided item back to stage 1: its decisions on the current version are
    retracted (new rows, nothing deleted) and its annotators review it again."""
    actor = get_user(store, user)
    with store.transaction() as db:
        item = find_item(store, key, bank)  # a frozen item may be reopened: that edit starts the next version
        workflow().target("reopen", item.state, actor.role, item=item.key, reason=reason)
        live = db.execute(
            "SELECT d.id FROM decisions d WHERE d.item = ? AND d.version = ? AND d.verdict != 'retract' "
            f"AND {EFFECTIVE}",
            [item.id, item.version],
        ).fetchall()
        for (decision_id,) in live:  # one reopen event below covers these retractions
            stage = db.execute("SELECT stage FROM decisions WHERE id = ?", [decision_id]).fetchone()[0]
            write_decision(
                store,
                item,
                actor.name,
                Decision("retract", retracts=decision_id, rationale=reason),
                stage=stage,
                action=None,
            )
        db.execute("UPDATE items SET audit = 0 WHERE id = ?", [item.id])
        db.execute("UPDATE assignments SET open = 1, skipped = 0 WHERE item = ?", [item.id])
        set_state(
            store, item, "reopen", actor.role, actor.name, detail={"reason": reason, "retracted": [d for (d,) in live]}
        )
    return {"item": item.key, "retracted": len(live)}


def apply_rule(store: Store, bank: str, *, user: str | None) -> dict[str, Any]:
    """Apply the bank's stage-2 rule to the flagged items outside the adjudication sample."""
    actor = get_user(store, user)
    workflow().require("settings", actor.role, actor.name)
    require_bank(store, bank)
    cfg = settings(store, bank)
    if cfg is None:
        raise ReviewError(f"bank {bank!r} has not been assigned yet")
    done = 0
    with store.transaction():
        flagged = items_of(store, bank, state="flagged")
        outside = [i for i in flagged if not i.audit and not in_sample(cfg, i)]  # sent-back items wait for an expert
        if cfg["rest_rule"] != "open":
            for item in outside:
                rule_decision = write_decision(
                    store,
                    item,
                    actor.name,
                    Decision("rule", rationale=f"rest rule: {cfg['rest_rule']}"),
                    stage=2,
                    action=None,
                )
                set_state(
                    store,
                    item,
                    f"rule_{cfg['rest_rule']}",
                    actor.role,
                    actor.name,
                    detail={
                        "decision": rule_decision,
                        "rule": cfg["rest_rule"],
                        "adjudicate_share": cfg["adjudicate_share"],
                        "seed": cfg["seed"],
                    },
                )
                done += 1
        record_event(
            store,
            actor.name,
            "apply_rule",
            bank=bank,
            after=cfg["rest_rule"],
            detail={
                "outside_sample": len(outside),
                "applied": done,
                "adjudicate_share": cfg["adjudicate_share"],
                "seed": cfg["seed"],
            },
        )
    return {"rule": cfg["rest_rule"], "outside_sample": len(outside), "applied": done}
