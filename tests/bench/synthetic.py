"""Seeded synthetic bank and runs at the seed-001 scale (not a test module).

238 questions (153 computable, 73 recognition, 12 insufficient) on 56 sites, 22 instrument and 8 placebo
pairs, 12 models x 3 passes in the record and closed book plus every pair: 18,216 runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from reviewer.bank.io import BankContent, write_bank
from reviewer.bank.model import TASKS

THEMES = ["forest", "greening", "agriculture", "water", "urban", "fire", "snow", "coast"]
ROLES = ["famous", "stable", "obscure"]
DIRECTION = ["increase", "decrease", "no significant change"]
MODELS = [
    "Opus 5.5",
    "GPT-6 Sol",
    "GPT-6.1 Sol",
    "Sonnet 5.5",
    "GPT-6 Astra",
    "GPT-6.1 Terra",
    "Gemini 3 Flash",
    "DeepSeek Flash",
    "Kimi K2.5",
    "Haiku 5.5",
    "Qwen 3.7 Flash",
    "GPT-6 Luna",
]
SKILL = [0.93, 0.92, 0.91, 0.9, 0.88, 0.86, 0.85, 0.82, 0.74, 0.64, 0.4, 0.4]
SENSOR_SETS = [["TM", "ETM+", "OLI"], ["OLI"], ["ETM+", "OLI"], ["MODIS"], ["TM", "ETM+"]]


def make_bank(folder: Path, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    sites = []
    for i in range(56):
        region = i >= 48
        sites.append(
            {
                "id": f"a{i + 1:02d}",
                "name": f"Site {i + 1}",
                "kind": "region" if region else "core",
                "theme": "region" if region else THEMES[i % 8],
                "role": "region" if region else ROLES[i % 3],
                "bbox": [float(i), 0.0, float(i) + 0.5, 0.5],
                "crs": "EPSG:4326",
            }
        )
    questions = []
    classes = ["computable"] * 153 + ["recognition"] * 73 + ["insufficient"] * 12
    for n, klass in enumerate(classes):
        site = sites[n % 56]
        kind = (
            ["category", "number", "category", "year", "years", "month", "quadrant"][n % 7]
            if klass != "insufficient"
            else "category"
        )
        sensors = SENSOR_SETS[int(rng.integers(0, len(SENSOR_SETS)))]
        start = 1985 + int(rng.integers(0, 20))
        q = {
            "id": f"{site['id']}-{n // 56 + 1}",
            "site": site["id"],
            "class": klass,
            "task": None if klass == "insufficient" else TASKS[n % 10],
            "period": {"start": f"{start}-01-01", "end": "2024-12-31"},
            "text": f"Question {n}",
            "reference_source": {
                "computable": ["method", "method", "withheld_product", "record_product"][n % 4],
                "recognition": ["withheld_product", "visual"][n % 2],
                "insufficient": "observations",
            }[klass],
            "sensors": sensors,
            "multi_sensor": len(set(sensors) & {"TM", "ETM+", "OLI"}) >= 2,
            "no_change": None,
        }
        if kind == "category":
            q["fields"] = [{"name": "direction", "type": "category", "options": DIRECTION}]
            ref = DIRECTION[int(rng.integers(0, 3))]
            q["no_change"] = "no significant change"
        elif kind == "number":
            ref = float(np.round(rng.uniform(1, 500), 2))
            q["fields"] = [{"name": "value", "type": "number", "unit": "km2"}]
            q["reference_range"] = {"value": [round(ref * 0.9, 3), round(ref * 1.1, 3)]}
        elif kind == "year":
            ref = int(rng.integers(1990, 2024))
            q["fields"] = [{"name": "value", "type": "year"}]
        elif kind == "years":
            ref = sorted({int(y) for y in rng.integers(1990, 2024, size=2)})
            q["fields"] = [{"name": "value", "type": "years"}]
        elif kind == "month":
            ref = int(rng.integers(1, 13))
            q["fields"] = [{"name": "value", "type": "month"}]
        else:
            ref = ["north-west", "north-east", "south-west", "south-east"][int(rng.integers(0, 4))]
            q["fields"] = [{"name": "value", "type": "quadrant"}]
        q["conclusion"] = q["fields"][0]["name"]
        if klass == "insufficient":
            ref = "insufficient evidence"
        q["reference"] = {q["conclusion"]: ref}
        questions.append(q)
    pairs = []
    comp = [q for q in questions if q["class"] == "computable" and q["fields"][0]["type"] == "category"]
    for j, q in enumerate(comp[:30]):
        instrument = j < 22
        sat = ["terra", "landsat8", "terra", "landsat8"][j % 4]
        pairs.append(
            {
                "id": f"{q['id']}-p",
                "question": q["id"],
                "kind": "instrument" if instrument else "placebo",
                "satellite": sat,
                "variable": ["ndvi", "ndvi", "snow", "water"][j % 4],
                "alteration": "scale" if instrument else "drop_scenes",
                "factor": 0.8 if instrument else None,
                "from": "2018-01-01",
                "to": None,
                "fraction": None if instrument else 0.05,
                "seed": None if instrument else j,
                "pushes_toward": "decrease" if instrument else None,
                "description": f"pair {j}",
            }
        )
    write_bank(
        folder, BankContent("synthetic", "1", questions, sites, pairs, frozen=True, created="2026-11-30T12:00:00Z")
    )
    return {"questions": questions, "pairs": pairs}


def _wrong(q: dict, rng: np.random.Generator):
    t = q["fields"][0]["type"]
    ref = q["reference"][q["conclusion"]]
    if t == "category":
        return [o for o in DIRECTION if o != ref][int(rng.integers(0, 2))] if ref in DIRECTION else "increase"
    if t == "number":
        return round(ref * 1.5, 2)
    if t == "year":
        return ref + 2
    if t == "years":
        return [r + 1 for r in ref]
    if t == "month":
        return ref % 12 + 1
    return "north-west" if ref != "north-west" else "south-east"


def make_runs(bank: dict, path: Path, seed: int = 2) -> int:
    rng = np.random.default_rng(seed)
    qs = bank["questions"]
    diff = rng.uniform(-0.25, 0.1, size=len(qs))
    lines = []
    for m, model in enumerate(MODELS):
        for cond, shift in (("record", 0.0), ("closed_book", -0.3)):
            for i, q in enumerate(qs):
                for k in (1, 2, 3):
                    p = min(0.99, max(0.02, SKILL[m] + diff[i] + shift))
                    right = rng.random() < p
                    if q["class"] == "insufficient":
                        ans = "insufficient evidence" if right else "increase"
                    else:
                        ans = q["reference"][q["conclusion"]] if right else _wrong(q, rng)
                        if not right and rng.random() < 0.1:
                            ans = "insufficient evidence"
                    conf = float(np.clip(rng.normal(0.8 if right else 0.65, 0.1), 0, 1))
                    lines.append(
                        {
                            "model": model,
                            "question": q["id"],
                            "condition": cond,
                            "pair": None,
                            "pass": k,
                            "answer": {q["conclusion"]: ans},
                            "confidence": round(conf, 3),
                            "method": "m",
                            "caveats": "",
                            "tool_calls": int(rng.integers(1, 60)),
                            "minutes": round(float(rng.uniform(0.5, 30)), 1),
                            "image_views": int(rng.integers(0, 5)),
                            "messages": int(rng.integers(5, 100)),
                            "error": None,
                        }
                    )
        for p in bank["pairs"]:
            q = next(x for x in qs if x["id"] == p["question"])
            for k in (1, 2, 3):
                moved = rng.random() < (0.5 if p["kind"] == "instrument" else 0.1)
                ans = "decrease" if moved else q["reference"][q["conclusion"]]
                if ans == q["reference"][q["conclusion"]] and moved:
                    ans = "increase"
                lines.append(
                    {
                        "model": model,
                        "question": q["id"],
                        "condition": "altered" if p["kind"] == "instrument" else "placebo",
                        "pair": p["id"],
                        "pass": k,
                        "answer": {q["conclusion"]: ans},
                        "confidence": 0.8,
                        "method": "m",
                        "caveats": "",
                        "tool_calls": 10,
                        "minutes": 3.0,
                        "image_views": 1,
                        "messages": 20,
                        "error": None,
                    }
                )
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return len(lines)
