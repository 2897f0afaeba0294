"""The synthetic demo site: formats, names, QA codes, radiometry, determinism and the planted truth."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
import rasterio

from reviewer.record.catalog import catalog
from reviewer.record.stack import harmonization
from reviewer.record.synthetic import BANDS, build_model, make_demo_site
from reviewer.schemas import validate
from tests.sites import RECIPES, make_site

KW = RECIPES["full"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return make_site(tmp_path_factory.mktemp("demo") / "site", "full")


@pytest.fixture(scope="module")
def truth(site: Path) -> dict:
    return json.loads((site / "truth.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def model():
    return build_model(seed=KW["seed"], size=KW["size"], start=KW["start"], end=KW["end"])


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _read(path: Path) -> np.ndarray:
    with rasterio.open(path) as ds:
        return ds.read(1)


def _scene_files(site: Path, scene_id: str, band: str) -> Path:
    return site / "landsat" / scene_id / f"{scene_id}_{band}.TIF"


def test_determinism_same_seed_same_bytes_other_seed_differs(tmp_path):
    # every format: Landsat GeoTIFF, S2 SAFE/JP2 (2022) and STAC/COG (2023), MODIS HDF4, VIIRS HDF5, netCDF
    kw = dict(size=32, start=2022, end=2023, scenes_per_year=2)
    a = _hashes(make_demo_site(tmp_path / "a", seed=3, **kw))
    b = _hashes(make_demo_site(tmp_path / "other folder" / "b", seed=3, workers=2, **kw))  # any folder, workers
    c = _hashes(make_demo_site(tmp_path / "c", seed=4, **kw))
    assert a == b
    assert {Path(k).suffix for k in a} >= {".TIF", ".jp2", ".tif", ".json", ".hdf", ".h5", ".nc", ".xml"}
    assert a != c
    wc = next(k for k in a if "ESA_WorldCover" in k)
    assert a[wc] != c[wc]  # same name, different planted geometry
    sr_a = {v for k, v in a.items() if "_SR_B" in k}
    sr_c = {v for k, v in c.items() if "_SR_B" in k}
    assert sr_a and not sr_a & sr_c


def _sds(path: Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """name -> (numpy dtype name, shape) of every SDS of an HDF4 file (pyhdf) or HDF5 grid (h5py)."""
    if path.suffix == ".hdf":
        from pyhdf.SD import SD

        sd = SD(str(path))
        try:
            return {name: (sd.select(name)[:].dtype.name, tuple(info[1])) for name, info in sd.datasets().items()}
        finally:
            sd.end()
    import h5py

    out = {}
    with h5py.File(path, "r") as f:
        for grid in f["HDFEOS/GRIDS"].values():
            for name, ds in grid["Data Fields"].items():
                out[name] = (ds.dtype.name, ds.shape)
    return out


def _hdf4(path: Path, name: str) -> np.ndarray:
    from pyhdf.SD import SD

    sd = SD(str(path))
    try:
        return np.asarray(sd.select(name)[:])
    finally:
        sd.end()


def test_every_file_is_in_a_provider_format_the_catalog_knows(site):
    """Landsat and the references as GeoTIFF, Sentinel-2 as JPEG2000 in SAFE folders (or COGs beside a STAC
    item), MODIS as HDF4 and VIIRS as HDF5 granules with every SDS of the catalog's container by its real
    name and dtype, ERA5-Land as one netCDF: no file named in the demo's own per-layer GeoTIFF pattern."""
    cat = catalog()
    seen = set()
    stac_dirs = {p.parent for p in (site / "sentinel2").glob("*/*.json")}
    rasters = sorted(p for p in site.rglob("*") if p.suffix.lower() in (".tif", ".tiff", ".jp2"))
    assert len(rasters) > 900
    for path in rasters:
        if path.parent in stac_dirs:
            continue  # B04.tif ...: named by the STAC item, not by the file name
        m = cat.match(path.name)
        assert m is not None, path.name
        key = (m.product.id, m.band)
        if key in seen:
            continue
        seen.add(key)
        spec = m.product.bands[m.band]
        with rasterio.open(path) as ds:
            assert ds.dtypes[0] == spec.dtype, (path.name, ds.dtypes[0], spec.dtype)
            assert ds.crs.to_epsg() == 32633
            if m.product.id == "sentinel2_msi_l2a":
                assert path.suffix == ".jp2" and "IMG_DATA" in path.parts
                assert ds.res[0] == m.product.raw["native_resolution_m"][m.band]
    assert stac_dirs
    for granule in sorted(site.glob("modis/*.hdf")) + sorted(site.glob("viirs/*.h5")):
        box = cat.match_container(granule.name)
        assert box is not None, granule.name
        if (box.product.id, "container") in seen:
            continue
        seen.add((box.product.id, "container"))
        sds = _sds(granule)
        for token, name in box.layers.items():
            assert sds[name][0] == box.product.bands[token].dtype, (granule.name, name, sds[name])
    assert not [p.name for p in site.rglob("*") if p.name.endswith(("_NDVI.tif", "_pixel_reliability.tif"))]
    assert [p.name for p in (site / "era5").iterdir()] == ["reanalysis-era5-land-monthly-means_t2m_tp.nc"]
    products = {p for p, _ in seen}
    for expected in (
        "landsat5_tm_c2l2",
        "landsat7_etm_c2l2",
        "landsat8_oli_c2l2",
        "landsat9_oli2_c2l2",
        "sentinel2_msi_l2a",
        "modis_terra_mod13q1",
        "modis_aqua_myd13q1",
        "viirs_npp_vnp13a1",
        "esa_worldcover",
        "hansen_gfc_lossyear",
    ):
        assert expected in products
    # Withheld products only under reference/.
    for path in rasters:
        m = cat.match(path.name)
        assert m is None or m.product.record or path.parent.name == "reference"


