"""templates.json is validated on load (schemas/templates.schema.json) and its sweeps are read by the rules."""

from __future__ import annotations

import copy
import json

import pytest

from reviewer.bank import generate as G
from reviewer.bank.model import MIN_RELATIVE_HALF_WIDTH, min_range, range_problem
from reviewer.errors import SchemaError


def _doc() -> dict:
    return json.loads(G.TEMPLATES_PATH.read_text(encoding="utf-8"))


def test_templates_load_valid_and_every_compute_rule_exists():
    tpls = G.templates()
    assert tpls
    assert {t["compute"] for t in tpls.values()} <= set(G.COMPUTE)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda t: t.pop("phrasings"), "templates.date.burn_year.phrasings"),
        (lambda t: t.update(task="guess"), "templates.date.burn_year.task"),
        (
            lambda t: t["fields"].append({"name": "kind", "type": "category"}),
            "templates.date.burn_year.fields.2.options",
        ),
        (lambda t: t.update(conclusion="month"), "templates.date.burn_year"),
        (lambda t: t.update(extra=1), "templates.date.burn_year.extra"),
    ],
)
def test_a_broken_template_is_refused_naming_the_field(edit, field):
    doc = _doc()
    edit(doc["templates"]["date.burn_year"])
    with pytest.raises(SchemaError) as err:
        G.check_templates(doc, path="templates.json")
    assert err.value.field == field
    assert "templates.json" in str(err.value)


def test_a_sweep_must_include_the_stated_threshold():
    doc = copy.deepcopy(_doc())
    doc["templates"]["attribute.loss_cause"]["sweeps"]["loss_drop"] = [0.25, 0.35]
    with pytest.raises(SchemaError, match="leaves out the stated threshold 0.3"):
        G.check_templates(doc)


def test_the_range_rule_is_one_rule():
    for ref, lo, hi in [(10.0, 10.0, 10.0), (-3.0, -3.1, -2.0), (0.2, 0.0, 0.205), (7.0, 1.0, 9.0)]:
        lo2, hi2 = min_range(ref, lo, hi)
        assert lo2 <= lo and hi2 >= hi
        assert range_problem(ref, lo2, hi2) is None
    assert min_range(10.0, 10.0, 10.0) == (10.0 - 10 * MIN_RELATIVE_HALF_WIDTH, 10.0 + 10 * MIN_RELATIVE_HALF_WIDTH)
    assert range_problem(10.0, 9.6, 10.5) is not None
