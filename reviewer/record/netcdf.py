"""ERA5-Land monthly means as the CDS delivers them: one netCDF file (classic with int16 packing, or
netCDF4) holding many months and variables (t2m in K, tp in m per day) on a 0.1 degree lon/lat grid, read
through GDAL's netCDF driver (in the rasterio wheels). Each month is one scene; the file is recognised by
its content (its variables and time axis, products.json containers), since CDS file names are arbitrary.

Packing (scale_factor / add_offset / _FillValue) is the file's encoding, not a product scale: it is undone
here and the read gives physical values with NaN at fill.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np

from reviewer.record.reader_errors import FileFault

_UNITS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}


def _open(file: str, var: str | None = None):
    import rasterio

    return rasterio.open(f'netcdf:"{file}":{var}' if var else file)


@lru_cache(maxsize=256)
def variables(file: str, mtime_ns: int) -> tuple[str, ...]:
    """The data variables of a netCDF file (GDAL lists them as subdatasets; one variable opens directly)."""
    import rasterio

    with rasterio.Env(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _open(file) as src:
            if src.subdatasets:
                return tuple(s.rsplit(":", 1)[-1] for s in src.subdatasets)
            name = src.tags(1).get("NETCDF_VARNAME") if src.count else None
            return (name,) if name else ()


def _times(tags: dict[str, str], names: list[str]) -> tuple[str, list[dt.date]] | None:
    for name in names:
        values = tags.get(f"NETCDF_DIM_{name}_VALUES")
        units = tags.get(f"{name}#units", "")
        m = re.match(r"(\w+) since (\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?", units)
        if values is None or not m or m.group(1) not in _UNITS:
            continue
        epoch = dt.datetime(*(int(g) for g in m.groups()[1:4]), *(int(g or 0) for g in m.groups()[4:7]))
        step = _UNITS[m.group(1)]
        stamps = [float(v) for v in values.strip("{}").split(",") if v.strip()]
        return name, [(epoch + dt.timedelta(seconds=v * step)).date() for v in stamps]
    return None


def months(file: str, var: str, time_names: list[str]) -> list[tuple[dt.date, int]]:
    """(date, band index) of each time step of a variable, from its time axis (any CF 'X since' unit)."""
    import rasterio

    with rasterio.Env(), _open(file, var) as src:
        found = _times(src.tags(), time_names)
        if found is None:  # a single time step: its value is a band tag
            return []
        return [(d, i + 1) for i, d in enumerate(found[1])]


@lru_cache(maxsize=256)
def nc_grid(file: str, mtime_ns: int):
    """The lon/lat grid (WGS84 when the file names no CRS) of the file's first variable."""
    import rasterio

    from reviewer.record.grid import GridInfo

    var = variables(file, mtime_ns)[0]
    with rasterio.Env(), warnings.catch_warnings():
        warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)
        with _open(file, var) as src:
            crs = src.crs.to_wkt() if src.crs else rasterio.crs.CRS.from_epsg(4326).to_wkt()
            shape = (src.height, src.width)
            t = tuple(src.transform)[:6]
            step = _grib_steps(src.tags(1))
        if src.transform.is_identity:  # GDAL gives no geotransform for a one-row or one-column grid
            t = _axes_transform(file, shape, step)
        c = t[2] - 360.0 if t[2] >= 180.0 else t[2]  # a 0..360 longitude grid east of 180: as -180..180
        return GridInfo(crs, (t[0], t[1], c, t[3], t[4], t[5]), shape, None)


#: ERA5-Land's native grid spacing in degrees (CDS documentation: 0.1 x 0.1 degree regular lon/lat)
ERA5_LAND_STEP = 0.1
_AXES = (("longitude", "lon"), ("latitude", "lat"))


def _grib_steps(tags: dict[str, str]) -> tuple[float | None, float | None]:
    """The (lon, lat) spacing a CDS netCDF converted from GRIB states on its variables, else None."""
    out = []
    for key in ("GRIB_iDirectionIncrementInDegrees", "GRIB_jDirectionIncrementInDegrees"):
        try:
            out.append(abs(float(tags[key])) or None)
        except (KeyError, ValueError):
            out.append(None)
    return out[0], out[1]


