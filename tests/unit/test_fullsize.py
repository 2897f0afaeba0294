"""Full-size downloads as users have them (issue 31), each failure reproduced with small files: a render
reads at its output's size, too big a read is refused before it starts, a bad or far --bbox is one error
line, a mixed folder is named, AppEEARS' full doy stamp, a pre-Collection Level-1 scene named as Level-1,
LST / NDVI-only sites renderable with a colour bar, a truncated band named, --out .png, --version.

Expected values by hand: UTM zone = floor((lon + 180) / 6) + 1, EPSG 326zz north / 327zz south."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import rasterio
from affine import Affine

from reviewer import __version__
from reviewer.cli import main
from reviewer.record.render import build_figure, render_dates
from reviewer.record.scan import scan_site
from reviewer.record.stack import default_cache
from reviewer.record.stretch import Stretch
from tests.conftest import write_site_json

TM = "LT05_L2SP_090084_19980308_20200909_02_T1"  # WRS-2 090/084, EPSG:32655, lon 148.5..151.2
ETM = "LE07_L2SP_090084_20210331_20210426_02_T1"  # same place
OLI = "LC08_L2SP_098084_20210503_20210508_02_T1"  # 098/084, EPSG:32653, lon 136.2..138.8
BIG = "LC08_L2SP_008056_20210718_20210729_02_T1"


def _run(capsys, *argv, db: Path) -> tuple[int, str, str]:
    code = main(["--db", str(db), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _mixed(real_dir: Path, folder: Path, scenes=(TM, ETM, OLI)) -> Path:
    folder.mkdir()
    for s in scenes:
        (folder / s).symlink_to(real_dir / "eo-datasets" / s)
    return folder


# ----------------------------------------------------------------------------- render cost follows the output


def _big_scene(folder: Path, size: int = 2000) -> Path:
    """A Landsat 8 C2 L2 scene of size x size px as USGS COGs (overviews), the site its whole grid."""
    t = Affine(30.0, 0, 399885.0, 0, -30.0, 800415.0)
    scene = folder / BIG
    scene.mkdir(parents=True)
    ramp = (np.arange(size, dtype=np.uint16)[None, :] // 8 + 9000).repeat(size, 0)
    for band in ("SR_B2", "SR_B3", "SR_B4", "QA_PIXEL"):
        arr = np.full((size, size), 21824, np.uint16) if band == "QA_PIXEL" else ramp
        profile = dict(driver="COG", width=size, height=size, count=1, dtype="uint16", crs="EPSG:32618")
        with rasterio.open(scene / f"{BIG}_{band}.TIF", "w", transform=t, compress="deflate", **profile) as d:
            d.write(arr, 1)
    write_site_json(folder, bbox=[t.c, t.f - 30 * size, t.c + 30 * size, t.f], crs="EPSG:32618", resolution=30)
    return folder


def test_render_holds_about_the_output_pixels_not_the_site(tmp_path):
    """A 2,000 px site drawn at the default panel width (352 px) read the whole grid (3 bands of 16 MB float32
    and more); now each band is read at about the panel's size: the peak stays a few dozen MB."""
    site = _big_scene(tmp_path / "big")
    index = scan_site(site)
    render_dates(index, ["2021-07-18"], "truecolor", tmp_path / "warm.png", width=16)  # imports, fonts
    default_cache().clear()
    tracemalloc.start()
    try:
        result = render_dates(index, ["2021-07-18"], "truecolor", tmp_path / "one.png")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert Path(result["out"]).is_file()
    # the whole grid read as before (--width 2000) peaks near 500 MB; at the panel's size about 30 MB
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MB for a 352 px panel"


def test_render_width_and_a_too_big_read_refused_before_it_starts(tmp_path, capsys):
    site = _big_scene(tmp_path / "big", size=256)
    code, _, err = _run(
        capsys,
        "render",
        str(site),
        "--date",
        "2021",
        "--width",
        "64",
        "--out",
        str(tmp_path / "a.png"),
        db=tmp_path / "db",
    )
    assert code == 0 and (tmp_path / "a.png").is_file(), err
    with rasterio.open(tmp_path / "a.png") as png:  # a 64 px panel: the figure is narrower than 352 px
        assert png.width < 352
    # a site grid of 20,000 x 20,000 cells (600 km, the largest site.json allows) read at full width needs ~58 GB: refused, naming its size
    doc = json.loads((site / "site.json").read_text())
    w, s, e, n = doc["bbox"]
    doc["bbox"] = [w, n - 600_000, w + 600_000, n]
    (site / "site.json").write_text(json.dumps(doc))
    code, _, err = _run(
        capsys,
        "render",
        str(site),
        "--date",
        "2021",
        "--width",
        "20000",
        "--out",
        str(tmp_path / "b.png"),
        db=tmp_path / "db",
    )
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert "20000 x 20000 px (600 x 600 km)" in err and "--bbox" in err
    assert not (tmp_path / "b.png").exists()


