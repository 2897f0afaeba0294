"""Constants shared by every product of the synthetic demo site (grid, sensors, radiometry, QA codes) and small helpers."""

from __future__ import annotations

import datetime as dt
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import rasterio
import tifffile
from affine import Affine
from rasterio.crs import CRS
from scipy import ndimage

from reviewer.record.catalog import catalog
from reviewer.record.stack import harmonization
from reviewer.record.synthetic_version import GENERATOR_VERSION  # noqa: F401 - re-exported by the package

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

#: HLS v1.4 bandpass adjustment: OLI_like = slope * MSI + intercept (reflectance), harmonization.json's
#: hls_s2_to_oli (with its source), as {spacecraft: {band: (slope, intercept)}}
HLS_S2_TO_OLI = {
    sc: {band: (float(s), float(i)) for band, (s, i) in bands.items()}
    for sc, bands in harmonization()["hls_s2_to_oli"]["spacecraft"].items()
}
S2_PRODUCT = "sentinel2_msi_l2a"
#: The Sentinel-2 radiometric offset the demo writes, from the catalogue row the reader uses: DN per unit
#: reflectance, and from which acquisition date the (baseline 04.00) BOA offset applies and what it is
_S2_RULE = catalog().products[S2_PRODUCT].raw["radiometric_offset"]
S2_QUANTIFICATION = float(_S2_RULE["quantification"])
S2_OFFSET_FROM = dt.date.fromisoformat(_S2_RULE["by_date"][-1]["from"])
S2_NEW_OFFSET = int(_S2_RULE["by_date"][-1]["offset"])
#: Sentinel-2 products from this date are written in the Element84 / AWS COG layout with a STAC item (the
#: earlier ones as SAFE folders), so the demo exercises both readers
S2_COG_FROM = dt.date(2023, 1, 1)

#: Landsat C2 L2 scaling as the catalogue states it (every Landsat row has the same; test_pinned_facts pins them)
SR_SCALE, SR_OFFSET = (lambda b: (b.scale, b.offset))(catalog().products["landsat8_oli_c2l2"].bands["SR_B4"])
ST_SCALE, ST_OFFSET = (lambda b: (b.scale, b.offset))(catalog().products["landsat8_oli_c2l2"].bands["ST_B10"])
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
