"""ERA5-Land monthly means as GRIB from the CDS, read through ECMWF's ecCodes (the `eccodes` package; its
`eccodeslib` wheel carries the C library). One file holds many months and variables, one message each, on a
regular lon/lat grid; like the netCDF download it is recognised by its content (the messages' cfVarName
and validity date, products.json containers with format 'grib'), since CDS file names are arbitrary.

A layer is `<file>::<cfVarName>@<message number>` (1-based). GRIB packing is the file's encoding: the
values ecCodes decodes are the physical values (t2m in K), with NaN where the bitmap says missing.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO

import numpy as np

from reviewer.record.reader_errors import FileFault

#: ecCodes handles are used from scan threads: one reader at a time
_LOCK = threading.Lock()
#: the packages that carry a PROJ of their own (their wheels bundle it), loaded before ecCodes: see load_eccodes
_OWN_PROJ = ("pyproj", "pyogrio", "rasterio")


#: where ecCodes writes its log (see load_eccodes)
_LOG_SINK: IO[str] | None = None


@lru_cache(maxsize=1)
def load_eccodes():
    """The eccodes module, imported after the packages with a PROJ of their own (_OWN_PROJ).

    ecCodes' wheel loads its eckit libraries with RTLD_GLOBAL (findlibs), one of them another PROJ. A
    library loaded after that resolves its PROJ calls to eckit's copy before its own: pyproj then failed
    with 'proj_create: no database context specified' (eckit's PROJ rejects pyproj's proj.db) and the
    process ended in a double free. Loaded first, each is bound to its own PROJ for good (Python loads
    extensions with RTLD_NOW). Every use of ecCodes in the project goes through here.

    ecCodes' own log ('ECCODES ERROR   :  grib_handle_new_from_message_: No final 7777 in message!', written
    from C to the terminal for a damaged file) goes nowhere: the scan names the file and what is wrong with it."""
    import importlib

    for name in _OWN_PROJ:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
    import eccodes

    global _LOG_SINK
    _LOG_SINK = open(os.devnull, "w")  # noqa: SIM115 - held open for the process: ecCodes writes its log to it
    eccodes.codes_context_set_logging(_LOG_SINK)
    return eccodes


#: decoded messages kept per file when a file holds at most this many values (a site-sized download)
MAX_CACHED_VALUES = 4_000_000


@dataclass(frozen=True)
class Message:
    """What the scan and the reader need of one GRIB message (its offset, to decode it again)."""

    number: int
    offset: int
    name: str
    date: dt.date
    ni: int
    nj: int
    lon0: float
    lat0: float
    di: float
    dj: float
    north_first: bool
    grid_type: str


def _int(h, key: str, default: int = 0) -> int:
    eccodes = load_eccodes()
    try:
        return int(eccodes.codes_get(h, key))
    except eccodes.KeyValueNotFoundError:
        return default


@lru_cache(maxsize=64)
def messages(file: str, mtime_ns: int) -> tuple[Message, ...]:
    """Every message of a GRIB file (header keys only; no values are decoded)."""
    eccodes = load_eccodes()

    out = []
    with _LOCK, open(file, "rb") as fh:
        while True:
            h = eccodes.codes_grib_new_from_file(fh, headers_only=True)
            if h is None:
                break
            try:
                name = str(eccodes.codes_get(h, "cfVarName"))
                if name in ("", "unknown", "~"):
                    name = str(eccodes.codes_get(h, "shortName"))
                date = str(_int(h, "validityDate") or _int(h, "dataDate"))
                out.append(
                    Message(
                        number=len(out) + 1,
                        offset=_int(h, "offset"),
                        name=name,
                        date=dt.date(int(date[:4]), int(date[4:6]), int(date[6:8])),
                        ni=_int(h, "Ni"),
                        nj=_int(h, "Nj"),
                        lon0=float(eccodes.codes_get(h, "longitudeOfFirstGridPointInDegrees")),
                        lat0=float(eccodes.codes_get(h, "latitudeOfFirstGridPointInDegrees")),
                        di=float(eccodes.codes_get(h, "iDirectionIncrementInDegrees")),
                        dj=float(eccodes.codes_get(h, "jDirectionIncrementInDegrees")),
                        north_first=_int(h, "jScansPositively") == 0,
                        grid_type=str(eccodes.codes_get(h, "gridType")),
                    )
                )
            finally:
                eccodes.codes_release(h)
    return tuple(out)


def grib_grid(file: str, mtime_ns: int):
    """The regular lon/lat grid (WGS84) of the file's first message, as the netCDF reader gives it."""
    from rasterio.crs import CRS

    from reviewer.record.grid import GridInfo

    found = messages(file, mtime_ns)
    if not found:
        raise FileFault("no GRIB message")
    m = found[0]
    if m.grid_type != "regular_ll":
        raise FileFault(f"grid type {m.grid_type} (only regular_ll is read)")
    north = m.lat0 if m.north_first else m.lat0 + (m.nj - 1) * m.dj
    west = m.lon0 - 360.0 if m.lon0 >= 180.0 else m.lon0  # a 0..360 grid east of 180: as -180..180
    transform = (m.di, 0.0, west - m.di / 2, 0.0, -m.dj, north + m.dj / 2)
    return GridInfo(CRS.from_epsg(4326).to_wkt(), transform, (m.nj, m.ni), None)


