"""The generation rules the seeds fix, each pinned by hand so that a changed definition fails a test.

- A categorical or date conclusion drawn from several methods needs at least 75% of them to agree
  (seed 001: "categorical and date conclusions require at least 75% of methods to agree"; DESIGN.md).
- The Mann-Kendall Z has the continuity correction (S - 1 for S > 0, S + 1 for S < 0), in the per-pixel
  cube as test_methods checks it for one series.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reviewer.bank import consistency
from reviewer.bank import methods as M


def test_a_conclusion_needs_three_quarters_of_the_methods():
    # 3 of 4 methods say 2001: 75% -> kept; 5 of 7: 71% -> no conclusion; 2 of 3: 67% -> none
    assert M.combine_votes({"a": 2001, "b": 2001, "c": 2001, "d": 2002}) == (2001, 0.75)
    five_of_seven = {k: 2001 for k in "abcde"} | {"f": 2002, "g": 2003}
    value, share = M.combine_votes(five_of_seven)
    assert value is None and share == pytest.approx(5 / 7)


def _method_question(votes: dict[str, str], reference: str) -> dict:
    return {
        "reference_source": "method",
        "conclusion": "cause",
        "fields": [{"name": "cause", "type": "category", "choices": ["fire", "harvest", "flood"]}],
        "reference": {"cause": reference},
        "provenance": {"methods": {"cause": votes}},
    }


def test_a_reviewed_reference_given_by_five_of_seven_methods_breaks_the_agreement_rule():
    five = {k: "fire" for k in "abcde"} | {"f": "harvest", "g": "flood"}
    codes = [code for code, _ in consistency.problems(_method_question(five, "fire"))]
    assert codes == ["methods_agree"]
    six = {k: "fire" for k in "abcdef"} | {"g": "flood"}  # 86%
    assert consistency.problems(_method_question(six, "fire")) == []
    three_of_four = {"a": "fire", "b": "fire", "c": "fire", "d": "flood"}  # exactly 75%
    assert consistency.problems(_method_question(three_of_four, "fire")) == []


def test_per_pixel_mann_kendall_has_the_continuity_correction():
    # strictly increasing, n = 5: S = 10, var = 5*4*15/18 = 50/3, Z = (10 - 1)/sqrt(50/3) = 2.2045, p = 0.0275;
    # without the correction Z would be 10/sqrt(50/3) = 2.449 and p = 0.0143
    years = np.arange(2000, 2005)
    rising = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    r = M.pixel_trends(years, np.stack([rising, -rising], axis=1), min_obs=3)
    expected = 2 * stats.norm.sf(9 / math.sqrt(50 / 3))
    assert expected == pytest.approx(0.0275, abs=5e-4)
    assert r["mk_p"] == pytest.approx([expected, expected], rel=1e-9)
