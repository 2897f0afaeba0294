"""Generate candidate questions for a site: deterministic rules fill templates with method references.

Following ChronoBench (rule-based programs, five phrasings per template, options shuffled with a seed)
and EarthRecord (several methods per quantity; numeric reference = median; categorical and date
conclusions need 75% agreement; results near a stated threshold are dropped; periods with too few
clear observations become insufficient-evidence questions). Never reads truth.json.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from reviewer.bank import consistency
from reviewer.bank import evidence_rules as ER
from reviewer.bank import methods as M
from reviewer.bank.evidence import build_view
from reviewer.bank.io import BANK_ENTRIES, BankContent, write_bank
from reviewer.bank.model import INSUFFICIENT, MIN_RELATIVE_HALF_WIDTH, min_range, multi_sensor_of
from reviewer.bank.options import GenerationOptions
from reviewer.bank.series import QUADRANTS, SiteSeries, build_series, cached_index, cube_rows, reduce_frames, scene_mpx
from reviewer.bank.templates import REGION_NAMES, methods_agree_share, rules_doc, templates, templates_doc
from reviewer.fileio import check_output_folder

logger = logging.getLogger(__name__)

#: What `bank generate --out DIR` writes into DIR (a bank, its dropped candidates, its report): a folder holding
#: anything else is refused (reviewer.fileio: the one rule for output folders)
GENERATED_ENTRIES = BANK_ENTRIES | {"dropped.jsonl", "generation_report.json"}

GENERATOR = "reviewer.bank.generate/1"


@dataclass
class Candidate:
    """One filled template before finishing: method results per field, or why it was dropped."""

    template: str
    params: dict[str, Any]
    period: tuple[int, int]
    methods: dict[str, dict[str, Any]] = field(default_factory=dict)  # field -> method -> value
    sensors: list[str] = field(default_factory=list)
    insufficient: dict[str, Any] | None = None
    drop: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    reference_override: dict[str, Any] | None = None


@dataclass
class GenerationReport:
    site: str
    out_dir: str
    questions: int = 0
    by_task: dict[str, int] = field(default_factory=dict)
    insufficient: int = 0
    dropped: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    series_seconds: float = 0.0
    scenes_read: int = 0
    #: peak resident memory of the run and the budget it was given (bytes)
    peak_memory: int = 0
    memory_budget: int = 0
    #: series frames (composites, NBR) that did not fit the budget and went to files (bytes)
    spilled: int = 0
    #: parts of the record's pass (Landsat years, runs of MODIS/VIIRS composites) run as cluster tasks
    tasks: int = 0
    #: the cross-sensor break check: items checked, within the offset (marked or dropped), close to it
    sensor_break: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        tasks = "".join(f"{k} {v}, " for k, v in sorted(self.by_task.items()))
        return (
            f"{self.site}: {self.questions} candidate questions ({tasks.rstrip(', ')}{'; ' if tasks else ''}"
            f"insufficient {self.insufficient}), "
            f"{len(self.dropped)} dropped, {self.scenes_read} scenes read in {self.series_seconds:.1f} s, "
            f"total {self.seconds:.1f} s, peak memory {_size(self.peak_memory)} of {_size(self.memory_budget)} "
            "budget"
            + (f" ({_size(self.spilled)} of series frames in files)" if self.spilled else "")
            + (f"; the record read as {self.tasks} tasks of the cluster" if self.tasks else "")
            + _break_summary(self.sensor_break)
        )


def _break_summary(b: dict[str, Any]) -> str:
    if not b:
        return ""
    if not b.get("checked"):
        return "; cross-sensor break check: no item spans a sensor change"
    what = "marked for an expert" if b.get("mode") == "mark" else "dropped"
    return (
        f"; cross-sensor break check: {b['checked']} item(s) span a sensor change, {b['within']} within the "
        f"sensors' offset ({what}), {b['close']} close to it, {b['unknown']} with no overlap to measure"
    )


def _size(n: int) -> str:
    """Bytes as GB (two decimals) from 1 GB up, else as MB (1 GB = 1024 MB = 1024**3 bytes)."""
    return f"{n / 1024**3:.2f} GB" if n >= 1024**3 else f"{n / 1024**2:.1f} MB"


# ----------------------------------------------------------------------------- helpers on the series


def _t(name: str) -> dict[str, Any]:
    return templates()[name]


def _thr(name: str) -> dict[str, Any]:
    return _t(name)["thresholds"]


def _sweep(name: str) -> dict[str, Any]:
    """The parameter values a template's reference methods are run with (templates.json `sweeps`)."""
    return _t(name).get("sweeps", {})


def _region_series(s: SiteSeries, comp: str, region: np.ndarray, years: list[int], stat=np.nanmedian) -> list[float]:
    """Per year, `stat` (np.nanmedian or np.nanmean) of the composite at the region's pixels inside the site, NaN
    when under 30% of them are clear (_region_stat); remembered on the series per frame, region and statistic
    (templates ask for the same years, and an OLI year's raw composite is its harmonized frame)."""
    memo = s.derived.setdefault("region_stat", {})
    out = []
    for y in years:
        key = (s.frame_id(comp, y), id(region), stat.__name__)
        hit = memo.get(key)
        if hit is None or hit[0]() is not region:  # (a weak reference: an id is the region's only while it lives)
            value = _region_stat(s, lambda r0, r1, y=y: s.comp_rows(comp, y, r0, r1), region, stat)
            hit = memo[key] = (weakref.ref(region), value)
        out.append(hit[1])
    return out


def _region_stat(
    s: SiteSeries, rows_of: Callable[[int, int], np.ndarray], region: np.ndarray, stat, min_clear: float | None = 0.3
) -> float:
    """`stat` (np.nanmedian or np.nanmean) of a frame's values at the region's pixels inside the site, NaN when
    not more than `min_clear` of them are finite (None: no such rule); the frame read a block of rows at a time (`rows_of(r0, r1)`). A mean adds up
    over the blocks (NanMean: np.nanmean's value when the site is one block); a median gathers the region's
    values that are not NaN (the values it is taken of), never the whole frame or its NaN."""
    total = finite = 0
    mean = M.NanMean()
    kept: np.ndarray | None = None
    at = 0
    for r0, r1 in s.blocks(1):
        m = region[r0:r1] & s.inside[r0:r1]
        n = int(m.sum())
        if not n:
            continue
        v = rows_of(r0, r1)[m]
        total += n
        finite += int(np.isfinite(v).sum())
        if stat is np.nanmedian:
            v = v[~np.isnan(v)]
            if kept is None:  # room for every pixel of the region (known from its mask, counted once)
                kept = np.empty(int((region & s.inside).sum()), v.dtype)
            kept[at : at + v.size] = v
            at += v.size
        else:
            mean.add(v)
    if not total or (min_clear is not None and finite / total <= min_clear):
        return float("nan")
    if stat is np.nanmedian:
        return float(np.nanmedian(kept[:at], overwrite_input=True))
    return float(mean.value()) if stat is np.nanmean else float(stat(s.gather(rows_of, region)))


def _stat(values: np.ndarray, stat) -> float:
    """stat(values) of values gathered for it (a median partitions them in place: no copy of a region)."""
    return float(np.nanmedian(values, overwrite_input=True) if stat is np.nanmedian else stat(values))


def _water_area(s: SiteSeries, year: int, method: str) -> float:
    """km2 of water in the year's composite by one method (index:reflectance:threshold), a block of rows at a
    time (two passes for Otsu's threshold); remembered on the series (the water templates ask for the same
    years and methods)."""
    memo = s.derived.setdefault("water_area", {})
    idx, var, rule = method.split(":")
    key = (s.frame_id(f"{idx}_{var}", year), rule)  # (an OLI year's raw MNDWI is its harmonized frame)
    if key not in memo:
        frame = [(f"{idx}_{var}", year)]

        def inside_values():
            for r0, r1, (rows,) in s.frame_rows(frame):
                yield s.inside_values(rows, (r0, r1))

        thr = M.otsu_threshold_of(inside_values) if rule == "otsu" else 0.0
        counts = sum(M.area_counts(rows, thr, s.inside[r0:r1]) for r0, r1, (rows,) in s.frame_rows(frame))
        memo[key] = M.area_of(counts, thr, s.pixel_area_km2, min_valid=0.8)
    return memo[key]


#: Water area methods (index:reflectance:threshold). NDWI is read from unharmonized reflectance only: the Roy et
#: al. transform is a land regression whose NIR intercept (+0.041) lifts TM/ETM+ water above its green band, so a
#: harmonized NDWI sees no water before OLI (the break check measures that offset; see README)
WATER_METHODS = ("mndwi:r:otsu", "mndwi:h:0", "mndwi:h:otsu", "ndwi:r:0", "mndwi:r:0")


def _periods(s: SiteSeries, periods: list[tuple[int, int]], min_years: int = 2) -> list[tuple[int, int]]:
    """The distinct periods that lie inside the record and span at least `min_years` years (short records)."""
    ys = s.years
    return [(a, b) for a, b in dict.fromkeys(periods) if ys and ys[0] <= a and b <= ys[-1] and b - a + 1 >= min_years]


def _obs_ok(s: SiteSeries, years: list[int], key: str, min_obs: int) -> tuple[bool, dict[str, int]]:
    counts = {str(y): s.clear_obs[key].get(y, 0) for y in years}
    return all(v >= min_obs for v in counts.values()), counts


def _coverage_ok(s: SiteSeries, lo: int, hi: int, key: str, min_cov: float) -> tuple[bool, dict[str, int]]:
    ys = s.years_between(lo, hi)
    counts = {str(y): s.clear_obs[key].get(y, 0) for y in ys}
    cov = sum(1 for v in counts.values() if v > 0) / max(1, len(ys))
    return cov >= min_cov, counts


# ----------------------------------------------------------------------------- compute rules (one per template)


