"""MODIS as LP DAAC distributes it (one HDF4 granule, SDS by their real names, the sinusoidal grid and tile
in StructMetadata.0), AppEEARS GeoTIFF exports, and VIIRS HDF5. Test granules are written with pyhdf/h5py
from the product specifications (raw_record_facts.md 4-5) at the real layout with small arrays (48 x 48
cells over the whole 1111.95 km tile, so a cell is 23165.6 m).

Expected values by hand: NDVI = DN x 0.0001 (fill -3000, valid -2000..10000); LST = DN x 0.02 K (fill 0);
snow NDSI_Snow_Cover 0-100 with special codes 200+ masked; BurnDate day of year, -2 (water) out of range."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
import rasterio
from affine import Affine

from reviewer.record.decode import Grid, read_scene
from reviewer.record.scan import scan_site
from tests.conftest import write_site_json
from tests.formats import SINU, TILE_M, tile_corner, write_modis_hdf4, write_viirs_h5

N = 48
CELL = TILE_M / N
MOD13 = "MOD13Q1.A2023241.h08v05.061.2023258002222"
VI_GRID = "MODIS_Grid_16DAY_250m_500m_VI"


def _tile_site(path, h=8, v=5, cells=N):
    """A site on the tile's own sinusoidal grid (the first `cells` x `cells` cells)."""
    ulx, uly = tile_corner(h, v)
    return write_site_json(
        path, bbox=[ulx, uly - cells * CELL, ulx + cells * CELL, uly], crs=SINU, shape=[cells, cells]
    )


def _mod13(path, ndvi=None, rel=None):
    ndvi = np.full((N, N), 5000, np.int16) if ndvi is None else ndvi
    rel = np.zeros((N, N), np.int8) if rel is None else rel
    attrs = {"_FillValue": -3000, "valid_range": [-2000, 10000], "scale_factor": 10000.0, "units": "NDVI"}
    return write_modis_hdf4(
        path,
        VI_GRID,
        8,
        5,
        {
            "250m 16 days NDVI": (ndvi, attrs),
            "250m 16 days EVI": (np.full((N, N), 2500, np.int16), attrs),
            "250m 16 days VI Quality": (np.zeros((N, N), np.uint16), {"_FillValue": 65535}),
            "250m 16 days pixel reliability": (rel, {"_FillValue": -1}),
        },
    )


def test_mod13q1_hdf4_as_distributed(tmp_path):
    site = _tile_site(tmp_path / "s")
    ndvi = np.full((N, N), 5000, np.int16)
    ndvi[0, 0], ndvi[0, 1], ndvi[1, 1] = -3000, 10001, -2000
    rel = np.zeros((N, N), np.int8)
    rel[0, 0], rel[2, 2] = -1, 3  # fill, cloudy
    _mod13(site / f"{MOD13}.hdf", ndvi, rel)
    index = scan_site(site)
    assert index.problems == []
    (scene,) = index.scenes
    assert (scene.product, scene.location, scene.date) == ("modis_terra_mod13q1", "h08v05", dt.date(2023, 8, 29))
    assert scene.files["NDVI"] == f"{MOD13}.hdf::250m 16 days NDVI"
    assert scene.valid_fraction == pytest.approx((N * N - 1) / (N * N))
    assert scene.clear_fraction == pytest.approx((N * N - 2) / (N * N))
    data = read_scene(scene, scene.product_spec, ["ndvi", "evi"], Grid.of_site(index.site))
    got = data.bands["ndvi"]
    assert got[5, 5] == pytest.approx(0.5, abs=1e-6) and got[1, 1] == pytest.approx(-0.2, abs=1e-6)
    assert np.isnan(got[0, 0]) and np.isnan(got[0, 1]) and np.isnan(got[2, 2])
    assert data.bands["evi"][7, 7] == pytest.approx(0.25, abs=1e-6)


def test_mod11a2_lst_and_its_qc(tmp_path):
    site = _tile_site(tmp_path / "s")
    lst = np.full((N, N), 14500, np.uint16)
    lst[0, 0] = 0
    qc = np.zeros((N, N), np.uint8)
    qc[4, 4] = 0b10  # mandatory QA 2: not produced, cloud
    write_modis_hdf4(
        site / "MOD11A2.A2024001.h08v05.061.2024010101010.hdf",
        "MODIS_Grid_8Day_1km_LST",
        8,
        5,
        {
            "LST_Day_1km": (lst, {"_FillValue": 0, "scale_factor": 0.02, "units": "K"}),
            "QC_Day": (qc, {}),
            "LST_Night_1km": (np.full((N, N), 13500, np.uint16), {"_FillValue": 0}),
            "QC_Night": (np.zeros((N, N), np.uint8), {}),
        },
    )
    (scene,) = scan_site(site).scenes
    assert scene.date == dt.date(2024, 1, 1)
    data = read_scene(scene, scene.product_spec, ["lst", "lst_night"], Grid.of_site(scan_site(site).site))
    assert data.bands["lst"][9, 9] == pytest.approx(290.0, abs=1e-4)
    assert data.bands["lst_night"][9, 9] == pytest.approx(270.0, abs=1e-4)
    assert np.isnan(data.bands["lst"][0, 0]) and np.isnan(data.bands["lst"][4, 4])


