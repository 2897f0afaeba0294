"""Synthetic demo site: a multi-sensor raw record in the providers' own file formats and names.

`make_demo_site(out_dir, seed=...)` writes a site folder that the scanner, decoder and stack viewer read like
real downloads, plus `truth.json` (schemas/truth.schema.json) and `truth_masks.npz` holding the planted land
changes, so question generation and tests can check that computed answers recover them.

The surface is defined once, in Landsat 8 OLI surface reflectance (blue, green, red, nir, swir1, swir2), on the
30 m site grid (`DemoSiteModel.surface(date)`). Each product is derived from it:

* Landsat C2 L2 (TM, ETM+, OLI, OLI-2): DN = round((rho + 0.2) / 2.75e-5); TM/ETM+ get the inverse of the Roy et
  al. (2016) OLS ETM+ -> OLI transform, so harmonising with that transform exactly recovers the OLI surface.
  QA_PIXEL carries the real CFMask codes (TM/ETM+ water 5504 has the clear bit unset, OLI water 21952 has it set).
* Sentinel-2 L2A (20 m): the inverse of the HLS S2 -> OLI bandpass adjustment; DN = rho * 10000 (+1000 from
  processing baseline 04.00, 2022-01-25, written into MTD_MSIL2A.xml).
* MODIS/VIIRS NDVI composites: NDVI of the area-averaged red/NIR reflectance on the sinusoidal grid.
* ERA5-Land monthly t2m/tp, ESA WorldCover 2021, and withheld references (Hansen loss year) under reference/.

Everything is deterministic for a seed: every random draw comes from numpy's default_rng seeded from
(seed, task), so the bytes do not depend on the number of worker processes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import math
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import rasterio
import tifffile
from affine import Affine
from rasterio.crs import CRS
from rasterio.warp import transform as warp_transform
from scipy import ndimage

from reviewer.errors import OutputError, SiteError
from reviewer.record.catalog import catalog
from reviewer.record.stack import harmonization

logger = logging.getLogger(__name__)

GENERATOR_VERSION = "3"  # 2: Landsat windows from the catalog, per scene streams; 3: TM/ETM+ water as OLI
Progress = Callable[[float, str], None]

# --------------------------------------------------------------------------------------------------------------
# Constants: grid, sensors, radiometry, QA codes
# --------------------------------------------------------------------------------------------------------------
SITE_EPSG = 32633
UTM_ZONE = 33
RES = 30.0
#: Site origin: a multiple of 30 m and 20 m, so the 20 m Sentinel-2 grid aligns with the site grid.
SITE_WEST = 620_000.0
SITE_NORTH = 5_430_000.0
WRS_PATH, WRS_ROW = 190, 26
S2_TILE, S2_ORBIT = "33UXP", "R122"
BANDS = ("blue", "green", "red", "nir", "swir1", "swir2")

SINU_WKT = "+proj=sinu +lon_0=0 +x_0=0 +y_0=0 +R=6371007.181 +units=m +no_defs"
SINU_X0, SINU_Y0 = -20015109.355798, 10007554.677899
SINU_TILE = 1111950.5197665
MODIS_250 = SINU_TILE / 4800  # 231.656 m
MODIS_500 = SINU_TILE / 2400  # 463.313 m

#: HLS v1.4 bandpass adjustment: OLI_like = slope * MSI + intercept (per S2 unit).
HLS_S2_TO_OLI = {
    "S2A": {
        "blue": (0.9778, -0.004),
        "green": (1.0053, -0.0009),
        "red": (0.9765, 0.0009),
        "nir": (0.9983, -0.0001),
        "swir1": (0.9987, -0.0011),
        "swir2": (1.003, -0.0012),
    },
    "S2B": {
        "blue": (0.9778, -0.004),
        "green": (1.0075, -0.0008),
        "red": (0.9761, 0.001),
        "nir": (0.9966, 0.0),
        "swir1": (1.0, -0.0003),
        "swir2": (0.9867, 0.0004),
    },
}
S2_PRODUCT = "sentinel2_msi_l2a"
S2_OFFSET_FROM = dt.date(2022, 1, 25)

SR_SCALE, SR_OFFSET = 2.75e-5, -0.2
ST_SCALE, ST_OFFSET = 0.00341802, 149.0
SR_SATURATED_DN = 65455
#: Landsat reflectance floor. The inverse Roy transform makes dark water negative in TM/ETM+ NIR/SWIR
#: (e.g. OLI NIR 0.02 -> ETM+ -0.025); real C2 readers treat DN < 7273 (rho < 0) as out of range, so
#: values are floored here. Land pixels are never affected, so harmonisation recovers them exactly.
SR_FLOOR = 0.0005
NOISE_SD = 0.003

#: CFMask QA_PIXEL codes (Collection 2), as seen in real products.
QA_CODES = {
    "tm": {
        "clear": 5440,
        "water": 5504,
        "snow": 13664,
        "dilated": 5378,
        "shadow": 7440,
        "cloud": 5896,
        "cirrus_cloud": 5896,
        "fill": 1,
    },
    "oli": {
        "clear": 21824,
        "water": 21952,
        "snow": 30048,
        "dilated": 21762,
        "shadow": 23888,
        "cloud": 22280,
        "cirrus_cloud": 55052,
        "fill": 1,
    },
}

# Landsat missions: prefix, sensor family, catalog product id, 16-day phase reference date. The active window
# (first_date/last_date) is the catalog row's (products.json), see `_mission_window`.
MISSIONS = [
    ("LT05", "tm", "landsat5_tm_c2l2", dt.date(1984, 3, 20)),
    ("LE07", "etm", "landsat7_etm_c2l2", dt.date(1999, 5, 28)),
    ("LC08", "oli", "landsat8_oli_c2l2", dt.date(2013, 3, 20)),
    ("LC09", "oli", "landsat9_oli2_c2l2", dt.date(2021, 11, 5)),
]
#: Where the demo stops acquiring before the catalog's open-ended window: Landsat 7 is open-ended in
#: products.json (raw_record_facts.md gives no end), the demo writes no ETM+ scene after this date.
DEMO_LAST_ACQUISITION = {"LE07": dt.date(2022, 4, 6)}


def _mission_window(prefix: str, pid: str) -> tuple[dt.date, dt.date | None]:
    """The (first, last) acquisition dates of a Landsat mission in the demo: the catalog row's archive extent."""
    product = catalog().products[pid]
    assert product.first_date is not None, pid
    return product.first_date, product.last_date or DEMO_LAST_ACQUISITION.get(prefix)


SLC_OFF = dt.date(2003, 5, 31)
MISSION_META = {
    "LT05": ("LANDSAT_5", "TM", "10:05:12"),
    "LE07": ("LANDSAT_7", "ETM", "09:58:41"),
    "LC08": ("LANDSAT_8", "OLI_TIRS", "09:53:20"),
    "LC09": ("LANDSAT_9", "OLI_TIRS", "09:53:31"),
}

# Land-cover classes of the synthetic surface (internal codes) and their WorldCover codes.
WATER, FOREST, GRASS, CROP, SHRUB, BARE, BUILT = range(7)
CLASS_NAMES = ["water", "forest", "grassland", "cropland", "shrubland", "bare", "built-up"]
WORLDCOVER = np.array([80, 10, 30, 40, 20, 60, 50], dtype=np.uint8)

#: OLI-scale surface reflectance (blue, green, red, nir, swir1, swir2): green-season and dormant spectra.
GREEN = np.array(
    [
        [0.06, 0.05, 0.03, 0.02, 0.01, 0.005],  # water
        [0.03, 0.05, 0.03, 0.36, 0.16, 0.07],  # forest
        [0.04, 0.08, 0.05, 0.34, 0.22, 0.11],  # grassland
        [0.03, 0.07, 0.035, 0.42, 0.20, 0.09],  # cropland
        [0.04, 0.07, 0.05, 0.30, 0.20, 0.10],  # shrubland
        [0.10, 0.14, 0.18, 0.25, 0.32, 0.28],  # bare soil
        [0.12, 0.13, 0.14, 0.18, 0.22, 0.20],  # built-up
    ],
    dtype=np.float32,
)
DORMANT = np.array(
    [
        [0.06, 0.05, 0.03, 0.02, 0.01, 0.005],
        [0.04, 0.06, 0.05, 0.23, 0.18, 0.09],
        [0.07, 0.10, 0.12, 0.22, 0.28, 0.20],
        [0.10, 0.14, 0.18, 0.25, 0.32, 0.28],  # cropland off-season = bare soil
        [0.06, 0.08, 0.09, 0.21, 0.26, 0.17],
        [0.10, 0.14, 0.18, 0.25, 0.32, 0.28],
        [0.12, 0.13, 0.14, 0.18, 0.22, 0.20],
    ],
    dtype=np.float32,
)
BURN = np.array([0.04, 0.05, 0.06, 0.08, 0.17, 0.22], dtype=np.float32)
SNOW = np.array([0.82, 0.80, 0.77, 0.66, 0.08, 0.05], dtype=np.float32)
CLOUD = np.array([0.55, 0.55, 0.56, 0.60, 0.45, 0.33], dtype=np.float32)

#: Phenology per class: (min greenness, peak day of year, width sigma in days, drought factor).
PHENO = {
    FOREST: (0.35, 196, 55.0, 0.72),
    GRASS: (0.15, 166, 45.0, 0.45),
    SHRUB: (0.25, 181, 50.0, 0.5),
}
VEG = (FOREST, GRASS, CROP, SHRUB)
GROWING_MONTHS = (5, 6, 7, 8, 9)

# Region layout in fractions of the site (row, col), north at row 0. Changes sit in different quadrants.
LAKE_C, LAKE_R = (0.25, 0.75), 0.165
URBAN_C, URBAN_R = (0.68, 0.74), 0.135
CLEAR_BOX = (0.10, 0.08, 0.30, 0.34)  # row0, col0, row1, col1 (fractions)
BURN1_C, BURN1_R = (0.72, 0.22), 0.11
BURN2_C, BURN2_R = (0.91, 0.40), 0.05
CROP_BOX = (0.88, 0.54, 0.98, 0.98)
STABLE_BOX = (0.42, 0.40, 0.58, 0.54)


# --------------------------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------------------------
def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, *[int(k) for k in key]]))


def _smooth(rng: np.random.Generator, shape: tuple[int, int], scale_px: float) -> np.ndarray:
    """Zero-mean, unit-std smooth noise with features about `scale_px` pixels across."""
    h, w = shape
    kh = max(2, int(math.ceil(h / max(scale_px, 1.0))) + 2)
    kw = max(2, int(math.ceil(w / max(scale_px, 1.0))) + 2)
    coarse = rng.standard_normal((kh, kw)).astype(np.float32)
    out = ndimage.zoom(coarse, (h / kh * 1.0001, w / kw * 1.0001), order=1, mode="nearest", grid_mode=True)[:h, :w]
    if out.shape != (h, w):  # pragma: no cover - zoom rounding guard
        out = np.pad(out, ((0, h - out.shape[0]), (0, w - out.shape[1])), mode="edge")
    out -= out.mean()
    sd = float(out.std())
    return out / sd if sd > 0 else out


def _circ_days(doy: float | np.ndarray, peak: float) -> float | np.ndarray:
    d = np.abs(np.asarray(doy, dtype=float) - peak)
    return np.minimum(d, 365.25 - d)


def _bump(doy: float, peak: float, width: float) -> float:
    return float(np.exp(-0.5 * (_circ_days(doy, peak) / width) ** 2))


def _profile(arr: np.ndarray, crs: CRS, transform: Affine, nodata: float | None) -> dict[str, Any]:
    h, w = arr.shape
    prof: dict[str, Any] = dict(
        driver="GTiff",
        width=w,
        height=h,
        count=1,
        dtype=arr.dtype.name,
        crs=crs,
        transform=transform,
        compress="deflate",
        zlevel=1,
        predictor=3 if arr.dtype.kind == "f" else 2,
    )
    if nodata is not None:
        prof["nodata"] = nodata
    if h >= 512 and w >= 512:  # small rasters: strips write faster and read as fast
        prof.update(tiled=True, blockxsize=256, blockysize=256)
    return prof


_GEO_TAGS = (33550, 33922, 34264, 34735, 34736, 34737, 42113)
_TEMPLATES: dict[tuple[Any, ...], tuple[CRS, list[tuple[Any, ...]]]] = {}
_SMALL = 20_000  # pixels: below this, GDAL's per-file CRS handling costs far more than the pixels


