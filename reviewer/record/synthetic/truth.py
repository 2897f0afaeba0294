"""The planted changes of the synthetic demo site as truth.json and truth_masks.npz: one function per change."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import numpy as np

from reviewer.record.stack import harmonization
from reviewer.record.synthetic.coarse import _snow_winters
from reviewer.record.synthetic.common import (
    BANDS,
    BURN,
    BURN1_C,
    BURN1_R,
    BURN2_C,
    BURN2_R,
    CLASS_NAMES,
    CLOUD,
    DORMANT,
    GENERATOR_VERSION,
    GREEN,
    GROWING_MONTHS,
    HLS_S2_TO_OLI,
    LAKE_C,
    LAKE_R,
    NOISE_SD,
    RES,
    SITE_EPSG,
    SNOW,
    SR_FLOOR,
    URBAN_C,
    URBAN_R,
    WRS_PATH,
    WRS_ROW,
    _date_iso,
    _doy,
    _ols_slope,
    _quadrant,
)
from reviewer.record.synthetic.model import DemoSiteModel
from reviewer.record.synthetic.products import _tile_names

logger = logging.getLogger("reviewer.record.synthetic")


# --------------------------------------------------------------------------------------------------------------
# Truth
# --------------------------------------------------------------------------------------------------------------
def _region(
    model: DemoSiteModel,
    mask: np.ndarray,
    *,
    kind: str,
    centre: tuple[float, float] | None = None,
    radius: float | None = None,
    box: list[int] | None = None,
    mask_key: str | None = None,
) -> dict[str, Any]:
    n = model.size
    t = model.grid.transform
    rows, cols = np.nonzero(mask)
    if box is None:
        box = (
            [int(rows.min()), int(cols.min()), int(rows.max()) + 1, int(cols.max()) + 1] if rows.size else [0, 0, 0, 0]
        )
    r0, c0, r1, c1 = box
    out: dict[str, Any] = {
        "kind": kind,
        "pixel_box": box,
        "crs_box": [t.c + c0 * RES, t.f - r1 * RES, t.c + c1 * RES, t.f - r0 * RES],
        "pixels": int(mask.sum()),
        "area_km2": round(float(mask.sum()) * RES * RES / 1e6, 6),
        "quadrant": _quadrant(float(rows.mean()) / n, float(cols.mean()) / n) if rows.size else None,
    }
    if centre is not None:
        cr, cc = centre[0] * n, centre[1] * n
        out["centre_px"] = [round(cr, 3), round(cc, 3)]
        out["centre_xy"] = [round(t.c + cc * RES, 3), round(t.f - cr * RES, 3)]
    if radius is not None:
        out["radius_px"] = round(radius * n, 3)
        out["radius_m"] = round(radius * n * RES, 3)
    if mask_key:
        out["mask"] = mask_key
    return out


def _truth(
    model: DemoSiteModel,
    clim: dict[str, Any],
    params: dict[str, Any],
    landsat: list[dict[str, Any]],
    s2: list[dict[str, Any]],
    files: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """truth.json's document and the masks of truth_masks.npz: one section per planted change."""
    lake_zone, urban_zone = model.extra["lake_zone"], model.extra["urban_zone"]
    vegetated = ~(lake_zone | urban_zone | model.clear_mask | model.burn1_mask | model.burn2_mask)
    regions = _truth_regions(model, vegetated)
    wc_tile, hansen_tile = _tile_names(model)
    doc: dict[str, Any] = {
        "schema_version": "1",
        "generator": {"name": "reviewer.record.synthetic", "version": GENERATOR_VERSION, **params},
        "site_id": params["site_id"],
        "grid": {
            "crs": f"EPSG:{SITE_EPSG}",
            "transform": list(model.grid.transform)[:6],
            "shape": list(model.grid.shape),
            "resolution_m": RES,
            "pixel_area_km2": RES * RES / 1e6,
            "bbox": list(model.grid.bounds),
        },
        "masks_file": "truth_masks.npz",
        "radiometry": _truth_radiometry(),
        "regions": regions,
        "changes": {
            "lake": _truth_lake(model, regions),
            "forest_clearing": _truth_clearing(model, regions),
            **_truth_burns(model),
            "built_up": _truth_built_up(model, regions),
            "drought": _truth_drought(model, vegetated, clim),
            "crop": _truth_crop(model, regions),
            "stable": _truth_stable(model),
            "snow": _truth_snow(model, files),
        },
        "climate": _truth_climate(clim),
        "landsat": _truth_landsat(landsat),
        "sentinel2": s2,
        "files": files,
        "withheld": {
            "hansen_lossyear": f"reference/Hansen_GFC-2024-v1.12_lossyear_{hansen_tile}.tif"
            if files.get("reference")
            else None,
            "worldcover_tile": wc_tile,
        },
    }
    masks = {
        "lake_rank": model.lake_rank,
        "urban_rank": model.urban_rank,
        "clearing": model.clear_mask,
        "burn_1": model.burn1_mask,
        "burn_2": model.burn2_mask,
        "cropland": model.crop_mask,
        "stable": model.stable_mask,
        "vegetated_stable": vegetated,
        "lake_zone": lake_zone,
        "urban_zone": urban_zone,
    }
    return doc, masks


