"""Annual series for the reference methods, built in one pass over the record.

Each scene's bands are read once (threads: GDAL releases the GIL) and reduced at once to what the
methods need: per-year per-pixel composites of Landsat indices (with and without the Roy et al. 2016
ETM+/TM -> OLI harmonization), a per-scene NBR cube for dating abrupt events, MODIS/VIIRS NDVI
composites on the site grid, crop-area NDVI per acquisition, ERA5-Land monthly precipitation, and
the count of clear observations per year. The record products WorldCover and (withheld) Hansen loss
year are read when present. Nothing here looks at truth.json.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import ndimage

from reviewer.bank.spill import DEFAULT_BUDGET, FrameStore
from reviewer.errors import Cancelled, RecordError
from reviewer.record.catalog import catalog
from reviewer.record.decode import Grid, read_raw
from reviewer.record.scan import Scene, SceneIndex, site_files
from reviewer.record.stack import harmonize, normalized_difference, read_bands
from reviewer.record.stretch import composites

logger = logging.getLogger(__name__)

LANDSAT = ("TM", "ETM+", "OLI", "OLI-2")
COARSE = ("MODIS Terra", "MODIS Aqua", "VIIRS")
BANDS = ("blue", "green", "red", "nir", "swir1", "swir2")
QUADRANTS = ("north-west", "north-east", "south-west", "south-east")

Progress = Callable[[float, str], None]
#: what build_series can read (see its `parts`)
PARTS = frozenset({"landsat", "coarse", "era5", "snow", "products"})


@dataclass(frozen=True)
class SeriesConfig:
    """Thresholds of the series pass; stated in every question's provenance."""

    growing_months: tuple[int, ...] = (5, 6, 7, 8, 9)
    water_months: tuple[int, ...] = (4, 5, 6, 7, 8, 9, 10)
    tiers: tuple[str, ...] = ("T1",)
    #: scenes whose clear fraction (from the quality layer) is below this are not read
    min_scene_clear: float = 0.05
    #: a scene counts as a clear observation when its clear fraction reaches this
    clear_obs_fraction: float = 0.5
    #: bright-cloud removal: harmonized blue reflectance above this is masked (clouds the QA missed)
    bright_blue: float = 0.2
    #: out-of-range (negative) reflectance on clear pixels whose valid bands are all below this is set to 0
    dark_clip: float = 0.12
    #: MODIS/VIIRS composites are read for the growing season of every year, and every month of the last N years
    coarse_all_months_years: int = 10
    workers: int = 2

    def as_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


#: Index pairs beyond the composite catalogue's (ndvi, ndwi, mndwi, nbr come from composites.json).
EXTRA_INDICES = {"ndbi": ("swir1", "nir")}


def indices(bands: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """ndvi, ndwi (McFeeters), mndwi (Xu), nbr and ndbi of one scene's reflectance bands."""
    pairs = {name: tuple(spec["index"]) for name, spec in composites().items() if "index" in spec}
    pairs.update(EXTRA_INDICES)
    return {name: normalized_difference(bands[a], bands[b]) for name, (a, b) in pairs.items()}


def quadrant_masks(shape: tuple[int, int]) -> dict[str, np.ndarray]:
    """The truth-independent site grid: four quadrants and the central square (40-60% of each side)."""
    h, w = shape
    # a column of rows and a row of columns, broadcast: the meshgrid's two int64 grids were 2 GB on a
    # Sentinel-2 tile's 10 m grid, before anything was read
    rr, cc = np.arange(h)[:, None], np.arange(w)[None, :]
    north, west = np.broadcast_to(rr < h / 2, shape), np.broadcast_to(cc < w / 2, shape)
    out = {
        "north-west": north & west,
        "north-east": north & ~west,
        "south-west": ~north & west,
        "south-east": ~north & ~west,
    }
    out["centre"] = (rr >= 0.4 * h) & (rr < 0.6 * h) & (cc >= 0.4 * w) & (cc < 0.6 * w)
    out["site"] = np.ones(shape, bool)
    return out


class Composites:
    """Per-year composites by name, their frames in a FrameStore (memory, then files): `c[name]` is the
    (n_years, H, W) cube of one composite, `c.frame(name, i)` the frame of the i-th year."""

    def __init__(self, store: FrameStore, n_years: int) -> None:
        self.store = store
        self.n_years = n_years
        self.names: list[str] = []

    def add(self, name: str, i: int, frame: np.ndarray) -> None:
        if name not in self.names:
            self.names.append(name)
        self.store.put(("comp", name, i), frame)

    def frame(self, name: str, i: int) -> np.ndarray:
        if name not in self.names:
            raise KeyError(name)
        return self.store.get(("comp", name, i))

    def __getitem__(self, name: str) -> np.ndarray:
        return np.stack([self.frame(name, i) for i in range(self.n_years)])

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self):
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def keys(self) -> list[str]:
        return list(self.names)


class StoredRows:
    """A (t, n) array of rows kept in a FrameStore, read a row at a time: `rows[i]`, iteration, `shape`,
    np.asarray(rows) for the whole (small records only)."""

    def __init__(self, store: FrameStore, keys: list[Any], width: int) -> None:
        self.store, self.keys, self.shape = store, keys, (len(keys), width)

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i: int) -> np.ndarray:
        return self.store.get(self.keys[i])

    def __iter__(self):
        return (self.store.get(k) for k in self.keys)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        a = np.stack(list(self)) if self.keys else np.zeros(self.shape, np.float32)
        return a.astype(dtype) if dtype is not None else a


