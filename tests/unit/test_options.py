"""Options as objects: a generation's settings and a decision's fields are checked when they are made, and a
decision of one kind refuses the fields of another (nothing is written)."""

from __future__ import annotations

import dataclasses

import pytest
from test_review_workflow import _store

from reviewer.bank.options import GenerationOptions
from reviewer.errors import BankError, ReviewError
from reviewer.review import api


def test_generation_options_refuse_an_unknown_task_or_sensor_break_mode_and_do_not_change():
    with pytest.raises(BankError, match="floods"):
        GenerationOptions(tasks=["trend", "floods"])
    with pytest.raises(BankError, match="sometimes"):
        GenerationOptions(sensor_break="sometimes")
    opts = GenerationOptions(tasks=["trend"], seed=3)
    assert opts.tasks == ("trend",)  # a caller's list cannot change the options afterwards
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.seed = 4  # type: ignore[misc]


def test_the_generation_report_states_the_three_quarter_agreement_rule(demo):
    import json

    # seed 001: "categorical and date conclusions require at least 75% of methods to agree"
    report = json.loads((demo["out"] / "generation_report.json").read_text())
    assert report["config"]["min_agreement"] == 0.75


def test_a_decision_refuses_the_fields_of_the_other_stage_and_writes_nothing(tmp_path):
    store = _store(tmp_path, n=2)
    api.assign(store, "rb", annotators=["ann", "bob"], k=2, seed=1, user="mia")
    events = store.db.execute("SELECT count(*) FROM events").fetchone()[0]
    with pytest.raises(ReviewError, match="a stage-1 decision takes no rationale"):
        api.decide(store, "q000", api.Decision("accept", rationale="looks right"), user="ann")
    with pytest.raises(ReviewError, match="an adjudication takes no comment, seconds"):
        api.adjudicate(store, "q000", api.Decision("accept", comment="x", seconds=3.0, rationale="ok"), user="eve")
    assert store.db.execute("SELECT count(*) FROM decisions").fetchone()[0] == 0
    assert store.db.execute("SELECT count(*) FROM events").fetchone()[0] == events
    # the same accept as a stage-1 decision is saved
    out = api.decide(store, "q000", api.Decision("accept", comment="looks right"), user="ann")
    assert out["verdict"] == "accept"