def _geo_tags(crs: CRS, transform: Affine, arr: np.ndarray, nodata: float | None) -> list[tuple[Any, ...]]:
    """GDAL's GeoTIFF georeferencing tags for this grid, dtype and nodata (from a scratch file, cached)."""
    key = (id(crs), tuple(transform)[:6], arr.shape, arr.dtype.str, nodata)
    tpl = _TEMPLATES.get(key)
    if tpl is None:
        fd, tmp = tempfile.mkstemp(suffix=".tif")
        os.close(fd)
        try:
            with rasterio.open(tmp, "w", **_profile(arr, crs, transform, nodata)) as dst:
                dst.write(np.zeros_like(arr), 1)
            with tifffile.TiffFile(tmp) as tf:
                tags = [
                    (t.code, t.dtype, t.count, t.value, True) for t in tf.pages[0].tags.values() if t.code in _GEO_TAGS
                ]
        finally:
            os.unlink(tmp)
        tpl = _TEMPLATES[key] = (crs, tags)
    return tpl[1]


def _write(path: Path, arr: np.ndarray, crs: CRS, transform: Affine, nodata: float | None = None) -> None:
    """One single-band GeoTIFF (DEFLATE, horizontal predictor; 256 px tiles from 512 x 512 px).

    Small rasters are written with tifffile and the georeferencing tags GDAL writes for the same grid, dtype
    and nodata: GDAL spends ~10 ms a file on a custom CRS (MODIS sinusoidal). Which writer is used depends
    only on the raster size, so the bytes do not depend on the order or process in which files are written.
    """
    if arr.size <= _SMALL:
        tifffile.imwrite(
            path,
            arr,
            photometric="minisblack",
            compression="zlib",
            compressionargs={"level": 1},
            predictor=arr.dtype.kind != "f",
            metadata=None,
            software=False,
            extratags=_geo_tags(crs, transform, arr, nodata),
        )
        return
    with rasterio.open(path, "w", **_profile(arr, crs, transform, nodata)) as dst:
        dst.write(arr, 1)


def _date_iso(d: dt.date) -> str:
    return d.isoformat()


def _doy(d: dt.date) -> int:
    return d.timetuple().tm_yday


def _ols_slope(xs: list[float], ys: list[float]) -> float:
    if len(xs) < 2:
        return 0.0
    x = np.asarray(xs, float)
    y = np.asarray(ys, float)
    return float(np.polyfit(x, y, 1)[0])


def _quadrant(r: float, c: float) -> str:
    return ("north" if r < 0.5 else "south") + "-" + ("west" if c < 0.5 else "east")


# --------------------------------------------------------------------------------------------------------------
# The surface model
# --------------------------------------------------------------------------------------------------------------
@dataclass
class Grid:
    crs: CRS
    transform: Affine
    shape: tuple[int, int]

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        t = self.transform
        h, w = self.shape
        return (t.c, t.f + t.e * h, t.c + t.a * w, t.f)


@dataclass
class Events:
    lake_a: int
    lake_b: int
    lake_n0: int
    lake_n1: int
    urban_a: int
    urban_b: int
    urban_n0: int
    urban_n1: int
    clear_date: dt.date
    burn1_date: dt.date
    burn2_date: dt.date
    burn1_recovery: int
    burn2_recovery: int
    drought_year: int
    crop_peak_month: int
    year_factor: dict[int, float]
    snow_half: dict[int, float]  # winter (year of January) -> snow-season half length in days


@dataclass
class DemoSiteModel:
    """The synthetic land surface of a demo site; `surface(date)` gives OLI-scale reflectance on the site grid."""

    seed: int
    size: int
    start: int
    end: int
    variant: str
    grid: Grid
    base: np.ndarray  # int8 class map before planted changes
    tex: np.ndarray  # float32 brightness texture (~1)
    gtex: np.ndarray  # float32 greenness texture (~0)
    elev: np.ndarray  # float32 0..1, drives snow persistence
    lake_rank: np.ndarray  # float32, inf outside the lake zone
    urban_rank: np.ndarray
    clear_mask: np.ndarray
    burn1_mask: np.ndarray
    burn2_mask: np.ndarray
    crop_mask: np.ndarray
    stable_mask: np.ndarray
    ev: Events
    crop_shift: np.ndarray  # float32 per-pixel peak shift (days) of crop fields
    extra: dict[str, Any] = field(default_factory=dict)

    # ---- planted change state ----
    def lake_n(self, year: int) -> int:
        e = self.ev
        f = min(1.0, max(0.0, (year - e.lake_a) / max(1, e.lake_b - e.lake_a)))
        return int(round(e.lake_n0 + (e.lake_n1 - e.lake_n0) * f))

    def urban_n(self, year: int) -> int:
        e = self.ev
        f = min(1.0, max(0.0, (year - e.urban_a) / max(1, e.urban_b - e.urban_a)))
        return int(round(e.urban_n0 + (e.urban_n1 - e.urban_n0) * f))

    def water(self, year: int) -> np.ndarray:
        return self.lake_rank < self.lake_n(year)

    def built(self, year: int) -> np.ndarray:
        return self.urban_rank < self.urban_n(year)

    def classes(self, d: dt.date) -> np.ndarray:
        cls = self.base.copy()
        cls[self.built(d.year)] = BUILT
        if d >= self.ev.clear_date:
            regrown = d >= dt.date(self.ev.clear_date.year + 2, 4, 1)
            cls[self.clear_mask] = GRASS if regrown else BARE
        cls[self.water(d.year)] = WATER
        return cls

    def greenness(self, d: dt.date) -> np.ndarray:
        """Greenness (0..1, mixing green and dormant spectra) per class on date d."""
        doy = _doy(d)
        g = np.ones(len(CLASS_NAMES), dtype=np.float32)
        yf = self.ev.year_factor.get(d.year, 1.0)
        for c, (gmin, peak, width, dfac) in PHENO.items():
            amp = (1.0 - gmin) * yf * (dfac if d.year == self.ev.drought_year else 1.0)
            g[c] = gmin + amp * _bump(doy, peak, width)
        return g

    def crop_greenness(self, d: dt.date) -> np.ndarray:
        peak = _doy(dt.date(d.year, self.ev.crop_peak_month, 15))
        yf = self.ev.year_factor.get(d.year, 1.0) * (0.5 if d.year == self.ev.drought_year else 1.0)
        dd = _circ_days(_doy(d), peak + self.crop_shift)
        return (0.95 * yf * np.exp(-0.5 * (dd / 20.0) ** 2)).astype(np.float32)

    def snow_mask(self, d: dt.date) -> np.ndarray | None:
        winter = d.year + 1 if d.month >= 7 else d.year
        half = self.ev.snow_half.get(winter, 0.0)
        if half <= 0:
            return None
        k = (d - dt.date(winter, 1, 20)).days
        h = half + 12.0 * (self.elev - 0.5)
        if abs(k) >= float(h.max()):
            return None
        return (abs(k) < h) & ~self.water(d.year)

    def burn_fraction(self, d: dt.date, which: int) -> float:
        bd = self.ev.burn1_date if which == 1 else self.ev.burn2_date
        n = self.ev.burn1_recovery if which == 1 else self.ev.burn2_recovery
        if d < bd:
            return 0.0
        return max(0.0, 1.0 - (d - bd).days / (n * 365.25))

    def surface(
        self, d: dt.date, bands: tuple[int, ...] = (0, 1, 2, 3, 4, 5), *, snow: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """OLI-scale reflectance (len(bands), H, W) float32, class map, snow mask (or None) on date d."""
        cls = self.classes(d)
        gcls = self.greenness(d)
        g = gcls[cls] + self.gtex
        if self.crop_mask.any():
            cm = cls == CROP
            g[cm] = self.crop_greenness(d)[cm] + 0.5 * self.gtex[cm]
        np.clip(g, 0.0, 1.0, out=g)
        f1, f2 = self.burn_fraction(d, 1), self.burn_fraction(d, 2)
        sm = self.snow_mask(d) if snow else None
        out = np.empty((len(bands), *cls.shape), dtype=np.float32)
        for i, b in enumerate(bands):
            dor = DORMANT[:, b][cls]
            rb = dor + g * (GREEN[:, b][cls] - dor)
            for f, m in ((f1, self.burn1_mask), (f2, self.burn2_mask)):
                if f > 0:
                    rb[m] = rb[m] * (1.0 - f) + f * BURN[b]
            rb *= self.tex
            if sm is not None:
                rb[sm] = SNOW[b] * (0.97 + 0.03 * self.tex[sm])
            out[i] = rb
        return out, cls, sm

    def ndvi(self, d: dt.date) -> np.ndarray:
        rho, _, _ = self.surface(d, (2, 3))
        return (rho[1] - rho[0]) / (rho[1] + rho[0])


def _pick_year(
    rng: np.random.Generator,
    start: int,
    end: int,
    lo: float,
    hi: float,
    avoid: set[int] = frozenset(),
    min_year: int | None = None,
    max_year: int | None = None,
) -> int:
    span = end - start
    y = start + int(round(rng.uniform(lo, hi) * span))
    lo_y = max(start, min_year) if min_year is not None and min_year <= end else start
    hi_y = min(end, max_year) if max_year is not None and max_year >= lo_y else end
    y = min(max(y, lo_y), hi_y)
    for step in (0, 1, -1, 2, -2, 3, -3, 4, -4):
        cand = y + step
        if lo_y <= cand <= hi_y and cand not in avoid:
            return cand
    return y


def build_model(
    *, seed: int = 0, size: int = 200, start: int = 1984, end: int = 2024, variant: str = "core"
) -> DemoSiteModel:
    """The deterministic surface model of a demo site (what make_demo_site renders)."""
    if end < start:
        raise SiteError(f"end year {end} is before start year {start}", field="end")
    if size < 32:
        raise SiteError(f"size must be at least 32 pixels, got {size}", field="size")
    if variant not in ("core", "snow"):
        raise SiteError(f"unknown variant {variant!r} (core or snow)", field="variant")
    n = int(size)
    rng = _rng(seed, 1)
    grid = Grid(CRS.from_epsg(SITE_EPSG), Affine(RES, 0, SITE_WEST, 0, -RES, SITE_NORTH), (n, n))
    rr, cc = np.meshgrid((np.arange(n) + 0.5) / n, (np.arange(n) + 0.5) / n, indexing="ij")
    rr = rr.astype(np.float32)
    cc = cc.astype(np.float32)

    wob1, wob2 = _smooth(rng, (n, n), n / 5), _smooth(rng, (n, n), n / 5)
    base = np.full((n, n), GRASS, dtype=np.int8)
    forest = (cc + 0.03 * wob1 < 0.48) & (rr + 0.03 * wob2 < 0.48)
    shrub = (cc + 0.03 * wob1 < 0.48) & (rr + 0.03 * wob2 > 0.53)
    base[forest] = FOREST
    base[shrub] = SHRUB

    def box(fr: tuple[float, float, float, float]) -> tuple[np.ndarray, list[int]]:
        r0, c0, r1, c1 = (int(round(v * n)) for v in fr)
        m = np.zeros((n, n), bool)
        m[r0:r1, c0:c1] = True
        return m, [r0, c0, r1, c1]

    crop_mask, crop_box = box(CROP_BOX)
    base[crop_mask] = CROP
    clear_mask, clear_box = box(CLEAR_BOX)
    stable_mask, stable_box = box(STABLE_BOX)

    def blob(c: tuple[float, float], r: float, wob: float) -> tuple[np.ndarray, np.ndarray]:
        d = np.hypot(rr - c[0], cc - c[1]) / r
        d = d + wob * _smooth(rng, (n, n), n / 8)
        return d, d <= 1.0

    def ranks(d: np.ndarray, zone: np.ndarray) -> np.ndarray:
        out = np.full((n, n), np.inf, dtype=np.float32)
        idx = np.flatnonzero(zone.ravel())
        order = idx[np.argsort(d.ravel()[idx], kind="stable")]
        out.ravel()[order] = np.arange(order.size, dtype=np.float32)
        return out

    dl, lake_zone = blob(LAKE_C, LAKE_R, 0.12)
    lake_rank = ranks(dl, lake_zone)
    du, urban_zone = blob(URBAN_C, URBAN_R, 0.10)
    urban_rank = ranks(du, urban_zone)
    _, burn1 = blob(BURN1_C, BURN1_R, 0.12)
    _, burn2 = blob(BURN2_C, BURN2_R, 0.10)
    burn1 &= base == SHRUB
    burn2 &= base == SHRUB

    tex = (1.0 + 0.05 * _smooth(rng, (n, n), n / 10) + 0.025 * rng.standard_normal((n, n))).astype(np.float32)
    gtex = (0.05 * _smooth(rng, (n, n), n / 12) + 0.02 * rng.standard_normal((n, n))).astype(np.float32)
    elev = _smooth(rng, (n, n), n / 3)
    elev = ((elev - elev.min()) / max(1e-6, float(elev.max() - elev.min()))).astype(np.float32)
    crop_shift = np.zeros((n, n), np.float32)
    field_shift = rng.uniform(-6, 6, 6).astype(np.float32)
    cols = np.minimum((cc * 6).astype(int), 5)
    crop_shift[crop_mask] = field_shift[cols[crop_mask]]
    field_gain = (1.0 + 0.05 * rng.standard_normal(6)).astype(np.float32)
    tex[crop_mask] *= field_gain[cols[crop_mask]]

    span = end - start
    lake_a = start + int(round(0.12 * span))
    lake_b = max(lake_a + 1, end - int(round(0.12 * span)))
    m_lake = int(lake_zone.sum())
    urban_a = start + int(round(0.05 * span))
    urban_b = max(urban_a + 1, end - int(round(0.05 * span)))
    m_urban = int(urban_zone.sum())
    clear_year = _pick_year(
        rng,
        start,
        end,
        0.45,
        0.62,
        min_year=2001 if end >= 2003 else None,
        max_year=min(end - 2, 2024) if end >= 2003 else None,
    )
    burn1_year = _pick_year(rng, start, end, 0.25, 0.38, {clear_year})
    burn2_year = _pick_year(rng, start, end, 0.68, 0.8, {clear_year, burn1_year})
    drought = _pick_year(
        rng,
        start,
        end,
        0.5,
        0.9,
        {clear_year, burn1_year, burn2_year, start, end},
        min_year=start + 1,
        max_year=end - 1,
    )
    crop_peak = int(rng.choice([6, 7, 8]))
    years = list(range(start, end + 1))
    yf = {y: float(1.0 + 0.025 * np.clip(rng.standard_normal(), -1.5, 1.5)) for y in years}
    winters = list(range(start, end + 2))
    if variant == "snow":
        half = {w: max(0.0, 62.0 - 1.5 * (w - start) + float(rng.normal(0, 1.5))) for w in winters}
    else:
        half = {w: (0.0 if rng.random() < 0.4 else float(rng.uniform(5, 22))) for w in winters}
    ev = Events(
        lake_a=lake_a,
        lake_b=lake_b,
        lake_n0=int(round(0.25 * m_lake)),
        lake_n1=int(round(0.9 * m_lake)),
        urban_a=urban_a,
        urban_b=urban_b,
        urban_n0=int(round(0.15 * m_urban)),
        urban_n1=int(round(0.85 * m_urban)),
        clear_date=dt.date(clear_year, 1, 1) + dt.timedelta(days=int(rng.integers(120, 250))),
        burn1_date=dt.date(burn1_year, 1, 1) + dt.timedelta(days=int(rng.integers(190, 235))),
        burn2_date=dt.date(burn2_year, 1, 1) + dt.timedelta(days=int(rng.integers(190, 235))),
        burn1_recovery=4,
        burn2_recovery=3,
        drought_year=drought,
        crop_peak_month=crop_peak,
        year_factor=yf,
        snow_half=half,
    )
    return DemoSiteModel(
        seed=seed,
        size=n,
        start=start,
        end=end,
        variant=variant,
        grid=grid,
        base=base,
        tex=tex,
        gtex=gtex,
        elev=elev,
        lake_rank=lake_rank,
        urban_rank=urban_rank,
        clear_mask=clear_mask,
        burn1_mask=burn1,
        burn2_mask=burn2,
        crop_mask=crop_mask,
        stable_mask=stable_mask,
        ev=ev,
        crop_shift=crop_shift,
        extra={
            "boxes": {"clearing": clear_box, "cropland": crop_box, "stable": stable_box},
            "lake_zone": lake_zone,
            "urban_zone": urban_zone,
        },
    )


# --------------------------------------------------------------------------------------------------------------
# Shared scene effects: clouds, shadows, geometry
# --------------------------------------------------------------------------------------------------------------
def _cloud_month_p(month: int) -> float:
    """Probability of a fairly cloudy scene by month (central European climate)."""
    return [0.5, 0.45, 0.38, 0.28, 0.22, 0.17, 0.14, 0.14, 0.19, 0.3, 0.45, 0.52][month - 1]


def _draw_cloud(rng: np.random.Generator, month: int) -> float:
    u = rng.random()
    p = _cloud_month_p(month)
    if u < p:
        return float(round(rng.uniform(0.35, 0.95), 3))
    if u < p + 0.35:
        return 0.0
    return float(round(rng.uniform(0.01, 0.3), 3))


@dataclass
class Clouds:
    cloud: np.ndarray
    alpha: np.ndarray
    dilated: np.ndarray
    shadow: np.ndarray
    cirrus: np.ndarray
    core: np.ndarray  # thick cloud cores (excess over threshold, in std units)


def _clouds(
    rng: np.random.Generator, shape: tuple[int, int], frac: float, cirrus: bool, px_scale: float
) -> Clouds | None:
    if frac <= 0:
        return None
    h, w = shape
    f = 0.75 * _smooth(rng, shape, max(h, w) / 4) + 0.35 * _smooth(rng, shape, max(h, w) / 14)
    thr = float(np.quantile(f, 1.0 - frac))
    cloud = f > thr
    excess = np.where(cloud, f - thr, 0.0).astype(np.float32)
    alpha = np.clip(0.45 + excess / 0.6, 0.45, 1.0).astype(np.float32)
    it = max(1, int(round(3 * px_scale)))
    dil = ndimage.binary_dilation(cloud, iterations=it) & ~cloud
    sr = int(rng.integers(5, 14) * px_scale) + 1
    sc = int(rng.integers(4, 12) * px_scale) + 1
    shadow = np.zeros(shape, bool)
    if sr < h and sc < w:
        shadow[: h - sr, : w - sc] = cloud[sr:, sc:]  # shadows fall north-west of their clouds (sun from SE)
    shadow &= ~cloud
    cir = np.zeros(shape, bool)
    if cirrus:
        cir = cloud & (_smooth(rng, shape, max(h, w) / 6) > 0.2)
    return Clouds(cloud, alpha, dil, shadow, cir, excess)


def _apply_clouds(rho: np.ndarray, cl: Clouds, cloud_spec: np.ndarray) -> None:
    for i in range(rho.shape[0]):
        rb = rho[i]
        rb[cl.shadow] *= 0.35
        rb[cl.dilated] = 0.88 * rb[cl.dilated] + 0.12 * cloud_spec[i]
        a = cl.alpha[cl.cloud]
        bright = cloud_spec[i] * (0.85 + 0.5 * np.tanh(cl.core[cl.cloud]))
        rb[cl.cloud] = (1.0 - a) * rb[cl.cloud] + a * bright


def _shift(a: np.ndarray, dr: int, dc: int) -> np.ndarray:
    """Content moved by (dr, dc) pixels (south/east positive); edges replicated."""
    if dr == 0 and dc == 0:
        return a
    p = max(abs(dr), abs(dc))
    padded = np.pad(a, [(0, 0)] * (a.ndim - 2) + [(p, p), (p, p)], mode="edge")
    h, w = a.shape[-2:]
    return padded[..., p - dr : p - dr + h, p - dc : p - dc + w]


def _pad(a: np.ndarray, pad: tuple[int, int, int, int]) -> np.ndarray:
    pt, pl, pb, pr = pad
    return np.pad(a, [(0, 0)] * (a.ndim - 2) + [(pt, pb), (pl, pr)], mode="reflect")


def _slc_gaps(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, float]:
    """Wedge-like SLC-off scan gaps: near-horizontal stripes whose width grows across the scene."""
    h, w = shape
    theta = math.radians(float(rng.uniform(-10, -6)))
    period = float(rng.uniform(15.0, 17.0))
    target = float(rng.uniform(0.17, 0.27))
    phase = float(rng.uniform(0, period))
    r, c = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32), indexing="ij")
    u = r * math.cos(theta) + c * math.sin(theta) + phase
    x = c / max(1, w - 1)
    if rng.random() < 0.5:
        x = 1.0 - x
    width = period * target * (0.55 + 0.9 * x)
    gaps = np.mod(u, period) < width
    return gaps, target


