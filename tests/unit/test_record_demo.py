"""The record layer on the synthetic demo site: what the scanner and reader find matches the planted truth."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import numpy as np
import pytest
import rasterio

from reviewer.record.decode import Grid, read_scene
from reviewer.record.render import render_dates
from reviewer.record.scan import scan_site
from reviewer.record.site import load_site
from reviewer.record.stack import open_stack
from reviewer.record.synthetic import make_demo_site


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, dict, object]:
    site = make_demo_site(
        tmp_path_factory.mktemp("demo") / "site", seed=3, size=64, start=2001, end=2023, scenes_per_year=2
    )
    truth = json.loads((site / "truth.json").read_text())
    return site, truth, scan_site(site)


def test_every_planted_landsat_scene_is_indexed_with_sensor_and_tier(demo):
    _, truth, index = demo
    planted = {s["id"]: s for s in truth["landsat"]["scenes"]}
    found = {s.scene_id: s for s in index.scenes if s.sensor in ("TM", "ETM+", "OLI", "OLI-2")}
    assert set(found) == set(planted)
    for sid, s in found.items():
        assert (s.label, s.tier, s.date.isoformat()) == (
            planted[sid]["sensor"],
            planted[sid]["tier"],
            planted[sid]["date"],
        )
    labels = {s.label for s in index.scenes}
    assert {"TM", "ETM+", "OLI", "OLI-2", "MSI", "MODIS Terra", "MODIS Aqua", "VIIRS"} <= labels
    assert index.problems == []


def test_clear_scenes_have_no_cloud_and_cloudy_ones_do(demo):
    _, truth, index = demo
    by_id = {s.scene_id: s for s in index.scenes}
    for sid in truth["landsat"]["clear_scenes"]:
        assert by_id[sid].cloud_fraction == 0.0
    cloudy = [s for s in truth["landsat"]["scenes"] if s["cloud_fraction"] > 0.2]
    for s in cloudy:
        # our cloud fraction unites cloud, dilated cloud and shadow, so it is at least the planted cloud share
        assert by_id[s["id"]].cloud_fraction >= s["cloud_fraction"] - 0.01


def test_slc_off_gaps_are_masked_not_zero(demo):
    site, truth, index = demo
    slc = [s for s in truth["landsat"]["scenes"] if s["slc_off"] and s["fill_fraction"] > 0.1]
    assert slc, "the demo has SLC-off ETM+ scenes"
    planted = slc[0]
    scene = next(s for s in index.scenes if s.scene_id == planted["id"])
    red = read_scene(scene, scene.product_spec, ["red"], Grid.of_site(index.site), mask=["fill"]).bands["red"]
    with rasterio.open(Path(scene.files_root) / scene.files["SR_B3"]) as ds:
        raw = ds.read(1)
    assert np.isnan(red[raw == 0]).all() and (raw == 0).mean() == pytest.approx(planted["fill_fraction"], abs=0.02)
    assert np.nanmin(red) > 0.0, "no gap pixel comes out as a zero reflectance"


def test_lake_area_from_mndwi_on_a_clear_scene_matches_truth(demo):
    _, truth, index = demo
    clear = [
        s for s in index.scenes if s.scene_id in set(truth["landsat"]["clear_scenes"]) and s.label in ("OLI", "OLI-2")
    ]
    assert clear
    scene = clear[0]
    stack = open_stack(index, composite="mndwi", scene_filter=lambda s: s.scene_id == scene.scene_id)
    mndwi = stack.read(0, "mndwi")[0]
    expected = truth["changes"]["lake"]["pixels_by_year"][str(scene.year)]
    assert int(np.count_nonzero(mndwi > 0)) == pytest.approx(expected, rel=0.03)


def test_sentinel2_offset_makes_both_baselines_agree(demo):
    """Before 2022-01-25 (offset 0) and after (offset -1000) the same stable surface has the same reflectance;
    ignoring the offset would make the later dates 0.1 brighter."""
    _, truth, index = demo
    box = truth["regions"]["stable"]["pixel_box"]  # [row0, col0, row1, col1]
    rows, cols = slice(box[0], box[2]), slice(box[1], box[3])
    before, after = [], []
    for s in index.scenes:
        if s.label != "MSI":
            continue
        red = read_scene(s, s.product_spec, ["red"], Grid.of_site(index.site)).bands["red"][rows, cols]
        if np.isfinite(red).mean() < 0.5:
            continue
        (after if s.date.isoformat() >= "2022-01-25" else before).append(float(np.nanmedian(red)))
        if s.date.isoformat() >= "2022-01-25":
            assert s.extra["offset"] == -1000.0
    assert before and after
    assert abs(statistics.median(after) - statistics.median(before)) < 0.03


def test_boundary_in_another_crs_gives_the_same_mask(demo, tmp_path):
    import geopandas as gpd

    site_dir, _, index = demo
    copy = tmp_path / "site"
    copy.mkdir()
    (copy / "site.json").write_text((site_dir / "site.json").read_text())
    frame = gpd.read_file(site_dir / "boundary.geojson").to_crs("EPSG:3857")
    frame.to_file(copy / "boundary.gpkg", driver="GPKG")
    doc = json.loads((copy / "site.json").read_text())
    doc["boundary"] = "boundary.gpkg"
    (copy / "site.json").write_text(json.dumps(doc))
    a, b = index.site.boundary_mask, load_site(copy).boundary_mask
    assert a.sum() > 0 and (a != b).sum() <= 0.01 * a.size


def test_render_of_the_lake_before_and_after(demo, tmp_path):
    _, truth, index = demo
    lake = truth["changes"]["lake"]
    first, last = lake["start_year"] if "start_year" in lake else 2001, lake["end_year"]
    out = render_dates(index, [str(first), str(last)], "truecolor", tmp_path / "pair.png", method="median")
    assert [p["method"] for p in out["panels"]] == ["median", "median"]
    assert Path(out["out"]).stat().st_size > 5000