def water_area_pair(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    ys = s.years
    pairs = _periods(s, [(ys[0] + 1, ys[-1] - 1), (ys[0] + 6, ys[len(ys) // 2]), (ys[len(ys) // 2], ys[-1])])
    # every year with too few clear observations gives an insufficient-evidence twin
    thin = [y for y in ys if s.clear_obs["water"].get(y, 0) < th["min_obs_year"]]
    for y in thin[:2]:
        # compared with the year 10 years on (or back), else the record's farther end; never with itself
        other = y + 10 if y + 10 <= ys[-1] else y - 10 if y - 10 >= ys[0] else max(ys, key=lambda x: abs(x - y))
        if other != y:
            pairs.append((min(y, other), max(y, other)))
    out = []
    for y1, y2 in dict.fromkeys(pairs):
        c = Candidate(name, {"y1": y1, "y2": y2}, (y1, y2), sensors=s.sensors(y1, y1) + s.sensors(y2, y2))
        ok, counts = _obs_ok(s, [y1, y2], "water", th["min_obs_year"])
        if not ok:
            c.insufficient = {
                "clear_observations_per_year": counts,
                "needed_per_year": th["min_obs_year"],
                "months": list(s.config.water_months),
            }
            out.append(c)
            continue
        a = {m: _water_area(s, y1, m) for m in WATER_METHODS}
        b = {m: _water_area(s, y2, m) for m in WATER_METHODS}
        direction = {}
        rels = []
        for m in WATER_METHODS:
            if math.isfinite(a[m]) and math.isfinite(b[m]) and a[m] > 0:
                rel = M.relative_change(a[m], b[m]) * 100
                rels.append(rel)
                direction[m] = M.three_way(rel, th["same_within_pct"], ("up", "down", "about the same"))
        c.methods = {"area_start": a, "area_end": b, "direction": direction}
        if rels:
            med = float(np.median(rels))
            if M.near(abs(med), th["same_within_pct"], th["near_margin_pct"]):
                c.drop = f"relative change {med:.1f}% is within {th['near_margin_pct']} points of the +-{th['same_within_pct']}% threshold"
        out.append(c)
    return out


def _trend_methods(years: list[int], series: dict[str, list[float]]) -> tuple[dict, dict, dict]:
    slopes, dirs, ps = {}, {}, {}
    for sname, values in series.items():
        for fn in (M.ols_trend, M.theil_sen_trend):
            tr = fn(years, values)
            key = f"{sname}:{tr.method}"
            if math.isfinite(tr.slope):
                slopes[key] = tr.slope
                dirs[key] = tr.direction()
                ps[key] = tr.p
    return slopes, dirs, ps


def _trend_periods(s: SiteSeries) -> list[tuple[int, int]]:
    ys = s.years
    mid = ys[len(ys) // 2]
    return _periods(s, [(ys[0], ys[-1]), (ys[0] + 5, mid + 5), (mid, ys[-1])], min_years=5)


def _finish_trend(c: Candidate, th: dict, slopes: dict, dirs: dict, ps: dict) -> None:
    c.methods = {"direction": dirs, "slope": slopes}
    c.extra["p_values"] = ps
    if ps:
        p_med = float(np.median(list(ps.values())))
        if th["near_p_low"] <= p_med <= th["near_p_high"]:
            c.drop = f"median p-value {p_med:.3f} is near the {th['alpha']} threshold"


def water_trend(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    out = []
    for y1, y2 in _trend_periods(s):
        c = Candidate(name, {"y1": y1, "y2": y2, "alpha": th["alpha"]}, (y1, y2), sensors=s.sensors(y1, y2))
        ok, counts = _coverage_ok(s, y1, y2, "water", th["min_year_coverage"])
        if not ok:
            c.insufficient = {"clear_observations_per_year": counts, "needed_year_coverage": th["min_year_coverage"]}
            out.append(c)
            continue
        ys = s.years_between(y1, y2)
        series = {m: [_water_area(s, y, m) for y in ys] for m in WATER_METHODS}
        _finish_trend(c, th, *_trend_methods(ys, series))
        out.append(c)
    return out


def greenness_trend(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    out = []
    for region in _sweep(name)["regions"]:
        for y1, y2 in _trend_periods(s)[:2]:
            c = Candidate(
                name,
                {"y1": y1, "y2": y2, "alpha": th["alpha"], "region": REGION_NAMES[region]},
                (y1, y2),
                sensors=s.sensors(y1, y2),
                extra={"region": region},
            )
            ok, counts = _coverage_ok(s, y1, y2, "growing", th["min_year_coverage"])
            if not ok:
                c.insufficient = {
                    "clear_observations_per_year": counts,
                    "needed_year_coverage": th["min_year_coverage"],
                }
                out.append(c)
                continue
            ys = s.years_between(y1, y2)
            mask = s.regions[region]
            series = {
                "landsat_harmonized_median": _region_series(s, "ndvi_h", mask, ys),
                "landsat_harmonized_mean": _region_series(s, "ndvi_h", mask, ys, np.nanmean),
                "landsat_unharmonized_median": _region_series(s, "ndvi_r", mask, ys),
            }
            _finish_trend(c, th, *_trend_methods(ys, series))
            out.append(c)
    return out


# ---- burns


def burn_events(
    s: SiteSeries, dnbr: float, post_nbr: float, growing_only: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel: the year of the largest NBR drop between consecutive clear observations that exceeds
    `dnbr` and lands on a charred surface (NBR below `post_nbr`), dated at the midpoint of the two dates,
    and the NBR after the drop. Year 0 where there is no such drop. Kept on the series (every template
    asking for the same thresholds shares one map)."""
    return burn_events_many(s, [(dnbr, post_nbr, growing_only)])[0]


def burn_events_many(s: SiteSeries, specs: list[tuple[float, float, bool]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """burn_events for several (dnbr, post_nbr, growing_only) at once: one pass over the NBR frames feeds all
    of them (a frame read from its file once, not once per method); the maps live in the series' store (memory
    within the budget, else files), remembered in `s.derived`."""
    return [(s.store.get(ky), s.store.get(kd)) for ky, kd in _burn_keys(s, specs)]


def _burn_keys(s: SiteSeries, specs: list[tuple[float, float, bool]]) -> list[tuple[Any, Any]]:
    """The store keys of each spec's (year map, drop map), the pass run once for those not made yet."""
    memo = s.derived.setdefault("burn_events", {})
    todo = list(dict.fromkeys(tuple(x) for x in specs if tuple(x) not in memo))
    if todo:
        for spec, keys in zip(todo, _burn_pass(s, todo), strict=True):
            memo[spec] = keys
    return [memo[tuple(x)] for x in specs]


def _burn_pass(s: SiteSeries, specs: list[tuple[float, float, bool]]) -> list[tuple[Any, Any]]:
    """One pass over the NBR frames in date order, block of rows by block of rows (the state of a whole
    Landsat scene's pass was 4 GB); the growing-season-only methods see (and remember as the last clear
    observation) the growing-season frames only. Returns the store keys of each spec's year map (int16) and
    drop (float16, the NBR frames' own precision)."""
    dates = s.nbr_dates
    h, w = s.shape
    ords = np.array([d.toordinal() for d in dates])
    first = int(ords.min()) if len(ords) else 0
    year_of = np.array([dt.date.fromordinal(o).year for o in range(first, int(ords.max()) + 1)] if len(ords) else [])
    n = len(s.derived.get("burn_events", {}))
    keys = [(("burn", n + i, "year"), ("burn", n + i, "drop")) for i in range(len(specs))]
    for ky, kd in keys:
        s.store.alloc(ky, (h, w), np.int16)
        s.store.alloc(kd, (h, w), np.float16)
    groups = {g for _, _, g in specs}
    rows = max(1, min(h, (64 * 2**20) // max(1, w * (8 * len(groups) + 8 * len(specs) + 24))))
    for r0 in range(0, h, rows):
        r1 = min(h, r0 + rows)
        state = _burn_block(s, specs, (r0, r1), ords, first, year_of)
        for (ky, kd), (best, best_year) in zip(keys, state, strict=True):
            s.store.write_rows(ky, r0, best_year.astype(np.int16))
            s.store.write_rows(kd, r0, best.astype(np.float16))
    return keys


def _burn_block(
    s: SiteSeries, specs: list[tuple[float, float, bool]], rows: tuple[int, int], ords, first: int, year_of
) -> list[tuple[np.ndarray, np.ndarray]]:
    """_burn_pass over rows r0:r1: per spec, the largest drop and its year."""
    dates = s.nbr_dates
    r0, r1 = rows
    shape = (r1 - r0, s.shape[1])
    last = {g: np.full(shape, np.nan, np.float32) for g in {g for _, _, g in specs}}
    last_t = {g: np.full(shape, -1, np.int32) for g in last}
    state = [(np.zeros(shape, np.float32), np.zeros(shape, np.int32)) for _ in specs]
    for t in range(len(dates)):
        growing = dates[t].month in s.config.growing_months
        groups = [g for g in last if growing or not g]
        if not groups:
            continue
        v = s.store.rows(("nbr", t), r0, r1).astype(np.float32)
        ok = np.isfinite(v)
        charred: dict[float, np.ndarray] = {}  # v < post_nbr, shared by the specs of one threshold
        for g in groups:
            drop = last[g] - v
            seen = ok & np.isfinite(last[g])
            dropped: dict[float, np.ndarray] = {}  # seen & (drop > dnbr), shared likewise
            mid_year = None
            for (dnbr, post_nbr, g2), (best, best_year) in zip(specs, state, strict=True):
                if g2 != g:
                    continue
                if dnbr not in dropped:
                    dropped[dnbr] = seen & (drop > dnbr)
                if post_nbr not in charred:
                    charred[post_nbr] = v < post_nbr
                hit = dropped[dnbr] & charred[post_nbr]
                hit &= drop > best
                if hit.any():
                    if mid_year is None:  # the year of the midpoint between the two observations
                        mid_year = year_of[(ords[np.clip(last_t[g], 0, None)] + ords[t]) // 2 - first]
                    np.copyto(best, drop, where=hit)
                    np.copyto(best_year, mid_year, where=hit, casting="same_kind")
            last[g] = np.where(ok, v, last[g])
            last_t[g] = np.where(ok, t, last_t[g])
    return state


def _burns(s: SiteSeries, name: str) -> dict[str, Any]:
    """The store keys of the burn-year maps of the template's burn methods (dNBR and post-fire NBR thresholds),
    by method; the pass that makes them runs once per series. A map is fetched when its turn comes
    (s.store.get): six whole-scene maps and their drops at once were the run's peak."""
    ms = _sweep(name)["burn_methods"]
    keys = _burn_keys(s, [(m["dnbr"], m["post_nbr"], m["growing_only"]) for m in ms])
    return {
        f"dnbr>{m['dnbr']}&post<{m['post_nbr']}{'&growing' if m['growing_only'] else ''}": ky
        for m, (ky, _) in zip(ms, keys, strict=True)
    }


def _year_counts(s: SiteSeries, key: Any, years: list[int]) -> dict[int, int]:
    """Pixels inside the site per year of a year map in the store (a burn map), counted a block of rows at a
    time (not the whole map and a mask per year)."""
    counts = dict.fromkeys(years, 0)
    for r0, r1 in s.blocks(1):
        ymap, inside = s.store.rows(key, r0, r1), s.inside[r0:r1]
        for y in years:
            counts[y] += int(((ymap == y) & inside).sum())
    return counts


def burn_year(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    if not s.nbr_dates:
        return []
    maps = _burns(s, name)
    ys = s.years
    mid = ys[len(ys) // 2]
    out = []
    for y1, y2 in dict.fromkeys([(ys[0], ys[-1]), (mid, ys[-1])]):
        c = Candidate(name, {"y1": y1, "y2": y2, "dnbr": th["dnbr"]}, (y1, y2), sensors=s.sensors(y1, y2))
        years, areas, leads = {}, {}, []
        for m, key in maps.items():
            per = {y: float(n) * s.pixel_area_km2 for y, n in _year_counts(s, key, s.years_between(y1, y2)).items()}
            if not per or max(per.values()) < th["min_area_km2"]:
                continue
            ranked = sorted(per.items(), key=lambda kv: -kv[1])
            years[m] = ranked[0][0]
            areas[m] = ranked[0][1]
            leads.append(ranked[0][1] / max(ranked[1][1], 1e-9) if len(ranked) > 1 else math.inf)
        c.methods = {"year": years, "area": areas}
        if not years:
            c.drop = "no burned area above the minimum in the period"
        elif leads and float(np.median(leads)) < th["min_lead"]:
            c.drop = f"largest burned year leads the next by only {float(np.median(leads)):.2f}x"
        out.append(c)
    return out


#: a year with fewer clear growing-season observations than this is flagged as sparse in recovery provenance
SPARSE_GS_OBS = 3


def _scene_difference(s: SiteSeries, mask: np.ndarray, control: np.ndarray | None) -> tuple[list[dt.date], list[float]]:
    """Growing-season scenes of the NBR cube: (dates, burned-area median minus control median, or the burned
    median alone without a control); scenes where either region is less than 30% clear are left out."""
    dates, vals = [], []
    for t, d in enumerate(s.nbr_dates):
        if d.month not in s.config.growing_months:
            continue
        rows = lambda r0, r1, t=t: s.store.rows(("nbr", t), r0, r1)  # noqa: E731 - the scene's NBR, by blocks
        b = s.gather(rows, mask).astype(np.float32)
        if np.isfinite(b).mean() <= 0.3:
            continue
        value = float(np.nanmedian(b))
        if control is not None:
            cv = s.gather(rows, control).astype(np.float32)
            if np.isfinite(cv).mean() <= 0.3:
                continue
            value -= float(np.nanmedian(cv))
        dates.append(d)
        vals.append(value)
    return dates, vals


def _finite_median(values: dict[str, float]) -> float | None:
    """The median of the methods' values, None when it is not finite (JSON has no infinity)."""
    m = float(np.median(list(values.values()))) if values else math.nan
    return m if math.isfinite(m) else None


def burn_recovery(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    if not s.nbr_dates:
        return []
    # the burn map is read a block of rows at a time (the masks it makes are bool frames, a quarter of a float one)
    ymap = _burn_keys(s, [(th["dnbr"], th["post_nbr"], False)])[0][0]
    ys = s.years
    mid = ys[len(ys) // 2]
    out = []
    burn_px = _year_counts(s, ymap, ys)
    for y1, y2 in dict.fromkeys([(ys[0], ys[-1]), (mid, ys[-1])]):
        per = {y: burn_px[y] for y in s.years_between(y1, y2)}
        if not per or max(per.values()) * s.pixel_area_km2 < 0.05:
            continue
        event = max(per, key=per.get)
        mask = np.zeros(s.shape, bool)
        for r0, r1 in s.blocks(1):
            mask[r0:r1] = (s.store.rows(ymap, r0, r1) == event) & s.inside[r0:r1]
        c = Candidate(
            name,
            {"y1": y1, "y2": y2, "recovered_fraction": th["recovered_fraction"]},
            (y1, y2),
            sensors=s.sensors(y1, y2),
            extra={"burned_pixels": int(mask.sum()), "event_year": event},
        )
        frac = th["recovered_fraction"] / 100.0
        years_m, fall_m, lo_m, hi_m = {}, {}, {}, {}
        sw = _sweep(name)
        sensitivity = ((frac - sw["fraction_offset"], lo_m), (frac + sw["fraction_offset"], hi_m))
        # control: unburned pixels of the same quadrant with a similar pre-fire greenness; dividing by it
        # removes the year-to-year differences of seasonal sampling and weather
        quad = max(QUADRANTS, key=lambda q: int((mask & s.regions[q]).sum()))
        pre = [y for y in (event - 3, event - 2, event - 1) if y in s.years] or [event]
        base = lambda r0, r1, pre=pre: reduce_frames([s.comp_rows("ndvi_h", y, r0, r1) for y in pre])  # noqa: E731
        level = _stat(s.gather(base, mask), np.nanmedian)
        control = np.zeros(s.shape, bool)
        for r0, r1, frames in s.year_rows("ndvi_h", pre):
            near = np.abs(reduce_frames(frames) - level) < 0.1
            unburned = s.store.rows(ymap, r0, r1) == 0
            control[r0:r1] = s.regions[quad][r0:r1] & unburned & near & s.inside[r0:r1]
        c.extra["control_pixels"] = int(control.sum())
        for comp in sw["indices"]:
            burned = np.array(_region_series(s, comp, mask, s.years))
            ref = np.array(_region_series(s, comp, control, s.years)) if control.sum() >= 20 else None
            with np.errstate(all="ignore"):
                vals = list(burned / ref) if ref is not None else list(burned)
            for base in sw["baselines"]:
                r = M.recovery_years(
                    s.years, vals, event, baseline_years=th["baseline_years"], fraction=frac, baseline=base
                )
                key = f"{comp}:{base}"
                if r is not None:
                    years_m[key] = r
                    fall_m[key] = event
                for f2, store in sensitivity:
                    r2 = M.recovery_years(
                        s.years, vals, event, baseline_years=th["baseline_years"], fraction=f2, baseline=base
                    )
                    store[key] = r2 if r2 is not None else math.inf
        # per-scene NBR with the acquisition dates: the annual growing-season medians of years with few clear
        # scenes can be made of one early-season scene still short of recovery, and the event-year composite
        # mixes pre- and post-fire scenes; the dated series sees the fall and the recovery scene by scene
        dates, vals = _scene_difference(s, mask, control if control.sum() >= 20 else None)
        for cal in (False, True):
            key = "scenes:nbr_h:" + ("calendar" if cal else "dated")
            r = M.recovery_years_dated(
                dates, vals, event, baseline_years=th["baseline_years"], fraction=frac, calendar=cal
            )
            if r is not None:
                years_m[key] = r
                fall_m[key] = event
            for f2, store in sensitivity:
                r2 = M.recovery_years_dated(
                    dates, vals, event, baseline_years=th["baseline_years"], fraction=f2, calendar=cal
                )
                store[key] = r2 if r2 is not None else math.inf
        c.extra["scene_series"] = {
            "index": "nbr_h",
            "months": list(s.config.growing_months),
            "value": "burned minus control median" if control.sum() >= 20 else "burned median",
            "scenes": len(dates),
        }
        gs_obs = s.clear_obs.get("growing", {}) if s.clear_obs else {}
        sparse = [y for y in s.years if event <= y <= event + 10 and gs_obs.get(y, 0) < SPARSE_GS_OBS]
        if sparse:
            c.extra["sparse_years"] = {
                "min_clear_growing_obs": SPARSE_GS_OBS,
                "years": sparse,
                "note": "annual composites of these years rest on few scenes; the dated "
                "per-scene methods carry the within-year timing",
            }
        c.methods = {"years": years_m, "fall_year": fall_m}
        if not years_m:
            c.drop = "the burned area had not recovered by the end of the record"
        # null where most methods see no recovery at that level by the end of the record (their median is inf)
        c.extra["sensitivity_years_at_level_minus_plus_5"] = [_finite_median(lo_m), _finite_median(hi_m)]
        out.append(c)
    return out


# ---- land cover: water, built-up, trees


def _built_counts(
    s: SiteSeries, years: tuple[int, ...], thresholds: list[tuple[float, float]]
) -> dict[tuple[float, float], dict[int, dict[str, int]]]:
    """Built-up pixels per (maximum NDVI, NDBI) thresholds, year and quadrant: the year's and its neighbours'
    maximum NDVI below the first, the year's NDBI above the second, no water (MNDWI < 0). One pass over blocks
    of rows of the frames they read (not whole frames per threshold pair)."""
    around = {y: [x for x in (y - 1, y, y + 1) if x in s.years] for y in years}
    frames = list(
        dict.fromkeys(
            [(n, y) for y in years for n in ("ndbi_h", "mndwi_h")]
            + [("ndvimax_h", x) for y in years for x in around[y]]
        )
    )
    counts = {t: {y: dict.fromkeys(QUADRANTS, 0) for y in years} for t in thresholds}
    for r0, r1, rows in s.frame_rows(frames):
        got = dict(zip(frames, rows, strict=True))
        quads = {q: s.regions[q][r0:r1] for q in QUADRANTS}
        for y in years:
            vmax = reduce_frames([got[("ndvimax_h", x)] for x in around[y]], "max")
            dry = (got[("mndwi_h", y)] < 0) & s.inside[r0:r1]
            for t_ndvi, t_ndbi in thresholds:
                built = (vmax < t_ndvi) & (got[("ndbi_h", y)] > t_ndbi) & dry
                for q, inq in quads.items():
                    counts[(t_ndvi, t_ndbi)][y][q] += int((built & inq).sum())
    return counts


def water_periods(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    ys = s.years
    mid = ys[len(ys) // 2]
    out = []
    for (a1, a2), (b1, b2) in [
        ((ys[0] + 1, ys[0] + 10), (ys[-1] - 9, ys[-1])),
        ((ys[0] + 1, ys[0] + 5), (mid - 2, mid + 2)),
        ((ys[-1] - 9, ys[-1] - 5), (ys[-1] - 4, ys[-1])),
    ]:
        if not ys[0] <= a1 <= a2 < b1 <= b2 <= ys[-1]:
            continue  # a short record has no room for these periods
        c = Candidate(
            name,
            {"a1": a1, "a2": a2, "b1": b1, "b2": b2, "same_within_pct": th["same_within_pct"]},
            (a1, b2),
            sensors=s.sensors(a1, b2),
        )
        change, dirs, rels = {}, {}, []
        for m in WATER_METHODS:
            a = np.nanmean([_water_area(s, y, m) for y in range(a1, a2 + 1)])
            b = np.nanmean([_water_area(s, y, m) for y in range(b1, b2 + 1)])
            if math.isfinite(a) and math.isfinite(b) and a > 0:
                rel = M.relative_change(a, b) * 100
                rels.append(rel)
                change[m] = float(b - a)
                dirs[m] = M.three_way(rel, th["same_within_pct"], ("more", "less", "about the same"))
        c.methods = {"direction": dirs, "change": change}
        if rels and M.near(abs(float(np.median(rels))), th["same_within_pct"], th["near_margin_pct"]):
            c.drop = f"relative change {float(np.median(rels)):.1f}% is near the +-{th['same_within_pct']}% threshold"
        out.append(c)
    return out


def builtup_quadrant(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    ys = s.years
    out = []
    for y1, y2 in _periods(s, [(ys[0] + 1, ys[-1] - 1), (ys[0] + 6, ys[-1] - 10)]):
        c = Candidate(name, {"y1": y1, "y2": y2}, (y1, y2), sensors=s.sensors(y1, y2))
        quads, growth, leads = {}, {}, []
        pairs = [(tn, tb) for tn in _sweep(name)["ndvimax"] for tb in _sweep(name)["ndbi"]]
        built = _built_counts(s, (y1, y2), pairs)
        for tn, tb in pairs:
            b1, b2 = built[(tn, tb)][y1], built[(tn, tb)][y2]
            g = {q: float(b2[q] - b1[q]) * s.pixel_area_km2 for q in QUADRANTS}
            ranked = sorted(g.items(), key=lambda kv: -kv[1])
            key = f"ndvimax<{tn}&ndbi>{tb}"
            quads[key] = ranked[0][0]
            growth[key] = ranked[0][1]
            leads.append(ranked[0][1] / max(ranked[1][1], 1e-9) if ranked[1][1] > 0 else math.inf)
        c.methods = {"quadrant": quads, "growth": growth}
        if float(np.median(list(growth.values()))) < th["min_growth_km2"]:
            c.drop = "built-up growth below the minimum"
        elif float(np.median(leads)) < th["min_lead_ratio"]:
            c.drop = f"leading quadrant leads by only {float(np.median(leads)):.2f}x"
        out.append(c)
    return out


def _tree_shares(s: SiteSeries, years: list[int], ts: list[float]) -> dict[float, float]:
    """Per NDVI threshold, the % of the site's clear pixels whose median NDVI over `years` is above it (counted
    block by block)."""
    valid, above = 0, dict.fromkeys(ts, 0)
    for r0, r1, frames in s.year_rows("ndvi_h", years):
        med = reduce_frames(frames, "median")
        ok = np.isfinite(med) & s.inside[r0:r1]
        valid += int(ok.sum())
        for t in ts:
            above[t] += int(((med > t) & ok).sum())
    return {t: float(100.0 * above[t] / max(1, valid)) for t in ts}


def tree_cover_change(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    ys = s.years
    out = []
    for k, (y1, y2) in enumerate([(ER.not_before(_t(name), ys[0]), ys[-1]), (ys[0] + 2, ys[len(ys) // 2])]):
        c = Candidate(name, {"y1": y1, "y2": y2}, (y1, y2), sensors=s.sensors(y1, y2))
        change = {}
        first = [y for y in (y1, y1 + 1, y1 + 2) if y in ys]
        last = [y for y in (y2 - 2, y2 - 1, y2) if y in ys]
        if not first or not last or y1 >= y2:  # a record too short for the two windows
            c.drop = f"the record has no years to compare in {y1}-{y2}"
            out.append(c)
            continue
        ts = _sweep(name)["tree_ndvi"]
        a, b = _tree_shares(s, first, ts), _tree_shares(s, last, ts)
        for t in ts:
            change[f"ndvi>{t}"] = b[t] - a[t]
        mag = abs(float(np.median(list(change.values()))))
        rng = np.random.default_rng([c.period[0], c.period[1], k, 17])
        far = [x for x in th["choices_pct"] if abs(mag - x) >= th["near_ratio"] * x]
        above = [x for x in far if x < mag]
        below = [x for x in far if x > mag]
        pick = above[-1] if above and (not below or rng.random() < 0.5) else (below[0] if below else None)
        if pick is None:
            c.drop = "no stated threshold is far enough from the result"
            pick = th["choices_pct"][0]
        c.params["share"] = pick
        c.methods = {"change": change, "changed": {m: ("yes" if abs(v) > pick else "no") for m, v in change.items()}}
        out.append(c)
    return out


def _loss_blocks(
    s: SiteSeries,
    lo: int,
    hi: int,
    cover_t: float,
    drops: list[float],
    region: np.ndarray,
    extra: list[tuple[str, int]] = (),
):
    """Block by block, (r0, r1, loss years by NDVI drop, rows of the `extra` (composite, year) frames): pixels of
    `cover` (median NDVI above cover_t in the three years up to lo, in `region`) whose NDVI falls below that
    baseline by a drop in a later year up to hi, with the year of the first such fall (0 where none). Every
    drop from one read of the frames' rows; a block of each frame at a time, never a whole frame."""
    base_years = [y for y in (lo - 2, lo - 1, lo) if y in s.years] or [lo]
    ys = s.years_between(lo + 1, hi)
    frames = list(dict.fromkeys([("ndvi_h", y) for y in [*base_years, *ys]] + list(extra)))
    for r0, r1, rows in s.frame_rows(frames):
        got = dict(zip(frames, rows, strict=True))
        base = reduce_frames([got[("ndvi_h", y)] for y in base_years], "median")
        cover = (base > cover_t) & region[r0:r1] & s.inside[r0:r1]
        loss = {}
        for drop_t in drops:
            below, ly = base - drop_t, np.zeros(base.shape, np.int32)
            for y in ys:
                ly[cover & (ly == 0) & (got[("ndvi_h", y)] < below)] = y
            loss[drop_t] = ly
        yield r0, r1, loss, got


def _loss_causes(
    s: SiteSeries, lo: int, hi: int, cover_t: float, region: np.ndarray, drops: list[float], chars: list[float]
) -> tuple[dict[float, int], dict[tuple[float, float], int]]:
    """Per NDVI drop, the lost pixels (_loss_blocks), and per (drop, char) the lost pixels that are charred: the
    lowest NBR of the loss year and the year after below `char`."""
    near = [yy for yy in dict.fromkeys(y + k for y in s.years_between(lo + 1, hi) for k in (0, 1)) if yy in s.years]
    lost_n, fire_n = dict.fromkeys(drops, 0), {(d, c): 0 for d in drops for c in chars}
    for _, _, loss, got in _loss_blocks(s, lo, hi, cover_t, drops, region, [("nbrmin_h", y) for y in near]):
        for drop_t, ly in loss.items():
            lost = ly > 0
            lost_n[drop_t] += int(lost.sum())
            char_min = np.full(ly.shape, np.inf, np.float32)
            for y in np.unique(ly[lost]):
                sel = lost & (ly == y)
                for yy in (int(y), int(y) + 1):
                    if yy in s.years:
                        char_min[sel] = np.fmin(char_min[sel], got[("nbrmin_h", yy)][sel])
            for char in chars:
                fire_n[(drop_t, char)] += int((lost & (char_min < char)).sum())
    return lost_n, fire_n


def loss_cause(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    ys = s.years
    out = []
    sw = _sweep(name)
    for cover in sw["covers"]:
        cover_name, cover_t, region = cover["cover"], cover["ndvi"], cover["region"]
        y1 = max(ys[0] + 2, cover.get("not_before", ys[0] + 2))
        y2 = ys[-1]
        c = Candidate(
            name,
            {"y1": y1, "y2": y2, "cover": cover_name, "region": REGION_NAMES[region]},
            (y1, y2),
            sensors=s.sensors(y1, y2),
            extra={"region": region},
        )
        causes = {}
        lost_n, fire_n = _loss_causes(s, y1, y2, cover_t, s.regions[region], sw["loss_drop"], sw["char_nbr"])
        for drop_t in sw["loss_drop"]:
            if lost_n[drop_t] * s.pixel_area_km2 < th["min_loss_km2"]:
                continue
            for char in sw["char_nbr"]:
                share_fire = fire_n[(drop_t, char)] / lost_n[drop_t]
                key = f"drop>{drop_t}&char<{char}"
                if share_fire >= th["min_main_share"]:
                    causes[key] = "fire"
                elif 1 - share_fire >= th["min_main_share"]:
                    causes[key] = "clearing"
                else:
                    causes[key] = "something else"
        c.methods = {"cause": causes}
        if not causes:
            c.drop = f"no {cover_name} loss above {th['min_loss_km2']} km2 in the period"
        out.append(c)
    return out


def cover_after_loss(s: SiteSeries, name: str) -> list[Candidate]:
    """A visual-reference candidate: the AI draft and human review set the reference; methods give a draft."""
    th = _thr(name)
    ys = s.years
    y1, y2 = ER.not_before(_t(name), ys[0] + 2), ys[-1]
    drop_t = th["loss_drop"]
    lost_n, quads = 0, dict.fromkeys(QUADRANTS, 0)
    values: dict[str, list[np.ndarray]] = {"ndvi_h": [], "mndwi_h": []}  # of y2 at the lost pixels, in row order
    extra = [("ndvi_h", y2), ("mndwi_h", y2)]
    for r0, r1, loss, got in _loss_blocks(s, y1, y2, 0.75, [drop_t], s.regions["site"], extra):
        lost = loss[drop_t] > 0
        lost_n += int(lost.sum())
        for q in QUADRANTS:
            quads[q] += int((lost & s.regions[q][r0:r1]).sum())
        for comp, parts in values.items():
            parts.append(got[(comp, y2)][lost])
    if lost_n * s.pixel_area_km2 < th["min_loss_km2"]:
        return []
    region = max(quads, key=quads.get)
    ndvi = float(np.nanmedian(np.concatenate(values["ndvi_h"])))
    mndwi = float(np.nanmedian(np.concatenate(values["mndwi_h"])))
    if math.isfinite(ndvi) and math.isfinite(mndwi):
        draft = "water" if mndwi > 0 else "forest" if ndvi > 0.75 else "grassland" if ndvi > 0.45 else "bare soil"
    else:
        draft = None  # no clear view of the loss area in y2: the methods give no draft
    c = Candidate(
        name,
        {"y1": y1, "y2": y2, "region": REGION_NAMES[region]},
        (y1, y2),
        sensors=s.sensors(y1, y2),
        extra={
            "pending_reason": "visual reference: set by human review of an AI-drafted visual "
            "interpretation of the imagery",
            "draft_ndvi": round(ndvi, 3) if math.isfinite(ndvi) else None,
        },
    )
    c.methods = {"cover": {"ndvi_mndwi_rule": draft} if draft else {}}
    return [c]


def forest_loss_product(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    ys = s.years
    y1, y2 = ER.not_before(_t(name), ys[0] + 2), ys[-1]
    c = Candidate(name, {"y1": y1, "y2": y2}, (y1, y2), sensors=s.sensors(y1, y2))
    drops = _sweep(name)["loss_drop"]
    lost_n = dict.fromkeys(drops, 0)
    for _, _, loss, _ in _loss_blocks(s, y1, y2, th["tree_ndvi"], drops, s.regions["site"]):
        for drop_t, ly in loss.items():
            lost_n[drop_t] += int((ly > 0).sum())
    est = {f"ndvi_drop>{d}": float(lost_n[d]) * s.pixel_area_km2 for d in drops}
    c.methods = {"area": est}
    if s.hansen_lossyear is not None:
        # lossyear counts years since the product's base year; it covers loss from its first year on
        product = ER.rules_of(_t(name))["product"]
        base, first = product["value_base_year"], product["first_year"]
        ly = s.hansen_lossyear.astype(np.int32)
        lo = max(y1, first) - base
        area = float(((ly >= lo) & (ly <= y2 - base) & (ly > 0)).sum()) * s.pixel_area_km2
        c.reference_override = {"area": round(area, 4)}
        c.extra["product"] = {"name": "Hansen GFC lossyear", "file": s.hansen_path, "area_km2": round(area, 4)}
    else:
        c.extra["pending_reason"] = (
            "withheld product (Hansen GFC lossyear) not found under reference/: the product value must be set in review"
        )
    return [c]


def ndvi_share(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    ys = s.years
    y1, y2 = ER.not_before(_t(name), ys[0]), ys[-1]
    yrs = s.years_between(y1, y2)
    # each cube (years x pixels of one index) is read a block of rows at a time: per-pixel trends of a block
    # and the counts of significant ones added up (a whole scene's cube of 30 years was 7 GB)
    cubes: dict[str, tuple[list[int], Callable[[int, int, int], np.ndarray]]] = {
        "landsat_harmonized": (yrs, lambda k, r0, r1: s.comp_rows("ndvi_h", yrs[k], r0, r1))
    }
    for label, d in s.coarse.items():
        sel = [i for i, y in enumerate(d["years"]) if y1 <= y <= y2]
        if len(sel) >= th["min_obs"]:
            cubes[label.lower().replace(" ", "_")] = (
                [d["years"][i] for i in sel],
                lambda k, r0, r1, d=d, sel=sel: cube_rows(d["gs"], sel[k], r0, r1),
            )
    results: dict[str, dict[str, float]] = {"increase": {}, "decrease": {}}
    tests = {"ols": ("ols_slope", "ols_p"), "mk_sen": ("sen_slope", "mk_p")}
    for cname, (years_c, rows_of) in cubes.items():
        if len(years_c) < th["min_obs"]:
            continue
        n = len(years_c)
        counts = {(sense, t): np.zeros(2, np.int64) for sense in results for t in tests}
        for r0, r1 in s.blocks(n):
            inside = s.inside[r0:r1].ravel()
            if not inside.any():
                continue
            pixels = np.stack([rows_of(k, r0, r1) for k in range(n)]).reshape(n, -1)[:, inside]
            # the pairwise Theil-Sen slopes are worked through in pixel blocks of the templates' block size
            scratch = min(s.store.ram_bytes // 3, s.rows_bytes)
            r = M.pixel_trends(years_c, pixels, min_obs=th["min_obs"], scratch=scratch, runner=s.runner)
            del pixels
            for sense, sign in (("increase", 1), ("decrease", -1)):
                for t, (slope, p) in tests.items():
                    counts[(sense, t)] += M.significant_counts(r[slope], r[p], sign, th["alpha"])
        for sense in results:
            for t in tests:
                results[sense][f"{cname}:{t}"] = M.share_of(*counts[(sense, t)])
    out = []
    for sense in ("increase", "decrease"):
        c = Candidate(
            name,
            {"y1": y1, "y2": y2, "sense": sense, "alpha": th["alpha"]},
            (y1, y2),
            sensors=s.sensors(y1, y2) + [k for k in s.coarse],
            extra={"sense": sense},
        )
        c.methods = {"share": {k: v for k, v in results[sense].items() if math.isfinite(v)}}
        out.append(c)
    return out


def lowest_greenness(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    ys = s.years
    # persistently vegetated land: growing-season NDVI above veg_ndvi in at least 90% of the years
    veg = np.zeros(s.shape, bool)
    for r0, r1, frames in s.year_rows("ndvi_h", ys):  # block by block: not the whole (years, H, W) cube
        above = sum(((f > th["veg_ndvi"]).astype(np.int32) for f in frames), np.zeros((r1 - r0, s.shape[1]), np.int32))
        finite = sum((np.isfinite(f).astype(np.int32) for f in frames), np.zeros_like(above))
        veg[r0:r1] = (above >= 0.9 * finite) & (finite > 0)
    veg &= s.inside
    base_years = [y for y in range(1991, 2021)]
    annual = {
        y: np.mean([s.precip[(y, m)] for m in range(1, 13) if (y, m) in s.precip]) for y in {y for y, _ in s.precip}
    }
    growing = {y: np.mean([s.precip[(y, m)] for m in range(4, 10) if (y, m) in s.precip]) for y in annual}
    have_base = [y for y in base_years if y in annual]
    out = []
    for y1, y2 in dict.fromkeys([(ER.not_before(_t(name), ys[0]), ys[-1]), (ys[0], ys[-1])]):
        c = Candidate(
            name, {"y1": y1, "y2": y2}, (y1, y2), sensors=s.sensors(y1, y2), extra={"vegetated_pixels": int(veg.sum())}
        )
        yrs = s.years_between(y1, y2)
        low = {}
        for comp, stat in (("ndvi_h", np.nanmedian), ("ndvi_h", np.nanmean), ("ndvi_r", np.nanmedian)):
            vals = _region_series(s, comp, veg, yrs, stat)
            low[f"landsat_{comp}_{stat.__name__}"] = M.smallest_year(yrs, vals)
        for label, d in s.coarse.items():
            sel = [i for i, y in enumerate(d["years"]) if y1 <= y <= y2]
            if len(sel) >= 0.8 * len(yrs):
                vals = [
                    _region_stat(s, lambda r0, r1, i=i, d=d: cube_rows(d["gs"], i, r0, r1), veg, np.nanmedian, None)
                    for i in sel
                ]
                low[label.lower().replace(" ", "_")] = M.smallest_year([d["years"][i] for i in sel], vals)
        c.methods = {"year": low}
        vote, _ = M.combine_votes(low)
        if len(have_base) < th["min_baseline_years"]:
            c.drop = f"ERA5-Land covers only {len(have_base)} of the 1991-2020 baseline years"
        elif vote is not None and vote in annual:
            drier, ratios = {}, []
            for mname, table, agg in (
                ("annual_vs_mean", annual, np.mean),
                ("growing_vs_mean", growing, np.mean),
                ("annual_vs_median", annual, np.median),
            ):
                basev = float(agg([table[y] for y in have_base]))
                ratio = table[vote] / basev
                ratios.append(ratio)
                drier[mname] = "drier" if ratio < 1 else "not drier"
            c.methods["drier"] = drier
            c.extra["precip_ratio"] = [round(r, 3) for r in ratios]
            if any(abs(r - 1) < th["near_ratio"] for r in ratios):
                c.drop = "precipitation of the year is within 3% of the 1991-2020 mean"
        out.append(c)
    return out


def crop_peak(s: SiteSeries, name: str) -> list[Candidate]:
    th = _thr(name)
    ys = s.years
    y1, y2 = max(ys[0], ys[-1] - 9), ys[-1]
    c = Candidate(name, {"y1": y1, "y2": y2}, (y1, y2), sensors=s.sensors(y1, y2))
    if s.crop_mask is None:
        return []
    months = {}
    for source, obs in s.crop_ndvi.items():
        sel = [(d, v) for d, v in obs if y1 <= d.year <= y2]
        if len(sel) < th["min_obs"]:
            continue
        m = [d.month for d, _ in sel]
        v = [x for _, x in sel]
        doy = [d.timetuple().tm_yday for d, _ in sel]
        key = source.lower().replace(" ", "_")
        months[f"{key}:monthly_median"] = M.peak_month_climatology(m, v, "median")
        months[f"{key}:monthly_mean"] = M.peak_month_climatology(m, v, "mean")
        if source != "Landsat":
            months[f"{key}:harmonic"] = M.peak_month_harmonic(doy, v, harmonics=3)
    c.methods = {"month": months}
    c.sensors = sorted(set(c.sensors) | {k for k in s.crop_ndvi if k != "Landsat"})
    c.extra["crop_mask"] = "ESA WorldCover 2021 class 40 (cropland), eroded by 4 pixels"
    return [c]


# ---- snow


def _winter_days(winter: int) -> list[dt.date]:
    """1 December of the previous year to 31 March of `winter` (a winter is named by the year of its January)."""
    d0, d1 = dt.date(winter - 1, 12, 1), dt.date(winter, 3, 31)
    return [d0 + dt.timedelta(days=i) for i in range((d1 - d0).days + 1)]


def winter_cube(s: SiteSeries, label: str, winter: int, min_coverage: float) -> np.ndarray | None:
    """(days, product pixels) NDSI of one winter with a NaN row for every day without a file; None when fewer
    than `min_coverage` of the days have a file."""
    d = s.snow.get(label)
    if not d:
        return None
    days = _winter_days(winter)
    pos = {day: i for i, day in enumerate(days)}
    cube = np.full((len(days), d["ndsi"].shape[1]), np.nan, np.float32)
    have = 0
    for date, row in zip(d["dates"], d["ndsi"], strict=True):
        if date in pos:
            cube[pos[date]] = row
            have += 1
    return cube if have >= min_coverage * len(days) else None


def winter_snow_days(cube: np.ndarray, weights: np.ndarray, threshold: float, how: str) -> float:
    """Site-mean snow-covered days of one winter cube: NDSI >= threshold, gaps (cloud, night, missing days)
    filled from the nearest observed day ("gap_filled") or not filled, the snow share of observed days scaled
    to the winter ("observed_share"). Product pixels never observed (water, always cloudy) do not count."""
    seen = np.isfinite(cube).sum(0)
    land = seen >= max(1, int(0.1 * cube.shape[0]))
    if not land.any():
        return float("nan")
    if how == "gap_filled":
        per = M.snow_days(cube[:, land], threshold, gap_fill=True)
    else:
        per = M.snow_days_observed_share(cube[:, land], threshold)
    w = weights[land]
    ok = np.isfinite(per)
    return float(np.sum(per[ok] * w[ok]) / np.sum(w[ok])) if ok.any() else float("nan")


def _winter_text(w1: int, w2: int) -> str:
    one = lambda w: f"{w - 1}/{str(w)[2:]}"  # noqa: E731
    return f"winter {one(w1)}" if w1 == w2 else f"winters {one(w1)} to {one(w2)}"


def snow_compare(s: SiteSeries, name: str) -> list[Candidate]:
    """More, fewer or about the same snow-covered days per winter (1 Dec - 31 Mar) in a later winter (or winters)
    than in an earlier one, from MOD10A1/MYD10A1 daily NDSI snow cover: NDSI >= 40 and >= 50, with and
    without temporal gap filling, for each MODIS platform in the record."""
    th = _thr(name)
    if not s.snow:
        return []
    per: dict[str, dict[int, float]] = {}  # method -> winter -> days
    labels = sorted(s.snow)
    methods = [(thr, how) for how in _sweep(name)["count"] for thr in (th["ndsi_low"], th["ndsi_high"])]
    for label in labels:
        d = s.snow[label]
        for w in sorted({x.year + (x.month >= 12) for x in d["dates"]}):
            cube = winter_cube(s, label, w, th["min_winter_coverage"])
            if cube is None:
                continue
            for thr, how in methods:
                key = f"{label.lower().replace(' ', '_')}:ndsi>={thr}:{how}"
                per.setdefault(key, {})[w] = winter_snow_days(cube, d["weights"], thr, how)
    winters = sorted({w for v in per.values() for w in v})
    if len(winters) < 2:
        return []
    pairs = [((winters[0], winters[0]), (winters[-1], winters[-1]))]
    if len(winters) >= 4:
        pairs.append(((winters[0], winters[1]), (winters[-2], winters[-1])))
    out = []
    for (a1, a2), (b1, b2) in pairs:
        c = Candidate(
            name,
            {"a": _winter_text(a1, a2), "b": _winter_text(b1, b2), "a1": a1, "a2": a2, "b1": b1, "b2": b2},
            (a1 - 1, b2),
            sensors=list(labels),
        )
        before, after, change, direction = {}, {}, {}, {}
        for m, values in per.items():
            va = [values.get(w, float("nan")) for w in range(a1, a2 + 1)]
            vb = [values.get(w, float("nan")) for w in range(b1, b2 + 1)]
            if not (np.all(np.isfinite(va)) and np.all(np.isfinite(vb))):
                continue
            before[m], after[m] = float(np.mean(va)), float(np.mean(vb))
            change[m] = after[m] - before[m]
            direction[m] = M.three_way(change[m], th["same_within_days"], ("more", "fewer", "about the same"))
        c.methods = {"direction": direction, "change": change, "days_before": before, "days_after": after}
        c.extra["snow_days_by_winter"] = {
            m: {str(w): round(v, 2) for w, v in values.items()} for m, values in per.items()
        }
        if change:
            med = float(np.median(list(change.values())))
            if M.near(abs(med), th["same_within_days"], th["near_margin_days"]):
                c.drop = (
                    f"change of {med:.1f} days is within {th['near_margin_days']} days of the "
                    f"+-{th['same_within_days']} days threshold"
                )
        out.append(c)
    return out


COMPUTE: dict[str, Callable[[SiteSeries, str], list[Candidate]]] = {
    "snow_compare": snow_compare,
    "water_area_pair": water_area_pair,
    "water_trend": water_trend,
    "greenness_trend": greenness_trend,
    "burn_year": burn_year,
    "water_periods": water_periods,
    "builtup_quadrant": builtup_quadrant,
    "ndvi_share": ndvi_share,
    "loss_cause": loss_cause,
    "cover_after_loss": cover_after_loss,
    "lowest_greenness": lowest_greenness,
    "tree_cover_change": tree_cover_change,
    "crop_peak": crop_peak,
    "burn_recovery": burn_recovery,
    "forest_loss_product": forest_loss_product,
}


#: what of the record each compute rule reads (build_series parts); rules not named read all but snow
COMPUTE_PARTS: dict[str, frozenset[str]] = {"snow_compare": frozenset({"snow"})}


def series_parts(names: list[str]) -> frozenset[str]:
    """The build_series parts the named templates need."""
    from reviewer.bank.series import PARTS

    out: set[str] = set()
    for n in names:
        out |= COMPUTE_PARTS.get(_t(n)["compute"], PARTS - {"snow"})
    return frozenset(out)


# ----------------------------------------------------------------------------- finishing


def _round(v: Any) -> Any:
    if isinstance(v, float):
        return float(f"{v:.4g}") if v != 0 else 0.0
    if isinstance(v, np.integer):
        return int(v)
    return v


def _outward(lo: float, hi: float, digits: int = 4) -> tuple[float, float]:
    """Bounds rounded outward to `digits` significant digits, so rounding never narrows the range."""

    def step(v: float) -> float:
        return 10 ** (math.floor(math.log10(abs(v))) - digits + 1) if v else 10**-digits

    return (
        float(f"{math.floor(lo / step(lo)) * step(lo):.{digits + 6}g}"),
        float(f"{math.ceil(hi / step(hi)) * step(hi):.{digits + 6}g}"),
    )


def _fill(text: str, params: dict[str, Any]) -> str:
    class D(dict):
        def __missing__(self, key):
            return "{" + key + "}"

    return text.format_map(D(params))


def candidate_params(c: Candidate) -> dict[str, Any]:
    """The parameters that tell a template's candidates apart (JSON values; option texts left out), kept in a
    question's provenance so the candidate can be found again (pair checks recompute it on an altered record)."""
    return _jsonable({k: v for k, v in c.params.items() if not k.endswith("options")})


def _options_text(options: list[str]) -> str:
    return ", ".join(options[:-1]) + " or " + options[-1] if len(options) > 1 else options[0]


def finish(
    c: Candidate,
    site_id: str,
    number: int,
    seed: int,
    gen_cfg: dict[str, Any],
    *,
    site_bbox: tuple[float, float, float, float] | None = None,
) -> tuple[dict | None, str | None]:
    """The question of a candidate, or (None, reason) when it must be dropped. `site_bbox` (the site grid's
    [west, south, east, north]) places a central-square region of the evidence view in the site's CRS.
    A question holding a value that is not finite anywhere is dropped (JSON has no NaN; a bank never does)."""
    q, reason = _finish(c, site_id, number, seed, gen_cfg, site_bbox=site_bbox)
    if q is not None:
        bad = nonfinite_paths(q)
        if bad:
            return None, f"not a finite value at {', '.join(bad[:3])}"
    return q, reason


def _finish(
    c: Candidate,
    site_id: str,
    number: int,
    seed: int,
    gen_cfg: dict[str, Any],
    *,
    site_bbox: tuple[float, float, float, float] | None = None,
) -> tuple[dict | None, str | None]:
    tpl = _t(c.template)
    c.methods = _finite_methods(c.methods)
    params = candidate_params(c)
    rng = np.random.default_rng([seed, number, sum(map(ord, c.template))])
    fields = json.loads(json.dumps(tpl["fields"]))
    concl = tpl["conclusion"]
    cfield = next(f for f in fields if f["name"] == concl)
    text, phr = _fill_text(c, tpl, fields, rng)
    y1, y2 = c.period
    sensors = sorted(set(c.sensors), key=c.sensors.index)
    q: dict[str, Any] = {
        "id": f"{site_id}-{number}",
        "site": site_id,
        "class": tpl["class"],
        "task": tpl["task"],
        "period": {"start": f"{y1}-01-01", "end": f"{y2}-12-31"},
        "text": text,
        "fields": fields,
        "conclusion": concl,
        "no_change": tpl["no_change"],
        "reference_source": tpl["reference_source"],
        "sensors": sensors,
        "multi_sensor": multi_sensor_of(sensors),
    }
    prov: dict[str, Any] = {
        "generator": GENERATOR,
        "template": c.template,
        "params": params,
        "phrasing": phr,
        "seed": seed,
        "methods": {k: {m: _round(v) for m, v in d.items()} for k, d in c.methods.items()},
        "thresholds": tpl["thresholds"],
        "config": gen_cfg,
        **{k: _jsonable(v) for k, v in c.extra.items() if k != "pending_reason"},
    }
    if c.insufficient is not None:
        q.update(
            {
                "class": "insufficient",
                "task": None,
                "reference": {concl: INSUFFICIENT},
                "reference_source": "observations",
                "no_change": None,
            }
        )
        prov["observations"] = c.insufficient
        q["evidence"] = _evidence(c, tpl, q["reference"], site_bbox)
        q["provenance"] = prov
        return q, None
    if c.drop:
        return None, c.drop
    reference, ranges, reason = _combine_methods(c, tpl, fields, gen_cfg, prov)
    if reason is not None:
        return None, reason
    q["reference"] = reference
    _reference_from(c, tpl, reference, prov)
    if ranges:
        q["reference_range"] = ranges
        consistency.clamp_ranges(q, tpl)
    q["provenance"] = prov
    broken = consistency.problems(q)
    if broken:
        code, text = broken[0]
        return None, f"{code}: {text}"
    accept = {}
    if cfield["type"] == "category" and concl in reference:
        accept[concl] = []
    if accept and any(accept.values()):
        q["accept"] = accept
    q["evidence"] = _evidence(c, tpl, reference, site_bbox)
    q["provenance"] = prov
    return q, None


def _fill_text(c: Candidate, tpl: dict[str, Any], fields: list[dict[str, Any]], rng) -> tuple[str, int]:
    """Shuffle the category fields' options (in place) and fill a seeded phrasing: (text, phrasing index)."""
    concl = tpl["conclusion"]
    # the answer field's options are shuffled with the seed (no position bias in the choices); the sentence
    # names them in the template's natural order ("up, down or about the same"). {options} is the
    # conclusion's options, or else the first category field's
    for f in sorted(fields, key=lambda f: f["name"] != concl):
        if f["type"] == "category":
            natural = _options_text(list(f["options"]))
            opts = list(f["options"])
            rng.shuffle(opts)
            f["options"] = opts
            c.params.setdefault("options", natural)
            c.params[f"{f['name']}_options"] = natural
    phr = int(rng.integers(len(tpl["phrasings"])))
    return _fill(tpl["phrasings"][phr], {**tpl["thresholds"], **c.params}), phr


def phrasings_of(q: dict[str, Any]) -> list[str]:
    """Every phrasing of a generated question's template filled with its parameters (the options named in the
    template's natural order): what a reviewer could be shown for it under any seed."""
    tpl = _t(q["provenance"]["template"])
    params = dict(q["provenance"].get("params") or {})
    fields = sorted(tpl["fields"], key=lambda f: f["name"] != tpl["conclusion"])
    for f in fields:
        if f["type"] == "category":
            params.setdefault("options", _options_text(list(f["options"])))
    return [_fill(p, {**tpl["thresholds"], **params}) for p in tpl["phrasings"]]


def _combine_methods(
    c: Candidate, tpl: dict[str, Any], fields: list[dict[str, Any]], gen_cfg: dict[str, Any], prov: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, list[float]], str | None]:
    """(reference, ranges, None), or ({}, {}, reason) when the methods leave the conclusion open: numbers are
    the median of the methods with a range of at least the minimum width; categories need the agreement share."""
    concl = tpl["conclusion"]
    reference, ranges = {}, {}
    for f in fields:
        name = f["name"]
        vals = c.methods.get(name, {})
        if c.reference_override and name in c.reference_override:
            reference[name] = c.reference_override[name]
            if f["type"] == "number":
                comb = M.combine_numeric(
                    {"product": reference[name]}, abs_floor=tpl["thresholds"].get("abs_floor_km2", 0.0)
                )
                ranges[name] = list(_outward(*comb[1]))
            continue
        if not vals:
            if name == concl:
                return {}, {}, f"no method gave a value for the conclusion field {name}"
            continue
        if f["type"] == "number":
            floor = tpl["thresholds"].get(
                "abs_floor", tpl["thresholds"].get("abs_floor_pct", tpl["thresholds"].get("abs_floor_km2", 0.0))
            )
            if name == "years":
                floor = max(floor, 0.5)
            comb = M.combine_numeric(vals, abs_floor=floor)
            if comb is None:
                continue
            ref, (lo, hi) = comb
            ref = _round(ref)
            lo, hi = min_range(ref, lo, hi)
            if ref == 0 and hi <= lo:
                lo, hi = -max(floor, 1e-3), max(floor, 1e-3)
            lo, hi = _outward(lo, hi)
            reference[name] = ref
            ranges[name] = [lo, hi]
        else:
            need = gen_cfg["min_agreement"] if tpl["reference_source"] == "method" else 0.0
            value, share = M.combine_votes(vals, min_share=need)
            if value is None:
                if name == concl or tpl["reference_source"] == "method":
                    return {}, {}, f"methods disagree on {name}: {share:.0%} agree, {need:.0%} needed ({dict(vals)})"
                continue
            reference[name] = int(value) if f["type"] in ("year", "month") else value
            prov.setdefault("agreement", {})[name] = round(share, 3)
    return reference, ranges, None


def _reference_from(c: Candidate, tpl: dict[str, Any], reference: dict[str, Any], prov: dict[str, Any]) -> None:
    """Where a visual or withheld-product reference came from, or that it is the methods' draft awaiting review."""
    if tpl["reference_source"] in ("visual", "withheld_product"):
        pending = c.extra.get("pending_reason")
        product = c.extra.get("product")
        if c.reference_override and not pending:
            prov["reference_from"] = f"product: {product['name']} ({product['file']})" if product else "product value"
        else:
            # the schema requires a reference: it holds the methods' draft until review replaces it
            prov["reference_from"] = "method draft (needs review)"
            prov["reference_pending"] = {
                "needs_review": True,
                "reason": pending or f"{tpl['reference_source']} reference not available at generation",
                "draft": "the reference values are computed by the methods below, not the "
                f"{tpl['reference_source'].replace('_', ' ')} answer",
                "draft_methods": {k: sorted(v) for k, v in c.methods.items() if k in reference},
            }


def _evidence(
    c: Candidate, tpl: dict[str, Any], reference: dict[str, Any], site_bbox: tuple[float, float, float, float] | None
) -> dict[str, Any]:
    """The question's evidence view from its template's spec: the region a candidate is about is its `region`
    (quadrant, centre or site), by key in extra or by its name in the phrasing parameters."""
    names = {v: k for k, v in REGION_NAMES.items()}
    region = c.extra.get("region") or names.get(str(c.params.get("region")))
    view = build_view(
        tpl["evidence"],
        params=candidate_params(c),
        period=c.period,
        reference=reference,
        region=region,
        site_bbox=site_bbox,
    )
    doc = view.to_json()
    note = _decision_note(c, tpl, reference)
    if note:
        doc["note"] = note
    values = {k: {m: _round(v) for m, v in d.items()} for k, d in c.methods.items() if d and k in reference}
    if values and c.insufficient is None:
        doc["values"] = _jsonable(values)
    return doc


def _decision_note(c: Candidate, tpl: dict[str, Any], reference: dict[str, Any]) -> str:
    """What the reviewer should see first: which periods lack imagery, or what the methods say of the conclusion."""
    if c.insufficient is not None:
        missing = c.insufficient.get("missing") or []
        if missing:
            return "insufficient evidence: " + "; ".join(m["text"] for m in missing)
        return "insufficient evidence: too few clear observations (see provenance.observations)"
    concl = tpl["conclusion"]
    votes = c.methods.get(concl) or {}
    value = reference.get(concl)
    if c.reference_override and concl in c.reference_override:
        product = (c.extra.get("product") or {}).get("name", "the reference product")
        return f"{concl} {value}: from {product}; the imagery methods give {sorted(votes.values())}"
    if value is None or not votes:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool) and concl not in ("year", "month"):
        return f"{concl} {value}: the median of {len(votes)} methods"
    agree = sum(1 for v in votes.values() if v == value)
    return f"{concl} '{value}': {agree} of {len(votes)} methods agree"


def _jsonable(v: Any) -> Any:
    """A JSON value of `v`: numpy scalars as Python numbers, floats rounded, NaN and infinity as null (JSON has
    neither; a bank file never holds them)."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return _round(v)


def _finite_methods(methods: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The methods' values without the ones that are not a value (NaN, infinity, None): a method that found
    nothing to measure (an all-cloud year, an empty region) gives no value rather than a NaN."""

    def ok(v: Any) -> bool:
        if isinstance(v, np.generic):
            v = v.item()
        return v is not None and not (isinstance(v, float) and not math.isfinite(v))

    return {k: {m: v for m, v in d.items() if ok(v)} for k, d in methods.items()}


def nonfinite_paths(v: Any, path: str = "") -> list[str]:
    """Where a JSON-to-be value holds NaN or infinity (dotted paths); empty when it holds none."""
    if isinstance(v, dict):
        return [p for k, x in v.items() for p in nonfinite_paths(x, f"{path}.{k}" if path else str(k))]
    if isinstance(v, list | tuple):
        return [p for i, x in enumerate(v) for p in nonfinite_paths(x, f"{path}[{i}]")]
    if isinstance(v, float | np.floating) and not math.isfinite(float(v)):
        return [path]
    return []


def site_record(index) -> dict[str, Any]:
    doc = dict(index.site.doc)
    keep = ("id", "name", "kind", "theme", "role", "bbox", "crs", "boundary", "resolution", "shape")
    return {k: doc[k] for k in keep if k in doc}


def run_compute(series: SiteSeries, name: str) -> list[Candidate]:
    """A template's candidates. Empty or all-cloud years make NaN medians and means on purpose (a method with
    nothing to measure gives no value, and finish leaves it out), so numpy's warnings about them are not shown."""
    import warnings

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = COMPUTE[_t(name)["compute"]](series, name)
        for c in out:
            _apply_evidence_rules(series, c)
    return out


def _apply_evidence_rules(series: SiteSeries, c: Candidate) -> None:
    """A candidate whose compared periods lack clear imagery (templates.json `evidence_rules`) becomes an
    insufficient-evidence question naming what is missing, whatever its methods made of the gaps."""
    tpl = _t(c.template)
    if c.period[0] > c.period[1]:
        return  # a record too short for the template's windows: dropped as such, not asked
    gap = ER.product_gap(tpl, c.period)
    if gap:
        c.drop, c.insufficient = gap, None  # the product, not the record, lacks these years: not asked
        return
    if c.insufficient is not None:
        # the template's own count said so: name the years (and sensors) that lack imagery
        counts = c.insufficient.get("clear_observations_per_year")
        if counts and "missing" not in c.insufficient:
            rule = ER.rules_of(tpl).get("clear_obs", {})
            needed = c.insufficient.get("needed_per_year", 1)
            c.insufficient["missing"] = ER.missing_years(series, counts, needed, rule.get("season", "all"))
        return
    names = {v: k for k, v in REGION_NAMES.items()}
    region = c.extra.get("region") or names.get(str(c.params.get("region")))
    missing = ER.missing_evidence(series, tpl, c.params, c.period, region)
    if missing:
        c.insufficient = {"missing": missing, "rule": ER.rules_of(tpl)}
        c.drop = None


def _too_short(years: list[int], period: tuple[int, int]) -> str:
    """Why a template with a reversed period is not asked: its rules, on this record, end it before it starts."""
    have = "none" if not years else str(years[0]) if years[0] == years[-1] else f"{years[0]}-{years[-1]}"
    return (
        f"the record is too short for this template: its rules give it the period {period[0]}-{period[1]}, "
        f"which ends before it starts (the record's years: {have})"
    )


def _questions(
    series: SiteSeries,
    names: list[str],
    report: GenerationReport,
    site_id: str,
    seed: int,
    gen_cfg: dict[str, Any],
    site_bbox: tuple[float, float, float, float] | None,
    progress: Callable[[float, str], None] | None,
    breaks: Any = None,
) -> list[dict[str, Any]]:
    """Every template's candidates finished into questions, numbered in template order; the dropped ones and
    the counts go into `report`. `breaks` (a sensor_break.BreakCheck) checks kept items spanning a sensor
    change."""
    questions, number = [], 0
    for k, name in enumerate(names):
        if progress is not None:
            progress(0.8 + 0.2 * k / max(1, len(names)), f"template {name}")
        for c in run_compute(series, name):
            number += 1
            if c.period[0] > c.period[1]:  # a record too short for the template's windows (whatever the
                # template made of the reversed period: "no tree cover loss above 0.1 km2 in the period")
                c.drop = _too_short(series.years, c.period)
            q, reason = finish(c, site_id, number, seed, gen_cfg, site_bbox=site_bbox)
            if q is not None and breaks is not None and q["class"] != "insufficient":
                reason = _check_break(breaks, series, c, q, report)
                q = None if reason else q
            if q is None:
                report.dropped.append(
                    {
                        "template": name,
                        "period": list(c.period),
                        "params": _jsonable({k: v for k, v in c.params.items() if k != "options"}),
                        "reason": reason,
                        "rule": _rule_code(reason),
                        "methods": _jsonable(c.methods),
                    }
                )
                continue
            questions.append(q)
            if q["class"] == "insufficient":
                report.insufficient += 1
            else:
                report.by_task[q["task"]] = report.by_task.get(q["task"], 0) + 1
    return questions


def _check_break(
    breaks: Any, series: SiteSeries, c: Candidate, q: dict[str, Any], report: GenerationReport
) -> str | None:
    """The break check of a kept question, stored in its provenance; the drop reason when the setting drops
    items within the sensors' offset (else they are marked for an expert)."""
    from reviewer.bank import sensor_break as SB

    tpl = _t(c.template)
    names = {v: k for k, v in REGION_NAMES.items()}
    region = c.extra.get("region") or names.get(str(c.params.get("region")))
    # the periods the reference turns on, as its evidence view shows them (the years around a burn, the two
    # compared periods, the fall and the recovery), else the periods its evidence rules compare
    shown = [tuple(p) for p in (q.get("evidence") or {}).get("periods", [])]
    periods = shown or ER.compared_periods(tpl, c.params, c.period)
    with np.errstate(all="ignore"):
        doc = SB.assess(breaks, series, tpl, periods, region)
    if doc is None:
        return None
    b = report.sensor_break
    b.setdefault("mode", breaks.mode)
    for k in ("checked", "within", "close", "unknown"):
        b.setdefault(k, 0)
    b["checked"] += 1
    b["unknown"] += doc["beyond_offset"] is None
    if doc["beyond_offset"] is False:
        b["within"] += 1
        if breaks.mode == "drop":
            return (
                f"sensor_break: the change {doc['change']} of {doc['index']} lies within the {doc['sensors'][0]} to "
                f"{doc['sensors'][1]} offset {doc['offset']['harmonized']['offset']} +- {doc['margin']}"
            )
        doc["marked"] = True
        doc["needs_expert"] = "the change lies within the offset between the sensors it spans"
    elif doc.get("close"):
        b["close"] += 1
    q["provenance"]["sensor_break"] = _jsonable(doc)
    if doc.get("offset") and doc.get("change") is not None:
        off = doc["offset"]["harmonized"]
        verdict = (
            "WITHIN the sensors' offset: check with an expert"
            if doc["beyond_offset"] is False
            else "close to the sensors' offset"
            if doc.get("close")
            else "beyond the sensors' offset"
        )
        line = (
            f"{doc['index']} change {doc['change']:+.3f} at the {doc['region']} from {doc['sensors'][0]} to "
            f"{doc['sensors'][1]}; their offset there {off['offset']:+.3f} +- {off['spread']:.3f}: {verdict}"
        )
        q["evidence"]["note"] = "; ".join(x for x in (q["evidence"].get("note"), line) if x)
    return None


def _rule_code(reason: str | None) -> str:
    """The consistency rule's reason code a drop reason starts with, else the kind of drop."""
    code = (reason or "").split(":", 1)[0]
    if code in rules_doc():
        return code
    if reason and reason.startswith("not a finite value"):
        return "not_finite"
    if reason and reason.startswith("sensor_break:"):
        return "sensor_break"
    return "method"


def _report_json(report: GenerationReport, seed: int, balance: float | None, gen_cfg: dict[str, Any]) -> str:
    """generation_report.json: what was made, dropped and read, and the settings."""
    return (
        json.dumps(
            {
                "site": report.site,
                "questions": report.questions,
                "by_task": report.by_task,
                "insufficient": report.insufficient,
                "dropped": len(report.dropped),
                "seconds": round(report.seconds, 2),
                "series_seconds": round(report.series_seconds, 2),
                "scenes_read": report.scenes_read,
                "peak_memory_bytes": report.peak_memory,
                "memory_budget_bytes": report.memory_budget,
                "spilled_bytes": report.spilled,
                "cluster_tasks": report.tasks,
                "sensor_break": report.sensor_break,
                "seed": seed,
                "balance": balance,
                "config": gen_cfg,
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )


def generate(
    site_dir: str | Path,
    out_dir: str | Path,
    options: GenerationOptions | None = None,
    *,
    progress: Callable[[float, str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    runner: Any = None,
) -> GenerationReport:
    """Generate candidate questions of a site into a bank folder, with `options` (reviewer.bank.options; the
    defaults when None). `runner`, a dask client whose workers take the site's years as tasks when the site has
    at least `options.split_above` Landsat scene-megapixels, only changes how the record is read, never what is
    written. Importing the bank into the review store is a review operation (reviewer.review.banks)."""
    from reviewer.bank.spill import DEFAULT_BUDGET, MemoryMeter

    # the defaults resolved once, so the report states what was used
    opts = options or GenerationOptions()
    opts = replace(
        opts,
        memory=opts.memory or DEFAULT_BUDGET,
        min_agreement=methods_agree_share() if opts.min_agreement is None else opts.min_agreement,
        sensor_break=opts.sensor_break or templates_doc()["sensor_break"]["on_break"],
    )
    with MemoryMeter() as meter:
        report = _generate(site_dir, out_dir, opts, progress=progress, cancel=cancel, runner=runner, meter=meter)
    report.peak_memory = max(report.peak_memory, meter.peak)
    return report


def _generate(
    site_dir: str | Path,
    out_dir: str | Path,
    opts: GenerationOptions,
    *,
    progress: Callable[[float, str], None] | None,
    cancel: Callable[[], bool] | None,
    runner: Any,
    meter: Any,
) -> GenerationReport:
    t0 = time.perf_counter()
    tasks, seed, balance, memory, on_break = opts.tasks, opts.seed, opts.balance, opts.memory, opts.sensor_break
    # a file, a read-only place or a folder holding others' files is refused before the record is read
    check_output_folder(out_dir, ours=GENERATED_ENTRIES)
    names = [n for n, t in templates().items() if not tasks or t["task"] in tasks]
    index = cached_index(site_dir)
    reading = opts.reading()
    if reading.pop("split_above") > scene_mpx(index):
        runner = None  # a small site: its years read here cost less than as tasks
    series = build_series(
        index,
        config=opts.series,
        progress=progress,
        cancel=cancel,
        runner=runner,
        parts=series_parts(names),
        memory=memory,
        **reading,
    )
    gen_cfg = {
        "min_agreement": opts.min_agreement,
        "series": series.config.as_dict(),
        "min_relative_range": MIN_RELATIVE_HALF_WIDTH,
        "reference_tier": "T1 Landsat, bright-cloud pixels removed",
    }
    site_id = index.site.id
    report = GenerationReport(site_id, str(out_dir), series_seconds=series.seconds, scenes_read=series.scenes_read)
    report.memory_budget, report.spilled, report.tasks = memory, series.store.on_disk, series.tasks
    breaks = None
    if on_break != "off":
        from reviewer.bank.sensor_break import BreakCheck

        breaks = BreakCheck(index, templates_doc()["sensor_break"], on_break)
        report.sensor_break = {"mode": on_break, "checked": 0, "within": 0, "close": 0, "unknown": 0}
    gen_cfg["sensor_break"] = on_break
    # a record of nothing the methods read ends here (series.nothing_read, logged): their per-pixel work on an
    # empty series took minutes on a Sentinel-2 tile
    questions = (
        []
        if series.nothing_read
        else _questions(series, names, report, site_id, seed, gen_cfg, index.site.bbox, progress, breaks)
    )
    if balance is not None:
        from reviewer.bank.balance import balance_questions

        questions, surplus = balance_questions(questions, max_ratio=balance, seed=seed)
        report.dropped.extend(surplus)
        for d in surplus:
            task = _t(d["template"])["task"]
            report.by_task[task] -= 1
    out = Path(out_dir)
    report.questions = len(questions)
    series.store.close()
    del series
    report.seconds = time.perf_counter() - t0
    report.peak_memory = meter.peak
    dropped = "".join(json.dumps(d, sort_keys=True) + "\n" for d in report.dropped)
    summary = _report_json(report, seed, balance, gen_cfg)
    # one folder, written whole (bank files, dropped candidates, this report) or not at all
    write_bank(
        out,
        BankContent(opts.bank_name or f"{site_id}-generated", opts.version, questions, [site_record(index)], []),
        extra_files={"dropped.jsonl": dropped.encode("utf-8"), "generation_report.json": summary.encode("utf-8")},
    )
    if progress is not None:
        progress(1.0, report.summary())
    return report
