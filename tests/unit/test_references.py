"""References a reviewer can trust (issue 28): generation on a sparse record (2 scenes a year, cloudy years)
finishes without NaN or numpy noise, and every template copes with a record whose pixels are all missing.

The sparse site is one the issue reports the crash on: 64 px, seed 2, 2012-2021, 2 scenes a year (its thin
first year also made "in 2012 and in 2012")."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from reviewer.bank.model import INSUFFICIENT
from reviewer.bank.options import GenerationOptions


@pytest.fixture(scope="session")
def sparse(tmp_path_factory):
    """A sparse demo site (seed 2) and its candidate bank, generated with every warning turned into an error."""
    from reviewer.bank.generate import generate
    from reviewer.bank.io import load_bank
    from reviewer.record.synthetic import make_demo_site

    site = make_demo_site(
        tmp_path_factory.mktemp("sparse") / "site", seed=2, size=64, start=2012, end=2021, scenes_per_year=2
    )
    out = site.parent / "candidates"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        report = generate(site, out, GenerationOptions(seed=0))
    return {"site": site, "out": out, "report": report, "bank": load_bank(out)}


def test_sparse_record_generates_a_bank_without_nan(sparse):
    assert sparse["bank"].questions
    for f in sorted(sparse["out"].iterdir()):
        if f.suffix in (".json", ".jsonl"):
            text = f.read_text()
            assert "NaN" not in text and "Infinity" not in text, f.name
            for line in text.splitlines() if f.suffix == ".jsonl" else [text]:
                json.loads(line, parse_constant=lambda c, name=f.name: pytest.fail(f"{name} holds {c}"))


def _all_missing(series):
    """The series with every pixel value of every year, scene and coarse product missing (an all-cloud record)."""
    series.composites = {
        name: np.full((len(series.years), *series.shape), np.nan, np.float32) for name in list(series.composites)
    }
    for t in range(len(series.nbr_dates)):
        series.store.put(("nbr", t), np.full(series.shape, np.nan, np.float16))
    for d in series.coarse.values():
        d["gs"] = np.full_like(np.asarray(d["gs"], np.float32), np.nan)
    series.crop_ndvi = {k: [(day, float("nan")) for day, _ in v] for k, v in series.crop_ndvi.items()}
    series.derived.clear()
    return series


def test_every_template_copes_with_an_all_missing_record(sparse):
    """No template raises, warns or writes a non-finite value when every pixel is missing; none states a
    definite answer from imagery it did not have (a withheld product's own value is still a reference)."""
    from reviewer.bank import generate as G
    from reviewer.bank.series import build_series, cached_index

    series = _all_missing(build_series(cached_index(sparse["site"])))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n, name in enumerate(G.templates()):
            for c in G.run_compute(series, name):
                q, reason = G.finish(c, "s", n, 0, {"min_agreement": 0.75})
                if q is None:
                    assert reason, name
                    continue
                assert G.nonfinite_paths(q) == [], name
                definite = q["class"] != "insufficient" and "reference_pending" not in q["provenance"]
                assert not definite or q["reference_source"] == "withheld_product", (name, q["reference"])
                if q["class"] == "insufficient":
                    assert q["reference"][q["conclusion"]] == INSUFFICIENT


# ----------------------------------------------------------------------------- consistency rules


def _question(template, reference, ranges, methods, **over):
    """A generated-looking question of a template (fields from templates.json), with the values the issue
    reports reaching reviewers."""
    from reviewer.bank.generate import templates

    tpl = templates()[template]
    q = {
        "class": tpl["class"],
        "conclusion": tpl["conclusion"],
        "fields": tpl["fields"],
        "reference_source": tpl["reference_source"],
        "reference": reference,
        "reference_range": ranges,
        "provenance": {"template": template, "methods": methods, "config": {"min_agreement": 0.75}},
    }
    q.update(over)
    return q


def _codes(q):
    from reviewer.bank.consistency import problems

    return [code for code, _ in problems(q)]


def test_the_issues_contradictions_are_caught_each_by_its_rule():
    from reviewer.bank.consistency import clamp_ranges
    from reviewer.bank.generate import templates

    # a share in percent with the range [-0.7025, 2.352]: a share below 0 is no answer; the range is cut to 0
    share = _question("regional_statistics.ndvi_share", {"share": 0.81}, {"share": [-0.7025, 2.352]}, {})
    # (and it reaches 1.54 points above 0.81: more than the 1-point floor and 75% of the share)
    assert _codes(share) == ["within_bounds", "range_too_wide"]
    clamp_ranges(share, templates()["regional_statistics.ndvi_share"])
    assert share["reference_range"]["share"] == [0, 2.352]
    share["reference_range"]["share"] = [0, 1.81]
    assert _codes(share) == []
    # a direction "increase" whose slope range crosses zero
    slope = {"a:ols": -0.001054, "b:ols": 0.03, "c:ols": 0.07307}
    trend = _question(
        "trend.greenness_trend",
        {"direction": "increase", "slope": 0.03},
        {"slope": [-0.001054, 0.07307]},
        {"direction": dict.fromkeys(slope, "increase"), "slope": slope},
    )
    assert _codes(trend) == ["conclusion_one_side"]
    # methods that disagree on the direction (2 of 4 = 50% < 75%)
    split = dict(zip(slope, ["increase", "increase", "no significant change"], strict=True))
    trend2 = _question(
        "trend.greenness_trend",
        {"direction": "increase", "slope": 0.03},
        {"slope": [0.02, 0.04]},
        {"direction": split, "slope": {}},
    )
    assert _codes(trend2) == ["methods_agree"]
    # a 1985 water area of 0.7848 km2 with the range [0.01619, 0.8241]: one method found almost no water
    water = _question(
        "quantify.water_area",
        {"area_start": 0.7848, "area_end": 1.2, "direction": "up"},
        {"area_start": [0.01619, 0.8241], "area_end": [1.14, 1.26]},
        {},
    )
    assert _codes(water) == ["range_too_wide"]
    # detect: "yes" (changed by more than 5%) needs the whole change range beyond +-5
    detect = _question(
        "detect.tree_cover_change",
        {"changed": "yes", "change": -7.469},
        {"change": [-12.0, -4.9]},
        {},
    )
    detect["provenance"]["params"] = {"share": 5}
    assert _codes(detect) == ["conclusion_one_side"]
    detect["reference_range"]["change"] = [-9.0, -6.6]
    assert _codes(detect) == []


def test_every_kept_reference_of_the_demo_bank_passes_the_rules(demo, sparse):
    """Over all candidates of the demo and the sparse bank: what is kept passes every rule; what a rule dropped
    is listed in dropped.jsonl with the rule's code."""
    from reviewer.bank.consistency import problems
    from reviewer.bank.generate import rules_doc

    for bank in (demo, sparse):
        kept = [q for q in bank["bank"].questions if q["class"] != "insufficient"]
        assert kept
        for q in kept:
            assert problems(q) == [], (q["provenance"]["template"], q["reference"], q.get("reference_range"))
        for line in (bank["out"] / "dropped.jsonl").read_text().splitlines():
            d = json.loads(line)
            assert d["rule"] in (*rules_doc(), "method", "not_finite", "balance"), d
            if d["rule"] in rules_doc():
                assert d["reason"].startswith(d["rule"] + ": ")


def test_a_correction_that_breaks_a_rule_is_refused_with_its_message(demo, tmp_path):
    """Review time: the expert's (or annotator's suggested) correction is checked by the same rules."""
    from reviewer.bank.io import BankContent, write_bank
    from reviewer.errors import ReviewError
    from reviewer.review import api
    from reviewer.review.banks import import_bank
    from reviewer.store import Store

    q = next(
        q
        for q in demo["bank"].questions
        if q["provenance"]["template"] == "trend.water_trend" and q["reference"].get("direction") == "increase"
    )
    lo, hi = q["reference_range"]["slope"]
    assert lo > 0  # kept because its whole slope range is above 0
    write_bank(tmp_path / "b", BankContent("rb", "1", [q], demo["bank"].sites, [], created="2026-12-03T12:00:00Z"))
    store = Store(tmp_path / "r.sqlite")
    api.add_user(store, "mia", "maintainer")
    api.add_user(store, "ann", "annotator", by="mia")
    import_bank(store, tmp_path / "b", user="mia")
    api.assign(store, "rb", annotators=["ann"], k=1, seed=1, user="mia")
    with pytest.raises(ReviewError, match="breaks rule conclusion_one_side.*slope range"):
        api.decide(
            store,
            q["id"],
            api.Decision("flag", reasons=["wrong_reference"], correction={"reference": {"direction": "decrease"}}),
            user="ann",
        )
    with pytest.raises(ReviewError, match="breaks rule methods_agree"):
        api.decide(
            store,
            q["id"],
            api.Decision(
                "flag",
                reasons=["wrong_reference"],
                correction={
                    "reference": {"direction": "decrease", "slope": -0.07},
                    "reference_range": {"slope": [-0.1, -0.05]},
                },
            ),
            user="ann",
        )
    # a correction the rules allow goes through
    api.decide(
        store,
        q["id"],
        api.Decision("flag", reasons=["wrong_reference"], correction={"reference": {"slope": round((lo + hi) / 2, 5)}}),
        user="ann",
    )


# ----------------------------------------------------------------------------- question text

#: how each field unit is written in a question's text (any one of the spellings)
UNIT_SPELLINGS = {
    "km2": ("km2",),
    "km2/yr": ("km2/yr", "km2 per year"),
    "NDVI/yr": ("NDVI units per year",),
    "%": ("%", "percent"),
    "% of site": ("% of the site", "percent of the site"),
    "days": ("days",),
    "years": ("years",),
}


def test_every_phrasing_reads_right_on_the_demo_banks(demo, sparse):
    """Every phrasing of every template, filled with each demo question's parameters: no placeholder left, no
    year stated twice in a row ("in 2012 and in 2012"), every year inside the question's period (the ERA5-Land
    1991-2020 normal aside), and every numeric field's unit named."""
    import re

    from reviewer.bank.generate import phrasings_of

    seen = set()
    for bank in (demo, sparse):
        for q in bank["bank"].questions:
            p0, p1 = int(q["period"]["start"][:4]), int(q["period"]["end"][:4])
            seen.add(q["provenance"]["template"])
            for text in phrasings_of(q):
                assert "{" not in text and "}" not in text, text
                assert not re.search(r"\b(\d{4})\b\D{1,12}\b\1\b", text), text
                years = [int(y) for y in re.findall(r"(?<![\d.])(\d{4})(?![\d.])", text)]
                normal = "1991-2020" in text
                assert all(p0 <= y <= p1 for y in years if not (normal and y in (1991, 2020))), (text, p0, p1)
                for f in q["fields"]:
                    if f["type"] == "number":
                        assert any(s in text for s in UNIT_SPELLINGS[f["unit"]]), (f["unit"], text)
    assert len(seen) >= 12  # all templates but the snow one (its own test site) appear


# ----------------------------------------------------------------------------- cross-sensor break check


def test_break_check_finds_the_demos_roy_offsets(demo):
    """The demo writes TM/ETM+ land through the inverse of Roy et al. 2016 (OLI = slope x ETM+ + intercept) and
    leaves water as OLI sees it (the land regression inverted on water would go negative). So at its lake the
    raw ETM+ -> OLI offset is nil and the harmonized one is what the forward transform does to OLI's water
    (worked out here from the OLI reflectances and the published coefficients, about -0.46 NDVI); on stable
    vegetation both are small (Roy's NDVI effect is 0.01-0.02, within the date-to-date spread); TM and ETM+,
    written the same way, show none."""
    from reviewer.bank.sensor_break import BreakCheck, _concurrent
    from reviewer.bank.series import cached_index
    from reviewer.bank.templates import templates_doc
    from reviewer.record.decode import Grid
    from reviewer.record.stack import read_bands

    roy = json.loads((Path(__file__).parents[2] / "reviewer/record/harmonization.json").read_text())["bands"]
    index = cached_index(demo["site"])
    lake = demo["masks"]["lake_rank"] < demo["truth"]["changes"]["lake"]["pixels_start"]  # water all along
    check = BreakCheck(index, templates_doc()["sensor_break"])
    got = check.offset("ETM+", "OLI", lake, "lake", "ndvi")
    grid = Grid.of_site(index.site)
    oli = [(s.date, s) for s in index.scenes if s.label == "OLI" and 2013 <= s.year <= 2022]
    etm = [(s.date, s) for s in index.scenes if s.label == "ETM+" and 2013 <= s.year <= 2022]
    expected = []
    for _, _, o in _concurrent(etm, oli, 16):
        red, nir = read_bands(o, ["red", "nir"], grid)
        ok = lake & np.isfinite(red) & np.isfinite(nir)
        if ok.sum() < 0.3 * lake.sum():
            continue
        r, n = red[ok], nir[ok]
        # ETM+ saw OLI's water reflectance; harmonizing it applies the forward transform
        hr, hn = roy["red"][0] * r + roy["red"][1], roy["nir"][0] * n + roy["nir"][1]
        expected.append(float(np.mean((n - r) / (n + r) - (hn - hr) / (hn + hr))))
    assert len(expected) >= 3
    assert got["harmonized"]["offset"] == pytest.approx(float(np.median(expected)), abs=0.02)
    assert got["harmonized"]["offset"] < -0.3
    assert abs(got["raw"]["offset"]) < 0.03
    veg = demo["masks"]["vegetated_stable"].astype(bool)
    for early, late in (("ETM+", "OLI"), ("TM", "ETM+")):
        land = check.offset(early, late, veg, "vegetated_stable", "ndvi")
        assert abs(land["raw"]["offset"]) < 0.03 and abs(land["harmonized"]["offset"]) < 0.03, (early, land)


def test_items_spanning_a_sensor_change_carry_the_check(demo):
    """Every kept demo item whose compared periods fall on TM and on OLI carries the change, the offset and the
    verdict; those within the offset are marked for an expert; the report counts them."""
    spanning = [q for q in demo["bank"].questions if "sensor_break" in q["provenance"]]
    assert spanning
    for q in spanning:
        b = q["provenance"]["sensor_break"]
        assert b["sensors"] == ["TM", "OLI"] and b["offset"]["harmonized"]["spread"] >= 0
        if b["beyond_offset"] is False:
            assert b["marked"] and abs(b["change"]) <= b["margin"]
        else:
            assert abs(b["change"]) > b["margin"] and not b.get("marked")
    report = demo["report"].sensor_break
    assert report["checked"] == len(spanning)
    assert report["within"] == sum(q["provenance"]["sensor_break"]["beyond_offset"] is False for q in spanning)
    assert "cross-sensor break check" in demo["report"].summary()


# ----------------------------------------------------------------------------- records with gaps


@pytest.fixture(scope="session")
def gappy(sparse, tmp_path_factory):
    """The sparse site with a sensor missing (no ETM+ scene) and a period with no scene at all (2016-2017)."""
    import shutil

    from reviewer.bank.generate import generate
    from reviewer.bank.io import load_bank

    site = tmp_path_factory.mktemp("gappy") / "site"
    shutil.copytree(sparse["site"], site)
    for scene in (site / "landsat").iterdir():
        year = int(scene.name.split("_")[3][:4])
        if scene.name.startswith("LE07") or year in (2016, 2017):
            shutil.rmtree(scene)
    out = site.parent / "candidates"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        generate(site, out, GenerationOptions(seed=0))
    dropped = [json.loads(line) for line in (out / "dropped.jsonl").read_text().splitlines()]
    return {"site": site, "bank": load_bank(out), "dropped": dropped}


def test_a_record_with_gaps_gets_insufficient_evidence_where_it_lacks_imagery(gappy):
    """Every template's candidates: a compared period inside the gap is never answered nor dropped, it becomes an
    insufficient-evidence question whose provenance and view name the period and that no Landsat sensor saw it;
    the ETM+ left out is named by no kept question."""
    from reviewer.bank.evidence_rules import compared_periods
    from reviewer.bank.generate import templates

    def in_gap(lo, hi):
        return 2016 <= lo and hi <= 2017

    marked = 0
    for q in gappy["bank"].questions:
        prov = q["provenance"]
        tpl = templates()[prov["template"]]
        periods = compared_periods(tpl, prov["params"], (int(q["period"]["start"][:4]), int(q["period"]["end"][:4])))
        assert "ETM+" not in q["sensors"]
        if q["class"] != "insufficient":
            assert not any(in_gap(*p) for p in periods), (prov["template"], periods)
        else:
            missing = prov["observations"]["missing"]
            assert missing and all(m["clear_observations"] < m["needed"] for m in missing)
            gap = [m for m in missing if in_gap(*m["period"])]
            if any(in_gap(*p) for p in periods):
                assert gap, (prov["template"], periods, missing)
            if gap:
                marked += 1
                assert all(m["clear_observations"] == 0 and m["sensors"] == [] for m in gap)
                assert "no Landsat sensor in the record" in q["evidence"]["note"]
    assert marked >= 2
    for d in gappy["dropped"]:
        tpl = templates()[d["template"]]
        periods = compared_periods(tpl, d["params"], tuple(d["period"]))
        assert not any(in_gap(*p) for p in periods) or not tpl.get("evidence_rules"), d


def test_the_focus_view_puts_the_offset_next_to_the_change(demo):
    """The review dock's focus view (qt_review_parts.question_html) shows an item's change next to the sensors' offset,
    with a warning when the change is within it."""
    from reviewer.app.review_sensor_break import sensor_break_html

    for q in demo["bank"].questions:
        b = q["provenance"].get("sensor_break")
        text = sensor_break_html(q)
        if b is None:
            assert text == ""
            continue
        assert f"{b['change']:+.3f}" in text and f"{b['offset']['harmonized']['offset']:+.3f}" in text
        assert ("within the sensors' offset" in text) == (b["beyond_offset"] is False)


def test_reference_products_only_for_the_years_they_cover():
    """Hansen GFC loss starts in 2001 (lossyear 1 = 2001, Hansen et al. 2013); WorldCover's first map is 2020
    (the catalogue's first_date): a template resting on either is not asked about years before them."""
    from reviewer.bank.evidence_rules import product_gap
    from reviewer.bank.generate import templates

    loss, crops = templates()["quantify.forest_loss_product"], templates()["season.crop_peak"]
    assert "covers 2001 on" in product_gap(loss, (1990, 2000))
    assert product_gap(loss, (2001, 2020)) is None
    assert "esa_worldcover covers 2020 on" in product_gap(crops, (2007, 2016))
    assert product_gap(crops, (2011, 2020)) is None


def test_a_record_without_imagery_answers_nothing_from_imagery(sparse, tmp_path):
    """The issue's ERA5-Land-only site: no question gets a definite answer (no "0.0 km2 of tree cover lost"),
    each says no Landsat sensor saw its periods, and the balance baselines have nothing to score."""
    import shutil

    from reviewer.bank.generate import generate
    from reviewer.bank.io import load_bank

    site = tmp_path / "site"
    shutil.copytree(sparse["site"], site, ignore=shutil.ignore_patterns("landsat", "sentinel2", "modis", "viirs"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        report = generate(site, tmp_path / "out", GenerationOptions(seed=0))
    qs = load_bank(tmp_path / "out").questions
    assert qs and report.insufficient == len(qs)
    for q in qs:
        assert q["reference"][q["conclusion"]] == INSUFFICIENT and q["sensors"] == []
        assert "no Landsat sensor in the record" in q["evidence"]["note"]
