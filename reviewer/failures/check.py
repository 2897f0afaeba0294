"""The expert check of the LLM pre-coding (seed 001 Sec. B.8, C.5): a seeded check sample, coded blind, and the
agreement between the LLM's codes and the experts' (percent, Cohen's kappa with its counts, every disagreement).

The sample of one part (steps or pairs): every run the LLM marked uncertain (or a seeded sample of `uncertain`
of them), plus up to `per_code` runs per code from the rest, drawn with the seed. It is fixed once drawn
(failure_checks, append-only, with an event). The experts code the sampled runs with `code_run` from `run_view`,
which holds no LLM code.
"""

from __future__ import annotations

import random
from typing import Any

from reviewer.errors import ReviewError
from reviewer.failures.codebook import codebook
from reviewer.failures.coding import latest, require_role, scheme_of
from reviewer.store import Store

PARTS = ("steps", "pairs")


def _part_runs(doc: dict[str, Any], part: str) -> list[dict[str, Any]]:
    return [r for r in doc["runs"] if r["part"] == _part(part)]


def draw_check(
    store: Store,
    doc: dict[str, Any],
    part: str,
    *,
    seed: int,
    user: str | None,
    uncertain: int | None = None,
    per_code: int = 2,
) -> list[dict[str, Any]]:
    """Draw and keep the check sample of one part; [{run, reason}] in set order."""
    from reviewer.review.ledger import now, record_event

    actor = require_role(store, user, codebook().precoders, "draw the check sample")
    runs = _part_runs(doc, part)
    if not runs:
        raise ReviewError(f"the {part} part of {doc['id']} has no runs: nothing to check")
    if check_sample(store, doc, part):
        raise ReviewError(f"the check sample of the {part} part of {doc['id']} is drawn already")
    llm = {r["id"]: latest(store, doc["id"], r["id"], "llm") for r in runs}
    missing = [rid for rid, c in llm.items() if c is None]
    if missing:
        raise ReviewError(
            f"{len(missing)} runs of the {part} part have no LLM code (first {missing[0]}): precode first"
        )
    rng = random.Random(f"failures-check:{seed}:{doc['id']}:{part}")
    unsure = [r["id"] for r in runs if llm[r["id"]]["uncertain"]]
    if uncertain is not None and uncertain < len(unsure):
        unsure = sorted(rng.sample(unsure, uncertain))
    picked = {rid: "uncertain" for rid in unsure}
    flagged = {r["id"] for r in runs if llm[r["id"]]["uncertain"]}
    for code in codebook().schemes[scheme_of(runs[0])].names:
        rest = [r["id"] for r in runs if r["id"] not in flagged and llm[r["id"]]["code"] == code]
        for rid in sorted(rng.sample(rest, min(per_code, len(rest)))):
            picked[rid] = "per_code"
    out = [{"run": r["id"], "reason": picked[r["id"]]} for r in runs if r["id"] in picked]
    with store.transaction() as db:
        for row in out:
            db.execute(
                "INSERT INTO failure_checks (set_id, run, reason, seed, drawn_by, created) VALUES (?, ?, ?, ?, ?, ?)",
                [doc["id"], row["run"], row["reason"], seed, actor.name, now()],
            )
        record_event(
            store, actor.name, "failure_check_draw", after=str(len(out)),
            detail={"set": doc["id"], "part": part, "seed": seed, "uncertain": uncertain, "per_code": per_code,
                    "runs": [r["run"] for r in out]},
        )  # fmt: skip
    return out


def check_sample(store: Store, doc: dict[str, Any], part: str | None = None) -> list[str]:
    """The run ids of the check sample (of one part), in set order: no reason, no LLM code (the expert is blind)."""
    ids = {r[0] for r in store.db.execute("SELECT run FROM failure_checks WHERE set_id = ?", [doc["id"]])}
    return [r["id"] for r in doc["runs"] if r["id"] in ids and (part is None or r["part"] == part)]


def agreement(store: Store, doc: dict[str, Any], part: str, *, user: str | None) -> dict[str, Any]:
    """LLM vs expert on the check runs the experts coded: n, agreeing, percent, Cohen's kappa, the count table
    (rows: LLM code, columns: expert code) and every disagreement with the LLM's quote and the expert's note.
    Only the roles that may see the LLM's codes (codebook llm_viewers) get it: the experts' check stays blind."""
    require_role(store, user, codebook().llm_viewers, "see the LLM's codes")
    runs = {r["id"]: r for r in _part_runs(doc, part)}
    codes = list(codebook().schemes["step" if part == "steps" else "sensor"].names)
    pairs, uncoded = [], []
    for rid in check_sample(store, doc, part):
        llm, expert = latest(store, doc["id"], rid, "llm"), latest(store, doc["id"], rid, "expert")
        if expert is None:
            uncoded.append(rid)
        else:
            pairs.append((rid, llm, expert))
    table = [[0] * len(codes) for _ in codes]
    for _, llm, expert in pairs:
        table[codes.index(llm["code"])][codes.index(expert["code"])] += 1
    n = len(pairs)
    agree = sum(table[i][i] for i in range(len(codes)))
    out: dict[str, Any] = {
        "set": doc["id"],
        "part": part,
        "checked": n,
        "not_coded_yet": uncoded,
        "agree": agree,
        "percent": None if n == 0 else 100.0 * agree / n,
        "kappa": None,
        "kappa_note": None,
        "codes": codes,
        "table": table,
        "disagreements": [
            {"run": rid, "model": runs[rid]["model"], "llm": llm["code"], "expert": expert["code"],
             "coder": expert["coder"], "quote": llm["quote"], "note": expert["note"]}
            for rid, llm, expert in pairs if llm["code"] != expert["code"]
        ],
    }  # fmt: skip
    used = [i for i in range(len(codes)) if sum(table[i]) or sum(row[i] for row in table)]
    if n < 2:
        out["kappa_note"] = "fewer than 2 checked runs"
    elif len(used) < 2:
        out["kappa_note"] = "both coders used one code only: kappa is undefined (agreement by chance is 1)"
    else:
        import numpy as np
        from statsmodels.stats.inter_rater import cohens_kappa

        sub = np.array(table)[np.ix_(used, used)]
        out["kappa"] = float(cohens_kappa(sub, return_results=False))
    return out


def check_queue(store: Store, doc: dict[str, Any], user: str, part: str) -> list[dict[str, Any]]:
    """The check sample of one part as a coder's list (`coding.queue` rows: run, part, model, question and this
    user's code in force): no reason for the draw and no LLM code, so the expert codes blind."""
    from reviewer.failures.coding import queue

    ids = set(check_sample(store, doc, _part(part)))
    return [r for r in queue(store, doc, user, part=part) if r["run"] in ids]


def check_view(store: Store, doc: dict[str, Any], run_id: str, *, user: str) -> dict[str, Any]:
    """What the expert reads for one run of the check sample: `coding.run_view`, which holds no LLM code, quote or
    uncertain flag. A run outside the drawn sample is refused (the check mode shows the sample only)."""
    from reviewer.failures.coding import run_view

    if run_id not in check_sample(store, doc):
        raise ReviewError(f"run {run_id} is not in the check sample of {doc['id']}", field="run")
    return run_view(doc, run_id, store=store, user=user)


def _part(part: str) -> str:
    if part not in PARTS:
        raise ReviewError(f"part must be steps or pairs, not {part!r}", field="part")
    return part
