"""Judging the conclusion field of one answer against a question's reference.

One precomputed judge per question, so judging 18,000 runs is a dictionary lookup and a comparison each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from reviewer.bank.model import conclusion_field, is_insufficient, norm_text, value_problem


@dataclass(frozen=True)
class Verdict:
    """right: counts as right; abstained: answered insufficient evidence; valid: a value of the field type."""

    right: bool
    abstained: bool
    valid: bool
    reason: str | None = None


def value_key(value: Any) -> Any:
    """A hashable, comparable form of a conclusion value (strings normalised, years as a sorted tuple)."""
    if isinstance(value, str):
        return norm_text(value)
    if isinstance(value, list):
        return tuple(sorted({int(v) for v in value}))
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    return value


class Judge:
    """Judges answers to one question (reference, accept list and range fixed at construction)."""

    def __init__(self, question: dict[str, Any]) -> None:
        self.question = question
        self.name = question["conclusion"]
        self.field = conclusion_field(question)
        reference = question["reference"][self.name]
        self.reference_insufficient = is_insufficient(reference)
        self.range: tuple[float, float] | None = None
        if self.field.type == "number" and not self.reference_insufficient:
            lo, hi = question["reference_range"][self.name]
            self.range = (float(lo), float(hi))
        accepted = [reference, *(question.get("accept") or {}).get(self.name, [])]
        self.right_keys = frozenset(value_key(v) for v in accepted if not is_insufficient(v))
        self.reference_key = value_key(reference)
        no_change = question.get("no_change")
        self.no_change_key = None if no_change is None else value_key(no_change)

    @property
    def reference_is_no_change(self) -> bool:
        """True when the reference conclusion is the question's no-change value."""
        return self.no_change_key is not None and self.no_change_key in self.right_keys

    def __call__(self, answer: dict[str, Any] | None) -> Verdict:
        if not isinstance(answer, dict) or self.name not in answer or answer[self.name] is None:
            return Verdict(False, False, False, f"no value for the conclusion field {self.name!r}")
        value = answer[self.name]
        if is_insufficient(value):
            return Verdict(self.reference_insufficient, True, True)
        problem = value_problem(self.field, value, lenient_case=True)
        if problem:
            return Verdict(False, False, False, problem)
        if self.reference_insufficient:
            return Verdict(False, False, True)
        if self.range is not None:
            lo, hi = self.range
            return Verdict(lo <= float(value) <= hi, False, True)
        return Verdict(value_key(value) in self.right_keys, False, True)
