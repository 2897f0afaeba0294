"""Climate (ERA5-Land monthly), land cover (ESA WorldCover) and withheld references (Hansen loss year) of the synthetic demo site."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from affine import Affine
from rasterio.crs import CRS
from rasterio.warp import transform as warp_transform

from reviewer.record.synthetic.common import _rng, _write
from reviewer.record.synthetic.model import DemoSiteModel, Grid


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
