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


# ----------------------------------------------------------------------------- MODIS HDF4 / VIIRS HDF5

TILE_M = 1111950.5197665  # MODIS sinusoidal tile size; tile (h, v) has its upper-left at these multiples
X_MIN, Y_MAX = -20015109.354, 10007554.677
SINU = "+proj=sinu +lon_0=0 +x_0=0 +y_0=0 +R=6371007.181 +units=m +no_defs"


def tile_corner(h: int, v: int) -> tuple[float, float]:
    return X_MIN + h * TILE_M, Y_MAX - v * TILE_M


def struct_metadata(grid: str, h: int, v: int, rows: int, cols: int, fields: list[str]) -> str:
    """StructMetadata.0 as the HDF-EOS library writes it for a MODIS/VIIRS sinusoidal tile (ODL)."""
    ulx, uly = tile_corner(h, v)
    lrx, lry = ulx + TILE_M, uly - TILE_M
    dfields = "".join(
        f'\t\t\tOBJECT=DataField_{i}\n\t\t\t\tDataFieldName="{f}"\n\t\t\t\tDimList=("YDim","XDim")\n'
        f"\t\t\tEND_OBJECT=DataField_{i}\n"
        for i, f in enumerate(fields, 1)
    )
    return (
        "GROUP=SwathStructure\nEND_GROUP=SwathStructure\nGROUP=GridStructure\n\tGROUP=GRID_1\n"
        f'\t\tGridName="{grid}"\n\t\tXDim={cols}\n\t\tYDim={rows}\n'
        f"\t\tUpperLeftPointMtrs=({ulx:.6f},{uly:.6f})\n\t\tLowerRightMtrs=({lrx:.6f},{lry:.6f})\n"
        "\t\tProjection=GCTP_SNSOID\n\t\tProjParams=(6371007.181000,0,0,0,0,0,0,0,0,0,0,0,0)\n"
        "\t\tSphereCode=-1\n\t\tGridOrigin=HDFE_GD_UL\n"
        f"\t\tGROUP=DataField\n{dfields}\t\tEND_GROUP=DataField\n\tEND_GROUP=GRID_1\nEND_GROUP=GridStructure\n"
        "GROUP=PointStructure\nEND_GROUP=PointStructure\nEND\n"
    )


_SDC = {"int8": "INT8", "uint8": "UINT8", "int16": "INT16", "uint16": "UINT16", "int32": "INT32", "float32": "FLOAT32"}


def write_modis_hdf4(path: Path, grid: str, h: int, v: int, layers: dict[str, tuple[np.ndarray, dict]]) -> Path:
    """A MODIS granule as LP DAAC distributes it: one HDF4 file, SDS by their real names with their own
    attributes (_FillValue, scale_factor, valid_range ...), and the grid in the StructMetadata.0 attribute."""
    from pyhdf.SD import SD, SDC

    rows, cols = next(iter(layers.values()))[0].shape
    sd = SD(str(path), SDC.WRITE | SDC.CREATE | SDC.TRUNC)
    sd.attr("StructMetadata.0").set(SDC.CHAR8, struct_metadata(grid, h, v, rows, cols, list(layers)))
    for name, (arr, attrs) in layers.items():
        kind = getattr(SDC, _SDC[arr.dtype.name])
        sds = sd.create(name, kind, arr.shape)
        sds[:] = arr
        for key, value in attrs.items():
            if isinstance(value, str):
                sds.attr(key).set(SDC.CHAR8, value)
            elif isinstance(value, list):
                sds.attr(key).set(kind, value)
            elif isinstance(value, float):
                sds.attr(key).set(SDC.FLOAT64, value)
            else:
                sds.attr(key).set(kind, value)
        sds.endaccess()
    sd.end()
    return path


def write_viirs_h5(path: Path, grid: str, h: int, v: int, layers: dict[str, tuple[np.ndarray, dict]]) -> Path:
    """A VIIRS granule (v002) as distributed: HDF5 with HDFEOS/GRIDS/<grid>/Data Fields/<layer> and the
    grid in 'HDFEOS INFORMATION/StructMetadata.0'."""
    import h5py

    rows, cols = next(iter(layers.values()))[0].shape
    with h5py.File(path, "w") as f:
        text = struct_metadata(grid, h, v, rows, cols, list(layers))
        f.create_dataset("HDFEOS INFORMATION/StructMetadata.0", data=np.bytes_(text))
        fields = f.create_group(f"HDFEOS/GRIDS/{grid}/Data Fields")
        for name, (arr, attrs) in layers.items():
            ds = fields.create_dataset(name, data=arr, chunks=True, compression="gzip")
            for key, value in attrs.items():
                ds.attrs[key] = value
    return path


