"""Landsat Collection 2 Level-2 scenes of the synthetic demo site (TM, ETM+, OLI, OLI-2): plan, MTL, rendering."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import numpy as np
from affine import Affine

from reviewer.record.stack import harmonization
from reviewer.record.synthetic.common import (
    BANDS,
    CLOUD,
    MISSION_META,
    MISSIONS,
    NOISE_SD,
    QA_CODES,
    RES,
    SLC_OFF,
    SR_FLOOR,
    SR_OFFSET,
    SR_SATURATED_DN,
    SR_SCALE,
    ST_OFFSET,
    ST_SCALE,
    UTM_ZONE,
    WATER,
    WRS_PATH,
    WRS_ROW,
    _date_iso,
    _doy,
    _mission_window,
    _rng,
    _write,
)
from reviewer.record.synthetic.effects import _apply_clouds, _clouds, _draw_cloud, _pad, _shift, _slc_gaps
from reviewer.record.synthetic.model import DemoSiteModel, Grid


# --------------------------------------------------------------------------------------------------------------
# Landsat
# --------------------------------------------------------------------------------------------------------------
def _landsat_plan(model: DemoSiteModel, scenes_per_year: int, seed: int) -> list[dict[str, Any]]:
    """The Landsat scenes of the site. A mission-year's picks and a scene's draws come from their own streams
    ((seed, mission, year) and (seed, mission, date)), so a change to one mission's window leaves the others'
    scenes as they were."""
    plan: list[dict[str, Any]] = []
    for year in range(model.start, model.end + 1):
        for m, (prefix, fam, pid, ref) in enumerate(MISSIONS):
            first, last = _mission_window(prefix, pid)
            rng = _rng(seed, 10, m, year)
            lo = max(first, dt.date(year, 1, 1))
            hi = min(last or dt.date(year, 12, 31), dt.date(year, 12, 31))
            if lo > hi:
                continue
            k0 = math.ceil((lo - ref).days / 16)
            cands = []
            k = k0
            while True:
                d = ref + dt.timedelta(days=16 * k)
                if d > hi:
                    break
                if d >= lo:
                    cands.append(d)
                k += 1
            if not cands:
                continue
            n = min(len(cands), max(1, int(round(scenes_per_year * len(cands) / 23.0))))
            n = min(n, scenes_per_year, len(cands)) if len(cands) >= 20 else n
            if rng.random() < 0.12 and n > 1:
                n = max(1, n // 2)  # some years have fewer usable acquisitions
            bins = np.array_split(np.arange(len(cands)), n)
            for b in bins:
                d = cands[int(rng.choice(b))]
                plan.append({"prefix": prefix, "family": fam, "product": pid, "mission": m, "date": d})
    plan.sort(key=lambda s: (s["date"], s["prefix"]))
    for i, s in enumerate(plan):
        d = s["date"]
        rng = _rng(seed, 10, s.pop("mission"), d.toordinal())
        s["index"] = i
        s["cloud"] = _draw_cloud(rng, d.month)
        s["cirrus"] = s["family"] == "oli" and s["cloud"] > 0 and rng.random() < 0.35
        s["saturate"] = s["cloud"] > 0.1 and rng.random() < 0.3
        s["slc_off"] = s["prefix"] == "LE07" and d > SLC_OFF
        s["tier"] = "T1"
        s["shift"] = None
        s["pad"] = None
        s["missed"] = int(rng.integers(1, 3)) if rng.random() < 0.05 else 0
        if d < dt.date(2020, 8, 1):
            proc = dt.date(2020, 8, 15) + dt.timedelta(days=int(rng.integers(0, 240)))
        else:
            proc = d + dt.timedelta(days=int(rng.integers(6, 25)))
        s["processed"] = proc
        r = rng.random()
        if r < 0.04:
            s["tier"] = "T2"
        elif r < 0.07:
            s["pad"] = tuple(int(v) for v in rng.integers(2, 9, 4))
    # Guarantee each trap at least once on a site with enough scenes.
    rng = _rng(seed, 10)
    if len(plan) >= 10:
        t1 = [s for s in plan if s["tier"] == "T1" and s["pad"] is None]
        if not any(s["tier"] == "T2" for s in plan) and t1:
            t1[int(rng.integers(len(t1)))]["tier"] = "T2"
        t1 = [s for s in plan if s["tier"] == "T1" and s["pad"] is None]
        if not any(s["pad"] for s in plan) and t1:
            t1[int(rng.integers(len(t1)))]["pad"] = tuple(int(v) for v in rng.integers(2, 9, 4))
        if not any(s["missed"] for s in plan):
            plan[int(rng.integers(len(plan)))]["missed"] = 1
    for s in plan:
        if s["tier"] == "T2":
            mag = rng.integers(2, 7, 2) * rng.choice([-1, 1], 2)
            s["shift"] = (int(mag[0]), int(mag[1]))
            if s["cloud"] == 0 and rng.random() < 0.5:
                s["cloud"] = float(round(rng.uniform(0.3, 0.7), 3))
        level = "L2SP"
        s["id"] = (
            f"{s['prefix']}_{level}_{WRS_PATH:03d}{WRS_ROW:03d}_{s['date']:%Y%m%d}_"
            f"{s['processed']:%Y%m%d}_02_{s['tier']}"
        )
    return plan


def _thermal(cls: np.ndarray, d: dt.date, snow: np.ndarray | None) -> np.ndarray:
    s = math.cos(2 * math.pi * (_doy(d) - 200) / 365.25)
    base = np.array(
        [
            284 + 8 * s,
            287 + 11 * s,
            289 + 13 * s,
            289 + 14 * s,
            289 + 13 * s,
            291 + 16 * s,
            292 + 16 * s,
        ],
        dtype=np.float32,
    )
    t = base[cls]
    if snow is not None:
        t[snow] = 268.0
    return t


def _mtl(spec: dict[str, Any], files: list[str], grid: Grid, cloud_cover: float, thermal: bool) -> str:
    sc_id, sensor, tm = MISSION_META[spec["prefix"]]
    pid = spec["id"]
    w, s, e, n = grid.bounds
    fam = spec["family"]
    sr_bands = [1, 2, 3, 4, 5, 6, 7] if fam == "oli" else [1, 2, 3, 4, 5, 7]
    lines = [
        "GROUP = LANDSAT_METADATA_FILE",
        "  GROUP = PRODUCT_CONTENTS",
        '    ORIGIN = "Image courtesy of the U.S. Geological Survey (synthetic demo product)"',
        f'    LANDSAT_PRODUCT_ID = "{pid}"',
        f'    PROCESSING_LEVEL = "{pid.split("_")[1]}"',
        "    COLLECTION_NUMBER = 02",
        f'    COLLECTION_CATEGORY = "{spec["tier"]}"',
        '    OUTPUT_FORMAT = "GEOTIFF"',
    ]
    lines += [f'    FILE_NAME_{f.rsplit(".", 1)[0][len(pid) + 1 :]} = "{f}"' for f in files]
    lines += [
        "  END_GROUP = PRODUCT_CONTENTS",
        "  GROUP = IMAGE_ATTRIBUTES",
        f'    SPACECRAFT_ID = "{sc_id}"',
        f'    SENSOR_ID = "{sensor}"',
        "    WRS_TYPE = 2",
        f"    WRS_PATH = {WRS_PATH}",
        f"    WRS_ROW = {WRS_ROW}",
        f"    DATE_ACQUIRED = {spec['date']:%Y-%m-%d}",
        f'    SCENE_CENTER_TIME = "{tm}.0000000Z"',
        f"    CLOUD_COVER = {cloud_cover * 100:.2f}",
        f"    CLOUD_COVER_LAND = {cloud_cover * 100:.2f}",
        "  END_GROUP = IMAGE_ATTRIBUTES",
        "  GROUP = PROJECTION_ATTRIBUTES",
        '    MAP_PROJECTION = "UTM"',
        '    DATUM = "WGS84"',
        '    ELLIPSOID = "WGS84"',
        f"    UTM_ZONE = {UTM_ZONE}",
        "    GRID_CELL_SIZE_REFLECTIVE = 30.00",
        "    GRID_CELL_SIZE_THERMAL = 30.00",
        f"    REFLECTIVE_LINES = {grid.shape[0]}",
        f"    REFLECTIVE_SAMPLES = {grid.shape[1]}",
        '    ORIENTATION = "NORTH_UP"',
        f"    CORNER_UL_PROJECTION_X_PRODUCT = {w:.3f}",
        f"    CORNER_UL_PROJECTION_Y_PRODUCT = {n:.3f}",
        f"    CORNER_LR_PROJECTION_X_PRODUCT = {e:.3f}",
        f"    CORNER_LR_PROJECTION_Y_PRODUCT = {s:.3f}",
        "  END_GROUP = PROJECTION_ATTRIBUTES",
        "  GROUP = LEVEL2_PROCESSING_RECORD",
        f"    DATE_PRODUCT_GENERATED = {spec['processed']:%Y-%m-%d}T10:00:00Z",
        "  END_GROUP = LEVEL2_PROCESSING_RECORD",
        "  GROUP = LEVEL2_SURFACE_REFLECTANCE_PARAMETERS",
    ]
    lines += [f"    REFLECTANCE_MULT_BAND_{b} = {SR_SCALE!r}" for b in sr_bands]
    lines += [f"    REFLECTANCE_ADD_BAND_{b} = {SR_OFFSET!r}" for b in sr_bands]
    lines += ["  END_GROUP = LEVEL2_SURFACE_REFLECTANCE_PARAMETERS"]
    if thermal:
        st = "ST_B10" if fam == "oli" else "ST_B6"
        lines += [
            "  GROUP = LEVEL2_SURFACE_TEMPERATURE_PARAMETERS",
            f"    TEMPERATURE_MULT_BAND_{st} = {ST_SCALE!r}",
            f"    TEMPERATURE_ADD_BAND_{st} = {ST_OFFSET!r}",
            "  END_GROUP = LEVEL2_SURFACE_TEMPERATURE_PARAMETERS",
        ]
    lines += ["END_GROUP = LANDSAT_METADATA_FILE", "END", ""]
    return "\n".join(lines)


def _render_landsat(model: DemoSiteModel, spec: dict[str, Any], root: Path, opts: dict[str, Any]) -> dict[str, Any]:
    """Write one Landsat C2 L2 scene (SR, ST, QA_PIXEL, QA_RADSAT, MTL) and return its truth entry. The scene's
    random stream is drawn in a fixed order: clouds, missed clouds, band noise, thermal noise, SLC-off gaps."""
    n = model.size
    d = spec["date"]
    fam = spec["family"]
    rng = _rng(model.seed, 2, spec["index"])
    rho, cls, sm = model.surface(d)
    water = cls == WATER
    px_scale = max(0.5, n / 200.0)
    cl = _clouds(rng, (n, n), spec["cloud"], spec["cirrus"], px_scale)
    missed = _missed_clouds(rng, rho, n, spec["missed"], px_scale)
    sat = np.zeros((n, n), bool)
    if cl is not None:
        _apply_clouds(rho, cl, CLOUD)
        if spec["saturate"]:
            sat = cl.cloud & (cl.core > (1.0 if fam != "oli" else 1.4))
    qa = _qa_pixel(fam, water, sm, cl)
    arrays, radsat = _sr_bands(rng, _sensor_reflectance(rho, water, fam), fam, sat)
    thermal = opts["thermal"]
    if thermal:
        arrays["ST_B10" if fam == "oli" else "ST_B6"] = _st_band(rng, cls, d, sm, cl)
    arrays["QA_PIXEL"] = qa
    arrays["QA_RADSAT"] = radsat
    arrays, grid = _scene_grid(model, spec, arrays)
    fill = np.zeros(grid.shape, bool)
    gap_target = None
    if spec["slc_off"]:
        fill, gap_target = _slc_gaps(rng, grid.shape)
        for k, v in arrays.items():
            v[fill] = 1 if k == "QA_PIXEL" else 0
    folder = root / spec["id"]
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for k, v in arrays.items():
        fname = f"{spec['id']}_{k}.TIF"
        nodata = None if k.startswith("QA_") else 0
        _write(folder / fname, v, grid.crs, grid.transform, nodata)
        files.append(fname)
    for m in missed:  # centres in the pixel coordinates of the written rasters
        if spec["shift"]:
            m["centre_px"] = [
                m["centre_px"][0] + spec["shift"][0],
                m["centre_px"][1] + spec["shift"][1],
            ]
        if spec["pad"]:
            m["centre_px"] = [
                m["centre_px"][0] + spec["pad"][0],
                m["centre_px"][1] + spec["pad"][1],
            ]
    npx = grid.shape[0] * grid.shape[1]
    cloud_frac = float(((arrays["QA_PIXEL"] & 8) > 0).sum() / npx)
    if opts["mtl"]:
        (folder / f"{spec['id']}_MTL.txt").write_text(_mtl(spec, files, grid, cloud_frac, thermal), encoding="utf-8")
    return _landsat_info(spec, arrays, fill, gap_target, missed, npx, cloud_frac)


def _missed_clouds(
    rng: np.random.Generator, rho: np.ndarray, n: int, count: int, px_scale: float
) -> list[dict[str, Any]]:
    """Clouds the QA misses: bright blobs painted into rho and left marked clear; their places for truth."""
    missed = []
    for _ in range(count):
        rad = max(2, int(rng.integers(2, 6) * px_scale))
        r0, c0 = int(rng.integers(rad, n - rad)), int(rng.integers(rad, n - rad))
        yy, xx = np.ogrid[:n, :n]
        disk = (yy - r0) ** 2 + (xx - c0) ** 2 <= rad * rad
        for i in range(6):
            rho[i][disk] = 0.4 * rho[i][disk] + 0.6 * CLOUD[i]
        missed.append({"centre_px": [r0, c0], "radius_px": rad, "pixels": int(disk.sum())})
    return missed


def _qa_pixel(fam: str, water: np.ndarray, sm: np.ndarray | None, cl: Any) -> np.ndarray:
    """QA_PIXEL with the real CFMask codes of the sensor family (TM/ETM+ or OLI)."""
    codes = QA_CODES["oli" if fam == "oli" else "tm"]
    qa = np.where(water, codes["water"], codes["clear"]).astype(np.uint16)
    if sm is not None:
        qa[sm] = codes["snow"]
    if cl is not None:
        qa[cl.dilated] = codes["dilated"]
        qa[cl.dilated & water] |= 128
        qa[cl.shadow] = codes["shadow"]
        qa[cl.cloud] = codes["cloud"]
        qa[cl.cirrus] = codes["cirrus_cloud"]
    return qa


def _sensor_reflectance(rho: np.ndarray, water: np.ndarray, fam: str) -> np.ndarray:
    """The sensor's reflectance: OLI as modelled; TM/ETM+ through the inverse of Roy et al. 2016 on land."""
    if fam != "oli":
        roy_ols = harmonization()["bands"]  # Roy et al. 2016 Table 2 OLS: OLI = slope * ETM+ + intercept
        for i, b in enumerate(BANDS):
            slope, icpt = roy_ols[b]
            # the regression was fitted over land; inverted on dark water it gives negative NIR/SWIR (NDVI
            # -0.97 against OLI's -0.2), a sensor break the real record does not have: water is left as OLI
            rho[i] = np.where(water, rho[i], (rho[i] - icpt) / slope)
    return rho


