"""Lazy stacks on the site grid: (time, y, x) dask arrays whose time axis carries date, sensor and scene id.

Opening a stack reads no pixels. Reads go through one bounded cache of decoded scenes, shared by the
viewer's prefetch, the renderer and the reference methods.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from reviewer.errors import NoSceneError, RecordError
from reviewer.record.decode import Grid, check_read_fits, read_scene  # noqa: F401 - check_read_fits: public here too
from reviewer.record.scan import Scene, SceneIndex
from reviewer.record.stretch import Stretch, composites, is_single

if TYPE_CHECKING:  # dask is imported where a lazy array is made: `reviewer render` and the readers never
    import dask.array as da  # use one, and importing dask.array was 1.2 s of a render's 2.6 s of imports

logger = logging.getLogger(__name__)

HARMONIZATION_PATH = Path(__file__).with_name("harmonization.json")


@cache
def harmonization() -> dict:
    return json.loads(HARMONIZATION_PATH.read_text(encoding="utf-8"))


def harmonize(values: np.ndarray, band: str, sensor: str) -> np.ndarray:
    """ETM+/TM reflectance to the OLI scale (Roy et al. 2016 OLS); other sensors pass through."""
    h = harmonization()
    if sensor not in h["applies_to"] or band not in h["bands"]:
        return values
    slope, intercept = h["bands"][band]
    return values * np.float32(slope) + np.float32(intercept)


class SceneCache:
    """A bounded LRU of decoded arrays keyed by (scene, what); safe to use from worker threads."""

    def __init__(self, max_bytes: int = 512 * 2**20) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._pending: dict[tuple, threading.Event] = {}
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple) -> np.ndarray | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
            return value

    def put(self, key: tuple, value: np.ndarray) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._items[key] = value
            self._bytes += value.nbytes
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= dropped.nbytes

    def get_or_read(self, key: tuple, read: Callable[[], np.ndarray]) -> np.ndarray:
        """The cached value, else read it once: a thread asking for a key another thread is already
        reading waits for that read instead of repeating it (the viewer and its prefetch often
        want the same date at the same moment)."""
        while True:
            with self._lock:
                value = self._items.get(key)
                if value is not None:
                    self._items.move_to_end(key)
                    self.hits += 1
                    return value
                pending = self._pending.get(key)
                if pending is None:
                    self.misses += 1
                    pending = self._pending[key] = threading.Event()
                    owner = True
                else:
                    owner = False
            if not owner:
                pending.wait()
                continue  # the value is cached now (or the read failed: try ourselves)
            try:
                value = read()
                self.put(key, value)
                return value
            finally:
                with self._lock:
                    self._pending.pop(key, None)
                pending.set()

    def __contains__(self, key: tuple) -> bool:
        with self._lock:
            return key in self._items

    @property
    def nbytes(self) -> int:
        return self._bytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


_default_cache = SceneCache()


def default_cache() -> SceneCache:
    return _default_cache


def composite_bands(composite: str, scene: Scene) -> list[str] | None:
    """Band common names the composite needs from this scene's product, or None when it cannot be made."""
    spec = composites()[composite]
    product = scene.product_spec
    if "index" not in spec and "bands" not in spec:  # one physical band (LST, ERA5-Land)
        band = product.band_by_name(spec["band"])
        return [spec["band"]] if band is not None and band.token in scene.files else None
    if "index" in spec:
        if (
            spec.get("band")
            and product.band_by_name(spec["band"])
            and product.band_by_name(spec["band"]).token in scene.files
        ):
            return [spec["band"]]
        names = spec["index"]
    else:
        names = spec["bands"]
    for n in names:
        b = product.band_by_name(n)
        if b is None or b.token not in scene.files:
            return None
    return list(names)


def read_bands(
    scene: Scene,
    names: Sequence[str],
    grid: Grid,
    *,
    mask: Iterable[str] | None = None,
    harmonized: bool = False,
    cache: SceneCache | None = None,
) -> np.ndarray:
    """(len(names), y, x) float32 physical values of one scene, masked to NaN, optionally harmonized to OLI."""

    def read() -> np.ndarray:
        return scene_values(scene, names, grid, mask=mask, harmonized=harmonized)[0]

    if cache is None:
        return read()
    mask_key = tuple(sorted(mask)) if mask is not None else None
    key = (scene.files_root, scene.key, tuple(names), mask_key, harmonized, grid.shape)
    return cache.get_or_read(key, read)