def _empty_store() -> FrameStore:
    return FrameStore(DEFAULT_BUDGET // 3)


@dataclass
class SiteSeries:
    """What the reference methods work on: the whole record of a site reduced once to annual composites and
    per-acquisition series, every array on the site grid.

    Not reviewer.record.series.Trajectory, which is one value per scene of a viewer stack at a pixel or over a
    region (what the plot dock draws); this one is built by build_series for question generation."""

    site_id: str
    shape: tuple[int, int]
    pixel_area_km2: float
    inside: np.ndarray
    years: list[int]
    config: SeriesConfig
    #: composites[name] -> (n_years, H, W) float32 (NaN where a year has no clear observation); a Composites
    #: whose frames live in `store`, or a plain dict of cubes
    composites: Any = field(default_factory=dict)
    #: Landsat sensors with scenes used in each year
    sensors_by_year: dict[int, set[str]] = field(default_factory=dict)
    #: clear observations per year (all months / growing season / water season), from the scene index
    clear_obs: dict[str, dict[int, int]] = field(default_factory=dict)
    #: per-scene harmonized NBR frames (H, W) float16 in `store` (nbr_frame(t)) and their dates, for dating
    #: abrupt events per pixel
    nbr_dates: list[dt.date] = field(default_factory=list)
    #: crop-area mean NDVI per acquisition: source -> list of (date, value)
    crop_ndvi: dict[str, list[tuple[dt.date, float]]] = field(default_factory=dict)
    #: coarse[label] -> {"years": [...], "gs": (n_years, H, W)} growing-season median NDVI
    coarse: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ERA5-Land monthly precipitation (m/day, site mean): (year, month) -> value
    precip: dict[tuple[int, int], float] = field(default_factory=dict)
    #: MOD10A1/MYD10A1 daily NDSI snow cover on the product's own pixels that cover the site:
    #: label -> {"dates": [date], "ndsi": (t, n) float32 0-100 (NaN: cloud, night, water, fill; a StoredRows,
    #: one row per day in `store`),
    #: "weights": (n,) site pixels (inside the boundary) each product pixel covers}
    snow: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: (raw composite, year) -> the harmonized composite whose frame it is (a year of OLI, which is not harmonized):
    #: what templates derive from a frame is derived once for both names (frame_id)
    same_frames: dict[tuple[str, int], str] = field(default_factory=dict)
    #: What templates derive from the series and share (e.g. burn-year maps per template), computed once
    #: and living as long as the series does
    derived: dict[str, Any] = field(default_factory=dict)
    worldcover: np.ndarray | None = None
    hansen_lossyear: np.ndarray | None = None
    hansen_path: str | None = None
    crop_mask: np.ndarray | None = None
    regions: dict[str, np.ndarray] = field(default_factory=dict)
    scenes_read: int = 0
    #: the pass's parts that ran as tasks of a dask cluster (0: all read in this process)
    tasks: int = 0
    #: the dask client a split site's per-pixel work goes to (None: this process)
    runner: Any = field(default=None, repr=False)
    seconds: float = 0.0
    #: why the pass read nothing the reference methods use (None: it read something)
    nothing_read: str | None = None
    #: where the composite and NBR frames live: memory up to the run's budget, then files
    store: FrameStore = field(default_factory=_empty_store, repr=False)
    #: what the blocks of rows the Landsat scenes are read and reduced in may hold (bytes)
    block_bytes: int = DEFAULT_BUDGET // 4
    #: what a block of rows of the templates' per-pixel work holds of the frames it reads (bytes; blocks)
    rows_bytes: int = 64 * 2**20

    def year_index(self, year: int) -> int:
        return self.years.index(year)

    def comp(self, name: str, year: int) -> np.ndarray:
        c = self.composites
        i = self.year_index(year)
        return c.frame(name, i) if isinstance(c, Composites) else c[name][i]

    def inside_values(self, frame: np.ndarray, rows: tuple[int, int] | None = None) -> np.ndarray:
        """The frame's pixels inside the site's boundary (of rows r0:r1 of the site when `frame` is a block of
        them): a view of the frame when every pixel is inside (a bbox site), not a copy."""
        if "inside_all" not in self.derived:
            self.derived["inside_all"] = bool(self.inside.all())
        inside = self.inside if rows is None else self.inside[rows[0] : rows[1]]
        return frame.reshape(-1) if self.derived["inside_all"] else frame[inside]

    def blocks(self, n_frames: int, block_bytes: int | None = None) -> Iterator[tuple[int, int]]:
        """Blocks of rows (r0, r1) of the site grid in which `n_frames` float32 frames' rows hold about
        `block_bytes` (default `rows_bytes`): the templates' per-pixel work holds a block of each frame it
        reads, never a whole frame (235 MB for a Landsat scene) or a cube of them."""
        h, w = self.shape
        rows = max(1, min(h, (block_bytes or self.rows_bytes) // max(1, n_frames * w * 4)))
        for r0 in range(0, h, rows):
            yield r0, min(h, r0 + rows)

    def frame_id(self, name: str, year: int) -> tuple[str, int]:
        """(composite, year) of the frame a composite of a year is: the harmonized one's where the raw one is the
        same frame (OLI years), so a value derived from it is derived once."""
        return self.same_frames.get((name, year), name), year

    def comp_rows(self, name: str, year: int, r0: int, r1: int) -> np.ndarray:
        """Rows r0:r1 of a composite's frame of `year` (read from its file without the rest)."""
        c = self.composites
        i = self.year_index(year)
        if isinstance(c, Composites):
            if name not in c:
                raise KeyError(name)
            return self.store.rows(("comp", name, i), r0, r1)
        return c[name][i][r0:r1]

    def frame_rows(self, frames: list[tuple[str, int]], block_bytes: int | None = None):
        """(r0, r1, [rows r0:r1 of each (composite, year) frame]) block by block (blocks)."""
        for r0, r1 in self.blocks(len(frames), block_bytes):
            yield r0, r1, [self.comp_rows(name, y, r0, r1) for name, y in frames]

    def year_rows(self, name: str, years: list[int], block_bytes: int | None = None):
        """(r0, r1, [rows r0:r1 of the composite in each year]) block by block: per-pixel work over years
        holds a block of each year's frame, never the (n_years, H, W) cube (1.4 GB for six years of a whole
        Landsat scene)."""
        yield from self.frame_rows([(name, y) for y in years], block_bytes)

    def over_years(self, name: str, years: list[int], how: str = "median") -> np.ndarray:
        """The per-pixel median (NaN ignored; or "max", "min") of a composite over `years`, block by block
        (year_rows): the same values as np.nanmedian / np.nanmax of the stacked years."""
        out = np.full(self.shape, np.nan, np.float32)
        for r0, r1, frames in self.year_rows(name, years):
            if frames:
                out[r0:r1] = reduce_frames(frames, how)
        return out

    def gather(self, rows_of: Callable[[int, int], np.ndarray], region: np.ndarray) -> np.ndarray:
        """frame[region & inside] of the frame whose rows r0:r1 `rows_of(r0, r1)` gives, gathered block by block
        (the same values in the same order): the frame itself is never whole in memory."""
        blocks = list(self.blocks(1))
        counts = [int((region[r0:r1] & self.inside[r0:r1]).sum()) for r0, r1 in blocks]
        out, at = None, 0
        for (r0, r1), n in zip(blocks, counts, strict=True):
            if n:
                rows = rows_of(r0, r1)
                out = np.empty(sum(counts), rows.dtype) if out is None else out
                out[at : at + n] = rows[region[r0:r1] & self.inside[r0:r1]]
                at += n
        return out if out is not None else np.empty(0, np.float32)

    def nbr_frame(self, t: int) -> np.ndarray:
        """The harmonized NBR (float16) of the t-th scene of nbr_dates."""
        return self.store.get(("nbr", t))

    def sensors(self, lo: int, hi: int) -> list[str]:
        found: set[str] = set()
        for y in range(lo, hi + 1):
            found |= self.sensors_by_year.get(y, set())
        return [s for s in LANDSAT if s in found]

    def years_between(self, lo: int, hi: int) -> list[int]:
        return [y for y in self.years if lo <= y <= hi]


# ----------------------------------------------------------------------------- record products


def _product_files(site_dir: Path, product_ids: tuple[str, ...]) -> dict[str, Path]:
    """The first file of each product under the site, from one walk of its files (a large record has tens of
    thousands: walking them once per product cost seconds)."""
    cat = catalog()
    found: dict[str, Path] = {}
    for path in site_files(site_dir):
        m = cat.match(path.name)
        if m is not None and m.product.id in product_ids and m.product.id not in found:
            found[m.product.id] = path
            if len(found) == len(product_ids):
                break
    return found


def _read_product(site_dir: Path, path: Path | None, grid: Grid) -> tuple[np.ndarray | None, str | None]:
    if path is None:
        return None, None
    try:
        return read_raw(path, grid, nodata=None), str(path.relative_to(site_dir))
    except RecordError as exc:
        logger.warning("cannot read %s: %s", path, exc)
        return None, None


class IndexCache:
    """Scene indexes (open_index without a store) remembered per folder until any file of it changes (its
    signature), at most `size` folders, oldest dropped first. Its lifetime is the object's; clear() forgets
    everything. INDEXES is the process-wide one cached_index uses."""

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._entries: dict[str, tuple[str, SceneIndex]] = {}

    def get(self, site_dir: str | Path) -> SceneIndex:
        """The folder's index, scanned again only when its files changed. Callers must not change its scenes."""
        from reviewer.record.scan import open_index, signature

        folder = Path(site_dir).resolve()
        sig = signature(folder)
        hit = self._entries.get(str(folder))
        if hit is not None and hit[0] == sig:
            return hit[1]
        index = open_index(folder)
        while len(self._entries) >= self.size:
            del self._entries[next(iter(self._entries))]
        self._entries[str(folder)] = (sig, index)
        return index

    def clear(self) -> None:
        self._entries.clear()


#: the process-wide index cache: generating and altering one record in a session scans it once
INDEXES = IndexCache()


def cached_index(site_dir: str | Path) -> SceneIndex:
    """INDEXES.get(site_dir): open_index without a store, remembered until any file of the folder changes."""
    return INDEXES.get(site_dir)


def scene_mpx(index: SceneIndex) -> float:
    """The record's Landsat scenes x site pixels / 1e6: how heavy its pass is (what decides a split)."""
    h, w = index.site.shape
    return sum(1 for s in index.scenes if s.record and s.label in LANDSAT) * h * w / 1e6


# ----------------------------------------------------------------------------- the pass


def _landsat_scene(scene: Scene, grid: Grid, inside: np.ndarray, cfg: SeriesConfig) -> dict[str, Any] | None:
    from reviewer.record.decode import read_scene

    try:
        data = read_scene(scene, scene.product_spec, list(BANDS), grid)
    except RecordError as exc:
        logger.warning("skipped %s: %s", scene.scene_id, exc)
        return None
    # in place on the decoded bands (no stacked or masked copies): a whole Landsat scene's bands are 235 MB
    # each, and each copy of six of them was 1.4 GB more at the peak
    raw_b = {b: data.bands[b] for b in BANDS}
    del data.bands
    # Surface reflectance below the valid range (negative: dark water, mostly TM/ETM+ NIR/SWIR) is masked by
    # the decoder; where the quality layer calls the pixel clear and the pixel's other bands are dark, it is
    # clipped to 0 instead, so open water stays visible to the water methods.
    if data.masked is not None and data.out_of_range:
        brightest = np.zeros(inside.shape, np.float32)
        for v in raw_b.values():
            np.maximum(brightest, np.where(np.isfinite(v), v, np.float32(0.0)), out=brightest)
        dark = ~data.masked & (brightest < cfg.dark_clip)
        del brightest
        for v in raw_b.values():
            v[np.isnan(v) & dark] = 0.0
        del dark
    # a new array, or `v` itself where the sensor is not harmonized (masked once below, the same mask)
    harm_b = {b: harmonize(v, b, scene.sensor) for b, v in raw_b.items()}
    bright = harm_b["blue"] > cfg.bright_blue
    valid = inside & ~bright
    del bright
    for v in raw_b.values():
        valid &= np.isfinite(v)
    invalid = ~valid
    del valid
    # the indices are masked, not the bands (an index is NaN wherever one of its bands would have been)
    # OLI is not harmonized (its bands pass through): its raw indices are the harmonized ones
    same = all(harm_b[b] is raw_b[b] for b in BANDS)
    if same:
        h = _masked_indices(harm_b, invalid, USED["h"] | USED["r"])
        return {"scene": scene, "h": h, "r": h}
    return {
        "scene": scene,
        "h": _masked_indices(harm_b, invalid, USED["h"]),
        "r": _masked_indices(raw_b, invalid, USED["r"]),
    }


def _masked_indices(bands: dict[str, np.ndarray], invalid: np.ndarray, names: set[str]) -> dict[str, np.ndarray]:
    """The `names` of indices() of float32 bands, NaN where `invalid`: the same values, without a copy per index."""
    pairs = {name: tuple(spec["index"]) for name, spec in composites().items() if "index" in spec}
    pairs.update(EXTRA_INDICES)
    pairs = {name: pair for name, pair in pairs.items() if name in names}
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, (a, b) in pairs.items():
            nd = np.subtract(bands[a], bands[b], dtype=np.float32)
            np.divide(nd, np.add(bands[a], bands[b], dtype=np.float32), out=nd)
            nd[~np.isfinite(nd) | invalid] = np.nan
            out[name] = nd
    return out


def _coarse_scene(scene: Scene, grid: Grid) -> np.ndarray | None:
    """MODIS/VIIRS NDVI on the site grid (the record reader warps through a cached pixel map)."""
    try:
        return read_bands(scene, ["ndvi"], grid, cache=None)[0]
    except RecordError as exc:
        logger.warning("skipped %s: %s", scene.scene_id, exc)
        return None


def _snow_scene(scene: Scene, grid: Grid, inside: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(site pixels inside the boundary, their weights, NDSI 0-100 with NaN where the product codes a gap)."""
    try:
        values = read_bands(scene, ["snow"], grid, cache=None)[0]
    except RecordError as exc:  # an unreadable daily file is a gap
        logger.warning("skipped %s: %s", scene.scene_id, exc)
        return None
    cells = np.flatnonzero(inside)
    return cells, np.ones(cells.size, np.float32), values.ravel()[cells].astype(np.float32)


def _precip(scene: Scene, grid: Grid) -> float | None:
    try:
        v = read_bands(scene, ["precipitation"], grid, cache=None)[0]
    except RecordError as exc:
        logger.warning("skipped %s: %s", scene.scene_id, exc)
        return None
    return float(np.nanmean(v)) if np.isfinite(v).any() else None


def ahead_map(pool: ThreadPoolExecutor, fn: Callable[[Any], Any], items: list[Any], ahead: int | None = None):
    """pool.map that reads at most `ahead` items (default: twice the pool's threads) beyond the one taken.
    pool.map submits every item at once: when taking a result costs more than reading one (a 1000 px site's
    MODIS frames, warped in a few ms, reduced in tens), the frames read ahead piled up by the GB."""
    ahead = ahead or 2 * max(1, getattr(pool, "_max_workers", 1))
    futures: deque = deque()
    it = iter(items)
    try:
        for item in it:
            futures.append(pool.submit(fn, item))
            if len(futures) > ahead:
                yield futures.popleft().result()
        while futures:
            yield futures.popleft().result()
    finally:
        for f in futures:
            f.cancel()


#: up to this many frames, nanmedian0 sorts them with a network of element-wise min/max (a sort along the
#: first axis of a (t, H, W) cube visits each pixel's t values t strides apart: 3-6x slower for small t)
NETWORK_MAX = 12


def nanmedian0(a: Any) -> np.ndarray:
    """Median along axis 0 ignoring NaN (NaN where a column has no value); a fast np.nanmedian for small t.
    `a` is a (t, ...) array or a list of t equal-shaped frames (not stacked: no copy of the cube), whose values
    are finite or NaN (as every frame of the series pass)."""
    t = len(a)
    if t > NETWORK_MAX or t == 0:
        a = np.sort(np.asarray(a), axis=0)  # NaN sorts last
        n = np.isfinite(a).sum(0)
        lo = np.clip((n - 1) // 2, 0, None)
        hi = np.clip(n // 2, 0, None)
        v_lo = np.take_along_axis(a, lo[None], 0)[0]
        v_hi = np.take_along_axis(a, hi[None], 0)[0]
        out = (v_lo + v_hi) / 2
        out[n == 0] = np.nan
        return out
    if t <= 2:  # a year's season often has one or two scenes: (v + v) / 2 and (min + max) / 2, as below
        lo, out = (a[0], a[0] + a[0]) if t == 1 else (np.fmin(a[0], a[1]), np.fmax(a[0], a[1]))
        if t == 2:
            out += lo
        out /= 2
        out[np.isnan(out)] = np.nan  # (one NaN for every column without a value, as below)
        return out
    # NaN as +inf sorts last, as in np.sort; the finite values are the same, in the same order
    v = [np.where(np.isnan(f), np.inf, f) for f in a]
    n = np.isfinite(a[0]).view(np.uint8).copy()
    for f in a[1:]:
        n += np.isfinite(f).view(np.uint8)
    for i in range(1, t):  # insertion network: after pass i, v[0..i] are sorted
        for k in range(i, 0, -1):
            lo = np.minimum(v[k - 1], v[k])
            np.maximum(v[k - 1], v[k], out=v[k])
            v[k - 1] = lo
    # the (n - 1) // 2-th and n // 2-th smallest of a column's n values: v[j] where n reaches 2j + 1 and 2j
    # (a few comparisons; np.choose over the t frames cost more than the sorting)
    v_lo, v_hi = v[0], v[0]
    for j in range(1, t // 2 + 1):
        if 2 * j < t:
            v_lo = np.where(n > 2 * j, v[j], v_lo)
        v_hi = np.where(n >= 2 * j, v[j], v_hi)
    out = v_lo + v_hi
    out /= 2
    out[n == 0] = np.nan
    return out


def reduce_frames(frames: list[np.ndarray], how: str = "median") -> np.ndarray:
    """The per-pixel median (NaN ignored), "max" or "min" of equal-shaped float32 frames, NaN where a pixel has
    no value in any (without numpy's warnings about it): what over_years gives for each block."""
    import warnings

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN pixel is NaN, as meant
        if how == "median":
            out = nanmedian0(frames if len(frames) <= NETWORK_MAX else np.stack(frames))
        else:
            out = (np.nanmax if how == "max" else np.nanmin)(np.stack(frames), 0)
    return out.astype(np.float32, copy=False)


def _median(stack: list[np.ndarray], shape: tuple[int, int]) -> np.ndarray:
    if not stack:
        return np.full(shape, np.nan, np.float32)
    return nanmedian0(stack if len(stack) <= NETWORK_MAX else np.stack(stack)).astype(np.float32, copy=False)


def _reduce(stack: list[np.ndarray], shape: tuple[int, int], how: str) -> np.ndarray:
    if not stack:
        return np.full(shape, np.nan, np.float32)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a = np.stack(stack)
        return (np.nanmax(a, 0) if how == "max" else np.nanmin(a, 0)).astype(np.float32)


def build_series(
    index: SceneIndex,
    *,
    config: SeriesConfig | None = None,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    parts: frozenset[str] | set[str] | None = None,
    memory: int | None = None,
    threads: int | None = None,
    runner: Any = None,
) -> SiteSeries:
    """One pass over the record's scenes, building every series the reference methods use.

    `memory` (bytes, default 2 GB) is the process's budget. Of what the process does not hold already, a half
    is for the blocks of rows the Landsat scenes are read and reduced in, a quarter keeps composite, NBR and
    snow frames in memory, the rest of them goes to files (read back with a cache of a twentieth), and the
    templates' per-pixel work reads a thirty-second of it (at most 64 MB) of frame rows a block; the values are
    the same either way.

    `parts` limits the pass to some of PARTS (default: all): "landsat" (composites, NBR cube, Landsat crop
    NDVI), "coarse" (MODIS/VIIRS NDVI), "era5" (precipitation), "snow" (MOD10A1/MYD10A1 daily snow cover),
    "products" (WorldCover, Hansen loss year). Years and clear-observation counts are always filled.

    `threads` reads that many scenes side by side (default: the config's workers; not part of the provenance,
    which states the config). `runner`, a dask client, makes the Landsat years and runs of MODIS/VIIRS
    composites tasks on its workers (a large site split over a cluster); the series is the same.
    """
    import time

    t0 = time.perf_counter()
    cfg = config or SeriesConfig()
    site = index.site
    grid = Grid.of_site(site)
    scenes = [s for s in index.scenes if s.record]
    landsat = [s for s in scenes if s.label in LANDSAT and (s.tier in cfg.tiers)]
    series = _empty_series(index, scenes, landsat, cfg)
    parts = PARTS if parts is None else frozenset(parts)
    to_read = _to_read(scenes, landsat, series.years, cfg, parts)
    files = _product_files(site.dir, PRODUCT_IDS) if "products" in parts else {}
    if not any(to_read.values()) and not files:  # (the products' files may still hold nothing of the site)
        series.regions = {}  # nothing to read: no masks (a 10 m tile's seven are 850 MB, over a 500 MB budget)
    else:
        series.inside = site.boundary_mask if site.boundary_mask is not None else np.ones(series.shape, bool)
        series.regions = quadrant_masks(series.shape)
    # the budget is for the whole process: what it holds already (interpreter, libraries, caches) is not free
    import psutil

    free = max(0, (memory or DEFAULT_BUDGET) - psutil.Process().memory_info().rss)
    series.store = FrameStore(free // 4, cache_bytes=free // 20)
    series.block_bytes = free // 2
    series.rows_bytes = min(TEMPLATE_ROWS_BYTES, max(1 << 16, free // 32))
    crop_core = _read_products(series, site.dir, grid, files)
    tick = _Ticker(sum(len(v) for v in to_read.values()), progress, cancel)
    series.runner = runner
    series.nothing_read = _nothing_read(index, series, to_read)
    if series.nothing_read:  # no empty composites of every year made (5 GB of NaN frames on a 10 m tile)
        logger.warning("%s", series.nothing_read)
        series.seconds = time.perf_counter() - t0
        return series
    with ThreadPoolExecutor(max_workers=threads or cfg.workers) as pool:
        _read_landsat(series, to_read["landsat"], pool, grid, crop_core, tick, runner)
        _read_coarse(series, to_read["coarse"], pool, grid, crop_core, tick, runner)
        for scene, value in zip(
            to_read["era5"], ahead_map(pool, lambda s: _precip(s, grid), to_read["era5"]), strict=True
        ):
            tick("read ERA5-Land")
            if value is not None:
                series.precip[(scene.date.year, scene.date.month)] = value
        _read_snow(series, to_read["snow"], pool, grid, tick)
    series.seconds = time.perf_counter() - t0
    if progress is not None:
        progress(0.8, f"read {series.scenes_read} scenes")
    logger.info("series of %s: %d scenes read in %.1f s", site.id, series.scenes_read, series.seconds)
    return series


def _nothing_read(index: SceneIndex, series: SiteSeries, to_read: dict[str, list[Scene]]) -> str | None:
    """Why the pass read nothing the reference methods use (None when it read something): the record's
    scenes by sensor, and what the methods read."""
    if any(to_read.values()) or series.worldcover is not None or series.hansen_lossyear is not None:
        return None
    have = Counter(s.label for s in index.scenes if s.record)
    listed = ", ".join(f"{n} {label}" for label, n in have.most_common()) or "no scene"
    return (
        f"nothing of the record of {index.site.id} is read by the reference methods (its record: {listed}); they "
        f"read Landsat TM/ETM+/OLI Level-2 ({', '.join(series.config.tiers)}, at least "
        f"{series.config.min_scene_clear:.0%} clear), MODIS/VIIRS NDVI, MOD10A1/MYD10A1 snow, ERA5-Land "
        "precipitation, WorldCover and Hansen loss year"
    )


def _empty_series(index: SceneIndex, scenes: list[Scene], landsat: list[Scene], cfg: SeriesConfig) -> SiteSeries:
    """The series' frame: its years (the Landsat years, else the record's) and clear-observation counts per
    year, from the index (no pixels read); build_series adds the site's masks once it knows it reads something."""
    site = index.site
    shape = tuple(site.shape)
    # the whole site until build_series knows it reads something (then the boundary's mask, or ones)
    inside = np.broadcast_to(np.True_, shape)
    years = sorted({s.year for s in landsat}) or sorted({s.year for s in scenes})
    if years:
        years = list(range(years[0], years[-1] + 1))
    series = SiteSeries(site.id, shape, site.pixel_area_km2, inside, years, cfg)
    for key, months in (("all", tuple(range(1, 13))), ("growing", cfg.growing_months), ("water", cfg.water_months)):
        counts: dict[int, int] = defaultdict(int)
        for s in landsat:
            if s.date.month in months and (s.clear_fraction or 0.0) >= cfg.clear_obs_fraction:
                counts[s.year] += 1
        series.clear_obs[key] = {y: counts.get(y, 0) for y in years}
    return series


def _class_value(product_id: str, name: str) -> int:
    """The pixel value of a named class of a class map in the catalogue (WorldCover's cropland is 40)."""
    for band in catalog().products[product_id].raw["bands"].values():
        for value, label in band.get("classes", {}).items():
            if label == name:
                return int(value)
    raise KeyError(f"{product_id} has no class {name!r} in products.json")


#: the products the pass reads whole (WorldCover, Hansen loss year), in _read_products' order
PRODUCT_IDS = ("esa_worldcover", "hansen_gfc_lossyear")


def _read_products(series: SiteSeries, site_dir: Path, grid: Grid, files: dict[str, Path]) -> np.ndarray | None:
    """WorldCover and the Hansen loss year (`files`: _product_files of PRODUCT_IDS) into the series; returns the
    crop core (WorldCover cropland eroded by 4 pixels, or all of it when erosion leaves none) the crop NDVI is
    read over, None without cropland."""
    ids = PRODUCT_IDS
    wc, _ = _read_product(site_dir, files.get(ids[0]), grid)
    series.worldcover = wc
    hansen, hansen_path = _read_product(site_dir, files.get(ids[1]), grid)
    series.hansen_lossyear, series.hansen_path = hansen, hansen_path
    cropland = _class_value(ids[0], "cropland")
    crop = wc == cropland if wc is not None and (wc == cropland).any() else None
    series.crop_mask = crop
    crop_core = ndimage.binary_erosion(crop, iterations=4) if crop is not None else None
    if crop_core is not None and not crop_core.any():
        crop_core = crop
    return crop_core


def _to_read(
    scenes: list[Scene], landsat: list[Scene], years: list[int], cfg: SeriesConfig, parts: frozenset[str]
) -> dict[str, list[Scene]]:
    """The scenes of each part the pass reads, in reading order."""
    last_year = years[-1] if years else 0
    return {
        "landsat": [s for s in landsat if (s.clear_fraction or 0.0) >= cfg.min_scene_clear and "landsat" in parts],
        "coarse": [
            s
            for s in scenes
            if "coarse" in parts
            and s.label in COARSE
            and s.product_spec.band_by_name("ndvi") is not None
            and (
                (s.date + dt.timedelta(days=8)).month in cfg.growing_months
                or s.year > last_year - cfg.coarse_all_months_years
            )
        ],
        "era5": [s for s in scenes if "era5" in parts and s.label == "ERA5-Land" and "tp" in s.files],
        "snow": [
            s
            for s in scenes
            if "snow" in parts and s.product_spec.family == "modis_snow" and "NDSI_Snow_Cover" in s.files
        ],
    }


class _Ticker:
    """Counts scenes read: checks for cancel at each, reports progress (0-0.8) every 25 and at the last."""

    def __init__(self, n: int, progress: Progress | None, cancel: Callable[[], bool] | None) -> None:
        self.total = max(1, n)
        self.done = 0
        self.progress = progress
        self.cancel = cancel

    def __call__(self, msg: str) -> None:
        self.done += 1
        if self.cancel is not None and self.cancel():
            raise Cancelled("generation cancelled")
        if self.progress is not None and (self.done % 25 == 0 or self.done == self.total):
            self.progress(0.8 * self.done / self.total, msg)

    def advance(self, n: int, msg: str) -> None:
        """n scenes read at once (a task's): one cancel check, one progress report."""
        self.done += n
        if self.cancel is not None and self.cancel():
            raise Cancelled("generation cancelled")
        if self.progress is not None:
            self.progress(0.8 * min(self.done, self.total) / self.total, msg)


#: the Landsat composites per season: (index, "h" harmonized or "r" raw), those the templates read (no raw NBR, no
#: harmonized NDWI: nothing read them, and on TM/ETM+ each was one more median and frame a year; see WATER_METHODS)
COMPOSITE_NAMES = {
    "gs": [("ndvi", "h"), ("ndvi", "r"), ("nbr", "h"), ("ndbi", "h")],
    "water": [("mndwi", "h"), ("mndwi", "r"), ("ndwi", "r")],
}
#: the indices of a scene each reflectance ("h", "r") is reduced to: its composites', the NBR of the per-scene
#: cube and the NDVI of the crop series (harmonized)
USED = {
    var: {i for season in COMPOSITE_NAMES.values() for i, v in season if v == var}
    | ({"nbr", "ndvi"} if var == "h" else set())
    for var in ("h", "r")
}


#: What reading a Landsat scene holds at its peak per site pixel (raw bands and quality layers, the decoded,
#: harmonized and index frames and their temporaries), and what a year keeps per pixel of each of its scenes
#: until the year's block is reduced (its index frames): tracemalloc of one block, OLI 50 and 20 bytes, TM and
#: ETM+ (harmonized copies, raw indices too) about twice that.
READ_BYTES_PX = 100
KEPT_BYTES_PX = 40

#: What a read onto the site grid from files of another CRS (or rotated) holds more per site pixel while it
#: makes its nearest-neighbour lookup (reviewer.record.grid.pixel_map: the grid's coordinates, transformed as
#: Python floats; tracemalloc 137 B a pixel). Uncounted, blocks of the eo-datasets TM/ETM+ scenes (EPSG:32655
#: files) on a 2204 x 2280 px EPSG:32755 site held 796 B a block pixel with 3 reads in flight: 1024-row blocks
#: under a 2 GB budget peaked at 2.17 GB.
LOOKUP_BYTES_PX = 140


#: what a block of rows of the templates' per-pixel work holds of the frames it reads at most (bytes): a
#: thirty-second of the budget below that (its temporaries are a few times the frames' rows)
TEMPLATE_ROWS_BYTES = 64 * 2**20


#: the fewest rows of a block whatever the budget: each block opens every file of its scenes again
MIN_ROWS = 8


def block_rows(n_scenes: int, shape: tuple[int, int], limit: int, in_flight: int, lookup: bool = False) -> int:
    """Rows of the site grid a year's scenes are read and reduced in, so the block's frames fit `limit` bytes:
    whole COG tile rows (256) where that fits, so each tile of a file is decompressed once (row_blocks aligns
    them with the files' own tile rows). `lookup`: the scenes' files are not on the site's CRS (or rotated), so
    each read also makes its nearest-neighbour lookup of the block (LOOKUP_BYTES_PX)."""
    h, w = shape
    read = READ_BYTES_PX + (LOOKUP_BYTES_PX if lookup else 0)
    per_row = w * (in_flight * read + max(1, n_scenes) * KEPT_BYTES_PX)
    rows = max(MIN_ROWS, limit // max(1, per_row))
    if rows >= h:
        return h
    return rows // 256 * 256 if rows >= 256 else rows


#: a budget of at least this share of a tile row reads whole tile rows (a block of up to a third more rows than
#: the budget's: each tile decompressed once, where blocks of fewer rows than a tile decompress most tiles twice)
ROUND_UP_SHARE = 0.75


def row_blocks(h: int, rows: int, tile: tuple[int, int] | None) -> list[tuple[int, int]]:
    """The blocks (r0, r1) of a site of `h` rows read `rows` rows at a time, cut at the files' tile rows when
    `tile` = (tile height, first site row where a tile row of the files starts) is known: a block never ends
    inside a tile row, so GDAL decompresses each tile once (a file is opened again for each block, and its tiles
    with it). A budget under a tile row reads a whole one from three quarters of it up (ROUND_UP_SHARE), and
    below that equal parts of each tile row (each tile decompressed once per part, not once more where a block
    straddles two). Without `tile`, blocks of `rows` from the top."""
    if rows >= h or tile is None or tile[0] < MIN_ROWS:
        return [(r0, min(h, r0 + rows)) for r0 in range(0, h, rows)]
    th, first = tile
    if rows >= th or rows >= ROUND_UP_SHARE * th:
        step = max(1, rows // th) * th
        cuts = list(range(first % th, h, step))
    else:
        parts = math.ceil(th / rows)
        cuts = [t + th * k // parts for t in range(first % th - th, h, th) for k in range(parts)]
    cuts = sorted({c for c in cuts if 0 < c < h} | {0, h})
    return list(zip(cuts[:-1], cuts[1:], strict=False))


def needs_lookup(scene: Scene, grid: Grid) -> bool:
    """Whether the scene's first band file lies on another CRS than the site grid's, or either is rotated: its
    read then makes a nearest-neighbour lookup of every pixel of the block (record.grid.pixel_map), where files
    of the site's CRS take one of a column and one of a row. An unreadable file: False (the read names it)."""
    from reviewer.record.decode import file_geometry
    from reviewer.record.grid import separable

    path = _first_band_file(scene)
    if path is None:
        return False
    try:
        crs, t, _ = file_geometry(path)
    except RecordError:
        return False
    return not separable(crs, t, grid)


def tile_rows(scene: Scene, grid: Grid) -> tuple[int, int] | None:
    """(tile height, first site row at which a tile row starts) of the scene's first band file when its rows lie
    on the site grid's (same CRS, cell height and row alignment; what COGs of one path/row share with a site
    made from them), else None (blocks are then not aligned: a reprojected read crosses tile rows anyway)."""
    from reviewer.record.decode import tile_rows_on_grid

    path = _first_band_file(scene)
    return None if path is None else tile_rows_on_grid(path, grid)


def _first_band_file(scene: Scene) -> Path | None:
    """The file of the scene's first band read (BANDS[0]), whose geometry stands for its other bands'."""
    spec = scene.product_spec.band_by_name(BANDS[0])
    rel = scene.files.get(spec.token) if spec is not None else None
    return None if rel is None else Path(scene.files_root) / rel


class _SceneFailed(Exception):
    """A scene that read in the first blocks of its year failed in a later one."""

    def __init__(self, j: int) -> None:
        self.j = j


@dataclass
class LandsatYear:
    """What one year of Landsat scenes reduces to: the year's composite frames (in COMPOSITE_NAMES order, then
    ndvimax_h and nbrmin_h), each read scene's harmonized NBR frame (float16) and crop NDVI, in reading order.
    A frame is an array (a task's result) or the key of a frame in the store the year was written to."""

    composites: list[tuple[str, Any]] = field(default_factory=list)
    nbr: list[tuple[dt.date, Any]] = field(default_factory=list)
    crop: list[tuple[dt.date, float]] = field(default_factory=list)
    sensors: set[str] = field(default_factory=set)
    read: int = 0
    scenes: int = 0
    #: raw composite -> the harmonized composite whose frame it is (the year's scenes are not harmonized: OLI)
    same: dict[str, str] = field(default_factory=dict)


def landsat_year(
    scenes: list[Scene],
    grid: Grid,
    inside: np.ndarray,
    cfg: SeriesConfig,
    crop_core: np.ndarray | None,
    limit: int,
    *,
    pool: ThreadPoolExecutor | None = None,
    tick: Callable[[str], None] | None = None,
    store: FrameStore | None = None,
    tag: Any = "year",
) -> LandsatYear:
    """One year's Landsat scenes read and reduced, block of rows by block of rows (a dask task when a large
    site's years are split): each scene's bands are read once, a block at a time, and the per-pixel reductions
    of the block written into the year's frames, so the pass holds about `limit` bytes of blocks whatever the
    site's size. The frames go into `store` under keys starting with `tag` (the result names them); without a
    store (a task) they come back as arrays. A scene whose read fails is skipped, as a whole."""
    own = pool is None
    pool = pool or ThreadPoolExecutor(max_workers=1)
    task = store is None
    store = store if store is not None else FrameStore(1 << 62)
    skip: set[int] = set()
    try:
        while True:
            out = LandsatYear(scenes=len(scenes))
            keys: list[Any] = []
            try:
                _year_blocks(scenes, skip, grid, inside, cfg, crop_core, limit, pool, tick, store, (tag,), out, keys)
                break
            except _SceneFailed as exc:  # rare (a file cut short past its first blocks): the year again without it
                skip.add(exc.j)
                for k in keys:
                    store.drop(k)
    finally:
        if own:
            pool.shutdown()
    if task:
        out.composites = [(n, np.array(store.get(k))) for n, k in out.composites]
        out.nbr = [(d, np.array(store.get(k))) for d, k in out.nbr]
        store.close()
    return out


def _year_blocks(
    scenes: list[Scene],
    skip: set[int],
    grid: Grid,
    inside: np.ndarray,
    cfg: SeriesConfig,
    crop_core: np.ndarray | None,
    limit: int,
    pool: ThreadPoolExecutor,
    tick: Callable[[str], None] | None,
    store: FrameStore,
    tag: tuple,
    out: LandsatYear,
    keys: list[Any],
) -> None:
    h, w = inside.shape
    year = scenes[0].year if scenes else 0
    workers = max(1, getattr(pool, "_max_workers", 1))
    lookup = any(needs_lookup(s, grid) for j, s in enumerate(scenes) if j not in skip)
    # (ahead_map: `workers` read ahead of the one taken)
    rows = block_rows(len(scenes), (h, w), limit, workers + 1, lookup)
    blocks = row_blocks(h, rows, tile_rows(scenes[0], grid) if scenes and rows < h else None)
    names = [f"{i}_{v}" for i, v in COMPOSITE_NAMES["gs"] + COMPOSITE_NAMES["water"]]
    comp_keys = {n: (*tag, "comp", n) for n in [*names, "ndvimax_h", "nbrmin_h"]}
    todo = [j for j in range(len(scenes)) if j not in skip]
    read: list[int] = []  # scenes read in the first block, in reading order
    crop_parts: dict[int, list[Any]] = defaultdict(list)
    same: dict[str, str] = {}  # raw composite -> the harmonized one it is (decided on the first block)
    empty: set[str] = set()  # composites without a scene of their season (decided on the first block)
    for r0, r1 in blocks:
        bgrid, binside = grid.window((r0, r1), (0, w)), inside[r0:r1]
        bcrop = crop_core[r0:r1] if crop_core is not None else None
        stack: dict[str, list[np.ndarray]] = defaultdict(list)
        take = todo if r0 == 0 else read
        results = ahead_map(pool, lambda j, g=bgrid, i=binside: _landsat_scene(scenes[j], g, i, cfg), take, workers)
        for j, res in zip(take, results, strict=True):
            scene = scenes[j]
            if res is None:
                if r0 == 0:
                    if tick is not None:
                        tick(f"read Landsat {year}")
                    continue  # unreadable: skipped (logged by _landsat_scene)
                raise _SceneFailed(j)
            if r0 == 0:
                read.append(j)
                key = (*tag, "nbr", j)
                store.alloc(key, (h, w), np.float16)
                keys.append(key)
                out.nbr.append((scene.date, key))
            m = scene.date.month
            for season in ("gs", "water"):
                if m in (cfg.growing_months if season == "gs" else cfg.water_months):
                    for idx, var in COMPOSITE_NAMES[season]:
                        stack[f"{idx}_{var}"].append(res[var][idx])
            store.write_rows((*tag, "nbr", j), r0, res["h"]["nbr"].astype(np.float16))
            if bcrop is not None and bcrop.any():
                key = (*tag, "crop", j, r0)
                store.put(key, res["h"]["ndvi"][bcrop])
                keys.append(key)
                crop_parts[j].append(key)
            if r1 == h and tick is not None:
                tick(f"read Landsat {year}")
        if r0 == 0:
            # a year of sensors that are not harmonized (OLI): each raw composite is its harmonized one, one frame
            # under both names (not computed and written twice)
            same = {n: n[:-2] + "_h" for n in names if n.endswith("_r") and n[:-2] + "_h" in names}
            if any(a is not b for n, hn in same.items() for a, b in zip(stack[n], stack[hn], strict=True)):
                same = {}
            # a composite without a scene of its season this year is NaN in every block: one value, not a frame
            # of NaN written to a file and read back (a year without growing-season scenes has seven)
            of = {**{n: n for n in names}, "ndvimax_h": "ndvi_h", "nbrmin_h": "nbr_h"}
            empty = {n for n, src in of.items() if n not in same and not stack.get(src)}
            for n in empty:
                store.fill(comp_keys[n], (h, w), np.float32, np.nan)
                keys.append(comp_keys[n])
        shape = (r1 - r0, w)
        reduced = [(n, _median(stack[n], shape)) for n in names if n not in same and n not in empty]
        reduced += [("ndvimax_h", _reduce(stack["ndvi_h"], shape, "max"))] if "ndvimax_h" not in empty else []
        reduced += [("nbrmin_h", _reduce(stack["nbr_h"], shape, "min"))] if "nbrmin_h" not in empty else []
        del stack
        for n, frame in reduced:
            if r0 == 0:
                store.alloc(comp_keys[n], (h, w), np.float32)
                keys.append(comp_keys[n])
            store.write_rows(comp_keys[n], r0, frame)
        if r0 == 0:
            for n, hn in same.items():
                store.alias(comp_keys[n], comp_keys[hn])
                keys.append(comp_keys[n])
    for j in read:
        scene = scenes[j]
        out.read += 1
        out.sensors.add(scene.label)
        if crop_parts.get(j):
            v = np.concatenate([store.get(k) for k in crop_parts[j]])
            for k in crop_parts[j]:
                store.drop(k)
            if np.isfinite(v).mean() > 0.5:
                out.crop.append((scene.date, float(np.nanmedian(v))))
    out.composites = [(n, comp_keys[n]) for n in [*names, "ndvimax_h", "nbrmin_h"]]
    out.same = dict(same)


def _read_landsat(
    series: SiteSeries,
    to_read: list[Scene],
    pool: ThreadPoolExecutor,
    grid: Grid,
    crop_core: Any,
    tick: _Ticker,
    runner: Any = None,
) -> None:
    """Landsat, year by year: the per-year composites, the per-scene NBR cube and the Landsat crop NDVI. With a
    `runner` (a dask client), the years are tasks on its workers, taken in year order as they finish."""
    comps = Composites(series.store, len(series.years))
    by_year: dict[int, list[Scene]] = defaultdict(list)
    for s in to_read:
        by_year[s.year].append(s)
    limit = series.block_bytes

    def put(key: Any, frame: Any) -> None:
        if isinstance(frame, np.ndarray):
            series.store.put(key, frame)
        else:
            series.store.rename(frame, key)

    def take(i: int, res: LandsatYear) -> None:
        series.scenes_read += res.read
        if res.sensors:
            series.sensors_by_year.setdefault(series.years[i], set()).update(res.sensors)
        for date, frame in res.nbr:
            put(("nbr", len(series.nbr_dates)), frame)
            series.nbr_dates.append(date)
        if res.crop:
            series.crop_ndvi.setdefault("Landsat", []).extend(res.crop)
        for name, frame in res.composites:
            if name not in comps.names:
                comps.names.append(name)
            put(("comp", name, i), frame)
        for name, target in res.same.items():
            series.same_frames[(name, series.years[i])] = target

    args = (grid, series.inside, series.config, crop_core, limit)
    if runner is None:
        for i, year in enumerate(series.years):
            take(i, landsat_year(by_year.get(year, []), *args, pool=pool, tick=tick, store=series.store, tag=year))
    else:
        jobs = [(landsat_year, (by_year.get(y, []), *args), len(by_year.get(y, []))) for y in series.years]
        for i, res in enumerate(_in_order(series, runner, jobs, tick, "read Landsat")):
            take(i, res)
    series.composites = comps if len(comps) else {}


def _in_order(series: SiteSeries, runner: Any, jobs: list[tuple[Callable, tuple, int]], tick: _Ticker, msg: str):
    """reviewer.bank.tasks.in_order over the jobs (function, arguments, scenes it reads), each job's scenes
    counted on `tick` when its result is taken (a cancel there drops the tasks not taken)."""
    from reviewer.bank.tasks import in_order

    results = in_order(runner, [(fn, args) for fn, args, _ in jobs])
    try:
        for (_, _, n), res in zip(jobs, results, strict=True):
            series.tasks += 1
            tick.advance(n, msg)
            yield res
    finally:
        results.close()


def _coarse_chunks(coarse: list[Scene], months: tuple[int, ...], size: int) -> list[list[Scene]]:
    """The coarse scenes cut into runs of about `size`, never between two composites whose growing-season
    median is one (same label, same year): each run's medians and crop values are whole, in reading order."""
    last: dict[tuple[str, int], int] = {}
    for i, scene in enumerate(coarse):
        mid = scene.date + dt.timedelta(days=8)
        if mid.month in months:
            last[(scene.label, mid.year)] = i
    chunks: list[list[Scene]] = []
    open_until = -1
    cur: list[Scene] = []
    for i, scene in enumerate(coarse):
        mid = scene.date + dt.timedelta(days=8)
        if mid.month in months:
            open_until = max(open_until, last[(scene.label, mid.year)])
        cur.append(scene)
        if len(cur) >= size and open_until <= i:
            chunks.append(cur)
            cur = []
    if cur:
        chunks.append(cur)
    return chunks


@dataclass
class CoarseRun:
    """A run of MODIS/VIIRS composites reduced: growing-season medians by (label, year) in the order they were
    taken, the crop NDVI by label in reading order, and the labels in the order their first growing-season
    composite was read."""

    medians: list[tuple[str, int, np.ndarray]] = field(default_factory=list)
    crop: list[tuple[str, dt.date, float]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    read: int = 0
    scenes: int = 0


def coarse_run(
    coarse: list[Scene],
    grid: Grid,
    inside: np.ndarray,
    months: tuple[int, ...],
    crop_core: np.ndarray | None,
    *,
    pool: ThreadPoolExecutor | None = None,
    tick: Callable[[str], None] | None = None,
) -> CoarseRun:
    """MODIS / VIIRS NDVI of a run of composites on the site grid (a dask task when a large site is split):
    growing-season medians per label and year, taken as soon as the year's last composite of the run is read,
    and the crop NDVI per composite (dated at the composite's middle, 8 days after its start)."""
    out = CoarseRun(scenes=len(coarse))
    own = pool is None
    pool = pool or ThreadPoolExecutor(max_workers=1)
    left: dict[tuple[str, int], int] = defaultdict(int)
    for scene in coarse:
        mid = scene.date + dt.timedelta(days=8)
        if mid.month in months:
            left[(scene.label, mid.year)] += 1
    pending: dict[tuple[str, int], list[np.ndarray]] = defaultdict(list)
    try:
        for scene, arr in zip(coarse, ahead_map(pool, lambda s: _coarse_scene(s, grid), coarse), strict=True):
            if tick is not None:
                tick(f"read {scene.label}")
            mid = scene.date + dt.timedelta(days=8)
            key = (scene.label, mid.year)
            if arr is not None:
                out.read += 1
                arr = np.where(inside, arr, np.nan)
                if mid.month in months:
                    pending[key].append(arr)
                    if scene.label not in out.labels:
                        out.labels.append(scene.label)
                if crop_core is not None:
                    v = arr[crop_core]
                    if np.isfinite(v).mean() > 0.5:
                        out.crop.append((scene.label, mid, float(np.nanmedian(v))))
            if mid.month in months:
                left[key] -= 1
                if left[key] == 0 and pending.get(key):
                    out.medians.append((scene.label, mid.year, _median(pending.pop(key), inside.shape)))
    finally:
        if own:
            pool.shutdown()
    return out


class StoredCube:
    """A (n, H, W) cube whose frames live in a FrameStore: `cube[i]` one frame, `cube[list]` the stack of
    those frames, np.asarray(cube) the whole; `shape` and len() as an array's."""

    def __init__(self, store: FrameStore, keys: list[Any], shape: tuple[int, int]) -> None:
        self.store, self.keys, self.shape = store, keys, (len(keys), *shape)

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i: Any) -> np.ndarray:
        if isinstance(i, int | np.integer):
            return self.store.get(self.keys[i])
        picked = np.arange(len(self.keys))[i]
        return (
            np.stack([self.store.get(self.keys[j]) for j in picked])
            if len(picked)
            else np.zeros((0, *self.shape[1:]), np.float32)
        )

    def rows(self, i: int, r0: int, r1: int) -> np.ndarray:
        """Rows r0:r1 of the i-th frame (read from its file without the rest)."""
        return self.store.rows(self.keys[i], r0, r1)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        a = self[slice(None)]
        return a.astype(dtype) if dtype is not None else a


def cube_rows(cube: Any, i: int, r0: int, r1: int) -> np.ndarray:
    """Rows r0:r1 of the i-th frame of a cube: a StoredCube's from its store, else an array's."""
    return cube.rows(i, r0, r1) if isinstance(cube, StoredCube) else np.asarray(cube[i])[r0:r1]


def _read_coarse(
    series: SiteSeries,
    coarse: list[Scene],
    pool: ThreadPoolExecutor,
    grid: Grid,
    crop_core: Any,
    tick: _Ticker,
    runner: Any = None,
) -> None:
    """MODIS / VIIRS NDVI on the site grid: growing-season medians per year, each frame in the series' store as
    soon as it is taken (memory within the budget, else files), and the crop NDVI per composite. With a
    `runner` (a dask client), runs of composites are tasks on its workers, taken in reading order."""
    months = series.config.growing_months
    keys: dict[str, dict[int, Any]] = defaultdict(dict)
    labels: dict[str, None] = {}  # in the order their first growing-season composite was read

    def take(res: CoarseRun) -> None:
        series.scenes_read += res.read
        for label in res.labels:
            labels.setdefault(label)
        for label, date, value in res.crop:
            series.crop_ndvi.setdefault(label, []).append((date, value))
        for label, year, frame in res.medians:
            key = ("coarse", label, year)
            series.store.put(key, frame)
            keys[label][year] = key

    if runner is None:
        take(coarse_run(coarse, grid, series.inside, months, crop_core, pool=pool, tick=tick))
    else:
        chunks = _coarse_chunks(coarse, months, 46)  # about a year of 16-day composites of two or three labels
        jobs = [(coarse_run, (c, grid, series.inside, months, crop_core), len(c)) for c in chunks]
        for res in _in_order(series, runner, jobs, tick, "read MODIS/VIIRS"):
            take(res)
    for label in labels:
        ys = sorted(keys[label])
        series.coarse[label] = {"years": ys, "gs": StoredCube(series.store, [keys[label][y] for y in ys], series.shape)}


def _read_snow(series: SiteSeries, snow: list[Scene], pool: ThreadPoolExecutor, grid: Grid, tick: _Ticker) -> None:
    """MODIS daily snow cover (NDSI x 100) on the product pixels covering the site, per label in date order."""
    per_label: dict[str, dict[str, Any]] = {}
    for scene, res in zip(snow, ahead_map(pool, lambda s: _snow_scene(s, grid, series.inside), snow), strict=True):
        tick(f"read {scene.label} snow")
        if res is None:
            continue
        series.scenes_read += 1
        cells, weights, values = res
        d = per_label.setdefault(scene.label, {"cells": cells, "weights": weights, "rows": []})
        if not np.array_equal(d["cells"], cells):
            logger.warning("skipped %s: on another grid than the first %s file", scene.scene_id, scene.label)
            continue
        key = ("snow", scene.label, len(d["rows"]))
        series.store.put(key, values)  # a day's row: in memory within the budget, else in a file
        d["rows"].append((scene.date, key))
    for label, d in per_label.items():
        rows = sorted(d["rows"], key=lambda r: r[0])
        series.snow[label] = {
            "dates": [r[0] for r in rows],
            "ndsi": StoredRows(series.store, [r[1] for r in rows], d["cells"].size),
            "weights": d["weights"],
        }
