"""A folder of downloads without site.json: `reviewer scan` indexes it on each scene's own extent and says
how to make a site; `reviewer site init` writes one (Landsat: its UTM zone at 30 m; Sentinel-2 only: 10 m;
a lon/lat box snapped outwards), which then scans. A lon/lat site without a resolution gets a hint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rasterio

from reviewer.cli import main
from reviewer.errors import SiteError
from reviewer.record.scan import scan_site
from reviewer.record.site import load_site
from reviewer.schemas import problems
from tests.conftest import write_site_json

TM = "LT05_L2SP_090084_19980308_20200909_02_T1"
ETM = "LE07_L2SP_090084_20210331_20210426_02_T1"
OLI = "LC08_L2SP_098084_20210503_20210508_02_T1"
S2 = "T29UNU_20221005T115411"


def _downloads(real_dir: Path, folder: Path, scenes=(TM, ETM)) -> Path:
    folder.mkdir()
    for s in scenes:
        (folder / s).symlink_to(real_dir / "eo-datasets" / s)
    return folder


def test_scan_without_site_json_indexes_scenes_and_says_how(real_dir, tmp_path, capsys):
    folder = _downloads(real_dir, tmp_path / "dl")
    index = scan_site(folder, allow_no_site=True)
    assert [s.scene_id for s in index.scenes] == [TM, ETM] and not index.site.placed
    # over the TM file's own 60 x 60 extent: its QA_PIXEL fill pixels (value 1), counted with rasterio
    with rasterio.open(real_dir / "eo-datasets" / TM / f"{TM}_QA_PIXEL.TIF") as ds:
        qa = ds.read(1)
    assert index.scenes[0].valid_fraction == pytest.approx(((qa & 1) == 0).sum() / 3600)
    code = main(["--db", str(tmp_path / "db.sqlite"), "scan", str(folder)])
    out = capsys.readouterr().out
    assert code == 0 and "no site.json" in out and f"reviewer site init {folder}" in out


def test_folder_with_nothing_of_the_record_is_still_an_error(tmp_path, capsys):
    (tmp_path / "readme.txt").write_text("hello")
    code = main(["--db", str(tmp_path / "db.sqlite"), "scan", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "no site.json" in err and err.count("\n") == 1


def test_site_init_from_landsat_common_footprint(real_dir, tmp_path, capsys):
    folder = _downloads(real_dir, tmp_path / "gippsland")
    code = main(["site", "init", str(folder), "--theme", "forest", "--name", "Gippsland"])
    assert code == 0 and "30 m" in capsys.readouterr().out
    doc = json.loads((folder / "site.json").read_text())
    assert problems(doc, "site") == []
    assert (doc["crs"], doc["resolution"], doc["theme"], doc["id"]) == ("EPSG:32655", 30, "forest", "Gippsland")
    bounds = []
    for s in (TM, ETM):
        with rasterio.open(real_dir / "eo-datasets" / s / f"{s}_QA_PIXEL.TIF") as ds:
            bounds.append(ds.bounds)
    # the intersection of the two scene boxes, shrunk to whole 30 m cells of the TM grid
    w, s_, e, n = (
        max(b.left for b in bounds),
        max(b.bottom for b in bounds),
        min(b.right for b in bounds),
        min(b.top for b in bounds),
    )
    x0, y0 = bounds[0].left, bounds[0].top
    for got, edge, origin in zip(doc["bbox"], (w, s_, e, n), (x0, y0, x0, y0), strict=True):
        assert abs(got - edge) < 30 and (got - origin) % 30 == pytest.approx(0, abs=1e-6)
    assert doc["bbox"][0] >= w and doc["bbox"][2] <= e
    site = load_site(folder)
    assert site.shape == (round((doc["bbox"][3] - doc["bbox"][1]) / 30), round((doc["bbox"][2] - doc["bbox"][0]) / 30))


def test_site_init_with_lonlat_box_and_existing_site_kept(real_dir, tmp_path, capsys):
    folder = _downloads(real_dir, tmp_path / "dl")
    # inside both scenes (lon 148.49..151.19, lat -35.63..-33.60; a box at 147 E, 37.9 S missed them and
    # was accepted before: a box touching no scene is refused now)
    main(["site", "init", str(folder), "--bbox", "149.0", "-35.0", "149.1", "-34.9"])
    doc = json.loads((folder / "site.json").read_text())
    w, s, e, n = doc["bbox"]
    # 0.1 deg x 0.1 deg at 34.95 S is about 9.1 km x 11.1 km: the box snapped outwards to 30 m cells, in the
    # UTM zone of its centre: floor((149.05 + 180) / 6) + 1 = 55, south. 2 deg east of the zone's central
    # meridian the grid converges ~1.2 deg, so the box's UTM bounds are ~11.1 km x sin(1.2 deg) = 0.23 km wider
    # and ~9.1 km x sin(1.2 deg) = 0.19 km taller
    assert doc["crs"] == "EPSG:32755" and 9300 < e - w < 9450 and 11200 < n - s < 11350
    index = scan_site(folder)  # and the site scans: both scenes on its 30 m grid
    assert index.site.placed and [s.scene_id for s in index.scenes] == [TM, ETM]
    code = main(["site", "init", str(folder)])
    assert code == 2 and "already has a site.json" in capsys.readouterr().err


def test_site_init_sentinel2_only_is_10m(real_dir, tmp_path):
    folder = tmp_path / "s2"
    folder.mkdir()
    for band in ("B04", "SCL"):
        (folder / f"{S2}_{band}_60m.jp2").symlink_to(real_dir / "stactools-sentinel2" / f"{S2}_{band}_60m.jp2")
    main(["site", "init", str(folder)])
    doc = json.loads((folder / "site.json").read_text())
    with rasterio.open(real_dir / "stactools-sentinel2" / f"{S2}_SCL_60m.jp2") as ds:
        crs, b = ds.crs.to_string(), ds.bounds
    assert (doc["crs"], doc["resolution"]) == (crs, 10)
    assert doc["bbox"] == pytest.approx([b.left, b.bottom, b.right, b.top])


def test_scenes_of_different_places_need_a_box(real_dir, tmp_path, capsys):
    folder = _downloads(real_dir, tmp_path / "two", scenes=(TM, OLI))
    code = main(["site", "init", str(folder)])
    err = capsys.readouterr().err
    assert code == 2 and "--bbox" in err and not (folder / "site.json").exists()


def test_lonlat_site_without_resolution_gets_a_hint(tmp_path):
    site = write_site_json(tmp_path / "ll", bbox=[147.0, -37.9, 147.1, -37.8], crs="EPSG:4326")
    with pytest.raises(SiteError, match="resolution") as err:
        load_site(site)
    assert err.value.field == "resolution" and "site init" in err.value.message
    ok = write_site_json(tmp_path / "ll2", bbox=[147.0, -37.9, 147.1, -37.8], crs="EPSG:4326", resolution=0.001)
    assert load_site(ok).shape == (100, 100)


def test_site_init_for_modis_granules_with_a_box(tmp_path, capsys):
    import numpy as np

    from tests.formats import write_modis_hdf4

    folder = tmp_path / "modis"
    folder.mkdir()
    n = 48
    write_modis_hdf4(
        folder / "MOD13Q1.A2023241.h08v05.061.2023258002222.hdf",
        "MODIS_Grid_16DAY_250m_500m_VI",
        8,
        5,
        {
            "250m 16 days NDVI": (np.full((n, n), 5000, np.int16), {"_FillValue": -3000}),
            "250m 16 days pixel reliability": (np.zeros((n, n), np.int8), {"_FillValue": -1}),
        },
    )
    # a 0.2 x 0.2 degree box at 121 W 39.1 N (tile h08v05 spans about 129-116 W at that latitude):
    # UTM zone 10 N (126-120 W), at the product's 250 m
    assert main(["site", "init", str(folder), "--bbox", "-121.1", "39.0", "-120.9", "39.2"]) == 0
    doc = json.loads((folder / "site.json").read_text())
    assert (doc["crs"], doc["resolution"]) == ("EPSG:32610", 250)
    (scene,) = scan_site(folder).scenes
    assert scene.product == "modis_terra_mod13q1" and scene.valid_fraction == 1.0


def test_site_init_counts_only_the_scenes_the_scan_will_use(real_dir, tmp_path, capsys):
    """ETM's QA_PIXEL cut to its first 3,000 of 7,560 bytes (its header still reads): the scan leaves that scene
    out, so site init takes its footprint from the TM scene alone and names the file, as the scan will; two
    MODIStsp NDVI dates holding already-scaled floats (days 337 and 353) next to three raw ones: 3 scenes, not
    5. Site init said "the common footprint of 2 scene(s)" and "of 5 scene(s)", without naming a file."""
    folder = tmp_path / "dl"
    (folder / ETM).mkdir(parents=True)
    (folder / TM).symlink_to(real_dir / "eo-datasets" / TM)
    for f in (real_dir / "eo-datasets" / ETM).iterdir():
        if "QA_PIXEL" not in f.name:
            (folder / ETM / f.name).symlink_to(f)
    qa = f"{ETM}_QA_PIXEL.TIF"
    (folder / ETM / qa).write_bytes((real_dir / "eo-datasets" / ETM / qa).read_bytes()[:3000])
    db = str(tmp_path / "db")
    assert main(["--db", db, "site", "init", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "from the common footprint of 1 scene(s)" in out
    assert "1 file(s) of the folder not used" in out and f"{ETM}/{qa}: truncated" in out
    with rasterio.open(real_dir / "eo-datasets" / TM / f"{TM}_QA_PIXEL.TIF") as ds:
        tm = ds.bounds  # the site is the TM scene's box (on its own 30 m cells), not the two scenes' overlap
    assert json.loads((folder / "site.json").read_text())["bbox"] == pytest.approx(list(tm), abs=30)
    assert [s.scene_id for s in scan_site(folder).scenes] == [TM]

    modis = tmp_path / "como"
    modis.mkdir()
    for day in (1, 17, 33, 337, 353):
        name = f"MOD13A1_NDVI_2016_{day:03d}.tif"
        (modis / name).symlink_to(real_dir / "modistsp" / name)
    assert main(["--db", db, "scan", str(modis)]) == 0  # as NO_SITE_HINT says: scan first, then site init
    capsys.readouterr()
    assert main(["--db", db, "site", "init", str(modis)]) == 0
    out = capsys.readouterr().out
    assert "from the common footprint of 3 scene(s)" in out and "2 file(s) of the folder not used" in out
    assert out.count("holds already-scaled values") == 2 and "MOD13A1_NDVI_2016_353.tif" in out
    assert len(scan_site(modis).scenes) == 3


def test_site_of_a_lonlat_export_lies_inside_its_footprint(tmp_path, capsys):
    """A MOD11A2 AppEEARS export on a 0.01 deg lon/lat grid (lon 11.0..11.2, lat 45.8..46.0) makes a site in UTM
    zone floor((11.1 + 180) / 6) + 1 = 32 at 1 km. In that zone the file's edges are turned (~1.5 deg at 2 deg
    east of the zone's meridian): the site took their bounding box, whose corners lie outside the file (by up
    to 0.005 deg here; on a 40 x 40 px export a column of no-data cells showed along the render's edge); its box
    lies inside the footprint now, and every site pixel has data."""
    from rasterio.warp import transform

    from tests.unit.test_fullsize import _appeears_lst

    folder = tmp_path / "lst"
    folder.mkdir()
    _appeears_lst(folder, "2024017000000")
    assert main(["--db", str(tmp_path / "db"), "site", "init", str(folder)]) == 0
    doc = json.loads((folder / "site.json").read_text())
    assert (doc["crs"], doc["resolution"]) == ("EPSG:32632", 1000)
    w, s, e, n = doc["bbox"]
    lons, lats = transform("EPSG:32632", "EPSG:4326", [w, e, e, w], [s, s, n, n])
    assert all(11.0 <= x <= 11.2 for x in lons) and all(45.8 <= y <= 46.0 for y in lats), (lons, lats)
    (scene,) = scan_site(folder).scenes
    assert scene.valid_fraction == 1.0
