"""Coarse products of the synthetic demo site on the MODIS sinusoidal grid: MODIS/VIIRS NDVI composites, MOD10A1 snow."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from affine import Affine
from rasterio.crs import CRS
from rasterio.warp import transform as warp_transform

from reviewer.record.catalog import catalog
from reviewer.record.synthetic.common import (
    MODIS_250,
    MODIS_500,
    SINU_TILE,
    SINU_WKT,
    SINU_X0,
    SINU_Y0,
    _doy,
    _rng,
    _smooth,
)
from reviewer.record.synthetic.effects import _cloud_month_p
from reviewer.record.synthetic.formats import Layer, core_metadata, write_hdf4, write_hdf5
from reviewer.record.synthetic.model import DemoSiteModel, Grid


# --------------------------------------------------------------------------------------------------------------
# Coarse products on the MODIS sinusoidal grid
# --------------------------------------------------------------------------------------------------------------
@dataclass
class Coarse:
    """A sinusoidal grid covering the site and the mapping site pixel -> coarse pixel for area averaging."""

    grid: Grid
    tile: str
    pairs_coarse: np.ndarray
    pairs_site: np.ndarray
    counts: np.ndarray

    def mean(self, values: np.ndarray) -> np.ndarray:
        s = np.bincount(self.pairs_coarse, weights=values.ravel()[self.pairs_site], minlength=self.counts.size)
        return (s / self.counts).reshape(self.grid.shape)


def _coarse(model: DemoSiteModel, px: float) -> Coarse:
    sinu = CRS.from_string(SINU_WKT)
    n = model.size
    t = model.grid.transform
    w, s, e, nn = model.grid.bounds
    edge = np.linspace(0, 1, 41)
    xs = np.concatenate([w + (e - w) * edge, np.full(41, e), w + (e - w) * edge, np.full(41, w)])
    ys = np.concatenate([np.full(41, nn), s + (nn - s) * edge, np.full(41, s), s + (nn - s) * edge])
    sx, sy = warp_transform(model.grid.crs, sinu, xs.tolist(), ys.tolist())
    c0 = math.floor((min(sx) - SINU_X0) / px)
    c1 = math.ceil((max(sx) - SINU_X0) / px)
    r0 = math.floor((SINU_Y0 - max(sy)) / px)
    r1 = math.ceil((SINU_Y0 - min(sy)) / px)
    shape = (r1 - r0, c1 - c0)
    ct = Affine(px, 0, SINU_X0 + c0 * px, 0, -px, SINU_Y0 - r0 * px)
    # site pixel centres -> coarse pixel
    rr, cc = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5, indexing="ij")
    ux = (t.c + cc * t.a).ravel()
    uy = (t.f + rr * t.e).ravel()
    qx, qy = warp_transform(model.grid.crs, sinu, ux, uy)
    qc = np.floor((np.asarray(qx) - ct.c) / px).astype(np.int64)
    qr = np.floor((ct.f - np.asarray(qy)) / px).astype(np.int64)
    ok = (qc >= 0) & (qc < shape[1]) & (qr >= 0) & (qr < shape[0])
    pc = (qr * shape[1] + qc)[ok]
    ps = np.flatnonzero(ok)
    counts = np.bincount(pc, minlength=shape[0] * shape[1]).astype(np.float64)
    empty = np.flatnonzero(counts == 0)
    if empty.size:  # coarse pixels beyond the site take the nearest site pixel
        er, ec = np.divmod(empty, shape[1])
        ex, ey = warp_transform(
            sinu,
            model.grid.crs,
            (ct.c + (ec + 0.5) * px).tolist(),
            (ct.f - (er + 0.5) * px).tolist(),
        )
        sc = np.clip(np.floor((np.asarray(ex) - t.c) / t.a), 0, n - 1).astype(np.int64)
        sr = np.clip(np.floor((np.asarray(ey) - t.f) / t.e), 0, n - 1).astype(np.int64)
        pc = np.concatenate([pc, empty])
        ps = np.concatenate([ps, sr * n + sc])
        counts[empty] = 1
    cx, cy = warp_transform(model.grid.crs, sinu, [(w + e) / 2], [(s + nn) / 2])
    h = int((cx[0] - SINU_X0) // SINU_TILE)
    v = int((SINU_Y0 - cy[0]) // SINU_TILE)
    return Coarse(Grid(sinu, ct, shape), f"h{h:02d}v{v:02d}", pc, ps, counts)


#: catalog product of each granule prefix (its container row names the grid and the SDS as distributed)
_PRODUCT_IDS = {
    "MOD13Q1": "modis_terra_mod13q1",
    "MYD13Q1": "modis_aqua_myd13q1",
    "VNP13A1": "viirs_npp_vnp13a1",
    "MOD10A1": "modis_terra_mod10a1",
}


def _vi_row(prod: str, doy0: int, coll: str, px: float, rdtype: type, rfill: int) -> tuple:
    """(first date, first DOY of the 16-day cycle, collection, pixel size, NDVI fill, reliability dtype, fill):
    the first date and the fill are the catalogue row's (the reader's), the rest the product's layout."""
    row = catalog().products[_PRODUCT_IDS[prod]]
    assert row.first_date is not None and row.bands["NDVI"].fill is not None, prod
    return (row.first_date, doy0, coll, px, int(row.bands["NDVI"].fill), rdtype, rfill)


