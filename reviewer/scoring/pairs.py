"""Instrument and placebo pairs: moved, held and beyond cases, and where moved answers went.

A model-pair case counts when the model is right on the original question in all k passes with the
record. On the altered version it moved when not right in all k altered passes; it held when right in
all k and (right in the closed book by pass^k, or the reference conclusion is the no-change value);
otherwise it held beyond both.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from reviewer.bank.io import Bank
from reviewer.scoring.judge import value_key

OUTCOMES = ("moved", "held", "beyond", "wrong_on_original")


def _display(key: Any) -> Any:
    return list(key) if isinstance(key, tuple) else key


CONDITION_OF = {"instrument": "altered", "placebo": "placebo"}  # the runs condition that holds each kind's versions


def pair_blocks(
    bank: Bank, qt: Any, cubes: dict[str, Any], models: list[str], base_right: dict[str, np.ndarray]
) -> dict[str, Any]:
    """Per-model and per-pair outcomes (models x pairs), plus the baselines' rows."""
    per_model: dict[str, dict[str, Any]] = {m: {} for m in models}
    by_pair: dict[str, Any] = {}
    for kind in ("instrument", "placebo"):
        cube = cubes[CONDITION_OF[kind]]
        totals = {m: Counter() for m in models}
        for j, p in enumerate(bank.pairs):
            if p["kind"] == kind:
                by_pair[p["id"]] = _pair_row(bank, qt, cubes, models, j, p, per_model, totals)
        for m, model in enumerate(models):
            cases = per_model[model].get(kind, {}).get("by_pair", {})
            per_model[model][kind] = _model_block(kind, totals[model], cases) if cube.has_model[m] else None
    baselines = {name: _baseline_block(bank, qt, right) for name, right in base_right.items()}
    return {"models": per_model, "baselines": baselines, "by_pair": by_pair}


def _outcome(kind: str, right: bool, alt_right: bool, held_ok: bool) -> str:
    """One model-pair case: wrong on the original, moved, held (prior, default or placebo) or beyond."""
    if not right:
        return "wrong_on_original"
    if not alt_right:
        return "moved"
    if kind == "placebo" or held_ok:
        return "held"
    return "beyond"


def _pair_row(
    bank: Bank,
    qt: Any,
    cubes: dict[str, Any],
    models: list[str],
    j: int,
    p: dict[str, Any],
    per_model: dict[str, dict[str, Any]],
    totals: dict[str, Counter],
) -> dict[str, Any]:
    """Pair j's row of counts over the models; records each model's case in per_model and adds to totals."""
    kind = p["kind"]
    rec, cube = cubes["record"], cubes[CONDITION_OF[kind]]
    q = qt.index[p["question"]]
    judge = qt.judges[q]
    right = rec.all_right[:, q]
    alt = cube.all_right[:, j]
    held_ok = cubes["closed_book"].all_right[:, q] | bool(qt.no_change_ref[q])
    toward_key = value_key(p["pushes_toward"]) if p.get("pushes_toward") is not None else None
    row = _empty_row(bank, qt, p, q, judge.name)
    moved_values: Counter = Counter()
    moved_runs = 0
    for m, model in enumerate(models):
        if not cube.has_model[m]:
            continue
        row["models"] += 1
        outcome = _outcome(kind, right[m], alt[m], held_ok[m])
        case = {
            "outcome": outcome,
            "right_on_original": bool(right[m]),
            "altered_right_passes": int(cube.right[m, j].sum()),
        }
        per_model[model].setdefault(kind, {}).setdefault("by_pair", {})[p["id"]] = case
        if right[m]:
            row["right"] += 1
            row[outcome] += 1
            totals[model]["right"] += 1
            totals[model][outcome] += 1
        if outcome == "moved":
            alt_vals = [v for v in cube.values[m, j] if v is not None]
            moved_runs += len(alt_vals)
            moved_values.update(v for v in alt_vals if v not in judge.right_keys)
        if toward_key is not None:
            _count_toward(rec.values[m, q], cube.values[m, j], toward_key, row, totals[model])
    row["shift"] = _shift(row["reference"], moved_values, moved_runs)
    row["toward_share"] = (100.0 * row["toward_runs"] / row["differ_runs"]) if row["differ_runs"] else None
    return row


def _empty_row(bank: Bank, qt: Any, p: dict[str, Any], q: int, judge_name: str) -> dict[str, Any]:
    """A pair's description with every count at zero."""
    return {
        "question": p["question"],
        "kind": p["kind"],
        "satellite": p["satellite"],
        "variable": p["variable"],
        "alteration": p["alteration"],
        "description": p["description"],
        "site": bank.question(p["question"])["site"],
        "theme": str(qt.theme[q]),
        "reference": bank.question(p["question"])["reference"][judge_name],
        "pushes_toward": p.get("pushes_toward"),
        "right": 0,
        "moved": 0,
        "held": 0,
        "beyond": 0,
        "differ_runs": 0,
        "toward_runs": 0,
        "models": 0,
    }


def _count_toward(orig: Any, alt: Any, toward_key: Any, row: dict[str, Any], total: Counter) -> None:
    """Runs whose conclusion differs between the versions, and those of them that went to pushes_toward."""
    for orig_v, alt_v in zip(orig, alt, strict=True):
        if orig_v is not None and alt_v is not None and orig_v != alt_v:
            row["differ_runs"] += 1
            total["differ"] += 1
            if alt_v == toward_key:
                row["toward_runs"] += 1
                total["toward"] += 1


def _shift(reference: Any, moved_values: Counter, moved_runs: int) -> dict[str, Any] | None:
    """Where the moved runs went: the most common other answer when unique and given at least twice."""
    top = moved_values.most_common(2)
    if top and top[0][1] >= 2 and (len(top) == 1 or top[1][1] < top[0][1]):
        return {"from": reference, "to": _display(top[0][0]), "count": top[0][1], "runs": moved_runs}
    return None


def _model_block(kind: str, t: Counter, cases: dict[str, Any]) -> dict[str, Any]:
    """One model's totals over the pairs of a kind, its cases last."""
    block: dict[str, Any] = {"right": t["right"], "moved": t["moved"], "held": t["held"]}
    if kind == "instrument":
        block.update(
            {
                "beyond": t["beyond"],
                "differ_runs": t["differ"],
                "toward_runs": t["toward"],
                "toward_share": (100.0 * t["toward"] / t["differ"]) if t["differ"] else None,
            }
        )
    block["by_pair"] = cases
    return block


def _baseline_block(bank: Bank, qt: Any, right: np.ndarray) -> dict[str, Any]:
    """A baseline never moves: each pair is held when the baseline is right on the original."""
    b: dict[str, Any] = {}
    for kind in ("instrument", "placebo"):
        cases = {
            p["id"]: {"outcome": "held" if right[qt.index[p["question"]]] else "wrong_on_original"}
            for p in bank.pairs
            if p["kind"] == kind
        }
        n_right = sum(c["outcome"] == "held" for c in cases.values())
        b[kind] = {"right": n_right, "moved": 0, "held": n_right, "by_pair": cases}
        if kind == "instrument":
            b[kind]["beyond"] = 0
    return b
