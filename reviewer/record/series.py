"""Time series over a stack, without Qt: trajectories at a pixel or over a polygon, sensor coverage,
per-year chip choices, quality-overlay codes and date navigation. The viewer's docks draw these.
"""

from __future__ import annotations

import csv
import datetime as dt
import logging
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from reviewer.errors import Cancelled, NoSceneError, ReviewerError
from reviewer.record.catalog import catalog
from reviewer.record.decode import Grid, flag_array, read_quality
from reviewer.record.scan import Scene, SceneIndex
from reviewer.record.stack import (
    SceneCache,
    Stack,
    composite_bands,
    composite_channels,
    read_bands,
    read_composite,
    scene_values,
)
from reviewer.record.stretch import composites

logger = logging.getLogger(__name__)

#: Quality overlay codes (0 = nothing flagged); the order is the drawing priority (fill wins).
OVERLAY_FLAGS = ("cloud", "shadow", "snow", "fill")
OVERLAY_CODES = {"cloud": 1, "shadow": 2, "snow": 3, "fill": 4}

Progress = Callable[[float, str], None]


# ----------------------------------------------------------------------------- trajectories


@dataclass
class Trajectory:
    """One value per scene of a stack at a pixel or over a region; masked observations kept apart."""

    name: str
    where: str
    indices: list[int] = field(default_factory=list)  # stack index of each observation
    dates: list[dt.date] = field(default_factory=list)
    sensors: list[str] = field(default_factory=list)
    scene_ids: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    spread: list[float] = field(default_factory=list)
    masked: list[bool] = field(default_factory=list)
    n_pixels: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.dates)

    def append(self, i: int, scene: Scene, value: float, spread: float, masked: bool, n: int) -> None:
        self.indices.append(i)
        self.dates.append(scene.date)
        self.sensors.append(scene.label)
        self.scene_ids.append(scene.scene_id)
        self.values.append(float(value))
        self.spread.append(float(spread))
        self.masked.append(bool(masked))
        self.n_pixels.append(int(n))

    def decimal_years(self) -> np.ndarray:
        return np.array([decimal_year(d) for d in self.dates], dtype=float)

    def to_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "date": d.isoformat(),
                "sensor": s,
                "scene_id": sid,
                "stack_index": i,
                self.name: "" if not np.isfinite(v) else f"{v:.6g}",
                "spread": "" if not np.isfinite(sp) else f"{sp:.6g}",
                "pixels": n,
                "masked": int(m),
            }
            for i, d, s, sid, v, sp, m, n in zip(
                self.indices,
                self.dates,
                self.sensors,
                self.scene_ids,
                self.values,
                self.spread,
                self.masked,
                self.n_pixels,
                strict=True,
            )
        ]

    def to_csv(self, path: str | Path) -> Path:
        """Write the series (masked observations included, flagged) with a header naming where it was taken."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fields = ["date", "sensor", "scene_id", "stack_index", self.name, "spread", "pixels", "masked"]
        with path.open("w", newline="", encoding="utf-8") as fh:
            fh.write(f"# {self.name} at {self.where}\n")
            writer = csv.DictWriter(fh, fieldnames=fields)
            writer.writeheader()
            writer.writerows(self.to_rows())
        return path


def decimal_year(d: dt.date) -> float:
    start = dt.date(d.year, 1, 1)
    days = (dt.date(d.year + 1, 1, 1) - start).days
    return d.year + (d - start).days / days


def series_names() -> list[str]:
    """What a trajectory can plot: the index composites, then the reflectance bands."""
    idx = [k for k, v in composites().items() if "index" in v]
    return idx + ["blue", "green", "red", "nir", "swir1", "swir2"]


def _can_read(scene: Scene, name: str) -> bool:
    if name in composites():
        return composite_bands(name, scene) is not None
    band = scene.product_spec.band_by_name(name)
    return band is not None and band.token in scene.files


def _both_masks(scene: Scene, name: str, grid: Grid, harmonized: bool) -> np.ndarray:
    """(2, y, x) float32 of scene's `name` on `grid`: under the default mask, and with only fill masked (what a
    masked date shows, hollow), from ONE read of its files: the default mask's pixels come from the quality layer
    read with it (two reads, one per mask, cost twice as much for every cloudy date). The same bits as two reads:
    the default mask holds fill, and decoding, harmonising and the index are per pixel, so masking after them is
    masking before."""
    product = scene.product_spec
    quality = product.quality
    default = quality.default_mask if quality is not None else ()
    if quality is not None and "fill" not in default:  # (no product does) the fill-only read is not a subset
        return np.stack([_values_of(scene, name, grid, mask, harmonized) for mask in (None, ("fill",))])
    names = composite_bands(name, scene) if name in composites() else [name]
    bands, flags = scene_values(scene, names, grid, mask=("fill",), harmonized=harmonized, flags=default)
    fill_only = (composite_channels(name, names, bands) if name in composites() else bands)[0]
    out = np.stack([fill_only, fill_only])
    for flag in default:
        out[0][flags[flag]] = np.nan
    return out


def _values_of(scene: Scene, name: str, grid: Grid, mask: Sequence[str] | None, harmonized: bool) -> np.ndarray:
    if name in composites():
        return read_composite(scene, name, grid, mask=mask, harmonized=harmonized)[0]
    return read_bands(scene, [name], grid, mask=mask, harmonized=harmonized)[0]


#: What a series cube holds per scene: its values under the default mask and with only fill masked, float32.
CUBE_BYTES_PER_PIXEL = 8
#: A series cube's default budget: a 64 x 64 px site's 900-scene record is ~30 MB per index.
CUBE_BYTES = 256 * 2**20


def series_cube(max_bytes: int = CUBE_BYTES) -> SceneCache:
    """A cache of whole-site series grids for `trajectory(cube=...)`, kept by its caller (a review session, the
    trajectory plot) for as long as it shows series; the least recently used scenes go first past `max_bytes`."""
    return SceneCache(max_bytes)


def cube_fits(cube: SceneCache | None, stack: Stack) -> bool:
    """Whether the whole stack's series cube (the site grid, both masks, every scene) fits the cube's budget:
    a small site is read whole once per scene and index, a large one window by window (a region's series read
    over a whole 1000 x 1000 px site per date would cost more than the window, and evict itself)."""
    if cube is None:
        return False
    rows, cols = stack.grid.shape
    return CUBE_BYTES_PER_PIXEL * rows * cols * len(stack) <= cube.max_bytes


def _cube_key(stack: Stack, scene: Scene, name: str) -> tuple:
    return ("series", scene.files_root, scene.key, name, stack.harmonized, stack.grid)


def _cube_read(cube: SceneCache, stack: Stack, i: int, name: str) -> np.ndarray:
    scene = stack.scenes[i]
    return cube.get_or_read(
        _cube_key(stack, scene, name), lambda: _both_masks(scene, name, stack.grid, stack.harmonized)
    )


def warm_cube(cube: SceneCache, stack: Stack, name: str, cancel: Callable[[], bool] | None = None) -> int:
    """Read into the cube every readable scene of the stack it lacks for `name` (ahead of the trajectories that
    will want them: a review queue's later items); returns how many were read. Nothing when the stack's whole
    series would not fit (`cube_fits`). A scene that cannot be read is left to the trajectory to report."""
    if not cube_fits(cube, stack):
        return 0
    read = 0
    with warnings.catch_warnings(), _no_sidecar_listing(stack):
        warnings.simplefilter("ignore", RuntimeWarning)
        for i, scene in enumerate(stack.scenes):
            if cancel is not None and cancel():
                raise Cancelled("series cube warming cancelled")
            if not _can_read(scene, name) or _cube_key(stack, scene, name) in cube:
                continue
            try:
                _cube_read(cube, stack, i, name)
            except ReviewerError:
                continue
            read += 1
    return read


def cube_holds(cube: SceneCache | None, stack: Stack, name: str) -> bool:
    """Whether the cube holds every readable scene's grid of `name`: the series is then a matter of ms."""
    if not cube_fits(cube, stack):
        return False
    return all(_cube_key(stack, sc, name) in cube for sc in stack.scenes if _can_read(sc, name))


def _window_of(grid: Grid, pixel: tuple[int, int] | None, region: np.ndarray | None):
    """The smallest window of the site grid holding the pixel or the region, and the pixel / region in it:
    a trajectory reads that window of each file (one cell of a MODIS granule), not the whole site."""
    if pixel is not None:
        r, c = pixel
        return grid.window((r, r + 1), (c, c + 1)), (0, 0), None
    rows, cols = np.flatnonzero(region.any(axis=1)), np.flatnonzero(region.any(axis=0))
    (r0, r1), (c0, c1) = (int(rows[0]), int(rows[-1]) + 1), (int(cols[0]), int(cols[-1]) + 1)
    return grid.window((r0, r1), (c0, c1)), None, region[r0:r1, c0:c1]


def _reduce(values: np.ndarray, pixel: tuple[int, int] | None, region: np.ndarray | None) -> tuple[float, float, int]:
    if pixel is not None:
        v = float(values[pixel])
        return v, 0.0, int(np.isfinite(v))
    sample = values[region]
    sample = sample[np.isfinite(sample)]
    if not sample.size:
        return float("nan"), float("nan"), 0
    return float(sample.mean()), float(sample.std()), int(sample.size)


#: a region's window read a block of rows at a time above this many pixels: a whole-site item on a whole Landsat
#: scene (58.8 M px) read each scene's window at once, 3.5-3.9 GB with the evidence worker's other reads
BLOCK_PX = 4_000_000

Reduced = tuple[float, float, int]  # mean, standard deviation and count of the clear values


def _read_reduced(
    scene: Scene, name: str, window: Grid, pixel: tuple[int, int] | None, region: np.ndarray | None, harmonized: bool
) -> tuple[Reduced, Reduced]:
    """The scene's `name` over the pixel or region of `window`, under the default mask and with fill only masked.
    A region larger than BLOCK_PX is read a block of rows at a time and its blocks pooled (the same mean and
    standard deviation, within float32 rounding); a pixel or a smaller region in one read."""
    rows, cols = window.shape
    step = max(1, BLOCK_PX // max(cols, 1))
    if region is None or rows <= step:
        both = _both_masks(scene, name, window, harmonized)
        clear = _reduce(both[0], pixel, region)  # the fill-only values are read only for a masked date
        return clear, clear if np.isfinite(clear[0]) else _reduce(both[1], pixel, region)
    blocks: tuple[list[Reduced], list[Reduced]] = ([], [])
    for r0 in range(0, rows, step):
        inside = region[r0 : r0 + step]
        if inside.any():
            both = _both_masks(scene, name, window.window((r0, r0 + len(inside)), (0, cols)), harmonized)
            for kept, values in zip(blocks, both, strict=True):
                kept.append(_reduce(values, None, inside))
    return _pooled(blocks[0]), _pooled(blocks[1])


def _pooled(blocks: Sequence[Reduced]) -> Reduced:
    """One mean, standard deviation and count of the blocks' values (each block's own, pooled: Chan's rule)."""
    blocks = [b for b in blocks if b[2]]
    n = sum(b[2] for b in blocks)
    if not n:
        return float("nan"), float("nan"), 0
    mean = sum(b[0] * b[2] for b in blocks) / n
    var = sum(b[2] * (b[1] ** 2 + (b[0] - mean) ** 2) for b in blocks) / n
    return float(mean), float(np.sqrt(var)), int(n)


def _no_sidecar_listing(stack: Stack):
    """GeoTIFF-only stacks are read without GDAL listing each file's folder for side-car files: a MODIS folder
    of ~1,400 files made every open ~18 ms, ~4 ms without (a trajectory opens every scene)."""
    import contextlib

    import rasterio

    tif = all(str(f).lower().endswith((".tif", ".tiff")) for sc in stack.scenes for f in sc.files.values())
    return rasterio.Env(GDAL_DISABLE_READDIR_ON_OPEN="EMPTY_DIR") if tif else contextlib.nullcontext()


def trajectory(
    stack: Stack,
    name: str,
    *,
    pixel: tuple[int, int] | None = None,
    region: np.ndarray | None = None,
    include_masked: bool = True,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    cube: SceneCache | None = None,
) -> Trajectory:
    """`name` (ndvi, ndwi, mndwi, nbr or a band common name) through time at a pixel (row, col) or over a
    boolean region (mean and standard deviation of its clear pixels).

    Where the quality mask hides the pixel (or every pixel of the region), the observation is kept as
    `masked=True` with the value read without the cloud/shadow/snow mask (fill and SLC gaps stay out), so
    a plot can show it hollow; it is NaN when even that is fill.

    With a `cube` (a SceneCache the caller keeps, e.g. for a review session) and a stack whose whole series fits
    it (`cube_fits`), each scene's site grid is read once per index and kept: every later pixel or region of that
    site over that index is a mean over the kept grids (milliseconds, no file opened). Otherwise only the
    smallest window of each file holding the pixel or region is read.
    """
    if (pixel is None) == (region is None):
        raise ReviewerError("give either a pixel or a region", field="where")
    rows, cols = stack.grid.shape
    if pixel is not None:
        r, c = int(pixel[0]), int(pixel[1])
        if not (0 <= r < rows and 0 <= c < cols):
            raise ReviewerError(f"pixel ({r}, {c}) is outside the {rows} x {cols} site grid", field="pixel")
        pixel = (r, c)
        where = f"pixel row {r}, col {c}"
    else:
        region = np.asarray(region, bool)
        if region.shape != (rows, cols):
            raise ReviewerError(f"region is {region.shape}, the site grid is {(rows, cols)}", field="region")
        if not region.any():
            raise ReviewerError("the drawn region covers no pixel of the site", field="region")
        where = f"region of {int(region.sum()):,} pixels"  # grouped: a whole Landsat scene is 58,761,931
    out = Trajectory(name=name, where=where)
    whole = cube_fits(cube, stack)
    if not whole:
        window, pixel, region = _window_of(stack.grid, pixel, region)
    usable = [i for i, s in enumerate(stack.scenes) if _can_read(s, name)]
    total = max(len(usable), 1)
    with warnings.catch_warnings(), _no_sidecar_listing(stack):
        warnings.simplefilter("ignore", RuntimeWarning)
        for k, i in enumerate(usable):
            if cancel is not None and cancel():
                raise Cancelled("trajectory cancelled")
            scene = stack.scenes[i]
            try:
                if whole:
                    both = _cube_read(cube, stack, i, name)
                    clear = _reduce(both[0], pixel, region)
                    fill_only = clear if np.isfinite(clear[0]) else _reduce(both[1], pixel, region)
                else:
                    clear, fill_only = _read_reduced(scene, name, window, pixel, region, stack.harmonized)
                v, sp, n = clear
                masked = not np.isfinite(v)
                if masked and include_masked:
                    v, sp, n = fill_only
            except ReviewerError as exc:
                logger.warning("trajectory: skipped %s: %s", scene.scene_id, exc)
                continue
            if masked and not include_masked:
                continue
            out.append(i, scene, v, sp, masked, n)
            if progress is not None and (k % 10 == 0 or k == total - 1):
                progress((k + 1) / total, f"read {k + 1} of {total} scenes")
    return out


def polygon_region(vertices: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Boolean mask of the pixels inside a polygon given as (N, 2) (row, col) vertices."""
    from skimage.draw import polygon2mask

    vertices = np.asarray(vertices, float)
    if vertices.ndim != 2 or vertices.shape[1] != 2 or len(vertices) < 3:
        raise ReviewerError("a polygon needs at least three (row, col) vertices", field="polygon")
    return polygon2mask(shape, vertices)


# ----------------------------------------------------------------------------- coverage


@dataclass
class Coverage:
    """Which sensors observed the site when, and how many scenes per year of the counted sensors were clear
    or cloudy (coarse products such as MODIS and ERA5 are not scenes an annotator can look through clouds in)."""

    sensors: dict[str, list[dt.date]]
    years: list[int]
    clear: list[int]
    cloudy: list[int]
    slc_off: dt.date | None
    clear_threshold: float
    counted: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "sensors": {k: [d.isoformat() for d in v] for k, v in self.sensors.items()},
            "years": self.years,
            "clear": self.clear,
            "cloudy": self.cloudy,
            "slc_off": self.slc_off.isoformat() if self.slc_off else None,
            "clear_threshold": self.clear_threshold,
            "counted": self.counted,
        }


#: The product family whose scenes the per-year bars count unless the user chose sensors.
COUNTED_FAMILY = "landsat_c2l2"


def sensor_order() -> list[str]:
    """Sensor labels in the order a coverage timeline lists them (catalog colour order)."""
    return list(catalog().sensor_colors)


def family_labels(family: str) -> list[str]:
    """The sensor labels of a product family in the catalogue (e.g. TM, ETM+, OLI, OLI-2 for Landsat)."""
    return sorted({p.label for p in catalog().products.values() if p.family == family})


def coverage(
    scenes: Sequence[Scene] | SceneIndex, *, clear_threshold: float = 0.5, sensors: Sequence[str] = ()
) -> Coverage:
    """Dates per sensor label, and per year the number of scenes of the counted sensors (`sensors`, else the
    Landsat labels) whose clear fraction reaches the threshold."""
    if isinstance(scenes, SceneIndex):
        scenes = scenes.record_scenes()
    counted = set(sensors) if sensors else set(family_labels(COUNTED_FAMILY))
    per_sensor: dict[str, list[dt.date]] = defaultdict(list)
    clear: dict[int, int] = defaultdict(int)
    cloudy: dict[int, int] = defaultdict(int)
    slc_off = None
    for s in scenes:
        per_sensor[s.label].append(s.date)
        after = getattr(s.product_spec, "slc_off_after", None)
        if after is not None:
            slc_off = after if isinstance(after, dt.date) else dt.date.fromisoformat(str(after))
        if s.label not in counted:
            continue
        if (s.clear_fraction if s.clear_fraction is not None else 1.0) >= clear_threshold:
            clear[s.year] += 1
        else:
            cloudy[s.year] += 1
    order = {k: n for n, k in enumerate(sensor_order())}
    sensors_seen = {k: sorted(per_sensor[k]) for k in sorted(per_sensor, key=lambda k: (order.get(k, 99), k))}
    all_years = {d.year for dates in per_sensor.values() for d in dates}
    years = list(range(min(all_years), max(all_years) + 1)) if all_years else []
    return Coverage(
        sensors_seen,
        years,
        [clear.get(y, 0) for y in years],
        [cloudy.get(y, 0) for y in years],
        slc_off,
        clear_threshold,
        [k for k in sensors_seen if k in counted],
    )


# ----------------------------------------------------------------------------- chips and navigation


def clearest_per_year(stack: Stack, *, months: set[int] | None = None) -> dict[int, int]:
    """Year -> stack index of its clearest scene (inside the month window when given)."""
    from reviewer.record.render import clear_land_view

    def rank(s: Scene) -> tuple:
        return (clear_land_view(s), s.tier == "T1", -abs(s.date.month - 7))

    best: dict[int, int] = {}
    for i, s in enumerate(stack.scenes):
        if months and s.date.month not in months:
            continue
        j = best.get(s.year)
        if j is None or rank(s) > rank(stack.scenes[j]):
            best[s.year] = i
    return dict(sorted(best.items()))


def step_year(dates: Sequence[dt.date], i: int, step: int) -> int:
    """Index of the first date of the next (step=+1) or previous (-1) year that has a date; i when none."""
    if not dates:
        raise NoSceneError("the stack is empty")
    year = dates[i].year
    if step > 0:
        for j in range(i + 1, len(dates)):
            if dates[j].year > year:
                return j
        return i
    target = None
    for j in range(i - 1, -1, -1):
        if dates[j].year < year:
            target = dates[j].year
            break
    if target is None:
        return 0 if dates[0].year == year and i != 0 else i
    return next(j for j, d in enumerate(dates) if d.year == target)


def first_of_year(dates: Sequence[dt.date], year: int) -> int | None:
    """The stack index of the first date in `year`, else the nearest date (None for an empty stack)."""
    if not dates:
        return None
    for j, d in enumerate(dates):
        if d.year == year:
            return j
    mid = dt.date(year, 7, 1)
    return int(np.argmin([abs((d - mid).days) for d in dates]))


def quality_codes(stack: Stack, i: int, flags: Sequence[str] = OVERLAY_FLAGS) -> np.ndarray:
    """(y, x) uint8 overlay codes of scene i (1 cloud, 2 shadow, 3 snow, 4 fill/SLC gap; 0 none)."""
    scene = stack.scenes[i]
    key = ("overlay", scene.files_root, scene.key, tuple(flags), stack.grid.shape)
    hit = stack.cache.get(key)
    if hit is not None:
        return hit
    product = scene.product_spec
    out = np.zeros(stack.grid.shape, np.uint8)
    if product.quality is not None:
        qa = read_quality(scene, product, Grid(stack.grid.crs, stack.grid.transform, stack.grid.shape))
        for flag in flags:
            if flag in product.quality.flags:
                out[flag_array(qa, product.quality, flag)] = OVERLAY_CODES.get(flag, 1)
    stack.cache.put(key, out)
    return out
