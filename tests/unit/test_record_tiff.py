"""The scan's own decode of a plain GeoTIFF quality layer (reviewer/record/tiff.py) from the bytes its check
read: the same pixels GDAL reads from the same file, on the site grid or a window of a larger scene; any
other layout is left to GDAL; a damaged layer is still named at scan time.

Files are written by GDAL (rasterio) in the layouts USGS and GDAL use; the reference pixels are GDAL's own
read of the same file. Fractions are worked out by hand from the planted codes (QA_PIXEL bit 0 fill, bit 3
cloud, bit 6 clear)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import rasterio
import tifffile
from rasterio.transform import from_origin

from reviewer.record.check import check_quality_band
from reviewer.record.decode import Grid, read_raw
from reviewer.record.scan import scan_site
from reviewer.record.tiff import direct_image
from tests.conftest import write_site_json

OLI = "LC08_L2SP_190026_20200705_20200913_02_T1"
CRS = "EPSG:32633"
X0, Y0 = 600000.0, 5001800.0


def _write(path, data, **layout):
    profile = dict(driver="GTiff", width=data.shape[1], height=data.shape[0], count=1, dtype=data.dtype, crs=CRS)
    profile.update(transform=from_origin(X0, Y0, 30, 30), **layout)
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(data, 1)
    return path


def _gdal(path):
    with rasterio.open(path) as ds:
        return ds.read(1)


def _grid(rows, cols, x0=X0, y0=Y0):
    return Grid(rasterio.crs.CRS.from_string(CRS), from_origin(x0, y0, 30, 30), (rows, cols))


LAYOUTS = {
    "deflate strips, predictor 2": dict(compress="deflate", predictor=2, blockysize=8),
    "deflate tiles, predictor 2": dict(compress="deflate", predictor=2, tiled=True, blockxsize=16, blockysize=16),
    "uncompressed strips": dict(blockysize=8),
    "uncompressed tiles": dict(tiled=True, blockxsize=16, blockysize=16),
    "deflate strips, no predictor": dict(compress="deflate"),
    "big-endian deflate strips": dict(compress="deflate", predictor=2, blockysize=8, ENDIANNESS="BIG"),
    "BigTIFF deflate tiles": dict(compress="deflate", tiled=True, blockxsize=16, blockysize=16, BIGTIFF="YES"),
}


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_quality_layer_is_decoded_from_its_check_as_gdal_reads_it(tmp_path, layout):
    codes = np.random.default_rng(3).integers(0, 2**16, (70, 50), dtype=np.uint16)  # 70 x 50: partial blocks
    path = _write(tmp_path / "QA_PIXEL.TIF", codes, **layout)
    bad, pixels = check_quality_band(str(path), _grid(70, 50), 1)
    assert bad is None and pixels is not None, "decoded without GDAL"
    assert pixels.dtype == np.uint16 and np.array_equal(pixels, _gdal(path))


@pytest.mark.parametrize("layout", [LAYOUTS["deflate tiles, predictor 2"], LAYOUTS["deflate strips, predictor 2"]])
def test_site_inside_a_larger_scene_gets_the_same_window_as_read_raw(tmp_path, layout):
    codes = np.random.default_rng(4).integers(0, 2**16, (70, 50), dtype=np.uint16)
    path = _write(tmp_path / "QA_PIXEL.TIF", codes, **layout)
    inner = _grid(20, 25, X0 + 17 * 30, Y0 - 33 * 30)  # rows 33-52, cols 17-41 of the scene
    _, pixels = check_quality_band(str(path), inner, 1)
    assert np.array_equal(pixels, codes[33:53, 17:42])
    astride = _grid(20, 20, X0 + 40 * 30, Y0 - 60 * 30)  # its last 10 rows and cols lie outside the scene
    _, pixels = check_quality_band(str(path), astride, 1)
    assert np.array_equal(pixels, read_raw(path, astride, nodata=1))
    assert np.array_equal(pixels[:10, :10], codes[60:70, 40:50]) and (pixels[10:, :] == 1).all()


def test_other_layouts_are_left_to_gdal(tmp_path):
    codes = np.arange(60 * 60, dtype=np.uint16).reshape(60, 60)
    lzw = _write(tmp_path / "lzw.TIF", codes, compress="lzw")
    floats = _write(tmp_path / "float.TIF", codes.astype(np.float32))
    aux = _write(tmp_path / "aux.TIF", codes, compress="deflate")
    aux.with_name("aux.TIF.aux.xml").write_text(
        "<PAMDataset><GeoTransform>0, 30, 0, 0, 0, -30</GeoTransform></PAMDataset>"
    )
    for path in (lzw, floats, aux):
        assert check_quality_band(str(path), _grid(60, 60), 1) == (None, None), path.name


REAL_SCENES = {
    "OLI": "LC08_L2SP_098084_20210503_20210508_02_T1",
    "ETM+": "LE07_L2SP_090084_20210331_20210426_02_T1",
    "TM": "LT05_L2SP_090084_19980308_20200909_02_T1",
}


def _real_qa(real_dir, scene):
    return real_dir / "eo-datasets" / scene / f"{scene}_QA_PIXEL.TIF"


def _grid_of(path):
    with rasterio.open(path) as ds:
        return Grid(ds.crs, ds.transform, (ds.height, ds.width))


def _direct(path):
    data = path.read_bytes()
    return direct_image(data[:8192], len(data), lambda offset, n: data[offset : offset + n])


def test_real_usgs_quality_layer_origin_is_the_first_pixel_corner(real_dir):
    # USGS ties the centre of the first pixel (PixelIsPoint): 611557.75, -3715970.25 for 3945.5 x 3970.5 m pixels,
    # so its corner, GDAL's origin, lies half a pixel up-left: 611557.75 - 1972.75, -3715970.25 + 1985.25
    image = _direct(_real_qa(real_dir, REAL_SCENES["OLI"]))
    assert image.pixel_is_point and image.epsg == 32653
    assert image.transform[0] == 609585.0 and image.transform[3] == -3713985.0


@pytest.mark.parametrize("scene", REAL_SCENES.values(), ids=REAL_SCENES.keys())
def test_real_usgs_quality_layer_is_decoded_as_gdal_reads_it(real_dir, scene):
    path = _real_qa(real_dir, scene)
    with rasterio.open(path) as ds:
        assert _direct(path).transform == ds.transform.to_gdal()
        centre_x, centre_y = (ds.bounds.left + ds.bounds.right) / 2, (ds.bounds.bottom + ds.bounds.top) / 2
        crs = ds.crs
    tm = REAL_SCENES["TM"]
    grids = {  # the scene's own grid; the TM scene's (the cross-decade site of test_record_real); 1 km at the centre
        "own": _grid_of(path),
        "TM site": _grid_of(real_dir / "eo-datasets" / tm / f"{tm}_SR_B3.TIF"),
        "1 km": Grid(crs, from_origin(centre_x - 20000, centre_y + 20000, 1000, 1000), (40, 40)),
    }
    for name, grid in grids.items():
        bad, pixels = check_quality_band(str(path), grid, 1)
        assert bad is None and pixels is not None, f"{name}: decoded without GDAL"
        assert np.array_equal(pixels, read_raw(path, grid, nodata=1)), name


def test_pixel_is_point_layer_is_left_to_gdal_when_gdal_is_told_to_ignore_it(real_dir):
    path = _real_qa(real_dir, REAL_SCENES["TM"])
    with rasterio.Env(GTIFF_POINT_GEO_IGNORE=True):  # GDAL then takes the tie point as the corner
        assert check_quality_band(str(path), _grid_of(path), 1) == (None, None)
    with rasterio.Env(GTIFF_POINT_GEO_IGNORE="NO"):
        assert check_quality_band(str(path), _grid_of(path), 1)[1] is not None


def test_usgs_cog_layout_with_nodata_metadata_and_overviews_is_decoded(tmp_path):
    # as USGS writes a C2 layer: a COG (DEFLATE, 256 tiles, overviews), PixelIsPoint; plus GDAL's nodata and
    # metadata tags, which change neither the pixels nor where they lie
    codes = np.random.default_rng(7).integers(0, 2**16, (420, 400), dtype=np.uint16)  # partial tiles
    path = tmp_path / "QA_PIXEL.TIF"
    profile = dict(driver="COG", width=400, height=420, count=1, dtype="uint16", crs=CRS, nodata=0)
    with rasterio.open(
        path, "w", transform=from_origin(X0, Y0, 30, 30), compress="deflate", predictor=2, blocksize=256, **profile
    ) as ds:
        ds.update_tags(AREA_OR_POINT="Point", PRODUCT="QA_PIXEL")
        ds.write(codes, 1)
    with rasterio.open(path) as ds:
        assert ds.overviews(1) and ds.block_shapes == [(256, 256)] and ds.tags()["AREA_OR_POINT"] == "Point"
        assert ds.transform == from_origin(X0, Y0, 30, 30)
    # 20 m past col 380, row 400: a grid pixel's centre lies 35 m (1.17 pixels) past theirs, in col 381 + j,
    # row 401 + i (half a pixel off, it would be col 380 + j): the scene's last 19 rows and cols, then outside
    astride = _grid(40, 40, X0 + 380 * 30 + 20, Y0 - 400 * 30 - 20)
    bad, pixels = check_quality_band(str(path), astride, 1)
    assert bad is None and pixels is not None
    assert np.array_equal(pixels[:19, :19], codes[401:, 381:])
    assert (pixels[19:, :] == 1).all() and (pixels[:, 19:] == 1).all(), "outside: the QA fill code, not the nodata tag"
    assert np.array_equal(pixels, read_raw(path, astride, nodata=1))


def test_orientation_tag_is_read_as_gdal_reads_it(tmp_path):
    # GDAL reads the rows as stored whatever the Orientation tag says (here 4: bottom-left)
    codes = np.arange(12, dtype=np.uint16).reshape(3, 4)
    keys = (1, 1, 0, 4, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32633, 3076, 0, 1, 9001)
    path = tmp_path / "QA_PIXEL.TIF"
    georef = [(33550, "d", 3, (30.0, 30.0, 0.0), False), (33922, "d", 6, (0, 0, 0, X0, Y0, 0), False)]
    tifffile.imwrite(
        path,
        codes,
        photometric="minisblack",
        metadata=None,
        extratags=[(274, "H", 1, 4, False), *georef, (34735, "H", len(keys), keys, False)],
    )
    _, pixels = check_quality_band(str(path), _grid(3, 4), 1)
    assert pixels is not None and np.array_equal(pixels, _gdal(path)) and pixels[0, 0] == 0


def _scene(site, qa, **layout):
    folder = site / OLI
    folder.mkdir(parents=True)
    _write(folder / f"{OLI}_QA_PIXEL.TIF", qa, **layout)
    for band in ("SR_B4", "SR_B5"):
        _write(folder / f"{OLI}_{band}.TIF", np.full(qa.shape, 9000, np.uint16), nodata=0, **layout)
    write_site_json(site, bbox=[X0, Y0 - 60 * 30, X0 + 60 * 30, Y0], crs=CRS, shape=[60, 60])
    return folder / f"{OLI}_QA_PIXEL.TIF"


@pytest.mark.parametrize("layout", [LAYOUTS["deflate strips, predictor 2"], dict(compress="lzw")], ids=["ours", "GDAL"])
def test_scene_fractions_from_the_decoded_quality_layer(tmp_path, layout):
    qa = np.full((60, 60), 1 << 6, np.uint16)  # clear
    qa[:15] = 1  # 900 fill pixels
    qa[15:30] = 1 << 3  # 900 cloudy
    _scene(tmp_path / "site", qa, **layout)
    (scene,) = scan_site(tmp_path / "site").scenes
    assert scene.valid_fraction == pytest.approx(2700 / 3600)
    assert scene.clear_fraction == pytest.approx(1800 / 3600)
    assert scene.cloud_fraction == pytest.approx(900 / 2700)


def test_quality_layer_with_a_damaged_stream_is_named_at_scan_time(tmp_path):
    qa = np.random.default_rng(5).integers(0, 2**16, (60, 60), dtype=np.uint16)
    path = _scene(tmp_path / "site", qa, **LAYOUTS["deflate strips, predictor 2"])
    with rasterio.open(path) as ds:
        offset = int(ds.get_tag_item("BLOCK_OFFSET_0_3", "TIFF", bidx=1))
    data = bytearray(path.read_bytes())
    data[offset : offset + 40] = bytes(40)  # the fourth strip's stream zeroed: the header still whole
    path.write_bytes(bytes(data))
    assert check_quality_band(str(path), _grid(60, 60), 1) == (None, None), "left to GDAL, which says why"
    index = scan_site(tmp_path / "site")
    assert index.scenes == []
    (problem,) = index.problems
    assert problem.path == f"{OLI}/{OLI}_QA_PIXEL.TIF"
    assert problem.reason.startswith("unreadable: the compressed pixels of its block") and "TIFF" not in problem.reason


def test_scene_in_another_utm_zone_is_warped_as_read_raw_warps_it(tmp_path):
    codes = np.random.default_rng(6).integers(0, 2**16, (80, 80), dtype=np.uint16)
    path = tmp_path / "QA_PIXEL.TIF"
    profile = dict(driver="GTiff", width=80, height=80, count=1, dtype="uint16", crs="EPSG:32634")
    with rasterio.open(path, "w", transform=from_origin(360000, 4996000, 30, 30), compress="deflate", **profile) as ds:
        ds.write(codes, 1)  # in zone 34, west of its centre: where zone 33's grid below lies
    grid = _grid(40, 40, 833000, 5002000)
    _, pixels = check_quality_band(str(path), grid, 1)
    expected = read_raw(path, grid, nodata=1)
    assert 0.5 < (expected != 1).mean() < 0.99, "the grid sees the scene, and its southern rows lie outside it"
    assert np.array_equal(pixels, expected)


def test_fractions_count_only_the_pixels_inside_the_site_boundary(tmp_path):
    qa = np.full((60, 60), 1 << 3, np.uint16)  # cloudy: the right half, outside the boundary, is all cloud
    qa[:, :30] = 1 << 6  # the left half: clear ...
    qa[:15, :30] = 1  # ... but 450 fill pixels
    qa[15:30, :30] = 1 << 3  # ... and 450 cloudy ones
    site = tmp_path / "site"
    _scene(site, qa, **LAYOUTS["deflate strips, predictor 2"])
    west, east, south, north = X0, X0 + 30 * 30, Y0 - 60 * 30, Y0  # the left half of the site
    ring = [[west, south], [east, south], [east, north], [west, north], [west, south]]
    boundary = {
        "type": "FeatureCollection",
        "crs": {"type": "name", "properties": {"name": CRS}},
        "features": [{"type": "Feature", "properties": {}, "geometry": {"type": "Polygon", "coordinates": [ring]}}],
    }
    (site / "boundary.geojson").write_text(json.dumps(boundary))
    write_site_json(
        site, bbox=[X0, Y0 - 60 * 30, X0 + 60 * 30, Y0], crs=CRS, shape=[60, 60], boundary="boundary.geojson"
    )
    (scene,) = scan_site(site).scenes
    assert scene.valid_fraction == pytest.approx(1350 / 1800)  # of the 1,800 pixels inside
    assert scene.clear_fraction == pytest.approx(900 / 1800)
    assert scene.cloud_fraction == pytest.approx(450 / 1350)
