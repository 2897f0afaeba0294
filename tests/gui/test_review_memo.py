"""The review dock works out each question's evidence view once (its schema check ran for every upcoming item at
every item change): what it keeps must never stand in for another question's view, e.g. a question corrected into
a new version with another stretch, and a broken view is refused every time it is asked for."""

from __future__ import annotations

import copy

import pytest

pytestmark = pytest.mark.gui


@pytest.fixture
def question(demo_bank) -> dict:
    from reviewer.bank.io import load_bank

    return next(q for q in load_bank(demo_bank).questions if q.get("evidence"))


def test_a_changed_question_gets_its_own_view(question):
    from reviewer.app.review_evidence import ViewMemo

    memo = ViewMemo()
    low, high = (
        question["evidence"]["stretch"]["channels"][0]["low"],
        question["evidence"]["stretch"]["channels"][0]["high"],
    )
    first = memo.view(question)
    assert (first.stretch.channels[0].low, first.stretch.channels[0].high) == (low, high)
    changed = copy.deepcopy(question)
    changed["evidence"]["stretch"]["channels"][0]["low"] = low - 0.25
    view = memo.view(changed)
    assert view.stretch.channels[0].low == pytest.approx(low - 0.25)
    assert memo.view(question).stretch.channels[0].low == low  # the first question still shows its own stretch


def test_a_broken_view_is_refused_each_time(question):
    from reviewer.app.review_evidence import ViewMemo
    from reviewer.errors import ReviewerError

    memo = ViewMemo()
    broken = copy.deepcopy(question)
    broken["evidence"]["composite"] = "no-such-composite"
    for _ in range(2):
        with pytest.raises(ReviewerError):
            memo.view(broken)


def test_sensor_filter_keeps_what_the_record_has():
    """The stack shows the question's sensors the site's record has; all of the record's sensors is no filter."""
    from reviewer.app.review_evidence import sensor_filter

    record = frozenset({"TM", "ETM+", "OLI", "MODIS"})
    assert sensor_filter(record, ("TM", "ETM+", "OLI")) == ("TM", "ETM+", "OLI")
    assert sensor_filter(record, ("OLI", "S2A")) == ("OLI",)
    assert sensor_filter(record, ("MODIS", "OLI", "TM", "ETM+")) == ()
