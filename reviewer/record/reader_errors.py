"""The exceptions the third-party readers of a record raise for a damaged, truncated or foreign file.

A reader's own error classes are taken only from libraries already imported: an exception from a library means
it was imported, and importing one here (pyhdf, or ecCodes with its own PROJ, see reviewer.record.grib) would
cost start-up time or load libraries in the wrong order. Evaluated in an `except` clause, so only when something
was raised.
"""

from __future__ import annotations

import sys

#: what h5py, numpy, json and the project's own parsers of StructMetadata and netCDF/GRIB coordinates raise
BUILTIN = (OSError, ValueError, KeyError, IndexError, TypeError, RuntimeError)

#: (module, class) of each reader library's root error: rasterio/GDAL, pyhdf, ecCodes, pystac
LIBRARY = (
    ("rasterio.errors", "RasterioError"),
    ("pyhdf.error", "HDF4Error"),
    ("gribapi.errors", "GribInternalError"),
    ("pystac.errors", "STACError"),
    ("pystac.errors", "STACTypeError"),
    ("pystac.errors", "RequiredPropertyMissing"),
)


def reader_errors(*also: type[Exception]) -> tuple[type[Exception], ...]:
    """The builtin errors above, the root error of each reader library loaded in this process, and `also`.
    (pyogrio's and pyproj's errors are RuntimeErrors; rasterio's CRSError a ValueError.)"""
    found = [getattr(sys.modules[mod], name) for mod, name in LIBRARY if mod in sys.modules]
    return (*BUILTIN, *found, *also)
