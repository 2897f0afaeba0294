"""Decode raw rasters to physical values on the site grid, with fill, saturation and quality masked.

Only this package imports rasterio. Every read returns float32 with NaN where a pixel is masked, so a
render, an index and a statistic all see the same mask.
"""

from __future__ import annotations

import contextlib
import logging
import math
import operator
import os
import re
import stat
import struct
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from reviewer.errors import (
    MissingLayerError,
    NotGeoreferencedError,
    UnreadableFileError,
    WrongProductError,
)
from reviewer.imports import without
from reviewer.record.archive import gdal_path
from reviewer.record.catalog import BandSpec, Product, QualitySpec
from reviewer.record.grid import Grid
from reviewer.record.grid import PixelMap as _PixelMap
from reviewer.record.grid import pixel_map as _pixel_map
from reviewer.record.hdf import is_layer, read_layer
from reviewer.record.reader_errors import what_is_wrong
from reviewer.record.tiff import TiffLayout, direct_image, read_window, tiff_header

with without("boto3", unless_loaded="rasterio"):  # no AWS modules: local files and tar members only
    import rasterio
    from rasterio.enums import Resampling
    from rasterio.errors import NotGeoreferencedWarning, RasterioError

logger = logging.getLogger(__name__)

_INT_DTYPES = {"uint8", "int8", "uint16", "int16", "uint32", "int32"}


def _same_grid(src: rasterio.DatasetReader, grid: Grid) -> bool:
    return (
        grid.origin == (0, 0)
        and src.crs is not None
        and src.crs == grid.crs
        and (src.height, src.width) == tuple(grid.shape)
        and src.transform.almost_equals(grid.transform, precision=1e-6)
    )


#: bytes a read holds per output pixel and band beyond the result: the raw DN, its decoded float32, masks
#: and the nearest-neighbour lookup (two int64 and the float64 coordinates it is made from)
READ_BYTES_PER_PIXEL = 16
LOOKUP_BYTES_PER_PIXEL = 64


def check_read_fits(
    grid: Grid,
    n_bands: int,
    *,
    site: str = "the site",
    cell_m: tuple[float, float] | None = None,
    width_hint: bool = True,
    lookup: bool = True,
) -> None:
    """Refuse, before reading, a read of `n_bands` bands (and the quality layer) onto `grid` that would not fit
    in the memory this machine has free: one error naming the grid's size, suggesting a smaller site or width."""
    import psutil

    rows, cols = grid.shape
    need = rows * cols * ((n_bands + 2) * READ_BYTES_PER_PIXEL + (LOOKUP_BYTES_PER_PIXEL if lookup else 0))
    free = psutil.virtual_memory().available
    if need <= free * 0.8:
        return
    km = f" ({cols * cell_m[0] / 1000:.0f} x {rows * cell_m[1] / 1000:.0f} km)" if cell_m else ""
    width = "give a smaller --width, or " if width_hint else ""
    from reviewer.errors import MemoryBudgetError

    raise MemoryBudgetError(
        f"{site} read at {cols} x {rows} px{km} needs about {need / 2**30:.1f} GB, more than the "
        f"{free / 2**30:.1f} GB of memory free; {width}make a smaller site with "
        "`reviewer site init DIR --bbox W S E N --force`",
        field="width" if width_hint else "bbox",
    )


# ----------------------------------------------------------------------------- truncated files

#: bytes per value of each TIFF field type (1 BYTE ... 13 IFD, 16-18 the BigTIFF 8-byte types)
_TIFF_TYPE_SIZES = dict(zip(range(1, 14), (1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4), strict=True)) | {16: 8, 17: 8, 18: 8}
_TIFF_OFFSETS = {273: 279, 324: 325}  # StripOffsets -> StripByteCounts, TileOffsets -> TileByteCounts
_ARRAY_TAGS = frozenset([*_TIFF_OFFSETS, *_TIFF_OFFSETS.values()])


def head_reader(fh, prefetch: int = 8192):
    """(the first `prefetch` bytes of a file object, read(offset, n)): a header walk's reads served from
    those bytes while they reach, else by seek and read (a file on disk, a member of a .tar bundle)."""
    fh.seek(0)
    first = fh.read(prefetch)

    def read(offset: int, n: int) -> bytes:
        if offset + n <= len(first):
            return first[offset : offset + n]
        fh.seek(offset)
        return fh.read(n)

    return first, read


def tiff_extent(fh, size: int) -> int | None:
    """How many bytes a TIFF's own header says the file holds (IFDs, tag values, strips and tiles); None
    when the header is not a TIFF or is too odd to follow. Reads at most a few small pieces of the file."""
    first, read = head_reader(fh)  # the header and, as GDAL and tifffile write them, the first directory
    return tiff_need(first, size, read)


def tiff_need(first: bytes, size: int, read) -> int | None:
    """tiff_extent from the file's first bytes (`first`) and read(offset, n) for anything beyond them.

    Every directory's end, every tag value stored outside its entry, and every strip's or tile's
    offset + byte count (a block of count 0 is sparse: not written) is a byte the file must hold."""
    head = tiff_header(first)
    if head is None:
        return None
    lay, ifd, need = head
    cnt_size, entry_size, off_size = lay.count.size, lay.entry_size, lay.offset.size
    seen: set[int] = set()
    while ifd and ifd not in seen and len(seen) < 64:
        seen.add(ifd)
        need = max(need, ifd + cnt_size)
        if need > size:
            return need
        n = lay.count.unpack(read(ifd, cnt_size))[0]
        if n > 4096:
            return None
        end = ifd + cnt_size + n * entry_size + off_size
        need = max(need, end)
        if end > size:
            return need
        raw = read(ifd + cnt_size, n * entry_size + off_size)
        need, arrays = _entries_need(lay, raw, n, need)
        if need > size:
            return need
        for otag, ctag in _TIFF_OFFSETS.items():
            if otag in arrays and ctag in arrays:
                offsets = _tiff_values(lay, arrays[otag], raw, read)
                counts = _tiff_values(lay, arrays[ctag], raw, read)
                if offsets is None or counts is None:
                    return None
                need = max(need, _blocks_end(offsets, counts))
        ifd = lay.offset.unpack_from(raw, n * entry_size)[0]
    return need


def _entries_need(lay: TiffLayout, raw: bytes, n: int, need: int) -> tuple[int, dict[int, tuple[int, int, int]]]:
    """(the bytes a directory's out-of-entry tag values reach, at least `need`; its strip/tile arrays as
    (type, count, offset), offset -1 - i when the values sit in entry i itself)."""
    arrays: dict[int, tuple[int, int, int]] = {}
    off_size = lay.offset.size
    sizes = _TIFF_TYPE_SIZES
    for i, (tag, typ, count, where) in enumerate(lay.entry.iter_unpack(raw[: n * lay.entry_size])):
        nbytes = sizes.get(typ, 1) * count
        inline = nbytes <= off_size
        if not inline and where + nbytes > need:
            need = where + nbytes
        if tag in _ARRAY_TAGS:
            arrays[tag] = (typ, count, -1 - i if inline else where)
    return need, arrays


