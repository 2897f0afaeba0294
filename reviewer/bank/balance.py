"""Balancing the conclusions a generated bank keeps: a bank whose answers are mostly one value lets a
majority-class guess outscore an agent that reads the record (seed 001's baselines exist to show this)."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np


def balance_questions(
    questions: list[dict[str, Any]], *, max_ratio: float, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(kept, dropped): within each template, no categorical conclusion value is kept more than
    ceil(max_ratio x the count of the next most common value) times; the surplus is drawn with the seed and
    returned as dropped-candidate records with the reason. Templates with a single value, numeric
    conclusions and insufficient-evidence questions are kept whole: the record does not allow balancing them."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, q in enumerate(questions):
        field = next(f for f in q["fields"] if f["name"] == q["conclusion"])
        if q["class"] == "insufficient" or field["type"] != "category":
            continue
        groups[(q["provenance"]["template"], str(q["reference"][q["conclusion"]]))].append(i)
    by_template: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for (template, value), members in groups.items():
        by_template[template][value] = members
    drop: dict[int, str] = {}
    for template, values in sorted(by_template.items()):
        counts = sorted((len(m) for m in values.values()), reverse=True)
        if len(counts) < 2:
            continue
        cap = max(1, math.ceil(max_ratio * counts[1]))
        rng = np.random.default_rng([seed, sum(map(ord, template))])
        for value, members in sorted(values.items()):
            if len(members) <= cap:
                continue
            surplus = rng.permutation(members)[: len(members) - cap]
            for i in sorted(int(j) for j in surplus):
                drop[i] = (
                    f"balance: {len(members)} questions of {template} answer {value!r}, kept {cap} "
                    f"({max_ratio:g} x the {counts[1]} of the next most common answer)"
                )
    kept = [q for i, q in enumerate(questions) if i not in drop]
    dropped = [
        {
            "template": questions[i]["provenance"]["template"],
            "period": [questions[i]["period"]["start"][:4], questions[i]["period"]["end"][:4]],
            "params": questions[i]["provenance"].get("params", {}),
            "reason": reason,
            "question": questions[i]["id"],
        }
        for i, reason in sorted(drop.items())
    ]
    return kept, dropped