def test_mod10a1_snow_special_codes(tmp_path):
    site = _tile_site(tmp_path / "s")
    snow = np.full((N, N), 55, np.uint8)
    snow[0, :6] = [250, 211, 237, 239, 255, 201]  # cloud, night, inland water, ocean, fill, no decision
    write_modis_hdf4(
        site / "MOD10A1.A2021032.h08v05.061.2021034050505.hdf",
        "MOD_Grid_Snow_500m",
        8,
        5,
        {
            "NDSI_Snow_Cover": (snow, {"_FillValue": 255, "valid_range": [0, 100], "missing_value": 200}),
            "NDSI_Snow_Cover_Basic_QA": (np.zeros((N, N), np.uint8), {"_FillValue": 255}),
            "NDSI_Snow_Cover_Algorithm_Flags_QA": (np.zeros((N, N), np.uint8), {}),
        },
    )
    (scene,) = scan_site(site).scenes
    assert scene.date == dt.date(2021, 2, 1)
    # cloud (1 pixel) of the valid ones; fill, night, water, no decision are not valid
    assert scene.cloud_fraction == pytest.approx(1 / (N * N - 5))
    got = read_scene(scene, scene.product_spec, ["snow"], Grid.of_site(scan_site(site).site)).bands["snow"]
    assert got[3, 3] == 55 and np.isnan(got[0, :6]).all()


def test_mcd64a1_burn_date(tmp_path):
    site = _tile_site(tmp_path / "s")
    burn = np.zeros((N, N), np.int16)
    burn[10, 10], burn[11, 11], burn[12, 12] = 150, -2, -1
    write_modis_hdf4(
        site / "MCD64A1.A2020153.h08v05.061.2021309103000.hdf",
        "MOD_Grid_Monthly_500m_DB_BA",
        8,
        5,
        {"Burn Date": (burn, {"_FillValue": -1}), "QA": (np.full((N, N), 3, np.uint8), {})},
    )
    (scene,) = scan_site(site).scenes
    assert not scene.record, "MCD64A1 is a withheld reference"
    got = read_scene(scene, scene.product_spec, ["burn_date"], Grid.of_site(scan_site(site).site)).bands["burn_date"]
    assert (got[10, 10], got[0, 0]) == (150, 0)
    assert np.isnan(got[11, 11]) and np.isnan(got[12, 12])


def test_granule_read_onto_a_utm_site(tmp_path):
    """A 10 x 10 km UTM site inside h08v05 reads the granule through the sinusoidal -> UTM lookup."""
    ulx, uly = tile_corner(8, 5)
    from rasterio.warp import transform

    (x,), (y,) = transform(SINU, "EPSG:32612", [ulx + 20.5 * CELL], [uly - 20.5 * CELL])
    site = write_site_json(
        tmp_path / "u", bbox=[x - 5000, y - 5000, x + 5000, y + 5000], crs="EPSG:32612", resolution=250
    )
    ndvi = np.full((N, N), 5000, np.int16)
    ndvi[20, 20] = 7000  # the cell under the site's centre
    _mod13(site / f"{MOD13}.hdf", ndvi)
    (scene,) = scan_site(site).scenes
    got = read_scene(scene, scene.product_spec, ["ndvi"], Grid.of_site(scan_site(site).site)).bands["ndvi"]
    assert got.shape == (40, 40) and got[20, 20] == pytest.approx(0.7, abs=1e-6)


def test_tile_in_name_must_match_struct_metadata(tmp_path):
    site = _tile_site(tmp_path / "s")
    _mod13(site / "MOD13Q1.A2023241.h09v05.061.2023258002222.hdf")  # grid says h08v05
    index = scan_site(site)
    (problem,) = index.problems
    assert "h09v05" in problem.reason and "h08v05" in problem.reason and index.scenes == []


