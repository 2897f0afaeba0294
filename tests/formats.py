"""Test files in the providers' own formats, written from the public product specifications with the same
libraries the readers use (rasterio for JP2/COG, pystac for STAC items, pyhdf for MODIS HDF4, h5py for
VIIRS HDF5, netCDF through rasterio's netCDF driver's own format: written with h5py as netCDF4/HDF5).

Every writer takes the DN arrays from the caller, so a test states its DNs and works out the expected
physical values by hand from the specification.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine

S2_CRS = "EPSG:32632"
S2_ORIGIN = (600000.0, 5100000.0)  # upper-left corner of the little test tile


def write_band(path: Path, arr: np.ndarray, res: float, *, crs: str = S2_CRS, origin=S2_ORIGIN, nodata=None) -> Path:
    """One band as JPEG2000 (lossless, as ESA's SAFE) or GeoTIFF (the .tif copies, and COGs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    profile = dict(
        width=arr.shape[1], height=arr.shape[0], count=1, dtype=arr.dtype.name, crs=crs,
        transform=Affine(res, 0.0, origin[0], 0.0, -res, origin[1]), nodata=nodata,
    )  # fmt: skip
    if path.suffix == ".jp2":
        profile.update(driver="JP2OpenJPEG", QUALITY=100, REVERSIBLE="YES")
    else:
        profile.update(driver="GTiff", tiled=True, blockxsize=16, blockysize=16, compress="deflate")
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(arr, 1)
    return path


def mtd_msil2a(*, baseline: str, offsets: dict[int, int] | None, spacecraft: str = "Sentinel-2A") -> str:
    """MTD_MSIL2A.xml as Sen2Cor writes it (only the elements the reader uses): PB 04.00 and later carry
    BOA_ADD_OFFSET_VALUES_LIST under General_Info/Product_Image_Characteristics."""
    offset_list = ""
    if offsets is not None:
        rows = "".join(f'<BOA_ADD_OFFSET band_id="{b}">{v}</BOA_ADD_OFFSET>' for b, v in sorted(offsets.items()))
        offset_list = f"<BOA_ADD_OFFSET_VALUES_LIST>{rows}</BOA_ADD_OFFSET_VALUES_LIST>"
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<n1:Level-2A_User_Product xmlns:n1="https://psd-14.sentinel2.eo.esa.int/PSD/User_Product_Level-2A.xsd">'
        "<n1:General_Info><Product_Info>"
        f"<PROCESSING_BASELINE>{baseline}</PROCESSING_BASELINE>"
        f"<Datatake><SPACECRAFT_NAME>{spacecraft}</SPACECRAFT_NAME></Datatake></Product_Info>"
        "<Product_Image_Characteristics><QUANTIFICATION_VALUES_LIST>"
        '<BOA_QUANTIFICATION_VALUE unit="none">10000</BOA_QUANTIFICATION_VALUE></QUANTIFICATION_VALUES_LIST>'
        f"{offset_list}</Product_Image_Characteristics></n1:General_Info></n1:Level-2A_User_Product>\n"
    )


def write_safe(
    root: Path,
    bands: dict[tuple[str, int], np.ndarray],
    *,
    tile: str = "32TNS",
    when: str = "20230601T101559",
    baseline: str = "04.00",
    mtd: str | None = "offsets",
    ext: str = ".jp2",
) -> Path:
    """A Sentinel-2 L2A SAFE folder: GRANULE/<id>/IMG_DATA/R{res}m/T<tile>_<when>_<band>_<res>m.jp2.
    `mtd`: 'offsets' (PB >= 04.00 list, -1000 for every band), 'baseline' (no list), or None (no file)."""
    n = baseline.replace(".", "")
    safe = root / f"S2A_MSIL2A_{when}_N{n}_R065_T{tile}_{when[:8]}T130009.SAFE"
    img = safe / "GRANULE" / f"L2A_T{tile}_A041234_{when}" / "IMG_DATA"
    for (band, res), arr in bands.items():
        write_band(img / f"R{res}m" / f"T{tile}_{when}_{band}_{res}m{ext}", arr, float(res))
    if mtd is not None:
        offsets = {b: -1000 for b in range(13)} if mtd == "offsets" else None
        (safe / "MTD_MSIL2A.xml").write_text(mtd_msil2a(baseline=baseline, offsets=offsets), encoding="utf-8")
    return safe


def write_stac_cog(
    folder: Path, bands: dict[str, tuple[np.ndarray, int]], *, item_id: str, when: dt.datetime, baseline: str
) -> Path:
    """The Element84 / AWS layout: B04.tif, SCL.tif ... beside a STAC item whose asset hrefs are the
    archive's https URLs (only the file names are local)."""
    import pystac

    folder.mkdir(parents=True, exist_ok=True)
    w, n = S2_ORIGIN
    bbox = [w, n - 600, w + 600, n]
    item = pystac.Item(
        id=item_id,
        geometry={"type": "Polygon", "coordinates": [[[9.0, 46.0], [9.01, 46.0], [9.01, 46.01], [9.0, 46.0]]]},
        bbox=[9.0, 46.0, 9.01, 46.01],
        datetime=when,
        properties={
            "constellation": "sentinel-2",
            "platform": "sentinel-2b",
            "s2:product_type": "S2MSI2A",
            "s2:processing_baseline": baseline,
            "s2:mgrs_tile": "32TNS",
            "proj:epsg": 32632,
            "proj:bbox": bbox,
        },
    )
    base = f"https://sentinel-cogs.s3.us-west-2.amazonaws.com/sentinel-s2-l2a-cogs/32/T/NS/{when:%Y/%-m}/{item_id}"
    for token, (arr, res) in bands.items():
        write_band(folder / f"{token}.tif", arr, float(res), nodata=0)
        item.add_asset(token.lower(), pystac.Asset(href=f"{base}/{token}.tif", media_type=pystac.MediaType.COG))
    item.add_asset("thumbnail", pystac.Asset(href=f"{base}/thumbnail.jpg", media_type=pystac.MediaType.JPEG))
    (folder / "thumbnail.jpg").write_bytes(b"\xff\xd8\xff\xe0")
    path = folder / f"{item_id}.json"
    path.write_text(json.dumps(item.to_dict(include_self_link=False)), encoding="utf-8")
    return path
