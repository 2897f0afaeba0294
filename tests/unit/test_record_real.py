"""Decoding of real provider files (../shared/data/real), checked against values worked out by hand
from the product rules (USGS C2 L2 FAQ, ESA MTD_MSIL2A.xml, MODIS MOD13 user guide)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio

from reviewer.record.catalog import catalog
from reviewer.record.decode import Grid, decode, flag_array, mask_from_flags, read_scene
from reviewer.record.scan import scan_site
from tests.conftest import write_site_json

OLI = "LC08_L2SP_098084_20210503_20210508_02_T1"
TM = "LT05_L2SP_090084_19980308_20200909_02_T1"
ETM = "LE07_L2SP_090084_20210331_20210426_02_T1"


def _site_on(tmp_path: Path, scene_dirs: list[Path], ref: Path, **extra) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    for d in scene_dirs:
        (site / d.name).symlink_to(d)
    with rasterio.open(ref) as ds:
        b = ds.bounds
        doc = {"bbox": [b.left, b.bottom, b.right, b.top], "crs": ds.crs.to_string(), "shape": [ds.height, ds.width]}
    doc.update(extra)
    return write_site_json(site, **doc)


def test_sr_dn_18639_is_reflectance_0_3126():
    spec = catalog().products["landsat8_oli_c2l2"].bands["SR_B4"]
    values, _ = decode(np.array([18639, 0], dtype=np.uint16), spec)
    # 18639 * 0.0000275 - 0.2 = 0.3125725 (USGS FAQ); DN 0 is fill
    assert values[0] == pytest.approx(0.3126, abs=5e-5)
    assert np.isnan(values[1])


def test_qa_pixel_water_trap_oli_vs_tm():
    oli = catalog().products["landsat8_oli_c2l2"].quality
    tm = catalog().products["landsat5_tm_c2l2"].quality
    # 21952 = bits 14,12,10,8 (low confidences) + 7 water + 6 clear: clear water on OLI
    assert flag_array(np.array([21952]), oli, "water")[0] and flag_array(np.array([21952]), oli, "clear")[0]
    # 5504 = bits 12,10,8 + 7 water, clear bit 6 unset on TM/ETM+
    assert flag_array(np.array([5504]), tm, "water")[0] and not flag_array(np.array([5504]), tm, "clear")[0]
    # neither is masked by the default mask: water is kept, the unset clear bit must not hide it
    assert not mask_from_flags(np.array([21952]), oli, oli.default_mask)[0]
    assert not mask_from_flags(np.array([5504]), tm, tm.default_mask)[0]
    # clouds, shadows and fill are masked: 5896 cloud (bit 3), 7440 shadow (bit 4), 22280 OLI cloud, 55052 cirrus, 1 fill
    assert mask_from_flags(np.array([5896, 7440, 1]), tm, tm.default_mask).all()
    assert mask_from_flags(np.array([22280, 55052, 1]), oli, oli.default_mask).all()
    assert flag_array(np.array([55052]), oli, "cirrus")[0]


def test_real_oli_scene_decodes_and_masks(real_dir, tmp_path):
    scene_dir = real_dir / "eo-datasets" / OLI
    site = _site_on(tmp_path, [scene_dir], scene_dir / f"{OLI}_SR_B4.TIF")
    index = scan_site(site)
    assert [s.scene_id for s in index.scenes] == [OLI]
    scene = index.scenes[0]
    assert (scene.label, scene.tier, scene.location, str(scene.date)) == ("OLI", "T1", "098/084", "2021-05-03")
    with rasterio.open(scene_dir / f"{OLI}_SR_B4.TIF") as ds:
        dn = ds.read(1)
    with rasterio.open(scene_dir / f"{OLI}_QA_PIXEL.TIF") as ds:
        qa = ds.read(1)
    data = read_scene(scene, scene.product_spec, ["red"], Grid.of_site(index.site))
    red = data.bands["red"]
    clear_land = (qa == 21824) & (dn >= 7273) & (dn <= 43636)
    assert clear_land.any()
    r, c = np.argwhere(clear_land)[0]
    assert red[r, c] == pytest.approx(dn[r, c] * 2.75e-5 - 0.2, abs=1e-6)
    assert np.isnan(red[qa == 1]).all(), "fill stays masked"
    assert np.isnan(red[qa == 22280]).all(), "cloud is masked by default"
    # valid fraction = share of pixels whose QA fill bit is unset (about 34% of the grid is outside the footprint)
    assert scene.valid_fraction == pytest.approx(float((qa & 1 == 0).mean()), abs=1e-9)


def test_real_tm_and_etm_on_one_grid(real_dir, tmp_path):
    """Same path/row 23 years apart, different grid origins: both land on the site grid (warped)."""
    tm_dir, etm_dir = real_dir / "eo-datasets" / TM, real_dir / "eo-datasets" / ETM
    site = _site_on(tmp_path, [tm_dir, etm_dir], tm_dir / f"{TM}_SR_B3.TIF")
    index = scan_site(site)
    assert [s.label for s in index.scenes] == ["TM", "ETM+"]
    grid = Grid.of_site(index.site)
    tm = read_scene(index.scenes[0], index.scenes[0].product_spec, ["red"], grid).bands["red"]
    etm = read_scene(index.scenes[1], index.scenes[1].product_spec, ["red"], grid).bands["red"]
    assert tm.shape == etm.shape == index.site.shape
    both = np.isfinite(tm) & np.isfinite(etm)
    assert both.sum() > 500, "the two footprints overlap on the site grid"


def test_real_sentinel2_baseline_04_offset(real_dir, tmp_path):
    """B04[915, 915] = 5338 -> (5338 - 1000) / 10000 = 0.4338 (MTD_MSIL2A.xml BOA_ADD_OFFSET -1000); SCL there is 9 (cloud)."""
    s2 = real_dir / "stactools-sentinel2"
    site = tmp_path / "s2site"
    site.mkdir()
    (site / "S2A_MSIL2A_20221005T115411_N0400_R023_T29UNU_20221005T164454.SAFE").symlink_to(s2)
    with rasterio.open(s2 / "T29UNU_20221005T115411_B04_60m.jp2") as ds:
        t = ds.transform
        assert ds.read(1, window=((915, 916), (915, 916)))[0, 0] == 5338
        crs = ds.crs.to_string()
    # a 21 x 21 px site centred on that pixel
    w, n = t.c + 905 * t.a, t.f + 905 * t.e
    write_site_json(site, bbox=[w, n - 21 * 60, w + 21 * 60, n], crs=crs, resolution=60)
    index = scan_site(site)
    s = index.scenes[0]
    assert (s.label, s.platform, s.extra["offset"], s.extra["offset_source"]) == (
        "MSI",
        "sentinel2a",
        -1000.0,
        "MTD_MSIL2A.xml",
    )
    grid = Grid.of_site(index.site)
    unmasked = read_scene(s, s.product_spec, ["red"], grid, mask=["fill"]).bands["red"]
    assert unmasked[10, 10] == pytest.approx(0.4338, abs=1e-6)
    masked = read_scene(s, s.product_spec, ["red"], grid).bands["red"]
    assert np.isnan(masked[10, 10]), "SCL 9 (cloud high probability) is masked by default"


def test_sentinel2_offset_by_date_without_metadata(real_dir, tmp_path):
    s2 = real_dir / "stactools-sentinel2"
    site = tmp_path / "s2"
    site.mkdir()
    for name in ("T29UNU_20221005T115411_B04_60m.jp2", "T29UNU_20221005T115411_SCL_60m.jp2"):
        (site / name).symlink_to(s2 / name)
    with rasterio.open(s2 / "T29UNU_20221005T115411_B04_60m.jp2") as ds:
        t, crs = ds.transform, ds.crs.to_string()
    w, n = t.c + 905 * t.a, t.f + 905 * t.e
    write_site_json(site, bbox=[w, n - 21 * 60, w + 21 * 60, n], crs=crs, resolution=60)
    s = scan_site(site).scenes[0]
    # acquired 2022-10-05, after baseline 04.00 (2022-01-25): the date rule gives the same -1000
    assert (s.extra["offset"], s.extra["offset_source"]) == (-1000.0, "acquisition date")


def test_real_modis_ndvi_and_already_scaled_files(real_dir, tmp_path):
    src = real_dir / "modistsp"
    site = tmp_path / "modis"
    site.mkdir()
    for name in ("MOD13A1_NDVI_2016_001.tif", "MOD13A1_NDVI_2016_177.tif", "MOD13A1_NDVI_2016_337.tif"):
        (site / name).symlink_to(src / name)
    with rasterio.open(src / "MOD13A1_NDVI_2016_001.tif") as ds:
        b, dn = ds.bounds, ds.read(1)
        write_site_json(site, bbox=[b.left, b.bottom, b.right, b.top], crs=ds.crs.to_wkt(), shape=[ds.height, ds.width])
    index = scan_site(site)
    assert sorted(str(s.date) for s in index.scenes) == ["2016-01-01", "2016-06-25"]
    reasons = {p.path: p.reason for p in index.problems}
    assert "already-scaled" in reasons["MOD13A1_NDVI_2016_337.tif"]
    jan = next(s for s in index.scenes if s.date.month == 1)
    ndvi = read_scene(jan, jan.product_spec, ["ndvi"], Grid.of_site(index.site)).bands["ndvi"]
    good = np.argwhere(dn != 32767)[0]
    assert ndvi[tuple(good)] == pytest.approx(dn[tuple(good)] * 1e-4, abs=1e-6)
    assert np.isnan(ndvi[dn == 32767]).all(), "MODIStsp fill 32767 is masked"


def test_legacy_and_level1_products_are_reported(real_dir, tmp_path):
    site = write_site_json(tmp_path / "legacy", bbox=[0, 0, 300, 300], crs="EPSG:32616", resolution=30)
    (site / "LE70230282011250EDC00_sr_band1.tif").symlink_to(
        real_dir / "bfastspatial" / "LE70230282011250EDC00_sr_band1.tif"
    )
    (site / "LC08_L1TP_098084_20210503_20210508_02_T1_B4.TIF").symlink_to(
        real_dir / "eo-datasets" / OLI / f"{OLI}_SR_B4.TIF"
    )
    index = scan_site(site)
    assert index.scenes == []
    reasons = {p.path: p.reason for p in index.problems}
    assert "pre-Collection" in reasons["LE70230282011250EDC00_sr_band1.tif"]
    assert "Level-1" in reasons["LC08_L1TP_098084_20210503_20210508_02_T1_B4.TIF"]