def test_site_json_and_boundary(site, truth):
    doc = json.loads((site / "site.json").read_text())
    validate(doc, "site")
    assert doc["crs"] == "EPSG:32633" and doc["resolution"] == 30 and doc["shape"] == [64, 64]
    w, s, e, n = doc["bbox"]
    assert (e - w, n - s) == (64 * 30, 64 * 30)
    gj = json.loads((site / doc["boundary"]).read_text())
    ring = np.array(gj["features"][0]["geometry"]["coordinates"][0])
    assert 10 < ring[:, 0].min() < ring[:, 0].max() < 20 and 45 < ring[:, 1].min() < ring[:, 1].max() < 52
    validate(truth, "truth")
    assert truth["site_id"] == doc["id"]


def test_planted_water_qa_codes_and_lake_area(site, truth):
    scenes = {s["id"]: s for s in truth["landsat"]["scenes"]}
    clear = truth["landsat"]["clear_scenes"]
    tm = [i for i in clear if i.startswith(("LT05", "LE07"))]
    oli = [i for i in clear if i.startswith(("LC08", "LC09"))]
    assert tm and oli
    lake = truth["changes"]["lake"]
    pixel_km2 = truth["grid"]["pixel_area_km2"]
    assert pixel_km2 == pytest.approx(30 * 30 / 1e6)
    for sid, water_code, clear_code in ((tm[0], 5504, 5440), (oli[0], 21952, 21824)):
        qa = _read(_scene_files(site, sid, "QA_PIXEL"))
        year = scenes[sid]["date"][:4]
        water = (qa & (1 << 7)) > 0
        assert set(np.unique(qa)) <= {water_code, clear_code}
        assert (qa[water] == water_code).all()
        # Lake area of the year = water pixels of a clear scene x pixel area.
        assert water.sum() * pixel_km2 == pytest.approx(lake["area_km2_by_year"][year], abs=1e-9)
        assert water.sum() == lake["pixels_by_year"][year]
    # TM/ETM+ water has the clear bit unset, OLI water has it set (the real-data trap).
    assert not (5504 & (1 << 6)) and (21952 & (1 << 6))
    # Lake trend: linear growth between start and end years.
    a, b = lake["start_year"], lake["end_year"]
    areas = lake["area_km2_by_year"]
    assert areas[str(b)] > areas[str(a)]
    slope = np.polyfit(range(a, b + 1), [areas[str(y)] for y in range(a, b + 1)], 1)[0]
    assert slope == pytest.approx(lake["trend_km2_per_year"], rel=1e-3)


def test_cloud_shadow_and_cirrus_codes(site, truth):
    allowed_tm = {5440, 5504, 13664, 5378, 5506, 7440, 5896, 1}
    allowed_oli = {21824, 21952, 30048, 21762, 21890, 23888, 22280, 55052, 1}
    seen = set()
    cloudy = [s for s in truth["landsat"]["scenes"] if s["cloud_fraction"] > 0.05][:12]
    assert cloudy
    for s in cloudy:
        qa = _read(_scene_files(site, s["id"], "QA_PIXEL"))
        values = set(np.unique(qa).tolist())
        assert values <= (allowed_oli if s["sensor"].startswith("OLI") else allowed_tm), (
            s["id"],
            values,
        )
        seen |= values
        assert ((qa & 8) > 0).mean() == pytest.approx(s["cloud_fraction"], abs=1e-4)
        # Dilated cloud surrounds clouds.
        assert ((qa & 2) > 0).any()
    assert 5896 in seen or 22280 in seen


