"""Layers inside multi-layer files as providers distribute them: MODIS HDF4 (pyhdf; GDAL's HDF4 driver is
not in the rasterio wheels) and VIIRS HDF5 (h5py), both HDF-EOS grids whose sinusoidal geolocation is in
the file's own StructMetadata.0; and ERA5-Land netCDF from the CDS (h5py: netCDF4 is HDF5).

A layer is addressed as `<file>::<layer name>` (the SDS name as distributed, e.g. `250m 16 days NDVI`),
or `<file>::<variable>@<time index>` for netCDF. Reads go through the same nearest-neighbour site-grid
lookup as GeoTIFFs (grid.pixel_map), reading only the window that covers the site.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from contextlib import contextmanager
from ctypes import string_at
from functools import lru_cache
from pathlib import Path

import numpy as np

from reviewer.errors import UnreadableFileError
from reviewer.record.grid import GridInfo, pixel_map
from reviewer.record.reader_errors import FileFault, reader_errors, what_is_wrong

SEP = "::"
#: the MODIS/VIIRS sinusoidal tiling: 36 x 18 tiles of 1111950.5197665 m from (-20015109.354, 10007554.677)
TILE_M = 1111950.5197665
X_MIN, Y_MAX = -20015109.354, 10007554.677
#: the HDF4 library is not thread-safe: every pyhdf call holds this lock (re-entrant: the scan of a
#: granule holds it across the grid, layer and quality reads, which take it again)
_HDF4 = threading.RLock()


def is_layer(path: str | Path) -> bool:
    return SEP in str(path)


def split(path: str | Path) -> tuple[str, str]:
    file, _, layer = str(path).partition(SEP)
    return file, layer


def container_format(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith(".hdf"):
        return "hdf4"
    if lower.endswith((".h5", ".he5")):
        return "hdf5"
    if lower.endswith((".nc", ".nc4")):
        return "netcdf"
    if lower.endswith((".grib", ".grib1", ".grib2", ".grb", ".grb2")):
        return "grib"
    return None


_NUM = r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"


@lru_cache(maxsize=256)
def parse_struct_metadata(text: str, grid: str | None = None) -> GridInfo:
    """The grid named `grid` (else the first) of an HDF-EOS StructMetadata.0 text (ODL); cached by text,
    since every granule of one product and tile carries the same text (each file's own is still read)."""
    blocks = re.findall(r"GROUP=GRID_\d+(.*?)END_GROUP=GRID_\d+", text, flags=re.S)
    if not blocks:
        raise FileFault("StructMetadata.0 has no grid")
    block = next((b for b in blocks if grid and f'GridName="{grid}"' in b), blocks[0])

    def get(key: str, n: int) -> list[float]:
        m = re.search(rf"{key}=\(?({_NUM}(?:\s*,\s*{_NUM})*)\)?", block)
        if not m:
            raise FileFault(f"StructMetadata.0 grid has no {key}")
        return [float(v) for v in m.group(1).split(",")][:n]

    (ulx, uly), (lrx, lry) = get("UpperLeftPointMtrs", 2), get("LowerRightMtrs", 2)
    cols, rows = int(get("XDim", 1)[0]), int(get("YDim", 1)[0])
    radius = get("ProjParams", 1)[0] if "ProjParams" in block else 6371007.181
    if "GCTP_SNSOID" not in block:
        raise FileFault("StructMetadata.0 grid is not sinusoidal (GCTP_SNSOID)")
    h, v = round((ulx - X_MIN) / TILE_M), round((Y_MAX - uly) / TILE_M)
    tile = f"h{h:02d}v{v:02d}" if abs(ulx - (X_MIN + h * TILE_M)) < 1 and abs(uly - (Y_MAX - v * TILE_M)) < 1 else None
    transform = ((lrx - ulx) / cols, 0.0, ulx, 0.0, (lry - uly) / rows, uly)
    return GridInfo(_sinusoidal_wkt(radius or 6371007.181), transform, (rows, cols), tile)


@lru_cache(maxsize=8)
def _sinusoidal_wkt(radius: float) -> str:
    from rasterio.crs import CRS

    return CRS.from_proj4(f"+proj=sinu +lon_0=0 +x_0=0 +y_0=0 +R={radius} +units=m +no_defs").to_wkt()


# ----------------------------------------------------------------------------- HDF4 (pyhdf)


_HANDLES: OrderedDict[str, tuple[int, int]] = OrderedDict()  # path -> (mtime_ns, SD interface id)
MAX_HANDLES = 2  # (the HDF4 library's open() slows with every file it holds open: 8 cost 60% more)
#: full-width rows are read when the site's window is at least this share of them: HDF4 reads a column
#: window row by row, slower than the contiguous rows it lies in (numpy then takes the columns)
FULL_ROWS = 0.25


@lru_cache(maxsize=1)
def _c():
    """(pyhdf's compiled layer pyhdf._hdfext, the HDF4 number types numpy can hold, pyhdf.hdfext for its
    SWIG buffers), imported once on first use. Each function of pyhdf.hdfext only hands its arguments on to
    the compiled layer: a granule's scan makes a dozen such calls."""
    from pyhdf import _hdfext, hdfext
    from pyhdf.SD import SDC

    return _hdfext, frozenset(SDC.equivNumericTypes), hdfext


def _hdf4_open(path: str, mtime: int | None = None) -> int:
    """An open SD interface id (call under _HDF4): the scan's grid, check and quality reads of one granule
    come one after another, so the last few files stay open (reopened when the file changed on disk).
    pyhdf's C layer is used directly: its SD/SDS wrappers cost more than a small read of a granule."""
    if mtime is None:
        mtime = os.stat(path).st_mtime_ns
    hit = _HANDLES.get(path)
    if hit is not None and hit[0] == mtime:
        _HANDLES.move_to_end(path)
        return hit[1]
    if hit is not None:
        _close(path)
    sid = _c()[0].SDstart(path, 1)  # DFACC_READ
    if sid < 0:
        raise FileFault("it cannot be opened as an HDF4 file (its header is damaged)")
    _HANDLES[path] = (mtime, sid)
    while len(_HANDLES) > MAX_HANDLES:
        _close(next(iter(_HANDLES)))
    return sid


def _close(path: str) -> None:
    _, sid = _HANDLES.pop(path)
    _c()[0].SDend(sid)  # a handle of a vanished file just fails to end


def forget() -> None:
    """Close the open HDF4 handles and forget the grids read (a benchmark's cold scan; tests that rewrite a
    granule in place within the file system's mtime resolution)."""
    with _HDF4:
        _close_all()
        _LAST_GRID.clear()
    _hdf4_grid.cache_clear()
    _h5_grid.cache_clear()


def _close_all() -> None:
    while _HANDLES:
        _close(next(iter(_HANDLES)))


@contextmanager
def fork_guard():
    """Held while the scan forks a copy of the process (forked.forked_map): no other thread is inside the
    HDF4 library then, and no HDF4 file is open (a copy reading a file this process has open would move
    the file offset the two share)."""
    with _HDF4:
        _close_all()
        yield


@lru_cache(maxsize=4096)
def _hdf4_grid(path: str, mtime_ns: int, grid: str | None) -> GridInfo:
    with _HDF4:
        return _sid_grid(_hdf4_open(path, mtime_ns), grid)


#: [StructMetadata.0 bytes, grid name, GridInfo] of the granule read last: the granules of one product
#: and tile carry the same text, so comparing its bytes (one memcmp) replaces decoding and hashing it
_LAST_GRID: list = []


def _sid_grid(sid: int, grid: str | None) -> GridInfo:
    """The grid of an open granule, from its own StructMetadata.0 (call under _HDF4)."""
    raw = _hdf4_text_attr(sid, "StructMetadata.0")
    if not raw:
        raise FileFault("no StructMetadata.0 attribute (not an HDF-EOS grid file)")
    last = _LAST_GRID
    if last and last[1] == grid and last[0] == raw:
        return last[2]
    info = parse_struct_metadata(raw.decode("latin-1").rstrip("\0"), grid)
    last[:] = [raw, grid, info]
    return info


#: the one buffer global text attributes are read into (grown as needed; used under _HDF4 only)
_TEXT_BUF: list = []


def _hdf4_text_attr(sid: int, name: str) -> bytes | None:
    """A global text attribute's bytes in one copy (pyhdf's attr().get() builds it one character at a time,
    20x slower; a new SWIG buffer per read cost as much as the read: a scan reads a thousand of them)."""
    c = _c()[0]
    index = c.SDfindattr(sid, name)
    if index < 0:
        return None
    status, _, _, n = c.SDattrinfo(sid, index)
    if status < 0:
        return None
    if not _TEXT_BUF or _TEXT_BUF[1] < n:
        _TEXT_BUF[:] = [_c()[2].array_byte(max(n, 65536)), max(n, 65536)]
    buf = _TEXT_BUF[0]
    if c.SDreadattr(sid, index, buf) < 0:
        return None
    try:
        return string_at(int(buf.this), n)
    except (TypeError, ValueError):  # a pyhdf without the SWIG pointer: one byte at a time
        return bytes(buf[i] & 0xFF for i in range(n))


@lru_cache(maxsize=1)
def _dims():
    """The one buffer SDgetinfo writes a layer's dimensions into (used under _HDF4 only)."""
    hdfext = _c()[2]
    return hdfext.array_int32(hdfext.H4_MAX_VAR_DIMS)


def _hdf4_read(path: str, layer: str, window, mtime: int | None = None) -> np.ndarray:
    """One SDS (or the window of it) through pyhdf's C layer: its Python SDS wrapper and slicing cost more
    than the read itself for a site-sized window (a scan or a trajectory reads a thousand of them)."""
    with _HDF4:
        return _sds_read(_hdf4_open(path, mtime), layer, window)


def _sds_read(sid: int, layer: str, window) -> np.ndarray:
    """_hdf4_read of an open granule (call under _HDF4)."""
    c, numeric, _ = _c()
    index = c.SDnametoindex(sid, layer)
    if index < 0:
        raise FileFault(f"no layer '{layer}'")
    sds = c.SDselect(sid, index)
    if sds < 0:
        raise FileFault(f"cannot select layer '{layer}'")
    try:
        dims = _dims()
        status, _, rank, data_type, _ = c.SDgetinfo(sds, dims)
        if status < 0 or data_type not in numeric:
            raise FileFault(f"layer '{layer}' has a data type pyhdf cannot read")
        shape = [c.array_int32___getitem__(dims, i) for i in range(rank)]
        start, count, cols = _sds_window(shape, window)
        if any(s < 0 or n <= 0 or s + n > d for s, n, d in zip(start, count, shape, strict=True)):
            raise FileFault(f"window {window} is outside layer '{layer}' of shape {tuple(shape)}")
        # the C reader SDS.get itself calls: the SDS wrapper and its slicing cost more than a site window's read
        data = np.asarray(c._SDreaddata_0(sds, data_type, start, count, [1] * rank))  # noqa: SLF001 - see above
    finally:
        c.SDendaccess(sds)
    return data if cols is None else np.ascontiguousarray(data[..., cols])


def _sds_window(shape: list[int], window) -> tuple[list[int], list[int], slice | None]:
    """(start, count) of the read of `window` ((r0, r1), (c0, c1); None: all) from a layer of `shape`, and
    the columns to take from it afterwards when whole rows are read (see FULL_ROWS)."""
    start, count = [0] * len(shape), list(shape)
    if window is None:
        return start, count, None
    (r0, r1), (c0, c1) = window
    start[0], count[0] = r0, r1 - r0
    if len(shape) == 1 or (c1 - c0) < FULL_ROWS * shape[-1]:
        start[-1], count[-1] = c0, c1 - c0
        return start, count, None
    return start, count, slice(c0, c1)


# ----------------------------------------------------------------------------- HDF5 (h5py)


def _h5_find(f, layer: str):
    """The dataset named `layer` under HDFEOS/GRIDS/<grid>/Data Fields (VIIRS v001/v002 grids)."""
    grids = f.get("HDFEOS/GRIDS")
    if grids is not None:
        for name in grids:
            ds = grids[name].get(f"Data Fields/{layer}")
            if ds is not None:
                return ds
    return f.get(layer)


@lru_cache(maxsize=4096)
def _h5_grid(path: str, mtime_ns: int, grid: str | None) -> GridInfo:
    import h5py

    with h5py.File(path, "r") as f:
        meta = f.get("HDFEOS INFORMATION/StructMetadata.0")
        if meta is None:
            raise FileFault("no 'HDFEOS INFORMATION/StructMetadata.0' (not an HDF-EOS grid file)")
        raw = meta[()]
    text = raw.decode("latin-1") if isinstance(raw, bytes) else str(raw)
    return parse_struct_metadata(text.rstrip("\0"), grid)


def _h5_read(path: str, layer: str, window) -> np.ndarray:
    import h5py

    with h5py.File(path, "r") as f:
        ds = _h5_find(f, layer)
        if ds is None:
            raise FileFault(f"no layer '{layer}'")
        if window is None:
            return ds[()]
        (r0, r1), (c0, c1) = window
        return ds[r0:r1, c0:c1]


# ----------------------------------------------------------------------------- one entry point


def grid_of(path: str | Path, grid: str | None = None) -> GridInfo:
    """The grid of a container file (HDF4/HDF5 StructMetadata, or a netCDF lon/lat grid)."""
    file = split(path)[0] if is_layer(path) else str(path)
    fmt = container_format(file)
    try:
        mtime = os.stat(file).st_mtime_ns  # (a Path costs more than the stat on a cached grid)
        if fmt == "hdf4":
            return _hdf4_grid(file, mtime, grid)
        if fmt == "hdf5":
            return _h5_grid(file, mtime, grid)
        if fmt == "netcdf":
            from reviewer.record.netcdf import nc_grid

            return nc_grid(file, mtime)
        if fmt == "grib":
            from reviewer.record.grib import grib_grid

            return grib_grid(file, mtime)
    except UnreadableFileError:
        raise
    except reader_errors() as exc:  # pyhdf/h5py/GDAL/ecCodes errors of a damaged file
        raise UnreadableFileError(_grid_problem(fmt, exc), path=file) from exc
    raise UnreadableFileError("not an HDF4, HDF5, netCDF or GRIB file", path=file)


def _grid_problem(fmt: str | None, exc: Exception) -> str:
    name = {"hdf4": "HDF4", "hdf5": "HDF5", "netcdf": "netCDF", "grib": "GRIB"}.get(fmt, fmt)
    return f"cannot read the grid of this {name} file: {what_is_wrong(exc)}"


def read_layer(path: str | Path, grid, *, nodata: float | None) -> np.ndarray:
    """Raw DNs of one layer on `grid` (nearest neighbour), or the whole layer when grid is None."""
    file, layer = split(path)
    fmt = container_format(file)
    mtime = None
    if fmt == "hdf4":  # one stat for the grid and the handle (a trajectory reads a thousand granules)
        try:
            mtime = os.stat(file).st_mtime_ns
            info = _hdf4_grid(file, mtime, None)
        except reader_errors(UnreadableFileError):  # grid_of names the cause
            info = grid_of(file)
    else:
        info = grid_of(file)
    return _layer_on_grid(file, layer, fmt, info, grid, nodata, mtime)


#: [(GridInfo, site Grid, their grid.pixel_map)] of the last layer read onto a grid
_LAST_LOOKUP: list = [(None, None, None)]


def _site_lookup(info: GridInfo, grid):
    """grid.pixel_map of a file's grid onto `grid`, the last one kept by identity: the granules of one
    tile share one GridInfo (see _sid_grid), and the lookup's own cache hashed and compared the site grid
    and the file grid's CRS text for every granule of a scan or a trajectory."""
    hit = _LAST_LOOKUP[0]  # (one tuple: read and replaced whole, whatever thread reads)
    if hit[0] is info and hit[1] is grid:
        return hit[2]
    pmap = pixel_map(info.crs_wkt, info.transform, info.shape, grid)
    _LAST_LOOKUP[0] = (info, grid, pmap)
    return pmap


def _layer_on_grid(file: str, layer: str, fmt: str | None, info: GridInfo, grid, nodata, mtime: int | None):
    """read_layer once the file's grid is known: the window of the layer under `grid`, looked up onto it."""
    pmap = None if grid is None else _site_lookup(info, grid)
    try:
        if pmap is not None and pmap.window is None:
            return np.full(grid.shape, nodata if nodata is not None else 0)
        window = pmap.window if pmap is not None else None
        if fmt == "hdf4":
            data = _hdf4_read(file, layer, window, mtime)
        elif fmt == "hdf5":
            data = _h5_read(file, layer, window)
        elif fmt == "grib":
            from reviewer.record.grib import grib_read

            data = grib_read(file, layer, window)
        else:
            from reviewer.record.netcdf import nc_read

            data = nc_read(file, layer, window)
    except reader_errors() as exc:  # pyhdf/h5py/GDAL/ecCodes errors of a damaged file or a missing layer
        raise UnreadableFileError(f"cannot read layer '{layer}': {what_is_wrong(exc)}", path=file) from exc
    if pmap is None or pmap.plain:
        return data
    out = data[pmap.rows, pmap.cols]
    if not pmap.whole and not pmap.inside.all():
        fill = nodata if nodata is not None else 0
        out = out.astype(np.result_type(out.dtype, np.min_scalar_type(fill)), copy=False)
        out[~pmap.inside] = fill
    return out


def check_layers(file: str | Path, layers: list[str]) -> dict[str, str]:
    """Why each layer is unusable ('' key: the whole file): the grid must parse and each layer exist; an
    HDF5/netCDF layer's last row must read (an HDF4 file's byte ranges are checked from its descriptors)."""
    file = str(file)
    fmt = container_format(file)
    try:
        grid_of(file)
    except UnreadableFileError as exc:
        return {"": exc.message}
    if fmt == "hdf4":
        return _hdf4_check(file, layers)
    problems: dict[str, str] = {}
    for layer in layers:
        try:
            if fmt == "netcdf":
                from reviewer.record.netcdf import nc_read

                rows, cols = grid_of(file).shape
                nc_read(file, layer, ((rows - 1, rows), (0, cols)))
            elif fmt == "grib":
                from reviewer.record.grib import grib_read

                grib_read(file, layer, None)
            elif fmt == "hdf5":
                import h5py

                with h5py.File(file, "r") as f:
                    ds = _h5_find(f, layer)
                    if ds is None:
                        problems[layer] = f"has no layer '{layer}'"
                        continue
                    ds[ds.shape[0] - 1 : ds.shape[0], :]
        except reader_errors(UnreadableFileError) as exc:  # pyhdf/h5py/GDAL/ecCodes errors name it damaged
            problems[layer] = f"layer '{layer}' cannot be read: {what_is_wrong(exc)}"
    return problems


def _hdf4_check(file: str, layers: list[str], mtime: int | None = None) -> dict[str, str]:
    """Each layer of an HDF4 granule present, under one lock and one handle. That the file holds every byte
    its data descriptors promise was checked before (check.hdf4_extent), so no pixel is read here."""
    with _HDF4:
        return _sid_missing(_hdf4_open(file, mtime), layers)


def _sid_missing(sid: int, layers: list[str]) -> dict[str, str]:
    find = _c()[0].SDnametoindex
    return {layer: f"has no layer '{layer}'" for layer in layers if find(sid, layer) < 0}


def hdf4_granule(
    file: str,
    mtime: int,
    layers: list[str],
    *,
    tile: str | None = None,
    quality: str | None = None,
    grid=None,
    nodata: float | None = None,
) -> tuple[dict[str, str], np.ndarray | None]:
    """The scan's whole look at one HDF4 granule whose bytes check.check_file found complete, on one
    handle: its grid parses and is the tile its name says, each layer is there, and the quality layer
    on `grid`. (Why each layer is unusable, '' for the whole file; the quality layer or None.) Each of
    these through check_layers, grid_of and read_layer cost a stat and a lookup of its own, as much as
    the granule's read. A quality layer that cannot be read raises UnreadableFileError, as read_layer."""
    with _HDF4:
        try:
            sid = _hdf4_open(file, mtime)
            info = _sid_grid(sid, None)
        except reader_errors() as exc:  # pyhdf errors of a damaged file
            return {"": _grid_problem("hdf4", exc)}, None
        problems = _sid_missing(sid, layers)
        if not problems and tile and info.tile and info.tile != tile:
            return {"": f"its name says tile {tile} but its StructMetadata grid is tile {info.tile}"}, None
        if quality is None or quality in problems:
            return problems, None
        return problems, _layer_on_grid(file, quality, "hdf4", info, grid, nodata, mtime)
