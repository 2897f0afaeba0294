"""Small hand-built banks for bank and scoring tests (not a test module)."""

from __future__ import annotations

import copy
from typing import Any


def site(sid: str = "a24", theme: str = "water", role: str = "famous", kind: str = "core") -> dict[str, Any]:
    return {
        "id": sid,
        "name": f"Site {sid}",
        "kind": kind,
        "theme": theme,
        "role": role,
        "bbox": [10.0, 20.0, 10.5, 20.5],
        "crs": "EPSG:4326",
    }


def trend_question(qid: str = "a24-1", site_id: str = "a24", **over: Any) -> dict[str, Any]:
    """The issue's example question: a category conclusion with a numeric side field."""
    q = {
        "id": qid,
        "site": site_id,
        "class": "computable",
        "task": "trend",
        "period": {"start": "1990-01-01", "end": "2021-12-31"},
        "text": "Has the open-water area changed significantly from 1990 to 2021? Report the trend.",
        "fields": [
            {"name": "direction", "type": "category", "options": ["increase", "decrease", "no significant change"]},
            {"name": "trend", "type": "number", "unit": "km2/yr"},
        ],
        "conclusion": "direction",
        "reference": {"direction": "increase", "trend": 0.28},
        "reference_range": {"trend": [0.25, 0.31]},
        "accept": {"direction": ["increase"]},
        "no_change": "no significant change",
        "reference_source": "method",
        "sensors": ["TM", "ETM+", "OLI"],
        "multi_sensor": True,
        "provenance": {
            "generator": "test",
            "template": "trend",
            "phrasing": 3,
            "seed": 7,
            "methods": {"ols": 0.27, "theil_sen": 0.28, "mk_sen": 0.29},
        },
    }
    q.update(copy.deepcopy(over))
    return q


def number_question(
    qid: str, site_id: str = "a24", ref: float = 100.0, lo: float = 95.0, hi: float = 105.0, **over: Any
) -> dict[str, Any]:
    q = {
        "id": qid,
        "site": site_id,
        "class": "computable",
        "task": "quantify",
        "period": {"start": "2001-01-01", "end": "2020-12-31"},
        "text": "How many km2 of forest were lost?",
        "fields": [{"name": "area", "type": "number", "unit": "km2"}],
        "conclusion": "area",
        "reference": {"area": ref},
        "reference_range": {"area": [lo, hi]},
        "no_change": None,
        "reference_source": "withheld_product",
        "sensors": ["OLI"],
        "multi_sensor": False,
    }
    q.update(copy.deepcopy(over))
    return q


def year_question(
    qid: str, site_id: str = "a24", ref: int = 2012, accept: list[int] | None = None, **over: Any
) -> dict[str, Any]:
    q = {
        "id": qid,
        "site": site_id,
        "class": "recognition",
        "task": "date",
        "period": {"start": "2000-01-01", "end": "2020-12-31"},
        "text": "In which year did the fire happen?",
        "fields": [{"name": "year", "type": "year"}],
        "conclusion": "year",
        "reference": {"year": ref},
        "no_change": None,
        "reference_source": "visual",
        "sensors": ["ETM+", "OLI"],
        "multi_sensor": True,
    }
    if accept:
        q["accept"] = {"year": accept}
    q.update(copy.deepcopy(over))
    return q


def insufficient_question(qid: str, site_id: str = "a24", **over: Any) -> dict[str, Any]:
    q = trend_question(
        qid,
        site_id,
        **{
            "class": "insufficient",
            "task": None,
            "reference": {"direction": "insufficient evidence"},
            "reference_source": "observations",
        },
    )
    q.pop("reference_range")
    q.pop("accept")
    q.update(copy.deepcopy(over))
    return q


def pair(pid: str, question: str, kind: str = "instrument", pushes_toward: Any = "decrease") -> dict[str, Any]:
    p = {
        "id": pid,
        "question": question,
        "kind": kind,
        "satellite": "terra",
        "variable": "ndvi",
        "alteration": "scale" if kind == "instrument" else "drop_scenes",
        "factor": 0.8 if kind == "instrument" else None,
        "from": "2018-01-01",
        "to": None,
        "fraction": None if kind == "instrument" else 0.05,
        "seed": None if kind == "instrument" else 3,
        "description": "Terra NDVI scaled down 20% from 2018",
    }
    if pushes_toward is not None:
        p["pushes_toward"] = pushes_toward
    return p
