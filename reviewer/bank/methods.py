"""Reference methods: small, pure numpy/scipy/scikit-image functions that compute one quantity each.

Generation runs several of these per quantity and combines them (`combine_numeric`, `combine_votes`):
the numeric reference is the median of the methods, the reference range spans the methods' spread
and at least +-5%, and a categorical or date conclusion needs at least 75% of the methods to agree.
Nothing here reads files, and nothing ever reads a site's truth.json.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from reviewer.bank.model import MIN_RELATIVE_HALF_WIDTH

#: Default significance level of trend tests (stated in question texts).
ALPHA = 0.05


# ----------------------------------------------------------------------------- trends of one series


@dataclass(frozen=True)
class Trend:
    """Slope per time unit, its two-sided p-value, and the direction it supports at `alpha`."""

    slope: float
    p: float
    method: str

    def direction(self, alpha: float = ALPHA) -> str:
        if not math.isfinite(self.p) or self.p >= alpha or self.slope == 0:
            return "no significant change"
        return "increase" if self.slope > 0 else "decrease"


def _finite(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def ols_trend(x: Sequence[float], y: Sequence[float]) -> Trend:
    """Ordinary least-squares slope with the t-test p-value of the slope (scipy.stats.linregress)."""
    x, y = _finite(x, y)
    if len(x) < 3 or np.ptp(x) == 0:
        return Trend(float("nan"), float("nan"), "ols")
    if np.ptp(y) == 0:
        return Trend(0.0, 1.0, "ols")
    r = stats.linregress(x, y)
    return Trend(float(r.slope), float(r.pvalue), "ols")


def mann_kendall(y: Sequence[float]) -> tuple[float, float, float]:
    """Mann-Kendall test of a series in time order: (S, Z, two-sided p), with the tie-corrected variance."""
    y = np.asarray(y, dtype=float)
    y = y[np.isfinite(y)]
    n = len(y)
    if n < 3:
        return 0.0, 0.0, float("nan")
    diff = y[None, :] - y[:, None]
    s = float(np.sign(diff[np.triu_indices(n, 1)]).sum())
    _, counts = np.unique(y, return_counts=True)
    ties = counts[counts > 1]
    var = (n * (n - 1) * (2 * n + 5) - float(np.sum(ties * (ties - 1) * (2 * ties + 5)))) / 18.0
    if var <= 0:
        return s, 0.0, 1.0
    if s > 0:
        z = (s - 1) / math.sqrt(var)
    elif s < 0:
        z = (s + 1) / math.sqrt(var)
    else:
        z = 0.0
    p = 2 * stats.norm.sf(abs(z))
    return s, z, float(p)


def theil_sen_trend(x: Sequence[float], y: Sequence[float]) -> Trend:
    """Theil-Sen slope (scipy.stats.theilslopes) with the Mann-Kendall p-value for its significance."""
    x, y = _finite(x, y)
    if len(x) < 3 or np.ptp(x) == 0:
        return Trend(float("nan"), float("nan"), "theil_sen_mk")
    order = np.argsort(x)
    x, y = x[order], y[order]
    slope = float(stats.theilslopes(y, x).slope)
    _, _, p = mann_kendall(y)
    return Trend(slope, p, "theil_sen_mk")


def endpoint_change(x: Sequence[float], y: Sequence[float], k: int = 3) -> float:
    """Mean of the last k values minus the mean of the first k values."""
    x, y = _finite(x, y)
    if len(y) < 2:
        return float("nan")
    k = max(1, min(k, len(y) // 2))
    order = np.argsort(x)
    y = y[order]
    return float(y[-k:].mean() - y[:k].mean())


# ----------------------------------------------------------------------------- trends per pixel


#: scratch memory pixel_trends allows itself (bytes): larger cubes are worked through in blocks of pixels
TREND_SCRATCH = 256 * 1024**2


def pixel_trends(
    years: Sequence[float],
    cube: np.ndarray,
    *,
    min_obs: int = 8,
    scratch: int = TREND_SCRATCH,
    runner: Any = None,
) -> dict[str, np.ndarray]:
    """Per-pixel OLS slope and p, Mann-Kendall p and Theil-Sen slope of a (t, n) cube with NaN gaps.

    The Mann-Kendall variance ignores ties (values are continuous) and uses each pixel's own count of
    observations; pixels with fewer than `min_obs` observations get NaN. The Theil-Sen slopes of all year
    pairs take t^2/2 values per pixel, so the pixels are taken in blocks that keep that under `scratch` bytes
    (every pixel's result is computed alone: the blocks do not change it). With a `runner` (a dask client: a
    large site split over a cluster), the blocks are its tasks, at least two per worker.
    """
    y = np.asarray(cube)
    if y.ndim == 1:
        y = y[:, None]
    nt = len(years)
    per_pixel = (nt * (nt - 1) // 2) * 4 * 3 + nt * 8 * 8
    block = max(1, scratch // max(1, per_pixel))
    if runner is not None:
        from reviewer.bank.tasks import in_order, n_workers

        block = max(1, min(block, -(-y.shape[1] // (2 * n_workers(runner)))))
        jobs = [(_pixel_trends, (list(years), y[:, i : i + block], min_obs)) for i in range(0, y.shape[1], block)]
        parts = list(in_order(runner, jobs))
    elif y.shape[1] <= block:
        return _pixel_trends(years, y, min_obs)
    else:
        parts = [_pixel_trends(years, y[:, i : i + block], min_obs) for i in range(0, y.shape[1], block)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _pixel_trends(years: Sequence[float], cube: np.ndarray, min_obs: int) -> dict[str, np.ndarray]:
    t = np.asarray(years, dtype=np.float64)
    y = np.asarray(cube, dtype=np.float64)
    if y.ndim == 1:
        y = y[:, None]
    ok = np.isfinite(y)
    n = ok.sum(0).astype(np.float64)
    # OLS with per-pixel missing values
    tt = np.where(ok, t[:, None], 0.0)
    yy = np.where(ok, y, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tm = tt.sum(0) / n
        ym = yy.sum(0) / n
        dt_ = np.where(ok, t[:, None] - tm, 0.0)
        dy = np.where(ok, y - ym, 0.0)
        sxx = (dt_ * dt_).sum(0)
        sxy = (dt_ * dy).sum(0)
        slope = sxy / sxx
        resid = np.where(ok, dy - slope * dt_, 0.0)
        sse = (resid * resid).sum(0)
        se = np.sqrt(sse / (n - 2) / sxx)
        tstat = slope / se
        p_ols = 2 * stats.t.sf(np.abs(tstat), n - 2)
        p_ols = np.where(sse == 0, np.where(slope == 0, 1.0, 0.0), p_ols)
    # Mann-Kendall and Theil-Sen over all pairs i < j
    iu, ju = np.triu_indices(len(t), 1)
    s = np.zeros(y.shape[1])
    slopes = np.full((len(iu), y.shape[1]), np.nan, dtype=np.float32)
    for k, (i, j) in enumerate(zip(iu, ju, strict=True)):
        d = y[j] - y[i]
        both = ok[i] & ok[j]
        s += np.where(both, np.sign(d), 0.0)
        if t[j] != t[i]:
            slopes[k] = np.where(both, d / (t[j] - t[i]), np.nan)
    var = n * (n - 1) * (2 * n + 5) / 18.0
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(s > 0, (s - 1), np.where(s < 0, s + 1, 0.0)) / np.sqrt(var)
        p_mk = 2 * stats.norm.sf(np.abs(z))
        sen = np.nanmedian(slopes, axis=0) if len(iu) else np.full(y.shape[1], np.nan)
    few = n < min_obs
    for arr in (slope, p_ols, p_mk, sen):
        arr[few] = np.nan
    return {"ols_slope": slope, "ols_p": p_ols, "mk_p": p_mk, "sen_slope": sen, "n": n}


def share_significant(slope: np.ndarray, p: np.ndarray, sign: int, alpha: float = ALPHA) -> float:
    """Percentage of pixels with a finite result whose trend has the given sign and p < alpha."""
    return share_of(*significant_counts(slope, p, sign, alpha))


def significant_counts(slope: np.ndarray, p: np.ndarray, sign: int, alpha: float = ALPHA) -> np.ndarray:
    """[pixels whose trend has the sign and p < alpha, pixels with a finite result]: share_significant's
    counts, which add up over blocks of pixels."""
    ok = np.isfinite(slope) & np.isfinite(p)
    hit = ok & (p < alpha) & (np.sign(slope) == sign)
    return np.array([hit.sum(), ok.sum()], np.int64)


def share_of(hit: int, ok: int) -> float:
    """100 x hit / ok, NaN when no pixel had a finite result."""
    return float(100.0 * hit / ok) if ok else float("nan")


class NanMean:
    """The mean of values given in parts (blocks of rows), NaN ignored: with one part, exactly np.nanmean of it
    (its sum in its own dtype divided by the count); with several, their sums added in float64. `value()` is a
    scalar of the values' dtype, NaN when no value was given."""

    def __init__(self) -> None:
        self.total, self.count, self.finite, self.dtype = 0.0, 0, False, np.float32

    def add(self, values: np.ndarray) -> None:
        v = np.asarray(values)
        self.dtype = v.dtype.type if v.size else self.dtype
        if v.size:
            self.total += float(np.nansum(v))
            self.count += int((~np.isnan(v)).sum())
            self.finite = self.finite or bool(np.isfinite(v).any())

    def value(self) -> np.floating:
        return self.dtype(self.total / self.count) if self.count else self.dtype(np.nan)


