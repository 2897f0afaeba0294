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


def pair_blocks(
    bank: Bank, qt: Any, cubes: dict[str, Any], models: list[str], base_right: dict[str, np.ndarray]
) -> dict[str, Any]:
    """Per-model and per-pair outcomes (models x pairs), plus the baselines' rows."""
    rec, closed = cubes["record"], cubes["closed_book"]
    rec3 = rec.all_right  # (M, Q)
    closed3 = closed.all_right
    per_model: dict[str, dict[str, Any]] = {m: {} for m in models}
    by_pair: dict[str, Any] = {}
    cond_of = {"instrument": "altered", "placebo": "placebo"}
    for kind in ("instrument", "placebo"):
        cube = cubes[cond_of[kind]]
        totals = {m: Counter() for m in models}
        for j, p in enumerate(bank.pairs):
            if p["kind"] != kind:
                continue
            q = qt.index[p["question"]]
            judge = qt.judges[q]
            right = rec3[:, q]
            alt = cube.all_right[:, j]
            held_ok = closed3[:, q] | bool(qt.no_change_ref[q])
            toward_key = value_key(p["pushes_toward"]) if p.get("pushes_toward") is not None else None
            row: dict[str, Any] = {
                "question": p["question"],
                "kind": kind,
                "satellite": p["satellite"],
                "variable": p["variable"],
                "alteration": p["alteration"],
                "description": p["description"],
                "site": bank.question(p["question"])["site"],
                "theme": str(qt.theme[q]),
                "reference": bank.question(p["question"])["reference"][judge.name],
                "pushes_toward": p.get("pushes_toward"),
                "right": 0,
                "moved": 0,
                "held": 0,
                "beyond": 0,
                "differ_runs": 0,
                "toward_runs": 0,
                "models": 0,
            }
            moved_values: Counter = Counter()
            moved_runs = 0
            for m, model in enumerate(models):
                if not cube.has_model[m]:
                    continue
                row["models"] += 1
                if not right[m]:
                    outcome = "wrong_on_original"
                elif not alt[m]:
                    outcome = "moved"
                elif kind == "placebo" or held_ok[m]:
                    outcome = "held"
                else:
                    outcome = "beyond"
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
                    for orig_v, alt_v in zip(rec.values[m, q], cube.values[m, j], strict=True):
                        if orig_v is not None and alt_v is not None and orig_v != alt_v:
                            row["differ_runs"] += 1
                            totals[model]["differ"] += 1
                            if alt_v == toward_key:
                                row["toward_runs"] += 1
                                totals[model]["toward"] += 1
            top = moved_values.most_common(2)
            row["shift"] = None
            if top and top[0][1] >= 2 and (len(top) == 1 or top[1][1] < top[0][1]):
                row["shift"] = {
                    "from": row["reference"],
                    "to": _display(top[0][0]),
                    "count": top[0][1],
                    "runs": moved_runs,
                }
            row["toward_share"] = (100.0 * row["toward_runs"] / row["differ_runs"]) if row["differ_runs"] else None
            by_pair[p["id"]] = row
        for m, model in enumerate(models):
            if not cube.has_model[m]:
                per_model[model][kind] = None
                continue
            t = totals[model]
            block = per_model[model].setdefault(kind, {"by_pair": {}})
            block.update({"right": t["right"], "moved": t["moved"]})
            if kind == "instrument":
                block.update(
                    {
                        "held": t["held"],
                        "beyond": t["beyond"],
                        "differ_runs": t["differ"],
                        "toward_runs": t["toward"],
                        "toward_share": (100.0 * t["toward"] / t["differ"]) if t["differ"] else None,
                    }
                )
            else:
                block["held"] = t["held"]
            per_model[model][kind] = {k: block[k] for k in [*(x for x in block if x != "by_pair"), "by_pair"]}
    baselines = {}
    for name, right in base_right.items():
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
        baselines[name] = b
    return {"models": per_model, "baselines": baselines, "by_pair": by_pair}
