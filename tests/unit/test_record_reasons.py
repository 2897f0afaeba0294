"""Every reason a scan gives for a file it does not use is in the tool's own words: it names the file and what
is wrong with it (truncated, damaged header, pixels that cannot be decoded, not the format its name says), never
GDAL's, libtiff's, OpenJPEG's, tarfile's or json's own text (TIFFReadEncodedStrip, 'Read failed. See previous
exception', CPLE_AppDefinedError, the path GDAL was given, an exception class name). One small broken file per
kind a user meets: a download cut short or damaged on the way, an error page saved under a band's name."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import json
import re
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest
import rasterio

from reviewer.cli import main
from reviewer.errors import UnreadableFileError
from reviewer.record.decode import Grid, read_scene
from reviewer.record.scan import scan_site
from tests.conftest import write_site_json
from tests.formats import write_era5_land_nc

OLI = "LC08_L2SP_098084_20210503_20210508_02_T1"
S2 = "T29UNU_20221005T115411"
#: words of a reader library's own text, or an exception's class: none may reach a reason
LIBRARY_TEXT = re.compile(
    r"CPLE|TIFF[A-Z]\w*\(|TIFFRead|IReadBlock|ERROR \d|Read failed|See previous|not recognized as|opj_|Marker|"
    r"ReadError|method gz|[A-Z]\w*Error\b|Exception|Traceback|\n"
)


def _oli(real_dir: Path, site: Path) -> Path:
    src = real_dir / "eo-datasets" / OLI
    (site / OLI).mkdir(parents=True)
    for f in src.iterdir():
        shutil.copy(f, site / OLI / f.name)
    with rasterio.open(src / f"{OLI}_SR_B4.TIF") as ds:
        b = ds.bounds
        write_site_json(site, bbox=[b.left, b.bottom, b.right, b.top], crs=ds.crs.to_string(), shape=[60, 60])
    return site


def _rewrite(path: Path, **profile) -> None:
    with rasterio.open(path) as ds:
        prof, arr = ds.profile, ds.read(1)
    prof.update(profile)
    path.unlink()
    with rasterio.open(path, "w", **prof) as out:
        out.write(arr, 1)


def _own_words(reason: str, site: Path) -> None:
    assert not LIBRARY_TEXT.search(reason), reason
    assert str(site) not in reason, f"the path GDAL was given: {reason}"


def _reasons(site: Path) -> dict[str, str]:
    index = scan_site(site)
    reasons = {p.path: p.reason for p in index.problems}
    for reason in reasons.values():
        _own_words(reason, site)
    return reasons


def test_quality_layer_whose_compressed_block_is_damaged(real_dir, tmp_path):
    """Old: 'cannot read raster (Read failed. See previous exception for details.)'."""
    site = _oli(real_dir, tmp_path / "s")
    qa = site / OLI / f"{OLI}_QA_PIXEL.TIF"
    _rewrite(qa, compress="deflate", tiled=True, blockxsize=16, blockysize=16)  # 4 x 4 tiles of 16 px
    with rasterio.open(qa) as ds:
        offset = int(ds.get_tag_item("BLOCK_OFFSET_2_1", "TIFF", bidx=1))  # column 2, row 1
    data = bytearray(qa.read_bytes())
    data[offset : offset + 20] = b"\xaa" * 20  # its deflate stream garbled: the header and every length whole
    qa.write_bytes(bytes(data))
    reasons = _reasons(site)
    assert reasons == {
        f"{OLI}/{OLI}_QA_PIXEL.TIF": "unreadable: the compressed pixels of its block at column 2, row 1 cannot "
        "be decoded (the file is damaged)"
    }


def test_tiff_signature_without_an_image_directory(real_dir, tmp_path):
    """Old: "cannot read raster ('/tmp/.../..._QA_PIXEL.TIF' not recognized as being in a supported file format.)"."""
    site = _oli(real_dir, tmp_path / "s")
    (site / OLI / f"{OLI}_QA_PIXEL.TIF").write_bytes(b"II*\x00" + bytes(4))  # its first directory at offset 0
    reasons = _reasons(site)
    assert reasons[f"{OLI}/{OLI}_QA_PIXEL.TIF"] == (
        "unreadable: its contents are not the format its name says, or its header is damaged"
    )


def test_band_with_a_damaged_stream_is_named_when_it_is_read(real_dir, tmp_path):
    """A data band is not decoded by the scan; the render's read names it in the same words. Old: 'cannot read
    raster (Read failed. See previous exception for details.)'."""
    site = _oli(real_dir, tmp_path / "s")
    band = site / OLI / f"{OLI}_SR_B4.TIF"
    _rewrite(band, compress="deflate")
    data = bytearray(band.read_bytes())
    data[500:-10] = b"\xaa" * (len(data) - 510)
    band.write_bytes(bytes(data))
    index = scan_site(site)
    scene = index.scenes[0]
    with pytest.raises(UnreadableFileError) as err:
        read_scene(scene, scene.product_spec, ["red"], Grid.of_site(index.site))
    assert err.value.path == str(band)
    assert err.value.message == "unreadable: the compressed pixels of its block at column 0, row 0 cannot be decoded (the file is damaged)"  # fmt: skip


