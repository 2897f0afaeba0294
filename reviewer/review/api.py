"""The review API: the one face the CLI, the app's review dock and review packages call.

Roles, blinding and legal transitions are enforced below this line (stage1, stage2, items); this
module only gathers them and adds the views that span both stages (queue, agreement, status).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewer.errors import ReviewError
from reviewer.review.items import history
from reviewer.review.ledger import EFFECTIVE, add_user, find_item, get_user, list_users, require_bank, verify_chain
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
    "add_user",
    "adjudicate",
    "agreement",
    "allow",
    "apply_audit",
    "apply_rule",
    "assign",
    "decide",
    "expert_view",
    "find_item",
    "history",
    "list_users",
    "next_item",
    "progress",
    "queue",
    "reopen",
    "set_rule",
    "settings",
    "status",
    "undo",
    "verify_chain",
]


def apply_audit(store: Store, audit_doc: Any, **kwargs: Any) -> dict[str, Any]:
    """The maintainer's action on a pilot-run audit (reviewer.review.audit.apply_audit; imported when used,
    so review verbs scripted in loops do not pay for the audit rules)."""
    from reviewer.review.audit import apply_audit as apply

    return apply(store, audit_doc, **kwargs)


def queue(store: Store, bank: str, *, user: str | None) -> list[dict[str, Any]]:
    """A user's queue in order: an annotator's remaining items, an expert's adjudication queue."""
    actor = get_user(store, user)
    require_bank(store, bank)
    if actor.role == "expert":
        return expert_queue(store, bank, actor)
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
        (r[0], r[1], r[2], json.loads(r[3]))
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
    """Agreement of stage 1 overall and per flag reason, and gold accuracy per annotator."""
    from reviewer.review.agreement import agreement_report, write_csv

    actor = get_user(store, user)
    workflow().require("see_all", actor.role, actor.name)
    require_bank(store, bank)
    report = agreement_report(stage1_table(store, bank), codebook().flag_codes("annotator"))
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
