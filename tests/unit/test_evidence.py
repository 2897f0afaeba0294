"""The evidence view of an item (issue 10): what a question carries, what `reviewer generate` fills per template,
the default for older questions, and the view saved with a review decision.

Expected views are worked out by hand from templates.json's stated rules (a water-area question compares its two
years in MNDWI; a burn question shows NBR the year before and after the burn; a trend question the chip strip over
its period) and composites.json's fixed default ranges (SWIR 0-0.4, MNDWI -0.6..0.6, NBR -0.5..0.8).
"""

from __future__ import annotations

import copy
import json

import bank_factory as bf
import pytest

from reviewer.bank import generate as G
from reviewer.bank import templates as T
from reviewer.bank.evidence import EvidenceView, Region, evidence_for
from reviewer.bank.io import BankContent, load_bank, write_bank
from reviewer.errors import SchemaError
from reviewer.record.stretch import Stretch
from reviewer.review import api
from reviewer.review.banks import import_bank
from reviewer.schemas import problems
from reviewer.store import Store

GEN_CFG = {"min_agreement": 0.75}
NBR_STRETCH = {
    "composite": "nbr",
    "channels": [{"low": -0.5, "high": 0.8, "gamma": 1.0}],
    "source": "fixed default",
    "colormap": "RdYlGn",
}


def test_a_partial_view_gets_the_composites_fixed_stretch_the_whole_site_and_round_trips():
    v = EvidenceView.from_json({"composite": "swir"})
    assert v.view == "single" and v.region == Region("site") and v.index is None
    assert [(c.low, c.high, c.gamma) for c in v.stretch.channels] == [(0.0, 0.4, 1.0)] * 3
    two = EvidenceView.from_json({"composite": "nbr", "dates": ["2003-07-14"], "periods": [[2005, 2006]]})
    assert two.view == "pair" and two.panels == ["2003-07-14", "2005-2006"]
    full = two.to_json()
    assert full["stretch"] == NBR_STRETCH and full["region"] == {"kind": "site"}
    assert EvidenceView.from_json(full) == two
    assert EvidenceView.from_json(json.loads(json.dumps(full))).to_json() == full
    # a stretch set by hand is kept as given
    manual = Stretch.default("nbr").with_channel(0, low=-0.2)
    kept = EvidenceView.from_json({"composite": "nbr", "stretch": manual.to_json()})
    assert kept.stretch.channels[0].low == -0.2 and kept.stretch.source == "manual"


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({}, "evidence"),
        ({"composite": "infrared"}, "evidence.composite"),
        ({"composite": "swir", "view": "pair", "periods": [[2001, 2001]]}, "evidence.view"),
        ({"composite": "swir", "view": "single", "periods": [[2001, 2001], [2002, 2002]]}, "evidence.view"),
        ({"composite": "swir", "dates": ["2020-02-30"]}, "evidence.dates.0"),
        ({"composite": "swir", "periods": [[2010, 2001]]}, "evidence.periods"),
        ({"composite": "swir", "region": {"kind": "quadrant", "quadrant": "north"}}, "evidence.region.quadrant"),
        ({"composite": "swir", "region": {"kind": "polygon", "coordinates": [[0, 0], [1, 1]]}}, "evidence.region"),
        ({"composite": "swir", "index": "evi"}, "evidence.index"),
        ({"composite": "swir", "stretch": NBR_STRETCH}, "evidence.stretch"),
        ({"composite": "swir", "zoom": 2}, "evidence"),
    ],
)
def test_a_bad_view_is_refused_naming_the_field(doc, field):
    with pytest.raises(SchemaError) as err:
        EvidenceView.from_json(doc)
    assert str(err.value.field).startswith(field)