def _axes_transform(file: str, shape: tuple[int, int], stated: tuple[float | None, float | None]) -> tuple:
    """The lon/lat transform from the file's own coordinate variables (cell centres), for a box one cell
    wide or high (a one-pixel-wide CDS download), where GDAL gives none. The spacing of a one-value axis:
    the file's GRIB increment attributes, else the other axis's spacing (CDS lon/lat grids are square),
    else ERA5-Land's native 0.1 degree."""
    import rasterio

    axes = []
    for names, n in zip(_AXES, (shape[1], shape[0]), strict=True):
        values = None
        for name in names:
            try:
                with _open(file, name) as src:
                    values = src.read(1).ravel().astype(np.float64)
                break
            except rasterio.errors.RasterioError:
                continue
        if values is None or values.size != n:
            raise FileFault(f"no {names[0]} coordinate of {n} values (the grid cannot be placed)")
        axes.append(values)
    lon, lat = axes[0], axes[1][::-1]  # GDAL presents such a grid bottom-up: its last latitude is row 0
    steps = [float(a[1] - a[0]) if a.size > 1 else None for a in (lon, lat)]
    other = next((abs(s) for s in steps if s), None)
    dx = steps[0] or stated[0] or other or ERA5_LAND_STEP
    dy = steps[1] or -(stated[1] or other or ERA5_LAND_STEP)  # (one latitude: a row, north edge up)
    return (float(dx), 0.0, float(lon[0] - dx / 2), 0.0, float(dy), float(lat[0] - dy / 2))


#: a variable's time steps inside one window are read in one pass and kept when at most this many values
MAX_STACK_VALUES = 4_000_000


def _unpack(data: np.ndarray, tags: dict[str, str]) -> np.ndarray:
    scale = float(tags.get("scale_factor", 1.0))
    offset = float(tags.get("add_offset", 0.0))
    fills = [float(tags[k]) for k in ("_FillValue", "missing_value") if k in tags]
    out = data.astype(np.float32) * np.float32(scale) + np.float32(offset)
    if fills:
        out[np.isin(data, fills)] = np.nan
    return out


@lru_cache(maxsize=64)
def _stack(file: str, mtime_ns: int, var: str, window) -> np.ndarray | None:
    """Every time step of one variable inside `window`, unpacked, in one read: a scan and a stack ask for
    each month of a file holding hundreds, and GDAL re-parses the file's header on every open. None when
    the steps hold more than MAX_STACK_VALUES values (read one step at a time then)."""
    import rasterio

    with rasterio.Env(), _open(file, var) as src:
        h, w = (window[0][1] - window[0][0], window[1][1] - window[1][0]) if window else (src.height, src.width)
        if src.count * h * w > MAX_STACK_VALUES:
            return None
        data = src.read(window=window)
        out = np.stack([_unpack(data[i], src.tags(i + 1)) for i in range(src.count)])
    out.flags.writeable = False
    return out


def nc_read(file: str, layer: str, window) -> np.ndarray:
    """One time step of one variable (`t2m@3`: band 3), unpacked to float32 with NaN at fill."""
    import rasterio

    var, _, band = layer.partition("@")
    key = tuple(tuple(int(v) for v in pair) for pair in window) if window is not None else None
    stack = _stack(file, os.stat(file).st_mtime_ns, var, key)
    if stack is not None:
        return stack[int(band or 1) - 1].copy()
    with rasterio.Env(), _open(file, var) as src:
        data = src.read(int(band or 1), window=window)
        tags = src.tags(int(band or 1))
    return _unpack(data, tags)


def nc_scenes(path: Path, products) -> list[tuple[object, str, dt.date, dict[str, str]]]:
    """(product, scene id, date, band token -> layer) for each month of a content-recognised netCDF."""
    mtime = path.stat().st_mtime_ns
    present = set(variables(str(path), mtime))
    out = []
    for product in products:
        for box in product.raw.get("containers", ()):
            if box["format"] != "netcdf" or not present & set(box["layers"].values()):
                continue
            steps: dict[dt.date, dict[str, str]] = {}
            for token, var in box["layers"].items():
                if var not in present:
                    continue
                for date, band in months(str(path), var, box.get("time", ["valid_time", "time"])):
                    steps.setdefault(date, {})[token] = f"{var}@{band}"
            for date, layers in sorted(steps.items()):
                out.append((product, box["scene"].format(date=date), date, layers))
    return out