def test_truncated_or_unknown_hdf_is_named(tmp_path):
    site = _tile_site(tmp_path / "s")
    path = _mod13(site / f"{MOD13}.hdf")
    cut = path.read_bytes()[:-3000]  # the download stopped 3000 bytes before the end
    path.write_bytes(cut)
    (site / "MOD09GA.A2023241.h08v05.061.2023243040404.hdf").write_bytes(b"\x0e\x03\x13\x01")
    (site / "granule.hdf").write_bytes(b"\x0e\x03\x13\x01")
    (site / "VNP13A1.A2020001.h08v05.002.2020017153000.h5").write_bytes(b"<html>")
    reasons = {p.path: p.reason for p in scan_site(site).problems}
    # named at scan time from the file's own data descriptors (every element's offset and length)
    assert reasons[f"{MOD13}.hdf"].startswith(f"truncated: the file has {len(cut)} bytes but its HDF4 data descriptors")
    assert "not in the catalog" in reasons["MOD09GA.A2023241.h08v05.061.2023243040404.hdf"]
    assert "unknown name" in reasons["granule.hdf"]
    assert "not an HDF5 file" in reasons["VNP13A1.A2020001.h08v05.002.2020017153000.h5"]


def test_appeears_geotiff_exports_with_their_qc(tmp_path):
    site = _tile_site(tmp_path / "s")
    ulx, uly = tile_corner(8, 5)
    profile = dict(driver="GTiff", width=N, height=N, count=1, crs=SINU, transform=Affine(CELL, 0, ulx, 0, -CELL, uly))
    lst = np.full((N, N), 15000, np.uint16)
    lst[1, 1] = 0
    for layer, arr in (("LST_Day_1km", lst), ("QC_Day", np.zeros((N, N), np.uint8))):
        with rasterio.open(
            site / f"MOD11A2.061_{layer}_doy2024001_aid0001.tif", "w", dtype=arr.dtype.name, **profile
        ) as d:
            d.write(arr, 1)
    index = scan_site(site)
    assert index.problems == []
    (scene,) = index.scenes
    assert (scene.scene_id, scene.product, scene.date) == (
        "MOD11A2.061_doy2024001_aid0001",
        "modis_terra_mod11a2",
        dt.date(2024, 1, 1),
    )
    got = read_scene(scene, scene.product_spec, ["lst"], Grid.of_site(index.site)).bands["lst"]
    assert got[5, 5] == pytest.approx(300.0, abs=1e-4) and np.isnan(got[1, 1])


def test_viirs_hdf5_vnp13a1_and_vnp21a2(tmp_path):
    site = _tile_site(tmp_path / "s")
    ndvi = np.full((N, N), 6000, np.int16)
    ndvi[0, 0] = -15000
    rel = np.zeros((N, N), np.uint8)
    rel[3, 3] = 9  # cloud
    write_viirs_h5(
        site / "VNP13A1.A2020001.h08v05.002.2020017153000.h5",
        "VIIRS_Grid_16Day_VI_500m",
        8,
        5,
        {
            "500 m 16 days NDVI": (ndvi, {"_FillValue": -15000, "scale_factor": 10000.0}),
            "500 m 16 days EVI": (np.full((N, N), 3000, np.int16), {}),
            "500 m 16 days EVI2": (np.full((N, N), 3100, np.int16), {}),
            "500 m 16 days pixel reliability": (rel, {}),
            "500 m 16 days VI Quality": (np.zeros((N, N), np.uint16), {}),
        },
    )
    write_viirs_h5(
        site / "VNP21A2.A2020001.h08v05.002.2020017153000.h5",
        "VIIRS_Grid_8Day_1km_LST",
        8,
        5,
        {
            "LST_Day_1KM": (np.full((N, N), 15500, np.uint16), {"_FillValue": 0}),
            "QC_Day": (np.zeros((N, N), np.uint8), {}),
            "LST_Night_1KM": (np.full((N, N), 14000, np.uint16), {}),
            "QC_Night": (np.zeros((N, N), np.uint8), {}),
        },
    )
    index = scan_site(site)
    assert index.problems == []
    by = {s.product: s for s in index.scenes}
    assert set(by) == {"viirs_npp_vnp13a1", "viirs_npp_vnp21a2"}
    grid = Grid.of_site(index.site)
    v = read_scene(by["viirs_npp_vnp13a1"], by["viirs_npp_vnp13a1"].product_spec, ["ndvi", "evi2"], grid).bands
    assert v["ndvi"][8, 8] == pytest.approx(0.6, abs=1e-6) and v["evi2"][8, 8] == pytest.approx(0.31, abs=1e-6)
    assert np.isnan(v["ndvi"][0, 0]) and np.isnan(v["ndvi"][3, 3])
    t = read_scene(by["viirs_npp_vnp21a2"], by["viirs_npp_vnp21a2"].product_spec, ["lst"], grid).bands["lst"]
    assert t[8, 8] == pytest.approx(310.0, abs=1e-4)
