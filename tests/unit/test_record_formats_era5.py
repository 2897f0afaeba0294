"""ERA5-Land as the CDS delivers it: one netCDF file holding many months and variables, recognised by its
content (any file name), each month a scene on the site grid.

Expected by hand from the packing attributes: t2m = DN x 0.001 + 270.0 K (DN 5000 -> 275.0 K, 7500 ->
277.5 K), tp = DN x 1e-6 + 0.0 m per day (DN 2000 -> 0.002), _FillValue -32767 -> masked."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from reviewer.record.decode import Grid, read_scene
from reviewer.record.scan import scan_site
from tests.conftest import write_site_json
from tests.formats import write_era5_land_nc

LAT = np.round(np.arange(46.0, 45.45, -0.1), 1)[:6]  # 46.0 .. 45.5, cell centres
LON = np.round(np.arange(9.0, 9.55, 0.1), 1)[:6]  # 9.0 .. 9.5
MONTHS = [dt.date(2023, 1, 1), dt.date(2023, 2, 1), dt.date(2023, 3, 1)]


def _era5(site):
    t2m = np.full((3, 6, 6), 5000, np.int16)
    t2m[1], t2m[2] = 7500, 2000
    t2m[0, 0, 0] = -32767
    tp = np.full((3, 6, 6), 2000, np.int16)
    return write_era5_land_nc(
        site / "adaptor.mars.internal-1700000000.123-4567.nc",
        MONTHS,
        LAT,
        LON,
        {"t2m": (t2m, 0.001, 270.0, "K"), "tp": (tp, 1e-6, 0.0, "m")},
    )


def test_cds_netcdf_months_are_scenes_in_kelvin(tmp_path):
    # a lon/lat site on the ERA5 grid itself: 6 x 6 cells of 0.1 degree
    site = write_site_json(tmp_path / "s", bbox=[8.95, 45.45, 9.55, 46.05], crs="EPSG:4326", resolution=0.1)
    _era5(site)
    index = scan_site(site)
    assert index.problems == []
    assert [(s.scene_id, s.date) for s in index.scenes] == [
        ("ERA5-Land_monthly_202301", dt.date(2023, 1, 1)),
        ("ERA5-Land_monthly_202302", dt.date(2023, 2, 1)),
        ("ERA5-Land_monthly_202303", dt.date(2023, 3, 1)),
    ]
    grid = Grid.of_site(index.site)
    jan, feb, _ = index.scenes
    b = read_scene(jan, jan.product_spec, ["temperature_2m", "precipitation"], grid).bands
    assert b["temperature_2m"][3, 3] == pytest.approx(275.0, abs=1e-3) and np.isnan(b["temperature_2m"][0, 0])
    assert b["precipitation"][2, 2] == pytest.approx(0.002, abs=1e-7)
    f = read_scene(feb, feb.product_spec, ["temperature_2m"], grid).bands["temperature_2m"]
    assert f[0, 0] == pytest.approx(277.5, abs=1e-3)


def test_cds_netcdf_onto_a_utm_site(tmp_path):
    from rasterio.warp import transform

    (x,), (y,) = transform("EPSG:4326", "EPSG:32632", [9.2], [45.8])  # inside the cell centred on 9.2 E 45.8 N
    site = write_site_json(
        tmp_path / "u", bbox=[x - 2000, y - 2000, x + 2000, y + 2000], crs="EPSG:32632", resolution=1000
    )
    _era5(site)
    index = scan_site(site)
    mar = index.scenes[2]
    got = read_scene(mar, mar.product_spec, ["temperature_2m"], Grid.of_site(index.site)).bands["temperature_2m"]
    assert got.shape == (4, 4) and np.allclose(got, 272.0, atol=1e-3)


def test_netcdf_of_another_product_is_named(tmp_path):
    site = write_site_json(tmp_path / "s", bbox=[8.95, 45.45, 9.55, 46.05], crs="EPSG:4326", resolution=0.1)
    write_era5_land_nc(site / "sst.nc", MONTHS, LAT, LON, {"sst": (np.zeros((3, 6, 6), np.int16), 0.01, 280.0, "K")})
    (site / "cut.nc").write_bytes(b"CDF\x02\x00\x00")
    reasons = {p.path: p.reason for p in scan_site(site).problems}
    assert "no product in the catalog" in reasons["sst.nc"] and "cannot read" in reasons["cut.nc"]


def test_cds_netcdf_one_longitude_wide_gets_a_grid(tmp_path):
    # a CDS download of a one-pixel-wide box: one longitude (9.2 E), three latitudes 46.0, 45.9, 45.8 N;
    # GDAL gives no geotransform for it. The column is 0.1 degree wide like the latitude spacing, so a
    # lon/lat site on the same cells reads one value per row: DN 5000, 6000, 7000 -> 275, 276, 277 K.
    site = write_site_json(tmp_path / "s", bbox=[9.15, 45.75, 9.25, 46.05], crs="EPSG:4326", resolution=0.1)
    t2m = np.array([5000, 6000, 7000], np.int16).reshape(1, 3, 1).repeat(3, axis=0)
    tp = np.full((3, 3, 1), 2000, np.int16)
    lat, lon = np.array([46.0, 45.9, 45.8], np.float32), np.array([9.2], np.float32)
    write_era5_land_nc(
        site / "one_column.nc", MONTHS, lat, lon, {"t2m": (t2m, 0.001, 270.0, "K"), "tp": (tp, 1e-6, 0.0, "m")}
    )
    index = scan_site(site)
    assert index.problems == [] and len(index.scenes) == 3
    jan = index.scenes[0]
    got = read_scene(jan, jan.product_spec, ["temperature_2m"], Grid.of_site(index.site)).bands["temperature_2m"]
    assert got.shape == (3, 1) and np.allclose(got[:, 0], [275.0, 276.0, 277.0], atol=1e-3)


def test_cds_netcdf_of_a_single_cell_is_placed_on_the_era5_land_grid(tmp_path):
    # one latitude and one longitude: no spacing in the file, so ERA5-Land's native 0.1 degree cell
    # centred on 9.0 E 46.0 N (8.95..9.05 E, 45.95..46.05 N). A row of ten 0.02 degree cells from 8.90 to
    # 9.10 E: the two at each end (centres 8.91, 8.93, 9.07, 9.09) lie outside it (no data), the four
    # centred 8.97 .. 9.03 inside (the two centred on its edges are not asserted).
    site = write_site_json(tmp_path / "s", bbox=[8.9, 45.98, 9.1, 46.0], crs="EPSG:4326", resolution=0.02)
    one = np.full((3, 1, 1), 5000, np.int16)
    lat, lon = np.array([46.0], np.float32), np.array([9.0], np.float32)
    write_era5_land_nc(
        site / "one_cell.nc", MONTHS, lat, lon, {"t2m": (one, 0.001, 270.0, "K"), "tp": (one, 1e-6, 0.0, "m")}
    )
    index = scan_site(site)
    assert index.problems == [] and len(index.scenes) == 3
    jan = index.scenes[0]
    row = read_scene(jan, jan.product_spec, ["temperature_2m"], Grid.of_site(index.site)).bands["temperature_2m"][0]
    assert row.shape == (10,)
    assert np.isnan(row[:2]).all() and np.isnan(row[-2:]).all()
    assert np.allclose(row[3:7], 275.0, atol=1e-3)
