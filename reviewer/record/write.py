"""Writing altered copies of product files (instrument and placebo pairs) in the product's own encoding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import rasterio
from rasterio.errors import RasterioError

from reviewer.errors import UnreadableFileError
from reviewer.record.catalog import BandSpec


def write_scaled_band(src: Path, dst: Path, spec: BandSpec, factor: float) -> None:
    """Rewrite one band with its physical values multiplied by `factor`; fill, saturated and
    out-of-range DNs (e.g. MOD10A1 codes 200-255) are kept as they are, so the masks do not change."""
    try:
        with rasterio.open(src) as ds:
            profile = ds.profile
            raw = ds.read(1)
    except RasterioError as exc:
        raise UnreadableFileError(f"cannot read raster ({exc})", path=src) from exc
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
    out = np.where(keep, raw, new).astype(raw.dtype)
    dst.parent.mkdir(parents=True, exist_ok=True)
    with rasterio.open(dst, "w", **profile) as ds:
        ds.write(out, 1)
