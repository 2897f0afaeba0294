"""Sentinel-2 L2A products of the synthetic demo site: plan, MTD_MSIL2A.xml, rendering."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from affine import Affine

from reviewer.record.catalog import catalog
from reviewer.record.synthetic.common import (
    BANDS,
    CLOUD,
    HLS_S2_TO_OLI,
    RES,
    S2_COG_FROM,
    S2_NEW_OFFSET,
    S2_OFFSET_FROM,
    S2_ORBIT,
    S2_PRODUCT,
    S2_QUANTIFICATION,
    S2_TILE,
    SITE_NORTH,
    SITE_WEST,
    WATER,
    _date_iso,
    _rng,
)
from reviewer.record.synthetic.effects import _apply_clouds, _clouds, _draw_cloud
from reviewer.record.synthetic.formats import write_cog, write_jp2
from reviewer.record.synthetic.model import DemoSiteModel, Grid


# --------------------------------------------------------------------------------------------------------------
# Sentinel-2 L2A
# --------------------------------------------------------------------------------------------------------------
def _s2_grid(model: DemoSiteModel) -> Grid:
    m = int(math.ceil(model.size * RES / 20.0))
    return Grid(model.grid.crs, Affine(20.0, 0, SITE_WEST, 0, -20.0, SITE_NORTH), (m, m))


def _s2_plan(model: DemoSiteModel, per_year: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    plan = []
    first = max(model.start, 2019)
    k = 0
    for year in range(first, model.end + 1):
        n = max(1, per_year)
        days = sorted({int(rng.integers(int(b[0]), int(b[-1]) + 1)) for b in np.array_split(np.arange(1, 366), n)})
        for doy in days:
            d = dt.date(year, 1, 1) + dt.timedelta(days=doy - 1)
            sat = "S2A" if k % 2 == 0 else "S2B"
            new = d >= S2_OFFSET_FROM
            gen = f"{d:%Y%m%d}T{int(rng.integers(11, 16)):02d}{int(rng.integers(0, 60)):02d}{int(rng.integers(0, 60)):02d}"
            base = "N0400" if new else "N0213"
            name = f"{sat}_MSIL2A_{d:%Y%m%d}T100031_{base}_{S2_ORBIT}_T{S2_TILE}_{gen}.SAFE"
            stac = d >= S2_COG_FROM
            item = f"{sat}_{S2_TILE}_{d:%Y%m%d}_0_L2A"
            plan.append(
                {
                    "index": k,
                    "date": d,
                    "sat": sat,
                    "baseline": base,
                    "offset": S2_NEW_OFFSET if new else 0,
                    "safe": name,
                    "scene": item if stac else f"T{S2_TILE}_{d:%Y%m%d}T100031",
                    "layout": "STAC" if stac else "SAFE",
                    "id": item if stac else name.removesuffix(".SAFE"),
                    "folder": item if stac else name,
                    "generated": gen,
                    "cloud": _draw_cloud(rng, d.month),
                    "cirrus": bool(rng.random() < 0.3),
                }
            )
            k += 1
    return plan


def _granule(spec: dict[str, Any]) -> str:
    """The granule folder of a SAFE: L2A_T<tile>_A<absolute orbit>_<generation time>."""
    return f"L2A_T{S2_TILE}_A{30000 + spec['index']:06d}_{spec['generated']}"


def _native(token: str) -> int:
    return int(catalog().products[S2_PRODUCT].raw["native_resolution_m"][token])


def _fine(arr: np.ndarray, grid: Grid, res: int) -> tuple[np.ndarray, Grid]:
    """A band on its native grid: the 10 m bands repeat each 20 m value over its 2 x 2 pixels (so every
    site pixel reads the same DN as from the 20 m grid)."""
    if res == 20:
        return arr, grid
    k = 20 // res
    t = grid.transform
    fine = Grid(grid.crs, Affine(float(res), 0, t.c, 0, -float(res), t.f), (grid.shape[0] * k, grid.shape[1] * k))
    return np.repeat(np.repeat(arr, k, axis=0), k, axis=1), fine


def _write_safe(spec: dict[str, Any], folder: Path, bands: dict[str, np.ndarray], grid: Grid) -> None:
    """A SAFE folder as ESA distributes it: GRANULE/<id>/IMG_DATA/R10m|R20m/<scene>_<band>_<res>m.jp2, each
    band at its native resolution only, and MTD_MSIL2A.xml naming them."""
    img = Path("GRANULE") / _granule(spec) / "IMG_DATA"
    files = []
    for token, arr in bands.items():
        res = _native(token)
        rel = img / f"R{res}m" / f"{spec['scene']}_{token}_{res}m.jp2"
        (folder / rel.parent).mkdir(parents=True, exist_ok=True)
        write_jp2(folder / rel, *_fine(arr, grid, res))
        files.append(rel.as_posix())
    (folder / "MTD_MSIL2A.xml").write_text(_mtd_xml(spec, files), encoding="utf-8")


#: Element84 earth-search asset keys of the bands the demo writes
_ASSET_KEYS = {
    "B02": "blue",
    "B03": "green",
    "B04": "red",
    "B8A": "nir08",
    "B11": "swir16",
    "B12": "swir22",
    "SCL": "scl",
}


def _write_stac(
    model: DemoSiteModel, spec: dict[str, Any], folder: Path, bands: dict[str, np.ndarray], grid: Grid
) -> None:
    """The Element84 / AWS layout: one COG per band at its native resolution (B04.tif, SCL.tif ...) beside
    the STAC item, whose asset hrefs are the archive's URLs (only the file names are local)."""
    import pystac

    from reviewer.record.synthetic.products import _lonlat

    folder.mkdir(parents=True, exist_ok=True)
    d = spec["date"]
    w, s, e, n = grid.bounds
    lon, lat = _lonlat(model, [w, e, e, w], [n, n, s, s])
    ring = [[round(x, 7), round(y, 7)] for x, y in zip(lon, lat, strict=True)]
    item = pystac.Item(
        id=spec["id"],
        geometry={"type": "Polygon", "coordinates": [[*ring, ring[0]]]},
        bbox=[min(lon), min(lat), max(lon), max(lat)],
        datetime=dt.datetime(d.year, d.month, d.day, 10, 0, 31, 24000, tzinfo=dt.UTC),
        properties={
            "constellation": "sentinel-2",
            "platform": "sentinel-2a" if spec["sat"] == "S2A" else "sentinel-2b",
            "instruments": ["msi"],
            "s2:product_type": "S2MSI2A",
            "s2:processing_baseline": "04.00" if spec["baseline"] == "N0400" else "02.13",
            "s2:product_uri": spec["safe"],
            "s2:mgrs_tile": S2_TILE,
            "grid:code": f"MGRS-{S2_TILE}",
            "proj:epsg": int(grid.crs.to_epsg()),
            "earthsearch:boa_offset_applied": False,
        },
    )
    base = f"https://sentinel-cogs.s3.us-west-2.amazonaws.com/sentinel-s2-l2a-cogs/{S2_TILE[:2]}/{S2_TILE[2]}/{S2_TILE[3:]}/{d.year}/{d.month}/{spec['id']}"
    for token, arr in bands.items():
        write_cog(folder / f"{token}.tif", *_fine(arr, grid, _native(token)))
        item.add_asset(_ASSET_KEYS[token], pystac.Asset(href=f"{base}/{token}.tif", media_type=pystac.MediaType.COG))
    doc = item.to_dict(include_self_link=False)
    (folder / f"{spec['id']}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _mtd_xml(spec: dict[str, Any], files: list[str]) -> str:
    d = spec["date"]
    pb = "04.00" if spec["baseline"] == "N0400" else "02.13"
    craft = "Sentinel-2A" if spec["sat"] == "S2A" else "Sentinel-2B"
    gen = dt.datetime.strptime(spec["generated"], "%Y%m%dT%H%M%S")
    images = "\n".join(f"                        <IMAGE_FILE>{f.rsplit('.', 1)[0]}</IMAGE_FILE>" for f in files)
    offsets = ""
    if spec["offset"]:
        band_ids = sorted(catalog().products[S2_PRODUCT].raw["radiometric_offset"]["band_ids"].values())
        rows = "\n".join(f'        <BOA_ADD_OFFSET band_id="{i}">{spec["offset"]}</BOA_ADD_OFFSET>' for i in band_ids)
        offsets = f"            <BOA_ADD_OFFSET_VALUES_LIST>\n{rows}\n      </BOA_ADD_OFFSET_VALUES_LIST>\n"
    return f"""<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<n1:Level-2A_User_Product xmlns:n1="https://psd-14.sentinel2.eo.esa.int/PSD/User_Product_Level-2A.xsd" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="https://psd-14.sentinel2.eo.esa.int/PSD/User_Product_Level-2A.xsd">
    <n1:General_Info>
        <Product_Info>
            <PRODUCT_START_TIME>{d:%Y-%m-%d}T10:00:31.024Z</PRODUCT_START_TIME>
            <PRODUCT_STOP_TIME>{d:%Y-%m-%d}T10:00:31.024Z</PRODUCT_STOP_TIME>
            <PRODUCT_URI>{spec["safe"]}</PRODUCT_URI>
            <PROCESSING_LEVEL>Level-2A</PROCESSING_LEVEL>
            <PRODUCT_TYPE>S2MSI2A</PRODUCT_TYPE>
            <PROCESSING_BASELINE>{pb}</PROCESSING_BASELINE>
            <GENERATION_TIME>{gen:%Y-%m-%dT%H:%M:%S}.000000Z</GENERATION_TIME>
            <PREVIEW_IMAGE_URL>Not applicable</PREVIEW_IMAGE_URL>
            <PREVIEW_GEO_INFO>Not applicable</PREVIEW_GEO_INFO>
            <Datatake datatakeIdentifier="G{spec["sat"]}_{d:%Y%m%d}T100031_000000_N{pb}">
      <SPACECRAFT_NAME>{craft}</SPACECRAFT_NAME>
      <DATATAKE_TYPE>INS-NOBS</DATATAKE_TYPE>
      <DATATAKE_SENSING_START>{d:%Y-%m-%d}T10:00:31.024Z</DATATAKE_SENSING_START>
      <SENSING_ORBIT_NUMBER>{int(S2_ORBIT[1:])}</SENSING_ORBIT_NUMBER>
      <SENSING_ORBIT_DIRECTION>DESCENDING</SENSING_ORBIT_DIRECTION>
    </Datatake>
<Query_Options completeSingleTile="true">
<PRODUCT_FORMAT>SAFE_COMPACT</PRODUCT_FORMAT>
</Query_Options>
<Product_Organisation>
                <Granule_List>
                    <Granule granuleIdentifier="{spec["sat"]}_OPER_MSI_L2A_TL_SYNT_{spec["generated"]}_T{S2_TILE}_N{pb}" imageFormat="JPEG2000">
{images}
                    </Granule>
                </Granule_List>
</Product_Organisation>
        </Product_Info>
        <Product_Image_Characteristics>
            <Special_Values>
                <SPECIAL_VALUE_TEXT>NODATA</SPECIAL_VALUE_TEXT>
                <SPECIAL_VALUE_INDEX>0</SPECIAL_VALUE_INDEX>
            </Special_Values>
            <Special_Values>
                <SPECIAL_VALUE_TEXT>SATURATED</SPECIAL_VALUE_TEXT>
                <SPECIAL_VALUE_INDEX>65535</SPECIAL_VALUE_INDEX>
            </Special_Values>
            <QUANTIFICATION_VALUES_LIST>
                <BOA_QUANTIFICATION_VALUE unit="none">{S2_QUANTIFICATION:g}</BOA_QUANTIFICATION_VALUE>
                <AOT_QUANTIFICATION_VALUE unit="none">1000.0</AOT_QUANTIFICATION_VALUE>
                <WVP_QUANTIFICATION_VALUE unit="cm">1000.0</WVP_QUANTIFICATION_VALUE>
            </QUANTIFICATION_VALUES_LIST>
{offsets}        </Product_Image_Characteristics>
    </n1:General_Info>
</n1:Level-2A_User_Product>
"""


def _render_s2(model: DemoSiteModel, spec: dict[str, Any], root: Path, opts: dict[str, Any]) -> dict[str, Any]:
    d = spec["date"]
    rng = _rng(model.seed, 3, spec["index"])
    grid = _s2_grid(model)
    m = grid.shape[0]
    idx = np.minimum(((np.arange(m) + 0.5) * 20.0 / RES).astype(int), model.size - 1)
    rho30, cls30, sm30 = model.surface(d)
    rho = rho30[:, idx][:, :, idx]
    cls = cls30[idx][:, idx]
    sm = sm30[idx][:, idx] if sm30 is not None else None
    ndvi = (rho[3] - rho[2]) / np.maximum(rho[3] + rho[2], 1e-6)
    cl = _clouds(rng, (m, m), spec["cloud"], spec["cirrus"], max(0.75, m / 200.0))
    scl = np.where(ndvi > 0.3, 4, 5).astype(np.uint8)
    scl[cls == WATER] = 6
    if sm is not None:
        scl[sm] = 11
    if cl is not None:
        _apply_clouds(rho, cl, CLOUD)
        scl[cl.shadow] = 3
        scl[cl.cloud] = np.where(cl.alpha[cl.cloud] < 0.8, 8, 9)
        scl[cl.cirrus] = 10
    coeff = HLS_S2_TO_OLI[spec["sat"]]
    s2 = catalog().products[S2_PRODUCT]
    bands: dict[str, np.ndarray] = {}
    for i, b in enumerate(BANDS):
        slope, icpt = coeff[b]
        msi = (rho[i] - icpt) / slope + 0.002 * rng.standard_normal((m, m), dtype=np.float32)
        bands[s2.band_by_name(b).token] = np.clip(np.rint(msi * S2_QUANTIFICATION - spec["offset"]), 1, 65534).astype(
            np.uint16
        )
    bands["SCL"] = scl
    if spec["layout"] == "STAC":
        _write_stac(model, spec, root / spec["folder"], bands, grid)
    else:
        _write_safe(spec, root / spec["folder"], bands, grid)
    npx = m * m
    return {
        "id": spec["id"],
        "scene": spec["scene"],
        "layout": spec["layout"],
        "folder": f"sentinel2/{spec['folder']}",
        "date": _date_iso(d),
        "spacecraft": spec["sat"],
        "processing_baseline": spec["baseline"],
        "boa_add_offset": spec["offset"],
        "cloud_fraction": round(float(np.isin(scl, (8, 9, 10)).sum() / npx), 5),
        "shadow_fraction": round(float((scl == 3).sum() / npx), 5),
    }