# ----------------------------------------------------------------------------- ERA5-Land netCDF


def write_era5_land_nc(path: Path, months: list[dt.date], lat: np.ndarray, lon: np.ndarray, packed: dict) -> Path:
    """The CDS 'reanalysis-era5-land-monthly-means' netCDF (classic format, int16 packed, as the CDS
    converter wrote it): dims valid_time (seconds since 1970-01-01), latitude (descending), longitude;
    `packed`: variable -> (int16 DN array [time, lat, lon], scale_factor, add_offset, units).
    Written with scipy's netCDF writer (the reader is GDAL's netCDF driver)."""
    from scipy.io import netcdf_file

    f = netcdf_file(str(path), "w", version=2)
    f.createDimension("valid_time", len(months))
    f.createDimension("latitude", len(lat))
    f.createDimension("longitude", len(lon))
    t = f.createVariable("valid_time", "i4", ("valid_time",))
    t[:] = [int(dt.datetime(m.year, m.month, m.day, tzinfo=dt.UTC).timestamp()) for m in months]
    t.units, t.calendar, t.standard_name = "seconds since 1970-01-01", "proleptic_gregorian", "time"
    la = f.createVariable("latitude", "f4", ("latitude",))
    la[:], la.units = lat, "degrees_north"
    lo = f.createVariable("longitude", "f4", ("longitude",))
    lo[:], lo.units = lon, "degrees_east"
    for name, (dn, scale, offset, units) in packed.items():
        v = f.createVariable(name, "i2", ("valid_time", "latitude", "longitude"))
        v.scale_factor, v.add_offset, v.units = scale, offset, units
        v._FillValue = np.int16(-32767)
        v.missing_value = np.int16(-32767)
        v[:] = dn
    f.close()
    return path


# ----------------------------------------------------------------------------- ERA5-Land GRIB


def write_era5_land_grib(path: Path, months: list[dt.date], lat: np.ndarray, lon: np.ndarray, fields: dict) -> Path:
    """The CDS 'reanalysis-era5-land-monthly-means' GRIB download (GRIB1, as the CDS serves ERA5-Land): one
    message per month and variable on a regular lon/lat grid, written with ecCodes from its
    regular_ll_sfc_grib1 sample; `fields`: ECMWF paramId (167 = 2 m temperature, 228 = total precipitation)
    -> float array [time, lat, lon] with NaN where missing (a bitmap). Latitudes descending (north first)."""
    from reviewer.record.grib import load_eccodes

    eccodes = load_eccodes()  # (after the packages with a PROJ of their own: see load_eccodes)

    with open(path, "wb") as fh:
        for param, cube in fields.items():
            for k, month in enumerate(months):
                h = eccodes.codes_grib_new_from_samples("regular_ll_sfc_grib1")
                try:
                    eccodes.codes_set_long(h, "centre", 98)  # ecmf
                    eccodes.codes_set_long(h, "paramId", param)
                    eccodes.codes_set_long(h, "dataDate", int(f"{month:%Y%m%d}"))
                    eccodes.codes_set_long(h, "dataTime", 0)
                    eccodes.codes_set_long(h, "Ni", len(lon))
                    eccodes.codes_set_long(h, "Nj", len(lat))
                    eccodes.codes_set_double(h, "latitudeOfFirstGridPointInDegrees", float(lat[0]))
                    eccodes.codes_set_double(h, "latitudeOfLastGridPointInDegrees", float(lat[-1]))
                    eccodes.codes_set_double(h, "longitudeOfFirstGridPointInDegrees", float(lon[0]))
                    eccodes.codes_set_double(h, "longitudeOfLastGridPointInDegrees", float(lon[-1]))
                    eccodes.codes_set_double(h, "iDirectionIncrementInDegrees", float(abs(lon[1] - lon[0])))
                    eccodes.codes_set_double(h, "jDirectionIncrementInDegrees", float(abs(lat[1] - lat[0])))
                    eccodes.codes_set_long(h, "jScansPositively", 0)
                    eccodes.codes_set_long(h, "bitsPerValue", 16)
                    values = np.asarray(cube[k], np.float64)
                    if np.isnan(values).any():
                        eccodes.codes_set_long(h, "bitmapPresent", 1)
                        eccodes.codes_set_double(h, "missingValue", 9999.0)
                        values = np.where(np.isnan(values), 9999.0, values)
                    eccodes.codes_set_values(h, values.ravel())
                    eccodes.codes_write(h, fh)
                finally:
                    eccodes.codes_release(h)
    return path
