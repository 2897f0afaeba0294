"""Issue 31's "what happens today", re-tried as a new user would with small real and synthetic files, for
what tests/unit/test_fullsize.py did not yet reproduce: a Sentinel-2-only site in its tile's UTM zone, a far
bbox naming the nearest places (not three dates of one place), an NDVI-only MODIS site among scenes outside
it, a band not downloaded or a scene left out named by render, a Level-1-only folder named as such, an
ERA5-Land-only site drawn with a colour bar and its unit.

Expected values by hand: UTM zone = floor((lon + 180) / 6) + 1, EPSG 326zz north / 327zz south."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.warp import transform

from reviewer.cli import main
from tests.conftest import write_site_json
from tests.figures import longest_run
from tests.formats import write_band
from tests.formats import write_era5_land_nc as _era5_nc

TM = "LT05_L2SP_090084_19980308_20200909_02_T1"  # WRS-2 090/084, EPSG:32655, lon 148.5..151.2
OLI = "LC08_L2SP_098084_20210503_20210508_02_T1"  # 098/084, EPSG:32653, lon 136.2..138.8
MODISTSP = [f"MOD13A1_NDVI_2016_{d:03d}.tif" for d in (1, 17, 33)]  # MODIStsp NDVI, near Como (lon 9.2-9.6)


def _run(capsys, *argv, db: Path) -> tuple[int, str, str]:
    code = main(["--db", str(db), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _zone(lon: float) -> int:
    return math.floor((lon + 180) / 6) + 1


def test_sentinel2_only_bbox_site_takes_the_tiles_zone_not_its_centres(tmp_path, capsys):
    """A tile of zone 32 whose pixels lie east of 12 deg E (zone 33 by its centre, as real tiles overlap the
    next zone): a Sentinel-2-only site keeps the tile's own grid, EPSG:32632, 10 m."""
    folder = tmp_path / "s2"
    x0, y0 = 790_000.0, 5_100_000.0  # 290 km east of zone 32's central meridian (9 deg E), lat ~46
    for band, res in (("B04", 10), ("SCL", 20)):
        arr = np.full((600 // res, 600 // res), 4 if band == "SCL" else 1500, np.uint8 if band == "SCL" else np.uint16)
        write_band(folder / f"T32TQR_20230601T101559_{band}_{res}m.jp2", arr, res, crs="EPSG:32632", origin=(x0, y0))
    lons, lats = transform("EPSG:32632", "EPSG:4326", [x0 + 100, x0 + 500], [y0 - 500, y0 - 100])
    box = [min(lons), min(lats), max(lons), max(lats)]
    assert _zone((box[0] + box[2]) / 2) == 33, "the box's centre lies in the next zone"
    code, _, err = _run(capsys, "site", "init", str(folder), "--bbox", *map(str, box), db=tmp_path / "db")
    assert code == 0, err
    doc = json.loads((folder / "site.json").read_text())
    assert (doc["crs"], doc["resolution"]) == ("EPSG:32632", 10)
    assert (doc["bbox"][0] - x0) % 10 == 0 and (y0 - doc["bbox"][3]) % 10 == 0, "cells on the tile's own pixels"


def _places(real_dir: Path, folder: Path) -> Path:
    """Three MODIStsp NDVI dates near Como and two Landsat scenes in south-east Australia."""
    folder.mkdir()
    for name in MODISTSP:
        (folder / name).symlink_to(real_dir / "modistsp" / name)
    for scene in (TM, OLI):
        (folder / scene).symlink_to(real_dir / "eo-datasets" / scene)
    return folder


def test_far_bbox_names_the_nearest_places_not_three_dates_of_one(real_dir, tmp_path, capsys):
    folder = _places(real_dir, tmp_path / "dl")
    code, _, err = _run(capsys, "site", "init", str(folder), "--bbox", "20", "10", "21", "11", db=tmp_path / "db")
    assert code == 2 and err.count("\n") == 1 and "touches none of the 5 scenes" in err
    nearest = err.split("the nearest: ")[1]
    assert nearest.startswith("MOD13A1_NDVI_2016_") and "and 2 more scene(s)" in nearest  # the Como series
    assert OLI in nearest and TM in nearest and nearest.count("MOD13A1") == 1


def test_ndvi_only_site_among_scenes_outside_it_lists_only_what_it_can_show(real_dir, tmp_path, capsys):
    """The Landsat scenes lie outside a site around Como: true colour asked for is refused naming ndvi, the one
    composite of its MODIS NDVI (it listed truecolor, swir ... from the scenes outside); with no --composite the
    render is the NDVI one, said on a note line."""
    folder = _places(real_dir, tmp_path / "dl")
    db = tmp_path / "db"
    assert _run(capsys, "site", "init", str(folder), "--bbox", "9.2", "45.7", "9.6", "46.1", db=db)[0] == 0
    assert json.loads((folder / "site.json").read_text())["crs"] == f"EPSG:326{_zone(9.4)}"  # 32
    asked = ["render", str(folder), "--date", "2016-01-17", "--composite"]
    code, _, err = _run(capsys, *asked, "truecolor", "--out", str(tmp_path / "a.png"), db=db)
    assert code == 2 and err.count("\n") == 1 and err.rstrip().endswith("this site can show: ndvi (--composite)")
    out = tmp_path / "ndvi.png"
    code, _, err = _run(capsys, *asked, "ndvi", "--out", str(out), db=db)
    assert code == 0 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", err
    code, _, err = _run(capsys, *asked[:-1], "--out", str(tmp_path / "default.png"), db=db)
    assert code == 0 and "no true-colour bands; rendering ndvi" in err, err
    assert (tmp_path / "default.png").read_bytes() == out.read_bytes()


def _tm_without(real_dir: Path, folder: Path, left_out: str) -> Path:
    (folder / TM).mkdir(parents=True)
    for f in (real_dir / "eo-datasets" / TM).iterdir():
        if left_out not in f.name:
            (folder / TM / f.name).symlink_to(f)
    with rasterio.open(real_dir / "eo-datasets" / TM / f"{TM}_SR_B4.TIF") as d:  # (a 60 x 60 px sample of it)
        write_site_json(folder, bbox=list(d.bounds), crs="EPSG:32655", shape=[d.height, d.width])
    return folder


def test_a_band_not_downloaded_is_named_by_render(real_dir, tmp_path, capsys):
    folder = _tm_without(real_dir, tmp_path / "nob3", "SR_B3")  # TM red
    code, _, err = _run(
        capsys, "render", str(folder), "--date", "1998", "--out", str(tmp_path / "x.png"), db=tmp_path / "db"
    )
    assert code == 2 and err.count("\n") == 1
    assert f"{TM} has no SR_B3 (red) file" in err and "this site can show: ndwi, mndwi, nbr" in err


def test_a_scene_left_out_at_scan_is_the_reason_render_gives(real_dir, tmp_path, capsys):
    folder = _tm_without(real_dir, tmp_path / "noqa", "QA_PIXEL")
    code, _, err = _run(
        capsys, "render", str(folder), "--date", "1998", "--out", str(tmp_path / "x.png"), db=tmp_path / "db"
    )
    assert code == 2 and err.count("\n") == 1 and "has no usable scene" in err and "no QA_PIXEL" in err


def test_a_folder_of_level1_only_says_level1_in_its_error(real_dir, tmp_path, capsys):
    folder = tmp_path / "l1"
    folder.mkdir()
    for f in (real_dir / "rstoolbox").iterdir():  # LT52240631988227CUB02: MTL DATA_TYPE "L1T"
        (folder / f.name).symlink_to(f)
    for verb in (["scan"], ["site", "init"]):
        code, _, err = _run(capsys, *verb, str(folder), db=tmp_path / "db")
        assert code == 2 and err.count("\n") == 1 and "Level-1" in err and "digital numbers" in err, err


def test_an_era5_land_only_site_renders_with_a_colour_bar_in_its_unit(tmp_path, capsys):
    from reviewer.record.render import build_figure, resolve_panel
    from reviewer.record.scan import scan_site
    from reviewer.record.stack import open_stack
    from reviewer.record.stretch import Stretch
    from tests.unit.test_record_formats_era5 import _era5

    site = write_site_json(tmp_path / "e", bbox=[8.95, 45.45, 9.55, 46.05], crs="EPSG:4326", resolution=0.1)
    _era5(site)  # t2m DN 5000 x 0.001 + 270 = 275 K in January
    db = tmp_path / "db"
    asked = ["render", str(site), "--date", "2023-01-01", "--composite"]
    code, _, err = _run(capsys, *asked, "truecolor", "--out", str(tmp_path / "a.png"), db=db)
    assert code == 2 and err.rstrip().endswith("this site can show: t2m, precipitation (--composite)")
    out = tmp_path / "t2m.png"
    code, _, err = _run(capsys, *asked, "t2m", "--out", str(out), db=db)
    assert code == 0 and out.is_file(), err
    # no --composite: the site's first (ERA5-Land has no visible bands), not a refusal of true colour
    code, _, err = _run(capsys, *asked[:-1], "--out", str(tmp_path / "default.png"), db=db)
    assert code == 0 and "rendering t2m" in err and (tmp_path / "default.png").read_bytes() == out.read_bytes()
    panel = resolve_panel(open_stack(scan_site(site), composite="t2m"), "2023-01-01", "t2m")
    assert np.nanmax(panel.channels) == pytest.approx(275.0, abs=1e-3)
    fig = build_figure([panel], Stretch.default("t2m"), pixel_size_m=11_000)
    assert [t.text for t in fig.texts if t.role == "bar label"] == ["Air temperature at 2 m (ERA5-Land) (K)"]


#: the unit on the colour bar of every single-channel composite, by hand: indices are ratios (unitless), LST and
#: ERA5-Land's 2 m temperature kelvin, ERA5-Land monthly precipitation metres of water a day
UNITS = {"ndvi": "unitless", "ndwi": "unitless", "mndwi": "unitless", "nbr": "unitless", "lst": "K", "t2m": "K",
         "precipitation": "m/day"}  # fmt: skip


def test_every_single_channel_render_has_one_colour_bar_with_its_unit():
    from reviewer.record.render import Panel, build_figure
    from reviewer.record.stretch import Stretch, composites

    single = sorted(c for c, spec in composites().items() if not spec.get("bands"))
    assert single == sorted(UNITS)
    for composite in single:
        panel = Panel("p", np.full((1, 8, 8), 0.3, np.float32), [], "scene")
        fig = build_figure([panel], Stretch.default(composite), pixel_size_m=30)
        labels = [t.text for t in fig.texts if t.role == "bar label"]
        assert len(labels) == 1 and labels[0].endswith(f"({UNITS[composite]})"), composite


@pytest.mark.parametrize("box", [["10", "46", "9", "45"], ["9", "45", "9", "46"], ["9", "46", "10", "45"]])
def test_a_swapped_or_empty_bbox_is_one_line_on_the_real_stderr(real_dir, tmp_path, capfd, box):
    """capfd: what GDAL or PROJ would print from C (ERROR 1: latitude max < latitude min.) is seen too."""
    folder = _places(real_dir, tmp_path / "dl")
    code = main(["--db", str(tmp_path / "db"), "site", "init", str(folder), "--bbox", *box])
    err = capfd.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "ERROR" not in err and "Traceback" not in err and not (folder / "site.json").exists()


def test_a_real_reviewer_scan_names_each_file_not_used_once(real_dir, tmp_path):
    """As a user runs it (a process of its own, its logging to the terminal): the files not used are listed on
    stdout, not again as WARNING lines on stderr; a folder of only Level-1 files is one error line."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    folder = _places(real_dir, tmp_path / "dl")
    (folder / "notes_2016.tif").write_bytes(b"not a scene")
    l1 = tmp_path / "l1"
    l1.mkdir()
    for f in (real_dir / "rstoolbox").iterdir():
        (l1 / f.name).symlink_to(f)
    runs = [
        subprocess.run(
            [sys.executable, "-m", "reviewer.cli", "--db", str(tmp_path / "db"), "scan", str(where)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )  # fmt: skip
        for where in (folder, l1)
    ]
    assert runs[0].returncode == 0 and runs[0].stderr == "", runs[0].stderr
    assert runs[0].stdout.count("notes_2016.tif: unknown name") == 1
    assert runs[1].returncode == 2 and runs[1].stderr.count("\n") == 1 and "Level-1" in runs[1].stderr


def test_place_groups_count_the_scenes_listed_by_their_sensors(real_dir, tmp_path, capsys):
    """MOD13A1_NDVI_2016_337.tif holds already-scaled floats: not used, so not one of the Como place's scenes."""
    folder = _places(real_dir, tmp_path / "dl")
    (folder / "MOD13A1_NDVI_2016_337.tif").symlink_to(real_dir / "modistsp" / "MOD13A1_NDVI_2016_337.tif")
    code, out, _ = _run(capsys, "scan", str(folder), db=tmp_path / "db")
    assert code == 0 and "MOD13A1_NDVI_2016_337.tif: holds already-scaled values" in out
    groups = [line.split(" at ")[0].strip() for line in out.splitlines() if "scene(s) [" in line]
    # the most scenes first; places of as many scenes in the order of their first date (TM 1998, OLI 2021)
    assert groups == ["3 scene(s) [MODIS Terra]", "1 scene(s) [TM]", "1 scene(s) [OLI]"]


def test_monthly_era5_dates_by_month_and_a_missed_date_names_the_nearest(real_dir, tmp_path, capsys):
    """ERA5-Land monthly means are dated by month (scenes 2023-01, -02, -03, each dated the 1st): YYYY-MM, or any
    day of the month, names that month's scene (`--date 2023-01` was refused as not a date); a date with no
    scene names the site's nearest dates, in months for a monthly product and in days otherwise."""
    from tests.unit.test_record_formats_era5 import _era5

    site = write_site_json(tmp_path / "e", bbox=[8.95, 45.45, 9.55, 46.05], crs="EPSG:4326", resolution=0.1)
    _era5(site)
    db, out = tmp_path / "db", str(tmp_path / "t2m.png")
    for date, month in (("2023-01", "2023-01"), ("2023-02-15", "2023-02"), ("2023-03-31", "2023-03")):
        code, shown, err = _run(
            capsys, "render", str(site), "--date", date, "--composite", "t2m", "--out", out, "--json", db=db
        )
        assert code == 0, err
        (panel,) = json.loads(shown)["panels"]
        assert panel["label"] == f"{month}  ERA5-Land" and panel["scenes"][0]["date"] == f"{month}-01"
    code, _, err = _run(capsys, "render", str(site), "--date", "2023-05", "--composite", "t2m", "--out", out, db=db)
    assert code == 2 and err.count("\n") == 1
    assert err.rstrip().endswith(
        "no scene with t2m bands in 2023-05; the nearest dates the site has: 2023-03 (2 months before)"
    )
    code, _, err = _run(capsys, "render", str(site), "--date", "2023-13", "--composite", "t2m", "--out", out, db=db)
    assert code == 2 and err.count("\n") == 1 and "not a month: '2023-13'" in err
    # MODIStsp NDVI 16-day composites of days 1, 17 and 33 of 2016 (1 Jan, 17 Jan, 2 Feb): 20 Jan is 3 days
    # after the one and 13 days before the other
    folder = _places(real_dir, tmp_path / "dl")
    assert _run(capsys, "site", "init", str(folder), "--bbox", "9.2", "45.7", "9.6", "46.1", db=db)[0] == 0
    code, _, err = _run(
        capsys, "render", str(folder), "--date", "2016-01-20", "--composite", "ndvi", "--out", out, db=db
    )
    assert code == 2 and err.count("\n") == 1
    assert err.rstrip().endswith(
        "the nearest dates the site has: 2016-01-17 (3 days before), 2016-02-02 (13 days after)"
    )


@pytest.mark.parametrize("width", [None, 60])
def test_scale_bar_of_a_few_coarse_pixels_lies_inside_its_panel_under_its_label(width):
    """A 3 x 5 px ERA5-Land site (11 km cells: 33 km across): the bar is drawn inside the panel (it lay below the
    panel, under the colour bar), its length its km at the drawn scale (panel width / 33 km), and its label inside
    the panel; at the default width the 10 km bar holds its label, and a panel too narrow for a bar that holds
    its label starts the label where the bar starts."""
    from reviewer.record.render import Panel, build_figure
    from reviewer.record.stretch import Stretch

    panel = Panel("2023-01  ERA5-Land", np.full((1, 5, 3), 275.0, np.float32), [], "scene")
    fig = build_figure([panel], Stretch.default("t2m"), pixel_size_m=11_000, width_px=width)
    x0, y0, x1, y1 = fig.panels[0]
    (label,) = [t for t in fig.texts if t.role == "scale"]
    km = float(label.text.removesuffix(" km"))
    bar_px = km * (x1 - x0) / 33
    white = (fig.rgb[y0:y1, x0:x1] == 255).all(axis=2)
    longest = max(longest_run(row) for row in white[(y1 - y0) * 3 // 4 :])
    assert abs(longest + 2 - bar_px) <= 1.5, (longest, bar_px)  # its white inside and a black edge at each end
    lx0, ly0, lx1, ly1 = label.box
    assert x0 <= lx0 and lx1 <= x1 and y0 <= ly0 and ly1 <= y1, "the label lies inside its panel"
    if width is None:
        assert label.text == "10 km" and lx1 - lx0 <= bar_px, "a fifth of 33 km, rounded up; the label over the bar"


def test_a_width_far_past_the_sites_pixels_is_refused_before_any_read(tmp_path, capsys):
    """`--width` upsamples a small site's pixels; far past them the figure cannot be drawn: a 10,980 px tile drawn
    20,000 px wide took 3.8 GB. A column of 6 ERA5-Land cells drawn 100,000 px wide is 100,000 x 600,000 px,
    about 9 bytes a pixel to draw (5.4e11 bytes, 502.9 GiB): one error naming --width, exit 2, no PNG (before:
    "out of memory")."""
    site = write_site_json(tmp_path / "col", bbox=[9.15, 45.45, 9.25, 46.05], crs="EPSG:4326", resolution=0.1)
    lat = np.round(np.arange(46.0, 45.45, -0.1), 1)[:6]
    t2m = np.full((1, 6, 1), 5000, np.int16)
    _era5_nc(site / "era5.nc", [dt.date(2023, 1, 1)], lat, np.array([9.2]), {"t2m": (t2m, 0.001, 270.0, "K")})
    out = tmp_path / "big.png"
    code = main(["--db", str(tmp_path / "db"), "render", str(site), "--date", "2023-01", "--composite", "t2m",
                 "--width", "100000", "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and not out.exists()
    assert "a figure of 1 panel(s) of 100000 x 600000 px needs about 502.9 GB to draw" in err
    assert err.rstrip().endswith("give a smaller --width")


def test_scan_names_a_scene_whose_download_lost_a_band(real_dir, tmp_path, capsys):
    """Two TM scenes of one path/row, the second without SR_B4 (TM's NIR, a download cut short): the scan uses it
    for what needs no NIR and says which band it lacks; the complete scene is not named."""
    folder = _tm_without(real_dir, tmp_path / "short", "(every file)")
    second = TM.replace("19980308", "19980324")
    (folder / second).mkdir()
    for f in (real_dir / "eo-datasets" / TM).iterdir():
        if "SR_B4" not in f.name:
            (folder / second / f.name.replace(TM, second)).symlink_to(f)
    code, out, err = _run(capsys, "scan", str(folder), db=tmp_path / "db")
    assert code == 0 and err == ""
    assert "1 scene(s) without a band the product's other scenes here have" in out
    assert f"1998-03-24  TM  {second}: no SR_B4 (nir)" in out and f"{TM}: no" not in out
    code, out, _ = _run(capsys, "scan", str(folder), "--json", db=tmp_path / "db")
    assert json.loads(out)["short_scenes"] == [{"scene": second, "date": "1998-03-24", "missing": ["SR_B4 (nir)"]}]


def test_a_folder_without_a_usable_scene_gives_the_scenes_reason_before_stray_files(real_dir, tmp_path, capsys):
    """Downloads without QA_PIXEL beside two notes files, no site.json: the error says the scene has no QA_PIXEL;
    the two notes files (the most common reason) come after it, not instead of it."""
    folder = _tm_without(real_dir, tmp_path / "dl", "QA_PIXEL")
    (folder / "site.json").unlink()
    (folder / "notes.txt").write_text("ordered from EarthExplorer")
    (folder / "todo.txt").write_text("get 1999")
    code, _, err = _run(capsys, "scan", str(folder), db=tmp_path / "db")
    assert code == 2 and err.count("\n") == 1
    assert err.index(f"scene {TM} has no QA_PIXEL") < err.index("2 file(s): unknown name"), err
    # one problem for all the scene's files: not "1 file(s): missing band: ..." (as the xlandsat downloads said)
    assert f"(missing band: scene {TM} has no QA_PIXEL" in err and "1 file(s)" not in err, err


@pytest.mark.parametrize(
    "box, resolution",
    [
        ([728415.0, 6133365.0, 794535.0, 6201765.0], 30.0),  # what `site init` wrote, its crs edited to lon/lat
        ([149.5, -95.0, 150.2, -94.0], 0.01),  # a latitude past the pole
    ],
)
def test_a_lonlat_site_json_with_a_box_off_the_globe_is_one_line_naming_bbox(
    real_dir, tmp_path, capfd, box, resolution
):
    """A site.json whose crs was changed to lon/lat by hand while its bbox stayed in UTM metres: the scan said
    `error: internal error (CPLE_AppDefinedError: PROJ: utm: Invalid latitude)`. A lon/lat box lies within
    lon -180..360 (0..360 grids as ERA5-Land's), lat -90..90; else its field is named."""
    folder = _tm_without(real_dir, tmp_path / "dl", "(every file)")
    write_site_json(folder, bbox=box, crs="EPSG:4326", resolution=resolution)
    code = main(["--db", str(tmp_path / "db"), "scan", str(folder)])
    err = capfd.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "internal error" not in err, err
    assert err.startswith(f"error: {folder / 'site.json'}, field 'bbox': a lon/lat box"), err
    assert "lon -180..360, lat -90..90" in err


@pytest.mark.parametrize(
    "stretch, says",
    [
        ('{"low": 0, "high": 0.3}', "it needs 'composite' and 'channels'"),
        ('{"composite": "truecolor"}', "it needs 'channels'"),
        (
            '{"composite": "ndvi", "channels": [{"low": "a", "high": 1}]}',
            "each channel's low, high and gamma are numbers",
        ),
        ('{"composite": "ndvi", "channels": 3}', "each channel's low, high and gamma are numbers"),
    ],
)
def test_a_stretch_missing_a_key_or_with_text_for_a_number_says_what_it_needs(tmp_path, capsys, stretch, says):
    """`render --stretch '{"low":1}'` said "field 'stretch': not a stretch: 'composite'" (a KeyError's text), and
    a low given as text Python's "could not convert string to float: 'a'". Read before any file is opened."""
    code, _, err = _run(capsys, "render", str(tmp_path), "--date", "1998", "--stretch", stretch,
                        "--out", str(tmp_path / "x.png"), db=tmp_path / "db")  # fmt: skip
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("error: field 'stretch': not a stretch: ") and says in err, err
    assert 'e.g. {"composite": "ndvi", "channels": [{"low": 0, "high": 0.8}]}' in err


def test_a_stretch_that_is_no_json_and_no_file_names_what_it_was(tmp_path, capsys):
    """`--stretch '[1]'` was taken as a file name: "... nor a readable file: [Errno 2] No such file or directory:
    '[1]'" (Python's words)."""
    code, _, err = _run(capsys, "render", str(tmp_path), "--date", "1998", "--stretch", "[1]",
                        "--out", str(tmp_path / "x.png"), db=tmp_path / "db")  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "Errno" not in err, err
    assert err.startswith(
        "error: field 'stretch': --stretch is neither stretch JSON nor a readable file (no file '[1]')"
    )
