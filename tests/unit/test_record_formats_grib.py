"""ERA5-Land as GRIB from the CDS, read through ecCodes: one file holding many months and variables (one
message each), recognised by its content, each month a scene on the site grid.

The test file is written with ecCodes itself (tests/formats.py) from physical values; GRIB packs them with
16 bits over each message's own range, so a value comes back to within (max - min) / 2**16 of what was
written. Expected by hand: t2m 275.0 K in January (one cell missing), 277.5 K in February, 272.0 K in March,
over a field with one 280.0 K corner (range 5-8 K: packing error < 2e-4 K); tp 0.002 m per day everywhere
(a constant field packs exactly)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from reviewer.record.decode import Grid, read_scene
from reviewer.record.scan import scan_site
from tests.conftest import write_site_json
from tests.formats import write_era5_land_grib

LAT = np.round(np.arange(46.0, 45.45, -0.1), 1)[:6]  # 46.0 .. 45.5, cell centres
LON = np.round(np.arange(9.0, 9.55, 0.1), 1)[:6]  # 9.0 .. 9.5
MONTHS = [dt.date(2023, 1, 1), dt.date(2023, 2, 1), dt.date(2023, 3, 1)]


def _era5(site, name="data_0.grib"):
    t2m = np.full((3, 6, 6), 275.0)
    t2m[1], t2m[2] = 277.5, 272.0
    t2m[:, 5, 5] = 280.0  # a warm corner (south-east), so the fields are not constant
    t2m[0, 0, 0] = np.nan
    tp = np.full((3, 6, 6), 0.002)
    return write_era5_land_grib(site / name, MONTHS, LAT, LON, {167: t2m, 228: tp})


def test_cds_grib_months_are_scenes_in_kelvin(tmp_path):
    site = write_site_json(tmp_path / "s", bbox=[8.95, 45.45, 9.55, 46.05], crs="EPSG:4326", resolution=0.1)
    _era5(site)
    index = scan_site(site)
    assert index.problems == []
    assert [(s.scene_id, s.date, sorted(s.files)) for s in index.scenes] == [
        ("ERA5-Land_monthly_202301", dt.date(2023, 1, 1), ["t2m", "tp"]),
        ("ERA5-Land_monthly_202302", dt.date(2023, 2, 1), ["t2m", "tp"]),
        ("ERA5-Land_monthly_202303", dt.date(2023, 3, 1), ["t2m", "tp"]),
    ]
    grid = Grid.of_site(index.site)
    jan, feb, mar = index.scenes
    b = read_scene(jan, jan.product_spec, ["temperature_2m", "precipitation"], grid).bands
    t = b["temperature_2m"]
    assert np.isnan(t[0, 0]) and np.isfinite(t).sum() == 35  # the missing cell, north-west
    assert t[3, 3] == pytest.approx(275.0, abs=2e-4) and t[5, 5] == pytest.approx(280.0, abs=2e-4)
    assert np.allclose(b["precipitation"], 0.002, atol=1e-7)
    assert read_scene(feb, feb.product_spec, ["temperature_2m"], grid).bands["temperature_2m"][0, 0] == pytest.approx(
        277.5, abs=2e-4
    )
    assert read_scene(mar, mar.product_spec, ["temperature_2m"], grid).bands["temperature_2m"][2, 4] == pytest.approx(
        272.0, abs=2e-4
    )


def test_cds_grib_onto_a_utm_site(tmp_path):
    """A 4 x 4 km UTM site inside the cell centred on 9.2 E 45.8 N: every pixel reads that cell (272.0 K in
    March), one file with 3 months x 2 variables landing on the site grid."""
    from rasterio.warp import transform

    (x,), (y,) = transform("EPSG:4326", "EPSG:32632", [9.2], [45.8])
    site = write_site_json(
        tmp_path / "u", bbox=[x - 2000, y - 2000, x + 2000, y + 2000], crs="EPSG:32632", resolution=1000
    )
    _era5(site, "adaptor.mars.internal-1700000000.123-4567.grib")
    index = scan_site(site)
    assert len(index.scenes) == 3 and index.problems == []
    mar = index.scenes[2]
    got = read_scene(mar, mar.product_spec, ["temperature_2m"], Grid.of_site(index.site)).bands["temperature_2m"]
    assert got.shape == (4, 4) and np.allclose(got, 272.0, atol=2e-4)


def test_grib_of_another_parameter_and_a_cut_grib_are_named(tmp_path):
    site = write_site_json(tmp_path / "s", bbox=[8.95, 45.45, 9.55, 46.05], crs="EPSG:4326", resolution=0.1)
    write_era5_land_grib(site / "sst.grib", MONTHS, LAT, LON, {34: np.full((3, 6, 6), 290.0)})  # 34 = sst
    whole = _era5(site, "era5.grib").read_bytes()
    (site / "era5.grib").unlink()
    (site / "cut.grib").write_bytes(whole[: len(whole) // 3 + 10])
    index = scan_site(site)
    reasons = {p.path.split("::")[0]: p.reason for p in index.problems}
    assert "no product in the catalog" in reasons["sst.grib"]
    assert "cannot read this GRIB file" in reasons["cut.grib"]