# ----------------------------------------------------------------------------- bad input named


@pytest.mark.parametrize("box", [["10", "46", "9", "45"], ["9", "45", "9", "46"]])
def test_swapped_or_empty_bbox_is_one_error_line(real_dir, tmp_path, capsys, box):
    folder = _mixed(real_dir, tmp_path / "dl")
    code, _, err = _run(capsys, "site", "init", str(folder), "--bbox", *box, db=tmp_path / "db")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "ERROR 1" not in err and "internal error" not in err and "W < E and S < N" in err
    assert not (folder / "site.json").exists()


def test_bbox_picks_its_own_utm_zone_and_outside_scenes_are_named(real_dir, tmp_path, capsys):
    """Two scenes in zone 55 and one in zone 53: a box around the zone-53 scene (lon 137.5, lat -34.6) is a
    site in zone floor((137.5 + 180) / 6) + 1 = 53, south: EPSG:32753 (it was the folder's majority 32655)."""
    folder = _mixed(real_dir, tmp_path / "dl")
    code, out, err = _run(
        capsys, "site", "init", str(folder), "--bbox", "137.3", "-34.8", "137.7", "-34.4", db=tmp_path / "db"
    )
    assert code == 0, err
    doc = json.loads((folder / "site.json").read_text())
    assert doc["crs"] == "EPSG:32753" and doc["resolution"] == 30
    assert 250_000 < doc["bbox"][0] < 800_000, "eastings of a UTM zone lie within 166,000..834,000 m"
    code, out, _ = _run(capsys, "scan", str(folder), db=tmp_path / "db")
    rows = {line.split()[-1]: line for line in out.splitlines() if line.startswith(("19", "20"))}
    assert "outside the site" in rows[TM] and "outside the site" in rows[ETM]
    assert "outside the site" not in rows[OLI] and "100.0" not in rows[TM]
    assert "3 scenes of dl (dl), 2 of them outside the site" in out  # the count says so too


def test_bbox_touching_no_scene_is_refused_naming_the_nearest(real_dir, tmp_path, capsys):
    folder = _mixed(real_dir, tmp_path / "dl")
    code, _, err = _run(capsys, "site", "init", str(folder), "--bbox", "9", "45", "10", "46", db=tmp_path / "db")
    assert code == 2 and err.count("\n") == 1 and "touches none of the 3 scenes" in err
    assert OLI in err and TM in err and not (folder / "site.json").exists()


def test_scan_without_site_json_groups_scenes_by_place(real_dir, tmp_path, capsys):
    folder = _mixed(real_dir, tmp_path / "dl")
    code, out, _ = _run(capsys, "scan", str(folder), db=tmp_path / "db")
    assert code == 0 and "cover 2 places that do not overlap" in out
    groups = [line for line in out.splitlines() if "scene(s) [" in line]
    assert len(groups) == 2 and groups[0].split()[0] == "2" and groups[1].split()[0] == "1"
    assert "lon 148." in groups[0] and "lon 136." in groups[1]  # the scenes' boxes (MTL corners)


# ----------------------------------------------------------------------------- formats as distributed


def _appeears_lst(site: Path, stamp: str) -> None:
    """MOD11A2 AppEEARS area-sample exports: LST_Day_1km (uint16, K = DN x 0.02) and QC_Day, lon/lat grid."""
    profile = dict(driver="GTiff", width=20, height=20, count=1, crs="EPSG:4326",
                   transform=Affine(0.01, 0, 11.0, 0, -0.01, 46.0))  # fmt: skip
    lst = np.full((20, 20), 15000, np.uint16)  # 300 K
    for layer, arr in (("LST_Day_1km", lst), ("QC_Day", np.zeros((20, 20), np.uint8))):
        with rasterio.open(
            site / f"MOD11A2.061_{layer}_doy{stamp}_aid0001.tif", "w", dtype=arr.dtype.name, **profile
        ) as d:
            d.write(arr, 1)