def test_jpeg2000_quality_layer_whose_codestream_is_damaged(real_dir, tmp_path):
    """The real Sentinel-2 SCL with bytes of its codestream garbled, its boxes and end marker whole. Old: 'cannot
    read raster (Read failed. See previous exception for details.)'; OpenJPEG's 'Marker is not compliant' and
    'opj_get_decoded_tile() failed' went to the log."""
    src = real_dir / "stactools-sentinel2"
    site = tmp_path / "s2"
    site.mkdir()
    for band in ("B02", "B03", "B04", "SCL"):
        shutil.copy(src / f"{S2}_{band}_60m.jp2", site / f"{S2}_{band}_60m.jp2")
    scl = site / f"{S2}_SCL_60m.jp2"
    with rasterio.open(scl) as ds:
        t, crs = ds.transform, ds.crs.to_string()
    data = bytearray(scl.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 5000] = bytes((i * 37 + 11) % 256 for i in range(5000))
    scl.write_bytes(bytes(data))
    w, n = t.c + 900 * t.a, t.f + 900 * t.e
    write_site_json(site, bbox=[w, n - 20 * 60, w + 20 * 60, n], crs=crs, resolution=60)
    reason = _reasons(site)[scl.name]
    assert reason.startswith("unreadable: the compressed pixels of its block at column ") and reason.endswith(
        "cannot be decoded (the file is damaged)"
    )


def test_netcdf_cut_short(tmp_path):
    """Old: "cannot read this netCDF file ('/tmp/.../adaptor.mars.internal-1.nc' not recognized as being in a
    supported file format.)"."""
    site = write_site_json(tmp_path / "s", bbox=[8.95, 45.45, 9.55, 46.05], crs="EPSG:4326", resolution=0.1)
    lat, lon = np.round(np.arange(46.0, 45.45, -0.1), 1)[:6], np.round(np.arange(9.0, 9.55, 0.1), 1)[:6]
    t2m = (np.full((2, 6, 6), 5000, np.int16), 0.001, 270.0, "K")
    path = write_era5_land_nc(site / "adaptor.mars.internal-1.nc", [dt.date(2023, 1, 1)] * 2, lat, lon, {"t2m": t2m})
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert _reasons(site) == {
        "adaptor.mars.internal-1.nc": "cannot read this netCDF file: its contents are not the format its name "
        "says, or its header is damaged"
    }