def _blocks_end(offsets: tuple[int, ...], counts: tuple[int, ...]) -> int:
    """The end of the last strip or tile; a block of byte count 0 is sparse (not written) and ends nowhere."""
    if len(offsets) == len(counts) and 0 not in counts:  # (every block written: the sums at C speed)
        return max(map(operator.add, offsets, counts), default=0)
    return max((o + c for o, c in zip(offsets, counts, strict=False) if c), default=0)


_VALUE_CODES = {3: "H", 4: "I", 16: "Q"}  # SHORT, LONG, LONG8: the types strip/tile arrays are written in


def _tiff_values(lay: TiffLayout, spec: tuple[int, int, int], raw: bytes, read):
    typ, count, where = spec
    code = _VALUE_CODES.get(typ)
    if code is None or count > 1_000_000:
        return None
    nbytes = count * struct.calcsize(code)
    if where < 0:  # inline in IFD entry number -1 - where
        i = -1 - where
        data = raw[(i + 1) * lay.entry_size - lay.offset.size : (i + 1) * lay.entry_size]
    else:
        data = read(where, nbytes)
    if len(data) < nbytes:
        return None
    return struct.unpack_from(f"{lay.bo}{count}{code}", data)


def truncation(path: str | Path) -> str | None:
    """'truncated: ...' when a TIFF is shorter than its own header says, else None (also for non-TIFFs)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            need = tiff_extent(fh, size)
            fh.seek(0)
            big = fh.read(4) in (b"II+\x00", b"MM\x00+")
    except (OSError, struct.error):
        return None
    return tiff_extent_problem(need, size, big)


#: a classic TIFF's offsets and byte counts are 32-bit: no classic TIFF reaches past 4 GiB
CLASSIC_TIFF_MAX = 1 << 32


def tiff_extent_problem(need: int | None, size: int, big: bool) -> str | None:
    """Why a TIFF of `size` bytes whose header describes `need` is incomplete, or None: truncated, or (a classic
    TIFF describing more than 4 GiB: numbers no writer makes) a damaged header, which no download cut short gives."""
    if need is None or need <= size:
        return None
    if not big and need > CLASSIC_TIFF_MAX:
        return f"damaged header: its TIFF header describes {need} bytes, more than a TIFF file can hold"
    return f"truncated: the file has {size} bytes but its TIFF header describes {need}"


def _not_regular(path: str | Path) -> str | None:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # rasterio names a missing file itself
    if stat.S_ISREG(mode):
        return None
    from reviewer.fileio import file_kind

    return f"not a regular file ({file_kind(mode)}), so it is not read"


def gdal_env():
    """The caller's GDAL environment when it has one (a scan opens one per batch of scenes: a new one per
    file cost as much as the file's check), else a new one (GDAL's messages go to logging either way)."""
    return contextlib.nullcontext() if rasterio.env.hasenv() else rasterio.Env()


def read_raw(path: str | Path, grid: Grid | None, *, nodata: float | None) -> np.ndarray:
    """Raw DNs of band 1 on `grid` (nearest neighbour: QA codes and DNs are never blended).

    GDAL's messages go to logging (rasterio's logger), not stderr; a file that fails names its cause
    (truncated, not georeferenced, not a regular file)."""
    if is_layer(path):  # a layer of an HDF4/HDF5/netCDF file as distributed
        return read_layer(path, grid, nodata=nodata)
    bad = _not_regular(path)
    if bad:
        raise UnreadableFileError(bad, path=path)
    try:
        with gdal_env(), warnings.catch_warnings():
            # a file without georeferencing gets our own NotGeoreferencedError below, not GDAL's warning
            warnings.simplefilter("ignore", NotGeoreferencedWarning)
            src = rasterio.open(gdal_path(path))  # a member of a .tar bundle is read in place (/vsitar/)
            with src:
                if grid is None or _same_grid(src, grid):
                    return src.read(1)
                if src.crs is None or src.transform.is_identity:
                    cut = truncation(path)
                    if cut:
                        raise UnreadableFileError(cut, path=path)
                    raise NotGeoreferencedError(
                        "has no georeferencing (no CRS or geotransform), so it cannot be placed on the site grid",
                        path=path,
                    )
                fill = nodata if nodata is not None else src.nodata
                pmap = _pixel_map(src.crs.to_wkt(), tuple(src.transform), (src.height, src.width), grid)
                out_dtype = np.dtype(src.dtypes[0])
                if pmap.window is None:
                    return np.full(grid.shape, fill if fill is not None else 0, dtype=out_dtype)
                shape = decimated_shape(pmap, grid)
                if shape is not None:  # a grid coarser than the file: read at its resolution (overviews)
                    window = src.read(1, window=pmap.window, out_shape=shape, resampling=Resampling.nearest)
                    return _window_on_grid(window, _decimated_map(pmap, shape), fill)
                window = src.read(1, window=pmap.window)
    except RasterioError as exc:
        cut = truncation(path)
        raise UnreadableFileError(cut or f"unreadable: {what_is_wrong(exc)}", path=path) from exc
    return _window_on_grid(window, pmap, fill)


def decimated_shape(pmap: _PixelMap, grid: Grid) -> tuple[int, int] | None:
    """The shape to read a file's window at when the grid is at least twice as coarse as the file (a render
    or a viewer at display size): about one file pixel per grid pixel, so a read holds about the output's
    pixels and GDAL serves it from a COG's overviews where the file has them. None: read at full resolution."""
    (r0, r1), (c0, c1) = pmap.window
    rows, cols = r1 - r0, c1 - c0
    k = min(rows / max(1, grid.shape[0]), cols / max(1, grid.shape[1]))
    if k < 2:
        return None
    return max(1, math.ceil(rows / k)), max(1, math.ceil(cols / k))


#: {(id of a lookup, read shape): (the lookup, its decimated twin)}: the bands of a date, and the dates of
#: one tile, share a lookup (a viewer steps through a stack with it)
_DECIMATED: dict[tuple[int, tuple[int, int]], tuple[_PixelMap, _PixelMap]] = {}


def _decimated_map(pmap: _PixelMap, shape: tuple[int, int]) -> _PixelMap:
    """pmap's lookup into its window read at `shape` instead (each file pixel to the decimated pixel over it)."""
    key = (id(pmap), shape)
    hit = _DECIMATED.get(key)
    if hit is not None and hit[0] is pmap:
        return hit[1]
    (r0, r1), (c0, c1) = pmap.window
    rows = pmap.rows * shape[0] // (r1 - r0)
    cols = pmap.cols * shape[1] // (c1 - c0)
    out = _PixelMap(((0, shape[0]), (0, shape[1])), rows, cols, pmap.inside, whole=pmap.whole)
    if len(_DECIMATED) >= 16:
        _DECIMATED.clear()
    _DECIMATED[key] = (pmap, out)
    return out


