"""Sentinel-2 L2A as distributed: a SAFE folder with R10m/R20m/R60m copies reads each band at its native
resolution and reports the copies it did not use; BOA_ADD_OFFSET from MTD_MSIL2A.xml, else from the
processing baseline (>= 04.00: -1000); the Element84/AWS COG layout through its STAC item.

Expected reflectances by hand: rho = (DN + offset) / 10000."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from reviewer.record.decode import Grid, read_scene
from reviewer.record.scan import scan_site
from tests.conftest import write_site_json
from tests.formats import S2_CRS, S2_ORIGIN, write_safe, write_stac_cog


def _site(path, res=10):
    w, n = S2_ORIGIN
    return write_site_json(path, bbox=[w, n - 600, w + 600, n], crs=S2_CRS, resolution=res)


def _full(dn: int, res: int, dtype=np.uint16) -> np.ndarray:
    side = 600 // res
    return np.full((side, side), dn, dtype)


THREE_RES = {
    ("B04", 10): _full(1500, 10),
    ("B04", 20): _full(2500, 20),
    ("B04", 60): _full(3500, 60),
    ("B08", 10): _full(4000, 10),
    ("B8A", 20): _full(3000, 20),
    ("B8A", 60): _full(3300, 60),
    ("SCL", 20): _full(4, 20, np.uint8),  # vegetation
    ("SCL", 60): _full(9, 60, np.uint8),  # cloud high probability: would mask everything
}


def test_safe_with_three_resolutions_uses_native_copies(tmp_path):
    site = _site(tmp_path / "s")
    write_safe(site, THREE_RES)
    index = scan_site(site)
    assert index.problems == []
    (scene,) = index.scenes
    assert scene.files["B04"].endswith("R10m/T32TNS_20230601T101559_B04_10m.jp2")
    assert scene.files["B8A"].endswith("_B8A_20m.jp2") and scene.files["SCL"].endswith("_SCL_20m.jp2")
    unused = {p.path.rsplit("/", 1)[-1]: p.reason for p in index.unused_copies}
    assert set(unused) == {
        "T32TNS_20230601T101559_B04_20m.jp2",
        "T32TNS_20230601T101559_B04_60m.jp2",
        "T32TNS_20230601T101559_B8A_60m.jp2",
        "T32TNS_20230601T101559_SCL_60m.jp2",
    }
    assert "the 10 m copy is used (its native resolution)" in unused["T32TNS_20230601T101559_B04_60m.jp2"]
    assert (scene.extra["offset"], scene.extra["offset_source"]) == (-1000.0, "MTD_MSIL2A.xml")
    data = read_scene(scene, scene.product_spec, ["red", "nir_broad", "nir"], Grid.of_site(index.site))
    assert scene.clear_fraction == 1.0, "the 20 m SCL (vegetation) is used, not the 60 m one (cloud)"
    assert data.bands["red"] == pytest.approx(np.full((60, 60), (1500 - 1000) / 1e4), abs=1e-6)
    assert data.bands["nir_broad"][0, 0] == pytest.approx((4000 - 1000) / 1e4, abs=1e-6)
    assert data.bands["nir"][59, 59] == pytest.approx((3000 - 1000) / 1e4, abs=1e-6)


def test_tif_copies_in_a_safe_are_read_the_same(tmp_path):
    site = _site(tmp_path / "s")
    write_safe(site, {("B04", 10): _full(1500, 10), ("SCL", 20): _full(4, 20, np.uint8)}, ext=".tif")
    (scene,) = scan_site(site).scenes
    red = read_scene(scene, scene.product_spec, ["red"], Grid.of_site(scan_site(site).site)).bands["red"]
    assert red[5, 5] == pytest.approx(0.05, abs=1e-6)


@pytest.mark.parametrize(
    ("baseline", "mtd", "when", "offset", "source"),
    [
        ("04.00", "baseline", "20230601T101559", -1000.0, "processing baseline 04.00 (MTD_MSIL2A.xml)"),
        ("02.14", "baseline", "20230601T101559", 0.0, "processing baseline 02.14 (MTD_MSIL2A.xml)"),
        # a 2019 scene reprocessed at baseline 05.00, without MTD: the folder name says 05.00, not the date
        ("05.00", None, "20190601T101559", -1000.0, "processing baseline 05.00 (SAFE folder name)"),
    ],
)
def test_offset_from_the_processing_baseline(tmp_path, baseline, mtd, when, offset, source):
    site = _site(tmp_path / "s", res=20)
    write_safe(
        site, {("B04", 20): _full(2500, 20), ("SCL", 20): _full(4, 20, np.uint8)}, baseline=baseline, mtd=mtd, when=when
    )
    (scene,) = scan_site(site).scenes
    assert (scene.extra["offset"], scene.extra["offset_source"]) == (offset, source)
    red = read_scene(scene, scene.product_spec, ["red"], Grid.of_site(scan_site(site).site)).bands["red"]
    assert red[3, 3] == pytest.approx((2500 + offset) / 1e4, abs=1e-6)


@pytest.mark.parametrize(("baseline", "offset"), [("02.14", 0.0), ("04.00", -1000.0)])
def test_aws_cog_folder_with_stac_item(tmp_path, baseline, offset):
    site = _site(tmp_path / "s")
    item_id = "S2B_32TNS_20211201_0_L2A"
    write_stac_cog(
        site / item_id,
        {"B04": (_full(1500, 10), 10), "B08": (_full(4000, 10), 10), "SCL": (_full(4, 20, np.uint8), 20)},
        item_id=item_id,
        when=dt.datetime(2021, 12, 1, 10, 15, tzinfo=dt.UTC),
        baseline=baseline,
    )
    index = scan_site(site)
    assert index.problems == [], "B04.tif, SCL.tif, the thumbnail and the item are all the item's files"
    (scene,) = index.scenes
    assert (scene.scene_id, scene.date, scene.location, scene.platform) == (
        item_id,
        dt.date(2021, 12, 1),
        "32TNS",
        "sentinel2b",
    )
    assert (
        scene.extra["offset"] == offset
        and scene.extra["offset_source"] == f"STAC item (processing baseline {baseline})"
    )
    red = read_scene(scene, scene.product_spec, ["red"], Grid.of_site(index.site)).bands["red"]
    assert red[10, 10] == pytest.approx((1500 + offset) / 1e4, abs=1e-6)


def test_cog_folder_without_item_names_each_file(tmp_path):
    site = _site(tmp_path / "s")
    item = write_stac_cog(
        site / "x", {"B04": (_full(1500, 10), 10)}, item_id="S2B_X", when=dt.datetime(2021, 1, 1), baseline="02.14"
    )
    item.unlink()
    reasons = {p.path: p.reason for p in scan_site(site).problems}
    assert "unknown name" in reasons["x/B04.tif"] and "unknown name" in reasons["x/thumbnail.jpg"]