def test_tar_bundle_that_is_no_tar(real_dir, tmp_path):
    """Old: six lines of tarfile's text ('file could not be opened successfully: - method gz: ReadError(...)')."""
    site = _oli(real_dir, tmp_path / "s")
    shutil.rmtree(site / OLI)
    (site / f"{OLI}.tar").write_text("<html>503 Service Unavailable</html>" * 20)
    assert _reasons(site) == {
        f"{OLI}.tar": "not a readable tar bundle (not a tar or compressed tar file, or its first header is damaged)"
    }


def test_tar_gz_cut_short_is_truncated_and_the_folder_is_left_as_it_was(real_dir, tmp_path):
    """Old: 'damaged tar bundle after 4 member(s) (Compressed file ended before the end-of-stream marker was
    reached)'; and GDAL wrote '<bundle>.tar.gz.properties' into the record, which the next scan listed as a file
    of unknown name (a whole bundle too)."""
    site = _oli(real_dir, tmp_path / "s")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for f in sorted((site / OLI).iterdir()):
            tf.add(f, arcname=f.name)
    shutil.rmtree(site / OLI)
    whole = gzip.compress(buf.getvalue())
    (site / f"{OLI}.tar.gz").write_bytes(whole)
    assert len(scan_site(site).scenes) == 1
    assert sorted(p.name for p in site.iterdir()) == [f"{OLI}.tar.gz", "site.json"]
    (site / f"{OLI}.tar.gz").write_bytes(whole[:5000])
    reasons = _reasons(site)
    assert list(reasons) == [f"{OLI}.tar.gz"] and re.fullmatch(
        r"truncated: the bundle ends after \d+ member\(s\)", reasons[f"{OLI}.tar.gz"]
    )
    assert sorted(p.name for p in site.iterdir()) == [f"{OLI}.tar.gz", "site.json"]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"type": "Feature", "stac_version": "1.0.0", "id": "x", "assets": 5}',
         "id, properties or assets of the wrong JSON type"),
        ("[1, 2]", "a JSON list, not an object"),
    ],
)  # fmt: skip
def test_stac_item_reason_names_no_exception_class(tmp_path, text, why):
    """Old: 'STAC item that cannot be read (TypeError: ...)'."""
    from reviewer.record.stac import read_item

    path = tmp_path / "item.json"
    path.write_text(text)
    assert read_item(path, set()) == f"STAC item that cannot be read ({why})"


def test_stac_item_that_is_not_json_says_where(tmp_path):
    from reviewer.record.stac import read_item

    path = tmp_path / "item.json"
    path.write_text('{"type": "Feature",\n "id": ')
    assert read_item(path, set()) == "STAC item that cannot be read (not valid JSON: line 2, column 8)"


def test_cli_scan_prints_each_reason_and_nothing_from_gdal(real_dir, tmp_path, capfd):
    site = _oli(real_dir, tmp_path / "s")
    qa = site / OLI / f"{OLI}_QA_PIXEL.TIF"
    _rewrite(qa, compress="lzw")
    data = bytearray(qa.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 300] = b"\xff" * 300
    qa.write_bytes(bytes(data))
    code = main(["--db", str(tmp_path / "db.sqlite"), "scan", str(site)])
    out, err = capfd.readouterr()
    assert code == 0
    line = next(x for x in out.splitlines() if "QA_PIXEL" in x)
    assert line.strip() == (
        f"{OLI}/{OLI}_QA_PIXEL.TIF: unreadable: the compressed pixels of its block at column 0, row 0 cannot be "
        "decoded (the file is damaged)"
    )
    assert not LIBRARY_TEXT.search(err.replace("\n", " ")), err