def test_appeears_full_doy_stamp_and_an_lst_site_renders_with_a_colour_bar(tmp_path, capsys):
    site = write_site_json(tmp_path / "lst", bbox=[11.0, 45.8, 11.2, 46.0], crs="EPSG:4326", shape=[20, 20])
    _appeears_lst(site, "2024017000000")
    index = scan_site(site)
    assert index.problems == [] and [s.date for s in index.scenes] == [dt.date(2024, 1, 17)]
    code, _, err = _run(
        capsys, "render", str(site), "--date", "2024-01-17", "--out", str(tmp_path / "x.png"), db=tmp_path / "db"
    )
    assert code == 0 and "rendering lst" in err  # the site's one composite, not "no scene with truecolor bands"
    asked = ["render", str(site), "--date", "2024-01-17", "--composite", "truecolor", "--out", str(tmp_path / "t.png")]
    code, _, err = _run(capsys, *asked, db=tmp_path / "db")
    assert code == 2 and "this site can show: lst" in err  # true colour asked for: refused, naming what it can show
    code, _, err = _run(
        capsys,
        "render",
        str(site),
        "--date",
        "2024-01-17",
        "--composite",
        "lst",
        "--out",
        str(tmp_path / "lst.png"),
        db=tmp_path / "db",
    )
    assert code == 0 and (tmp_path / "lst.png").is_file(), err


def test_single_channel_renders_carry_a_colour_bar_with_the_unit(tmp_path):
    from reviewer.record.render import Panel

    for composite, label in (("ndvi", "NDVI (unitless)"), ("lst", "Land surface temperature (day) (K)")):
        panel = Panel("p", np.full((1, 8, 8), 0.3 if composite == "ndvi" else 300.0, np.float32), [], "scene")
        fig = build_figure([panel], Stretch.default(composite), pixel_size_m=30)
        assert fig.colour_bar is not None and fig.colour_bar.label == label
        assert [t.text for t in fig.texts if t.role == "bar label"] == [label]


def test_pre_collection_level1_scene_is_named_level1(real_dir, tmp_path):
    site = write_site_json(tmp_path / "l1", bbox=[0, 0, 300, 300], crs="EPSG:32622", resolution=30)
    for f in ("LT52240631988227CUB02_B3.TIF", "LT52240631988227CUB02_MTL.txt"):
        (site / f).symlink_to(real_dir / "rstoolbox" / f)
    reasons = {p.path: p.reason for p in scan_site(site).problems}
    for f in ("LT52240631988227CUB02_B3.TIF", "LT52240631988227CUB02_MTL.txt"):
        assert "Level-1" in reasons[f] and "digital numbers" in reasons[f] and "ESPA" not in reasons[f]


def test_truncated_band_is_named_by_render(real_dir, tmp_path, capfd):
    """capfd: what GDAL would print from C on the truncated TIFF (ERROR 1: TIFFFillStrip ...) is seen too."""
    scene = tmp_path / "t" / TM
    shutil.copytree(real_dir / "eo-datasets" / TM, scene)
    b3 = scene / f"{TM}_SR_B3.TIF"  # red of TM
    b3.write_bytes(b3.read_bytes()[:2000])
    with rasterio.open(scene / f"{TM}_QA_PIXEL.TIF") as d:
        site = write_site_json(tmp_path / "t", bbox=list(d.bounds), crs="EPSG:32655", shape=[d.height, d.width])
    code, _, err = _run(
        capfd, "render", str(site), "--date", "1998", "--out", str(tmp_path / "t.png"), db=tmp_path / "db"
    )
    assert code == 2 and err.count("\n") == 1 and f"{TM}/{TM}_SR_B3.TIF: truncated" in err
    # without red (SR_B3), what TM can still show, by hand: ndwi (green, NIR), mndwi (green, SWIR1), nbr (NIR, SWIR2)
    assert err.rstrip().endswith("this site can show: ndwi, mndwi, nbr (--composite)")
    # a mistyped date is the one error, before the folder's band is looked at
    code, _, err = _run(
        capfd, "render", str(site), "--date", "1998-13-01", "--out", str(tmp_path / "t.png"), db=tmp_path / "db"
    )
    assert code == 2 and err == "error: field 'date': not a date: '1998-13-01' (month must be in 1..12)\n"


def test_out_must_be_png_and_version(tmp_path, capsys):
    code, _, err = _run(
        capsys, "render", str(tmp_path), "--date", "2020", "--out", str(tmp_path / "x.jpg"), db=tmp_path / "db"
    )
    assert code == 2 and ".png" in err and not (tmp_path / "x.jpg").exists()
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and __version__ in capsys.readouterr().out


