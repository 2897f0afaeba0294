"""Judging the conclusion field, one rule per field type (expected verdicts worked out by hand)."""

import bank_factory as bf
import pytest

from reviewer.scoring.judge import Judge

TREND = Judge(bf.trend_question())  # reference increase, accept [increase]
AREA = Judge(bf.number_question("q", ref=100, lo=95, hi=105))
YEAR_TIE = Judge(bf.year_question("y", ref=2012, accept=[2014]))  # "2012 or 2014"
INSUFF = Judge(bf.insufficient_question("i"))


@pytest.mark.parametrize(
    ("answer", "right"),
    [
        ("increase", True),
        ("  Increase ", True),
        ("INCREASE", True),
        ("decrease", False),
        ("no significant change", False),
    ],
)
def test_category_is_case_and_whitespace_insensitive(answer, right):
    v = TREND({"direction": answer})
    assert v.right is right and v.valid and not v.abstained


@pytest.mark.parametrize(("answer", "right"), [(95, True), (105, True), (100.0, True), (94.99, False), (105.01, False)])
def test_number_is_right_inside_the_range_edges_included(answer, right):
    assert AREA({"area": answer}).right is right


def test_a_string_is_not_a_number():
    v = AREA({"area": "100"})
    assert not v.right and not v.valid


def test_accept_ties_count_as_right():
    assert YEAR_TIE({"year": 2014}).right and YEAR_TIE({"year": 2012}).right
    assert not YEAR_TIE({"year": 2013}).right


def test_years_are_compared_as_sets():
    j = Judge(bf.year_question("ys", fields=[{"name": "year", "type": "years"}], reference={"year": [2003, 2012]}))
    assert j({"year": [2012, 2003]}).right
    assert not j({"year": [2003]}).right


def test_month_and_quadrant():
    m = Judge(bf.year_question("m", fields=[{"name": "year", "type": "month"}], reference={"year": 7}))
    assert m({"year": 7}).right and not m({"year": 8}).right and not m({"year": 13}).valid
    q = Judge(bf.year_question("q", fields=[{"name": "year", "type": "quadrant"}], reference={"year": "north-west"}))
    assert q({"year": "North-West"}).right and not q({"year": "south-east"}).right


def test_insufficient_evidence_is_right_only_on_insufficient_questions():
    on_insufficient = INSUFF({"direction": "Insufficient evidence"})
    on_answerable = TREND({"direction": "insufficient evidence"})
    assert on_insufficient.right and on_insufficient.abstained
    assert not on_answerable.right and on_answerable.abstained and on_answerable.valid
    assert not INSUFF({"direction": "increase"}).right


def test_a_missing_conclusion_is_invalid():
    assert not TREND({"trend": 0.3}).valid and not TREND(None).valid
