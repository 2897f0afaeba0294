"""The cross-sensor break check: is an item's change larger than the offset between the sensors it spans?

EarthRecord's agents blame the instrument, or miss it, when a change spans a sensor transition (TM -> ETM+ ->
OLI, OLI <-> MSI). For a candidate whose compared periods fall on different sensors, the offset between the
two sensors is measured where the item looks (its region, its index), in the years both flew (templates.json
`sensor_break.overlaps`: TM/ETM+ 1999-2011, ETM+/OLI 2013-2022, OLI/MSI from 2015): for each acquisition of
the later sensor with one of the earlier sensor within `max_days`, the region means' difference (later minus
earlier); the offset is the median of these differences and its spread their robust standard deviation (1.4826
x MAD). It is measured on reflectance as distributed (raw) and on the harmonized scale the
reference methods read (Roy et al. 2016 for TM/ETM+, reviewer/record/harmonization.json). The item's change
(the region's mean index on the harmonized scale, later compared period minus earlier) lies within the offset when |change| is not more
than |offset| + `spread_factor` x spread: generation then marks the item for an expert or drops it (a setting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reviewer.bank.methods import NanMean

MODES = ("mark", "drop", "off")


@dataclass
class BreakCheck:
    """Offsets measured once per (sensor pair, region, index) on one site's record."""

    index: Any  # reviewer.record.scan.SceneIndex
    settings: dict[str, Any]
    mode: str = "mark"
    memo: dict[tuple, dict[str, Any] | None] = field(default_factory=dict)
    cube: Any = None  # a cache of the scenes' index grids (reviewer.record.stack.SceneCache): each read once

    def __post_init__(self) -> None:
        from reviewer.record.stack import SceneCache

        self.cube = SceneCache(256 * 2**20)

    def family(self, sensor: str) -> str | None:
        for fam, members in self.settings["families"].items():
            if sensor in members:
                return fam
        return None

    def overlap(self, early: str, late: str) -> dict[str, Any] | None:
        for o in self.settings["overlaps"]:
            if (o["earlier"], o["later"]) == (early, late):
                return o
        return None

    def offset(self, early: str, late: str, region: np.ndarray, region_name: str, index_name: str) -> dict | None:
        """The later family minus the earlier one at the region, raw and harmonized, through the overlaps in
        between (TM -> OLI is TM -> ETM+ plus ETM+ -> OLI: offsets add, spreads add in quadrature); None when a
        step has fewer than `min_pairs` concurrent acquisitions seeing the region."""
        hops, cur = [], early
        while cur != late:
            o = next((o for o in self.settings["overlaps"] if o["earlier"] == cur), None)
            if o is None:
                return None
            hops.append((cur, o["later"]))
            cur = o["later"]
        parts = []
        for e, la in hops:
            key = (e, la, region_name, index_name)
            if key not in self.memo:
                self.memo[key] = self._measure(e, la, region, index_name)
            if self.memo[key] is None:
                return None
            parts.append(self.memo[key])
        out: dict[str, Any] = {"index": index_name, "earlier": early, "later": late, "steps": parts}
        for scale in ("raw", "harmonized"):
            out[scale] = {
                "offset": round(sum(p[scale]["offset"] for p in parts), 4),
                "spread": round(math.sqrt(sum(p[scale]["spread"] ** 2 for p in parts)), 4),
            }
        return out

    def _measure(self, early: str, late: str, region: np.ndarray, index_name: str) -> dict | None:
        """One overlap: pairs of acquisitions at most `max_days` apart, compared on the region's pixels clear in
        both (clouds, shadows and ETM+ SLC-off gaps differ between the two dates)."""
        from reviewer.record.decode import Grid
        from reviewer.record.stack import composite_bands

        o = self.overlap(early, late)
        if o is None or not region.any():
            return None
        fams = self.settings["families"]
        lo = o["years"][0]
        hi = o["years"][1] if o["years"][1] is not None else 9999
        months = set(self.settings.get("months") or range(1, 13))
        scenes = {
            fam: [
                sc
                for sc in self.index.scenes
                if sc.record
                and sc.label in fams[fam]
                and lo <= sc.year <= hi
                and sc.date.month in months
                and composite_bands(index_name, sc) is not None
            ]
            for fam in (early, late)
        }
        pairs = _concurrent(
            [(sc.date, sc) for sc in scenes[early]], [(sc.date, sc) for sc in scenes[late]], self.settings["max_days"]
        )
        grid = Grid.of_site(self.index.site)
        out: dict[str, Any] = {"index": index_name, "earlier": early, "later": late, "overlap_years": o["years"]}
        need = max(1, int(0.3 * region.sum()))
        diffs: dict[str, list[float]] = {"raw": [], "harmonized": []}
        seen: dict[str, set[int]] = {"raw": set(), "harmonized": set()}
        for d, a, b in pairs:
            for scale, (n, mean_a, mean_b) in _pair_means(self, a, b, index_name, grid, region).items():
                if n >= need:
                    diffs[scale].append(float(mean_b.value() - mean_a.value()))
                    seen[scale].add(d.year)
        for scale in ("raw", "harmonized"):
            if len(diffs[scale]) < self.settings["min_pairs"]:
                return None
            arr, years = np.array(diffs[scale]), seen[scale]
            # robust spread (1.4826 x the median absolute deviation): a snowy or hazy date the mask missed on one
            # of the two sensors must not widen every offset of the site
            mad = float(np.median(np.abs(arr - np.median(arr))))
            out[scale] = {
                "offset": round(float(np.median(arr)), 4),
                "spread": round(1.4826 * mad, 4),
                "pairs": len(arr),
                "years": sorted(years),
            }
        return out


