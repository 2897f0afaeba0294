"""Climate (ERA5-Land monthly), land cover (ESA WorldCover) and withheld references (Hansen loss year) of the synthetic demo site."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import numpy as np
from affine import Affine
from rasterio.crs import CRS
from rasterio.warp import transform as warp_transform

from reviewer.record.synthetic.common import _rng
from reviewer.record.synthetic.formats import write_era5_nc
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


#: the CDS download's file name (any name: the scan recognises the file by its variables and time axis)
ERA5_FILE = "era5/reanalysis-era5-land-monthly-means_t2m_tp.nc"


def _write_era5(model: DemoSiteModel, clim: dict[str, Any], root: Path) -> int:
    """ERA5-Land monthly means as the CDS delivers them: one netCDF file with every month of t2m and tp;
    returns the number of (month, variable) layers."""
    g = _era5_grid(model)
    # at least two grid points each way (a CDS area download includes both edges), since a netCDF reader
    # derives the grid spacing from the coordinates: one latitude alone gives no geotransform
    g = Grid(g.crs, g.transform, (max(2, g.shape[0]), max(2, g.shape[1])))
    (root / "era5").mkdir(parents=True, exist_ok=True)
    years = sorted(clim["t2m"])
    months = [dt.date(y, m, 1) for y in years for m in range(1, 13)]
    cube = {
        "t2m": np.array([v for y in years for v in clim["t2m"][y]], np.float32),
        "tp": np.array([v for y in years for v in clim["tp"][y]], np.float32),
    }
    attrs = {
        "t2m": {"long_name": "2 metre temperature", "units": "K", "GRIB_paramId": 167},
        "tp": {"long_name": "Total precipitation", "units": "m", "GRIB_paramId": 228},
    }
    variables = {k: (np.broadcast_to(v[:, None, None], (len(months), *g.shape)), attrs[k]) for k, v in cube.items()}
    write_era5_nc(root / ERA5_FILE, g, months, variables)
    return 2 * len(months)


def _lonlat(model: DemoSiteModel, xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    lon, lat = warp_transform(model.grid.crs, CRS.from_epsg(4326), xs, ys)
    return list(lon), list(lat)


def _tile_names(model: DemoSiteModel) -> tuple[str, str]:
    w, s, e, n = model.grid.bounds
    lon, lat = _lonlat(model, [(w + e) / 2], [(s + n) / 2])
    wc = f"N{int(math.floor(lat[0] / 3) * 3):02d}E{int(math.floor(lon[0] / 3) * 3):03d}"
    hansen = f"{int(math.ceil(lat[0] / 10) * 10):02d}N_{int(math.floor(lon[0] / 10) * 10):03d}E"
    return wc, hansen