def test_a_damaged_file_met_by_a_package_clip_is_named_in_the_same_words(real_dir, tmp_path):
    """A review package clips the record's files to the site. Old: "cannot clip <rel>: '/tmp/.../..._SR_B4.TIF'
    not recognized as being in a supported file format."."""
    from reviewer.errors import RecordError
    from reviewer.record.clip import clip_record

    site = _oli(real_dir, tmp_path / "s")
    rel = f"{OLI}/{OLI}_SR_B4.TIF"
    (site / rel).write_bytes(b"II*\x00" + bytes(4))
    with pytest.raises(RecordError) as err:
        clip_record(site, [rel], tmp_path / "out")
    assert err.value.message == f"cannot clip {rel}: its contents are not the format its name says, or its header is damaged"  # fmt: skip


def _s2_site(real_dir: Path, site: Path, mtd: bytes) -> Path:
    src = real_dir / "stactools-sentinel2"
    site.mkdir()
    for band in ("B02", "B03", "B04", "SCL"):
        (site / f"{S2}_{band}_60m.jp2").symlink_to(src / f"{S2}_{band}_60m.jp2")
    (site / "MTD_MSIL2A.xml").write_bytes(mtd)
    with rasterio.open(src / f"{S2}_SCL_60m.jp2") as ds:
        t, crs = ds.transform, ds.crs.to_string()
    w, n = t.c + 900 * t.a, t.f + 900 * t.e
    return write_site_json(site, bbox=[w, n - 20 * 60, w + 20 * 60, n], crs=crs, resolution=60)


def test_sentinel2_metadata_cut_short_leaves_its_scene_out_and_the_scan_goes_on(real_dir, tmp_path):
    """MTD_MSIL2A.xml holds the scene's reflectance offsets. Old: the whole scan failed, 'error: .../MTD_MSIL2A.xml:
    cannot parse metadata (no element found: line 4, column 14)' (expat's words), nothing else listed."""
    whole = (real_dir / "stactools-sentinel2" / "MTD_MSIL2A.xml").read_bytes()
    site = _s2_site(real_dir, tmp_path / "s2", whole[:3000])
    line = whole[:3000].count(b"\n") + 1
    index = scan_site(site)
    assert index.scenes == []
    (problem,) = index.problems
    assert problem.path == "MTD_MSIL2A.xml"
    assert re.fullmatch(
        rf"truncated or not well-formed XML \(line {line}, column \d+\): the reflectance offsets cannot be read; "
        rf"scene {S2} is left out",
        problem.reason,
    ), problem.reason


def test_sentinel2_metadata_with_an_offset_that_is_no_number(real_dir, tmp_path):
    """Old: 'error: internal error (ValueError: could not convert string to float: ...)'."""
    whole = (real_dir / "stactools-sentinel2" / "MTD_MSIL2A.xml").read_text()
    bad = re.sub(r'(<BOA_ADD_OFFSET band_id="4">)[^<]*', r"\1-1OOO", whole, count=1)
    assert bad != whole
    site = _s2_site(real_dir, tmp_path / "s2", bad.encode())
    (problem,) = scan_site(site).problems
    assert (problem.path, problem.reason) == (
        "MTD_MSIL2A.xml",
        f"its BOA_ADD_OFFSET of band_id 4 is not a number ('-1OOO'); scene {S2} is left out",
    )


@pytest.mark.parametrize(
    ("baseline", "stamp", "why"),
    [
        ("latest", None, "its s2:processing_baseline 'latest' is not a baseline such as 04.00: the offset is not known"),
        ("05.O9", None, "its s2:processing_baseline '05.O9' is not a baseline such as 04.00: the offset is not known"),
        ("05.09", "yesterday", "STAC item that cannot be read (its datetime 'yesterday' is not a timestamp)"),
    ],
)  # fmt: skip
def test_stac_item_with_a_baseline_or_date_that_is_none_is_a_reason(tmp_path, baseline, stamp, why):
    """Old: 'error: internal error (ValueError: invalid literal for int() with base 10: ...)' for the baseline;
    the item's date: 'STAC item that cannot be read (ValueError: ...)' in dateutil's words."""
    from tests.formats import S2_CRS, S2_ORIGIN, write_stac_cog

    w, n = S2_ORIGIN
    site = write_site_json(tmp_path / "s", bbox=[w, n - 600, w + 600, n], crs=S2_CRS, resolution=10)
    item_id = "S2B_32TNS_20211201_0_L2A"
    full = np.full((60, 60), 1500, np.uint16)
    path = write_stac_cog(
        site / item_id,
        {"B04": (full, 10), "SCL": (np.full((30, 30), 4, np.uint8), 20)},
        item_id=item_id,
        when=dt.datetime(2021, 12, 1, 10, 15, tzinfo=dt.UTC),
        baseline=baseline,
    )
    if stamp:
        doc = json.loads(path.read_text())
        doc["properties"]["datetime"] = stamp
        path.write_text(json.dumps(doc))
    reasons = _reasons(site)
    expected = why if why.startswith("STAC") else f"STAC item {item_id}: {why}"
    assert reasons[f"{item_id}/{item_id}.json"] == expected


