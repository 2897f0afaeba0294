"""`reviewer generate` on a record of one year, as a new user's first download (issue 31's walk): every template
whose rules start its period two years into the record is dropped as too short, saying so (it said "no tree
cover loss above 0.1 km2 in the period" and "the record has no years to compare in 2002-2000", the template's
own reading of a reversed period), and the summary reads as a sentence: "(insufficient 2)", not
"(; insufficient 2)", and "no scored question: no baselines", not "majority class None pass^k"."""

from __future__ import annotations

import json

import pytest

from reviewer.cli import main
from tests.sites import make_site

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_a_one_year_record_says_why_each_template_is_not_asked(tmp_path, capsys):
    site = make_site(tmp_path / "site", "landsat_small", size=32, start=2000, end=2000, scenes_per_year=3)
    out = tmp_path / "bank"
    code = main(["--db", str(tmp_path / "db"), "generate", str(site), "--out", str(out)])
    shown = capsys.readouterr()
    assert code == 0, shown.err
    dropped = [json.loads(line) for line in (out / "dropped.jsonl").read_text().splitlines()]
    reversed_ = [d for d in dropped if d["period"][0] > d["period"][1]]
    # attribute.loss_cause, quantify.forest_loss_product, detect.tree_cover_change ... start in 2000 + 2 = 2002
    assert {d["template"] for d in reversed_} >= {"attribute.loss_cause", "detect.tree_cover_change"}
    for d in reversed_:
        assert d["reason"] == (
            f"the record is too short for this template: its rules give it the period {d['period'][0]}-2000, "
            "which ends before it starts (the record's years: 2000)"
        ), d
    report = json.loads((out / "generation_report.json").read_text())
    summary = next(line for line in shown.out.splitlines() if "candidate questions" in line)
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(report["by_task"].items()))
    parts = f"{kinds}; insufficient {report['insufficient']}" if kinds else f"insufficient {report['insufficient']}"
    assert f"{report['questions']} candidate questions ({parts})," in summary
    assert "(;" not in summary and "None pass^k" not in shown.out


def test_a_large_site_with_nothing_to_read_makes_no_site_sized_masks(tmp_path):
    """A Sentinel-2 tile's 10 m grid (10,980 x 10,980 px) with nothing the methods read: the pass ends with its
    reason, having made none of the site's masks (the boundary's and six regions', 120.6 MB each as bool: its
    peak was 942 MB against a 500 MB --memory)."""
    import tracemalloc

    from reviewer.bank.series import build_series, cached_index
    from tests.conftest import write_site_json

    site = write_site_json(tmp_path / "tile", bbox=[499980, 690240, 609780, 800040], crs="EPSG:32618", resolution=10)
    index = cached_index(site)
    assert index.site.shape == (10980, 10980)
    tracemalloc.start()
    try:
        series = build_series(index, memory=500 * 10**6)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert series.nothing_read is not None and "nothing of the record of t1 is read" in series.nothing_read
    assert peak < 10 * 10**6, f"{peak / 1e6:.0f} MB traced"
