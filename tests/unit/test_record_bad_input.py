"""Bad input: one clear message naming the file and what is wrong; a scan skips and reports; a render
refuses with the reason; nothing already indexed is lost; no traceback reaches the user."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import rasterio

from reviewer.cli import main
from reviewer.errors import NoSceneError, NotGeoreferencedError, SiteError, UnreadableFileError
from reviewer.record.decode import Grid, read_raw, read_scene
from reviewer.record.render import render_dates
from reviewer.record.scan import open_index, scan_site
from reviewer.record.site import load_site
from reviewer.store import Store
from tests.conftest import write_site_json

OLI = "LC08_L2SP_098084_20210503_20210508_02_T1"


@pytest.fixture
def oli_site(real_dir, tmp_path) -> Path:
    """A copy (not links: tests damage files) of the real OLI scene on its own grid."""
    src = real_dir / "eo-datasets" / OLI
    site = tmp_path / "site"
    scene = site / OLI
    scene.mkdir(parents=True)
    for f in src.iterdir():
        shutil.copy(f, scene / f.name)
    with rasterio.open(src / f"{OLI}_SR_B4.TIF") as ds:
        b = ds.bounds
        write_site_json(site, bbox=[b.left, b.bottom, b.right, b.top], crs=ds.crs.to_string(), shape=[60, 60])
    return site


def test_folder_without_site_json_is_not_a_site(tmp_path):
    with pytest.raises(SiteError, match="no site.json"):
        scan_site(tmp_path)


def test_empty_site_reports_empty_record(tmp_path):
    site = write_site_json(tmp_path / "s", bbox=[0, 0, 3000, 3000], crs="EPSG:32633")
    index = scan_site(site)
    assert index.scenes == [] and "empty record" in index.problems[0].reason


def test_site_json_failing_its_schema_names_the_field(tmp_path):
    site = write_site_json(tmp_path / "s", bbox=[0, 0, 3000, 3000], crs="EPSG:32633", theme="jungle")
    with pytest.raises(SiteError) as err:
        scan_site(site)
    assert err.value.field == "theme" and str(site / "site.json") in str(err.value)


def test_truncated_quality_layer_is_skipped_with_reason(oli_site):
    qa = oli_site / OLI / f"{OLI}_QA_PIXEL.TIF"
    data = qa.read_bytes()
    qa.write_bytes(data[: len(data) // 3])
    index = scan_site(oli_site)
    assert index.scenes == []
    (problem,) = index.problems
    assert problem.path.endswith("_QA_PIXEL.TIF") and "truncated" in problem.reason


def test_truncated_band_fails_the_read_naming_the_file(oli_site):
    band = oli_site / OLI / f"{OLI}_SR_B4.TIF"
    band.write_bytes(band.read_bytes()[:600])
    index = scan_site(oli_site)
    scene = index.scenes[0]
    with pytest.raises(UnreadableFileError) as err:
        read_scene(scene, scene.product_spec, ["red"], Grid.of_site(index.site))
    assert err.value.path.endswith("_SR_B4.TIF") and "truncated" in err.value.message


def test_not_a_raster_is_reported(oli_site):
    (oli_site / OLI / f"{OLI}_SR_B5.TIF").write_text("<html>403 Forbidden</html>")
    index = scan_site(oli_site)
    reasons = {p.path: p.reason for p in index.problems}
    assert "not a GeoTIFF" in reasons[f"{OLI}/{OLI}_SR_B5.TIF"]
    assert len(index.scenes) == 1, "the rest of the scene is still indexed"


def test_band_without_quality_layer(oli_site):
    (oli_site / OLI / f"{OLI}_QA_PIXEL.TIF").unlink()
    index = scan_site(oli_site)
    assert index.scenes == []
    assert "missing band" in index.problems[0].reason and "QA_PIXEL" in index.problems[0].reason


def test_file_without_georeferencing(oli_site):
    qa = oli_site / OLI / f"{OLI}_QA_PIXEL.TIF"
    with rasterio.open(qa) as ds:
        arr = ds.read(1)
    qa.unlink()
    with rasterio.open(qa, "w", driver="GTiff", width=60, height=60, count=1, dtype="uint16") as out:
        out.write(arr, 1)
    index = scan_site(oli_site)
    assert index.scenes == [] and "no georeferencing" in index.problems[0].reason
    grid = Grid.of_site(load_site(oli_site))

    with pytest.raises(NotGeoreferencedError):
        read_raw(qa, grid, nodata=1)


def test_already_converted_reflectance_is_refused(oli_site):
    qa = oli_site / OLI / f"{OLI}_QA_PIXEL.TIF"
    band = oli_site / OLI / f"{OLI}_SR_B4.TIF"
    with rasterio.open(band) as ds:
        profile, dn = ds.profile, ds.read(1)
    profile.update(dtype="float32", nodata=None)
    band.unlink()
    with rasterio.open(band, "w", **profile) as out:
        out.write((dn * 2.75e-5 - 0.2).astype("float32"), 1)
    index = scan_site(oli_site)
    scene = index.scenes[0]
    from reviewer.errors import WrongProductError

    with pytest.raises(WrongProductError, match="already-scaled"):
        read_scene(scene, scene.product_spec, ["red"], Grid.of_site(index.site))
    assert qa.exists()


def test_date_with_no_scene_refuses_with_nearest(oli_site):
    index = scan_site(oli_site)
    # 2020 has 366 days, then 31 + 28 + 31 + 30 + 2 to 3 May 2021: 488 days after
    with pytest.raises(NoSceneError, match=r"nearest dates the site has: 2021-05-03 \(488 days after\)$"):
        render_dates(index, ["2020-01-01"], "truecolor", oli_site / "x.png")


def test_cli_prints_one_line_and_exit_2(tmp_path, capsys):
    code = main(["--db", str(tmp_path / "db.sqlite"), "scan", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and "Traceback" not in err and str(tmp_path) in err


@pytest.mark.parametrize(
    "boundary",
    [
        [],  # a JSON list
        {"type": "FeatureCollection", "features": [1]},  # a feature that is no object
        {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]], "crs": 5},  # a crs that is no object
    ],
)
def test_boundary_of_the_wrong_json_shape_is_one_error_line(tmp_path, capsys, boundary):
    site = write_site_json(
        tmp_path / "s", bbox=[0, 0, 3000, 3000], crs="EPSG:32633", shape=[100, 100], boundary="boundary.geojson"
    )
    (site / "boundary.geojson").write_text(json.dumps(boundary))
    code = main(["--db", str(tmp_path / "db.sqlite"), "scan", str(site)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert f"{site / 'boundary.geojson'}: cannot read the boundary file" in err


@pytest.mark.parametrize(
    "doc",
    [
        [1, 2],  # a JSON list
        {"type": "Feature", "stac_version": "1.0.0", "id": "a", "geometry": None, "links": [], "assets": {},
         "properties": 3},  # properties that are no object
        {"type": "Feature", "stac_version": "1.0.0", "id": "a", "geometry": None, "links": [], "assets": {"a": 3},
         "properties": {"datetime": "2020-01-01T00:00:00Z"}},  # an asset that is no object
    ],
)  # fmt: skip
def test_stac_item_of_the_wrong_json_shape_is_a_reason_not_a_crash(tmp_path, doc):
    from reviewer.record.stac import read_item

    path = tmp_path / "item.json"
    path.write_text(json.dumps(doc))
    assert read_item(path, set()).startswith("STAC item that cannot be read (")


def test_broken_site_does_not_lose_other_sites_index(oli_site, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(oli_site, other)
    with Store(tmp_path / "db.sqlite") as store:
        first = open_index(other, store)
        assert len(first.scenes) == 1
        (oli_site / OLI / f"{OLI}_QA_PIXEL.TIF").write_bytes(b"II*\x00broken")
        broken = open_index(oli_site, store)
        assert broken.scenes == []
        again = open_index(other, store)
        assert again.from_store and len(again.scenes) == 1


def test_reopen_uses_stored_index_until_a_file_changes(oli_site, tmp_path):
    with Store(tmp_path / "db.sqlite") as store:
        assert not open_index(oli_site, store).from_store
        assert open_index(oli_site, store).from_store
        (oli_site / OLI / "extra_note.txt").write_text("x")
        assert not open_index(oli_site, store).from_store


def test_render_json_reports_stretch_and_scenes(oli_site, tmp_path, capsys):
    out = tmp_path / "one.png"
    code = main(
        [
            "--db",
            str(tmp_path / "db.sqlite"),
            "render",
            str(oli_site),
            "--date",
            "2021",
            "--composite",
            "swir",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["stretch"]["composite"] == "swir" and doc["panels"][0]["scenes"][0]["scene_id"] == OLI
    from PIL import Image

    meta = Image.open(out).text
    assert json.loads(meta["Stretch"])["channels"][0]["high"] == pytest.approx(0.4)
    assert np.asarray(Image.open(out)).std() > 0
