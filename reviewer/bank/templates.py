"""templates.json read once and checked: the question templates, the consistency rules with their messages and
the share of methods that must agree, the sensor-break settings, and the names of the regions a template
speaks of. Below the generator (reviewer.bank.generate), the evidence views and the consistency checks, which
all read it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from reviewer.errors import SchemaError
from reviewer.schemas import validate

TEMPLATES_PATH = Path(__file__).with_name("templates.json")
REGION_NAMES = {
    "north-west": "north-west quadrant",
    "north-east": "north-east quadrant",
    "south-west": "south-west quadrant",
    "south-east": "south-east quadrant",
    "centre": "central square (40-60% of the site's width and height)",
    "site": "whole site",
}


def check_templates(doc: dict[str, Any], *, path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """The templates of a templates.json document, checked against schemas/templates.schema.json and for what a
    schema cannot say: the conclusion names a field, a sweep named like a threshold includes its value, and the
    evidence names a composite and an index of composites.json."""
    validate(doc, "templates", path=path)
    from reviewer.record.stretch import composites

    for name, tpl in doc["templates"].items():
        ev = tpl["evidence"]
        for key, known in (("composite", list(composites())), ("index", index_names())):
            if key in ev and ev[key] not in known:
                raise SchemaError(
                    f"evidence {key} {ev[key]!r} is not one of {', '.join(known)}",
                    path=path,
                    field=f"templates.{name}.evidence.{key}",
                )
        names = {f["name"] for f in tpl["fields"]}
        cons = tpl.get("consistency", {})
        side = cons.get("one_side", {})
        used = [*cons.get("bounds", {}), *cons.get("max_half_width", {}), *side.get("of", [])]
        used += [side["field"]] if "field" in side else []
        for f in used:
            if f not in names:
                raise SchemaError(
                    f"consistency names {f!r}, not a field", path=path, field=f"templates.{name}.consistency"
                )
        if tpl["conclusion"] not in {f["name"] for f in tpl["fields"]}:
            raise SchemaError(
                f"conclusion {tpl['conclusion']!r} is not one of the fields", path=path, field=f"templates.{name}"
            )
        for key, values in tpl.get("sweeps", {}).items():
            stated = tpl["thresholds"].get(key)
            if isinstance(stated, int | float) and isinstance(values, list) and stated not in values:
                raise SchemaError(
                    f"sweep {key} {values} leaves out the stated threshold {stated}",
                    path=path,
                    field=f"templates.{name}.sweeps.{key}",
                )
    return doc["templates"]


@cache
def templates_doc() -> dict[str, Any]:
    """templates.json whole (templates, consistency rules, the sensor-break settings), validated on load."""
    doc = json.loads(TEMPLATES_PATH.read_text(encoding="utf-8"))
    check_templates(doc, path=TEMPLATES_PATH)
    return doc


def templates() -> dict[str, dict[str, Any]]:
    """The templates of templates.json by name."""
    return templates_doc()["templates"]


def rules_doc() -> dict[str, dict[str, Any]]:
    """The consistency rules of templates.json by reason code (reviewer.bank.consistency)."""
    return templates_doc()["consistency_rules"]


def methods_agree_share() -> float:
    """The share of the methods that must agree on a categorical or date conclusion (seed 001: 75%)."""
    return float(rules_doc()["methods_agree"]["min_share"])


def index_names() -> list[str]:
    """Indices a trajectory can plot: the single-index composites of composites.json."""
    from reviewer.record.stretch import composites

    return [name for name, spec in composites().items() if "index" in spec]