def test_tiff_header_describing_more_than_a_tiff_can_hold_is_damaged_not_truncated(real_dir, tmp_path):
    """A classic TIFF's offsets and byte counts are 32-bit, so it cannot reach past 4 GiB. Old: 'truncated: the
    file has 7560 bytes but its TIFF header describes 4294967640' for a strip byte count garbled on the way."""
    import struct

    site = _oli(real_dir, tmp_path / "s")
    qa = site / OLI / f"{OLI}_QA_PIXEL.TIF"
    data = bytearray(qa.read_bytes())
    ifd = struct.unpack_from("<I", data, 4)[0]
    for k in range(struct.unpack_from("<H", data, ifd)[0]):
        entry = ifd + 2 + 12 * k
        if struct.unpack_from("<H", data, entry)[0] == 279:  # StripByteCounts: one strip, its count in the entry
            assert struct.unpack_from("<HI", data, entry + 2) == (4, 1)  # LONG, 1 value
            count = struct.unpack_from("<I", data, entry + 8)[0]
            struct.pack_into("<I", data, entry + 8, 0xFFFFFFF0)
    qa.write_bytes(bytes(data))
    assert len(data) == 7560 and count == 60 * 60 * 2  # the strip's 7,200 bytes of uint16 from byte 360
    assert _reasons(site)[f"{OLI}/{OLI}_QA_PIXEL.TIF"] == (
        f"damaged header: its TIFF header describes {360 + 0xFFFFFFF0} bytes, more than a TIFF file can hold"
    )


def test_hdf4_descriptors_past_2_gib_are_a_damaged_header_not_a_truncation(tmp_path):
    """HDF4 offsets and lengths are signed 32-bit: no HDF4 file reaches past 2 GiB. Old: 'truncated: the file has
    ... bytes but its HDF4 data descriptors describe 4026531840'."""
    import struct

    from tests.unit.test_record_formats_modis import MOD13, _mod13, _tile_site

    site = _tile_site(tmp_path / "s")
    path = _mod13(site / f"{MOD13}.hdf")
    data = bytearray(path.read_bytes())
    entry = 4 + 6  # the first block's first descriptor: (tag, ref, offset, length)
    assert struct.unpack_from(">H", data, entry)[0] != 1, "not an unused slot (DFTAG_NULL)"
    struct.pack_into(">II", data, entry + 4, 0x70000000, 0x80000000)  # ends at 0xF0000000
    path.write_bytes(bytes(data))
    assert _reasons(site) == {
        f"{MOD13}.hdf": "damaged header: its HDF4 data descriptors describe 4026531840 bytes, more than an HDF4 "
        "file can hold"
    }


