"""The surface model of the synthetic demo site: land cover, planted changes, phenology and weather, in OLI reflectance."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from affine import Affine
from rasterio.crs import CRS

from reviewer.errors import SiteError
from reviewer.record.synthetic.common import (
    BARE,
    BUILT,
    BURN,
    BURN1_C,
    BURN1_R,
    BURN2_C,
    BURN2_R,
    CLASS_NAMES,
    CLEAR_BOX,
    CROP,
    CROP_BOX,
    DORMANT,
    FOREST,
    GRASS,
    GREEN,
    LAKE_C,
    LAKE_R,
    PHENO,
    RES,
    SHRUB,
    SITE_EPSG,
    SITE_NORTH,
    SITE_WEST,
    SNOW,
    STABLE_BOX,
    URBAN_C,
    URBAN_R,
    WATER,
    _bump,
    _circ_days,
    _doy,
    _rng,
    _smooth,
)


# --------------------------------------------------------------------------------------------------------------
# The surface model
# --------------------------------------------------------------------------------------------------------------
@dataclass
class Grid:
    crs: CRS
    transform: Affine
    shape: tuple[int, int]

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        t = self.transform
        h, w = self.shape
        return (t.c, t.f + t.e * h, t.c + t.a * w, t.f)


@dataclass
class Events:
    lake_a: int
    lake_b: int
    lake_n0: int
    lake_n1: int
    urban_a: int
    urban_b: int
    urban_n0: int
    urban_n1: int
    clear_date: dt.date
    burn1_date: dt.date
    burn2_date: dt.date
    burn1_recovery: int
    burn2_recovery: int
    drought_year: int
    crop_peak_month: int
    year_factor: dict[int, float]
    snow_half: dict[int, float]  # winter (year of January) -> snow-season half length in days


@dataclass
class DemoSiteModel:
    """The synthetic land surface of a demo site; `surface(date)` gives OLI-scale reflectance on the site grid."""

    seed: int
    size: int
    start: int
    end: int
    variant: str
    grid: Grid
    base: np.ndarray  # int8 class map before planted changes
    tex: np.ndarray  # float32 brightness texture (~1)
    gtex: np.ndarray  # float32 greenness texture (~0)
    elev: np.ndarray  # float32 0..1, drives snow persistence
    lake_rank: np.ndarray  # float32, inf outside the lake zone
    urban_rank: np.ndarray
    clear_mask: np.ndarray
    burn1_mask: np.ndarray
    burn2_mask: np.ndarray
    crop_mask: np.ndarray
    stable_mask: np.ndarray
    ev: Events
    crop_shift: np.ndarray  # float32 per-pixel peak shift (days) of crop fields
    extra: dict[str, Any] = field(default_factory=dict)

    # ---- planted change state ----
    def lake_n(self, year: int) -> int:
        e = self.ev
        f = min(1.0, max(0.0, (year - e.lake_a) / max(1, e.lake_b - e.lake_a)))
        return int(round(e.lake_n0 + (e.lake_n1 - e.lake_n0) * f))

    def urban_n(self, year: int) -> int:
        e = self.ev
        f = min(1.0, max(0.0, (year - e.urban_a) / max(1, e.urban_b - e.urban_a)))
        return int(round(e.urban_n0 + (e.urban_n1 - e.urban_n0) * f))

    def water(self, year: int) -> np.ndarray:
        return self.lake_rank < self.lake_n(year)

    def built(self, year: int) -> np.ndarray:
        return self.urban_rank < self.urban_n(year)

    def classes(self, d: dt.date) -> np.ndarray:
        cls = self.base.copy()
        cls[self.built(d.year)] = BUILT
        if d >= self.ev.clear_date:
            regrown = d >= dt.date(self.ev.clear_date.year + 2, 4, 1)
            cls[self.clear_mask] = GRASS if regrown else BARE
        cls[self.water(d.year)] = WATER
        return cls

    def greenness(self, d: dt.date) -> np.ndarray:
        """Greenness (0..1, mixing green and dormant spectra) per class on date d."""
        doy = _doy(d)
        g = np.ones(len(CLASS_NAMES), dtype=np.float32)
        yf = self.ev.year_factor.get(d.year, 1.0)
        for c, (gmin, peak, width, dfac) in PHENO.items():
            amp = (1.0 - gmin) * yf * (dfac if d.year == self.ev.drought_year else 1.0)
            g[c] = gmin + amp * _bump(doy, peak, width)
        return g

    def crop_greenness(self, d: dt.date) -> np.ndarray:
        peak = _doy(dt.date(d.year, self.ev.crop_peak_month, 15))
        yf = self.ev.year_factor.get(d.year, 1.0) * (0.5 if d.year == self.ev.drought_year else 1.0)
        dd = _circ_days(_doy(d), peak + self.crop_shift)
        return (0.95 * yf * np.exp(-0.5 * (dd / 20.0) ** 2)).astype(np.float32)

    def snow_mask(self, d: dt.date) -> np.ndarray | None:
        winter = d.year + 1 if d.month >= 7 else d.year
        half = self.ev.snow_half.get(winter, 0.0)
        if half <= 0:
            return None
        k = (d - dt.date(winter, 1, 20)).days
        h = half + 12.0 * (self.elev - 0.5)
        if abs(k) >= float(h.max()):
            return None
        return (abs(k) < h) & ~self.water(d.year)

    def burn_fraction(self, d: dt.date, which: int) -> float:
        bd = self.ev.burn1_date if which == 1 else self.ev.burn2_date
        n = self.ev.burn1_recovery if which == 1 else self.ev.burn2_recovery
        if d < bd:
            return 0.0
        return max(0.0, 1.0 - (d - bd).days / (n * 365.25))

    def surface(
        self, d: dt.date, bands: tuple[int, ...] = (0, 1, 2, 3, 4, 5), *, snow: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """OLI-scale reflectance (len(bands), H, W) float32, class map, snow mask (or None) on date d."""
        cls = self.classes(d)
        gcls = self.greenness(d)
        g = gcls[cls] + self.gtex
        if self.crop_mask.any():
            cm = cls == CROP
            g[cm] = self.crop_greenness(d)[cm] + 0.5 * self.gtex[cm]
        np.clip(g, 0.0, 1.0, out=g)
        f1, f2 = self.burn_fraction(d, 1), self.burn_fraction(d, 2)
        sm = self.snow_mask(d) if snow else None
        out = np.empty((len(bands), *cls.shape), dtype=np.float32)
        for i, b in enumerate(bands):
            dor = DORMANT[:, b][cls]
            rb = dor + g * (GREEN[:, b][cls] - dor)
            for f, m in ((f1, self.burn1_mask), (f2, self.burn2_mask)):
                if f > 0:
                    rb[m] = rb[m] * (1.0 - f) + f * BURN[b]
            rb *= self.tex
            if sm is not None:
                rb[sm] = SNOW[b] * (0.97 + 0.03 * self.tex[sm])
            out[i] = rb
        return out, cls, sm

    def ndvi(self, d: dt.date) -> np.ndarray:
        rho, _, _ = self.surface(d, (2, 3))
        return (rho[1] - rho[0]) / (rho[1] + rho[0])


def _pick_year(
    rng: np.random.Generator,
    start: int,
    end: int,
    lo: float,
    hi: float,
    avoid: set[int] = frozenset(),
    min_year: int | None = None,
    max_year: int | None = None,
) -> int:
    span = end - start
    y = start + int(round(rng.uniform(lo, hi) * span))
    lo_y = max(start, min_year) if min_year is not None and min_year <= end else start
    hi_y = min(end, max_year) if max_year is not None and max_year >= lo_y else end
    y = min(max(y, lo_y), hi_y)
    for step in (0, 1, -1, 2, -2, 3, -3, 4, -4):
        cand = y + step
        if lo_y <= cand <= hi_y and cand not in avoid:
            return cand
    return y


def build_model(
    *, seed: int = 0, size: int = 200, start: int = 1984, end: int = 2024, variant: str = "core"
) -> DemoSiteModel:
    """The deterministic surface model of a demo site (what make_demo_site renders). One random stream: the
    land layout draws first, then the events, so neither may change the other's order of draws."""
    if end < start:
        raise SiteError(f"end year {end} is before start year {start}", field="end")
    if size < 32:
        raise SiteError(f"size must be at least 32 pixels, got {size}", field="size")
    if variant not in ("core", "snow"):
        raise SiteError(f"unknown variant {variant!r} (core or snow)", field="variant")
    n = int(size)
    rng = _rng(seed, 1)
    grid = Grid(CRS.from_epsg(SITE_EPSG), Affine(RES, 0, SITE_WEST, 0, -RES, SITE_NORTH), (n, n))
    land = _land(rng, n)
    ev = _events(rng, start, end, variant, int(land["lake_zone"].sum()), int(land["urban_zone"].sum()))
    return DemoSiteModel(
        seed=seed,
        size=n,
        start=start,
        end=end,
        variant=variant,
        grid=grid,
        base=land["base"],
        tex=land["tex"],
        gtex=land["gtex"],
        elev=land["elev"],
        lake_rank=land["lake_rank"],
        urban_rank=land["urban_rank"],
        clear_mask=land["clear_mask"],
        burn1_mask=land["burn1"],
        burn2_mask=land["burn2"],
        crop_mask=land["crop_mask"],
        stable_mask=land["stable_mask"],
        ev=ev,
        crop_shift=land["crop_shift"],
        extra={
            "boxes": {"clearing": land["clear_box"], "cropland": land["crop_box"], "stable": land["stable_box"]},
            "lake_zone": land["lake_zone"],
            "urban_zone": land["urban_zone"],
        },
    )