VI_PRODUCTS = {
    "MOD13Q1": _vi_row("MOD13Q1", 1, "061", MODIS_250, np.int8, -1),
    "MYD13Q1": _vi_row("MYD13Q1", 9, "061", MODIS_250, np.int8, -1),
    "VNP13A1": _vi_row("VNP13A1", 1, "002", MODIS_500, np.uint8, 255),
}
#: the VI bands' DN per unit and valid DN range, from MOD13Q1's row (MYD13Q1 and VNP13A1 state the same)
_VI = catalog().products["modis_terra_mod13q1"].bands["NDVI"]
VI_DN_PER_UNIT = round(1 / _VI.scale)
assert _VI.valid is not None
VI_VALID = (int(_VI.valid[0]), int(_VI.valid[1]))


def _stamp(rng: np.random.Generator, d: dt.date) -> str:
    p = d + dt.timedelta(days=int(rng.integers(14, 26)))
    if p < dt.date(2021, 6, 1):
        p = dt.date(2021, 6, 1) + dt.timedelta(days=int(rng.integers(0, 300)))
    return f"{p.year}{_doy(p):03d}{int(rng.integers(0, 24)):02d}{int(rng.integers(0, 60)):02d}{int(rng.integers(0, 60)):02d}"


def _render_vi_year(model: DemoSiteModel, task: dict[str, Any], root: Path, opts: dict[str, Any]) -> dict[str, Any]:
    prod, year = task["product"], task["year"]
    first, doy0, coll, px, fill, rdtype, rfill = VI_PRODUCTS[prod]
    coarse: Coarse = opts["coarse250"] if px == MODIS_250 else opts["coarse500"]
    code = {"MOD13Q1": 1, "MYD13Q1": 2, "VNP13A1": 3}[prod]
    rng = _rng(model.seed, 4, code, year)
    shape = coarse.grid.shape
    written = 0
    for doy in range(doy0, 366, 16):
        start = dt.date(year, 1, 1) + dt.timedelta(days=doy - 1)
        if start < first or start.year != year:
            continue
        mid = start + dt.timedelta(days=8)
        rho, _, sm = model.surface(mid, (2, 3))
        red, nir = coarse.mean(rho[0]), coarse.mean(rho[1])
        ndvi = (nir - red) / np.maximum(nir + red, 1e-6) + 0.01 * rng.standard_normal(shape)
        snowf = coarse.mean(sm.astype(np.float32)) if sm is not None else np.zeros(shape)
        p_cloud = _cloud_month_p(mid.month) * 0.35
        cloud = np.zeros(shape, bool)
        cf = float(rng.uniform(0, p_cloud))
        if cf > 0.02:
            f = _smooth(rng, shape, max(shape) / 3)
            cloud = f > np.quantile(f, 1 - cf)
        marginal = (rng.random(shape) < 0.1) & ~cloud
        snow = (snowf > 0.5) & ~cloud
        ndvi = np.where(cloud, ndvi * 0.3, ndvi)
        ndvi = np.where(marginal, ndvi - np.abs(0.05 * rng.standard_normal(shape)), ndvi)
        nd = _dn(ndvi)
        if prod == "VNP13A1":
            rel = np.where(rng.random(shape) < 0.7, 0, np.where(rng.random(shape) < 0.6, 1, 2)).astype(np.uint8)
            rel[marginal] = 5
            rel[snow] = 8
            rel[cloud] = 9
        else:
            rel = np.zeros(shape, np.int8)
            rel[marginal] = 1
            rel[snow] = 2
            rel[cloud] = 3
        stem = f"{prod}.A{year}{doy:03d}.{coarse.tile}.{coll}.{_stamp(rng, start)}"
        folder = root / ("viirs" if prod == "VNP13A1" else "modis")
        evi = np.where(cloud, 0.3, 1.0) * 2.5 * (nir - red) / np.maximum(nir + 2.4 * red + 1.0, 1e-6)
        layers = _vi_layers(prod, nd, _dn(evi), _vi_quality(marginal, snow, cloud), rel.astype(rdtype), fill, rfill)
        _write_granule(folder / stem, prod, coarse, layers, start, 16)
        written += 1
    return {"product": prod, "year": year, "composites": written}


def _dn(v: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(v * VI_DN_PER_UNIT), *VI_VALID).astype(np.int16)


def _vi_quality(marginal: np.ndarray, snow: np.ndarray, cloud: np.ndarray) -> np.ndarray:
    """VI Quality bits: 0-1 MODLAND QA (0 good, 1 check other QA, 2 cloudy), 10 mixed clouds, 14 snow/ice."""
    q = np.zeros(marginal.shape, np.uint16)
    q[marginal] = 1
    q[snow] = 1 | (1 << 14)
    q[cloud] = 2 | (1 << 10)
    return q