# --------------------------------------------------------------------------------------------------------------
# Landsat
# --------------------------------------------------------------------------------------------------------------
def _landsat_plan(model: DemoSiteModel, scenes_per_year: int, seed: int) -> list[dict[str, Any]]:
    """The Landsat scenes of the site. A mission-year's picks and a scene's draws come from their own streams
    ((seed, mission, year) and (seed, mission, date)), so a change to one mission's window leaves the others'
    scenes as they were."""
    plan: list[dict[str, Any]] = []
    for year in range(model.start, model.end + 1):
        for m, (prefix, fam, pid, ref) in enumerate(MISSIONS):
            first, last = _mission_window(prefix, pid)
            rng = _rng(seed, 10, m, year)
            lo = max(first, dt.date(year, 1, 1))
            hi = min(last or dt.date(year, 12, 31), dt.date(year, 12, 31))
            if lo > hi:
                continue
            k0 = math.ceil((lo - ref).days / 16)
            cands = []
            k = k0
            while True:
                d = ref + dt.timedelta(days=16 * k)
                if d > hi:
                    break
                if d >= lo:
                    cands.append(d)
                k += 1
            if not cands:
                continue
            n = min(len(cands), max(1, int(round(scenes_per_year * len(cands) / 23.0))))
            n = min(n, scenes_per_year, len(cands)) if len(cands) >= 20 else n
            if rng.random() < 0.12 and n > 1:
                n = max(1, n // 2)  # some years have fewer usable acquisitions
            bins = np.array_split(np.arange(len(cands)), n)
            for b in bins:
                d = cands[int(rng.choice(b))]
                plan.append({"prefix": prefix, "family": fam, "product": pid, "mission": m, "date": d})
    plan.sort(key=lambda s: (s["date"], s["prefix"]))
    for i, s in enumerate(plan):
        d = s["date"]
        rng = _rng(seed, 10, s.pop("mission"), d.toordinal())
        s["index"] = i
        s["cloud"] = _draw_cloud(rng, d.month)
        s["cirrus"] = s["family"] == "oli" and s["cloud"] > 0 and rng.random() < 0.35
        s["saturate"] = s["cloud"] > 0.1 and rng.random() < 0.3
        s["slc_off"] = s["prefix"] == "LE07" and d > SLC_OFF
        s["tier"] = "T1"
        s["shift"] = None
        s["pad"] = None
        s["missed"] = int(rng.integers(1, 3)) if rng.random() < 0.05 else 0
        if d < dt.date(2020, 8, 1):
            proc = dt.date(2020, 8, 15) + dt.timedelta(days=int(rng.integers(0, 240)))
        else:
            proc = d + dt.timedelta(days=int(rng.integers(6, 25)))
        s["processed"] = proc
        r = rng.random()
        if r < 0.04:
            s["tier"] = "T2"
        elif r < 0.07:
            s["pad"] = tuple(int(v) for v in rng.integers(2, 9, 4))
    # Guarantee each trap at least once on a site with enough scenes.
    rng = _rng(seed, 10)
    if len(plan) >= 10:
        t1 = [s for s in plan if s["tier"] == "T1" and s["pad"] is None]
        if not any(s["tier"] == "T2" for s in plan) and t1:
            t1[int(rng.integers(len(t1)))]["tier"] = "T2"
        t1 = [s for s in plan if s["tier"] == "T1" and s["pad"] is None]
        if not any(s["pad"] for s in plan) and t1:
            t1[int(rng.integers(len(t1)))]["pad"] = tuple(int(v) for v in rng.integers(2, 9, 4))
        if not any(s["missed"] for s in plan):
            plan[int(rng.integers(len(plan)))]["missed"] = 1
    for s in plan:
        if s["tier"] == "T2":
            mag = rng.integers(2, 7, 2) * rng.choice([-1, 1], 2)
            s["shift"] = (int(mag[0]), int(mag[1]))
            if s["cloud"] == 0 and rng.random() < 0.5:
                s["cloud"] = float(round(rng.uniform(0.3, 0.7), 3))
        level = "L2SP"
        s["id"] = (
            f"{s['prefix']}_{level}_{WRS_PATH:03d}{WRS_ROW:03d}_{s['date']:%Y%m%d}_"
            f"{s['processed']:%Y%m%d}_02_{s['tier']}"
        )
    return plan


def _thermal(cls: np.ndarray, d: dt.date, snow: np.ndarray | None) -> np.ndarray:
    s = math.cos(2 * math.pi * (_doy(d) - 200) / 365.25)
    base = np.array(
        [
            284 + 8 * s,
            287 + 11 * s,
            289 + 13 * s,
            289 + 14 * s,
            289 + 13 * s,
            291 + 16 * s,
            292 + 16 * s,
        ],
        dtype=np.float32,
    )
    t = base[cls]
    if snow is not None:
        t[snow] = 268.0
    return t


def _mtl(spec: dict[str, Any], files: list[str], grid: Grid, cloud_cover: float, thermal: bool) -> str:
    sc_id, sensor, tm = MISSION_META[spec["prefix"]]
    pid = spec["id"]
    w, s, e, n = grid.bounds
    fam = spec["family"]
    sr_bands = [1, 2, 3, 4, 5, 6, 7] if fam == "oli" else [1, 2, 3, 4, 5, 7]
    lines = [
        "GROUP = LANDSAT_METADATA_FILE",
        "  GROUP = PRODUCT_CONTENTS",
        '    ORIGIN = "Image courtesy of the U.S. Geological Survey (synthetic demo product)"',
        f'    LANDSAT_PRODUCT_ID = "{pid}"',
        f'    PROCESSING_LEVEL = "{pid.split("_")[1]}"',
        "    COLLECTION_NUMBER = 02",
        f'    COLLECTION_CATEGORY = "{spec["tier"]}"',
        '    OUTPUT_FORMAT = "GEOTIFF"',
    ]
    lines += [f'    FILE_NAME_{f.rsplit(".", 1)[0][len(pid) + 1 :]} = "{f}"' for f in files]
    lines += [
        "  END_GROUP = PRODUCT_CONTENTS",
        "  GROUP = IMAGE_ATTRIBUTES",
        f'    SPACECRAFT_ID = "{sc_id}"',
        f'    SENSOR_ID = "{sensor}"',
        "    WRS_TYPE = 2",
        f"    WRS_PATH = {WRS_PATH}",
        f"    WRS_ROW = {WRS_ROW}",
        f"    DATE_ACQUIRED = {spec['date']:%Y-%m-%d}",
        f'    SCENE_CENTER_TIME = "{tm}.0000000Z"',
        f"    CLOUD_COVER = {cloud_cover * 100:.2f}",
        f"    CLOUD_COVER_LAND = {cloud_cover * 100:.2f}",
        "  END_GROUP = IMAGE_ATTRIBUTES",
        "  GROUP = PROJECTION_ATTRIBUTES",
        '    MAP_PROJECTION = "UTM"',
        '    DATUM = "WGS84"',
        '    ELLIPSOID = "WGS84"',
        f"    UTM_ZONE = {UTM_ZONE}",
        "    GRID_CELL_SIZE_REFLECTIVE = 30.00",
        "    GRID_CELL_SIZE_THERMAL = 30.00",
        f"    REFLECTIVE_LINES = {grid.shape[0]}",
        f"    REFLECTIVE_SAMPLES = {grid.shape[1]}",
        '    ORIENTATION = "NORTH_UP"',
        f"    CORNER_UL_PROJECTION_X_PRODUCT = {w:.3f}",
        f"    CORNER_UL_PROJECTION_Y_PRODUCT = {n:.3f}",
        f"    CORNER_LR_PROJECTION_X_PRODUCT = {e:.3f}",
        f"    CORNER_LR_PROJECTION_Y_PRODUCT = {s:.3f}",
        "  END_GROUP = PROJECTION_ATTRIBUTES",
        "  GROUP = LEVEL2_PROCESSING_RECORD",
        f"    DATE_PRODUCT_GENERATED = {spec['processed']:%Y-%m-%d}T10:00:00Z",
        "  END_GROUP = LEVEL2_PROCESSING_RECORD",
        "  GROUP = LEVEL2_SURFACE_REFLECTANCE_PARAMETERS",
    ]
    lines += [f"    REFLECTANCE_MULT_BAND_{b} = 2.75e-05" for b in sr_bands]
    lines += [f"    REFLECTANCE_ADD_BAND_{b} = -0.2" for b in sr_bands]
    lines += ["  END_GROUP = LEVEL2_SURFACE_REFLECTANCE_PARAMETERS"]
    if thermal:
        st = "ST_B10" if fam == "oli" else "ST_B6"
        lines += [
            "  GROUP = LEVEL2_SURFACE_TEMPERATURE_PARAMETERS",
            f"    TEMPERATURE_MULT_BAND_{st} = 0.00341802",
            f"    TEMPERATURE_ADD_BAND_{st} = 149.0",
            "  END_GROUP = LEVEL2_SURFACE_TEMPERATURE_PARAMETERS",
        ]
    lines += ["END_GROUP = LANDSAT_METADATA_FILE", "END", ""]
    return "\n".join(lines)


def _render_landsat(model: DemoSiteModel, spec: dict[str, Any], root: Path, opts: dict[str, Any]) -> dict[str, Any]:
    n = model.size
    d = spec["date"]
    fam = spec["family"]
    rng = _rng(model.seed, 2, spec["index"])
    rho, cls, sm = model.surface(d)
    water = cls == WATER
    px_scale = max(0.5, n / 200.0)
    cl = _clouds(rng, (n, n), spec["cloud"], spec["cirrus"], px_scale)
    # Clouds the QA misses: bright blobs left marked clear.
    missed = []
    for _ in range(spec["missed"]):
        rad = max(2, int(rng.integers(2, 6) * px_scale))
        r0, c0 = int(rng.integers(rad, n - rad)), int(rng.integers(rad, n - rad))
        yy, xx = np.ogrid[:n, :n]
        disk = (yy - r0) ** 2 + (xx - c0) ** 2 <= rad * rad
        for i in range(6):
            rho[i][disk] = 0.4 * rho[i][disk] + 0.6 * CLOUD[i]
        missed.append({"centre_px": [r0, c0], "radius_px": rad, "pixels": int(disk.sum())})
    sat = np.zeros((n, n), bool)
    if cl is not None:
        _apply_clouds(rho, cl, CLOUD)
        if spec["saturate"]:
            sat = cl.cloud & (cl.core > (1.0 if fam != "oli" else 1.4))
    codes = QA_CODES["oli" if fam == "oli" else "tm"]
    qa = np.where(water, codes["water"], codes["clear"]).astype(np.uint16)
    if sm is not None:
        qa[sm] = codes["snow"]
    if cl is not None:
        qa[cl.dilated] = codes["dilated"]
        qa[cl.dilated & water] |= 128
        qa[cl.shadow] = codes["shadow"]
        qa[cl.cloud] = codes["cloud"]
        qa[cl.cirrus] = codes["cirrus_cloud"]
    # Sensor radiometry.
    if fam != "oli":
        roy_ols = harmonization()["bands"]  # Roy et al. 2016 Table 2 OLS: OLI = slope * ETM+ + intercept
        for i, b in enumerate(BANDS):
            slope, icpt = roy_ols[b]
            # the regression was fitted over land; inverted on dark water it gives negative NIR/SWIR (NDVI
            # -0.97 against OLI's -0.2), a sensor break the real record does not have: water is left as OLI
            rho[i] = np.where(water, rho[i], (rho[i] - icpt) / slope)
        layers = {"SR_B1": 0, "SR_B2": 1, "SR_B3": 2, "SR_B4": 3, "SR_B5": 4, "SR_B7": 5}
        sat_bits = {"SR_B1": 0, "SR_B2": 1, "SR_B3": 2}
    else:
        layers = {
            "SR_B1": -1,
            "SR_B2": 0,
            "SR_B3": 1,
            "SR_B4": 2,
            "SR_B5": 3,
            "SR_B6": 4,
            "SR_B7": 5,
        }
        sat_bits = {"SR_B1": 0, "SR_B2": 1, "SR_B3": 2, "SR_B4": 3}
    arrays: dict[str, np.ndarray] = {}
    radsat = np.zeros((n, n), np.uint16)
    for name, i in layers.items():
        r = rho[0] * 0.9 + 0.008 if i < 0 else rho[i]
        r = np.maximum(r + NOISE_SD * rng.standard_normal((n, n), dtype=np.float32), SR_FLOOR)
        dn = np.clip(np.rint((r - SR_OFFSET) / SR_SCALE), 1, SR_SATURATED_DN - 1).astype(np.uint16)
        if name in sat_bits and sat.any():
            dn[sat] = SR_SATURATED_DN
            radsat[sat] |= np.uint16(1 << sat_bits[name])
        arrays[name] = dn
    thermal = opts["thermal"]
    st_name = "ST_B10" if fam == "oli" else "ST_B6"
    if thermal:
        t = _thermal(cls, d, sm)
        if cl is not None:
            t[cl.shadow] -= 3.0
            t[cl.cloud] = (1 - cl.alpha[cl.cloud]) * t[cl.cloud] + cl.alpha[cl.cloud] * (
                252.0 + 8 * math.cos(2 * math.pi * (_doy(d) - 200) / 365.25)
            )
        t += 0.4 * rng.standard_normal((n, n), dtype=np.float32)
        arrays[st_name] = np.clip(np.rint((t - ST_OFFSET) / ST_SCALE), 1, 65535).astype(np.uint16)
    arrays["QA_PIXEL"] = qa
    arrays["QA_RADSAT"] = radsat
    # Geometry: tier-2 mis-registration, or a slightly larger/offset grid.
    grid = model.grid
    if spec["shift"]:
        dr, dc = spec["shift"]
        arrays = {k: _shift(v, dr, dc) for k, v in arrays.items()}
    if spec["pad"]:
        pt, pl, pb, pr = spec["pad"]
        arrays = {k: _pad(v, spec["pad"]) for k, v in arrays.items()}
        t0 = model.grid.transform
        grid = Grid(
            model.grid.crs,
            Affine(RES, 0, t0.c - pl * RES, 0, -RES, t0.f + pt * RES),
            (n + pt + pb, n + pl + pr),
        )
    fill = np.zeros(grid.shape, bool)
    gap_target = None
    if spec["slc_off"]:
        fill, gap_target = _slc_gaps(rng, grid.shape)
        for k, v in arrays.items():
            v[fill] = 1 if k == "QA_PIXEL" else 0
    folder = root / spec["id"]
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for k, v in arrays.items():
        fname = f"{spec['id']}_{k}.TIF"
        nodata = None if k.startswith("QA_") else 0
        _write(folder / fname, v, grid.crs, grid.transform, nodata)
        files.append(fname)
    npx = grid.shape[0] * grid.shape[1]
    qa_f = arrays["QA_PIXEL"]
    for m in missed:  # centres in the pixel coordinates of the written rasters
        if spec["shift"]:
            m["centre_px"] = [
                m["centre_px"][0] + spec["shift"][0],
                m["centre_px"][1] + spec["shift"][1],
            ]
        if spec["pad"]:
            m["centre_px"] = [
                m["centre_px"][0] + spec["pad"][0],
                m["centre_px"][1] + spec["pad"][1],
            ]
    cloud_frac = float(((qa_f & 8) > 0).sum() / npx)
    if opts["mtl"]:
        (folder / f"{spec['id']}_MTL.txt").write_text(_mtl(spec, files, grid, cloud_frac, thermal), encoding="utf-8")
    return {
        "id": spec["id"],
        "product": spec["product"],
        "sensor": {"tm": "TM", "etm": "ETM+", "oli": "OLI"}[fam] if spec["prefix"] != "LC09" else "OLI-2",
        "date": _date_iso(d),
        "tier": spec["tier"],
        "cloud_fraction": round(cloud_frac, 5),
        "shadow_fraction": round(float(((qa_f & 16) > 0).sum() / npx), 5),
        "dilated_fraction": round(float(((qa_f & 2) > 0).sum() / npx), 5),
        "snow_fraction": round(float((((qa_f & 32) > 0) & ((qa_f & 8) == 0)).sum() / npx), 5),
        "fill_fraction": round(float(fill.sum() / npx), 5),
        "slc_off": bool(spec["slc_off"]),
        "slc_gap_target": gap_target,
        "saturated_pixels": int((arrays["QA_RADSAT"] > 0).sum()),
        "shift_px": list(spec["shift"]) if spec["shift"] else None,
        "grid": "offset" if spec["pad"] else "site",
        "pad_px": list(spec["pad"]) if spec["pad"] else None,
        "missed_clouds": missed,
    }


# --------------------------------------------------------------------------------------------------------------
# Sentinel-2 L2A
# --------------------------------------------------------------------------------------------------------------
def _s2_grid(model: DemoSiteModel) -> Grid:
    m = int(math.ceil(model.size * RES / 20.0))
    return Grid(model.grid.crs, Affine(20.0, 0, SITE_WEST, 0, -20.0, SITE_NORTH), (m, m))


def _s2_plan(model: DemoSiteModel, per_year: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    plan = []
    first = max(model.start, 2019)
    k = 0
    for year in range(first, model.end + 1):
        n = max(1, per_year)
        days = sorted({int(rng.integers(int(b[0]), int(b[-1]) + 1)) for b in np.array_split(np.arange(1, 366), n)})
        for doy in days:
            d = dt.date(year, 1, 1) + dt.timedelta(days=doy - 1)
            sat = "S2A" if k % 2 == 0 else "S2B"
            new = d >= S2_OFFSET_FROM
            gen = f"{d:%Y%m%d}T{int(rng.integers(11, 16)):02d}{int(rng.integers(0, 60)):02d}{int(rng.integers(0, 60)):02d}"
            base = "N0400" if new else "N0213"
            name = f"{sat}_MSIL2A_{d:%Y%m%d}T100031_{base}_{S2_ORBIT}_T{S2_TILE}_{gen}.SAFE"
            plan.append(
                {
                    "index": k,
                    "date": d,
                    "sat": sat,
                    "baseline": base,
                    "offset": -1000 if new else 0,
                    "safe": name,
                    "scene": f"T{S2_TILE}_{d:%Y%m%d}T100031",
                    "generated": gen,
                    "cloud": _draw_cloud(rng, d.month),
                    "cirrus": bool(rng.random() < 0.3),
                }
            )
            k += 1
    return plan


def _mtd_xml(spec: dict[str, Any], files: list[str]) -> str:
    d = spec["date"]
    pb = "04.00" if spec["baseline"] == "N0400" else "02.13"
    craft = "Sentinel-2A" if spec["sat"] == "S2A" else "Sentinel-2B"
    gen = dt.datetime.strptime(spec["generated"], "%Y%m%dT%H%M%S")
    images = "\n".join(f"                        <IMAGE_FILE>{f.rsplit('.', 1)[0]}</IMAGE_FILE>" for f in files)
    offsets = ""
    if spec["offset"]:
        band_ids = sorted(catalog().products[S2_PRODUCT].raw["radiometric_offset"]["band_ids"].values())
        rows = "\n".join(f'        <BOA_ADD_OFFSET band_id="{i}">{spec["offset"]}</BOA_ADD_OFFSET>' for i in band_ids)
        offsets = f"            <BOA_ADD_OFFSET_VALUES_LIST>\n{rows}\n      </BOA_ADD_OFFSET_VALUES_LIST>\n"
    return f"""<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<n1:Level-2A_User_Product xmlns:n1="https://psd-14.sentinel2.eo.esa.int/PSD/User_Product_Level-2A.xsd" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="https://psd-14.sentinel2.eo.esa.int/PSD/User_Product_Level-2A.xsd">
    <n1:General_Info>
        <Product_Info>
            <PRODUCT_START_TIME>{d:%Y-%m-%d}T10:00:31.024Z</PRODUCT_START_TIME>
            <PRODUCT_STOP_TIME>{d:%Y-%m-%d}T10:00:31.024Z</PRODUCT_STOP_TIME>
            <PRODUCT_URI>{spec["safe"]}</PRODUCT_URI>
            <PROCESSING_LEVEL>Level-2A</PROCESSING_LEVEL>
            <PRODUCT_TYPE>S2MSI2A</PRODUCT_TYPE>
            <PROCESSING_BASELINE>{pb}</PROCESSING_BASELINE>
            <GENERATION_TIME>{gen:%Y-%m-%dT%H:%M:%S}.000000Z</GENERATION_TIME>
            <PREVIEW_IMAGE_URL>Not applicable</PREVIEW_IMAGE_URL>
            <PREVIEW_GEO_INFO>Not applicable</PREVIEW_GEO_INFO>
            <Datatake datatakeIdentifier="G{spec["sat"]}_{d:%Y%m%d}T100031_000000_N{pb}">
      <SPACECRAFT_NAME>{craft}</SPACECRAFT_NAME>
      <DATATAKE_TYPE>INS-NOBS</DATATAKE_TYPE>
      <DATATAKE_SENSING_START>{d:%Y-%m-%d}T10:00:31.024Z</DATATAKE_SENSING_START>
      <SENSING_ORBIT_NUMBER>{int(S2_ORBIT[1:])}</SENSING_ORBIT_NUMBER>
      <SENSING_ORBIT_DIRECTION>DESCENDING</SENSING_ORBIT_DIRECTION>
    </Datatake>
<Query_Options completeSingleTile="true">
<PRODUCT_FORMAT>SAFE_COMPACT</PRODUCT_FORMAT>
</Query_Options>
<Product_Organisation>
                <Granule_List>
                    <Granule granuleIdentifier="{spec["sat"]}_OPER_MSI_L2A_TL_SYNT_{spec["generated"]}_T{S2_TILE}_N{pb}" imageFormat="GeoTIFF">
{images}
                    </Granule>
                </Granule_List>
</Product_Organisation>
        </Product_Info>
        <Product_Image_Characteristics>
            <Special_Values>
                <SPECIAL_VALUE_TEXT>NODATA</SPECIAL_VALUE_TEXT>
                <SPECIAL_VALUE_INDEX>0</SPECIAL_VALUE_INDEX>
            </Special_Values>
            <Special_Values>
                <SPECIAL_VALUE_TEXT>SATURATED</SPECIAL_VALUE_TEXT>
                <SPECIAL_VALUE_INDEX>65535</SPECIAL_VALUE_INDEX>
            </Special_Values>
            <QUANTIFICATION_VALUES_LIST>
                <BOA_QUANTIFICATION_VALUE unit="none">10000</BOA_QUANTIFICATION_VALUE>
                <AOT_QUANTIFICATION_VALUE unit="none">1000.0</AOT_QUANTIFICATION_VALUE>
                <WVP_QUANTIFICATION_VALUE unit="cm">1000.0</WVP_QUANTIFICATION_VALUE>
            </QUANTIFICATION_VALUES_LIST>
{offsets}        </Product_Image_Characteristics>
    </n1:General_Info>
</n1:Level-2A_User_Product>
"""


def _render_s2(model: DemoSiteModel, spec: dict[str, Any], root: Path, opts: dict[str, Any]) -> dict[str, Any]:
    d = spec["date"]
    rng = _rng(model.seed, 3, spec["index"])
    grid = _s2_grid(model)
    m = grid.shape[0]
    idx = np.minimum(((np.arange(m) + 0.5) * 20.0 / RES).astype(int), model.size - 1)
    rho30, cls30, sm30 = model.surface(d)
    rho = rho30[:, idx][:, :, idx]
    cls = cls30[idx][:, idx]
    sm = sm30[idx][:, idx] if sm30 is not None else None
    ndvi = (rho[3] - rho[2]) / np.maximum(rho[3] + rho[2], 1e-6)
    cl = _clouds(rng, (m, m), spec["cloud"], spec["cirrus"], max(0.75, m / 200.0))
    scl = np.where(ndvi > 0.3, 4, 5).astype(np.uint8)
    scl[cls == WATER] = 6
    if sm is not None:
        scl[sm] = 11
    if cl is not None:
        _apply_clouds(rho, cl, CLOUD)
        scl[cl.shadow] = 3
        scl[cl.cloud] = np.where(cl.alpha[cl.cloud] < 0.8, 8, 9)
        scl[cl.cirrus] = 10
    coeff = HLS_S2_TO_OLI[spec["sat"]]
    s2 = catalog().products[S2_PRODUCT]
    folder = root / spec["safe"]
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for i, b in enumerate(BANDS):
        slope, icpt = coeff[b]
        msi = (rho[i] - icpt) / slope + 0.002 * rng.standard_normal((m, m), dtype=np.float32)
        dn = np.clip(np.rint(msi * 10000.0 - spec["offset"]), 1, 65534).astype(np.uint16)
        fname = f"{spec['scene']}_{s2.band_by_name(b).token}_20m.tif"  # the catalog row's band ids
        _write(folder / fname, dn, grid.crs, grid.transform, 0)
        files.append(fname)
    fname = f"{spec['scene']}_SCL_20m.tif"
    _write(folder / fname, scl, grid.crs, grid.transform, 0)
    files.append(fname)
    (folder / "MTD_MSIL2A.xml").write_text(_mtd_xml(spec, files), encoding="utf-8")
    npx = m * m
    return {
        "id": spec["safe"].removesuffix(".SAFE"),
        "scene": spec["scene"],
        "date": _date_iso(d),
        "spacecraft": spec["sat"],
        "processing_baseline": spec["baseline"],
        "boa_add_offset": spec["offset"],
        "cloud_fraction": round(float(np.isin(scl, (8, 9, 10)).sum() / npx), 5),
        "shadow_fraction": round(float((scl == 3).sum() / npx), 5),
    }


# --------------------------------------------------------------------------------------------------------------
# Coarse products on the MODIS sinusoidal grid
# --------------------------------------------------------------------------------------------------------------
@dataclass
class Coarse:
    """A sinusoidal grid covering the site and the mapping site pixel -> coarse pixel for area averaging."""

    grid: Grid
    tile: str
    pairs_coarse: np.ndarray
    pairs_site: np.ndarray
    counts: np.ndarray

    def mean(self, values: np.ndarray) -> np.ndarray:
        s = np.bincount(self.pairs_coarse, weights=values.ravel()[self.pairs_site], minlength=self.counts.size)
        return (s / self.counts).reshape(self.grid.shape)


def _coarse(model: DemoSiteModel, px: float) -> Coarse:
    sinu = CRS.from_string(SINU_WKT)
    n = model.size
    t = model.grid.transform
    w, s, e, nn = model.grid.bounds
    edge = np.linspace(0, 1, 41)
    xs = np.concatenate([w + (e - w) * edge, np.full(41, e), w + (e - w) * edge, np.full(41, w)])
    ys = np.concatenate([np.full(41, nn), s + (nn - s) * edge, np.full(41, s), s + (nn - s) * edge])
    sx, sy = warp_transform(model.grid.crs, sinu, xs.tolist(), ys.tolist())
    c0 = math.floor((min(sx) - SINU_X0) / px)
    c1 = math.ceil((max(sx) - SINU_X0) / px)
    r0 = math.floor((SINU_Y0 - max(sy)) / px)
    r1 = math.ceil((SINU_Y0 - min(sy)) / px)
    shape = (r1 - r0, c1 - c0)
    ct = Affine(px, 0, SINU_X0 + c0 * px, 0, -px, SINU_Y0 - r0 * px)
    # site pixel centres -> coarse pixel
    rr, cc = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5, indexing="ij")
    ux = (t.c + cc * t.a).ravel()
    uy = (t.f + rr * t.e).ravel()
    qx, qy = warp_transform(model.grid.crs, sinu, ux, uy)
    qc = np.floor((np.asarray(qx) - ct.c) / px).astype(np.int64)
    qr = np.floor((ct.f - np.asarray(qy)) / px).astype(np.int64)
    ok = (qc >= 0) & (qc < shape[1]) & (qr >= 0) & (qr < shape[0])
    pc = (qr * shape[1] + qc)[ok]
    ps = np.flatnonzero(ok)
    counts = np.bincount(pc, minlength=shape[0] * shape[1]).astype(np.float64)
    empty = np.flatnonzero(counts == 0)
    if empty.size:  # coarse pixels beyond the site take the nearest site pixel
        er, ec = np.divmod(empty, shape[1])
        ex, ey = warp_transform(
            sinu,
            model.grid.crs,
            (ct.c + (ec + 0.5) * px).tolist(),
            (ct.f - (er + 0.5) * px).tolist(),
        )
        sc = np.clip(np.floor((np.asarray(ex) - t.c) / t.a), 0, n - 1).astype(np.int64)
        sr = np.clip(np.floor((np.asarray(ey) - t.f) / t.e), 0, n - 1).astype(np.int64)
        pc = np.concatenate([pc, empty])
        ps = np.concatenate([ps, sr * n + sc])
        counts[empty] = 1
    cx, cy = warp_transform(model.grid.crs, sinu, [(w + e) / 2], [(s + nn) / 2])
    h = int((cx[0] - SINU_X0) // SINU_TILE)
    v = int((SINU_Y0 - cy[0]) // SINU_TILE)
    return Coarse(Grid(sinu, ct, shape), f"h{h:02d}v{v:02d}", pc, ps, counts)


VI_PRODUCTS = {
    # name: (first date, first DOY of the 16-day cycle, collection, pixel size, NDVI fill, reliability dtype, fill)
    "MOD13Q1": (dt.date(2000, 2, 18), 1, "061", MODIS_250, -3000, np.int8, -1),
    "MYD13Q1": (dt.date(2002, 7, 4), 9, "061", MODIS_250, -3000, np.int8, -1),
    "VNP13A1": (dt.date(2012, 1, 17), 1, "002", MODIS_500, -15000, np.uint8, 255),
}


def _stamp(rng: np.random.Generator, d: dt.date) -> str:
    p = d + dt.timedelta(days=int(rng.integers(14, 26)))
    if p < dt.date(2021, 6, 1):
        p = dt.date(2021, 6, 1) + dt.timedelta(days=int(rng.integers(0, 300)))
    return f"{p.year}{_doy(p):03d}{int(rng.integers(0, 24)):02d}{int(rng.integers(0, 60)):02d}{int(rng.integers(0, 60)):02d}"


def _render_vi_year(model: DemoSiteModel, task: dict[str, Any], root: Path, opts: dict[str, Any]) -> dict[str, Any]:
    prod, year = task["product"], task["year"]
    first, doy0, coll, px, fill, rdtype, rfill = VI_PRODUCTS[prod]
    coarse: Coarse = opts["coarse250"] if px == MODIS_250 else opts["coarse500"]
    code = {"MOD13Q1": 1, "MYD13Q1": 2, "VNP13A1": 3}[prod]
    rng = _rng(model.seed, 4, code, year)
    shape = coarse.grid.shape
    written = 0
    for doy in range(doy0, 366, 16):
        start = dt.date(year, 1, 1) + dt.timedelta(days=doy - 1)
        if start < first or start.year != year:
            continue
        mid = start + dt.timedelta(days=8)
        rho, _, sm = model.surface(mid, (2, 3))
        red, nir = coarse.mean(rho[0]), coarse.mean(rho[1])
        ndvi = (nir - red) / np.maximum(nir + red, 1e-6) + 0.01 * rng.standard_normal(shape)
        snowf = coarse.mean(sm.astype(np.float32)) if sm is not None else np.zeros(shape)
        p_cloud = _cloud_month_p(mid.month) * 0.35
        cloud = np.zeros(shape, bool)
        cf = float(rng.uniform(0, p_cloud))
        if cf > 0.02:
            f = _smooth(rng, shape, max(shape) / 3)
            cloud = f > np.quantile(f, 1 - cf)
        marginal = (rng.random(shape) < 0.1) & ~cloud
        snow = (snowf > 0.5) & ~cloud
        ndvi = np.where(cloud, ndvi * 0.3, ndvi)
        ndvi = np.where(marginal, ndvi - np.abs(0.05 * rng.standard_normal(shape)), ndvi)
        nd = np.clip(np.rint(ndvi * 10000), -2000, 10000).astype(np.int16)
        if prod == "VNP13A1":
            rel = np.where(rng.random(shape) < 0.7, 0, np.where(rng.random(shape) < 0.6, 1, 2)).astype(np.uint8)
            rel[marginal] = 5
            rel[snow] = 8
            rel[cloud] = 9
        else:
            rel = np.zeros(shape, np.int8)
            rel[marginal] = 1
            rel[snow] = 2
            rel[cloud] = 3
        stem = f"{prod}.A{year}{doy:03d}.{coarse.tile}.{coll}.{_stamp(rng, start)}"
        folder = root / ("viirs" if prod == "VNP13A1" else "modis")
        _write(folder / f"{stem}_NDVI.tif", nd, coarse.grid.crs, coarse.grid.transform, fill)
        _write(
            folder / f"{stem}_pixel_reliability.tif",
            rel.astype(rdtype),
            coarse.grid.crs,
            coarse.grid.transform,
            rfill,
        )
        written += 1
    return {"product": prod, "year": year, "composites": written}


def _snow_winters(model: DemoSiteModel) -> list[int]:
    """Winters (year of January) with MOD10A1 daily files: the last five inside the record."""
    ws = [w for w in range(model.start + 1, model.end + 1) if w >= 2001]
    return ws[-5:]


def _render_mod10_winter(
    model: DemoSiteModel, task: dict[str, Any], root: Path, opts: dict[str, Any]
) -> dict[str, Any]:
    winter = task["winter"]
    coarse: Coarse = opts["coarse500"]
    rng = _rng(model.seed, 6, winter)
    shape = coarse.grid.shape
    d = dt.date(winter - 1, 12, 1)
    stop = dt.date(winter, 3, 31)
    days = 0
    while d <= stop:
        sm = model.snow_mask(d)
        waterf = coarse.mean(model.water(d.year).astype(np.float32))
        snowf = coarse.mean(sm.astype(np.float32)) if sm is not None else np.zeros(shape)
        val = np.where(snowf >= 0.5, np.rint(45 + 45 * snowf), 0).astype(np.uint8)
        val[waterf > 0.5] = 237
        cf = float(rng.uniform(0.6, 1.0)) if rng.random() < 0.45 else float(rng.uniform(0, 0.2))
        if cf > 0.02:
            f = _smooth(rng, shape, max(shape) / 3)
            val[f > np.quantile(f, 1 - cf)] = 250
        stem = f"MOD10A1.A{d.year}{_doy(d):03d}.{coarse.tile}.061.{_stamp(rng, d)}"
        _write(
            root / "modis" / f"{stem}_NDSI_Snow_Cover.tif",
            val,
            coarse.grid.crs,
            coarse.grid.transform,
            255,
        )
        d += dt.timedelta(days=1)
        days += 1
    return {"winter": winter, "days": days}


# --------------------------------------------------------------------------------------------------------------
# Worker plumbing
# --------------------------------------------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _init_worker(state: dict[str, Any]) -> None:
    _WORKER.clear()
    _WORKER.update(state)


def _run_task(task: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    model: DemoSiteModel = _WORKER["model"]
    root: Path = _WORKER["root"]
    opts = _WORKER["opts"]
    kind = task["kind"]
    if kind == "landsat":
        return kind, _render_landsat(model, task["spec"], root / "landsat", opts)
    if kind == "s2":
        return kind, _render_s2(model, task["spec"], root / "sentinel2", opts)
    if kind == "vi":
        return kind, _render_vi_year(model, task, root, opts)
    if kind == "mod10":
        return kind, _render_mod10_winter(model, task, root, opts)
    raise ValueError(kind)


# --------------------------------------------------------------------------------------------------------------
# Climate (ERA5-Land monthly), land cover, withheld references
# --------------------------------------------------------------------------------------------------------------
def _climate(model: DemoSiteModel) -> dict[str, Any]:
    """Monthly site-mean t2m (K) and tp (m/day) from min(start, 1991) to end, with the drought planted."""
    rng = _rng(model.seed, 7)
    y0 = min(model.start, 1991)
    snow_k = -3.0 if model.variant == "snow" else 0.0
    t2m: dict[int, list[float]] = {}
    tp: dict[int, list[float]] = {}
    for y in range(y0, model.end + 1):
        yfac = float(np.exp(rng.normal(0, 0.1)))
        trow, prow = [], []
        for m in range(1, 13):
            t = 281.5 - 10.0 * math.cos(2 * math.pi * (m - 1) / 12) + 0.03 * (y - 1990) + snow_k + rng.normal(0, 0.8)
            p = (0.0019 + 0.0011 * math.exp(-0.5 * ((m - 7) / 1.8) ** 2)) * yfac * float(np.exp(rng.normal(0, 0.25)))
            if y == model.ev.drought_year and 4 <= m <= 9:
                p *= 0.35
                t += 1.8
            trow.append(round(float(t), 3))
            prow.append(round(float(p), 6))
        t2m[y], tp[y] = trow, prow
    annual = {y: float(np.mean(v)) for y, v in tp.items()}
    dy = model.ev.drought_year
    others = [annual[y] for y in annual if y != dy and y >= model.start]
    if others and annual[dy] >= min(others):  # keep the drought year the driest of the record
        f = 0.9 * min(others) / annual[dy]
        tp[dy] = [round(v * f, 6) for v in tp[dy]]
    return {"first_year": y0, "t2m": t2m, "tp": tp}


def _era5_grid(model: DemoSiteModel) -> Grid:
    w, s, e, n = model.grid.bounds
    lon, lat = warp_transform(model.grid.crs, CRS.from_epsg(4326), [w, e, w, e], [s, s, n, n])
    west = math.floor((min(lon) - 0.05) / 0.1) * 0.1 + 0.05
    east = math.ceil((max(lon) - 0.05) / 0.1) * 0.1 + 0.05
    south = math.floor((min(lat) - 0.05) / 0.1) * 0.1 + 0.05
    north = math.ceil((max(lat) - 0.05) / 0.1) * 0.1 + 0.05
    cols = int(round((east - west) / 0.1))
    rows = int(round((north - south) / 0.1))
    return Grid(CRS.from_epsg(4326), Affine(0.1, 0, round(west, 4), 0, -0.1, round(north, 4)), (rows, cols))


def _write_era5(model: DemoSiteModel, clim: dict[str, Any], root: Path) -> int:
    g = _era5_grid(model)
    folder = root / "era5"
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for y, trow in clim["t2m"].items():
        for m in range(1, 13):
            stem = f"ERA5-Land_monthly_{y}{m:02d}"
            _write(
                folder / f"{stem}_t2m.tif",
                np.full(g.shape, trow[m - 1], np.float32),
                g.crs,
                g.transform,
                -9999.0,
            )
            _write(
                folder / f"{stem}_tp.tif",
                np.full(g.shape, clim["tp"][y][m - 1], np.float32),
                g.crs,
                g.transform,
                -9999.0,
            )
            count += 2
    return count


def _lonlat(model: DemoSiteModel, xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    lon, lat = warp_transform(model.grid.crs, CRS.from_epsg(4326), xs, ys)
    return list(lon), list(lat)


def _tile_names(model: DemoSiteModel) -> tuple[str, str]:
    w, s, e, n = model.grid.bounds
    lon, lat = _lonlat(model, [(w + e) / 2], [(s + n) / 2])
    wc = f"N{int(math.floor(lat[0] / 3) * 3):02d}E{int(math.floor(lon[0] / 3) * 3):03d}"
    hansen = f"{int(math.ceil(lat[0] / 10) * 10):02d}N_{int(math.floor(lon[0] / 10) * 10):03d}E"
    return wc, hansen


# --------------------------------------------------------------------------------------------------------------
# Truth
# --------------------------------------------------------------------------------------------------------------
def _region(
    model: DemoSiteModel,
    mask: np.ndarray,
    *,
    kind: str,
    centre: tuple[float, float] | None = None,
    radius: float | None = None,
    box: list[int] | None = None,
    mask_key: str | None = None,
) -> dict[str, Any]:
    n = model.size
    t = model.grid.transform
    rows, cols = np.nonzero(mask)
    if box is None:
        box = (
            [int(rows.min()), int(cols.min()), int(rows.max()) + 1, int(cols.max()) + 1] if rows.size else [0, 0, 0, 0]
        )
    r0, c0, r1, c1 = box
    out: dict[str, Any] = {
        "kind": kind,
        "pixel_box": box,
        "crs_box": [t.c + c0 * RES, t.f - r1 * RES, t.c + c1 * RES, t.f - r0 * RES],
        "pixels": int(mask.sum()),
        "area_km2": round(float(mask.sum()) * RES * RES / 1e6, 6),
        "quadrant": _quadrant(float(rows.mean()) / n, float(cols.mean()) / n) if rows.size else None,
    }
    if centre is not None:
        cr, cc = centre[0] * n, centre[1] * n
        out["centre_px"] = [round(cr, 3), round(cc, 3)]
        out["centre_xy"] = [round(t.c + cc * RES, 3), round(t.f - cr * RES, 3)]
    if radius is not None:
        out["radius_px"] = round(radius * n, 3)
        out["radius_m"] = round(radius * n * RES, 3)
    if mask_key:
        out["mask"] = mask_key
    return out


def _truth(
    model: DemoSiteModel,
    clim: dict[str, Any],
    params: dict[str, Any],
    landsat: list[dict[str, Any]],
    s2: list[dict[str, Any]],
    files: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """truth.json's document and the masks of truth_masks.npz: one section per planted change."""
    lake_zone, urban_zone = model.extra["lake_zone"], model.extra["urban_zone"]
    vegetated = ~(lake_zone | urban_zone | model.clear_mask | model.burn1_mask | model.burn2_mask)
    regions = _truth_regions(model, vegetated)
    wc_tile, hansen_tile = _tile_names(model)
    doc: dict[str, Any] = {
        "schema_version": "1",
        "generator": {"name": "reviewer.record.synthetic", "version": GENERATOR_VERSION, **params},
        "site_id": params["site_id"],
        "grid": {
            "crs": f"EPSG:{SITE_EPSG}",
            "transform": list(model.grid.transform)[:6],
            "shape": list(model.grid.shape),
            "resolution_m": RES,
            "pixel_area_km2": RES * RES / 1e6,
            "bbox": list(model.grid.bounds),
        },
        "masks_file": "truth_masks.npz",
        "radiometry": _truth_radiometry(),
        "regions": regions,
        "changes": {
            "lake": _truth_lake(model, regions),
            "forest_clearing": _truth_clearing(model, regions),
            **_truth_burns(model),
            "built_up": _truth_built_up(model, regions),
            "drought": _truth_drought(model, vegetated, clim),
            "crop": _truth_crop(model, regions),
            "stable": _truth_stable(model),
            "snow": _truth_snow(model, files),
        },
        "climate": _truth_climate(clim),
        "landsat": _truth_landsat(landsat),
        "sentinel2": s2,
        "files": files,
        "withheld": {
            "hansen_lossyear": f"reference/Hansen_GFC-2024-v1.12_lossyear_{hansen_tile}.tif"
            if files.get("reference")
            else None,
            "worldcover_tile": wc_tile,
        },
    }
    masks = {
        "lake_rank": model.lake_rank,
        "urban_rank": model.urban_rank,
        "clearing": model.clear_mask,
        "burn_1": model.burn1_mask,
        "burn_2": model.burn2_mask,
        "cropland": model.crop_mask,
        "stable": model.stable_mask,
        "vegetated_stable": vegetated,
        "lake_zone": lake_zone,
        "urban_zone": urban_zone,
    }
    return doc, masks


def _km2(px: int) -> float:
    return round(px * (RES * RES / 1e6), 6)


def _years(model: DemoSiteModel) -> list[int]:
    return list(range(model.start, model.end + 1))


def _annual_precip(clim: dict[str, Any]) -> tuple[dict[int, float], float | None]:
    """Mean precipitation per year (m/day) and its 1991-2020 mean (None when the record has none of those years)."""
    tp_annual = {y: round(float(np.mean(v)), 7) for y, v in clim["tp"].items()}
    base_years = [y for y in range(1991, 2021) if y in tp_annual]
    base = float(np.mean([tp_annual[y] for y in base_years])) if base_years else None
    return tp_annual, base


def _truth_climate(clim: dict[str, Any]) -> dict[str, Any]:
    """truth.json's climate section: the ERA5-Land-like series the record's monthly files were written from."""
    tp_annual, base = _annual_precip(clim)
    tp_gs = {y: round(float(np.mean(v[3:9])), 7) for y, v in clim["tp"].items()}
    t_annual = {y: round(float(np.mean(v)), 3) for y, v in clim["t2m"].items()}
    return {
        "first_year": clim["first_year"],
        "tp_annual_m_per_day": {str(y): v for y, v in tp_annual.items()},
        "tp_growing_season_m_per_day": {str(y): v for y, v in tp_gs.items()},
        "tp_1991_2020_mean_m_per_day": round(base, 7) if base is not None else None,
        "t2m_annual_K": {str(y): v for y, v in t_annual.items()},
        "t2m_design_trend_K_per_year": 0.03,
    }


def _truth_regions(model: DemoSiteModel, vegetated: np.ndarray) -> dict[str, Any]:
    """The named regions the questions and the changes refer to."""
    lake_zone, urban_zone, boxes = model.extra["lake_zone"], model.extra["urban_zone"], model.extra["boxes"]
    return {
        "lake": _region(model, lake_zone, kind="circle", centre=LAKE_C, radius=LAKE_R, mask_key="lake_zone"),
        "urban": _region(model, urban_zone, kind="circle", centre=URBAN_C, radius=URBAN_R, mask_key="urban_zone"),
        "clearing": _region(model, model.clear_mask, kind="box", box=boxes["clearing"], mask_key="clearing"),
        "burn_1": _region(
            model,
            model.burn1_mask,
            kind="circle",
            centre=BURN1_C,
            radius=BURN1_R,
            mask_key="burn_1",
        ),
        "burn_2": _region(
            model,
            model.burn2_mask,
            kind="circle",
            centre=BURN2_C,
            radius=BURN2_R,
            mask_key="burn_2",
        ),
        "cropland": _region(model, model.crop_mask, kind="box", box=boxes["cropland"], mask_key="cropland"),
        "stable": _region(model, model.stable_mask, kind="box", box=boxes["stable"], mask_key="stable"),
        "vegetated_stable": _region(model, vegetated, kind="mask", mask_key="vegetated_stable"),
    }


def _truth_radiometry() -> dict[str, Any]:
    """How the record's values were made from the surface model (the spectra, the sensor conversions)."""
    return {
        "reference": "Landsat 8 OLI surface reflectance",
        "bands": list(BANDS),
        "landsat_dn": "DN = round((max(rho + noise, 0.0005) + 0.2) / 2.75e-05), clipped to 1..65454; 65455 where QA_RADSAT flags saturation",
        "etm_tm_from_oli": "rho_etm = (rho_oli - intercept) / slope (inverse of Roy et al. 2016 Table 2 OLS) on land, exact; water pixels keep the OLI reflectance (the land regression inverted on dark water would go negative); every value floored at 0.0005",
        "reflectance_floor": SR_FLOOR,
        "roy2016_ols_etm_to_oli": {b: {"slope": s, "intercept": i} for b, (s, i) in harmonization()["bands"].items()},
        "msi_from_oli": "rho_msi = (rho_oli - intercept) / slope (inverse of the HLS S2 -> OLI adjustment)",
        "hls_s2_to_oli": {
            u: {b: {"slope": s, "intercept": i} for b, (s, i) in v.items()} for u, v in HLS_S2_TO_OLI.items()
        },
        "noise_sd": NOISE_SD,
        "spectra_oli": {
            "green_season": {CLASS_NAMES[c]: GREEN[c].round(4).tolist() for c in range(7)},
            "dormant": {CLASS_NAMES[c]: DORMANT[c].round(4).tolist() for c in range(7)},
            "burn": BURN.round(4).tolist(),
            "snow": SNOW.round(4).tolist(),
            "cloud": CLOUD.round(4).tolist(),
        },
    }


def _truth_lake(model: DemoSiteModel, regions: dict[str, Any]) -> dict[str, Any]:
    """Planted change: the lake grows (or shrinks) linearly between two years."""
    ev, pa = model.ev, RES * RES / 1e6
    lake_px = {y: int(model.water(y).sum()) for y in _years(model)}
    lake_span = [y for y in _years(model) if ev.lake_a <= y <= ev.lake_b]
    return {
        "region": "lake",
        "quadrant": regions["lake"]["quadrant"],
        "start_year": ev.lake_a,
        "end_year": ev.lake_b,
        "pixels_start": ev.lake_n0,
        "pixels_end": ev.lake_n1,
        "rule": "water in year y = lake_rank < pixels(y); pixels(y) = round(p0 + (p1 - p0) * clip((y - a)/(b - a), 0, 1))",
        "pixels_by_year": {str(y): v for y, v in lake_px.items()},
        "area_km2_by_year": {str(y): _km2(v) for y, v in lake_px.items()},
        "trend_km2_per_year": round(_ols_slope(lake_span, [lake_px[y] * pa for y in lake_span]), 6),
        "design_trend_km2_per_year": round((ev.lake_n1 - ev.lake_n0) * pa / max(1, ev.lake_b - ev.lake_a), 6),
    }


def _truth_clearing(model: DemoSiteModel, regions: dict[str, Any]) -> dict[str, Any]:
    """Planted change: a forest clearing on one date, bare soil then grassland."""
    ev = model.ev
    clear_px = int(model.clear_mask.sum())
    return {
        "region": "clearing",
        "quadrant": regions["clearing"]["quadrant"],
        "year": ev.clear_date.year,
        "date": _date_iso(ev.clear_date),
        "pixels": clear_px,
        "area_km2": _km2(clear_px),
        "after": "bare soil until 1 April two years later, then grassland",
        "hansen_lossyear_value": ev.clear_date.year - 2000 if 2001 <= ev.clear_date.year <= 2024 else None,
    }


def _truth_burns(model: DemoSiteModel) -> dict[str, Any]:
    """Planted change: two shrubland burns, each recovering over some years; and the larger one's year."""
    ev = model.ev
    burns = [
        _truth_burn(model, model.burn1_mask, ev.burn1_date, ev.burn1_recovery, "burn_1"),
        _truth_burn(model, model.burn2_mask, ev.burn2_date, ev.burn2_recovery, "burn_2"),
    ]
    largest = max(burns, key=lambda b: b["pixels"])
    return {"burns": burns, "largest_burn_year": largest["year"]}


def _truth_burn(model: DemoSiteModel, mask: np.ndarray, date: dt.date, nrec: int, key: str) -> dict[str, Any]:
    ndvi_at = {}
    for y in range(max(model.start, date.year - 1), min(model.end, date.year + nrec + 1) + 1):
        dd = dt.date(y, date.month, min(date.day, 28))
        ndvi_at[str(y)] = round(float(model.ndvi(dd)[mask].mean()), 4)
    after = date + dt.timedelta(days=10)
    return {
        "region": key,
        "date": _date_iso(date),
        "year": date.year,
        "pixels": int(mask.sum()),
        "area_km2": _km2(int(mask.sum())),
        "quadrant": _region(model, mask, kind="mask")["quadrant"],
        "land_cover_before": "shrubland",
        "recovery_years": nrec,
        "recovered_year": date.year + nrec,
        "pre_fire_ndvi": round(float(model.ndvi(date - dt.timedelta(days=5))[mask].mean()), 4),
        "post_fire_ndvi": round(float(model.ndvi(after)[mask].mean()), 4),
        "post_fire_nbr": round(float(np.mean([(BURN[3] - BURN[5]) / (BURN[3] + BURN[5])])), 4),
        "ndvi_on_fire_day_by_year": ndvi_at,
    }


def _truth_built_up(model: DemoSiteModel, regions: dict[str, Any]) -> dict[str, Any]:
    """Planted change: the town grows between two years."""
    ev, pa = model.ev, RES * RES / 1e6
    urban_px = {y: int(model.built(y).sum()) for y in _years(model)}
    urban_span = [y for y in _years(model) if ev.urban_a <= y <= ev.urban_b]
    return {
        "region": "urban",
        "quadrant": regions["urban"]["quadrant"],
        "start_year": ev.urban_a,
        "end_year": ev.urban_b,
        "pixels_by_year": {str(y): v for y, v in urban_px.items()},
        "area_km2_by_year": {str(y): _km2(v) for y, v in urban_px.items()},
        "trend_km2_per_year": round(_ols_slope(urban_span, [urban_px[y] * pa for y in urban_span]), 6),
    }


def _truth_drought(model: DemoSiteModel, vegetated: np.ndarray, clim: dict[str, Any]) -> dict[str, Any]:
    """Planted change: a drought year, the lowest growing-season greenness over the stable vegetation, with
    its precipitation against the 1991-2020 mean."""
    ev = model.ev
    green: dict[int, float] = {}
    for y in _years(model):
        vals = [float(model.ndvi(dt.date(y, m, 15))[vegetated].mean()) for m in GROWING_MONTHS]
        green[y] = round(float(np.mean(vals)), 5)
    lowest = min(green, key=green.get)
    if lowest != ev.drought_year:
        logger.warning("drought year %s is not the lowest-greenness year (%s)", ev.drought_year, lowest)
    tp_annual, base = _annual_precip(clim)
    return {
        "year": ev.drought_year,
        "growing_season_months": list(GROWING_MONTHS),
        "greenness_region": "vegetated_stable",
        "greenness_by_year": {str(y): v for y, v in green.items()},
        "lowest_greenness_year": lowest,
        "precip_m_per_day": tp_annual[ev.drought_year],
        "precip_1991_2020_mean_m_per_day": round(base, 7) if base is not None else None,
        "precip_below_1991_2020_mean": bool(base is not None and tp_annual[ev.drought_year] < base),
    }


def _truth_crop(model: DemoSiteModel, regions: dict[str, Any]) -> dict[str, Any]:
    """Planted change: the cropland's phenology peak month, read in a normal (non-drought) year."""
    ev = model.ev
    ref_year = next((y for y in range(model.end, model.start - 1, -1) if y != ev.drought_year), model.end)
    crop_monthly = {
        str(m): round(float(model.ndvi(dt.date(ref_year, m, 15))[model.crop_mask].mean()), 4) for m in range(1, 13)
    }
    return {
        "region": "cropland",
        "quadrant": regions["cropland"]["quadrant"],
        "peak_month": ev.crop_peak_month,
        "peak_doy": _doy(dt.date(2001, ev.crop_peak_month, 15)),
        "reference_year": ref_year,
        "ndvi_by_month": crop_monthly,
    }


def _truth_stable(model: DemoSiteModel) -> dict[str, Any]:
    """The control: a region with no planted land-cover change."""
    stable_cls = model.base[model.stable_mask]
    return {
        "region": "stable",
        "quadrant": "centre",
        "land_cover": {CLASS_NAMES[c]: int((stable_cls == c).sum()) for c in np.unique(stable_cls)},
        "note": "no planted land-cover change; only phenology, drought and weather",
    }


def _truth_snow(model: DemoSiteModel, files: dict[str, Any]) -> dict[str, Any]:
    """Planted change: the snow season's length per winter (the year of January), mean over land."""
    ev = model.ev
    winters = list(range(model.start + 1, model.end + 1))
    land = ~model.extra["lake_zone"]
    snow_days = {}
    for w_ in winters:
        h = ev.snow_half.get(w_, 0.0) + 12.0 * (model.elev - 0.5) if ev.snow_half.get(w_, 0.0) > 0 else None
        days = np.where(h > 0, 2 * np.ceil(h) - 1, 0) if h is not None else np.zeros_like(model.elev)
        snow_days[w_] = round(float(days[land].mean()), 3)
    return {
        "winter_is_year_of": "January",
        "season_centre": "01-20",
        "half_length_days_by_winter": {str(w): round(ev.snow_half.get(w, 0.0), 3) for w in winters},
        "snow_days_by_winter": {str(w): v for w, v in snow_days.items()},
        "trend_days_per_year": round(_ols_slope(winters, [snow_days[w] for w in winters]), 4),
        "mod10a1_winters": _snow_winters(model) if files.get("mod10a1") else [],
    }


def _truth_landsat(landsat: list[dict[str, Any]]) -> dict[str, Any]:
    """The Landsat scenes written, and which of them carry a planted record problem."""
    return {
        "path_row": f"{WRS_PATH:03d}{WRS_ROW:03d}",
        "scenes": landsat,
        "t2_scenes": [s["id"] for s in landsat if s["tier"] == "T2"],
        "offset_grid_scenes": [s["id"] for s in landsat if s["grid"] == "offset"],
        "missed_cloud_scenes": [s["id"] for s in landsat if s["missed_clouds"]],
        "clear_scenes": [
            s["id"]
            for s in landsat
            if s["cloud_fraction"] == 0
            and s["shadow_fraction"] == 0
            and s["dilated_fraction"] == 0
            and s["fill_fraction"] == 0
            and not s["missed_clouds"]
            and s["tier"] == "T1"
            and s["grid"] == "site"
            and s["snow_fraction"] == 0
        ],
    }


# --------------------------------------------------------------------------------------------------------------
# The site folder
# --------------------------------------------------------------------------------------------------------------
_OUR_DIRS = ("landsat", "sentinel2", "modis", "viirs", "era5", "landcover", "reference")
_OUR_FILES = ("site.json", "boundary.geojson", "truth.json", "truth_masks.npz")


def _prepare(out: Path) -> None:
    if out.exists():
        if not out.is_dir():
            raise OutputError("exists and is not a folder", path=out)
        entries = list(out.iterdir())
        ours = (out / "truth.json").is_file() and all(
            e.name in _OUR_DIRS + _OUR_FILES or e.name.startswith(".") for e in entries
        )
        if entries and not ours:
            raise OutputError("is not empty and is not a demo site: refusing to overwrite it", path=out)
        for name in _OUR_DIRS:
            if (out / name).is_dir():
                shutil.rmtree(out / name)
        for name in _OUR_FILES:
            (out / name).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)


def _boundary(model: DemoSiteModel) -> dict[str, Any]:
    w, s, e, n = model.grid.bounds
    inset = 3 * RES
    w, s, e, n = w + inset, s + inset, e - inset, n - inset
    k = 8
    xs = [w + (e - w) * i / k for i in range(k)] + [e] * k + [e - (e - w) * i / k for i in range(k)] + [w] * k
    ys = [n] * k + [n - (n - s) * i / k for i in range(k)] + [s] * k + [s + (n - s) * i / k for i in range(k)]
    lon, lat = _lonlat(model, xs, ys)
    ring = [[round(a, 7), round(b, 7)] for a, b in zip(lon, lat, strict=True)]
    ring.append(ring[0])
    return {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"name": "demo site boundary"},
                "geometry": {"type": "Polygon", "coordinates": [ring]},
            }
        ],
    }


def _workers(requested: int | None, cost: float) -> int:
    if requested is not None:
        return max(1, int(requested))
    if cost < 2.0e7:  # small sites: process start-up costs more than it saves
        return 1
    return max(1, min(os.cpu_count() or 1, 4))


@dataclass(frozen=True)
class DemoSettings:
    """The settings of a demo site: the same settings give byte-identical files (whatever `workers` is).

    `landsat_only=True` (or extras=False with modis=sentinel2=False) writes only the Landsat scenes, site.json
    and truth; `thermal=False` skips the ST bands; `mtl=False` the MTL files; `workers` (None: chosen from the
    work) only sets how many processes write."""

    seed: int = 0
    size: int = 200
    start: int = 1984
    end: int = 2024
    scenes_per_year: int = 6
    variant: str = "core"
    modis: bool = True
    sentinel2: bool = True
    landsat_only: bool = False
    thermal: bool = True
    era5: bool = True
    landcover: bool = True
    reference: bool = True
    extras: bool = True
    mtl: bool = True
    workers: int | None = None

    def resolved(self) -> DemoSettings:
        """The settings with what landsat_only and extras=False imply switched off, and at least one scene a year."""
        s = self
        if s.landsat_only:
            s = dataclasses.replace(s, modis=False, sentinel2=False, extras=False)
        if not s.extras:
            s = dataclasses.replace(s, era5=False, landcover=False, reference=False)
        return dataclasses.replace(s, scenes_per_year=max(1, int(s.scenes_per_year)))

    @property
    def site_id(self) -> str:
        return f"demo-{self.variant}-seed{self.seed}"


def make_demo_site(
    out_dir: str | Path,
    settings: DemoSettings | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> Path:
    """Write a synthetic demo site (raw record + truth.json) to out_dir and return its path.

    Landsat C2 L2 scenes (scenes_per_year per active satellite), Sentinel-2 L2A from 2019 (sentinel2), MODIS and
    VIIRS NDVI composites (modis; plus MOD10A1 daily snow for variant "snow"), ERA5-Land monthly, ESA WorldCover
    2021 and the withheld Hansen loss year under reference/. `settings` (default DemoSettings()) with any of
    its fields given as keywords on top: make_demo_site(out, seed=3, size=48) (an unknown keyword is a
    TypeError). Deterministic for a seed: the same settings give byte-identical files, whatever `workers` is.
    """
    t_start = dt.datetime.now()
    out = Path(out_dir)
    s = dataclasses.replace(settings or DemoSettings(), **overrides).resolved()
    report = progress or (lambda f, m: None)
    report(0.0, "building the surface model")
    model = build_model(seed=s.seed, size=s.size, start=s.start, end=s.end, variant=s.variant)
    _prepare(out)
    plan = _landsat_plan(model, s.scenes_per_year, s.seed)
    s2_plan = _s2_plan(model, s.scenes_per_year, _rng(s.seed, 11)) if s.sentinel2 and s.end >= 2019 else []
    tasks, opts = _demo_tasks(model, s, plan, s2_plan)
    for d in ("landsat",) + (("sentinel2",) if s2_plan else ()) + (("modis", "viirs") if s.modis else ()):
        (out / d).mkdir(parents=True, exist_ok=True)
    cost = len(plan) * s.size * s.size * (12 if s.thermal else 10) + len(tasks) * 2e4
    nworkers = _workers(s.workers, cost)
    logger.info(
        "demo site %s: %d Landsat scenes, %d S2 products, %d other tasks, %d worker(s)",
        out,
        len(plan),
        len(s2_plan),
        len(tasks) - len(plan) - len(s2_plan),
        nworkers,
    )
    report(0.02, f"writing {len(plan)} Landsat scenes")
    results = _run_tasks(tasks, {"model": model, "root": out, "opts": opts}, nworkers, report)

    report(0.93, "writing climate, land cover and references")
    clim = _climate(model)
    files = _write_products(model, clim, out, s, results, len(plan), len(s2_plan))
    _write_site_doc(model, out, s)

    report(0.95, "writing truth.json")
    params = {
        "seed": s.seed,
        "size": s.size,
        "start": s.start,
        "end": s.end,
        "scenes_per_year": s.scenes_per_year,
        "variant": s.variant,
        "site_id": s.site_id,
    }
    landsat_info = sorted(results["landsat"], key=lambda r: (r["date"], r["id"]))
    s2_info = sorted(results["s2"], key=lambda r: (r["date"], r["id"]))
    doc, masks = _truth(model, clim, params, landsat_info, s2_info, files)
    from reviewer.schemas import validate

    validate(doc, "truth")
    buf = out / "truth_masks.npz"
    with open(buf, "wb") as fh:  # uncompressed savez, keys in fixed order: byte-identical for a seed
        np.savez(fh, **{k: masks[k] for k in sorted(masks)})
    (out / "truth.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    report(1.0, "demo site ready")
    logger.info("demo site %s written in %.1f s", out, (dt.datetime.now() - t_start).total_seconds())
    return out


def _demo_tasks(
    model: DemoSiteModel, s: DemoSettings, plan: list[Any], s2_plan: list[Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The writing tasks (Landsat scenes, S2 products, MODIS/VIIRS years, MOD10A1 winters) in a fixed order,
    and the options every worker shares (the coarse grids computed once)."""
    opts: dict[str, Any] = {"thermal": s.thermal, "mtl": s.mtl}
    tasks: list[dict[str, Any]] = [{"kind": "landsat", "spec": p} for p in plan]
    tasks += [{"kind": "s2", "spec": p} for p in s2_plan]
    if s.modis:
        opts["coarse250"] = _coarse(model, MODIS_250)
        opts["coarse500"] = _coarse(model, MODIS_500)
        for prod, (first, *_rest) in VI_PRODUCTS.items():
            for y in range(max(s.start, first.year), s.end + 1):
                tasks.append({"kind": "vi", "product": prod, "year": y})
        if s.variant == "snow" and s.extras:
            tasks += [{"kind": "mod10", "winter": w} for w in _snow_winters(model)]
    return tasks, opts


def _run_tasks(
    tasks: list[dict[str, Any]], state: dict[str, Any], nworkers: int, report: Progress
) -> dict[str, list[dict[str, Any]]]:
    """Run the writing tasks in this process or in a process pool; each task's info by kind, in finishing
    order (the caller sorts what it keeps)."""
    results: dict[str, list[dict[str, Any]]] = {"landsat": [], "s2": [], "vi": [], "mod10": []}
    total = len(tasks)
    done = 0

    def finished(kind: str, info: dict[str, Any]) -> None:
        nonlocal done
        results[kind].append(info)
        done += 1
        if done % 10 == 0 or done == total:
            report(0.02 + 0.9 * done / total, f"{done}/{total} products written")

    if nworkers == 1 or total < 2:
        _init_worker(state)
        try:
            for task in tasks:
                finished(*_run_task(task))
        finally:
            _WORKER.clear()
        return results
    # fork is cheapest, but not under a GUI or other threads (a forked child could inherit a held lock).
    gui = any(m in sys.modules for m in ("PySide6.QtCore", "PyQt5.QtCore", "PyQt6.QtCore"))
    method = "fork" if not gui and threading.active_count() == 1 and "fork" in mp.get_all_start_methods() else "spawn"
    ctx = mp.get_context(method)
    if method == "fork":
        _init_worker(state)  # inherited by the forked workers: nothing to pickle
        pool = ProcessPoolExecutor(nworkers, mp_context=ctx)
    else:
        pool = ProcessPoolExecutor(nworkers, mp_context=ctx, initializer=_init_worker, initargs=(state,))
    try:
        with pool:
            futures = [pool.submit(_run_task, t) for t in tasks]
            for fut in as_completed(futures):
                finished(*fut.result())
    finally:
        _WORKER.clear()
    return results


def _write_products(
    model: DemoSiteModel,
    clim: dict[str, Any],
    out: Path,
    s: DemoSettings,
    results: dict[str, list[dict[str, Any]]],
    n_landsat: int,
    n_s2: int,
) -> dict[str, Any]:
    """ERA5-Land, WorldCover and the withheld Hansen loss year (as the settings ask), and truth's files section."""
    files: dict[str, Any] = {
        "landsat_scenes": n_landsat,
        "sentinel2_products": n_s2,
        "modis_vi_composites": sum(r["composites"] for r in results["vi"] if r["product"] != "VNP13A1"),
        "viirs_vi_composites": sum(r["composites"] for r in results["vi"] if r["product"] == "VNP13A1"),
        "mod10a1": sum(r["days"] for r in results["mod10"]),
        "era5": 0,
        "landcover": None,
        "reference": None,
    }
    if s.era5:
        files["era5"] = _write_era5(model, clim, out)
    wc_tile, hansen_tile = _tile_names(model)
    if s.landcover:
        (out / "landcover").mkdir(exist_ok=True)
        wc = WORLDCOVER[model.classes(dt.date(2021, 7, 1))]
        name = f"landcover/ESA_WorldCover_10m_2021_v200_{wc_tile}_Map.tif"
        _write(out / name, wc, model.grid.crs, model.grid.transform, 0)
        files["landcover"] = name
    if s.reference:
        (out / "reference").mkdir(exist_ok=True)
        loss = np.zeros(model.grid.shape, np.uint8)
        cy = model.ev.clear_date.year
        if 2001 <= cy <= 2024:
            loss[model.clear_mask] = cy - 2000
        name = f"reference/Hansen_GFC-2024-v1.12_lossyear_{hansen_tile}.tif"
        _write(out / name, loss, model.grid.crs, model.grid.transform, None)
        files["reference"] = name
    return files


def _write_site_doc(model: DemoSiteModel, out: Path, s: DemoSettings) -> None:
    """site.json (validated against its schema) and boundary.geojson."""
    site_doc = {
        "id": s.site_id,
        "name": f"Synthetic demo site ({s.variant}, seed {s.seed})",
        "kind": "core",
        "theme": "snow" if s.variant == "snow" else "water",
        "role": "famous",
        "bbox": [float(v) for v in model.grid.bounds],
        "crs": f"EPSG:{SITE_EPSG}",
        "boundary": "boundary.geojson",
        "resolution": RES,
        "shape": [s.size, s.size],
    }
    try:
        from reviewer.schemas import validate

        validate(site_doc, "site")
    except FileNotFoundError:  # pragma: no cover - schema not present
        pass
    (out / "boundary.geojson").write_text(json.dumps(_boundary(model), indent=1) + "\n", encoding="utf-8")
    (out / "site.json").write_text(json.dumps(site_doc, indent=2) + "\n", encoding="utf-8")
