"""Sentinel-2 L2A products of the synthetic demo site: plan, MTD_MSIL2A.xml, rendering."""

from __future__ import annotations

import datetime as dt
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
    S2_OFFSET_FROM,
    S2_ORBIT,
    S2_PRODUCT,
    S2_TILE,
    SITE_NORTH,
    SITE_WEST,
    WATER,
    _date_iso,
    _rng,
    _write,
)
from reviewer.record.synthetic.effects import _apply_clouds, _clouds, _draw_cloud
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
            plan.append(
                {
                    "index": k,
                    "date": d,
                    "sat": sat,
                    "baseline": base,
                    "offset": -1000 if new else 0,
                    "safe": name,
                    "scene": f"T{S2_TILE}_{d:%Y%m%d}T100031",
                    "generated": gen,
                    "cloud": _draw_cloud(rng, d.month),
                    "cirrus": bool(rng.random() < 0.3),
                }
            )
            k += 1
    return plan


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
                    <Granule granuleIdentifier="{spec["sat"]}_OPER_MSI_L2A_TL_SYNT_{spec["generated"]}_T{S2_TILE}_N{pb}" imageFormat="GeoTIFF">
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
                <BOA_QUANTIFICATION_VALUE unit="none">10000</BOA_QUANTIFICATION_VALUE>
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
    folder = root / spec["safe"]
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for i, b in enumerate(BANDS):
        slope, icpt = coeff[b]
        msi = (rho[i] - icpt) / slope + 0.002 * rng.standard_normal((m, m), dtype=np.float32)
        dn = np.clip(np.rint(msi * 10000.0 - spec["offset"]), 1, 65534).astype(np.uint16)
        fname = f"{spec['scene']}_{s2.band_by_name(b).token}_20m.tif"  # the catalog row's band ids
        _write(folder / fname, dn, grid.crs, grid.transform, 0)
        files.append(fname)
    fname = f"{spec['scene']}_SCL_20m.tif"
    _write(folder / fname, scl, grid.crs, grid.transform, 0)
    files.append(fname)
    (folder / "MTD_MSIL2A.xml").write_text(_mtd_xml(spec, files), encoding="utf-8")
    npx = m * m
    return {
        "id": spec["safe"].removesuffix(".SAFE"),
        "scene": spec["scene"],
        "date": _date_iso(d),
        "spacecraft": spec["sat"],
        "processing_baseline": spec["baseline"],
        "boa_add_offset": spec["offset"],
        "cloud_fraction": round(float(np.isin(scl, (8, 9, 10)).sum() / npx), 5),
        "shadow_fraction": round(float((scl == 3).sum() / npx), 5),
    }