def _window_on_grid(window: np.ndarray, pmap: _PixelMap, fill: float | None) -> np.ndarray:
    """The site-grid pixels from the window of a file the pixel map reads; `fill` outside the file."""
    if pmap.plain:
        return window
    out = window[pmap.rows, pmap.cols]
    if not pmap.whole and not pmap.inside.all():
        if fill is None:
            fill = 0
        out = out.astype(np.result_type(out.dtype, np.min_scalar_type(fill)), copy=False)
        out[~pmap.inside] = fill
    return out


def direct_band(first: bytes, size: int, read, grid: Grid | None, nodata: float) -> np.ndarray | None:
    """read_raw of a plain GeoTIFF quality layer (see tiff.py) from the bytes its check read (`first`, and
    read(offset, n) beyond them), without a GDAL open: the same pixels on `grid`, or None when the file is
    not one tiff.py decodes (the caller then calls read_raw)."""
    from affine import Affine

    image = direct_image(first, size, read)
    if image is None or (image.pixel_is_point and _point_geo_ignored()):
        return None
    rows, cols = image.shape
    transform = Affine.from_gdal(*image.transform)
    if grid is not None and _epsg_wkt(image.epsg) is None:
        return None  # a code the CRS database does not know: GDAL says what it makes of it
    if grid is None or (
        grid.origin == (0, 0)
        and tuple(grid.shape) == image.shape
        and _epsg_is(image.epsg, grid)
        and transform.almost_equals(grid.transform, precision=1e-6)
    ):
        return read_window(image, read, (0, rows), (0, cols)) if rows * cols <= DIRECT_MAX_PIXELS else None
    pmap = _pixel_map(_epsg_wkt(image.epsg), tuple(transform), image.shape, grid)
    if pmap.window is None:
        return np.full(grid.shape, nodata, dtype=image.dtype.newbyteorder("="))
    (r0, r1), (c0, c1) = pmap.window
    if (r1 - r0) * (c1 - c0) > DIRECT_MAX_PIXELS:
        return None
    window = read_window(image, read, *pmap.window)
    return None if window is None else _window_on_grid(window, pmap, nodata)


#: the most pixels direct_band decodes itself: its use is the many small layers whose GDAL open costs more
#: than their pixels; on a whole scene GDAL's inflate and predictor are faster (a 7,741 x 7,591 QA_PIXEL:
#: 1.5 s through zlib and numpy's cumsum, 0.25 s through GDAL)
DIRECT_MAX_PIXELS = 2048 * 2048


def _point_geo_ignored() -> bool:
    """Whether GDAL is told to take a PixelIsPoint tie point as the pixel's corner (GTIFF_POINT_GEO_IGNORE set
    true, by rasterio.Env or the environment): tiff.py's transform is GDAL's default, so GDAL reads it."""
    value = rasterio.env.get_gdal_config("GTIFF_POINT_GEO_IGNORE", normalize=False)
    return value is not None and str(value).upper() not in ("NO", "FALSE", "OFF", "0")


@lru_cache(maxsize=64)
def _epsg_is(code: int, grid: Grid) -> bool:
    """Whether the grid's CRS is EPSG `code`, by rasterio's CRS equality (what _same_grid asks of a file)."""
    return rasterio.crs.CRS.from_epsg(code) == grid.crs


@lru_cache(maxsize=64)
def _epsg_wkt(code: int) -> str | None:
    try:
        return rasterio.crs.CRS.from_epsg(code).to_wkt()
    except rasterio.errors.CRSError:
        return None


def check_not_scaled(raw: np.ndarray, spec: BandSpec, path: str | Path) -> None:
    """A float file where the product is integer DN, holding values already in physical range, is refused."""
    if spec.dtype in _INT_DTYPES and raw.dtype.kind == "f":
        finite = raw[np.isfinite(raw)]
        if spec.fill is not None:
            finite = finite[finite != spec.fill]
        big = np.abs(finite).max() if finite.size else 0.0
        if finite.size and big <= 2.0 and (spec.scale < 0.01):
            raise WrongProductError(
                f"holds already-scaled values (float, max |value| {big:.3g}) where the product is raw {spec.dtype} DN; "
                "use the file as distributed",
                path=path,
            )


# ----------------------------------------------------------------------------- quality


def quality_nodata(quality: QualitySpec) -> int:
    """The QA value that means fill, used for pixels outside a file's footprint after warping."""
    fill = quality.flags.get("fill", (0,))
    if quality.kind == "bits":
        return 1 << fill[0]
    if quality.kind == "bitfield":
        return fill[0] << quality.field_bits[0]
    return fill[0]


def flag_bits(quality: QualitySpec, flags: Iterable[str]) -> int:
    """The bit mask of a bit-flag quality layer's `flags` (one AND tests them all)."""
    bits = 0
    for flag in flags:
        for b in quality.flags.get(flag, ()):
            bits |= 1 << b
    return bits


def flag_array(qa: np.ndarray, quality: QualitySpec, flag: str) -> np.ndarray:
    """Pixels where `flag` (e.g. 'cloud') is set, by bit, class value or bit-field value."""
    values = quality.flags.get(flag)
    if not values:
        return np.zeros(qa.shape, bool)
    if quality.kind == "bits":
        bits = flag_bits(quality, [flag])
        work = qa if qa.dtype.kind == "u" else qa.astype(np.int64)
        return (work & work.dtype.type(bits)) != 0
    if quality.kind == "bitfield":
        start, width = quality.field_bits
        field_value = (qa.astype(np.int64) >> start) & ((1 << width) - 1)
        return np.isin(field_value, values)
    if len(values) == 1:
        return qa == values[0]
    if qa.dtype.itemsize == 1:  # 8-bit class codes: one table lookup instead of np.isin's sort
        table = np.zeros(256, bool)
        table[[v & 0xFF for v in values if -128 <= v <= 255]] = True
        return table[qa.view(np.uint8)]
    return np.isin(qa, values)


_FLAG_TABLES: dict[tuple[int, tuple[str, ...]], tuple[QualitySpec, np.ndarray]] = {}


def _class_table(quality: QualitySpec, flags: tuple[str, ...]) -> np.ndarray:
    """Which 8-bit class codes carry any of `flags` (made once per quality spec and flag set)."""
    hit = _FLAG_TABLES.get((id(quality), flags))
    if hit is None or hit[0] is not quality:
        table = np.zeros(256, bool)
        table[[v & 0xFF for f in flags for v in quality.flags.get(f, ()) if -128 <= v <= 255]] = True
        hit = _FLAG_TABLES[(id(quality), flags)] = (quality, table)
    return hit[1]


def mask_from_flags(qa: np.ndarray, quality: QualitySpec, flags: Iterable[str]) -> np.ndarray:
    flags = list(flags)
    if quality.kind == "bits" and qa.dtype.kind == "u":
        # one AND over all bits instead of one pass per flag
        return (qa & qa.dtype.type(flag_bits(quality, flags))) != 0
    if quality.kind == "classes" and qa.dtype.itemsize == 1:  # all flags' codes in one table lookup
        return _class_table(quality, tuple(flags)).take(_codes(qa))
    out = np.zeros(qa.shape, bool)
    for flag in flags:
        out |= flag_array(qa, quality, flag)
    return out