def test_cross_sensor_radiometry_inverse_roy(site, truth, model):
    scenes = {s["id"]: s for s in truth["landsat"]["scenes"]}
    clear = truth["landsat"]["clear_scenes"]
    picks = [i for i in clear if i.startswith("LT05")][:1] + [i for i in clear if i.startswith("LE07")][:1]
    picks += [i for i in clear if i.startswith("LC0")][:1]
    assert len(picks) == 3
    for sid in picks:
        d = dt.date.fromisoformat(scenes[sid]["date"])
        rho, cls, _ = model.surface(d)
        land = cls != 0
        oli = sid.startswith("LC0")
        names = (
            ["SR_B2", "SR_B3", "SR_B4", "SR_B5", "SR_B6", "SR_B7"]
            if oli
            else ["SR_B1", "SR_B2", "SR_B3", "SR_B4", "SR_B5", "SR_B7"]
        )
        for i, (band, name) in enumerate(zip(BANDS, names, strict=True)):
            dn = _read(_scene_files(site, sid, name))
            assert dn.min() >= 7273  # never below the documented valid range (rho >= 0)
            r = dn.astype(np.float64) * 2.75e-5 - 0.2
            if not oli:
                slope, icpt = harmonization()["bands"][band]
                r = slope * r + icpt
            err = r - rho[i]
            # Harmonising with Roy et al. OLS recovers the OLI surface on land, up to noise (sd 0.003 x slope).
            assert abs(err[land].mean()) < 0.001 and err[land].std() < 0.0035, (sid, band)


def test_slc_off_stripes_after_2003(site, truth):
    etm = [s for s in truth["landsat"]["scenes"] if s["sensor"] == "ETM+"]
    before = [s for s in etm if s["date"] <= "2003-05-31"]
    after = [s for s in etm if s["date"] > "2003-05-31"]
    assert before and after
    assert all(s["fill_fraction"] == 0 for s in before)
    for s in after[:5]:
        qa = _read(_scene_files(site, s["id"], "QA_PIXEL"))
        sr = _read(_scene_files(site, s["id"], "SR_B3"))
        fill = qa == 1
        assert 0.12 < fill.mean() < 0.35
        assert (sr[fill] == 0).all() and (sr[~fill] > 0).all()
        # stripes: many rows are partly filled
        assert (fill.any(axis=1) & ~fill.all(axis=1)).sum() > 10


def test_sentinel2_offset_and_metadata(site, truth, model):
    prods = truth["sentinel2"]
    safe = [p for p in prods if p["layout"] == "SAFE"]
    new = [p for p in safe if p["date"] >= "2022-01-25"]
    old = [p for p in safe if p["date"] < "2022-01-25"]
    assert new and old
    for p in new[:2] + old[:2]:
        folder = site / p["folder"]
        assert folder.name == f"{p['id']}.SAFE"
        assert re.match(r"^S2[AB]_MSIL2A_\d{8}T\d{6}_N\d{4}_R\d{3}_T33UXP_\d{8}T\d{6}\.SAFE$", folder.name)
        mtd = (folder / "MTD_MSIL2A.xml").read_text()
        assert "<BOA_QUANTIFICATION_VALUE" in mtd and "<SPACECRAFT_NAME>Sentinel-2" in mtd
        d = dt.date.fromisoformat(p["date"])
        img = next(folder.glob("GRANULE/*/IMG_DATA"))
        scl = _read(img / "R20m" / f"{p['scene']}_SCL_20m.jp2")
        b04 = _read(img / "R10m" / f"{p['scene']}_B04_10m.jp2").astype(float)
        assert b04.shape == (2 * scl.shape[0], 2 * scl.shape[1])  # 10 m band over the 20 m SCL
        assert not list(img.glob("R20m/*_B04_20m.jp2"))  # only the native copy
        assert f"IMG_DATA/R10m/{p['scene']}_B04_10m</IMAGE_FILE>" in mtd
        b04 = b04[::2, ::2]
        water = scl == 6
        if d >= dt.date(2022, 1, 25):
            assert "<PROCESSING_BASELINE>04.00</PROCESSING_BASELINE>" in mtd
            assert '<BOA_ADD_OFFSET band_id="3">-1000</BOA_ADD_OFFSET>' in mtd
            rho = (b04 - 1000) / 10000
        else:
            assert "BOA_ADD_OFFSET_VALUES_LIST" not in mtd
            rho = b04 / 10000
        if water.sum() > 5:  # water red reflectance ~0.03
            assert abs(np.median(rho[water]) - 0.03) < 0.01
        land = np.isin(scl, (4, 5))
        assert 0.0 < np.median(rho[land]) < 0.25