def _km2(px: int) -> float:
    return round(px * (RES * RES / 1e6), 6)


def _years(model: DemoSiteModel) -> list[int]:
    return list(range(model.start, model.end + 1))


def _annual_precip(clim: dict[str, Any]) -> tuple[dict[int, float], float | None]:
    """Mean precipitation per year (m/day) and its 1991-2020 mean (None when the record has none of those years)."""
    tp_annual = {y: round(float(np.mean(v)), 7) for y, v in clim["tp"].items()}
    base_years = [y for y in range(1991, 2021) if y in tp_annual]
    base = float(np.mean([tp_annual[y] for y in base_years])) if base_years else None
    return tp_annual, base


def _truth_climate(clim: dict[str, Any]) -> dict[str, Any]:
    """truth.json's climate section: the ERA5-Land-like series the record's monthly files were written from."""
    tp_annual, base = _annual_precip(clim)
    tp_gs = {y: round(float(np.mean(v[3:9])), 7) for y, v in clim["tp"].items()}
    t_annual = {y: round(float(np.mean(v)), 3) for y, v in clim["t2m"].items()}
    return {
        "first_year": clim["first_year"],
        "tp_annual_m_per_day": {str(y): v for y, v in tp_annual.items()},
        "tp_growing_season_m_per_day": {str(y): v for y, v in tp_gs.items()},
        "tp_1991_2020_mean_m_per_day": round(base, 7) if base is not None else None,
        "t2m_annual_K": {str(y): v for y, v in t_annual.items()},
        "t2m_design_trend_K_per_year": 0.03,
    }


def _truth_regions(model: DemoSiteModel, vegetated: np.ndarray) -> dict[str, Any]:
    """The named regions the questions and the changes refer to."""
    lake_zone, urban_zone, boxes = model.extra["lake_zone"], model.extra["urban_zone"], model.extra["boxes"]
    return {
        "lake": _region(model, lake_zone, kind="circle", centre=LAKE_C, radius=LAKE_R, mask_key="lake_zone"),
        "urban": _region(model, urban_zone, kind="circle", centre=URBAN_C, radius=URBAN_R, mask_key="urban_zone"),
        "clearing": _region(model, model.clear_mask, kind="box", box=boxes["clearing"], mask_key="clearing"),
        "burn_1": _region(
            model,
            model.burn1_mask,
            kind="circle",
            centre=BURN1_C,
            radius=BURN1_R,
            mask_key="burn_1",
        ),
        "burn_2": _region(
            model,
            model.burn2_mask,
            kind="circle",
            centre=BURN2_C,
            radius=BURN2_R,
            mask_key="burn_2",
        ),
        "cropland": _region(model, model.crop_mask, kind="box", box=boxes["cropland"], mask_key="cropland"),
        "stable": _region(model, model.stable_mask, kind="box", box=boxes["stable"], mask_key="stable"),
        "vegetated_stable": _region(model, vegetated, kind="mask", mask_key="vegetated_stable"),
    }


def _truth_radiometry() -> dict[str, Any]:
    """How the record's values were made from the surface model (the spectra, the sensor conversions)."""
    return {
        "reference": "Landsat 8 OLI surface reflectance",
        "bands": list(BANDS),
        "landsat_dn": "DN = round((max(rho + noise, 0.0005) + 0.2) / 2.75e-05), clipped to 1..65454; 65455 where QA_RADSAT flags saturation",
        "etm_tm_from_oli": "rho_etm = (rho_oli - intercept) / slope (inverse of Roy et al. 2016 Table 2 OLS) on land, exact; water pixels keep the OLI reflectance (the land regression inverted on dark water would go negative); every value floored at 0.0005",
        "reflectance_floor": SR_FLOOR,
        "roy2016_ols_etm_to_oli": {b: {"slope": s, "intercept": i} for b, (s, i) in harmonization()["bands"].items()},
        "msi_from_oli": "rho_msi = (rho_oli - intercept) / slope (inverse of the HLS S2 -> OLI adjustment)",
        "hls_s2_to_oli": {
            u: {b: {"slope": s, "intercept": i} for b, (s, i) in v.items()} for u, v in HLS_S2_TO_OLI.items()
        },
        "noise_sd": NOISE_SD,
        "spectra_oli": {
            "green_season": {CLASS_NAMES[c]: GREEN[c].round(4).tolist() for c in range(7)},
            "dormant": {CLASS_NAMES[c]: DORMANT[c].round(4).tolist() for c in range(7)},
            "burn": BURN.round(4).tolist(),
            "snow": SNOW.round(4).tolist(),
            "cloud": CLOUD.round(4).tolist(),
        },
    }