#: what a block of rows of a pair's reads holds (bytes): two scenes' bands and their index frames, both scales
PAIR_BLOCK_BYTES = 64 * 2**20


def _pair_means(
    check: BreakCheck, a: Any, b: Any, index_name: str, grid: Any, region: np.ndarray
) -> dict[str, tuple[int, NanMean, NanMean]]:
    """Per scale (raw, harmonized): the region's pixels clear in both scenes and each scene's mean index there,
    read a block of rows at a time (a pair of whole Landsat scenes' bands and indices was 2 GB); a site that fits
    one block is read whole through the check's cache, once for every region and both scales."""
    h, w = grid.shape
    rows = max(1, min(h, PAIR_BLOCK_BYTES // (w * 4 * 16)))  # 2 scenes x (2-3 bands + stacked copies + 2 indices)
    acc = {scale: (0, NanMean(), NanMean()) for scale in ("raw", "harmonized")}
    for r0 in range(0, h, rows):
        r1 = min(h, r0 + rows)
        reg = region[r0:r1]
        if not reg.any():
            continue
        whole = rows >= h
        g = grid if whole else grid.window((r0, r1), (0, w))
        ia, ib = (_indices_of(check, sc, index_name, g, cached=whole) for sc in (a, b))
        for scale, (n, mean_a, mean_b) in acc.items():
            va, vb = ia[scale], ib[scale]
            both = reg & np.isfinite(va) & np.isfinite(vb)
            mean_a.add(va[both])
            mean_b.add(vb[both])
            acc[scale] = (n + int(both.sum()), mean_a, mean_b)
    return acc


def _indices_of(check: BreakCheck, scene: Any, index_name: str, grid: Any, cached: bool) -> dict[str, np.ndarray]:
    """The scene's index on `grid` (the site grid or a block of its rows), raw and harmonized, from one read of its
    bands (the whole site's kept in the check's cache when `cached`: the cache knows grids by shape only)."""
    from reviewer.record.stack import composite_bands, composite_channels, harmonize, read_bands

    names = composite_bands(index_name, scene)
    bands = read_bands(scene, names, grid, cache=check.cube if cached else None)
    out = {"raw": composite_channels(index_name, names, bands)[0]}
    bands = np.stack([harmonize(bands[i], n, scene.sensor) for i, n in enumerate(names)])
    out["harmonized"] = composite_channels(index_name, names, bands)[0]
    return out


def _concurrent(early: list, late: list, max_days: int) -> list[tuple]:
    """(date, earlier value, later value) for each later observation with an earlier one within `max_days`
    (the nearest; concurrent acquisitions see the same ground, so their difference is the sensors')."""
    out = []
    for d, v in late:
        near = min(early, key=lambda e: abs((e[0] - d).days), default=None)
        if near is not None and abs((near[0] - d).days) <= max_days:
            out.append((d, near[1], v))
    return out


def families_of(check: BreakCheck, sensors: list[str]) -> list[str]:
    order = list(check.settings["families"])
    return sorted({f for s in sensors if (f := check.family(s))}, key=order.index)


def assess(
    check: BreakCheck, series: Any, tpl: dict[str, Any], periods: list[tuple[int, int]], region_name: str | None
) -> dict | None:
    """The break check of one candidate: None when its compared periods share a sensor family (or the template
    plots no index); else the change, the offset (raw and harmonized) and whether the change exceeds it."""
    index_name = tpl["evidence"].get("index")
    if not index_name or not periods:
        return None
    if len(periods) == 1:
        (a, b) = periods[0]
        periods = [(a, a), (b, b)]
    first, last = periods[0], periods[-1]
    early = families_of(check, series.sensors(*first))
    late = families_of(check, series.sensors(*last))
    if not early or not late or set(early) & set(late):
        return None
    e, la = early[0], late[-1]  # the transition the change spans: the oldest sensor before, the newest after
    region = series.regions.get(region_name or "site", series.inside) & series.inside
    off = check.offset(e, la, region, region_name or "site", index_name)
    comp = f"{index_name}_h"
    change = None
    if comp in series.composites:
        vals = []
        for lo, hi in (first, last):
            # the region's values of the period's years, a block of rows at a time (not every year's whole frame)
            mean = NanMean()
            for r0, r1, frames in series.year_rows(comp, series.years_between(lo, hi)):
                if frames:
                    mean.add(np.concatenate([f[region[r0:r1]] for f in frames]))
            vals.append(float(mean.value()) if mean.finite else math.nan)
        change = vals[1] - vals[0]
    doc: dict[str, Any] = {
        "sensors": [e, la],
        "periods": [list(first), list(last)],
        "index": index_name,
        "region": region_name or "site",
        "change": round(change, 4) if change is not None and math.isfinite(change) else None,
        "offset": off,
    }
    if off is None or doc["change"] is None:
        doc["beyond_offset"] = None
        doc["note"] = "no overlap years seen by both sensors at the region: the offset is unknown"
        return doc
    h = off["harmonized"]
    k = check.settings["spread_factor"]
    margin = abs(h["offset"]) + k * h["spread"]
    doc["beyond_offset"] = abs(doc["change"]) > margin
    doc["margin"] = round(margin, 4)
    doc["close"] = abs(doc["change"]) <= check.settings["close_factor"] * margin
    return doc