def test_grib_cut_short_or_damaged_is_named_and_ecCodes_prints_nothing(tmp_path, capfd):
    """Old: 'cannot read this GRIB file (End of resource reached when reading message)' (ecCodes' words), and for
    a damaged message ecCodes wrote 'ECCODES ERROR   :  ... No final 7777 in message!' lines from C to the
    terminal."""
    from tests.unit.test_record_formats_grib import _era5

    site = write_site_json(tmp_path / "s", bbox=[8.95, 45.45, 9.55, 46.05], crs="EPSG:4326", resolution=0.1)
    whole = _era5(site, "era5.grib").read_bytes()
    (site / "era5.grib").unlink()
    (site / "cut.grib").write_bytes(whole[:301])
    garbled = bytearray(whole)
    garbled[200:260] = bytes(60)  # inside the first message's sections
    (site / "bad.grib").write_bytes(bytes(garbled))
    capfd.readouterr()
    reasons = _reasons(site)
    assert reasons["cut.grib"] == "cannot read this GRIB file: truncated: its data ends before the end its header gives"
    assert reasons["bad.grib"].startswith("cannot read this GRIB file: ")
    assert "ECCODES" not in capfd.readouterr().err


# the site's boundary file (site.json "boundary"): a user's own file, read by every scan and render
BOUNDARY_CASES = [
    ("b.gpkg", b"garbage", "its contents are not the format its name says, or its header is damaged"),
    ("b.shp", b"garbage", "its contents are not the format its name says, or its header is damaged"),
    ("b.geojson", b'{"type": "Polygon", "coordinates": [[[9, 45], [10', "not valid JSON: line 1, column 50"),  # after its 49 characters
    ("b.geojson", b'{"type": "Polygon", "coordinates": [[[9, 45], [10, 45], [10, 46], [9, 91], [9, 45]]]}',
     "a position (9, 91) lies outside lon -180..180, lat -90..90: a GeoJSON is lon/lat (RFC 7946) unless a 'crs' "
     "member names another CRS"),
    ("b.geojson", b'{"type": "Polygon", "coordinates": [[[9, 45], [10, 45], [10]]]}',
     "a position of 1 number(s): each position is a [lon, lat] pair"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "data", "why"), BOUNDARY_CASES, ids=[c[2][:30] for c in BOUNDARY_CASES])
def test_a_damaged_boundary_file_is_one_line_in_the_tools_words(tmp_path, capfd, name, data, why):
    """Old: "'/tmp/.../b.gpkg' not recognized as being in a supported file format.; It might help to specify the
    correct driver explicitly by prefixing the file path with '<DRIVER>:', e.g. 'CSV:path'." (pyogrio's text);
    json's "Expecting ',' delimiter: line 1 column 50 (char 49)"; a latitude of 91: 'error: internal error
    (CPLE_AppDefinedError: Full reprojection failed, ...)'; a one-number position: 'need more than 1 value to
    unpack'."""
    site = write_site_json(
        tmp_path / "s", bbox=[500000, 5000000, 503000, 5003000], crs="EPSG:32632", resolution=30, boundary=name
    )
    (site / name).write_bytes(data)
    code = main(["--db", str(tmp_path / "db.sqlite"), "scan", str(site)])
    err = capfd.readouterr().err
    assert code == 2
    assert err == f"error: {site / name}: cannot read the boundary file: {why}\n"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (b'{"id": "x",\n "bbox": [1, 2', "not valid JSON: line 2, column 15"),  # cut after its 14th character
        (b'{"id": "\xff"}', "not UTF-8 text"),
    ],
)
def test_site_json_that_is_not_json_says_where(tmp_path, capfd, text, why):
    """Old: "not valid JSON: Expecting ',' delimiter: line 2 column 15 (char 26)" (json's words), and for a byte
    that is no UTF-8 "not valid JSON: 'utf-8' codec can't decode byte 0xff in position 8: invalid start byte"."""
    site = tmp_path / "s"
    site.mkdir()
    (site / "site.json").write_bytes(text)
    assert main(["--db", str(tmp_path / "db.sqlite"), "scan", str(site)]) == 2
    assert capfd.readouterr().err == f"error: {site / 'site.json'}: {why}\n"