def _truth_lake(model: DemoSiteModel, regions: dict[str, Any]) -> dict[str, Any]:
    """Planted change: the lake grows (or shrinks) linearly between two years."""
    ev, pa = model.ev, RES * RES / 1e6
    lake_px = {y: int(model.water(y).sum()) for y in _years(model)}
    lake_span = [y for y in _years(model) if ev.lake_a <= y <= ev.lake_b]
    return {
        "region": "lake",
        "quadrant": regions["lake"]["quadrant"],
        "start_year": ev.lake_a,
        "end_year": ev.lake_b,
        "pixels_start": ev.lake_n0,
        "pixels_end": ev.lake_n1,
        "rule": "water in year y = lake_rank < pixels(y); pixels(y) = round(p0 + (p1 - p0) * clip((y - a)/(b - a), 0, 1))",
        "pixels_by_year": {str(y): v for y, v in lake_px.items()},
        "area_km2_by_year": {str(y): _km2(v) for y, v in lake_px.items()},
        "trend_km2_per_year": round(_ols_slope(lake_span, [lake_px[y] * pa for y in lake_span]), 6),
        "design_trend_km2_per_year": round((ev.lake_n1 - ev.lake_n0) * pa / max(1, ev.lake_b - ev.lake_a), 6),
    }


def _truth_clearing(model: DemoSiteModel, regions: dict[str, Any]) -> dict[str, Any]:
    """Planted change: a forest clearing on one date, bare soil then grassland."""
    ev = model.ev
    clear_px = int(model.clear_mask.sum())
    return {
        "region": "clearing",
        "quadrant": regions["clearing"]["quadrant"],
        "year": ev.clear_date.year,
        "date": _date_iso(ev.clear_date),
        "pixels": clear_px,
        "area_km2": _km2(clear_px),
        "after": "bare soil until 1 April two years later, then grassland",
        "hansen_lossyear_value": ev.clear_date.year - 2000 if 2001 <= ev.clear_date.year <= 2024 else None,
    }


def _truth_burns(model: DemoSiteModel) -> dict[str, Any]:
    """Planted change: two shrubland burns, each recovering over some years; and the larger one's year."""
    ev = model.ev
    burns = [
        _truth_burn(model, model.burn1_mask, ev.burn1_date, ev.burn1_recovery, "burn_1"),
        _truth_burn(model, model.burn2_mask, ev.burn2_date, ev.burn2_recovery, "burn_2"),
    ]
    largest = max(burns, key=lambda b: b["pixels"])
    return {"burns": burns, "largest_burn_year": largest["year"]}


def _truth_burn(model: DemoSiteModel, mask: np.ndarray, date: dt.date, nrec: int, key: str) -> dict[str, Any]:
    ndvi_at = {}
    for y in range(max(model.start, date.year - 1), min(model.end, date.year + nrec + 1) + 1):
        dd = dt.date(y, date.month, min(date.day, 28))
        ndvi_at[str(y)] = round(float(model.ndvi(dd)[mask].mean()), 4)
    after = date + dt.timedelta(days=10)
    return {
        "region": key,
        "date": _date_iso(date),
        "year": date.year,
        "pixels": int(mask.sum()),
        "area_km2": _km2(int(mask.sum())),
        "quadrant": _region(model, mask, kind="mask")["quadrant"],
        "land_cover_before": "shrubland",
        "recovery_years": nrec,
        "recovered_year": date.year + nrec,
        "pre_fire_ndvi": round(float(model.ndvi(date - dt.timedelta(days=5))[mask].mean()), 4),
        "post_fire_ndvi": round(float(model.ndvi(after)[mask].mean()), 4),
        "post_fire_nbr": round(float(np.mean([(BURN[3] - BURN[5]) / (BURN[3] + BURN[5])])), 4),
        "ndvi_on_fire_day_by_year": ndvi_at,
    }


def _truth_built_up(model: DemoSiteModel, regions: dict[str, Any]) -> dict[str, Any]:
    """Planted change: the town grows between two years."""
    ev, pa = model.ev, RES * RES / 1e6
    urban_px = {y: int(model.built(y).sum()) for y in _years(model)}
    urban_span = [y for y in _years(model) if ev.urban_a <= y <= ev.urban_b]
    return {
        "region": "urban",
        "quadrant": regions["urban"]["quadrant"],
        "start_year": ev.urban_a,
        "end_year": ev.urban_b,
        "pixels_by_year": {str(y): v for y, v in urban_px.items()},
        "area_km2_by_year": {str(y): _km2(v) for y, v in urban_px.items()},
        "trend_km2_per_year": round(_ols_slope(urban_span, [urban_px[y] * pa for y in urban_span]), 6),
    }


