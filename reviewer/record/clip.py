"""A site record cut down for a review package: the scenes an annotator needs, each raster clipped to the site.

A field annotator's laptop gets the files as the providers named and formatted them (so the same scanner and
readers work on them), only smaller: a GeoTIFF is cut to the window that covers the site grid plus a margin
of a few source pixels (so resampling at the site's edge reads what it read at home), with its metadata,
nodata, scales and offsets kept; a GeoTIFF that lies inside the site anyway, and every other file (HDF, netCDF,
JPEG2000, MTL text), is copied byte for byte.
"""

from __future__ import annotations

import logging
import math
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

import rasterio
from affine import Affine
from rasterio.warp import transform_bounds
from rasterio.windows import Window, from_bounds

from reviewer.errors import RecordError
from reviewer.record.hdf import SEP as LAYER_SEP
from reviewer.record.reader_errors import what_is_wrong
from reviewer.record.site import load_site

logger = logging.getLogger(__name__)

#: Source pixels kept around the site on every side of a clipped raster.
MARGIN_PX = 2
GEOTIFF = (".tif", ".tiff")


def _window(ds, bounds: tuple[float, float, float, float]) -> Window | None:
    """The window of `ds` covering bounds (in ds's CRS) plus the margin, or None when that is the whole file."""
    win = from_bounds(*bounds, transform=ds.transform)
    col0 = max(0, math.floor(win.col_off) - MARGIN_PX)
    row0 = max(0, math.floor(win.row_off) - MARGIN_PX)
    col1 = min(ds.width, math.ceil(win.col_off + win.width) + MARGIN_PX)
    row1 = min(ds.height, math.ceil(win.row_off + win.height) + MARGIN_PX)
    if col1 <= col0 or row1 <= row0:
        return Window(0, 0, 1, 1)  # the file misses the site: keep one pixel, so the scene still scans
    if (col0, row0, col1, row1) == (0, 0, ds.width, ds.height):
        return None
    return Window(col0, row0, col1 - col0, row1 - row0)


def _clip_geotiff(src: Path, dst: Path, site) -> bool:
    """Write src cut to the site into dst; False when it was copied whole."""
    with rasterio.open(src) as ds:
        if ds.crs is None:
            shutil.copy2(src, dst)
            return False
        bounds = transform_bounds(site.crs, ds.crs, *site.bbox, densify_pts=21)
        win = _window(ds, bounds)
        if win is None:
            shutil.copy2(src, dst)
            return False
        profile = ds.profile.copy()
        # the window's transform (rasterio's window_transform multiplies Affines with `*`, deprecated)
        transform = ds.transform @ Affine.translation(win.col_off, win.row_off)
        profile.update(width=int(win.width), height=int(win.height), transform=transform)
        if profile.get("tiled") and (int(win.width) < 16 or int(win.height) < 16):
            profile.pop("blockxsize", None)
            profile.pop("blockysize", None)
            profile["tiled"] = False
        with rasterio.open(dst, "w", **profile) as out:
            out.write(ds.read(window=win))
            out.update_tags(**ds.tags())
            for b in range(1, ds.count + 1):
                out.update_tags(b, **ds.tags(b))
                if ds.descriptions[b - 1]:
                    out.set_band_description(b, ds.descriptions[b - 1])
            out.scales, out.offsets = ds.scales, ds.offsets
    return True


def scene_files(site_dir: str | Path, scene_id: str, product_id: str, bands: Iterable[str]) -> set[str]:
    """What a copy of the record needs of one scene (paths relative to site_dir): its band files (or
    `file::layer`), the companions beside them named by the scene id (Landsat MTL, ANG ...), and the product
    metadata its decoding reads further up the folder tree: a SAFE's root MTD_MSIL2A.xml, which holds the
    BOA_ADD_OFFSET values (without it a copy falls back to the baseline in the SAFE's name)."""
    from glob import escape

    from reviewer.record.catalog import catalog
    from reviewer.record.decode import find_metadata

    folder = Path(site_dir)
    wanted = {str(b) for b in bands}
    beside = {(folder / rel.split(LAYER_SEP, 1)[0]).parent: folder / rel.split(LAYER_SEP, 1)[0] for rel in wanted}
    for parent in beside:
        wanted.update(str(p.relative_to(folder)) for p in parent.glob(f"{escape(scene_id)}*") if p.is_file())
    product = catalog().products.get(product_id)
    rule = product.raw.get("radiometric_offset") if product is not None else None
    if rule and rule.get("metadata"):
        for band in beside.values():
            mtd = find_metadata(band, rule["metadata"], stop=folder)
            if mtd is not None and folder in mtd.parents:
                wanted.add(str(mtd.relative_to(folder)))
    return wanted


def clip_record(
    site_dir: str | Path,
    files: Iterable[str],
    out_dir: str | Path,
    *,
    progress: Callable[[float, str], None] | None = None,
) -> dict[str, int]:
    """Copy site.json, the boundary file and `files` (paths relative to site_dir, or a scene's layers
    `file::layer`, which copy their file) into out_dir, GeoTIFFs clipped to the site; returns counts of
    files clipped and copied."""
    site_dir, out_dir = Path(site_dir), Path(out_dir)
    site = load_site(site_dir)
    own = ["site.json"]
    boundary = site.doc.get("boundary")
    if boundary:
        own.append(str(boundary))
    names = sorted({str(rel).split(LAYER_SEP, 1)[0] for rel in files})  # an HDF/netCDF layer: its file
    counts = {"clipped": 0, "copied": 0}
    for k, rel in enumerate([*own, *names]):
        src, dst = site_dir / rel, out_dir / rel
        if not src.is_file():
            raise RecordError(f"a file of the record is missing: {rel}", path=src)
        dst.parent.mkdir(parents=True, exist_ok=True)
        try:
            clipped = src.suffix.lower() in GEOTIFF and rel not in own and _clip_geotiff(src, dst, site)
        except rasterio.errors.RasterioError as exc:
            raise RecordError(f"cannot clip {rel}: {what_is_wrong(exc)}", path=src) from exc
        if not clipped and not dst.exists():
            shutil.copy2(src, dst)
        counts["clipped" if clipped else "copied"] += 1
        if progress is not None:
            progress((k + 1) / (len(own) + len(names)), rel)
    return counts