def test_older_questions_without_evidence_still_validate_and_get_a_default_view():
    old = bf.trend_question()  # no evidence, template "trend" (not a templates.json name), task trend, 1990-2021
    assert "evidence" not in old and problems(old, "question") == []
    v = evidence_for(old)
    assert (v.composite, v.view, v.periods, v.index) == ("ndvi", "strip", ((1990, 2021),), "ndvi")
    pair = evidence_for(bf.trend_question(task="quantify"))
    assert (pair.composite, pair.view, pair.periods) == ("truecolor", "pair", ((1990, 1990), (2021, 2021)))
    # a question with a view keeps it, and the question format accepts it
    q = bf.trend_question(evidence={"composite": "mndwi", "periods": [[1990, 1990], [2021, 2021]]})
    assert problems(q, "question") == [] and evidence_for(q).composite == "mndwi"
    assert problems(bf.trend_question(evidence={"composite": "mndwi", "view": "fan"}), "question") != []


def test_a_bank_with_and_without_evidence_round_trips(tmp_path):
    with_view = bf.trend_question("a24-2", evidence=EvidenceView.from_json({"composite": "mndwi"}).to_json())
    write_bank(
        tmp_path / "b",
        BankContent("b", "1", [bf.trend_question(), with_view], [bf.site()], [], created="2026-12-01T00:00:00Z"),
    )
    bank = load_bank(tmp_path / "b")
    assert "evidence" not in bank.question("a24-1")
    assert bank.question("a24-2")["evidence"] == with_view["evidence"]


def _water(y1, y2):
    return G.Candidate(
        "quantify.water_area",
        {"y1": y1, "y2": y2},
        (y1, y2),
        sensors=["TM", "OLI"],
        methods={
            "area_start": {"otsu": 1.0, "mndwi0": 1.1, "ndwi0": 1.05},
            "area_end": {"otsu": 2.0, "mndwi0": 2.1, "ndwi0": 2.05},
            "direction": {"otsu": "up", "mndwi0": "up", "ndwi0": "up"},
        },
    )


def test_generation_fills_the_templates_view_deterministically():
    q, reason = G.finish(_water(1997, 2019), "s1", 1, 0, GEN_CFG)
    assert reason is None
    assert q["evidence"] == {
        "composite": "mndwi",
        "stretch": {
            "composite": "mndwi",
            "channels": [{"low": -0.6, "high": 0.6, "gamma": 1.0}],
            "source": "fixed default",
            "colormap": "RdBu",
        },
        "view": "pair",
        "periods": [[1997, 1997], [2019, 2019]],
        "region": {"kind": "site"},
        "index": "mndwi",
        # what the reviewer sees first: the methods' verdict and values beside the imagery
        "note": "direction 'up': 3 of 3 methods agree",
        "values": {
            "area_start": {"mndwi0": 1.1, "ndwi0": 1.05, "otsu": 1.0},
            "area_end": {"mndwi0": 2.1, "ndwi0": 2.05, "otsu": 2.0},
            "direction": {"mndwi0": "up", "ndwi0": "up", "otsu": "up"},
        },
    }
    assert problems(q, "question") == []
    again, _ = G.finish(_water(1997, 2019), "s1", 1, 0, GEN_CFG)
    assert again == q
    # an insufficient-evidence twin shows the same two years
    thin = _water(1998, 2008)
    thin.insufficient = {"clear_observations_per_year": {"1998": 1, "2008": 4}, "needed_per_year": 2}
    q2, _ = G.finish(thin, "s1", 2, 0, GEN_CFG)
    assert q2["class"] == "insufficient" and q2["evidence"]["periods"] == [[1998, 1998], [2008, 2008]]


def _burn(year, y1=1996, y2=2020):
    methods = {"year": {f"m{i}": year for i in range(4)}, "area": {f"m{i}": 0.15 for i in range(4)}}
    return G.Candidate("date.burn_year", {"y1": y1, "y2": y2, "dnbr": 0.44}, (y1, y2), methods=methods)


def test_a_burn_question_shows_nbr_the_year_before_and_after_the_burn():
    q, _ = G.finish(_burn(2004), "s1", 1, 0, GEN_CFG)
    ev = q["evidence"]
    assert (ev["composite"], ev["view"], ev["periods"], ev["index"]) == (
        "nbr",
        "pair",
        [[2003, 2003], [2005, 2005]],
        "nbr",
    )
    assert ev["stretch"] == NBR_STRETCH
    q2, _ = G.finish(_burn(2020), "s1", 2, 0, GEN_CFG)  # a burn in the last year: the after panel is that year
    assert q2["evidence"]["periods"] == [[2019, 2019], [2020, 2020]]


