"""The providers' own container formats for the synthetic demo site, written with the libraries the readers use.

* MODIS (LP DAAC): one HDF4 file per granule (pyhdf), the SDS by their real names with their own attributes,
  the HDF-EOS grid in the StructMetadata.0 global attribute and the granule's inventory in CoreMetadata.0.
* VIIRS (LAADS / LP DAAC v002): one HDF5 file per granule (h5py), HDFEOS/GRIDS/<grid>/Data Fields/<SDS>
  and 'HDFEOS INFORMATION/StructMetadata.0'.
* ERA5-Land (CDS): one netCDF file holding every month and both variables (scipy's netCDF writer; the
  reader is GDAL's netCDF driver).
* Sentinel-2 L2A: JPEG2000 bands (lossless, as ESA writes them) and Cloud-Optimised GeoTIFFs (the
  Element84 / AWS archive) through rasterio.

The demo's MODIS/VIIRS granules are spatial subsets of their tile (the HDF-EOS grid covers the window of the
tile over the site, as a subsetting service writes it): a whole 4800 x 4800 tile takes ~6 s per file to
compress, and the readers take the grid from StructMetadata.0 either way. Every writer is deterministic: the
same arrays give the same bytes (no time stamps are written).
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from reviewer.record.synthetic.model import Grid

#: pyhdf's SDC type names by numpy dtype
_SDC = {"int8": "INT8", "uint8": "UINT8", "int16": "INT16", "uint16": "UINT16", "int32": "INT32", "float32": "FLOAT32"}


class Layer:
    """One SDS: its name as distributed, raw DNs, fill value and the attributes the product files carry."""

    def __init__(self, name: str, data: np.ndarray, fill: float | None, **attrs: Any) -> None:
        self.name, self.data, self.fill, self.attrs = name, data, fill, attrs


def struct_metadata(grid_name: str, grid: Grid, fields: list[tuple[str, str]]) -> str:
    """StructMetadata.0 (ODL) as the HDF-EOS library writes it for a sinusoidal grid (GCTP_SNSOID)."""
    t = grid.transform
    rows, cols = grid.shape
    ulx, uly = t.c, t.f
    lrx, lry = t.c + cols * t.a, t.f + rows * t.e
    dfields = "".join(
        f'\t\t\tOBJECT=DataField_{i}\n\t\t\t\tDataFieldName="{f}"\n\t\t\t\tDataType=DFNT_{_SDC[d]}\n'
        f'\t\t\t\tDimList=("YDim","XDim")\n\t\t\tEND_OBJECT=DataField_{i}\n'
        for i, (f, d) in enumerate(fields, 1)
    )
    return (
        "GROUP=SwathStructure\nEND_GROUP=SwathStructure\nGROUP=GridStructure\n\tGROUP=GRID_1\n"
        f'\t\tGridName="{grid_name}"\n\t\tXDim={cols}\n\t\tYDim={rows}\n'
        f"\t\tUpperLeftPointMtrs=({ulx:.6f},{uly:.6f})\n\t\tLowerRightMtrs=({lrx:.6f},{lry:.6f})\n"
        "\t\tProjection=GCTP_SNSOID\n\t\tProjParams=(6371007.181000,0,0,0,0,0,0,0,0,0,0,0,0)\n"
        "\t\tSphereCode=-1\n\t\tGridOrigin=HDFE_GD_UL\n"
        f"\t\tGROUP=Dimension\n\t\tEND_GROUP=Dimension\n\t\tGROUP=DataField\n{dfields}\t\tEND_GROUP=DataField\n"
        "\t\tGROUP=MergedFields\n\t\tEND_GROUP=MergedFields\n\tEND_GROUP=GRID_1\nEND_GROUP=GridStructure\n"
        "GROUP=PointStructure\nEND_GROUP=PointStructure\nEND\n"
    )


def core_metadata(granule: str, tile: str, start: dt.date, days: int) -> str:
    """A CoreMetadata.0 (ECS inventory, ODL) with the granule id, time range and tile numbers."""
    end = start + dt.timedelta(days=days - 1)

    def obj(name: str, value: str) -> str:
        return f"    OBJECT = {name}\n      NUM_VAL = 1\n      VALUE = {value}\n    END_OBJECT = {name}\n"

    attrs = "".join(
        f'    OBJECT = ADDITIONALATTRIBUTESCONTAINER\n      CLASS = "{i}"\n'
        f'      OBJECT = ADDITIONALATTRIBUTENAME\n        CLASS = "{i}"\n        NUM_VAL = 1\n        VALUE = "{k}"\n'
        f"      END_OBJECT = ADDITIONALATTRIBUTENAME\n"
        f'      GROUP = INFORMATIONCONTENT\n        CLASS = "{i}"\n        OBJECT = PARAMETERVALUE\n'
        f'          NUM_VAL = 1\n          CLASS = "{i}"\n          VALUE = "{v}"\n        END_OBJECT = PARAMETERVALUE\n'
        f"      END_GROUP = INFORMATIONCONTENT\n    END_OBJECT = ADDITIONALATTRIBUTESCONTAINER\n"
        for i, (k, v) in enumerate((("HORIZONTALTILENUMBER", tile[1:3]), ("VERTICALTILENUMBER", tile[4:6])), 1)
    )
    return (
        "\nGROUP                  = INVENTORYMETADATA\n  GROUPTYPE            = MASTERGROUP\n\n"
        "  GROUP = ECSDATAGRANULE\n" + obj("LOCALGRANULEID", f'"{granule}"') + "  END_GROUP = ECSDATAGRANULE\n"
        "  GROUP = RANGEDATETIME\n"
        + obj("RANGEBEGINNINGDATE", f'"{start.isoformat()}"')
        + obj("RANGEENDINGDATE", f'"{end.isoformat()}"')
        + "  END_GROUP = RANGEDATETIME\n  GROUP = ADDITIONALATTRIBUTES\n"
        + attrs
        + "  END_GROUP = ADDITIONALATTRIBUTES\nEND_GROUP              = INVENTORYMETADATA\n\nEND\n"
    )


#: HDF4 records the path a file was created at inside it: granules are written at a path of this length and
#: the recorded path is replaced by one of the same length ('/' * n + name), so the bytes do not depend on
#: the folder the demo is written to
_HDF4_PATH_LEN = 200


def write_hdf4(path: Path, grid_name: str, grid: Grid, layers: list[Layer], core: str) -> None:
    """One MODIS granule as LP DAAC distributes it: HDF4, deflate-compressed SDS with their attributes."""
    with tempfile.TemporaryDirectory(prefix="reviewer-hdf4-") as tmp:
        folder = Path(tmp) / ("p" * max(1, _HDF4_PATH_LEN - len(tmp) - 1))
        folder.mkdir()
        scratch = folder / path.name
        _write_hdf4(scratch, grid_name, grid, layers, core)
        data = scratch.read_bytes()
    recorded = str(scratch).encode()
    path.write_bytes(data.replace(recorded, b"/" * (len(recorded) - len(path.name)) + path.name.encode()))


def _write_hdf4(path: Path, grid_name: str, grid: Grid, layers: list[Layer], core: str) -> None:
    from pyhdf.SD import SD, SDC

    from reviewer.record.hdf import _HDF4  # the HDF4 library is not thread-safe (a GUI may be scanning)

    suffix = f":{grid_name}"
    with _HDF4:
        sd = SD(str(path), SDC.WRITE | SDC.CREATE | SDC.TRUNC)
        try:
            sd.attr("StructMetadata.0").set(
                SDC.CHAR8, struct_metadata(grid_name, grid, [(x.name, x.data.dtype.name) for x in layers])
            )
            sd.attr("CoreMetadata.0").set(SDC.CHAR8, core)
            for layer in layers:
                kind = getattr(SDC, _SDC[layer.data.dtype.name])
                sds = sd.create(layer.name, kind, layer.data.shape)
                sds.dim(0).setname("YDim" + suffix)
                sds.dim(1).setname("XDim" + suffix)
                if layer.fill is not None:
                    sds.setfillvalue(layer.data.dtype.type(layer.fill).item())
                sds.setcompress(SDC.COMP_DEFLATE, 1)
                sds[:] = layer.data
                for key, value in layer.attrs.items():
                    if isinstance(value, str):
                        sds.attr(key).set(SDC.CHAR8, value)
                    elif isinstance(value, float):
                        sds.attr(key).set(SDC.FLOAT64, value)
                    else:  # valid_range and other values in the layer's own type
                        sds.attr(key).set(kind, value)
                sds.endaccess()
        finally:
            sd.end()


def write_hdf5(path: Path, grid_name: str, grid: Grid, layers: list[Layer]) -> None:
    """One VIIRS v002 granule: HDF5 with the HDF-EOS grid groups (h5py; no time stamps, so deterministic)."""
    import h5py

    with h5py.File(path, "w", track_order=False) as f:
        text = struct_metadata(grid_name, grid, [(x.name, x.data.dtype.name) for x in layers])
        f.create_dataset("HDFEOS INFORMATION/StructMetadata.0", data=np.bytes_(text), track_times=False)
        fields = f.create_group(f"HDFEOS/GRIDS/{grid_name}/Data Fields")
        for layer in layers:
            ds = fields.create_dataset(
                layer.name,
                data=layer.data,
                chunks=layer.data.shape,
                compression="gzip",
                compression_opts=1,
                fillvalue=layer.fill,
                track_times=False,
            )
            if layer.fill is not None:
                ds.attrs["_FillValue"] = layer.data.dtype.type(layer.fill)
            for key, value in layer.attrs.items():
                ds.attrs[key] = value if not isinstance(value, list) else np.asarray(value, layer.data.dtype)


def write_era5_nc(path: Path, grid: Grid, months: list[dt.date], variables: dict[str, tuple[np.ndarray, dict]]) -> None:
    """The CDS 'reanalysis-era5-land-monthly-means' download: one netCDF file, dims valid_time (seconds since
    1970-01-01), latitude (descending pixel centres), longitude; `variables`: name -> (float32 array
    [time, lat, lon], attributes). Unpacked float32, as the CDS's current netCDF converter writes it."""
    from scipy.io import netcdf_file

    rows, cols = grid.shape
    t = grid.transform
    lat = t.f + (np.arange(rows) + 0.5) * t.e
    lon = t.c + (np.arange(cols) + 0.5) * t.a
    f = netcdf_file(str(path), "w", version=2)
    try:
        f.Conventions = "CF-1.7"
        f.institution = "European Centre for Medium-Range Weather Forecasts"
        f.createDimension("valid_time", len(months))
        f.createDimension("latitude", rows)
        f.createDimension("longitude", cols)
        vt = f.createVariable("valid_time", "i4", ("valid_time",))
        vt[:] = [int(dt.datetime(m.year, m.month, 1, tzinfo=dt.UTC).timestamp()) for m in months]
        vt.units, vt.calendar, vt.standard_name = "seconds since 1970-01-01", "proleptic_gregorian", "time"
        la = f.createVariable("latitude", "f8", ("latitude",))
        la[:] = np.round(lat, 6)
        la.units, la.standard_name = "degrees_north", "latitude"
        lo = f.createVariable("longitude", "f8", ("longitude",))
        lo[:] = np.round(lon, 6)
        lo.units, lo.standard_name = "degrees_east", "longitude"
        for name, (values, attrs) in variables.items():
            v = f.createVariable(name, "f4", ("valid_time", "latitude", "longitude"))
            v._FillValue = np.float32(np.nan)  # noqa: SLF001 - the CF attribute _FillValue, set as netCDF4 sets one
            for key, value in attrs.items():
                setattr(v, key, value)
            v[:] = values.astype(np.float32)
    finally:
        f.close()