def test_sentinel2_from_2023_in_the_element84_cog_layout(site, truth):
    """Products from 2023 are COGs named B04.tif, SCL.tif ... beside a STAC item (pystac) whose properties
    carry the processing baseline, and whose asset hrefs name the files."""
    import pystac

    cog = [p for p in truth["sentinel2"] if p["layout"] == "STAC"]
    assert cog and all(p["date"] >= "2023-01-01" for p in cog)
    for p in cog[:2]:
        folder = site / p["folder"]
        item = pystac.Item.from_file(str(folder / f"{p['id']}.json"))
        assert item.id == p["id"] == p["scene"] and re.match(r"^S2[AB]_33UXP_\d{8}_0_L2A$", item.id)
        assert item.properties["s2:processing_baseline"] == "04.00"
        assert item.properties["earthsearch:boa_offset_applied"] is False
        names = sorted(Path(a.href).name for a in item.assets.values())
        assert names == sorted(f.name for f in folder.glob("*.tif"))
        with rasterio.open(folder / "B04.tif") as b04, rasterio.open(folder / "SCL.tif") as scl:
            assert (b04.res, scl.res) == ((10.0, 10.0), (20.0, 20.0))
            assert b04.profile["tiled"] and b04.profile["compress"] == "deflate"
            land = np.isin(scl.read(1), (4, 5))
            rho = (b04.read(1)[::2, ::2].astype(float) - 1000) / 10000
        assert 0.0 < np.median(rho[land]) < 0.25


def test_modis_and_era5_values(site, truth):
    nd = sorted((site / "modis").glob("MOD13Q1.A*.hdf"))
    assert nd[0].name.startswith("MOD13Q1.A2000049.") and nd[0].name.endswith(".061." + nd[0].name[-17:-4] + ".hdf")
    myd = sorted((site / "modis").glob("MYD13Q1.A*.hdf"))
    assert myd[0].name.startswith("MYD13Q1.A2002185.")
    summer = [p for p in nd if ".A2010193." in p.name][0]
    v = _hdf4(summer, "250m 16 days NDVI") * 1e-4
    r = _hdf4(summer, "250m 16 days pixel reliability")
    assert 0.4 < np.median(v[r == 0]) < 0.95
    assert set(np.unique(r)) <= {-1, 0, 1, 2, 3}
    viirs = sorted((site / "viirs").glob("VNP13A1.A*.002.*.h5"))
    assert viirs and "500 m 16 days NDVI" in _sds(viirs[0])
    dy = truth["changes"]["drought"]
    assert dy["precip_below_1991_2020_mean"] and dy["lowest_greenness_year"] == dy["year"]
    from scipy.io import netcdf_file

    nc = netcdf_file(str(site / "era5" / "reanalysis-era5-land-monthly-means_t2m_tp.nc"), mmap=False)
    when = [dt.datetime.fromtimestamp(int(t), dt.UTC) for t in nc.variables["valid_time"][:]]
    assert nc.variables["t2m"].units == b"K" and nc.variables["tp"].dimensions == (
        "valid_time",
        "latitude",
        "longitude",
    )
    months = [i for i, t in enumerate(when) if t.year == dy["year"]]
    assert [when[i].month for i in months] == list(range(1, 13))
    tp = [float(nc.variables["tp"][i].mean()) for i in months]
    nc.close()
    assert np.mean(tp) == pytest.approx(truth["climate"]["tp_annual_m_per_day"][str(dy["year"])], rel=1e-4)
    assert np.mean(tp) < truth["climate"]["tp_1991_2020_mean_m_per_day"]


