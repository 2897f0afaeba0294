"""Freeze a reviewed bank as a version: only accepted and corrected items, byte-stable, with qc.json.

The freeze refuses while any item lacks a final decision. The frozen version is recorded in the
store first (its exact bytes, its members, the items' move to `frozen`, one event), then written as
a folder whole or not at all; freezing the same version again writes the same bytes. A frozen item
is read-only: a maintainer's reopen or a changed re-import starts the next version.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reviewer.errors import ReviewError
from reviewer.review.ledger import (
    EFFECTIVE,
    Item,
    get_user,
    items_of,
    record_event,
    require_bank,
    set_state,
    verify_chain,
    verify_decisions,
)
from reviewer.review.rules import codebook, workflow
from reviewer.review.stage1 import progress, settings
from reviewer.store import Store

#: item states that go into a frozen version (consensus items only when not waiting for an audit)
KEPT = ("consensus_accepted", "accepted", "corrected", "frozen")


def _adjudicated(store: Store, item: Item) -> dict[str, Any] | None:
    row = store.db.execute(
        "SELECT d.user, d.verdict, d.reasons, d.rationale FROM decisions d WHERE d.item = ? AND d.stage = 2 "
        f"AND d.verdict != 'retract' AND {EFFECTIVE} ORDER BY d.id DESC LIMIT 1",
        [item.id],
    ).fetchone()
    return (
        None if row is None else {"by": row[0], "verdict": row[1], "reasons": json.loads(row[2]), "rationale": row[3]}
    )


def undecided(store: Store, bank: str) -> list[dict[str, str]]:
    """Items without a final decision: never assigned, in stage 1, flagged, or waiting for their audit."""
    out = []
    for item in items_of(store, bank):
        waiting = item.state == "consensus_accepted" and item.audit
        if item.state not in workflow().final and item.state != "frozen" or waiting:
            out.append({"item": item.key, "state": "consensus_accepted (audit pending)" if waiting else item.state})
    return out


def qc_record(store: Store, bank: str, version: str, items: list[Item], *, viewer: str) -> dict[str, Any]:
    """What the review did, for qc.json (deterministic for one store state)."""
    from reviewer.review.agreement import agreement_report
    from reviewer.review.api import stage1_table

    cfg = settings(store, bank) or {}
    routed = {"consensus_accepted": 0, "flagged": 0, "audited": 0}
    outcomes: dict[str, int] = {}
    experts: dict[str, int] = {}
    removed = []
    expert_names = {r[0] for r in store.db.execute("SELECT name FROM users WHERE role = 'expert'")}
    for item in items:
        routes = [
            r[0]
            for r in store.db.execute(
                "SELECT action FROM events WHERE item = ? AND action IN ('route_consensus', 'route_flagged') "
                "ORDER BY id DESC LIMIT 1",
                [item.id],
            )
        ]
        if routes:
            routed["consensus_accepted" if routes[0] == "route_consensus" else "flagged"] += 1
        final = _adjudicated(store, item)
        if final and final["by"] in expert_names:
            experts[final["by"]] = experts.get(final["by"], 0) + 1
            if routes and routes[0] == "route_consensus":
                routed["audited"] += 1
        outcome = item.state if item.state != "frozen" else "frozen earlier"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if item.state == "rejected":
            removed.append(
                {
                    "id": item.qid,
                    "outcome": "rejected"
                    if final and final["verdict"] != "rule"
                    else f"rejected by rule ({cfg.get('rest_rule')})",
                    "by": final["by"] if final else "",
                    "reasons": final["reasons"] if final else [],
                    "rationale": final["rationale"] if final else None,
                }
            )
    from reviewer.review.quality import item_provenance

    provenance = item_provenance(store, bank, [i.qid for i in items if i.state in KEPT])
    n_events, last_hash = verify_chain(store)
    verify_decisions(store)  # a decision edited behind the tool's back is not frozen into a bank
    agreement = agreement_report(stage1_table(store, bank), codebook().flag_codes("annotator"))
    return {
        "bank": bank,
        "version": version,
        "counts": {
            "items": len(items),
            "in_bank": sum(1 for i in items if i.state in KEPT),
            "stage1": routed,
            "outcomes": dict(sorted(outcomes.items())),
        },
        "agreement": json.loads(json.dumps(agreement, allow_nan=False)),
        "adjudicated_by": dict(sorted(experts.items())),
        "routing": {
            k: cfg.get(k, d)
            for k, d in (
                ("k", 1),
                ("seed", 0),
                ("audit_share", 0.1),
                ("adjudicate_share", 1.0),
                ("rest_rule", "open"),
                ("gold_share", 0.0),
            )
        },
        "removed": removed,
        "gold": [
            {k: r[k] for k in ("user", "gold_decided", "gold_correct", "gold_accuracy")}
            for r in progress(store, bank, user=viewer)
        ],
        "events": {"count": n_events, "last_hash": last_hash},
        "items": provenance,
    }


def _stored(store: Store, bank: str, version: str) -> dict[str, bytes]:
    return {
        r[0]: r[1]
        for r in store.db.execute("SELECT file, data FROM bank_files WHERE bank = ? AND version = ?", [bank, version])
    }


def _unchanged_since(store: Store, bank: str, version: str) -> bool:
    """Is every member of a frozen version still frozen at the version it was frozen with?"""
    rows = store.db.execute(
        "SELECT count(*), sum(i.state = 'frozen' AND i.current_version = m.item_version) FROM bank_items m "
        "JOIN items i ON i.id = m.item WHERE m.bank = ? AND m.version = ?",
        [bank, version],
    ).fetchone()
    return rows[0] == (rows[1] or 0)


def freeze(store: Store, bank: str, *, version: str, out: str | Path, user: str | None) -> dict[str, Any]:
    """Freeze the reviewed bank as `version` into the folder `out`; returns the manifest."""
    from reviewer.bank.io import (
        MANIFEST,
        BankContent,
        bank_bytes,
        refuse_frozen_folder,
        refuse_occupied_folder,
        sha256_bytes,
    )
    from reviewer.fileio import check_output_folder, write_folder
    from reviewer.review.banks import latest_rows, store_version

    actor = get_user(store, user)
    workflow().require("freeze", actor.role, actor.name)
    require_bank(store, bank)
    out = check_output_folder(out)
    row = store.db.execute("SELECT frozen FROM banks WHERE name = ? AND version = ?", [bank, version]).fetchone()
    if row and row[0]:
        if not _unchanged_since(store, bank, version):
            raise ReviewError(
                f"bank {bank} version {version} is frozen and items changed since; freeze the changes as a new version"
            )
        files = _stored(store, bank, version)  # the same state: the same bytes
        refuse_frozen_folder(out, unless_bytes=files[MANIFEST])
        refuse_occupied_folder(out, files)
        write_folder(out, files, last=[MANIFEST])
        return json.loads(files[MANIFEST])
    missing = undecided(store, bank)
    if missing:
        listed = ", ".join(f"{m['item']} ({m['state']})" for m in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        raise ReviewError(f"cannot freeze {bank}: {len(missing)} item(s) lack a final decision: {listed}{more}")
    items = items_of(store, bank)
    kept = [i for i in items if i.state in KEPT]
    questions = [
        json.loads(r[0])
        for i in kept
        for r in store.db.execute("SELECT json FROM item_versions WHERE item = ? AND version = ?", [i.id, i.version])
    ]
    sites, pairs = latest_rows(store, bank)
    ids = {q["id"] for q in questions}
    used_sites = {q["site"] for q in questions}
    qc = qc_record(store, bank, version, items, viewer=actor.name)
    qc["removed_pairs"] = sorted(p["id"] for p in pairs if p["question"] not in ids)
    created = store.db.execute("SELECT at FROM events ORDER BY id DESC LIMIT 1").fetchone()[0]
    created = created.split(".")[0] + "Z"
    content = BankContent(
        bank,
        version,
        questions,
        [s for s in sites if s["id"] in used_sites],
        [p for p in pairs if p["question"] in ids],
        frozen=True,
        created=created,
        qc=qc,
    )
    files, manifest = bank_bytes(content, where=out)
    refuse_frozen_folder(out)
    refuse_occupied_folder(out, files)
    with store.transaction():
        members = [(i.id, i.version) for i in kept]
        store_version(
            store,
            bank,
            version,
            manifest,
            files,
            members,
            sites=[s for s in sites if s["id"] in used_sites],
            pairs=[p for p in pairs if p["question"] in ids],
        )
        for item in kept:
            if item.state != "frozen":
                set_state(store, item, "freeze", actor.role, actor.name, detail={"bank_version": version})
        record_event(
            store,
            actor.name,
            "freeze",
            bank=bank,
            after=version,
            detail={
                "items": len(kept),
                "removed": len(qc["removed"]),
                "manifest_sha256": sha256_bytes(files[MANIFEST]),
            },
        )
    write_folder(out, files, last=[MANIFEST])
    return manifest
