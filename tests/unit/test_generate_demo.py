"""Generation on a small synthetic demo site: every planted change is recovered within its reference range.

Expected values come from the site's truth.json (never from generator output); the generator never reads it.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from reviewer.bank.io import load_bank, validate_bank
from reviewer.bank.model import INSUFFICIENT, TASKS

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _qs(demo, template):
    return [
        q for q in demo["bank"].questions if q["provenance"]["template"] == template and q["class"] != "insufficient"
    ]


def _years(q):
    return int(q["period"]["start"][:4]), int(q["period"]["end"][:4])


def _inside(value, rng):
    return rng[0] <= value <= rng[1]


def test_bank_is_valid_and_covers_all_tasks(demo):
    assert validate_bank(demo["out"]) == []
    tasks = {q["task"] for q in demo["bank"].questions if q["task"]}
    assert tasks == set(TASKS)
    assert any(q["class"] == "insufficient" for q in demo["bank"].questions)
    dropped = [json.loads(line) for line in (demo["out"] / "dropped.jsonl").read_text().splitlines()]
    assert all(d["reason"] for d in dropped)


def test_questions_follow_the_format(demo):
    for q in demo["bank"].questions:
        prov = q["provenance"]
        assert prov["template"] and prov["seed"] == 5 and 0 <= prov["phrasing"] < 5
        assert "{" not in q["text"], q["text"]
        if q["class"] == "insufficient":
            assert q["task"] is None and q["reference"][q["conclusion"]] == INSUFFICIENT
            assert q["reference_source"] == "observations" and "observations" in prov
        for f in q["fields"]:
            if f["type"] == "number" and f["name"] in q["reference"] and q["class"] != "insufficient":
                assert f["name"] in q["reference_range"]


def _same_question(q):
    """Template, period and parameters (a template can ask about several regions over one period); the
    option texts are left out, their order is what the seed changes."""
    params = {k: v for k, v in (q["provenance"].get("params") or {}).items() if not k.endswith("_options")}
    return q["provenance"]["template"] + json.dumps(q["period"]) + json.dumps(params, sort_keys=True)


def test_seed_changes_phrasing_and_option_order_only(demo, tmp_path):
    from reviewer.bank.generate import generate
    from reviewer.bank.options import GenerationOptions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        generate(demo["site"], tmp_path / "b", GenerationOptions(seed=6, tasks=("quantify", "trend")))
    other = {_same_question(q): q for q in load_bank(tmp_path / "b").questions}
    changed = 0
    for q in demo["bank"].questions:
        key = _same_question(q)
        if q["task"] in ("quantify", "trend") and key in other:
            assert other[key]["reference"] == q["reference"]
            changed += (other[key]["text"] != q["text"]) or (other[key]["fields"] != q["fields"])
    assert changed > 0


def test_quantify_water_area(demo):
    areas = demo["truth"]["changes"]["lake"]["area_km2_by_year"]
    qs = _qs(demo, "quantify.water_area")
    assert qs
    for q in qs:
        y1, y2 = _years(q)
        assert _inside(areas[str(y1)], q["reference_range"]["area_start"])
        assert _inside(areas[str(y2)], q["reference_range"]["area_end"])
        rel = (areas[str(y2)] - areas[str(y1)]) / areas[str(y1)]
        assert q["reference"]["direction"] == ("up" if rel > 0.1 else "down" if rel < -0.1 else "about the same")


def test_quantify_forest_loss_from_withheld_product(demo):
    (q,) = _qs(demo, "quantify.forest_loss_product")
    assert q["reference_source"] == "withheld_product"
    # the Hansen lossyear product under reference/ gives the value (not the methods' median)
    prov = q["provenance"]
    assert q["reference"]["area"] == prov["product"]["area_km2"]
    assert prov["reference_from"].startswith("product: Hansen GFC lossyear (reference/")
    assert "reference_pending" not in prov
    clearing = demo["truth"]["changes"]["forest_clearing"]
    assert q["reference"]["area"] == pytest.approx(clearing["area_km2"], rel=1e-3)
    lo, hi = q["reference_range"]["area"]
    assert lo <= 0.95 * q["reference"]["area"] and hi >= 1.05 * q["reference"]["area"]


def test_trend_water(demo):
    lake = demo["truth"]["changes"]["lake"]
    areas = {int(y): v for y, v in lake["area_km2_by_year"].items()}
    qs = _qs(demo, "trend.water_trend")
    assert qs
    for q in qs:
        y1, y2 = _years(q)
        ys = [y for y in range(y1, y2 + 1) if y in areas]
        slope = np.polyfit(ys, [areas[y] for y in ys], 1)[0]
        assert _inside(slope, q["reference_range"]["slope"])
        assert q["reference"]["direction"] == "increase"


def test_trend_greenness_stable_centre_has_no_change(demo):
    qs = [q for q in _qs(demo, "trend.greenness_trend") if "central" in q["text"]]
    for q in qs:
        assert q["reference"]["direction"] == "no significant change"
    assert _qs(demo, "trend.greenness_trend")


def test_date_largest_burn(demo):
    burns = demo["truth"]["changes"]["burns"]
    qs = _qs(demo, "date.burn_year")
    assert qs
    for q in qs:
        y1, y2 = _years(q)
        inside = [b for b in burns if y1 <= b["year"] <= y2]
        largest = max(inside, key=lambda b: b["area_km2"])
        assert q["reference"]["year"] == largest["year"]
        assert _inside(largest["area_km2"], q["reference_range"]["area"])


def test_compare_water_periods(demo):
    areas = demo["truth"]["changes"]["lake"]["area_km2_by_year"]
    qs = _qs(demo, "compare.water_periods")
    assert qs
    for q in qs:
        import re

        a1, a2, b1, b2 = (
            int(x) for x in re.findall(r"(\d{4})-(\d{4})", q["text"])[0] + re.findall(r"(\d{4})-(\d{4})", q["text"])[1]
        )
        periods = sorted([(a1, a2), (b1, b2)])
        ma = np.mean([areas[str(y)] for y in range(periods[0][0], periods[0][1] + 1)])
        mb = np.mean([areas[str(y)] for y in range(periods[1][0], periods[1][1] + 1)])
        rel = (mb - ma) / ma * 100
        assert q["reference"]["direction"] == ("more" if rel > 10 else "less" if rel < -10 else "about the same")
        assert _inside(mb - ma, q["reference_range"]["change"])


def test_compare_builtup_quadrant(demo):
    qs = _qs(demo, "compare.builtup_quadrant")
    assert qs
    for q in qs:
        assert q["reference"]["quadrant"] == demo["truth"]["changes"]["built_up"]["quadrant"]


def test_regional_statistics_decrease_share(demo):
    t = demo["truth"]["changes"]
    m = demo["masks"]
    (q,) = [q for q in _qs(demo, "regional_statistics.ndvi_share") if "decrease" in q["text"]]
    y1, y2 = _years(q)
    # pixels that turned to water or built-up within the period, plus the clearing when it falls inside
    lake = (m["lake_rank"] >= t["lake"]["pixels_by_year"][str(y1)]) & (
        m["lake_rank"] < t["lake"]["pixels_by_year"][str(y2)]
    )
    urban = (m["urban_rank"] >= t["built_up"]["pixels_by_year"][str(y1)]) & (
        m["urban_rank"] < t["built_up"]["pixels_by_year"][str(y2)]
    )
    changed = lake | urban
    if y1 < t["forest_clearing"]["year"] <= y2:
        changed |= m["clearing"]
    expected = 100.0 * changed.sum() / changed.size
    lo, hi = q["reference_range"]["share"]
    assert lo - 3 <= expected <= hi + 3  # pixels changed in the last years of a period are not yet significant


def test_attribute_tree_loss_is_clearing(demo):
    qs = [q for q in _qs(demo, "attribute.loss_cause") if "tree" in q["text"]]
    assert qs and all(q["reference"]["cause"] == "clearing" for q in qs)
    (v,) = _qs(demo, "attribute.land_cover_after_loss")
    assert v["reference_source"] == "visual"
    pending = v["provenance"]["reference_pending"]
    assert pending["needs_review"] is True and "human review" in pending["reason"]
    assert pending["draft_methods"] == {"cover": ["ndvi_mndwi_rule"]}
    assert v["provenance"]["reference_from"] == "method draft (needs review)"


def test_withheld_product_without_the_product_is_a_draft_that_needs_review():
    from reviewer.bank.generate import Candidate, finish

    c = Candidate(
        "quantify.forest_loss_product",
        {"y1": 2001, "y2": 2020},
        (2001, 2020),
        sensors=["OLI"],
        methods={"area": {"ndvi_drop>0.25": 1.0, "ndvi_drop>0.3": 1.2, "ndvi_drop>0.35": 1.1}},
        extra={"pending_reason": "withheld product (Hansen GFC lossyear) not found under reference/"},
    )
    q, reason = finish(c, "s1", 1, 0, {"min_agreement": 0.75})
    assert reason is None and q["reference"] == {"area": 1.1}
    pending = q["provenance"]["reference_pending"]
    assert pending["needs_review"] is True and "Hansen" in pending["reason"]
    assert pending["draft_methods"] == {"area": ["ndvi_drop>0.25", "ndvi_drop>0.3", "ndvi_drop>0.35"]}
    assert "pending_reason" not in q["provenance"]
    # with the product the value is the product's, and nothing is pending
    c2 = Candidate(
        "quantify.forest_loss_product",
        {"y1": 2001, "y2": 2020},
        (2001, 2020),
        sensors=["OLI"],
        methods={"area": {"ndvi_drop>0.3": 1.2}},
        reference_override={"area": 0.9},
        extra={"product": {"name": "Hansen GFC lossyear", "file": "reference/x.tif", "area_km2": 0.9}},
    )
    q2, _ = finish(c2, "s1", 2, 0, {"min_agreement": 0.75})
    assert q2["reference"] == {"area": 0.9} and "reference_pending" not in q2["provenance"]
    assert q2["reference_range"]["area"][0] <= 0.855 and q2["reference_range"]["area"][1] >= 0.945


def test_anomaly_climate(demo):
    d = demo["truth"]["changes"]["drought"]
    qs = _qs(demo, "anomaly_climate.lowest_greenness")
    assert qs
    for q in qs:
        assert q["reference"]["year"] == d["year"]
        assert q["reference"]["drier"] == ("drier" if d["precip_below_1991_2020_mean"] else "not drier")


def test_detect_tree_cover_change(demo):
    t = demo["truth"]["changes"]["forest_clearing"]
    inside = 64 * 64 - 4 * 3 * 64 + 36  # the boundary is inset by 3 pixels on every side
    qs = _qs(demo, "detect.tree_cover_change")
    assert qs
    for q in qs:
        y1, y2 = _years(q)
        expected = -100.0 * t["pixels"] / inside if y1 + 2 < t["year"] <= y2 - 2 else 0.0
        lo, hi = q["reference_range"]["change"]
        assert lo - 0.5 <= expected <= hi + 0.5
        share = float(q["text"].split("than ")[1].split("%")[0]) if "than " in q["text"] else None
        if share is not None:
            assert q["reference"]["changed"] == ("yes" if abs(expected) > share else "no")


def test_season_crop_peak(demo):
    (q,) = _qs(demo, "season.crop_peak")
    assert q["reference"]["month"] == demo["truth"]["changes"]["crop"]["peak_month"]


def test_recovery_after_largest_fire(demo):
    burns = demo["truth"]["changes"]["burns"]
    qs = _qs(demo, "recovery.burn_recovery")
    assert qs
    for q in qs:
        y1, y2 = _years(q)
        largest = max((b for b in burns if y1 <= b["year"] <= y2), key=lambda b: b["area_km2"])
        assert q["reference"]["fall_year"] == largest["year"]
        lo, hi = q["reference_range"]["years"]
        assert lo <= largest["recovery_years"] <= hi


def test_unknown_task_is_refused(demo, tmp_path):
    from reviewer.bank.options import GenerationOptions
    from reviewer.errors import BankError

    with pytest.raises(BankError, match="nonsense"):
        GenerationOptions(tasks=("nonsense",))


def test_cli_generate(demo, tmp_path, capsys):
    from reviewer.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = main(
            [
                "--db",
                str(tmp_path / "s.db"),
                "generate",
                str(demo["site"]),
                "--tasks",
                "season",
                "--out",
                str(tmp_path / "c"),
                "--store",
            ]
        )
    assert rc == 0
    assert "candidate questions" in capsys.readouterr().out
    import sqlite3

    con = sqlite3.connect(tmp_path / "s.db")
    statuses = {r[0] for r in con.execute("SELECT state FROM items")}
    assert statuses == {"generated"}