def _decode(file: str, m: Message) -> np.ndarray:
    eccodes = load_eccodes()

    with _LOCK, open(file, "rb") as fh:
        fh.seek(m.offset)
        h = eccodes.codes_grib_new_from_file(fh)
        if h is None:
            raise FileFault(f"message {m.number} cannot be read (truncated file?)")
        try:
            values = np.asarray(eccodes.codes_get_values(h), np.float64)
            missing = float(eccodes.codes_get(h, "missingValue")) if _int(h, "bitmapPresent") else None
        finally:
            eccodes.codes_release(h)
    if values.size != m.ni * m.nj:
        raise FileFault(f"message {m.number} holds {values.size} values, its grid {m.nj} x {m.ni}")
    out = values.reshape(m.nj, m.ni).astype(np.float32)
    if missing is not None:
        out[values.reshape(m.nj, m.ni) == missing] = np.nan
    return out if m.north_first else out[::-1]


@lru_cache(maxsize=4096)
def _cached(file: str, mtime_ns: int, number: int) -> np.ndarray:
    out = _decode(file, messages(file, mtime_ns)[number - 1])
    out.flags.writeable = False
    return out


def grib_read(file: str, layer: str, window) -> np.ndarray:
    """One message (`t2m@3`) decoded to float32 with NaN where missing, cut to the window."""
    mtime = os.stat(file).st_mtime_ns
    name, _, number = layer.partition("@")
    found = messages(file, mtime)
    m = found[int(number) - 1]
    if m.name != name:
        raise FileFault(f"message {number} is {m.name}, not {name}")
    small = sum(x.ni * x.nj for x in found) <= MAX_CACHED_VALUES
    data = _cached(file, mtime, m.number) if small else _decode(file, m)
    if window is not None:
        (r0, r1), (c0, c1) = window
        data = data[r0:r1, c0:c1]
    return np.array(data)


def grib_scenes(path: Path, products) -> list[tuple[object, str, dt.date, dict[str, str]]]:
    """(product, scene id, date, band token -> layer) for each month of a content-recognised GRIB file."""
    found = messages(str(path), path.stat().st_mtime_ns)
    present = {m.name for m in found}
    out = []
    for product in products:
        for box in product.raw.get("containers", ()):
            if box["format"] != "grib" or not present & set(box["layers"].values()):
                continue
            steps: dict[dt.date, dict[str, str]] = {}
            for token, var in box["layers"].items():
                for m in found:
                    if m.name == var:
                        steps.setdefault(m.date, {})[token] = f"{var}@{m.number}"
            for date, layers in sorted(steps.items()):
                out.append((product, box["scene"].format(date=date), date, layers))
    return out
