"""The scan's cheap check of every file it indexes: the header plus the byte ranges the header promises.

A TIFF's strip/tile offsets and byte counts must lie inside the file, a JPEG2000's boxes must fit and
its codestream end with the EOC marker, an HDF4 file's data descriptors (every element's offset and
length) must lie inside the file, an HDF5/netCDF file must start with its signature. So a truncated
band is reported at scan time by name, not when that date is first rendered. No pixel is decoded.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

import numpy as np

from reviewer.fileio import file_kind
from reviewer.record.archive import Member, MemberFile
from reviewer.record.decode import direct_band, head_reader, tiff_extent_problem, tiff_need

TIFF_MAGIC = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")
JP2_MAGIC = b"\x00\x00\x00\x0cjP  \r\n\x87\n"
J2K_MAGIC = b"\xff\x4f\xff\x51"
HDF4_MAGIC = b"\x0e\x03\x13\x01"
SIGNATURES = {
    "tiff": TIFF_MAGIC,
    "jp2": (JP2_MAGIC, J2K_MAGIC),
    "hdf4": (HDF4_MAGIC,),
    "hdf5": (b"\x89HDF\r\n\x1a\n",),
    "netcdf": (b"CDF\x01", b"CDF\x02", b"CDF\x05", b"\x89HDF\r\n\x1a\n"),
    "grib": (b"GRIB",),
}
_NAMES = {
    "tiff": "a GeoTIFF",
    "jp2": "a JPEG2000 file",
    "hdf4": "an HDF4 file",
    "hdf5": "an HDF5 file",
    "grib": "a GRIB file",
}


def expected_format(name: str) -> str:
    lower = name.lower()
    for fmt, suffixes in (
        ("tiff", (".tif", ".tiff")),
        ("jp2", (".jp2", ".j2k")),
        ("hdf4", (".hdf",)),
        ("hdf5", (".h5", ".he5")),
        ("netcdf", (".nc", ".nc4")),
        ("grib", (".grib", ".grib1", ".grib2", ".grb", ".grb2")),
    ):
        if lower.endswith(suffixes):
            return fmt
    return "tiff"


def check_file(path: str | Path, member: Member | None = None, bundle: str | Path | None = None) -> str | None:
    """Why the file (or bundle member) is unusable, or None: regular, signature, and complete."""
    if member is not None:
        if member.available < member.size:
            return f"truncated: the bundle ends inside this file ({member.available} of {member.size} bytes)"
        if bundle is None or str(bundle).lower().endswith(".tar"):
            with MemberFile(bundle, member) as fh:
                return _check_open(fh, member.size, expected_format(member.name))
        return None  # a compressed bundle was read through to list it: its members are whole
    return check_path(path)[0]


def check_path(path: str | Path, fmt: str | None = None) -> tuple[str | None, int | None]:
    """check_file of a file on disk, and its st_mtime_ns (None when unusable) from the same open: a reader
    that keys what it caches by mtime (the HDF4 grid and handle) needs no stat of its own."""
    bad, mtime, _ = _check_path(path, fmt)
    return bad, mtime


def check_quality_band(path: str, grid, nodata: float) -> tuple[str | None, np.ndarray | None]:
    """check_path of a quality layer and, from the same open, its pixels on `grid` when it is a plain
    GeoTIFF (decode.direct_band: the bytes the check read, no GDAL open; the scan's one look at a Landsat
    QA_PIXEL). (reason, None) when the file is unusable; (None, None) when it is to be read through GDAL."""
    sidecar = os.path.exists(path + ".aux.xml")  # GDAL takes georeferencing from it first: GDAL reads the layer
    bad, _, pixels = _check_path(path, None, None if sidecar else (grid, nodata))
    return bad, pixels


def _check_path(path, fmt: str | None, band: tuple | None = None) -> tuple[str | None, int | None, np.ndarray | None]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO never blocks the scan
    except OSError as exc:
        return f"unreadable ({exc.strerror})", None, None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return f"unreadable (not a regular file: {file_kind(st.st_mode)})", None, None
        fmt = fmt or expected_format(str(path))
        reader = _Reader(fd)
        pixels = None
        if fmt == "tiff" and reader.first.startswith(TIFF_MAGIC):  # (most of a record: Landsat bands)
            bad = _tiff_problem(reader.first, st.st_size, reader.at)
            if band is not None and not bad:
                pixels = direct_band(reader.first, st.st_size, reader.at, *band)
        elif fmt == "hdf4" and reader.first.startswith(HDF4_MAGIC):  # (a MODIS granule)
            bad = _hdf4_problem(reader.first, st.st_size, reader.at)
        else:
            bad = _check_open(reader, st.st_size, fmt)
        return bad, None if bad else st.st_mtime_ns, pixels
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})", None, None
    finally:
        os.close(fd)


class _Reader:
    """read/seek over a file descriptor by pread, its first 8 KB fetched once: the signature, a TIFF's or
    HDF4's first directory and a JP2's first boxes are all there, so most checks make one system call."""

    __slots__ = ("fd", "pos", "first")
    PREFETCH = 8192

    def __init__(self, fd: int) -> None:
        self.fd, self.pos = fd, 0
        self.first = os.pread(fd, self.PREFETCH, 0)

    def seek(self, pos: int) -> None:
        self.pos = pos

    def read(self, n: int) -> bytes:
        data = self.at(self.pos, n)
        self.pos += len(data)
        return data

    def at(self, offset: int, n: int) -> bytes:
        """n bytes from `offset` (fewer at the end of the file), without moving the position."""
        end = offset + n
        if end <= len(self.first) or len(self.first) < self.PREFETCH:  # inside it, or the whole file
            return self.first[offset:end]
        return os.pread(self.fd, n, offset)


def _check_open(fh, size: int, fmt: str) -> str | None:
    head = fh.read(16)
    if not head:
        return "unreadable (empty file)"
    if not head.startswith(SIGNATURES[fmt]):
        if fmt in ("tiff", "jp2") and head.startswith(TIFF_MAGIC + (JP2_MAGIC, J2K_MAGIC)):
            fmt = "tiff" if head.startswith(TIFF_MAGIC) else "jp2"  # a .tif holding JPEG2000 or the reverse
        else:
            what = "a GeoTIFF or JPEG2000 file" if fmt in ("tiff", "jp2") else _NAMES.get(fmt, "a netCDF file")
            return f"unreadable (not {what})"
    try:
        if fmt == "tiff":
            first, read = head_reader(fh)
            return _tiff_problem(first, size, read)
        elif fmt == "jp2":
            return _jp2_problem(fh, size, head)
        elif fmt == "hdf4":
            first, read = head_reader(fh)
            return _hdf4_problem(first, size, read)
    except struct.error:
        return "truncated: the header ends early"
    return None


def _tiff_problem(first: bytes, size: int, read) -> str | None:
    """Why a TIFF whose first bytes are `first` is incomplete (read(offset, n): bytes beyond them), or None."""
    try:
        need = tiff_need(first, size, read)
    except struct.error:
        return "truncated: the header ends early"
    return tiff_extent_problem(need, size, first[:4] in (b"II+\x00", b"MM\x00+"))


#: an HDF4 file's offsets and lengths are signed 32-bit: no HDF4 file reaches past 2 GiB
HDF4_MAX = 1 << 31
_DD_BLOCK = struct.Struct(">HI")  # number of descriptors in the block, offset of the next block (0: last)
_DD_NULL, _DD_INVALID = 1, 0xFFFFFFFF  # DFTAG_NULL: an unused slot; offset/length of an element not written


def hdf4_extent(fh, size: int) -> int:
    """How many bytes an HDF4 file's data-descriptor blocks say it holds (HDF4 file format spec, 'Data
    Descriptor Blocks': after the 4-byte signature, linked blocks of (tag, ref, offset, length) entries of
    every element, special ones such as compressed or linked-block data included). A few KB are read."""
    first, read = head_reader(fh)  # the signature and, as the HDF4 library writes files, the first block
    return hdf4_need(first, size, read)


def _hdf4_problem(first: bytes, size: int, read) -> str | None:
    """Why an HDF4 file whose first bytes are `first` is incomplete (read(offset, n): bytes beyond them)."""
    try:
        need = hdf4_need(first, size, read)
    except (struct.error, ValueError):  # a block cut inside the bytes read
        return "truncated: the header ends early"
    if need > HDF4_MAX:
        return f"damaged header: its HDF4 data descriptors describe {need} bytes, more than an HDF4 file can hold"
    if need > size:
        return f"truncated: the file has {size} bytes but its HDF4 data descriptors describe {need}"
    return None


def hdf4_need(first: bytes, size: int, read) -> int:
    """hdf4_extent from the file's first bytes (`first`) and read(offset, n) for anything beyond them: a
    block inside them (as the HDF4 library writes the first) is read in place."""
    need, pos, seen = 4, 4, set()
    while pos and pos not in seen and len(seen) < 4096:
        seen.add(pos)
        body = pos + _DD_BLOCK.size
        if body > size:
            return max(need, body)
        n, nxt = (
            _DD_BLOCK.unpack_from(first, pos) if body <= len(first) else _DD_BLOCK.unpack(read(pos, _DD_BLOCK.size))
        )
        end = body + 12 * n
        need = max(need, end)
        if end > size:
            return need
        if n:
            need = max(need, _dd_end(first[body:end] if end <= len(first) else read(body, 12 * n), n))
        pos = nxt
    return need


def _dd_end(raw: bytes, n: int) -> int:
    """The furthest byte the n entries of a descriptor block reach. Each 12-byte entry is three big-endian
    u4 (tag << 16 | ref, offset, length), read as one int64 array (few numpy steps: each costs more than
    its 200 values). An unused slot (DFTAG_NULL) reaches nothing, nor an element not written: its offset
    or length is 0xFFFFFFFF, so its end is past any HDF4 file (32-bit offsets)."""
    dd = np.frombuffer(raw, ">u4", 3 * n).astype(np.int64).reshape(n, 3)
    ends = dd[:, 1] + dd[:, 2]
    ends[(dd[:, 0] >> 16) == _DD_NULL] = 0
    return int(np.maximum.reduce(ends, where=ends < _DD_INVALID, initial=0))


def _jp2_problem(fh, size: int, head: bytes) -> str | None:
    """JP2 boxes must fit in the file; the codestream (last box, or a raw J2K file) ends with FFD9."""
    if head.startswith(J2K_MAGIC):
        return _eoc(fh, size, size)
    pos = 0
    for _ in range(256):
        if pos + 8 > size:
            return f"truncated: a JPEG2000 box starts at {pos} of {size} bytes"
        fh.seek(pos)
        lbox, tbox = struct.unpack(">I4s", fh.read(8))
        if lbox == 1:
            lbox = struct.unpack(">Q", fh.read(8))[0]
        end = size if lbox == 0 else pos + lbox
        if lbox and lbox < 8 or end > size:
            name = tbox.decode("latin-1")
            box = f"box '{name}'" if name.isascii() and name.strip().isalnum() else f"box at byte {pos}"
            return f"truncated: the file has {size} bytes but its JPEG2000 {box} ends at {end}"
        if tbox == b"jp2c":
            return _eoc(fh, end, size)
        if end >= size:
            return "truncated: the JPEG2000 file has no codestream"
        pos = end
    return None


def _eoc(fh, end: int, size: int) -> str | None:
    fh.seek(end - 2)
    if fh.read(2) != b"\xff\xd9":
        return f"truncated: the JPEG2000 codestream of {size} bytes does not end with its end-of-codestream marker"
    return None