def test_numpy_warnings_never_reach_the_terminal(tmp_path):
    """A verb whose numpy work warns (the median of an all-NaN pixel) prints no RuntimeWarning and no source
    line (a real process: pytest would catch the warning itself); with -v it is logged."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from reviewer import cli; import reviewer.record.cli as rc; "
        "rc.cmd_scan = lambda a: int(np.isnan(np.nanmedian(np.array([np.nan])))) - 1; "
        "sys.exit(cli.main(sys.argv[1:]))"
    )
    for verbose in ([], ["-v"]):
        run = subprocess.run(
            [sys.executable, "-c", code, *verbose, "--db", str(tmp_path / "db"), "scan", str(tmp_path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert run.returncode == 0
        assert ("All-NaN slice" in run.stderr) == bool(verbose), run.stderr
        assert "np.nanmedian" not in run.stderr  # never the source line


def test_generate_on_a_record_of_nothing_it_reads_ends_at_once_saying_why(real_dir, tmp_path, caplog):
    """A Sentinel-2-only site (the methods read Landsat, MODIS/VIIRS, ERA5-Land ...): no per-pixel work on an
    empty series (on a 10,980 px tile it took 272 s and ran out of memory), zero questions, the reason logged."""
    import logging

    folder = tmp_path / "s2"
    folder.mkdir()
    for band in ("B04", "SCL"):
        name = f"T29UNU_20221005T115411_{band}_60m.jp2"
        (folder / name).symlink_to(real_dir / "stactools-sentinel2" / name)
    with rasterio.open(folder / "T29UNU_20221005T115411_SCL_60m.jp2") as d:  # the tile at 60 m: a light test
        write_site_json(folder, bbox=list(d.bounds), crs=d.crs.to_string(), resolution=60)
    with caplog.at_level(logging.WARNING, logger="reviewer.bank.series"):
        code = main(["--db", str(tmp_path / "db"), "generate", str(folder), "--out", str(tmp_path / "out")])
    report = json.loads(next((tmp_path / "out").glob("*report*.json")).read_text())
    assert code == 0 and report["questions"] == 0 and report["scenes_read"] == 0
    assert any("nothing of the record" in r.message and "1 MSI" in r.message for r in caplog.records)


def test_a_small_site_is_drawn_at_the_panel_width_asked(tmp_path, capsys):
    """Reading at min(native, width) must not shrink the figure: a 64 px site is drawn ~350 px wide by
    default (nearest-neighbour upsampling, as before) and ~600 px wide with --width 600 (it was 64 px)."""
    site = _big_scene(tmp_path / "small", size=64)
    widths = {}
    for extra in ([], ["--width", "600"]):
        out = tmp_path / f"p{len(extra)}.png"
        code, _, err = _run(
            capsys, "render", str(site), "--date", "2021", *extra, "--out", str(out), db=tmp_path / "db"
        )
        assert code == 0, err
        with rasterio.open(out) as png:
            widths[len(extra)] = png.width
    assert widths[0] >= 352 and 600 <= widths[2] < 700


def test_bench_peak_is_the_steps_own_not_its_parents(tmp_path):
    """bench_fullsize runs each step in a child (subprocess: vfork + exec) and reports its peak memory. With
    ru_maxrss, Linux carried the parent's peak into the child: after the bench built its scenes (3.9 GB) every
    row, plain reads included, read 3,879 MB. A parent that touched 600 MB, a child reading a 64 x 64 band:
    its own peak is the interpreter and rasterio (~100-200 MB), under 400 MB."""
    import subprocess
    import sys

    band = tmp_path / "b.tif"
    profile = dict(driver="GTiff", width=64, height=64, count=1, dtype="uint16", crs="EPSG:32633")
    with rasterio.open(band, "w", transform=Affine(30, 0, 0, 0, -30, 0), **profile) as d:
        d.write(np.ones((64, 64), np.uint16), 1)
    held = np.ones(600 << 20, np.uint8)  # every page touched
    bench = Path(__file__).resolve().parents[1] / "bench" / "bench_fullsize.py"
    out = subprocess.run(
        [sys.executable, str(bench), "--child", "plain", str(band), "-", "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert held.sum() == 600 << 20
    peak = json.loads(out.stdout.strip().splitlines()[-1])["peak_mb"]
    assert peak < 400, peak