def write_jp2(path: Path, arr: np.ndarray, grid: Grid, nodata: float | None = 0) -> None:
    """One Sentinel-2 band as ESA's SAFE holds it: JPEG2000, lossless (reversible 5/3 wavelet)."""
    import rasterio

    profile = dict(
        driver="JP2OpenJPEG", width=arr.shape[1], height=arr.shape[0], count=1, dtype=arr.dtype.name,
        crs=grid.crs, transform=grid.transform, nodata=nodata, QUALITY=100, REVERSIBLE="YES",
    )  # fmt: skip
    with rasterio.Env(GDAL_PAM_ENABLED="NO"), rasterio.open(path, "w", **profile) as dst:
        dst.write(arr, 1)


def write_cog(path: Path, arr: np.ndarray, grid: Grid, nodata: float | None = 0) -> None:
    """One band as a Cloud-Optimised GeoTIFF (the Element84 / AWS Sentinel-2 archive): deflate, tiled."""
    import rasterio

    profile = dict(
        driver="COG", width=arr.shape[1], height=arr.shape[0], count=1, dtype=arr.dtype.name, crs=grid.crs,
        transform=grid.transform, nodata=nodata, compress="deflate", blocksize=256, overviews="NONE",
    )  # fmt: skip
    with rasterio.Env(GDAL_PAM_ENABLED="NO"), rasterio.open(path, "w", **profile) as dst:
        dst.write(arr, 1)