# ----------------------------------------------------------------------------- Sentinel-2 offsets


@lru_cache(maxsize=512)
def _mtd_offsets(mtd_path: str, quant: float) -> tuple[dict[str, float], float, str | None, str | None]:
    """BOA_ADD_OFFSET per band id, the quantification value (`quant`, the catalogue's, when the file has
    none), the spacecraft and the processing baseline from MTD_MSIL2A.xml."""
    try:
        root = ET.parse(mtd_path).getroot()
    except ET.ParseError as exc:  # (a download cut short: "no element found")
        line, col = exc.position
        raise UnreadableFileError(
            f"truncated or not well-formed XML (line {line}, column {col}): the reflectance offsets cannot be read",
            path=mtd_path,
        ) from exc
    except OSError as exc:
        raise UnreadableFileError(f"unreadable ({exc.strerror or 'input/output error'})", path=mtd_path) from exc
    offsets: dict[str, float] = {}
    spacecraft = baseline = None
    for el in root.iter():
        tag = el.tag.split("}")[-1]
        if tag == "BOA_ADD_OFFSET" and el.text:
            offsets[el.attrib.get("band_id", "")] = _mtd_number(
                el.text, f"BOA_ADD_OFFSET of band_id {el.attrib.get('band_id', '?')}", mtd_path
            )
        elif tag == "BOA_QUANTIFICATION_VALUE" and el.text:
            quant = _mtd_number(el.text, "BOA_QUANTIFICATION_VALUE", mtd_path)
        elif tag == "SPACECRAFT_NAME" and el.text:
            spacecraft = el.text.strip()
        elif tag == "PROCESSING_BASELINE" and el.text:
            baseline = el.text.strip()
            if not re.fullmatch(r"\d+\.\d+", baseline):
                raise UnreadableFileError(
                    f"its PROCESSING_BASELINE {baseline[:40]!r} is not a baseline such as 04.00", path=mtd_path
                )
    return offsets, quant, spacecraft, baseline