def _vi_layers(
    prod: str, ndvi: np.ndarray, evi: np.ndarray, quality: np.ndarray, rel: np.ndarray, fill: int, rfill: int
) -> dict[str, Layer]:
    """The SDS of a MOD13Q1/MYD13Q1 or VNP13A1 granule by catalog band token, with their own attributes."""
    res = "250m" if prod != "VNP13A1" else "500 m"

    def vi(data: np.ndarray, what: str) -> Layer:
        return Layer(
            "", data, fill, long_name=f"{res} 16 days {what}", units=what, valid_range=list(VI_VALID),
            scale_factor=float(VI_DN_PER_UNIT), add_offset=0.0,
        )  # fmt: skip

    layers = {
        "NDVI": vi(ndvi, "NDVI"),
        "EVI": vi(evi, "EVI"),
        "VI_Quality": Layer("", quality, 65535, long_name=f"{res} 16 days VI Quality", units="bit field"),
        "pixel_reliability": Layer(
            "",
            rel,
            rfill,
            long_name=f"{res} 16 days pixel reliability",
            units="rank",
            valid_range=[0, 3] if prod != "VNP13A1" else [0, 11],
        ),  # fmt: skip
    }
    if prod == "VNP13A1":
        layers["EVI2"] = vi(evi, "EVI2")
    return layers


def _snow_layers(val: np.ndarray) -> dict[str, Layer]:
    """MOD10A1 C6.1: the NDSI snow cover with its special codes, basic QA (0 best, 1 good) and the flags."""
    basic = np.where(val <= 100, 0, 1).astype(np.uint8)
    basic[val == 237] = 0
    key = "0-100=NDSI snow, 200=missing data, 201=no decision, 211=night, 237=inland water, 239=ocean, 250=cloud, 254=detector saturated, 255=fill"
    return {
        "NDSI_Snow_Cover": Layer("", val, 255, long_name="NDSI snow cover", valid_range=[0, 100], Key=key),
        "NDSI_Snow_Cover_Basic_QA": Layer(
            "",
            basic,
            255,
            long_name="NDSI snow cover general quality value",
            valid_range=[0, 4],
            Key="0=best, 1=good, 2=ok, 3=poor-not used, 4=other-not used, 211=night, 239=ocean, 255=unusable input or no data",
        ),  # fmt: skip
        "NDSI_Snow_Cover_Algorithm_Flags_QA": Layer(
            "", np.zeros(val.shape, np.uint8), None, long_name="NDSI snow cover algorithm bit flags"
        ),
    }


def _write_granule(stem: Path, prod: str, coarse: Coarse, layers: dict[str, Layer], start: dt.date, days: int) -> None:
    """One granule as distributed (MODIS HDF4, VIIRS HDF5), SDS names and grid from the catalog's container."""
    box = catalog().products[_PRODUCT_IDS[prod]].raw["containers"][0]
    ordered = []
    for token, name in box["layers"].items():
        layer = layers[token]
        layer.name = name
        ordered.append(layer)
    if box["format"] == "hdf5":
        write_hdf5(stem.with_name(stem.name + ".h5"), box["grid"], coarse.grid, ordered)
    else:
        core = core_metadata(stem.name + ".hdf", coarse.tile, start, days)
        write_hdf4(stem.with_name(stem.name + ".hdf"), box["grid"], coarse.grid, ordered, core)


def _snow_winters(model: DemoSiteModel) -> list[int]:
    """Winters (year of January) with MOD10A1 daily files: the last five inside the record."""
    ws = [w for w in range(model.start + 1, model.end + 1) if w >= 2001]
    return ws[-5:]


def _render_mod10_winter(
    model: DemoSiteModel, task: dict[str, Any], root: Path, opts: dict[str, Any]
) -> dict[str, Any]:
    winter = task["winter"]
    coarse: Coarse = opts["coarse500"]
    rng = _rng(model.seed, 6, winter)
    shape = coarse.grid.shape
    d = dt.date(winter - 1, 12, 1)
    stop = dt.date(winter, 3, 31)
    days = 0
    while d <= stop:
        sm = model.snow_mask(d)
        waterf = coarse.mean(model.water(d.year).astype(np.float32))
        snowf = coarse.mean(sm.astype(np.float32)) if sm is not None else np.zeros(shape)
        val = np.where(snowf >= 0.5, np.rint(45 + 45 * snowf), 0).astype(np.uint8)
        val[waterf > 0.5] = 237
        cf = float(rng.uniform(0.6, 1.0)) if rng.random() < 0.45 else float(rng.uniform(0, 0.2))
        if cf > 0.02:
            f = _smooth(rng, shape, max(shape) / 3)
            val[f > np.quantile(f, 1 - cf)] = 250
        stem = f"MOD10A1.A{d.year}{_doy(d):03d}.{coarse.tile}.061.{_stamp(rng, d)}"
        _write_granule(root / "modis" / stem, "MOD10A1", coarse, _snow_layers(val), d, 1)
        d += dt.timedelta(days=1)
        days += 1
    return {"winter": winter, "days": days}
