"""Typed helpers of the question model: field types, the abstention value, value validity, range rule.

Kept free of I/O so the bank writer, the review workflow and the scorer share one definition of what a
valid value of each field type is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Every field accepts this value; it is the reference conclusion of class-insufficient questions.
INSUFFICIENT = "insufficient evidence"

FIELD_TYPES = ("number", "category", "year", "years", "month", "quadrant", "text")
QUADRANTS = ("north-west", "north-east", "south-west", "south-east")
CLASSES = ("computable", "recognition", "insufficient")
TASKS = (
    "quantify",
    "trend",
    "date",
    "compare",
    "regional_statistics",
    "attribute",
    "anomaly_climate",
    "detect",
    "season",
    "recovery",
)
REFERENCE_SOURCES = ("method", "record_product", "withheld_product", "visual", "observations")
#: Landsat sensor names as written in a question's `sensors`; two or more make it multi-sensor.
LANDSAT_SENSORS = frozenset({"MSS", "TM", "ETM+", "OLI", "OLI-2"})

#: A reference range must reach at least this fraction of |reference| on each side.
MIN_RELATIVE_HALF_WIDTH = 0.05
#: Float slack when checking the +-5% rule, so a range written as exactly ref*(1 +- 0.05) passes.
_EPS = 1e-9

YEAR_MIN, YEAR_MAX = 1900, 2100


@dataclass(frozen=True)
class Field:
    """One answer field of a question."""

    name: str
    type: str
    unit: str | None = None
    options: tuple[str, ...] | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Field:
        options = d.get("options")
        return cls(d["name"], d["type"], d.get("unit"), tuple(options) if options is not None else None)


def norm_text(value: str) -> str:
    """Case-insensitive, whitespace-trimmed form used to compare strings (categories, quadrants)."""
    return " ".join(value.split()).casefold()


def is_insufficient(value: Any) -> bool:
    """True for 'insufficient evidence' in any case or spacing."""
    return isinstance(value, str) and norm_text(value) == INSUFFICIENT


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_int_like(value: Any) -> bool:
    """Integers, and floats with an integral value (2012.0), but never bools or strings."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


def value_problem(field: Field, value: Any, *, lenient_case: bool = False) -> str | None:
    """Why `value` is not a valid value of `field`, or None when it is.

    Bank data is checked strictly (a category value must be one of the options as written); answers
    are checked with `lenient_case=True` (case and surrounding whitespace ignored), as the scorer judges them.
    """
    if is_insufficient(value) and (lenient_case or value == INSUFFICIENT):
        return None
    t = field.type
    if t == "number":
        return None if _is_number(value) else f"expected a number, got {value!r}"
    if t == "category":
        if not isinstance(value, str):
            return f"expected one of the options {list(field.options or ())}, got {value!r}"
        options = field.options or ()
        ok = norm_text(value) in {norm_text(o) for o in options} if lenient_case else value in options
        return None if ok else f"{value!r} is not one of the options {list(options)}"
    if t == "year":
        if _is_int_like(value) and YEAR_MIN <= value <= YEAR_MAX:
            return None
        return f"expected a year ({YEAR_MIN}-{YEAR_MAX}), got {value!r}"
    if t == "years":
        if isinstance(value, list) and all(_is_int_like(v) and YEAR_MIN <= v <= YEAR_MAX for v in value):
            if len(set(value)) != len(value) and not lenient_case:
                return f"years must not repeat: {value!r}"
            return None
        return f"expected a list of years, got {value!r}"
    if t == "month":
        return None if _is_int_like(value) and 1 <= value <= 12 else f"expected a month 1-12, got {value!r}"
    if t == "quadrant":
        if isinstance(value, str):
            ok = norm_text(value) in QUADRANTS if lenient_case else value in QUADRANTS
            if ok:
                return None
        return f"expected one of {list(QUADRANTS)}, got {value!r}"
    if t == "text":
        return None if isinstance(value, str) else f"expected text, got {value!r}"
    return f"unknown field type {t!r}"


def is_valid_value(field: Field, value: Any, *, lenient_case: bool = False) -> bool:
    """Convenience wrapper of value_problem."""
    return value_problem(field, value, lenient_case=lenient_case) is None


def min_range(reference: float, lo: float, hi: float) -> tuple[float, float]:
    """[lo, hi] widened, where needed, to the +-5% of `reference` the range rule asks for (range_problem)."""
    half = MIN_RELATIVE_HALF_WIDTH * abs(reference)
    return min(lo, reference - half), max(hi, reference + half)


def range_problem(reference: float, lo: float, hi: float) -> str | None:
    """Why [lo, hi] is not an acceptable reference range for `reference`, or None.

    The range must contain the reference and span at least +-5% of it; for a reference of 0 the
    range needs an explicit absolute floor, i.e. a width above zero.
    """
    if not (_is_number(lo) and _is_number(hi)):
        return "range bounds must be finite numbers"
    if lo > hi:
        return f"range [{lo}, {hi}] has its lower bound above its upper bound"
    if not lo <= reference <= hi:
        return f"range [{lo}, {hi}] does not contain the reference {reference}"
    half = MIN_RELATIVE_HALF_WIDTH * abs(reference)
    if reference == 0:
        if hi <= lo:
            return "range of a zero reference needs an explicit absolute floor (a width above 0)"
        return None
    slack = _EPS * max(1.0, abs(reference))
    if lo > reference - half + slack or hi < reference + half - slack:
        return (
            f"range [{lo}, {hi}] is narrower than +-{MIN_RELATIVE_HALF_WIDTH:.0%} of the reference {reference} "
            f"(needs at most {reference - half:g} and at least {reference + half:g})"
        )
    return None


def multi_sensor_of(sensors: list[str]) -> bool:
    """Multi-sensor when the period spans two or more Landsat sensors."""
    return len(LANDSAT_SENSORS.intersection(sensors)) >= 2


def fields_of(question: dict[str, Any]) -> dict[str, Field]:
    """Fields of a question by name (in question order)."""
    return {f["name"]: Field.from_dict(f) for f in question.get("fields", [])}


def conclusion_field(question: dict[str, Any]) -> Field:
    """The field the question is scored on."""
    return fields_of(question)[question["conclusion"]]