# ----------------------------------------------------------------------------- thresholds and areas


#: values a block of otsu_threshold's histogram: float64 copies of a block, never of a whole Landsat scene
OTSU_BLOCK = 1 << 22


def otsu_threshold(values: np.ndarray) -> float:
    """Otsu's threshold (skimage.filters.threshold_otsu) of the finite values. skimage's 256-bin histogram over
    the values' range is counted block by block (np.histogram, the same range: the same counts), so a whole
    scene's pixels are not copied to float64 twice (skimage flattens its float64 copy; 1.4 GB at the peak)."""
    v = np.asarray(values).reshape(-1)
    return otsu_threshold_of(lambda: iter([v]))


def otsu_threshold_of(blocks: Callable[[], Iterable[np.ndarray]]) -> float:
    """otsu_threshold of the values `blocks()` gives a block at a time (blocks of a frame's rows: the frame is
    never whole). It is called twice, for the range and then for the histogram, which only counts: the blocks
    do not change the threshold."""
    from skimage.filters import threshold_otsu

    def pieces():
        for blk in blocks():
            flat = np.asarray(blk).reshape(-1)
            for i in range(0, flat.size, OTSU_BLOCK):
                sl = flat[i : i + OTSU_BLOCK]
                yield sl[np.isfinite(sl)]

    n, lo, hi = 0, math.inf, -math.inf
    for b in pieces():
        if b.size:
            n, lo, hi = n + b.size, min(lo, float(b.min())), max(hi, float(b.max()))
    if n < 2 or lo == hi:
        return float("nan")
    counts = np.zeros(256, np.int64)
    edges = np.linspace(lo, hi, 257)
    for b in pieces():
        c, edges = np.histogram(b.astype(np.float64), bins=256, range=(lo, hi))
        counts += c
    return float(threshold_otsu(hist=(counts, (edges[:-1] + edges[1:]) / 2.0)))


