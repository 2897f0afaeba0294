"""Reviewing an item's AI draft (issue 12) before it is assigned: accept it (the draft's answer becomes the item's
reference, a new version), edit then accept (a correction, a new version), or reject it with a reason from the
codebook's draft_reject_reasons. A reason's route says where the item goes: `redraft` back to drafting (state
redraft; `reviewer draft BANK --items rejected` makes a new draft version), `manual` to a reference set by hand
(state needs_reference; an expert or maintainer corrects it). Every outcome is an event written with its change.

Accepted and hand-set references are versions of origin 'corrected' (a person set the reference; the store's
origins are generated, drafted, corrected); the question's provenance says which (`draft_review`).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from reviewer.errors import ReviewError
from reviewer.review.ledger import find_item, get_user, item_by_id, now, question, record_event, set_state
from reviewer.review.rules import codebook, workflow
from reviewer.store import Store

VERDICTS = ("accept", "correct", "reject")


def _draft_of(q: dict[str, Any]) -> dict[str, Any] | None:
    return (q.get("provenance") or {}).get("draft")


def _new_version(store: Store, item: Any, fixed: dict[str, Any], *, user: str, reason: str, review: dict) -> int:
    from reviewer.bank.io import dumps_line
    from reviewer.review.items import add_version

    fixed = copy.deepcopy(fixed)
    fixed.setdefault("provenance", {})["draft_review"] = review
    version = add_version(
        store, item, dumps_line(fixed, "question"), origin="corrected", created_by=user, reason=reason
    )
    record_event(
        store,
        user,
        "new_version",
        bank=item.bank,
        item=item.id,
        version=version,
        before=str(item.version),
        after=str(version),
        detail={"origin": "corrected", "draft_review": review["verdict"]},
    )
    return version


def review_draft(
    store: Store,
    key: str,
    *,
    user: str | None,
    verdict: str,
    reason: str | None = None,
    correction: dict[str, Any] | None = None,
    rationale: str | None = None,
    version: int | None = None,
    bank: str | None = None,
) -> dict[str, Any]:
    """One reviewer's decision on an item's AI draft (see the module docstring); returns what was done: the item,
    verdict, reason and route (reject), the new version (accept, correct) and the item's state after."""
    from reviewer.review.stage1 import check_correction

    actor = get_user(store, user)
    workflow().require("review_drafts", actor.role, actor.name)
    if verdict not in VERDICTS:
        raise ReviewError(f"a draft is accepted, corrected or rejected, not {verdict!r}")
    with store.transaction():
        item = find_item(store, key, bank)
        if version is not None and version != item.version:
            raise ReviewError(f"item {item.key} is at version {item.version}, not {version}: reload it")
        q = question(store, item.id, item.version)
        draft = _draft_of(q)
        review = {"verdict": verdict, "by": actor.name, "at": now(), "draft_version": item.version}
        if rationale:
            review["rationale"] = rationale
        if verdict != "correct" and (draft is None or item.state != "drafted"):
            raise ReviewError(
                f"item {item.key} is {item.state}" + ("" if draft else " and has no AI draft") + ": only a drafted "
                "item's draft is accepted or rejected"
            )
        done = (q.get("provenance") or {}).get("draft_review")
        if verdict != "correct" and done:
            raise ReviewError(
                f"item {item.key}: its draft was reviewed already ({done['verdict']} by {done['by']}); a new draft "
                "(reviewer draft --redraft) can be reviewed again"
            )
        if verdict == "reject":
            r = codebook().draft_reason(reason or "", item=item.key)
            review |= {"reason": r.code, "route": r.route}
            action = f"draft_reject_{r.route}"
            after = set_state(store, item, action, actor.role, actor.name, detail=review)
            return {"item": item.key, "verdict": verdict, "reason": r.code, "route": r.route, "state": after,
                    "new_version": None}  # fmt: skip
        if verdict == "accept":
            if correction is not None:
                raise ReviewError(f"item {item.key}: an edited draft is accepted with --correct, not --accept")
            correction = {"reference": dict(draft["reply"]["answer"])}
            why = f"AI draft accepted ({draft['provenance']['model']}, prompt {draft['provenance']['prompt_version']})"
        else:
            if correction is None:
                raise ReviewError(f"item {item.key}: a correction needs the corrected parts (JSON)")
            why = rationale or correction.get("reason") or "reference set by hand"
        workflow().target(f"draft_{verdict}", item.state, actor.role, item=item.key)
        fixed = check_correction(correction, q, item)
        fixed.setdefault("provenance", {})["reference_from"] = (
            "AI draft accepted by review" if verdict == "accept" else "set by review"
        )
        new = _new_version(store, item, fixed, user=actor.name, reason=why, review=review)
        after = set_state(
            store,
            item_by_id(store, item.id),
            f"draft_{verdict}",
            actor.role,
            actor.name,
            detail=review | {"new_version": new},
        )
    return {"item": item.key, "verdict": verdict, "reason": None, "route": None, "state": after, "new_version": new}


def draft_queue(store: Store, bank: str, *, user: str | None) -> dict[str, Any]:
    """The drafts' side of a bank for its maintainer view: drafts waiting for a review, items waiting for a
    redraft, items waiting for a reference set by hand (item keys by state), and the draft reject reasons."""
    actor = get_user(store, user)
    workflow().require("see_all", actor.role, actor.name)
    rows = store.db.execute(
        "SELECT i.qid, i.state, v.json FROM items i JOIN item_versions v ON v.item = i.id AND v.version = "
        "i.current_version WHERE i.bank = ? AND i.gold = 0 AND i.state IN ('drafted', 'redraft', 'needs_reference') "
        "ORDER BY i.position",
        [bank],
    ).fetchall()
    out: dict[str, list[str]] = {"to_review": [], "redraft": [], "needs_reference": []}
    for qid, state, text in rows:
        if state == "drafted":
            prov = json.loads(text).get("provenance") or {}
            if prov.get("draft") and not prov.get("draft_review"):
                out["to_review"].append(f"{bank}/{qid}")
        else:
            out[state].append(f"{bank}/{qid}")
    return {"bank": bank, **out, "reasons": codebook().as_dict()["draft_reject_reasons"]}


def draft_view(store: Store, key: str, *, user: str | None, bank: str | None = None) -> dict[str, Any]:
    """What a draft's reviewer judges: the item's current question (its draft in the provenance), its version and
    state, and the draft reject reasons with their routes (the review dock's draft mode shows this)."""
    actor = get_user(store, user)
    workflow().require("review_drafts", actor.role, actor.name)
    item = find_item(store, key, bank)
    return {
        "item": item.key,
        "version": item.version,
        "state": item.state,
        "question": question(store, item.id, item.version),
        "reasons": codebook().as_dict()["draft_reject_reasons"],
    }
