"""Evidence rules: a candidate states a definite answer only when the record holds the imagery it rests on.

Each template's `evidence_rules` (templates.json, schemas/templates.schema.json) say how many clear Landsat
observations each compared period needs (the question's years, its two periods, windows of years at its ends,
or its whole period), in which season, and what share of the question's region must be seen clear in each
compared period. A candidate that fails them becomes an insufficient-evidence question, whose provenance (and
evidence view) says which period and which sensors lack what: the record really lacks the data there. The
rules also give the first year a template may ask about (`not_before`: the epoch of the reference product
it compares against, e.g. Hansen loss from 2001).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: what a Landsat clear observation is counted from (reviewer.bank.series clear_obs keys)
SEASONS = ("all", "growing", "water")


def rules_of(tpl: dict[str, Any]) -> dict[str, Any]:
    return tpl.get("evidence_rules", {})


def not_before(tpl: dict[str, Any], default: int) -> int:
    """The first year the template may ask about: its `not_before` rule, or `default` (the record's start)."""
    nb = rules_of(tpl).get("not_before")
    return max(default, int(nb)) if nb is not None else default


def compared_periods(tpl: dict[str, Any], params: dict[str, Any], period: tuple[int, int]) -> list[tuple[int, int]]:
    """The periods a candidate compares, by its rule's `compared`: its two years, its two periods (a1-a2,
    b1-b2), windows of `window` years at the period's ends, or the whole period."""
    rule = rules_of(tpl).get("clear_obs", {})
    how = rule.get("compared", "period")
    y1, y2 = period
    if how == "years":
        return list(dict.fromkeys([(params.get("y1", y1),) * 2, (params.get("y2", y2),) * 2]))
    if how == "periods" and all(k in params for k in ("a1", "a2", "b1", "b2")):
        return [(params["a1"], params["a2"]), (params["b1"], params["b2"])]
    if how == "windows":
        w = int(rule.get("window", 3)) - 1
        a, b = params.get("y1", y1), params.get("y2", y2)
        return [(a, min(a + w, b)), (max(b - w, a), b)]
    return [(y1, y2)]


def _label(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}-{hi}"


def missing_evidence(
    series: Any, tpl: dict[str, Any], params: dict[str, Any], period: tuple[int, int], region: str | None
) -> list[dict[str, Any]]:
    """What the record lacks for the candidate under its template's rules: one entry per compared period that
    has too few clear observations or too little of the region seen clear (empty when the evidence suffices)."""
    rules = rules_of(tpl)
    rule = rules.get("clear_obs")
    if not rule:
        return []
    season, need = rule.get("season", "all"), int(rule.get("min", 1))
    counts = series.clear_obs.get(season, {})
    share_needed = rules.get("region_clear_share")
    out = []
    for lo, hi in compared_periods(tpl, params, period):
        have = sum(counts.get(y, 0) for y in range(lo, hi + 1))
        sensors = series.sensors(lo, hi)
        entry = {
            "period": [lo, hi],
            "season": season,
            "clear_observations": int(have),
            "needed": need,
            "sensors": sensors,
        }
        if have < need:
            entry["text"] = (
                f"{_label(lo, hi)}: {have} clear Landsat observation{'s' if have != 1 else ''} "
                f"({', '.join(sensors) or 'no Landsat sensor in the record'}; {season} months), {need} needed"
            )
            out.append(entry)
            continue
        if not share_needed:
            continue
        years = [y for y in series.years if lo <= y <= hi]
        in_region, seen = _seen_clear(series, rules.get("composite", "ndvi_h"), years, region)
        if in_region:
            share = float(seen / in_region)
            if share < share_needed:
                entry.update(
                    {
                        "region": region or "site",
                        "region_clear_share": round(share, 3),
                        "region_clear_needed": share_needed,
                    }
                )
                entry["text"] = (
                    f"{_label(lo, hi)}: {share:.0%} of the {region or 'site'} seen clear by "
                    f"{', '.join(sensors) or 'Landsat'}, {share_needed:.0%} needed"
                )
                out.append(entry)
    return out


def _seen_clear(series: Any, composite: str, years: list[int], region: str | None) -> tuple[int, int]:
    """(pixels of the region inside the site, those clear in at least one of the years' composites), counted a
    block of rows at a time (not the years' whole frames)."""
    mask = series.regions.get(region or "site", series.inside)
    in_region = seen = 0
    for r0, r1, frames in series.year_rows(composite, years):
        m = mask[r0:r1] & series.inside[r0:r1]
        in_region += int(m.sum())
        clear = np.zeros(m.shape, bool)
        for f in frames:
            clear |= np.isfinite(f)
        seen += int((clear & m).sum())
    return in_region, seen


def missing_years(series: Any, counts: dict[str, int], needed: int, season: str) -> list[dict[str, Any]]:
    """The years of a template's own per-year count (clear_observations_per_year) below `needed`, as entries
    like missing_evidence's: an insufficient-evidence question says which year and sensors lack imagery."""
    out = []
    for y, have in sorted(counts.items()):
        if have >= needed:
            continue
        year = int(y)
        sensors = series.sensors(year, year)
        out.append(
            {
                "period": [year, year],
                "season": season,
                "clear_observations": int(have),
                "needed": needed,
                "sensors": sensors,
                "text": f"{year}: {have} clear Landsat observation{'s' if have != 1 else ''} "
                f"({', '.join(sensors) or 'no Landsat sensor in the record'}; {season} months), {needed} needed",
            }
        )
    return out


def product_years(product: dict[str, Any]) -> tuple[int, int | None]:
    """The years a reference product covers: its rule's first_year / last_year, else the catalogue's
    (reviewer/record/products.json first_date / last_date)."""
    from reviewer.record.catalog import catalog

    spec = catalog().products.get(product["id"])
    first = product.get("first_year") or (spec.first_date.year if spec and spec.first_date else None)
    last = product.get("last_year") or (spec.last_date.year if spec and getattr(spec, "last_date", None) else None)
    return int(first or 0), (int(last) if last else None)


def product_gap(tpl: dict[str, Any], period: tuple[int, int]) -> str | None:
    """Why the template's reference product cannot answer for the period (it covers other years), or None."""
    product = rules_of(tpl).get("product")
    if not product:
        return None
    first, last = product_years(product)
    lo, hi = period
    if hi < first or (last is not None and lo > last):
        span = f"{first}-{last}" if last else f"{first} on"
        return f"the reference product {product['id']} covers {span}, not {lo}-{hi}"
    return None