def _land(rng: np.random.Generator, n: int) -> dict[str, Any]:
    """The land layout on an n x n grid: base land cover, the change regions (boxes, wobbly blobs with the
    order pixels join them), texture, elevation and the crop fields' phenology shifts."""
    rr, cc = np.meshgrid((np.arange(n) + 0.5) / n, (np.arange(n) + 0.5) / n, indexing="ij")
    rr = rr.astype(np.float32)
    cc = cc.astype(np.float32)

    wob1, wob2 = _smooth(rng, (n, n), n / 5), _smooth(rng, (n, n), n / 5)
    base = np.full((n, n), GRASS, dtype=np.int8)
    forest = (cc + 0.03 * wob1 < 0.48) & (rr + 0.03 * wob2 < 0.48)
    shrub = (cc + 0.03 * wob1 < 0.48) & (rr + 0.03 * wob2 > 0.53)
    base[forest] = FOREST
    base[shrub] = SHRUB

    def box(fr: tuple[float, float, float, float]) -> tuple[np.ndarray, list[int]]:
        r0, c0, r1, c1 = (int(round(v * n)) for v in fr)
        m = np.zeros((n, n), bool)
        m[r0:r1, c0:c1] = True
        return m, [r0, c0, r1, c1]

    crop_mask, crop_box = box(CROP_BOX)
    base[crop_mask] = CROP
    clear_mask, clear_box = box(CLEAR_BOX)
    stable_mask, stable_box = box(STABLE_BOX)

    def blob(c: tuple[float, float], r: float, wob: float) -> tuple[np.ndarray, np.ndarray]:
        d = np.hypot(rr - c[0], cc - c[1]) / r
        d = d + wob * _smooth(rng, (n, n), n / 8)
        return d, d <= 1.0

    def ranks(d: np.ndarray, zone: np.ndarray) -> np.ndarray:
        out = np.full((n, n), np.inf, dtype=np.float32)
        idx = np.flatnonzero(zone.ravel())
        order = idx[np.argsort(d.ravel()[idx], kind="stable")]
        out.ravel()[order] = np.arange(order.size, dtype=np.float32)
        return out

    dl, lake_zone = blob(LAKE_C, LAKE_R, 0.12)
    lake_rank = ranks(dl, lake_zone)
    du, urban_zone = blob(URBAN_C, URBAN_R, 0.10)
    urban_rank = ranks(du, urban_zone)
    _, burn1 = blob(BURN1_C, BURN1_R, 0.12)
    _, burn2 = blob(BURN2_C, BURN2_R, 0.10)
    burn1 &= base == SHRUB
    burn2 &= base == SHRUB

    tex = (1.0 + 0.05 * _smooth(rng, (n, n), n / 10) + 0.025 * rng.standard_normal((n, n))).astype(np.float32)
    gtex = (0.05 * _smooth(rng, (n, n), n / 12) + 0.02 * rng.standard_normal((n, n))).astype(np.float32)
    elev = _smooth(rng, (n, n), n / 3)
    elev = ((elev - elev.min()) / max(1e-6, float(elev.max() - elev.min()))).astype(np.float32)
    crop_shift = np.zeros((n, n), np.float32)
    field_shift = rng.uniform(-6, 6, 6).astype(np.float32)
    cols = np.minimum((cc * 6).astype(int), 5)
    crop_shift[crop_mask] = field_shift[cols[crop_mask]]
    field_gain = (1.0 + 0.05 * rng.standard_normal(6)).astype(np.float32)
    tex[crop_mask] *= field_gain[cols[crop_mask]]
    return {
        "base": base,
        "tex": tex,
        "gtex": gtex,
        "elev": elev,
        "lake_rank": lake_rank,
        "urban_rank": urban_rank,
        "lake_zone": lake_zone,
        "urban_zone": urban_zone,
        "clear_mask": clear_mask,
        "burn1": burn1,
        "burn2": burn2,
        "crop_mask": crop_mask,
        "stable_mask": stable_mask,
        "crop_shift": crop_shift,
        "crop_box": crop_box,
        "clear_box": clear_box,
        "stable_box": stable_box,
    }