def area_above(
    image: np.ndarray,
    threshold: float,
    pixel_area_km2: float,
    *,
    inside: np.ndarray | None = None,
    min_valid: float = 0.0,
) -> float:
    """km2 of pixels above `threshold`, scaled up from the valid pixels to the whole (inside) area.

    NaN when fewer than `min_valid` (share) of the pixels are valid.
    """
    img = np.asarray(image)
    region = np.ones(img.shape, bool) if inside is None else inside
    return area_of(area_counts(img, threshold, region), threshold, pixel_area_km2, min_valid=min_valid)


def area_counts(image: np.ndarray, threshold: float, inside: np.ndarray) -> np.ndarray:
    """[pixels inside, valid (finite) ones, valid ones above `threshold`]: area_above's counts, which add up
    over blocks of rows."""
    valid = np.isfinite(image) & inside
    return np.array([inside.sum(), valid.sum(), (image[valid] > threshold).sum()], np.int64)


def area_of(counts: np.ndarray, threshold: float, pixel_area_km2: float, *, min_valid: float = 0.0) -> float:
    """area_above from its counts (area_counts, summed over the blocks)."""
    total, valid, above = (int(x) for x in counts)
    if total == 0 or valid == 0 or valid / total < min_valid or not math.isfinite(threshold):
        return float("nan")
    return float(above) / float(valid) * float(total) * pixel_area_km2


def dnbr(pre_nbr: np.ndarray, post_nbr: np.ndarray) -> np.ndarray:
    """Differenced normalised burn ratio, pre minus post (Key & Benson 2006)."""
    return np.asarray(pre_nbr, dtype=np.float32) - np.asarray(post_nbr, dtype=np.float32)


def largest_year(years: Sequence[int], values: Sequence[float]) -> int | None:
    """The year with the largest finite value (ties: the earliest), or None."""
    v = np.asarray(values, dtype=float)
    if not np.isfinite(v).any():
        return None
    return int(np.asarray(years)[int(np.nanargmax(v))])


def smallest_year(years: Sequence[int], values: Sequence[float]) -> int | None:
    v = np.asarray(values, dtype=float)
    if not np.isfinite(v).any():
        return None
    return int(np.asarray(years)[int(np.nanargmin(v))])