def _mtd_number(text: str, what: str, mtd_path: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise UnreadableFileError(f"its {what} is not a number ({text.strip()[:40]!r})", path=mtd_path)
    return value


def baseline_offset(rule: dict, baseline: str) -> float:
    """The offset of a processing baseline ('04.00' and later: -1000) by the catalog's by_baseline steps."""
    offset = 0.0
    key = tuple(int(p) for p in baseline.split("."))
    for step in rule.get("by_baseline", []):
        if key >= tuple(int(p) for p in step["from"].split(".")):
            offset = float(step["offset"])
    return offset


def _baseline_in_path(rule: dict, band_path: Path, stop: Path | None) -> str | None:
    """The baseline a SAFE folder's name states (S2A_MSIL2A_..._N0400_...) for a band inside it."""
    pattern = rule.get("baseline_in_name")
    if not pattern:
        return None
    for folder in band_path.parents:
        m = re.search(pattern, folder.name)
        if m:
            return f"{m['major']}.{m['minor']}"
        if stop is not None and folder == stop:
            break
    return None


def find_metadata(band_path: Path, name: str, stop: Path | None = None) -> Path | None:
    """The product metadata file next to a band or in a parent folder (SAFE layout), up to `stop`."""
    folder = band_path.parent
    for _ in range(6):
        candidate = folder / name
        if candidate.is_file():
            return candidate
        if stop is not None and folder == stop or folder.parent == folder:
            break
        folder = folder.parent
    return None


def radiometric_offset(product: Product, band: str, date, band_path: Path, stop: Path | None = None) -> dict:
    """How DN becomes reflectance for products whose offset changed over time (S2 baseline 04.00)."""
    rule = product.raw.get("radiometric_offset")
    if not rule:
        return {}
    mtd = find_metadata(band_path, rule["metadata"], stop)
    if mtd is not None:
        offsets, quant, spacecraft, baseline = _mtd_offsets(str(mtd), float(rule["quantification"]))
        band_id = str(rule.get("band_ids", {}).get(band, ""))  # the band's place in the metadata's list
        if offsets:
            out = {"offset": offsets.get(band_id, 0.0), "quantification": quant, "offset_source": mtd.name}
        elif baseline:  # no per-band list: the baseline's rule (the list exists only from 04.00)
            source = f"processing baseline {baseline} ({mtd.name})"
            out = {"offset": baseline_offset(rule, baseline), "quantification": quant, "offset_source": source}
        else:
            out = {"offset": 0.0, "quantification": quant, "offset_source": mtd.name}
        mapping = product.raw.get("platform_from_metadata", {}).get("map", {})
        if spacecraft and spacecraft in mapping:
            out["platform"] = mapping[spacecraft]
        return out
    quant = float(rule["quantification"])
    baseline = _baseline_in_path(rule, band_path, stop)
    if baseline:
        source = f"processing baseline {baseline} (SAFE folder name)"
        return {"offset": baseline_offset(rule, baseline), "quantification": quant, "offset_source": source}
    offset = 0.0
    for step in rule.get("by_date", []):
        if date.isoformat() >= step["from"]:
            offset = float(step["offset"])
    return {
        "offset": offset,
        "quantification": quant,
        "offset_source": "acquisition date",
    }


def band_scaling(spec: BandSpec, extra: dict | None) -> tuple[float, float]:
    """(scale, offset) for physical = DN * scale + offset; S2 offsets come from the scene's metadata."""
    if extra and "quantification" in extra and spec.kind == "physical":
        quant = float(extra["quantification"])
        return 1.0 / quant, float(extra.get("offset", 0.0)) / quant
    return spec.scale, spec.offset


def decode(
    raw: np.ndarray,
    spec: BandSpec,
    extra: dict | None = None,
    *,
    out: np.ndarray | None = None,
    masked: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Physical float32 values (NaN at fill/saturated/out-of-range, and where `masked`: the caller's quality
    mask, set in the same pass) and the out-of-range flag array; the values written into `out` (float32, raw's
    shape) when given."""
    scale, offset = band_scaling(spec, extra)
    if raw.dtype.kind in "ui" and raw.dtype.itemsize == 1:  # 256 codes: one table lookup, same values
        values, out_of_range = _decode_table(spec, scale, offset, raw.dtype.str)
        index = _codes(raw)
        values = values.take(index, out=out)
        if masked is not None:
            np.copyto(values, np.float32(np.nan), where=masked)
        return values, out_of_range.take(index)
    return _decode(raw, spec, scale, offset, out, masked)


_OWN_TABLES: dict[tuple, tuple[QualitySpec, tuple[np.ndarray, np.ndarray]]] = {}


def _decode_own_quality(raw: np.ndarray, spec: BandSpec, extra: dict | None, quality: QualitySpec, flags, out=None):
    """decode() of a band that is its own quality layer (MODIS snow) with its masked codes NaN in the same
    table: one lookup instead of a lookup and a masked assignment (which cost more than the read)."""
    scale, offset = band_scaling(spec, extra)
    key = (spec, scale, offset, raw.dtype.str, id(quality), tuple(flags))
    hit = _OWN_TABLES.get(key)
    if hit is None or hit[0] is not quality:
        values, oor = _decode_table(spec, scale, offset, raw.dtype.str)
        values = values.copy()
        values[_class_table(quality, tuple(flags))] = np.nan
        hit = _OWN_TABLES[key] = (quality, (values, oor))
    index = _codes(raw)
    return hit[1][0].take(index, out=out), hit[1][1].take(index)


def _codes(raw: np.ndarray) -> np.ndarray:
    """8-bit codes as table indices (take() with intp indices is ~3x faster than indexing by uint8)."""
    return raw.view(np.uint8).astype(np.intp)


@lru_cache(maxsize=256)
def _decode_table(spec: BandSpec, scale: float, offset: float, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """decode() of every 8-bit code, element by element the same arithmetic (so the same float32 bits)."""
    return _decode(np.arange(256, dtype=np.uint8).view(np.dtype(dtype)), spec, scale, offset)


def _decode(
    raw: np.ndarray,
    spec: BandSpec,
    scale: float,
    offset: float,
    out: np.ndarray | None = None,
    masked: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    bad = raw == spec.fill if spec.fill is not None else np.zeros(raw.shape, bool)
    if raw.dtype.kind == "f":
        bad |= ~np.isfinite(raw)
    if spec.saturated is not None:
        bad |= raw == spec.saturated
    if spec.valid is not None:
        lo, hi = spec.valid
        out_of_range = ~bad & ((raw < lo) | (raw > hi))
    else:
        out_of_range = np.zeros(raw.shape, bool)
    # in place on one array (the same float32 arithmetic as astype * scale + offset, without a temporary)
    values = np.empty(raw.shape, np.float32) if out is None else out
    np.multiply(raw, np.float32(scale), out=values, dtype=np.float32, casting="unsafe")
    values += np.float32(offset)
    bad |= out_of_range
    if masked is not None:
        bad |= masked
    np.copyto(values, np.float32(np.nan), where=bad)  # (one masked pass: each cost about a decode of the band)
    return values, out_of_range


# ----------------------------------------------------------------------------- scene reads


@dataclass
class SceneData:
    """What one read of a scene gives: physical bands, the quality flags used, and what was masked."""

    bands: dict[str, np.ndarray]
    masked: np.ndarray
    flags: dict[str, np.ndarray] = field(default_factory=dict)
    out_of_range: dict[str, int] = field(default_factory=dict)
    stacked: np.ndarray | None = None  # (band, y, x): the bands as one array, when read_scene was asked to


def _band_path(scene, token: str) -> str:
    rel = scene.files.get(token)
    damaged = scene.extra.get("damaged", {}).get(token) if isinstance(scene.extra, dict) else None
    if rel is None and damaged:  # left out at scan time: say why, naming the file
        raise UnreadableFileError(damaged["reason"], path=Path(scene.files_root) / damaged["path"])
    if rel is None:
        raise MissingLayerError(f"scene {scene.scene_id} has no {token} band", path=scene.files_root)
    return os.path.join(scene.files_root, rel)  # (a str: pathlib cost more than a granule's check)


#: Reads the bands of one scene side by side; a separate pool, so callers' own threads never wait on it.
_READERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="band-read")
#: a read of at most this many pixels a band goes band after band: there the pool's threads (each setting up its
#: GDAL) cost more than they save. A render's 1,000 px box in a fresh process: 0.07 s CPU serial, 0.11 s pooled
#: (and slower on the wall on a loaded machine); reads of the viewer's 1,600 px frames and whole frames stay pooled
SERIAL_READ_PX = 1_200_000


def read_quality(scene, product: Product, grid: Grid | None) -> np.ndarray | None:
    if product.quality is None:
        return None
    token = product.quality.band
    if token not in scene.files:
        raise MissingLayerError(
            f"scene {scene.scene_id} has no quality layer {token}; refusing to show unmasked values",
            path=scene.files_root,
        )
    return read_raw(_band_path(scene, token), grid, nodata=quality_nodata(product.quality))


@dataclass
class SceneDN:
    """One read of a scene's files, not decoded yet: each band's raw DN, the quality layer and the mask flags a
    decode hides, the radiometric-saturation layer and which bit of it each band has. read_scene decodes it into
    physical values; a render looks its DN up in colour tables (render_dn.py), without float values."""

    scene: Any  # the scan.Scene read (scan imports this module)
    product: Product
    specs: list[tuple[str, BandSpec]]
    raws: dict[str, np.ndarray]  # by common name (a band that is its own quality layer: the quality layer)
    qa: np.ndarray | None
    mask_flags: tuple[str, ...]
    radsat: np.ndarray | None = None
    saturation_bits: dict[str, int] = field(default_factory=dict)  # band token -> bit of `radsat`
    slc_off: bool = False  # Landsat 7 after the SLC failure: fill is a gap, masked in every band

    def own_quality(self, raw: np.ndarray) -> bool:
        """Whether `raw` is the quality layer itself as a band of 8-bit class codes (MODIS snow)."""
        q = self.product.quality
        return raw is self.qa and q.kind == "classes" and raw.dtype.kind in "ui" and raw.dtype.itemsize == 1

    def saturated(self, spec: BandSpec, rows: slice = slice(None)) -> np.ndarray | None:
        """The band's radiometrically saturated pixels (in `rows`), or None when the scene does not flag them."""
        if self.radsat is None or spec.token not in self.saturation_bits:
            return None
        part = self.radsat[rows]
        return (part & part.dtype.type(1 << self.saturation_bits[spec.token])) != 0


def read_scene_dn(
    scene, product: Product, names: Sequence[str], grid: Grid | None, *, mask: Iterable[str] | None = None
) -> SceneDN:
    """The files read_scene decodes, read on `grid` (see read_scene) and not decoded."""
    quality = product.quality
    specs = []
    for name in names:
        spec = product.band_by_name(name)
        if spec is None:
            raise MissingLayerError(f"product {product.id} has no band '{name}'", path=scene.files_root)
        specs.append((name, spec))
    sat_spec = product.raw.get("saturation")
    wants_radsat = bool(
        sat_spec and sat_spec["band"] in scene.files and any(s.token in sat_spec.get("bits", {}) for _, s in specs)
    )
    qa_token = quality.band if quality else None
    qa_fill = quality_nodata(quality) if quality else None
    # a band that is its own quality layer (MODIS snow) is read once
    jobs = {
        name: (_band_path(scene, spec.token), spec.fill)
        for name, spec in specs
        if not (spec.token == qa_token and spec.fill == qa_fill)
    }
    if wants_radsat:
        jobs["\0radsat"] = (_band_path(scene, sat_spec["band"]), 0)
    serial = any(is_layer(path) for path, _ in jobs.values())  # HDF4 calls are serialized anyway
    serial = serial or (grid is not None and grid.shape[0] * grid.shape[1] <= SERIAL_READ_PX)
    futures = {} if serial else {k: _READERS.submit(read_raw, p, grid, nodata=f) for k, (p, f) in jobs.items()}
    try:  # (serial reads share one GDAL environment: setting one up per file was 0.1 ms each)
        with gdal_env() if serial else contextlib.nullcontext():
            qa = read_quality(scene, product, grid)
            if serial:
                raws = {key: read_raw(path, grid, nodata=fill) for key, (path, fill) in jobs.items()}
        if not serial:
            raws = {key: f.result() for key, f in futures.items()}
    finally:
        for f in futures.values():
            f.cancel()
    for name, _spec in specs:
        if name not in raws and name not in jobs:
            raws[name] = qa
    mask_flags = tuple(mask) if mask is not None else (quality.default_mask if quality else ())
    radsat = raws.pop("\0radsat", None)
    return SceneDN(
        scene, product, specs, raws, qa, mask_flags, radsat,
        dict(sat_spec.get("bits", {})) if radsat is not None else {},
        product.slc_off_after is not None and scene.date > product.slc_off_after,
    )  # fmt: skip


def read_scene(
    scene,
    product: Product,
    names: Sequence[str],
    grid: Grid | None,
    *,
    mask: Iterable[str] | None = None,
    overlay_flags: Iterable[str] = (),
    stacked: bool = False,
) -> SceneData:
    """Read bands (by common name) of one scene on `grid`, masked by `mask` flags (default: product's); with
    `stacked`, decoded straight into one (band, y, x) array (SceneData.stacked; no copy to stack them after).

    The files of the scene are read concurrently (GDAL decompresses outside the GIL)."""
    dn = read_scene_dn(scene, product, names, grid, mask=mask)
    return decode_scene(dn, overlay_flags=overlay_flags, stacked=stacked, grid=grid)


def decode_scene(
    dn: SceneDN, *, overlay_flags: Iterable[str] = (), stacked: bool = False, grid: Grid | None = None
) -> SceneData:
    """read_scene's decoding of what read_scene_dn read (`grid`: the grid it was read on, if any)."""
    scene, quality, qa, specs, raws, mask_flags = dn.scene, dn.product.quality, dn.qa, dn.specs, dn.raws, dn.mask_flags
    masked = np.zeros(grid.shape if grid else qa.shape, bool) if qa is not None or grid else None
    flags: dict[str, np.ndarray] = {}
    if qa is not None:
        masked = mask_from_flags(qa, quality, mask_flags)
        for flag in set(overlay_flags):
            flags[flag] = flag_array(qa, quality, flag)
    bands: dict[str, np.ndarray] = {}
    out_of_range: dict[str, int] = {}
    shape = raws[specs[0][0]].shape if specs else None
    stack = np.empty((len(specs), *shape), np.float32) if stacked and shape is not None else None
    for i, (name, spec) in enumerate(specs):
        path = _band_path(scene, spec.token)
        raw = raws[name]
        check_not_scaled(raw, spec, path)
        slot = stack[i] if stack is not None and raw.shape == shape else None
        own = dn.own_quality(raw)
        if masked is not None and raw.shape != masked.shape:
            raise UnreadableFileError(
                f"band is {raw.shape[0]} x {raw.shape[1]} but its quality layer is {masked.shape[0]} x {masked.shape[1]}",
                path=path,
            )
        # every mask of the band NaN in decode's one masked pass (each such pass cost about a decode of the band)
        hide = None if own else masked  # (an own quality layer's masked codes are NaN in its decode table already)
        saturated = dn.saturated(spec)
        if saturated is not None:
            hide = saturated if hide is None else hide | saturated
        if dn.slc_off and spec.fill is not None:
            gaps = raw == spec.fill  # SLC-off gaps are fill: masked, never zeros
            hide = gaps if hide is None else hide | gaps
        if own:
            values, oor = _decode_own_quality(raw, spec, scene.extra, quality, mask_flags, out=slot)
            if hide is not None:
                np.copyto(values, np.float32(np.nan), where=hide)
        else:
            values, oor = decode(raw, spec, scene.extra, out=slot, masked=hide)
        if masked is None:
            masked = np.zeros(values.shape, bool)
        if oor.any():
            out_of_range[name] = int(oor.sum())
            logger.info("%s: %d values of %s outside the valid range were masked", scene.scene_id, oor.sum(), name)
        bands[name] = values
    # (every band went into its slot: a band of another shape than the first is refused above)
    return SceneData(bands=bands, masked=masked, flags=flags, out_of_range=out_of_range, stacked=stack)


def scene_fractions(
    scene, product: Product, grid: Grid | None, inside: np.ndarray | None, qa: np.ndarray | None = None
) -> dict[str, float]:
    """valid, clear and cloud fractions from the quality layer (or the data band when there is none);
    `qa`: the quality layer on `grid` when the caller has read it already (the scan of an HDF4 granule)."""
    counted = None
    if product.quality is not None and qa is None and grid is not None and (inside is None or inside.all()):
        counted = _counts_in_window(scene, product, grid)
    if counted is not None:
        total = grid.shape[0] * grid.shape[1]
        n_valid, n_cloud, n_snow = counted
    elif product.quality is not None:
        if qa is None:
            qa = read_quality(scene, product, grid)
        if inside is not None and inside.shape == qa.shape:
            total = int(np.count_nonzero(inside))
            if total == qa.size:
                pixels = qa
            elif qa.dtype.itemsize > 1 and _plain_bits(qa, product) and "fill" in product.quality.flags:
                pixels = _outside_as_fill(qa, inside, product.quality)  # (Landsat QA_PIXEL)
            else:
                pixels = qa[inside]
        else:
            total, pixels = qa.size, qa
        n_valid, n_cloud, n_snow = _quality_counts(pixels, product)
    else:
        token = next(t for t, s in product.bands.items() if s.kind in ("physical", "classes") and t in scene.files)
        spec = product.bands[token]
        path = _band_path(scene, token)
        raw = read_raw(path, grid, nodata=spec.fill)
        check_not_scaled(raw, spec, path)
        fill = (raw == spec.fill) if spec.fill is not None else np.zeros(raw.shape, bool)
        if raw.dtype.kind == "f":
            fill |= ~np.isfinite(raw)
        if inside is not None and inside.shape == fill.shape:
            total = int(np.count_nonzero(inside))
            fill = fill | ~inside
        else:
            total = fill.size
        n_valid, n_cloud, n_snow = fill.size - int(np.count_nonzero(fill)), 0, None
    out = {
        "valid_fraction": n_valid / total if total else 0.0,
        "clear_fraction": (n_valid - n_cloud) / total if total else 0.0,
        "cloud_fraction": n_cloud / n_valid if n_valid else 1.0,
    }
    if n_snow is not None:
        out["snow_fraction"] = n_snow / total if total else 0.0
    return out


def _quality_counts(pixels: np.ndarray, product: Product) -> tuple[int, int, int | None]:
    """(valid, cloudy and valid, snow and clear and valid) pixel counts of quality-layer pixels."""
    if pixels.dtype.kind in "ui" and pixels.dtype.itemsize == 1:  # class codes: count each code once
        return _class_counts(pixels, product)
    if _plain_bits(pixels, product):
        return _bit_counts(pixels, product)
    fill, cloudy, snow = _quality_classes(pixels, product.quality, product)
    valid = ~fill
    n_valid = int(np.count_nonzero(valid))
    n_cloud = int(np.count_nonzero(cloudy & valid))
    return n_valid, n_cloud, int(np.count_nonzero(snow & valid & ~cloudy)) if snow is not None else None


def _counts_in_window(scene, product: Product, grid: Grid) -> tuple[int, int, int | None] | None:
    """_quality_counts of the quality layer on `grid`, counted on the file's own pixels, each weighted by how
    many grid pixels take it (rows times columns: the lookup of a north-up file in the site's CRS is
    separable), instead of placing the layer on the grid first: the same counts, without the grid-sized copy
    (a Sentinel-2 tile's 20 m SCL on its 10 m site is 121 M pixels, four times the file's). None when that
    does not apply (read_scene's path then places the layer): a layer of an HDF/netCDF file, another CRS, a
    grid coarser than the file (read_raw reads those decimated), anything GDAL does not open."""
    path = _band_path(scene, product.quality.band) if product.quality.band in scene.files else None
    if path is None or is_layer(path) or _not_regular(path):
        return None
    try:
        with gdal_env(), warnings.catch_warnings():
            warnings.simplefilter("ignore", NotGeoreferencedWarning)
            with rasterio.open(gdal_path(path)) as src:
                if src.crs is None or src.transform.is_identity:
                    return None
                pmap = _pixel_map(src.crs.to_wkt(), tuple(src.transform), (src.height, src.width), grid)
                if pmap.window is None or pmap.rows.shape[-1] != 1 or pmap.cols.shape[0] != 1:
                    return None  # (not the separable lookup)
                if decimated_shape(pmap, grid) is not None:
                    return None
                if not pmap.whole and not pmap.inside.all() and "fill" not in product.quality.flags:
                    return None  # outside the file is filled with a code that is not fill
                window = src.read(1, window=pmap.window)
    except RasterioError:
        return None  # read_raw says what is wrong with the file
    row_weights, col_weights = _lookup_weights(pmap)
    return _weighted_counts(window, row_weights, col_weights, product)


def _lookup_weights(pmap: _PixelMap) -> tuple[np.ndarray, np.ndarray]:
    """How many grid rows take each window row, and grid columns each window column (outside: none)."""
    (r0, r1), (c0, c1) = pmap.window
    if pmap.whole:
        rows_in, cols_in = slice(None), slice(None)
    else:  # a pixel inside: its column says which rows are inside, its row which columns
        i, j = divmod(int(pmap.inside.argmax()), pmap.inside.shape[1])
        rows_in, cols_in = pmap.inside[:, j], pmap.inside[i]
    row_weights = np.bincount(pmap.rows[:, 0][rows_in], minlength=r1 - r0)
    col_weights = np.bincount(pmap.cols[0][cols_in], minlength=c1 - c0)
    return row_weights, col_weights


def _weighted_counts(window: np.ndarray, row_weights, col_weights, product: Product) -> tuple[int, int, int | None]:
    """Σ over blocks of rows of one weight a and columns of one weight b of a * b * _quality_counts(block)."""
    n_valid = n_cloud = n_snow = 0
    snow_counted = False
    for a in _weights_present(row_weights):
        rows = row_weights == a
        for b in _weights_present(col_weights):
            cols = col_weights == b
            block = window if rows.all() and cols.all() else window[np.ix_(rows, cols)]
            v, c, s = _quality_counts(block, product)
            w = int(a) * int(b)
            n_valid, n_cloud = n_valid + w * v, n_cloud + w * c
            if s is not None:
                snow_counted, n_snow = True, n_snow + w * s
    return n_valid, n_cloud, n_snow if snow_counted else None


def _weights_present(weights: np.ndarray) -> np.ndarray:
    """The distinct weights above 0, ascending (np.unique's answer; its first call imports numpy.ma, 5 ms of a
    tile's scan)."""
    present = np.flatnonzero(np.bincount(weights, minlength=1))
    return present[present > 0]


def _outside_as_fill(qa: np.ndarray, inside: np.ndarray, quality: QualitySpec) -> np.ndarray:
    """A copy of a bit-flag layer with the fill flag set on every pixel outside the site boundary: counted
    as fill (neither valid, cloudy nor snow), the same counts as cutting them out, in two passes where
    qa[inside] gathered the inside pixels one by one (a third of a scene's fractions)."""
    out = qa.copy()
    np.bitwise_or(out, out.dtype.type(flag_bits(quality, ["fill"])), out=out, where=~inside)
    return out


def _plain_bits(pixels: np.ndarray, product: Product) -> bool:
    """Unsigned bit flags in a layer of their own (Landsat QA_PIXEL): fill is the fill flag alone."""
    quality = product.quality
    return quality.kind == "bits" and pixels.dtype.kind == "u" and quality.band != next(iter(product.bands))


def _bit_counts(pixels: np.ndarray, product: Product) -> tuple[int, int, int | None]:
    """(valid, cloudy and valid, snow and clear and valid) pixel counts of unsigned bit flags, by counting
    the ANDed layer rather than building the boolean masks (an AND per flag set beats a histogram of
    65536 codes, and counts beat masks): the same counts as _quality_classes' masks."""
    quality = product.quality
    one = pixels.dtype.type
    fill, cloud = one(flag_bits(quality, ["fill"])), one(flag_bits(quality, quality.cloud_flags))
    snow = one(flag_bits(quality, ["snow"])) if "snow" in quality.flags else None
    flat = pixels.reshape(-1)
    n_fill = n_cloud = n_snow = 0
    for k in range(0, flat.size, BIT_COUNT_BLOCK):  # in blocks that stay in cache: a whole Landsat scene's
        block = flat[k : k + BIT_COUNT_BLOCK]  # temporaries took 7 s of its 9 s scan, in memory traffic
        f, c = block & fill, block & cloud
        n_fill += int(np.count_nonzero(f))
        n_cloud += int(np.count_nonzero(c)) - int(np.count_nonzero(np.logical_and(c, f)))
        if snow is not None:
            s = block & snow
            n_snow += int(np.count_nonzero(s)) - int(np.count_nonzero(np.logical_and(s, f | c)))
    return pixels.size - n_fill, n_cloud, n_snow if snow is not None else None


#: pixels per block of _bit_counts (256 KB of uint16: its temporaries stay in the CPU cache)
BIT_COUNT_BLOCK = 1 << 17


#: what each 8-bit quality code is, per product and dtype (_class_counts): a 256-byte translation table
#: to these classes, whether snow is counted, and the codes in value order cut into runs of one class
_NOT_VALID, _CLEAR, _CLOUD, _SNOW = 0, 1, 2, 3
_CLASS_TABLES: dict[tuple[int, str], _ClassTable] = {}

#: boundaries between runs of one class (inside a layer's range of codes) up to which _class_counts counts
#: by comparisons: a compare-and-count pass over a cache-sized block costs ~0.1 ns a pixel, bytes.translate
#: ~1.5 ns; past this many passes (bit-packed codes: MOD11A2 QC, 192 runs) the table is cheaper
MAX_CLASS_PASSES = 8
#: pixels per block of the comparison passes (256 KB of bytes and of bools: both stay in the CPU cache)
CLASS_COUNT_BLOCK = 1 << 18


@dataclass(frozen=True)
class _ClassTable:
    product: Product
    table: bytes  # code byte -> class (bytes.translate)
    snow: bool
    starts: np.ndarray  # first code of each run of one class, in value order (of the layer's dtype)
    classes: np.ndarray  # the class of each run


def _code_classes(pixels: np.ndarray, product: Product) -> _ClassTable:
    key = (id(product), pixels.dtype.str)
    hit = _CLASS_TABLES.get(key)
    if hit is None or hit.product is not product:
        codes = np.arange(256, dtype=np.uint8).view(pixels.dtype)
        fill, cloudy, snow = _quality_classes(codes, product.quality, product)
        classes = np.where(fill, _NOT_VALID, np.where(cloudy, _CLOUD, _CLEAR)).astype(np.uint8)
        if snow is not None:
            classes[snow & ~fill & ~cloudy] = _SNOW
        order = np.argsort(codes, kind="stable")  # value order (int8 codes: -128 first)
        by_value, class_by_value = codes[order], classes[order]
        first = np.flatnonzero(np.r_[True, class_by_value[1:] != class_by_value[:-1]])
        hit = _CLASS_TABLES[key] = _ClassTable(
            product, classes.tobytes(), snow is not None, by_value[first], class_by_value[first]
        )
    return hit


def _class_counts(pixels: np.ndarray, product: Product) -> tuple[int, int, int | None]:
    """(valid, cloudy and valid, snow and clear and valid) pixel counts of 8-bit quality codes. The codes of
    one class mostly come in runs (Sentinel-2 SCL: 0-1 not valid, 3 shadow, 4-7 clear, 8-10 cloud, 11 snow),
    so the layer is counted below each run boundary inside its own range of codes, a compare-and-count pass
    per boundary over cache-sized blocks, and the runs' counts are the differences: a whole tile's SCL
    (30 M pixels) in ~10-20 ms where mapping every code to its class (bytes.translate) took 60 ms. Layers
    with many boundaries (bit-packed codes) are mapped through the table: one C pass, then three counts."""
    hit = _code_classes(pixels, product)
    flat = pixels.reshape(-1)
    if flat.size == 0:
        return 0, 0, 0 if hit.snow else None
    lo, hi = flat.min(), flat.max()
    inside = (hit.starts > lo) & (hit.starts <= hi)
    bounds = hit.starts[inside]
    if len(bounds) > MAX_CLASS_PASSES:
        classes = np.frombuffer(pixels.tobytes().translate(hit.table), np.uint8)
        n_valid = int(np.count_nonzero(classes))
        n_cloud = int(np.count_nonzero(classes == _CLOUD))
        return n_valid, n_cloud, int(np.count_nonzero(classes == _SNOW)) if hit.snow else None
    below = np.zeros(len(bounds), np.int64)  # pixels below each boundary
    if len(bounds):
        buf = np.empty(min(flat.size, CLASS_COUNT_BLOCK), bool)
        for k in range(0, flat.size, CLASS_COUNT_BLOCK):
            block = flat[k : k + CLASS_COUNT_BLOCK]
            out = buf[: block.size]
            for i, b in enumerate(bounds):
                np.less(block, b, out=out)
                below[i] += np.count_nonzero(out)
    edges = np.r_[0, below, flat.size]
    runs = np.diff(edges)  # pixels in each run inside [lo, hi]
    first = int(np.searchsorted(hit.starts, lo, side="right")) - 1  # the run holding the lowest code
    classes = hit.classes[first : first + len(runs)]
    n_valid = int(runs[classes != _NOT_VALID].sum())
    n_cloud = int(runs[classes == _CLOUD].sum())
    return n_valid, n_cloud, int(runs[classes == _SNOW].sum()) if hit.snow else None


def _quality_classes(values: np.ndarray, quality: QualitySpec, product: Product):
    """For each distinct quality value: fill (or otherwise unusable), cloud, and snow (None: not counted)."""
    fill = flag_array(values, quality, "fill")
    cloudy = mask_from_flags(values, quality, quality.cloud_flags)
    snow = None
    own = quality.band == next(iter(product.bands))
    if "snow" in quality.flags and not own:
        snow = flag_array(values, quality, "snow")
    if own or quality.kind == "classes":
        # products whose quality codes include other unusable classes (night, no decision ...)
        fill = fill | mask_from_flags(
            values, quality, [f for f in quality.default_mask if f not in quality.cloud_flags]
        )
    return fill, cloudy, snow


# ----------------------------------------------------------------------------- file geometry


def file_geometry(path: str | Path) -> tuple[object, object, tuple[int, int]]:
    """(CRS, affine transform, (rows, cols)) of a band file from its header, for footprints and site init."""
    if is_layer(path):
        from affine import Affine
        from rasterio.crs import CRS

        from reviewer.record.hdf import grid_of

        info = grid_of(path)
        return CRS.from_wkt(info.crs_wkt), Affine(*info.transform), info.shape
    try:
        with rasterio.Env(), warnings.catch_warnings():
            warnings.simplefilter("ignore", NotGeoreferencedWarning)
            with rasterio.open(gdal_path(path)) as src:
                if src.crs is None or src.transform.is_identity:
                    raise NotGeoreferencedError("has no georeferencing (no CRS or geotransform)", path=path)
                return src.crs, src.transform, (src.height, src.width)
    except RasterioError as exc:
        raise UnreadableFileError(f"unreadable: {what_is_wrong(exc)}", path=path) from exc


def tile_rows_on_grid(path: Path, grid: Grid) -> tuple[int, int] | None:
    """(tile height, first site row at which a tile row starts) of a band file whose rows lie on the site grid's
    (same CRS, cell height and row alignment: what COGs of one path/row share with a site made from them), else
    None (a reprojected read crosses tile rows anyway); generate cuts its read blocks on them."""
    try:
        with gdal_env(), rasterio.open(gdal_path(path)) as src:
            th, t, crs = src.block_shapes[0][0], src.transform, src.crs
            same_crs = crs is not None and crs == grid.crs
    except (RasterioError, OSError, ValueError):  # unreadable: the read proper names the file and its fault
        return None
    g = grid.transform
    if not same_crs or t.b or t.d or g.b or g.d or not math.isclose(t.e, g.e, rel_tol=1e-9):
        return None
    off = (g.f - t.f) / t.e + grid.origin[0]  # the file row of site row 0
    if not math.isclose(off, round(off), abs_tol=1e-6):
        return None
    return th, -round(off) % th
