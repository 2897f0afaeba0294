"""Writing altered copies of product files (instrument and placebo pairs) in the product's own encoding."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import rasterio
from rasterio.errors import RasterioError

from reviewer.errors import UnreadableFileError
from reviewer.record import hdf
from reviewer.record.catalog import BandSpec
from reviewer.record.reader_errors import what_is_wrong


def write_scaled_band(src: Path, dst: Path, spec: BandSpec, factor: float) -> None:
    """Rewrite one band with its physical values multiplied by `factor`; fill, saturated and
    out-of-range DNs (e.g. MOD10A1 codes 200-255) are kept as they are, so the masks do not change."""
    try:
        with rasterio.open(src) as ds:
            profile = ds.profile
            raw = ds.read(1)
    except RasterioError as exc:
        raise UnreadableFileError(f"unreadable: {what_is_wrong(exc)}", path=src) from exc
    out = scaled_dn(raw, spec, factor)
    dst.parent.mkdir(parents=True, exist_ok=True)
    with rasterio.open(dst, "w", **profile) as ds:
        ds.write(out, 1)


def write_scaled_layers(src: Path, dst: Path, layers: dict[str, BandSpec], factor: float) -> None:
    """A copy of a multi-layer granule (MODIS HDF4, VIIRS HDF5) with the named layers scaled as
    write_scaled_band scales a band, everything else (other layers, attributes, grid metadata) byte for
    byte as distributed. netCDF/GRIB files hold many dates each, so one date cannot be altered in place."""
    fmt = hdf.container_format(src.name)
    if fmt not in ("hdf4", "hdf5"):
        raise UnreadableFileError("altering a layer of this file format is not supported", path=src)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".part")
    shutil.copyfile(src, tmp)
    try:
        (_scale_hdf4 if fmt == "hdf4" else _scale_hdf5)(tmp, layers, factor)
        os.replace(tmp, dst)
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, UnreadableFileError):
            raise
        raise UnreadableFileError(f"cannot rewrite its layers: {what_is_wrong(exc)}", path=src) from exc


def _scale_hdf4(path: Path, layers: dict[str, BandSpec], factor: float) -> None:
    from pyhdf.SD import SD, SDC

    with hdf._HDF4:  # noqa: SLF001 - the HDF4 library is not thread-safe: one lock for every pyhdf call
        sd = SD(str(path), SDC.WRITE)
        try:
            for layer, spec in layers.items():
                ds = sd.select(layer)
                try:
                    ds[:] = scaled_dn(np.asarray(ds[:]), spec, factor)
                finally:
                    ds.endaccess()
        finally:
            sd.end()


def _scale_hdf5(path: Path, layers: dict[str, BandSpec], factor: float) -> None:
    import h5py

    with h5py.File(path, "r+") as f:
        for layer, spec in layers.items():
            ds = hdf._h5_find(f, layer)  # noqa: SLF001 - the record's own layer lookup
            if ds is None:
                raise KeyError(f"no layer '{layer}'")
            ds[...] = scaled_dn(ds[()], spec, factor)


def scaled_dn(raw: np.ndarray, spec: BandSpec, factor: float) -> np.ndarray:
    """DNs whose physical values are `factor` times the given ones, in the same encoding; fill, saturated and
    out-of-range DNs kept."""
    keep = np.zeros(raw.shape, bool)
    if spec.fill is not None:
        keep |= raw == spec.fill
    if spec.saturated is not None:
        keep |= raw == spec.saturated
    if spec.valid is not None:
        keep |= (raw < spec.valid[0]) | (raw > spec.valid[1])
    phys = raw.astype(np.float64) * spec.scale + spec.offset
    new = (phys * factor - spec.offset) / spec.scale
    if np.issubdtype(raw.dtype, np.integer):
        info = np.iinfo(raw.dtype)
        lo, hi = spec.valid if spec.valid is not None else (info.min, info.max)
        new = np.clip(np.rint(new), lo, hi)
    return np.where(keep, raw, new).astype(raw.dtype)
