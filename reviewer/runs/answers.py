"""The submit tool's input: its JSON schema built from a question's answer fields plus confidence, method and
caveats, and the check of a submission, which judges the answer as `reviewer score` will (the field types of
reviewer.bank.model's value_problem, with the scorer's
lenient case, for every field, the conclusion included), so a run never reaches the scorer with an
answer it would count invalid while the agent could still have corrected it.
"""

from __future__ import annotations

import math
from typing import Any

from reviewer.bank.model import INSUFFICIENT, QUADRANTS, Field, fields_of, value_problem

EXTRA = ("confidence", "method", "caveats")


def _field_schema(f: Field) -> dict[str, Any]:
    """JSON schema of one answer field's value; every field also takes the text 'insufficient evidence'."""
    insufficient = {"type": "string", "enum": [INSUFFICIENT]}
    if f.type == "number":
        value: dict[str, Any] = {"type": "number", "description": f"a number in {f.unit}"}
    elif f.type == "category":
        return {"type": "string", "enum": [*(f.options or ()), INSUFFICIENT], "description": "one of the options"}
    elif f.type == "quadrant":
        return {"type": "string", "enum": [*QUADRANTS, INSUFFICIENT], "description": "the quadrant of the site"}
    elif f.type == "year":
        value = {"type": "integer", "description": "a four-digit year"}
    elif f.type == "years":
        value = {"type": "array", "items": {"type": "integer"}, "description": "a list of four-digit years"}
    elif f.type == "month":
        value = {"type": "integer", "description": "a month, 1-12"}
    else:
        return {"type": "string", "description": "text"}
    return {"anyOf": [value, insufficient], "description": value.pop("description")}


def submit_parameters(question: dict[str, Any]) -> dict[str, Any]:
    """The submit tool's parameters (a JSON schema object): the answer fields, then confidence, method, caveats."""
    props: dict[str, Any] = {}
    for f in fields_of(question).values():
        props[f.name] = _field_schema(f)
        if f.name == question["conclusion"]:
            props[f.name]["description"] += " (the conclusion field, which is scored)"
    props["confidence"] = {"type": "number", "description": "your confidence, 0 to 1, that the conclusion is right"}
    props["method"] = {"type": "string", "description": "a short summary of the method you used"}
    props["caveats"] = {"type": "string", "description": "what limits your answer"}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


def submission_problems(question: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """Why a submission is not valid (empty when it is), in words the agent can act on."""
    fields = fields_of(question)
    out = []
    for name in given:
        if name not in fields and name not in EXTRA:
            out.append(f"{name}: not an answer field (the fields are {', '.join(fields)})")
    for name, f in fields.items():
        if name not in given or given[name] is None:
            out.append(f'{name}: missing (give a value or "{INSUFFICIENT}")')
            continue
        problem = value_problem(f, given[name], lenient_case=True)
        if problem:
            out.append(f"{name}: {problem}")
    c = given.get("confidence")
    if isinstance(c, bool) or not isinstance(c, int | float) or not math.isfinite(c) or not 0 <= c <= 1:
        out.append(f"confidence: expected a number from 0 to 1, got {c!r}")
    for name in ("method", "caveats"):
        if not isinstance(given.get(name), str) or not given[name].strip():
            out.append(f"{name}: expected a short text")
    return out


def as_run_answer(question: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The run record's answer: the answer fields only, years as integers."""
    out = {}
    for name, f in fields_of(question).items():
        v = given.get(name)
        if f.type in ("year", "month") and isinstance(v, float) and v.is_integer():
            v = int(v)
        if f.type == "years" and isinstance(v, list):
            v = [int(x) for x in v]
        out[name] = v
    return out