def _truth_drought(model: DemoSiteModel, vegetated: np.ndarray, clim: dict[str, Any]) -> dict[str, Any]:
    """Planted change: a drought year, the lowest growing-season greenness over the stable vegetation, with
    its precipitation against the 1991-2020 mean."""
    ev = model.ev
    green: dict[int, float] = {}
    for y in _years(model):
        vals = [float(model.ndvi(dt.date(y, m, 15))[vegetated].mean()) for m in GROWING_MONTHS]
        green[y] = round(float(np.mean(vals)), 5)
    lowest = min(green, key=green.get)
    if lowest != ev.drought_year:
        logger.warning("drought year %s is not the lowest-greenness year (%s)", ev.drought_year, lowest)
    tp_annual, base = _annual_precip(clim)
    return {
        "year": ev.drought_year,
        "growing_season_months": list(GROWING_MONTHS),
        "greenness_region": "vegetated_stable",
        "greenness_by_year": {str(y): v for y, v in green.items()},
        "lowest_greenness_year": lowest,
        "precip_m_per_day": tp_annual[ev.drought_year],
        "precip_1991_2020_mean_m_per_day": round(base, 7) if base is not None else None,
        "precip_below_1991_2020_mean": bool(base is not None and tp_annual[ev.drought_year] < base),
    }


def _truth_crop(model: DemoSiteModel, regions: dict[str, Any]) -> dict[str, Any]:
    """Planted change: the cropland's phenology peak month, read in a normal (non-drought) year."""
    ev = model.ev
    ref_year = next((y for y in range(model.end, model.start - 1, -1) if y != ev.drought_year), model.end)
    crop_monthly = {
        str(m): round(float(model.ndvi(dt.date(ref_year, m, 15))[model.crop_mask].mean()), 4) for m in range(1, 13)
    }
    return {
        "region": "cropland",
        "quadrant": regions["cropland"]["quadrant"],
        "peak_month": ev.crop_peak_month,
        "peak_doy": _doy(dt.date(2001, ev.crop_peak_month, 15)),
        "reference_year": ref_year,
        "ndvi_by_month": crop_monthly,
    }


def _truth_stable(model: DemoSiteModel) -> dict[str, Any]:
    """The control: a region with no planted land-cover change."""
    stable_cls = model.base[model.stable_mask]
    return {
        "region": "stable",
        "quadrant": "centre",
        "land_cover": {CLASS_NAMES[c]: int((stable_cls == c).sum()) for c in np.unique(stable_cls)},
        "note": "no planted land-cover change; only phenology, drought and weather",
    }


def _truth_snow(model: DemoSiteModel, files: dict[str, Any]) -> dict[str, Any]:
    """Planted change: the snow season's length per winter (the year of January), mean over land."""
    ev = model.ev
    winters = list(range(model.start + 1, model.end + 1))
    land = ~model.extra["lake_zone"]
    snow_days = {}
    for w_ in winters:
        h = ev.snow_half.get(w_, 0.0) + 12.0 * (model.elev - 0.5) if ev.snow_half.get(w_, 0.0) > 0 else None
        days = np.where(h > 0, 2 * np.ceil(h) - 1, 0) if h is not None else np.zeros_like(model.elev)
        snow_days[w_] = round(float(days[land].mean()), 3)
    return {
        "winter_is_year_of": "January",
        "season_centre": "01-20",
        "half_length_days_by_winter": {str(w): round(ev.snow_half.get(w, 0.0), 3) for w in winters},
        "snow_days_by_winter": {str(w): v for w, v in snow_days.items()},
        "trend_days_per_year": round(_ols_slope(winters, [snow_days[w] for w in winters]), 4),
        "mod10a1_winters": _snow_winters(model) if files.get("mod10a1") else [],
    }


def _truth_landsat(landsat: list[dict[str, Any]]) -> dict[str, Any]:
    """The Landsat scenes written, and which of them carry a planted record problem."""
    return {
        "path_row": f"{WRS_PATH:03d}{WRS_ROW:03d}",
        "scenes": landsat,
        "t2_scenes": [s["id"] for s in landsat if s["tier"] == "T2"],
        "offset_grid_scenes": [s["id"] for s in landsat if s["grid"] == "offset"],
        "missed_cloud_scenes": [s["id"] for s in landsat if s["missed_clouds"]],
        "clear_scenes": [
            s["id"]
            for s in landsat
            if s["cloud_fraction"] == 0
            and s["shadow_fraction"] == 0
            and s["dilated_fraction"] == 0
            and s["fill_fraction"] == 0
            and not s["missed_clouds"]
            and s["tier"] == "T1"
            and s["grid"] == "site"
            and s["snow_fraction"] == 0
        ],
    }