# ----------------------------------------------------------------------------- seasons and recovery


def peak_month_climatology(months: Sequence[int], values: Sequence[float], stat: str = "median") -> int | None:
    """Month (1-12) whose pooled values have the highest median (or mean)."""
    m = np.asarray(months)
    v = np.asarray(values, dtype=float)
    best, best_value = None, -np.inf
    for month in range(1, 13):
        sel = v[(m == month) & np.isfinite(v)]
        if sel.size == 0:
            continue
        value = float(np.median(sel) if stat == "median" else np.mean(sel))
        if value > best_value:
            best, best_value = month, value
    return best


def peak_month_harmonic(doy: Sequence[float], values: Sequence[float], harmonics: int = 2) -> int | None:
    """Month of the maximum of a least-squares harmonic fit (annual + semi-annual) of the seasonal cycle."""
    d = np.asarray(doy, dtype=float)
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(d) & np.isfinite(v)
    d, v = d[ok], v[ok]
    if len(v) < 2 * harmonics + 2:
        return None
    w = 2 * np.pi * d / 365.25
    cols = [np.ones_like(w)]
    for k in range(1, harmonics + 1):
        cols += [np.cos(k * w), np.sin(k * w)]
    coef, *_ = np.linalg.lstsq(np.column_stack(cols), v, rcond=None)
    grid = np.arange(1, 366, dtype=float)
    wg = 2 * np.pi * grid / 365.25
    fit = coef[0] + sum(
        coef[2 * k - 1] * np.cos(k * wg) + coef[2 * k] * np.sin(k * wg) for k in range(1, harmonics + 1)
    )
    peak_doy = int(grid[int(np.argmax(fit))])
    import datetime as dt

    return (dt.date(2001, 1, 1) + dt.timedelta(days=peak_doy - 1)).month


def sharpest_fall(years: Sequence[int], values: Sequence[float]) -> tuple[int | None, float]:
    """(year, drop) of the largest fall from one available year to the next."""
    y = np.asarray(years)
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    y, v = y[ok], v[ok]
    if len(v) < 2:
        return None, float("nan")
    drops = v[:-1] - v[1:]
    k = int(np.argmax(drops))
    return int(y[k + 1]), float(drops[k])


def recovery_years(
    years: Sequence[int],
    values: Sequence[float],
    event_year: int,
    *,
    baseline_years: int = 3,
    fraction: float = 0.9,
    baseline: str = "mean",
) -> float | None:
    """Years after `event_year` until the value first returns to `fraction` of the pre-event level.

    The pre-event level is the mean (or median, or last value) of the `baseline_years` years before the
    event. The recovery is measured relative to the event-year trough: recovered once
    value >= trough + fraction * (baseline - trough). None when it never recovers in the series.
    """
    y = np.asarray(years)
    v = np.asarray(values, dtype=float)
    pre = v[(y < event_year) & (y >= event_year - baseline_years) & np.isfinite(v)]
    at = v[(y == event_year) & np.isfinite(v)]
    if pre.size == 0 or at.size == 0:
        return None
    base = {"mean": np.mean, "median": np.median, "last": lambda a: a[-1]}[baseline](pre)
    trough = float(at[0])
    target = trough + fraction * (float(base) - trough)
    for yr, val in zip(y, v, strict=True):
        if yr > event_year and np.isfinite(val) and val >= target:
            return float(yr - event_year)
    return None


def recovery_years_dated(
    dates: Sequence[dt.date],
    values: Sequence[float],
    event_year: int,
    *,
    baseline_years: int = 3,
    fraction: float = 0.9,
    calendar: bool = False,
) -> float | None:
    """Recovery from a per-scene series with its acquisition dates (no annual compositing).

    The fall is the largest drop between consecutive valid scenes whose later scene lies in `event_year`
    or the year after, dated at the midpoint of the two dates. The pre-fall level is the median of the
    scenes in the `baseline_years` before the fall; the trough is the lowest value in the year after it.
    Recovered at the first later scene with value >= trough + fraction * (level - trough). Returns the
    years from the fall to that scene (fractional), or with `calendar` the difference of their calendar
    years (the convention of the annual methods). None when the series never recovers.
    """
    pairs = sorted((d, float(v)) for d, v in zip(dates, values, strict=True) if v is not None and math.isfinite(v))
    if len(pairs) < 3:
        return None
    d = [p[0] for p in pairs]
    v = np.array([p[1] for p in pairs])
    drops = [(v[i - 1] - v[i], i) for i in range(1, len(v)) if d[i].year in (event_year, event_year + 1)]
    if not drops:
        return None
    drop, k = max(drops)
    if drop <= 0:
        return None
    fall = d[k - 1] + (d[k] - d[k - 1]) / 2
    pre = [x for x, dd in zip(v, d, strict=True) if dd < fall and (fall - dd).days <= baseline_years * 365.25]
    after = [x for x, dd in zip(v, d, strict=True) if dd > fall and (dd - fall).days <= 365.25]
    if not pre or not after:
        return None
    level, trough = float(np.median(pre)), float(min(after))
    target = trough + fraction * (level - trough)
    low_at = next(i for i in range(k, len(v)) if v[i] == trough)
    for i in range(low_at + 1, len(v)):
        if v[i] >= target:
            return float(d[i].year - fall.year) if calendar else round((d[i] - fall).days / 365.25, 2)
    return None


