"""A scan-time reader of the plainest GeoTIFF quality layers, from the bytes the file's check has read.

The scan checks every file it indexes by its TIFF header (check.py) and then needs one thing from each
scene: the quality layer's pixels on the site grid. Opening the layer again through GDAL cost as much as
the plain rasterio read of every quality layer the scan is measured against (about 0.6 ms of open and
1 ms of read per 400 x 400 layer, CRS database look-ups included), so with the checks on top the scan
took 1.6-2x that read. A Landsat C2 quality layer as USGS writes it (one band of 8/16-bit codes, no or
DEFLATE compression with or without horizontal differencing, strips or tiles, an EPSG-coded projected
CRS with one tie point and a pixel scale) is decoded here in one pass from the same open: its check's
head read often holds the whole file. USGS georeferences C2 layers PixelIsPoint (the tie point is the centre
of the first pixel); GDAL, by default (GTIFF_POINT_GEO_IGNORE unset), moves the origin half a pixel up and
left to the pixel's corner, and so does this module, so a real download gets the same grid as from GDAL.
Tags that change neither the pixels GDAL reads nor where it puts them are passed over: citations and
GeoAsciiParams (GDAL takes the CRS of a projected file from its EPSG code), GDAL_NODATA (the scan gives
its own fill outside a file, as read_raw does), GDAL_METADATA, Orientation (GDAL 3.10 reads rows as
stored), and a COG's overviews (they follow the first image). Anything else (another compression, a model
transformation, other GeoKeys, a GDAL .aux.xml beside it, a block that does not inflate) is not guessed
at: `direct_image` or `read_window` returns None and the caller reads through GDAL, which also names what
is wrong with a damaged file.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

#: (struct code, bytes) of the TIFF field types the fast path reads: BYTE, ASCII, SHORT, LONG, DOUBLE, LONG8
_TYPES = {1: ("B", 1), 2: ("s", 1), 3: ("H", 2), 4: ("I", 4), 12: ("d", 8), 16: ("Q", 8)}
_WANTED = frozenset(
    [256, 257, 258, 259, 262, 266, 273, 277, 278, 279, 284, 317, 322, 323, 324, 325, 338, 339]
    + [33550, 33922, 34264, 34735]
)
_DEFLATE = (8, 32946)  # Adobe and the old PKZIP code
#: GeoKeys a plain projected GeoTIFF carries (GDAL and USGS write these), with the values each may have
#: (None: any). ProjectedCSType (3072) holds the EPSG code; GTRasterType (1025) is 1 PixelIsArea or 2
#: PixelIsPoint; any other key sends the file to GDAL.
_GEOKEYS = {1024: (1,), 1025: (1, 2), 1026: None, 2049: None, 2054: (9102,), 3072: None, 3073: None, 3076: (9001,)}
_PIXEL_IS_POINT = 2


@dataclass(frozen=True)
class DirectImage:
    """The first image of a plain GeoTIFF: what decoding it takes, and where it lies."""

    shape: tuple[int, int]
    dtype: np.dtype  # with the file's byte order
    compression: int
    predictor: int
    block: tuple[int, int]  # rows, cols of a strip (cols = the width) or tile
    tiled: bool
    offsets: tuple[int, ...]
    counts: tuple[int, ...]
    epsg: int
    transform: tuple[float, float, float, float, float, float]  # GDAL order: x0, dx, 0, y0, 0, -dy
    pixel_is_point: bool  # (transform is then GDAL's default: half a pixel up-left of the tie point)


class TiffLayout:
    """The binary layout of one TIFF flavour (byte order; classic or BigTIFF), compiled once: a file's
    check is a few unpacks of these, not a format string built per directory entry."""

    __slots__ = ("bo", "count", "entry", "offset", "entry_size")

    def __init__(self, bo: str, big: bool) -> None:
        self.bo = bo
        self.count = struct.Struct(bo + ("Q" if big else "H"))  # entries in a directory
        self.entry = struct.Struct(bo + ("HHQQ" if big else "HHII"))  # tag, type, count, value or offset
        self.offset = struct.Struct(bo + ("Q" if big else "I"))  # the next directory's offset
        self.entry_size = self.entry.size


_LAYOUTS = {(bo, big): TiffLayout(bo, big) for bo in "<>" for big in (False, True)}


def tiff_header(first: bytes) -> tuple[TiffLayout, int, int] | None:
    """(the file's layout, its first directory's offset, the header's length) from its first bytes; None
    when they do not start a classic or Big TIFF (the check's walk and the direct decode both start here)."""
    if len(first) < 8 or first[:2] not in (b"II", b"MM"):
        return None
    bo = "<" if first[:2] == b"II" else ">"
    version = struct.unpack_from(bo + "H", first, 2)[0]
    if version == 42:
        return _LAYOUTS[bo, False], struct.unpack_from(bo + "I", first, 4)[0], 8
    if version == 43 and len(first) >= 16:
        return _LAYOUTS[bo, True], struct.unpack_from(bo + "Q", first, 8)[0], 16
    return None


def direct_image(first: bytes, size: int, read) -> DirectImage | None:
    """The image of a TIFF whose first bytes are `first` (read(offset, n): bytes beyond them), when it is
    one this module decodes; else None. The file's extent is checked already (check.check_path)."""
    try:
        tags = _first_directory(first, read)
    except (struct.error, ValueError):
        return None
    if tags is None:
        return None
    return _plain_image(tags, first[:2] == b"II")


def _first_directory(first: bytes, read) -> dict[int, tuple] | None:
    """The wanted tags of the first directory, each as its tuple of values (ASCII as one bytes value)."""
    head = tiff_header(first) if len(first) >= 16 else None
    if head is None:
        return None
    lay, ifd, _ = head
    bo, off_size, entry_size = lay.bo, lay.offset.size, lay.entry_size
    n = lay.count.unpack(read(ifd, lay.count.size))[0]
    if n > 4096:
        return None
    raw = read(ifd + lay.count.size, n * entry_size)
    tags: dict[int, tuple] = {}
    for i, (tag, typ, count, value) in enumerate(lay.entry.iter_unpack(raw)):
        if tag not in _WANTED:
            continue
        if typ not in _TYPES or count > 4_000_000:
            return None
        code, width = _TYPES[typ]
        nbytes = width * count
        if nbytes <= off_size:
            value_at = i * entry_size + entry_size - off_size
            data = raw[value_at : value_at + nbytes]
        else:
            data = read(value, nbytes)
        if len(data) < nbytes:
            return None
        tags[tag] = (data,) if typ == 2 else struct.unpack_from(f"{bo}{count}{code}", data)
    return tags


def _plain_image(tags: dict[int, tuple], little: bool) -> DirectImage | None:
    def one(tag: int, default: int | None = None) -> int | None:
        values = tags.get(tag)
        return default if values is None else (values[0] if len(values) == 1 else None)

    bits, fmt = one(258, 1), one(339, 1)
    kind = {(8, 1): "u1", (16, 1): "u2", (16, 2): "i2"}.get((bits, fmt))
    compression, predictor = one(259, 1), one(317, 1)
    plain = (
        kind is not None
        and one(277, 1) == 1  # one sample per pixel
        and one(284, 1) == 1
        and one(262, 1) == 1  # min-is-black
        and one(266, 1) == 1
        and 338 not in tags
        and (compression == 1 or compression in _DEFLATE)
        and predictor in (1, 2)
    )
    place = _georeferencing(tags) if plain else None
    if place is None:
        return None
    height, width = one(257), one(256)
    if not height or not width:
        return None
    tiled = 324 in tags
    if tiled:
        block = (one(323), one(322))
        offsets, counts = tags.get(324), tags.get(325)
    else:
        block = (min(one(278, height) or height, height), width)
        offsets, counts = tags.get(273), tags.get(279)
    if not block[0] or not block[1] or offsets is None or counts is None or len(offsets) != len(counts):
        return None
    per_col = -(-width // block[1]) if tiled else 1
    if len(offsets) != -(-height // block[0]) * per_col:
        return None
    dtype = np.dtype(("<" if little else ">") + kind)
    return DirectImage((height, width), dtype, compression, predictor, block, tiled, offsets, counts, *place)


def _georeferencing(tags: dict[int, tuple]) -> tuple[int, tuple, bool] | None:
    """(EPSG code, GDAL geotransform, PixelIsPoint) of a north-up, EPSG-coded projected GeoTIFF, else None."""
    keys, scale, tie = tags.get(34735), tags.get(33550), tags.get(33922)
    if keys is None or scale is None or tie is None or 34264 in tags or len(tie) != 6 or len(scale) < 2:
        return None
    if keys[0] != 1 or len(keys) < 4 + 4 * keys[3] or any(tie[:3]) or scale[0] <= 0 or scale[1] <= 0:
        return None
    values = _geokey_values(keys)
    if values is None or values.get(3072) is None:
        return None
    point = values.get(1025) == _PIXEL_IS_POINT
    return values[3072], _geotransform(tie, scale, point), point


def _geokey_values(keys: tuple) -> dict[int, int] | None:
    """Each GeoKey's value (for a key stored elsewhere, its location), None when a key or value is not
    one of _GEOKEYS or the EPSG code is not one."""
    values = {}
    for k in range(keys[3]):
        key, location, _count, value = keys[4 + 4 * k : 8 + 4 * k]
        if key not in _GEOKEYS:
            return None
        allowed = _GEOKEYS[key]
        if allowed is not None and (location != 0 or value not in allowed):
            return None
        if key == 3072 and (location != 0 or not 1 <= value < 32767):
            return None
        values[key] = value
    return values


def _geotransform(tie: tuple, scale: tuple, point: bool) -> tuple[float, float, float, float, float, float]:
    """GDAL's geotransform from the tie point (at raster 0, 0) and pixel scale. PixelIsPoint: the tie point
    is the first pixel's centre, and GDAL's default moves the origin to its corner, half a pixel up-left,
    in GDAL's own floating-point steps (x0 -= dx/2 + 0/2, y0 -= 0/2 + -dy/2), so to the same bits."""
    x0, y0, dx, dy = tie[3], tie[4], scale[0], scale[1]
    if point:
        x0, y0 = x0 - (dx * 0.5 + 0.0 * 0.5), y0 - (0.0 * 0.5 + -dy * 0.5)
    return (x0, dx, 0.0, y0, 0.0, -dy)


def read_window(image: DirectImage, read, rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray | None:
    """Rows rows[0]:rows[1], cols cols[0]:cols[1] of the image in native byte order (read(offset, n): the
    file's bytes), decoding only the strips or tiles they touch; None when a block does not decode.

    The blocks are inflated one by one (zlib releases the GIL) and the predictor undone in one numpy
    pass over all of them (a pass per 10-row strip cost as much as the inflating)."""
    (r0, r1), (c0, c1) = rows, cols
    bh, bw = image.block
    height, width = image.shape
    first_row, end_row = r0 // bh, -(-r1 // bh)
    if not image.tiled:
        data = _inflate(image, read, range(first_row, end_row), bh * bw)
        if data is None:
            return None
        n = (min(end_row * bh, height) - first_row * bh) * width
        if len(data) < n * image.dtype.itemsize:
            return None  # (the last strip holds only the rows left)
        strips = _undo_predictor(image, np.frombuffer(data, image.dtype, n).reshape(-1, width))
        return strips[r0 - first_row * bh : r1 - first_row * bh, c0:c1]
    per_row = -(-width // bw)
    first_col, end_col = c0 // bw, -(-c1 // bw)
    ks = [br * per_row + bc for br in range(first_row, end_row) for bc in range(first_col, end_col)]
    data = _inflate(image, read, ks, bh * bw)
    if data is None or len(data) < len(ks) * bh * bw * image.dtype.itemsize:
        return None
    n_rows, n_cols = end_row - first_row, end_col - first_col
    tiles = np.frombuffer(data, image.dtype, len(ks) * bh * bw).reshape(n_rows, n_cols, bh, bw)
    mosaic = _undo_predictor(image, tiles.transpose(0, 2, 1, 3)).reshape(-1, n_cols * bw)
    return mosaic[r0 - first_row * bh : r1 - first_row * bh, c0 - first_col * bw : c1 - first_col * bw]


def _inflate(image: DirectImage, read, blocks, block_values: int) -> bytes | None:
    """The blocks' bytes, decompressed and joined; None when one is sparse, cut short or does not inflate.
    Every block but a last strip is block_values values long."""
    parts = []
    nbytes = block_values * image.dtype.itemsize
    blocks = list(blocks)
    if any(image.counts[k] == 0 for k in blocks):
        return None  # a sparse block: GDAL fills it with nodata, not ours to guess
    span_read = _span_reader(image, read, blocks)
    for k in blocks:
        count = image.counts[k]
        data = span_read(image.offsets[k], count)
        if len(data) < count:
            return None  # cut short
        if image.compression != 1:
            try:  # (at most the block's own size: a damaged stream cannot inflate without bound)
                data = zlib.decompressobj().decompress(data, nbytes)
            except zlib.error:
                return None
        if len(data) < nbytes and k != len(image.offsets) - 1:
            return None  # only the last strip may be short (it holds the rows left)
        parts.append(data[:nbytes])
    return b"".join(parts)


def _span_reader(image: DirectImage, read, blocks: list[int]):
    """read(offset, n) for the blocks, served from one read of the bytes from the first block to the end
    of the last when they lie together (as GDAL and USGS write them): one system call, not one per strip."""
    start = min(image.offsets[k] for k in blocks)
    end = max(image.offsets[k] + image.counts[k] for k in blocks)
    if end - start > 2 * sum(image.counts[k] for k in blocks) + 65536:
        return read  # scattered: each block read on its own
    span = memoryview(read(start, end - start))
    return lambda offset, n: span[offset - start : offset - start + n]


def _undo_predictor(image: DirectImage, blocks: np.ndarray) -> np.ndarray:
    """Native byte order, in a new C-ordered array of the blocks' shape (blocks may be a transposed view of
    tiles: the copy lays them out as the mosaic in the same pass); horizontal differencing (predictor 2:
    each pixel stored as the change from the one on its left, within a strip or tile row) summed back along
    the last axis."""
    out = np.empty(blocks.shape, image.dtype.newbyteorder("="))  # (the caller owns it, writable, as from GDAL)
    if image.predictor == 2:
        return np.cumsum(blocks, axis=-1, dtype=out.dtype, out=out)
    out[...] = blocks
    return out
