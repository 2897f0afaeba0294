"""The exceptions the third-party readers of a record raise for a damaged, truncated or foreign file.

A reader's own error classes are taken only from libraries already imported: an exception from a library means
it was imported, and importing one here (pyhdf, or ecCodes with its own PROJ, see reviewer.record.grib) would
cost start-up time or load libraries in the wrong order. Evaluated in an `except` clause, so only when something
was raised.
"""

from __future__ import annotations

import re
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


class FileFault(ValueError):
    """What is wrong inside a file, in the tool's own words, raised by the project's own parsers of a file's
    structure (StructMetadata, GRIB messages, netCDF coordinates, STAC items): a reason quotes it as it is."""


#: (words in a reader library's message, lower case; what they mean in the tool's words), first match wins.
#: GDAL/libtiff, OpenJPEG, netCDF, HDF4/HDF5, ecCodes and zlib texts are never shown to the user: they name
#: C functions (TIFFReadDirectory, opj_get_decoded_tile), error classes (CPLE_AppDefinedError) or the path
#: GDAL was given, not the file's fault.
_MEANINGS = (
    (("no code-stream", "no codestream"), "the JPEG2000 file has no codestream"),
    (
        ("bytes, expected", "end of file", "end of resource", "ended before", "unexpected eof", "truncated", "short read", "premature end"),
        "truncated: its data ends before the end its header gives",
    ),
    (("tiffreaddirectory", "missingrequired", "tiff directory"), "its TIFF header (image directory) is damaged"),
    (
        ("not implemented", "not supported", "unsupported", "not configured", "not compiled"),
        "it uses an encoding this reader cannot decode",
    ),
    (
        ("decod", "corrupt", "code not yet in table", "opj_", "marker", "inflate", "zipdecode", "lzw", "jpeg",
         "huffman", "codestream", "code-stream", "readencoded", "ireadblock", "read failed"),
        "its compressed pixels cannot be decoded (the file is damaged)",
    ),
    (
        ("not recognized as being in a supported file format", "file signature not found", "unable to open",
         "cannot open", "not a supported", "invalid header", "bad checksum", "not a gzip", "no grib message"),
        "its contents are not the format its name says, or its header is damaged",
    ),
)  # fmt: skip
_BLOCK = re.compile(r"x offset (\d+), y offset (\d+)")


def what_is_wrong(exc: BaseException) -> str:
    """Why a reader failed on a file, in the tool's words: one line naming no library, C function or error
    class. A FileFault anywhere in the chain of causes is quoted; a library's text is read for what it says
    (truncated, damaged header, pixels that cannot be decoded, not the format), else that it cannot be read."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 16:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    for e in chain:
        if isinstance(e, FileFault):
            return str(e)
        message = getattr(e, "message", None)  # a ReviewerError: the tool's own words already
        if isinstance(message, str) and type(e).__module__.startswith("reviewer."):
            return message
    text = " ".join(str(e) for e in chain).lower()
    for words, meaning in _MEANINGS:
        if any(w in text for w in words):
            block = _BLOCK.search(text)
            if block and meaning.startswith("its compressed pixels"):
                return f"the compressed pixels of its block at column {block[1]}, row {block[2]} cannot be decoded (the file is damaged)"
            return meaning
    return "its contents cannot be read (the file is damaged or not what its name says)"