# ----------------------------------------------------------------------------- snow


def snow_days(ndsi: np.ndarray, threshold: float = 10.0, *, gap_fill: bool = False) -> np.ndarray:
    """Days with NDSI snow cover >= threshold from a daily (t, ...) NDSI_Snow_Cover cube (0-100, NaN gaps).

    Without gap filling, gaps count as snow-free; with it, each gap takes the state of the nearest
    observed day before it (forward fill) and, at the start, after it.
    """
    a = np.asarray(ndsi, dtype=np.float32)
    snow = (a >= threshold).astype(np.float32)
    snow[~np.isfinite(a)] = np.nan
    if gap_fill:
        filled = snow.copy()
        for i in range(1, len(filled)):
            gap = np.isnan(filled[i])
            filled[i][gap] = filled[i - 1][gap]
        for i in range(len(filled) - 2, -1, -1):
            gap = np.isnan(filled[i])
            filled[i][gap] = filled[i + 1][gap]
        snow = filled
    return np.nansum(snow, axis=0)


def snow_days_observed_share(ndsi: np.ndarray, threshold: float = 10.0, *, min_observed: int = 1) -> np.ndarray:
    """Snow-covered days without gap filling: the share of observed days with NDSI snow cover >= threshold,
    times the number of days of the cube (t, ...). NaN where fewer than `min_observed` days were observed."""
    a = np.asarray(ndsi, dtype=np.float32)
    seen = np.isfinite(a)
    n = seen.sum(axis=0)
    snow = ((a >= threshold) & seen).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = snow / n * a.shape[0]
    return np.where(n >= max(1, min_observed), out, np.nan).astype(np.float64)


# ----------------------------------------------------------------------------- combining methods


def combine_numeric(
    values: dict[str, float], *, min_rel: float = MIN_RELATIVE_HALF_WIDTH, abs_floor: float = 0.0
) -> tuple[float, tuple[float, float]] | None:
    """(median, (lo, hi)): lo/hi cover every method and at least +-min_rel of the median (and +-abs_floor)."""
    v = np.array([x for x in values.values() if x is not None and math.isfinite(x)], dtype=float)
    if v.size == 0:
        return None
    ref = float(np.median(v))
    half = max(min_rel * abs(ref), abs_floor)
    lo = min(float(v.min()), ref - half)
    hi = max(float(v.max()), ref + half)
    return ref, (lo, hi)


def combine_votes(values: dict[str, Any], *, min_share: float | None = None) -> tuple[Any, float]:
    """(majority value or None, its share of the methods that gave a value); None below `min_share` (default
    templates.json's consistency_rules.methods_agree.min_share, seed 001's 75%)."""
    if min_share is None:
        from reviewer.bank.templates import methods_agree_share

        min_share = methods_agree_share()
    votes = [v for v in values.values() if v is not None]
    if not votes:
        return None, 0.0
    counts = Counter(json_key(v) for v in votes)
    key, n = counts.most_common(1)[0]
    share = n / len(votes)
    value = next(v for v in votes if json_key(v) == key)
    return (value if share >= min_share else None), share


def json_key(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def near(value: float, threshold: float, margin: float) -> bool:
    """True when `value` lies within `margin` of `threshold` (decision too close to call)."""
    return math.isfinite(value) and abs(value - threshold) < margin


def relative_change(a: float, b: float) -> float:
    """(b - a) / |a|; inf when a is 0 and b is not."""
    if a == 0:
        return 0.0 if b == 0 else math.copysign(math.inf, b)
    return (b - a) / abs(a)


def three_way(change: float, threshold: float, labels: tuple[str, str, str]) -> str:
    """labels (up, down, same) for a relative change against +-threshold."""
    up, down, same = labels
    if change > threshold:
        return up
    if change < -threshold:
        return down
    return same
