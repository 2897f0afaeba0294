"""templates.json is validated on load (schemas/templates.schema.json) and its sweeps are read by the rules."""

from __future__ import annotations

import copy
import json

import pytest

from reviewer.bank import generate as G
from reviewer.bank import templates as T
from reviewer.bank.model import MIN_RELATIVE_HALF_WIDTH, min_range, range_problem
from reviewer.errors import SchemaError


def _doc() -> dict:
    return json.loads(T.TEMPLATES_PATH.read_text(encoding="utf-8"))


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
        T.check_templates(doc, path="templates.json")
    assert err.value.field == field
    assert "templates.json" in str(err.value)


def test_a_sweep_must_include_the_stated_threshold():
    doc = copy.deepcopy(_doc())
    doc["templates"]["attribute.loss_cause"]["sweeps"]["loss_drop"] = [0.25, 0.35]
    with pytest.raises(SchemaError, match="leaves out the stated threshold 0.3"):
        T.check_templates(doc)


def test_the_range_rule_is_one_rule():
    for ref, lo, hi in [(10.0, 10.0, 10.0), (-3.0, -3.1, -2.0), (0.2, 0.0, 0.205), (7.0, 1.0, 9.0)]:
        lo2, hi2 = min_range(ref, lo, hi)
        assert lo2 <= lo and hi2 >= hi
        assert range_problem(ref, lo2, hi2) is None
    assert min_range(10.0, 10.0, 10.0) == (10.0 - 10 * MIN_RELATIVE_HALF_WIDTH, 10.0 + 10 * MIN_RELATIVE_HALF_WIDTH)
    assert range_problem(10.0, 9.6, 10.5) is not None


#: How a phrasing may state each unit of a number field (what an expert reads as that unit).
UNIT_WORDS = {
    "km2": ("km2",),
    "km2/yr": ("km2/yr", "km2 per year"),
    "NDVI/yr": ("NDVI units per year",),
    "days": ("days",),
    "%": ("%", "percent"),
    "% of site": ("% of the site", "percent of the site"),
    "years": ("years",),
}
#: Number fields that can be negative: the phrasing must say which way is positive.
SIGNED = {"slope", "change"}
SIGN_WORDS = ("negative", "positive", "minus")


def _phrasings():
    for name, tpl in G.templates().items():
        for k, text in enumerate(tpl["phrasings"]):
            yield pytest.param(name, tpl, text, id=f"{name}-{k}")


@pytest.mark.parametrize(("name", "tpl", "text"), list(_phrasings()))
def test_every_phrasing_reads_as_an_expert_would_accept_it(name, tpl, text):
    """Rendered with sample parameters: the option words appear verbatim in their natural order (the answer
    field is where they are shuffled), every number the answer gives carries its unit, and a signed number
    its sign convention."""
    import string

    placeholders = {p for _, p, _, _ in string.Formatter().parse(text) if p}
    category = next((f for f in tpl["fields"] if f["type"] == "category" and f["name"] == tpl["conclusion"]), None)
    category = category or next((f for f in tpl["fields"] if f["type"] == "category"), None)
    natural = None
    params = {p: f"<{p}>" for p in placeholders}
    if category is not None:
        opts = category["options"]
        natural = ", ".join(opts[:-1]) + " or " + opts[-1]
        params["options"] = natural
    rendered = G._fill(text, {**params, **tpl["thresholds"]})
    assert "{" not in rendered and "}" not in rendered
    if category is not None:
        assert "options" in placeholders, f"{name}: the options of {category['name']} are not named"
        assert natural in rendered
    for f in tpl["fields"]:
        if f["type"] == "number":
            assert any(w in rendered for w in UNIT_WORDS[f["unit"]]), (f["name"], f["unit"], rendered)
            if f["name"] in SIGNED:
                assert any(w in rendered for w in SIGN_WORDS), (f["name"], rendered)


def test_generated_questions_name_options_in_natural_order_and_shuffle_the_field(demo):
    natural_of = {
        n: {f["name"]: f["options"] for f in t["fields"] if f["type"] == "category"} for n, t in G.templates().items()
    }
    shuffled = 0
    checked = 0
    for q in demo["bank"].questions:
        declared = natural_of[q["provenance"]["template"]].get(q["conclusion"])
        if declared is None or q["class"] == "insufficient":
            continue
        field = next(f for f in q["fields"] if f["name"] == q["conclusion"])
        assert sorted(field["options"]) == sorted(declared)
        assert ", ".join(declared[:-1]) + " or " + declared[-1] in q["text"], q["text"]
        checked += 1
        shuffled += field["options"] != declared
    assert checked >= 5 and shuffled >= 1
