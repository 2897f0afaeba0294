"""The record as users download it: bundles read in place, every unused file named with its reason, and
every indexed file checked at scan time (a truncated band is reported by name, the scene kept without it).

Expected reflectances are the USGS C2 L2 rule by hand: rho = DN x 2.75e-5 - 0.2, DN read with rasterio."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest
import rasterio

from reviewer.cli import main
from reviewer.errors import UnreadableFileError
from reviewer.record.decode import Grid, read_scene
from reviewer.record.scan import scan_site
from tests.conftest import write_site_json

OLI = "LC08_L2SP_098084_20210503_20210508_02_T1"
S2 = "T29UNU_20221005T115411"


def _oli_site(real_dir: Path, site: Path) -> Path:
    src = real_dir / "eo-datasets" / OLI
    with rasterio.open(src / f"{OLI}_SR_B4.TIF") as ds:
        b = ds.bounds
        write_site_json(site, bbox=[b.left, b.bottom, b.right, b.top], crs=ds.crs.to_string(), shape=[60, 60])
    return site


def _dn(real_dir: Path, band: str, row: int = 30, col: int = 30) -> int:
    with rasterio.open(real_dir / "eo-datasets" / OLI / f"{OLI}_{band}.TIF") as ds:
        return int(ds.read(1)[row, col])


def test_landsat_tar_bundle_is_read_in_place(real_dir, tmp_path):
    site = _oli_site(real_dir, tmp_path / "site")
    with tarfile.open(site / f"{OLI}.tar", "w") as tf:  # EarthExplorer's bundle: the band files at the top
        for f in sorted((real_dir / "eo-datasets" / OLI).iterdir()):
            tf.add(f, arcname=f.name)
    index = scan_site(site)
    assert index.problems == []
    (scene,) = index.scenes
    assert scene.files["SR_B4"] == f"{OLI}.tar/{OLI}_SR_B4.TIF"
    red = read_scene(scene, scene.product_spec, ["red"], Grid.of_site(index.site), mask=["fill"]).bands["red"]
    dn = _dn(real_dir, "SR_B4")
    assert dn > 7000 and red[30, 30] == pytest.approx(dn * 2.75e-5 - 0.2, abs=1e-6)
    assert not list(site.glob("*.TIF")), "nothing was unpacked"


def test_truncated_tar_names_the_member_cut_off(real_dir, tmp_path):
    site = _oli_site(real_dir, tmp_path / "site")
    bundle = site / f"{OLI}.tar"
    names = [f"{OLI}_QA_PIXEL.TIF", f"{OLI}_SR_B4.TIF", f"{OLI}_SR_B5.TIF"]
    with tarfile.open(bundle, "w") as tf:
        for name in names:
            tf.add(real_dir / "eo-datasets" / OLI / name, arcname=name)
    with tarfile.open(bundle) as tf:
        cut = tf.getmember(names[2]).offset_data + 100  # the download stopped 100 bytes into SR_B5
    bundle.write_bytes(bundle.read_bytes()[:cut])
    index = scan_site(site)
    reasons = {p.path: p.reason for p in index.problems}
    assert "bundle ends inside this file" in reasons[f"{OLI}.tar/{names[2]}"]
    (scene,) = index.scenes
    assert set(scene.files) == {"QA_PIXEL", "SR_B4"}


def test_every_unused_file_is_named_with_its_reason(real_dir, tmp_path):
    site = _oli_site(real_dir, tmp_path / "site")
    scene = site / OLI
    scene.mkdir()
    for f in (real_dir / "eo-datasets" / OLI).iterdir():
        (scene / f.name).symlink_to(f)
    (site / "MOD13Q1.A2023241.h08v05.061.2023258002222.hdf.bak").write_bytes(b"x")
    (site / "granule.hdf").write_bytes(b"\x0e\x03\x13\x01" + b"\0" * 60)
    (site / "S2B_MSIL2A_20230601T101559_N0509_R065_T32TNS_20230601T130009.SAFE.zip").write_bytes(b"PK\x03\x04")
    (site / "notes.docx").write_bytes(b"PK")
    index = scan_site(site)
    reasons = {p.path: p.reason for p in index.problems}
    assert len(index.scenes) == 1, "the MTL files beside the bands are the product's metadata, not problems"
    assert "unknown name" in reasons["granule.hdf"] and "HDF4" in reasons["granule.hdf"]
    assert "unzip it" in reasons["S2B_MSIL2A_20230601T101559_N0509_R065_T32TNS_20230601T130009.SAFE.zip"]
    assert "unknown name" in reasons["notes.docx"]
    assert "unknown name" in reasons["MOD13Q1.A2023241.h08v05.061.2023258002222.hdf.bak"]
    assert len(reasons) == 4


def test_folder_of_unusable_files_lists_each_not_empty_record(tmp_path):
    site = write_site_json(tmp_path / "s", bbox=[0, 0, 3000, 3000], crs="EPSG:32633")
    (site / "a.nc").write_bytes(b"CDF\x01")
    (site / "b.h5").write_bytes(b"\x89HDF\r\n\x1a\n")
    index = scan_site(site)
    assert sorted(p.path for p in index.problems) == ["a.nc", "b.h5"]
    assert not any("empty record" in p.reason for p in index.problems)


def test_truncated_band_is_reported_at_scan_time_and_scene_kept_without_it(real_dir, tmp_path):
    site = _oli_site(real_dir, tmp_path / "site")
    scene_dir = site / OLI
    shutil.copytree(real_dir / "eo-datasets" / OLI, scene_dir)
    band = scene_dir / f"{OLI}_SR_B4.TIF"
    data = band.read_bytes()
    band.write_bytes(data[: len(data) - 500])  # the header is whole; the last strips are missing
    index = scan_site(site)
    (problem,) = index.problems
    assert problem.path == f"{OLI}/{OLI}_SR_B4.TIF" and problem.reason.startswith("truncated")
    (scene,) = index.scenes
    assert "SR_B4" not in scene.files and "SR_B5" in scene.files
    grid = Grid.of_site(index.site)
    nir = read_scene(scene, scene.product_spec, ["nir"], grid, mask=["fill"]).bands["nir"]
    assert nir[30, 30] == pytest.approx(_dn(real_dir, "SR_B5") * 2.75e-5 - 0.2, abs=1e-6)
    with pytest.raises(UnreadableFileError, match="truncated") as err:
        read_scene(scene, scene.product_spec, ["red"], grid)
    assert err.value.path.endswith(f"{OLI}_SR_B4.TIF")


def test_truncated_jpeg2000_band_is_reported_at_scan_time(real_dir, tmp_path):
    src = real_dir / "stactools-sentinel2"
    site = tmp_path / "s2"
    site.mkdir()
    for band in ("B04", "SCL"):
        shutil.copy(src / f"{S2}_{band}_60m.jp2", site / f"{S2}_{band}_60m.jp2")
    b04 = site / f"{S2}_B04_60m.jp2"
    b04.write_bytes(b04.read_bytes()[:-2000])
    with rasterio.open(src / f"{S2}_SCL_60m.jp2") as ds:
        t, crs = ds.transform, ds.crs.to_string()
    w, n = t.c + 900 * t.a, t.f + 900 * t.e
    write_site_json(site, bbox=[w, n - 20 * 60, w + 20 * 60, n], crs=crs, resolution=60)
    index = scan_site(site)
    reasons = {p.path: p.reason for p in index.problems}
    assert reasons[f"{S2}_B04_60m.jp2"].startswith("truncated")
    assert index.scenes == [], "the scene has only its SCL layer left"


def test_real_files_pass_the_check(real_dir):
    from reviewer.record.check import check_file

    files = [*(real_dir / "eo-datasets" / OLI).glob("*.TIF"), *(real_dir / "stactools-sentinel2").glob("*.jp2")]
    assert len(files) == 19
    assert {f.name: check_file(f) for f in files} == {f.name: None for f in files}


def test_cli_scan_names_each_file_and_exits_0(real_dir, tmp_path, capsys):
    site = _oli_site(real_dir, tmp_path / "site")
    (site / "x.grib").write_bytes(b"GRIB")  # a GRIB file cut after its first four bytes
    (site / "notes.xyz").write_bytes(b"?")
    code = main(["--db", str(tmp_path / "db.sqlite"), "scan", str(site)])
    out = capsys.readouterr().out
    assert code == 0 and "x.grib: cannot read this GRIB file" in out and "notes.xyz: unknown name" in out


def test_landsat_tar_gz_bundle_is_read_in_place(real_dir, tmp_path):
    site = _oli_site(real_dir, tmp_path / "site")
    with tarfile.open(site / f"{OLI}.tar.gz", "w:gz") as tf:
        for band in ("QA_PIXEL", "SR_B4"):
            tf.add(real_dir / "eo-datasets" / OLI / f"{OLI}_{band}.TIF", arcname=f"{OLI}_{band}.TIF")
    index = scan_site(site)
    (scene,) = index.scenes
    red = read_scene(scene, scene.product_spec, ["red"], Grid.of_site(index.site), mask=["fill"]).bands["red"]
    assert red[30, 30] == pytest.approx(_dn(real_dir, "SR_B4") * 2.75e-5 - 0.2, abs=1e-6)