def _greenness(region):
    c = G.Candidate(
        "trend.greenness_trend",
        {"y1": 2001, "y2": 2013, "alpha": 0.05, "region": T.REGION_NAMES[region]},
        (2001, 2013),
        methods={"direction": {"a": "increase", "b": "increase", "c": "increase"}, "slope": {"a": 0.01, "b": 0.011}},
        extra={"region": region},
    )
    return c


def test_a_trend_question_shows_the_strip_over_its_period_and_the_region_it_names():
    q, _ = G.finish(_greenness("north-east"), "s1", 1, 0, GEN_CFG)
    ev = q["evidence"]
    assert (ev["composite"], ev["view"], ev["periods"], ev["index"]) == ("ndvi", "strip", [[2001, 2013]], "ndvi")
    assert ev["region"] == {"kind": "quadrant", "quadrant": "NE"}
    # the central square (40-60% of each side) of a 1000 m x 2000 m site with its west-south corner at (5000, 8000)
    q2, _ = G.finish(_greenness("centre"), "s1", 2, 0, GEN_CFG, site_bbox=(5000.0, 8000.0, 6000.0, 10000.0))
    ring = q2["evidence"]["region"]["coordinates"]
    assert q2["evidence"]["region"]["kind"] == "polygon"
    assert ring == [[5400.0, 9200.0], [5600.0, 9200.0], [5600.0, 8800.0], [5400.0, 8800.0], [5400.0, 9200.0]]
    # an older copy of the question without its view gets the same one back from its template and provenance
    old = {k: v for k, v in q2.items() if k != "evidence"}
    view = {k: v for k, v in q2["evidence"].items() if k not in ("note", "values")}  # generation's own additions
    assert evidence_for(old, site_bbox=(5000.0, 8000.0, 6000.0, 10000.0)).to_json() == view


def test_every_template_has_a_view_and_a_bad_one_is_refused_naming_the_field():
    assert all("evidence" in t for t in G.templates().values())
    doc = json.loads(T.TEMPLATES_PATH.read_text(encoding="utf-8"))
    broken = copy.deepcopy(doc)
    broken["templates"]["date.burn_year"]["evidence"]["composite"] = "thermal"
    with pytest.raises(SchemaError) as err:
        T.check_templates(broken)
    assert err.value.field == "templates.date.burn_year.evidence.composite"
    broken = copy.deepcopy(doc)
    del broken["templates"]["date.burn_year"]["evidence"]
    with pytest.raises(SchemaError) as err:
        T.check_templates(broken)
    assert err.value.field == "templates.date.burn_year.evidence"


def test_a_decisions_saved_view_is_the_full_evidence_view_and_a_bad_one_is_refused(tmp_path):
    store = Store(tmp_path / "review.sqlite")
    api.add_user(store, "mia", "maintainer")
    api.add_user(store, "ann", "annotator", by="mia")
    qs = [bf.trend_question(f"q{i}") for i in range(2)]
    write_bank(tmp_path / "bank", BankContent("rb", "1", qs, [bf.site()], [], created="2026-12-01T00:00:00Z"))
    import_bank(store, tmp_path / "bank", user="mia")
    api.assign(store, "rb", annotators=["ann"], k=1, seed=1, user="mia")
    with pytest.raises(SchemaError, match="pair view cannot show 1"):
        api.decide(
            store,
            "rb/q0",
            api.Decision("accept", view={"composite": "nbr", "view": "pair", "periods": [[2003, 2003]]}),
            user="ann",
        )
    assert store.db.execute("SELECT count(*) FROM decisions").fetchone()[0] == 0
    api.decide(
        store,
        "rb/q0",
        api.Decision("accept", view={"composite": "nbr", "periods": [[2003, 2003], [2005, 2005]]}),
        user="ann",
    )
    (saved,) = store.db.execute("SELECT view FROM decisions").fetchone()
    assert json.loads(saved) == {
        "composite": "nbr",
        "stretch": NBR_STRETCH,
        "view": "pair",
        "periods": [[2003, 2003], [2005, 2005]],
        "region": {"kind": "site"},
    }