def test_truth_regions_and_references(site, truth, model):
    ch = truth["changes"]
    masks = np.load(site / truth["masks_file"])
    clear = ch["forest_clearing"]
    assert clear["quadrant"] == "north-west"
    assert masks["clearing"].sum() == clear["pixels"]
    loss = _read(site / truth["withheld"]["hansen_lossyear"])
    assert (loss > 0).sum() == clear["pixels"]
    assert set(np.unique(loss[loss > 0])) == {clear["year"] - 2000}
    wc = _read(next((site / "landcover").glob("ESA_WorldCover_10m_2021_v200_*_Map.tif")))
    assert (wc == 80).sum() == ch["lake"]["pixels_by_year"]["2021"]
    assert (wc == 50).sum() == ch["built_up"]["pixels_by_year"]["2021"]
    # Regions do not overlap.
    names = ["lake_zone", "urban_zone", "clearing", "burn_1", "burn_2", "cropland", "stable"]
    total = sum(masks[k].astype(int) for k in names)
    assert total.max() == 1
    # Burns: the largest burn's year; NDVI back to pre-fire after recovery_years.
    burns = ch["burns"]
    assert ch["largest_burn_year"] == max(burns, key=lambda b: b["area_km2"])["year"]
    for b in burns:
        assert b["post_fire_ndvi"] < b["pre_fire_ndvi"] - 0.3
        assert b["post_fire_nbr"] < -0.3
    # Crop peak month is the month of maximum crop NDVI.
    months = ch["crop"]["ndvi_by_month"]
    assert int(max(months, key=months.get)) == ch["crop"]["peak_month"]
    # Built-up grows.
    bu = ch["built_up"]["area_km2_by_year"]
    assert bu[str(KW["end"])] > bu[str(KW["start"])]
    # The stable area has the same classes on every date.
    st = masks["stable"]
    assert (model.classes(dt.date(2000, 6, 1))[st] == model.classes(dt.date(2023, 6, 1))[st]).all()
    # Trap scenes exist and are recorded.
    ls = truth["landsat"]
    assert ls["t2_scenes"] and ls["offset_grid_scenes"] and ls["missed_cloud_scenes"]
    off = ls["offset_grid_scenes"][0]
    with rasterio.open(_scene_files(site, off, "QA_PIXEL")) as ds:
        assert ds.shape != (64, 64) and ds.crs.to_epsg() == 32633


def test_snow_variant_writes_mod10a1(tmp_path):
    out = make_site(tmp_path / "snow", "snow_variant")
    doc = json.loads((out / "site.json").read_text())
    assert doc["theme"] == "snow"
    truth = json.loads((out / "truth.json").read_text())
    snow = truth["changes"]["snow"]
    assert snow["mod10a1_winters"] and snow["trend_days_per_year"] < 0
    files = sorted((out / "modis").glob("MOD10A1.A*.hdf"))
    assert files and catalog().match_container(files[0].name).product.id == "modis_terra_mod10a1"
    assert set(_sds(files[0])) == {"NDSI_Snow_Cover", "NDSI_Snow_Cover_Basic_QA", "NDSI_Snow_Cover_Algorithm_Flags_QA"}
    values = np.unique(np.concatenate([_hdf4(f, "NDSI_Snow_Cover").ravel() for f in files[:60]]))
    assert set(values.tolist()) <= set(range(0, 101)) | {237, 250}
    assert (values > 0).any() and (values <= 100).any()


def test_water_reads_alike_on_every_landsat_sensor(site, truth):
    """Open water (OLI-scale red 0.03, NIR 0.02) has NDVI (0.02 - 0.03) / 0.05 = -0.2 on OLI; TM and ETM+ must
    read about the same (the real record's cross-sensor differences are a few percent), not the -0.97 the
    land regression inverted on water gave: the demo's only sensor breaks are the planted ones."""
    clear = truth["landsat"]["clear_scenes"]
    bands = {"LT05": ("SR_B3", "SR_B4"), "LE07": ("SR_B3", "SR_B4"), "LC08": ("SR_B4", "SR_B5")}
    seen = {}
    for prefix, (red_band, nir_band) in bands.items():
        sid = next((i for i in clear if i.startswith(prefix)), None)
        if sid is None:
            continue
        qa = _read(_scene_files(site, sid, "QA_PIXEL"))
        water = (qa & (1 << 7)) > 0
        red = _read(_scene_files(site, sid, red_band))[water] * 2.75e-5 - 0.2
        nir = _read(_scene_files(site, sid, nir_band))[water] * 2.75e-5 - 0.2
        seen[prefix] = float(np.median((nir - red) / (nir + red)))
    assert {"LT05", "LC08"} <= set(seen)
    for prefix, ndvi in seen.items():
        assert ndvi == pytest.approx(-0.2, abs=0.06), (prefix, ndvi)