def _events(rng: np.random.Generator, start: int, end: int, variant: str, m_lake: int, m_urban: int) -> Events:
    """The planted changes' years and dates, the drought, the crop peak, per-year greenness factors and the
    snow seasons (a shortening one for variant snow); m_lake and m_urban are the zones' pixel counts."""
    span = end - start
    lake_a = start + int(round(0.12 * span))
    lake_b = max(lake_a + 1, end - int(round(0.12 * span)))
    urban_a = start + int(round(0.05 * span))
    urban_b = max(urban_a + 1, end - int(round(0.05 * span)))
    clear_year = _pick_year(
        rng,
        start,
        end,
        0.45,
        0.62,
        min_year=2001 if end >= 2003 else None,
        max_year=min(end - 2, 2024) if end >= 2003 else None,
    )
    burn1_year = _pick_year(rng, start, end, 0.25, 0.38, {clear_year})
    burn2_year = _pick_year(rng, start, end, 0.68, 0.8, {clear_year, burn1_year})
    drought = _pick_year(
        rng,
        start,
        end,
        0.5,
        0.9,
        {clear_year, burn1_year, burn2_year, start, end},
        min_year=start + 1,
        max_year=end - 1,
    )
    crop_peak = int(rng.choice([6, 7, 8]))
    years = list(range(start, end + 1))
    yf = {y: float(1.0 + 0.025 * np.clip(rng.standard_normal(), -1.5, 1.5)) for y in years}
    winters = list(range(start, end + 2))
    if variant == "snow":
        half = {w: max(0.0, 62.0 - 1.5 * (w - start) + float(rng.normal(0, 1.5))) for w in winters}
    else:
        half = {w: (0.0 if rng.random() < 0.4 else float(rng.uniform(5, 22))) for w in winters}
    return Events(
        lake_a=lake_a,
        lake_b=lake_b,
        lake_n0=int(round(0.25 * m_lake)),
        lake_n1=int(round(0.9 * m_lake)),
        urban_a=urban_a,
        urban_b=urban_b,
        urban_n0=int(round(0.15 * m_urban)),
        urban_n1=int(round(0.85 * m_urban)),
        clear_date=dt.date(clear_year, 1, 1) + dt.timedelta(days=int(rng.integers(120, 250))),
        burn1_date=dt.date(burn1_year, 1, 1) + dt.timedelta(days=int(rng.integers(190, 235))),
        burn2_date=dt.date(burn2_year, 1, 1) + dt.timedelta(days=int(rng.integers(190, 235))),
        burn1_recovery=4,
        burn2_recovery=3,
        drought_year=drought,
        crop_peak_month=crop_peak,
        year_factor=yf,
        snow_half=half,
    )