def scene_values(
    scene: Scene,
    names: Sequence[str],
    grid: Grid,
    *,
    mask: Iterable[str] | None = None,
    harmonized: bool = False,
    flags: Iterable[str] = (),
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """read_bands' values (uncached) and, from the same read of the quality layer, the pixels of the quality
    `flags` asked for (a trajectory masks a date both ways from one read)."""
    data = read_scene(scene, scene.product_spec, names, grid, mask=mask, overlay_flags=flags, stacked=True)
    out = data.stacked
    if harmonized:
        for i, n in enumerate(names):
            out[i] = harmonize(out[i], n, scene.sensor)
    return out, data.flags


def composite_channels(composite: str, names: Sequence[str], values: np.ndarray) -> np.ndarray:
    """(c, y, x) channels of a composite from its bands' values (names from composite_bands)."""
    if "index" in composites()[composite] and len(names) == 2:
        return normalized_difference(values[0], values[1])[None]
    return values


def normalized_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        nd = (a - b) / (a + b)
    nd[~np.isfinite(nd)] = np.nan
    return nd.astype(np.float32)


def read_composite(
    scene: Scene,
    composite: str,
    grid: Grid,
    *,
    mask: Iterable[str] | None = None,
    harmonized: bool = False,
    cache: SceneCache | None = None,
) -> np.ndarray:
    """(c, y, x) channels of a composite: 3 reflectance bands, or 1 index (computed or read as a band)."""
    names = composite_bands(composite, scene)
    if names is None:
        raise RecordError(f"scene {scene.scene_id} ({scene.label}) has no bands for the {composite} composite")
    return composite_channels(
        composite, names, read_bands(scene, names, grid, mask=mask, harmonized=harmonized, cache=cache)
    )


def display_grid(grid: Grid, width: int | None) -> Grid:
    """The site grid resampled to `width` pixels across (same extent, same aspect): what a render or a viewer
    reads at display size. A width of None, or at least the grid's own, is the grid itself."""
    rows, cols = grid.shape
    if width is None or width >= cols:
        return grid
    from affine import Affine

    width = max(1, int(width))
    height = max(1, round(rows * width / cols))
    t = grid.transform
    scaled = Affine(t.a * cols / width, t.b, t.c, t.d, t.e * rows / height, t.f)
    return Grid(grid.crs, scaled, (height, width))


@dataclass
class Stack:
    """A filtered, date-ordered set of scenes of a site with lazy (time, ...) arrays over them."""

    index: SceneIndex
    scenes: list[Scene]
    grid: Grid
    cache: SceneCache
    harmonized: bool = False

    def __len__(self) -> int:
        return len(self.scenes)

    @property
    def dates(self) -> list[dt.date]:
        return [s.date for s in self.scenes]

    @property
    def labels(self) -> list[str]:
        """Time-axis labels: date and sensor, never an index."""
        return [f"{s.date.isoformat()} {s.label}" for s in self.scenes]

    def at_width(self, width: int | None) -> Stack:
        """The same scenes read at `width` pixels across (display_grid): a render's panels, the viewer's
        stack and chips at their display size. Reads hold about the output's pixels, from overviews where
        the files have them."""
        return Stack(self.index, self.scenes, display_grid(self.grid, width), self.cache, self.harmonized)

    def read(self, i: int, composite: str, *, mask: Iterable[str] | None = None) -> np.ndarray:
        return read_composite(
            self.scenes[i], composite, self.grid, mask=mask, harmonized=self.harmonized, cache=self.cache
        )

    def channels(self, composite: str) -> da.Array:
        """Lazy (t, c, y, x) float32 physical channels; nothing is read until a slice is computed."""
        import dask
        import dask.array as da

        nchan = 1 if is_single(composite) else 3
        shape = (nchan, *self.grid.shape)
        parts = [
            da.from_delayed(dask.delayed(self.read, pure=True)(i, composite), shape=shape, dtype=np.float32)
            for i in range(len(self.scenes))
        ]
        if not parts:
            return da.zeros((0, *shape), dtype=np.float32)
        return da.stack(parts)

    def band(self, name: str) -> da.Array:
        """Lazy (t, y, x) float32 of one band (common name) or index name (ndvi, ndwi, mndwi, nbr)."""
        import dask
        import dask.array as da

        if name in composites() and "index" in composites()[name]:
            return self.channels(name)[:, 0]

        def one(i: int) -> np.ndarray:
            return read_bands(self.scenes[i], [name], self.grid, harmonized=self.harmonized, cache=self.cache)[0]

        parts = [
            da.from_delayed(dask.delayed(one, pure=True)(i), shape=self.grid.shape, dtype=np.float32)
            for i in range(len(self.scenes))
        ]
        return da.stack(parts) if parts else da.zeros((0, *self.grid.shape), dtype=np.float32)

    def rgb(self, composite: str, stretch: Stretch) -> da.Array:
        """Lazy (t, y, x, 3) uint8 renders, every date with the same stretch."""
        import dask
        import dask.array as da

        def render(i: int) -> np.ndarray:
            return stretch.apply(self.read(i, composite))

        parts = [
            da.from_delayed(dask.delayed(render, pure=False)(i), shape=(*self.grid.shape, 3), dtype=np.uint8)
            for i in range(len(self.scenes))
        ]
        return da.stack(parts) if parts else da.zeros((0, *self.grid.shape, 3), dtype=np.uint8)

    def nearest(self, date: dt.date) -> int:
        if not self.scenes:
            raise NoSceneError("the stack is empty")
        return int(np.argmin([abs((s.date - date).days) for s in self.scenes]))

    def pooled_samples(self, composite: str, *, max_scenes: int = 48, step: int = 4) -> tuple[np.ndarray, int]:
        """Clear pixels pooled over scenes spread evenly across the whole stack (for percentile stretches)."""
        if not self.scenes:
            raise NoSceneError("the stack is empty")
        picks = np.unique(np.linspace(0, len(self.scenes) - 1, min(max_scenes, len(self.scenes))).round().astype(int))
        samples = []
        for i in picks:
            values = self.read(int(i), composite)[:, ::step, ::step]
            samples.append(values.reshape(values.shape[0], -1))
        return np.concatenate(samples, axis=1), len(picks)


def open_stack(
    index: SceneIndex,
    *,
    composite: str | None = None,
    sensors: Iterable[str] | None = None,
    years: tuple[int, int] | Iterable[int] | None = None,
    months: Iterable[int] | None = None,
    max_cloud: float | None = None,
    tiers: Iterable[str] | None = None,
    min_valid: float = 0.0,
    harmonized: bool = False,
    cache: SceneCache | None = None,
    scene_filter: Callable[[Scene], bool] | None = None,
) -> Stack:
    """Choose the scenes (sensor labels, year range or set, months, max cloud fraction 0-1, tiers); read nothing."""
    sensors = set(sensors) if sensors else None
    if years is not None and isinstance(years, tuple) and len(years) == 2:
        lo, hi = years
        year_ok = lambda y: lo <= y <= hi  # noqa: E731
    elif years is not None:
        ys = set(years)
        year_ok = lambda y: y in ys  # noqa: E731
    else:
        year_ok = lambda y: True  # noqa: E731
    months = set(months) if months else None
    tiers = set(tiers) if tiers else None
    chosen = []
    for s in index.scenes:
        if not s.record or s.extra.get("outside_site"):
            continue
        if sensors and s.label not in sensors and s.sensor not in sensors:
            continue
        if not year_ok(s.year) or (months and s.date.month not in months):
            continue
        if tiers and s.tier not in tiers:
            continue
        if max_cloud is not None and (s.cloud_fraction if s.cloud_fraction is not None else 0.0) > max_cloud:
            continue
        if (s.valid_fraction if s.valid_fraction is not None else 1.0) < min_valid:
            continue
        if composite and composite_bands(composite, s) is None:
            continue
        if scene_filter and not scene_filter(s):
            continue
        chosen.append(s)
    return Stack(index, chosen, Grid.of_site(index.site), cache if cache is not None else default_cache(), harmonized)