def _sr_bands(
    rng: np.random.Generator, rho: np.ndarray, fam: str, sat: np.ndarray
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The SR_B* layers (noise added, scaled to DN, saturated where `sat`) and QA_RADSAT."""
    n = rho.shape[-1]
    if fam != "oli":
        layers = {"SR_B1": 0, "SR_B2": 1, "SR_B3": 2, "SR_B4": 3, "SR_B5": 4, "SR_B7": 5}
        sat_bits = {"SR_B1": 0, "SR_B2": 1, "SR_B3": 2}
    else:
        layers = {
            "SR_B1": -1,
            "SR_B2": 0,
            "SR_B3": 1,
            "SR_B4": 2,
            "SR_B5": 3,
            "SR_B6": 4,
            "SR_B7": 5,
        }
        sat_bits = {"SR_B1": 0, "SR_B2": 1, "SR_B3": 2, "SR_B4": 3}
    arrays: dict[str, np.ndarray] = {}
    radsat = np.zeros((n, n), np.uint16)
    for name, i in layers.items():
        r = rho[0] * 0.9 + 0.008 if i < 0 else rho[i]
        r = np.maximum(r + NOISE_SD * rng.standard_normal((n, n), dtype=np.float32), SR_FLOOR)
        dn = np.clip(np.rint((r - SR_OFFSET) / SR_SCALE), 1, SR_SATURATED_DN - 1).astype(np.uint16)
        if name in sat_bits and sat.any():
            dn[sat] = SR_SATURATED_DN
            radsat[sat] |= np.uint16(1 << sat_bits[name])
        arrays[name] = dn
    return arrays, radsat


def _st_band(rng: np.random.Generator, cls: np.ndarray, d: dt.date, sm: np.ndarray | None, cl: Any) -> np.ndarray:
    """Surface temperature DN: the class temperature, cooler in shadows, cloud tops blended in, plus noise."""
    n = cls.shape[-1]
    t = _thermal(cls, d, sm)
    if cl is not None:
        t[cl.shadow] -= 3.0
        t[cl.cloud] = (1 - cl.alpha[cl.cloud]) * t[cl.cloud] + cl.alpha[cl.cloud] * (
            252.0 + 8 * math.cos(2 * math.pi * (_doy(d) - 200) / 365.25)
        )
    t += 0.4 * rng.standard_normal((n, n), dtype=np.float32)
    return np.clip(np.rint((t - ST_OFFSET) / ST_SCALE), 1, 65535).astype(np.uint16)


def _scene_grid(
    model: DemoSiteModel, spec: dict[str, Any], arrays: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], Grid]:
    """Geometry: tier-2 mis-registration, or a slightly larger/offset grid."""
    n = model.size
    grid = model.grid
    if spec["shift"]:
        dr, dc = spec["shift"]
        arrays = {k: _shift(v, dr, dc) for k, v in arrays.items()}
    if spec["pad"]:
        pt, pl, pb, pr = spec["pad"]
        arrays = {k: _pad(v, spec["pad"]) for k, v in arrays.items()}
        t0 = model.grid.transform
        grid = Grid(
            model.grid.crs,
            Affine(RES, 0, t0.c - pl * RES, 0, -RES, t0.f + pt * RES),
            (n + pt + pb, n + pl + pr),
        )
    return arrays, grid


def _landsat_info(
    spec: dict[str, Any],
    arrays: dict[str, np.ndarray],
    fill: np.ndarray,
    gap_target: Any,
    missed: list[dict[str, Any]],
    npx: int,
    cloud_frac: float,
) -> dict[str, Any]:
    """The scene's truth entry: its QA fractions and the record problems planted in it."""
    qa_f = arrays["QA_PIXEL"]
    fam = spec["family"]
    return {
        "id": spec["id"],
        "product": spec["product"],
        "sensor": {"tm": "TM", "etm": "ETM+", "oli": "OLI"}[fam] if spec["prefix"] != "LC09" else "OLI-2",
        "date": _date_iso(spec["date"]),
        "tier": spec["tier"],
        "cloud_fraction": round(cloud_frac, 5),
        "shadow_fraction": round(float(((qa_f & 16) > 0).sum() / npx), 5),
        "dilated_fraction": round(float(((qa_f & 2) > 0).sum() / npx), 5),
        "snow_fraction": round(float((((qa_f & 32) > 0) & ((qa_f & 8) == 0)).sum() / npx), 5),
        "fill_fraction": round(float(fill.sum() / npx), 5),
        "slc_off": bool(spec["slc_off"]),
        "slc_gap_target": gap_target,
        "saturated_pixels": int((arrays["QA_RADSAT"] > 0).sum()),
        "shift_px": list(spec["shift"]) if spec["shift"] else None,
        "grid": "offset" if spec["pad"] else "site",
        "pad_px": list(spec["pad"]) if spec["pad"] else None,
        "missed_clouds": missed,
    }
