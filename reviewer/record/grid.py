"""Grids shared by the record's readers: the site grid pixels land on, a file's own grid, and the lookup
from one to the other.

decode (GeoTIFF), hdf (HDF4/HDF5), netcdf and grib all place pixels through these, so each reader imports
this module rather than another reader (no cycles inside reviewer.record). rasterio is imported only when
a lookup is computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from affine import Affine

    from reviewer.record.site import Site


@dataclass(frozen=True)
class Grid:
    """Where to put pixels: a CRS, an affine transform and a (rows, cols) shape."""

    crs: Any  # a rasterio CRS
    transform: Affine
    shape: tuple[int, int]
    #: (row, col) of this grid's first pixel in the grid `transform` places: a window of the site grid
    #: (a trajectory reads one pixel) whose pixels land exactly where the whole grid's would
    origin: tuple[int, int] = (0, 0)

    def _key(self) -> tuple:
        """(CRS as text, transform, shape, origin), made once: the site-grid lookups are cached by grid, and
        hashing or comparing a CRS costs up to ~1 ms (each read of a date looks its grid up)."""
        key = self.__dict__.get("_cached_key")
        if key is None:
            key = (str(self.crs), tuple(self.transform), tuple(self.shape), tuple(self.origin))
            object.__setattr__(self, "_cached_key", key)
            object.__setattr__(self, "_hash", hash(key))
        return key

    def __hash__(self) -> int:
        h = self.__dict__.get("_hash")
        if h is None:
            self._key()
            h = self.__dict__["_hash"]
        return h

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Grid):
            return NotImplemented
        return hash(self) == hash(other) and self._key() == other._key()

    def window(self, rows: tuple[int, int], cols: tuple[int, int]) -> Grid:
        """The pixels rows[0]:rows[1], cols[0]:cols[1] of this grid, as a grid of their own."""
        (r0, r1), (c0, c1) = rows, cols
        return Grid(self.crs, self.transform, (r1 - r0, c1 - c0), (self.origin[0] + r0, self.origin[1] + c0))

    @classmethod
    def of_site(cls, site: Site) -> Grid:
        return cls(site.crs, site.transform, site.shape)


@dataclass(frozen=True)
class GridInfo:
    """An HDF-EOS grid: CRS (WKT), affine transform as a 6-tuple, (rows, cols), and the tile it is."""

    crs_wkt: str
    transform: tuple[float, float, float, float, float, float]
    shape: tuple[int, int]
    tile: str | None


@dataclass(frozen=True)
class PixelMap:
    """For each site-grid pixel, the source pixel (row, col) inside a read window, or -1 outside the file."""

    window: tuple[tuple[int, int], tuple[int, int]] | None
    rows: np.ndarray
    cols: np.ndarray
    inside: np.ndarray
    plain: bool = False  # the site grid is the window itself (same CRS, cell size and alignment)
    #: every grid pixel takes a file pixel (`inside` is then a read-only view of one True, no grid-sized array)
    whole: bool = False


def separable(src_crs, src_transform, grid: Grid) -> bool:
    """A file on `grid`'s CRS, neither north-up grid rotated: its lookup is one of a row and one of a column
    (`_separable_map`), not one per site pixel. `src_crs`: a rasterio CRS; `src_transform`: an Affine."""
    t = grid.transform
    return bool(t.b == t.d == src_transform.b == src_transform.d == 0 and src_crs == grid.crs)


@lru_cache(maxsize=64)
def pixel_map(src_crs_wkt: str, src_transform: tuple, src_shape: tuple[int, int], grid: Grid) -> PixelMap:
    """Nearest-neighbour lookup from the site grid to a file's grid, computed once per distinct file grid.

    Files of one product and tile share a grid, so a four-decade stack warps with one index per pixel
    and reads only the window of the file that covers the site (GDAL's warper re-plans every file).
    """
    from affine import Affine
    from rasterio.crs import CRS
    from rasterio.warp import transform as warp_transform

    rows, cols = grid.shape
    t = grid.transform
    src = Affine(*src_transform[:6])
    r_off, c_off = grid.origin  # (the same pixel centres, to the bit, as the whole grid's)
    if separable(CRS.from_wkt(src_crs_wkt), src, grid):
        return _separable_map(src, src_shape, grid)
    _check_lookup_fits(rows, cols)
    rr, cc = np.meshgrid(np.arange(r_off, r_off + rows) + 0.5, np.arange(c_off, c_off + cols) + 0.5, indexing="ij")
    xs = t.c + cc * t.a + rr * t.b
    ys = t.f + cc * t.d + rr * t.e
    if CRS.from_wkt(src_crs_wkt) != grid.crs:
        qx, qy = warp_transform(grid.crs, CRS.from_wkt(src_crs_wkt), xs.ravel(), ys.ravel())
        xs, ys = np.asarray(qx).reshape(rows, cols), np.asarray(qy).reshape(rows, cols)
    c, r = ~Affine(*src_transform[:6]) @ (xs, ys)
    r, c = np.floor(r).astype(np.int64), np.floor(c).astype(np.int64)
    inside = (r >= 0) & (r < src_shape[0]) & (c >= 0) & (c < src_shape[1])
    if not inside.any():
        return PixelMap(None, r, c, inside)
    r0, r1 = int(r[inside].min()), int(r[inside].max()) + 1
    c0, c1 = int(c[inside].min()), int(c[inside].max()) + 1
    rr, cc = np.where(inside, r - r0, 0), np.where(inside, c - c0, 0)
    plain = bool(
        inside.all()
        and (r1 - r0, c1 - c0) == (rows, cols)
        and (rr == np.arange(rows)[:, None]).all()
        and (cc == np.arange(cols)[None, :]).all()
    )
    return PixelMap(((r0, r1), (c0, c1)), rr, cc, inside, plain)


def _separable_map(src, src_shape: tuple[int, int], grid: Grid) -> PixelMap:
    """pixel_map of two north-up grids in one CRS: a pixel's source row depends on its row alone and its
    column on its column, so the lookup is a column of rows and a row of columns (broadcast when used), the
    same pixels as the full lookup, to the bit, without its ~64 bytes a pixel (a Sentinel-2 tile's 20 m
    SCL onto its 10 m grid took 7.7 GB)."""
    rows, cols = grid.shape
    t = grid.transform
    r_off, c_off = grid.origin
    ycentre = np.arange(r_off, r_off + rows) + 0.5
    xcentre = np.arange(c_off, c_off + cols) + 0.5
    xs, ys = t.c + xcentre * t.a, t.f + ycentre * t.e
    inv = ~src
    c, _ = inv @ (xs, np.full(cols, ys[0]))  # (b = d = 0: the other coordinate adds an exact 0)
    _, r = inv @ (np.full(rows, xs[0]), ys)
    r, c = np.floor(r).astype(np.int64), np.floor(c).astype(np.int64)
    r_in, c_in = (r >= 0) & (r < src_shape[0]), (c >= 0) & (c < src_shape[1])
    whole = bool(r_in.all() and c_in.all())  # (the usual case: a grid-sized mask of True was 120 MB to make)
    inside = np.broadcast_to(np.True_, (rows, cols)) if whole else r_in[:, None] & c_in[None, :]
    if not (r_in.any() and c_in.any()):
        return PixelMap(None, r[:, None], c[None, :], inside)
    r0, r1 = int(r[r_in].min()), int(r[r_in].max()) + 1
    c0, c1 = int(c[c_in].min()), int(c[c_in].max()) + 1
    rr, cc = np.where(r_in, r - r0, 0)[:, None], np.where(c_in, c - c0, 0)[None, :]
    plain = bool(
        whole
        and (r1 - r0, c1 - c0) == (rows, cols)
        and (rr[:, 0] == np.arange(rows)).all()
        and (cc[0] == np.arange(cols)).all()
    )
    return PixelMap(((r0, r1), (c0, c1)), rr, cc, inside, plain, whole)


def _check_lookup_fits(rows: int, cols: int) -> None:
    """The lookup's coordinates take ~64 bytes a pixel while it is made: refused when that is more than the
    memory free (a whole tile onto a grid not aligned with it), before the machine runs out."""
    import psutil

    need = rows * cols * 64
    free = psutil.virtual_memory().available
    if need > free * 0.8:
        from reviewer.errors import MemoryBudgetError

        raise MemoryBudgetError(
            f"placing a file on a grid of {cols} x {rows} px needs about {need / 2**30:.1f} GB, more than the "
            f"{free / 2**30:.1f} GB of memory free; read a smaller area (site init --bbox) or at a smaller width"
        )
