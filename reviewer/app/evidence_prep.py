"""An item's evidence as plain data (no Qt, no napari): what the evidence worker prepares for an item -- its
filtered stack, the date it opens on, the pair's panels, the chip strip, its region -- and its series. The UI
thread only sets these on the docks (review_evidence.EvidenceLoader)."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from reviewer.app.composite_choices import site_choices
from reviewer.app.kept import Kept
from reviewer.app.review_model import EvidenceFocus
from reviewer.errors import ReviewerError

logger = logging.getLogger(__name__)

CHIP_PX = 96  # a chip's size in the dock; chips are read at twice this (CHIP_READ_PX), then scaled to fit it
CHIP_READ_PX = 2 * CHIP_PX
NODATA_RGB = (40, 40, 40)  # a chip's and a pair panel's masked pixels
#: the width (px) the canvas reads a date at: the widest canvas of the screens the app is tested at (1600x1000),
#: so a whole site in view shows each pixel read at about one screen pixel; a full-size Landsat scene (~7,700 px
#: across, ~700 MB of float32 channels a date) is read from its overviews at ~30 MB. Sites narrower than this
#: (every Sentinel-2 / Landsat site box of the demos, up to 48 km of Landsat) are read at full resolution.
VIEW_PX = 1600


def shown_stack(stack):
    """The stack as the canvas reads it: at VIEW_PX across (the stack itself when the site is narrower)."""
    return stack if stack.grid.shape[1] <= VIEW_PX else stack.at_width(VIEW_PX)


def evidence_view(question: dict[str, Any]):
    """The question's EvidenceView (its own, or the default the core gives an older question)."""
    from reviewer.bank.evidence import evidence_for

    return evidence_for(question)


def region_mask(region, site) -> tuple[np.ndarray, np.ndarray]:
    """(mask on the site grid, polygon ring in (row, col)) of an evidence Region."""
    from reviewer.bank.series import quadrant_masks
    from reviewer.record.series import polygon_region

    h, w = site.shape
    if region.kind == "polygon":
        inv = ~site.transform
        ring = np.array([(inv * (x, y))[::-1] for x, y in region.coordinates], float)  # (row, col)
        return polygon_region(ring, (h, w)), ring
    if region.kind == "quadrant":
        name = {"NW": "north-west", "NE": "north-east", "SW": "south-west", "SE": "south-east"}[region.quadrant]
        r0, c0 = (0, 0) if name == "north-west" else (0, w / 2) if name == "north-east" else (h / 2, 0)
        if name == "south-east":
            r0, c0 = h / 2, w / 2
        ring = np.array([(r0, c0), (r0, c0 + w / 2), (r0 + h / 2, c0 + w / 2), (r0 + h / 2, c0)], float)
        return quadrant_masks((h, w))[name], ring
    ring = np.array([(0, 0), (0, w), (h, w), (h, 0)], float)
    return np.ones((h, w), bool), ring


REGION_INSIDE, REGION_EDGE = 1, 2  # the values of a region's raster (0: outside)


def display_shape(shape: tuple[int, int]) -> tuple[int, int]:
    """The (rows, cols) a site grid of `shape` is shown at on the canvas: the grid `shown_stack` reads the image at
    (`display_grid` at VIEW_PX: VIEW_PX across, the same aspect; the grid itself when it is at most VIEW_PX wide)."""
    h, w = shape
    return (h, w) if w <= VIEW_PX else (max(1, round(h * VIEW_PX / w)), VIEW_PX)


def placement(site_shape: tuple[int, int], shape: tuple[int, int], cell: tuple[float, float]):
    """(scale, translate) in metres of a raster of `shape` over the whole site grid (`site_shape`, pixels of `cell`
    (row, col) metres) on napari's canvas: its pixels cover the site's as the image's do (napari centres a layer's
    pixel 0 on its translate, so a coarser pixel is moved by half of what it covers more than a site pixel)."""
    scale = tuple(c * n / m for c, n, m in zip(cell, site_shape, shape, strict=True))
    return scale, tuple((s - c) / 2 for s, c in zip(scale, cell, strict=True))


def display_mask(mask: np.ndarray) -> np.ndarray:
    """A mask on the site grid at the canvas's display grid (`display_shape`): each shown pixel takes the site pixel
    at its centre. The mask itself on a site shown at full resolution."""
    h, w = mask.shape
    hv, wv = display_shape((h, w))
    if (hv, wv) == (h, w):
        return mask
    rows = ((np.arange(hv) + 0.5) * h / hv).astype(np.intp)
    cols = ((np.arange(wv) + 0.5) * w / wv).astype(np.intp)
    return mask[np.ix_(rows, cols)]


def boundary_shape(shape: tuple[int, int]) -> tuple[int, int]:
    """The boundary raster's shape: a small site's grid k times over (k = VIEW_PX // its larger side, a whole
    number >= 1), so its lines are thinner than a site pixel; a site wider than VIEW_PX at the display grid
    (`display_shape`), as the image is shown (at the site's full resolution a whole Landsat scene's raster was
    58.8 M px, drawn on the UI thread)."""
    h, w = shape
    if max(h, w) <= VIEW_PX:
        k = VIEW_PX // max(h, w)
        return h * k, w * k
    return display_shape(shape)


def boundary_raster(rings: list[np.ndarray], shape: tuple[int, int]) -> np.ndarray:
    """A site's boundary rings ((row, col) on the site grid, pixel corners at whole numbers) as a raster of 1s on
    their lines, at `boundary_shape` (about VIEW_PX across), the lines a 250th of the raster's larger side wide, as
    thin on a 64 px site as on a 1,600 px or a 7,741 px one. `placement` puts it on the canvas."""
    h, w = shape
    hr, wr = boundary_shape(shape)
    factor = np.array([hr / h, wr / w])
    width = max(1, round(max(hr, wr) / 250))
    out = np.zeros((hr, wr), np.uint8)
    for ring in rings:
        pts = np.asarray(ring, float) * factor
        if len(pts) < 2:
            continue
        a, b = pts[:-1], pts[1:]
        steps = np.maximum(1, np.ceil(2 * np.abs(b - a).max(axis=1)).astype(int))  # half a raster pixel apart
        t = np.concatenate([np.arange(n + 1) / n for n in steps])
        seg = np.repeat(np.arange(len(a)), steps + 1)
        line = np.unique(np.floor(a[seg] + (b - a)[seg] * t[:, None]).astype(int), axis=0)
        for dr in range(width):  # each line pixel widened to width x width (down and right of it)
            for dc in range(width):
                r, c = line[:, 0] + dr - width // 2, line[:, 1] + dc - width // 2
                keep = (r >= 0) & (r < hr) & (c >= 0) & (c < wr)
                out[r[keep], c[keep]] = 1
    return out


BOUNDARIES_KEPT = 4  # sites' boundary rasters kept (made by a worker, drawn by the UI thread)
_boundaries: Kept[np.ndarray] = Kept(BOUNDARIES_KEPT)  # (site dir, shape, boundary file) -> raster


def site_boundary_raster(site) -> np.ndarray:
    """`boundary_raster` of a site's boundary, made once (any thread: the worker that opens a site makes it, the UI
    thread then only draws it); raises ReviewerError when the boundary cannot be read."""
    key = (str(site.dir), tuple(site.shape), str(site.boundary_path))
    kept = _boundaries.get(key)
    if kept is not None:
        return kept
    return _boundaries.put(key, boundary_raster(site.boundary_lines(), tuple(site.shape)))


def region_raster(mask: np.ndarray) -> np.ndarray:
    """A region as the canvas shows it: its pixels, REGION_INSIDE, with an edge band of REGION_EDGE along its border
    (about 1/400 of the raster across, at least a pixel; the site's own border counts as the region's edge there).
    Given the region's mask at the display grid (`display_mask`), these are the pixels its trajectory averages on a
    site shown at full resolution, and the shown pixels over them on a wider one."""
    from scipy.ndimage import minimum_filter

    inside = np.asarray(mask, bool)
    band = max(1, round(max(inside.shape) / 400))
    core = minimum_filter(inside.view(np.uint8), size=2 * band + 1, mode="constant", cval=0).astype(bool)
    out = inside.astype(np.uint8) * REGION_INSIDE
    out[inside & ~core] = REGION_EDGE
    return out


def sensor_filter(labels: frozenset[str], sensors) -> tuple[str, ...]:
    """The sensors of `sensors` the site's record has (`labels`: its record's sensors), in their order; () when that
    is all of them (no filter)."""
    kept = tuple(x for x in sensors if x in labels)
    return () if set(kept) == labels else kept


class ViewMemo:
    """What the loader works out again and again from the same inputs, kept for the window's life (bounded): each
    question's evidence view (its schema check, ~3 ms, ran for every upcoming item at every item change) and each
    site index's record sensors (a pass over ~1,000 scenes). Any thread (the loader's and the series worker's, which
    plans the cube's warming): each dict operation is one step under the GIL; a view made twice at once is the same."""

    VIEWS = 512
    INDEXES = 8

    def __init__(self) -> None:
        self._views: OrderedDict[str, Any] = OrderedDict()  # the question's JSON -> its EvidenceView (frozen)
        self._labels: OrderedDict[int, tuple[Any, frozenset[str]]] = OrderedDict()  # id(index) -> (index, sensors)

    def view(self, question: dict[str, Any]):
        """The question's EvidenceView (raises ReviewerError as `evidence_view` does)."""
        key = json.dumps(question, sort_keys=True, default=str)
        view = self._views.get(key)
        if view is None:
            view = self._views[key] = evidence_view(question)
            while len(self._views) > self.VIEWS:
                self._views.popitem(last=False)
        return view

    def labels(self, index) -> frozenset[str]:
        """The sensors of the index's record."""
        kept = self._labels.get(id(index))
        if kept is None or kept[0] is not index:  # (an id reused by another index after the first was dropped)
            kept = self._labels[id(index)] = (index, frozenset(sc.label for sc in index.record_scenes()))
            while len(self._labels) > self.INDEXES:
                self._labels.popitem(last=False)
        return kept[1]


def view_years(view) -> tuple[int, int] | None:
    """The years the view spans: first to last of its dates and periods."""
    years = [int(d[:4]) for d in view.dates] + [y for p in view.periods for y in p]
    return (min(years), max(years)) if years else None


@dataclass
class Prepared:
    """An item's evidence made ready off the UI thread: showing it is setting these on the docks."""

    key: str
    view: Any  # EvidenceView
    index: Any  # the SceneIndex it was made on
    filters: tuple  # see EvidenceLoader._wanted_for
    stack: Any
    current: int
    years: tuple[int, int] | None
    pair: tuple[str, str] | None
    panels: list | None  # the pair's two Panels
    pair_error: str
    chips: list  # (year, i, label, channels) as the chip strip keeps them
    chip_rgb: dict
    mask: np.ndarray | None  # the region on the site grid (its series reads these pixels)
    token: Any = None  # the request it answers (item_pipeline.Token)
    pair_rgb: list | None = None  # the pair's panels through the view's stretch: (h, w, 3) uint8 each
    region: np.ndarray | None = None  # `region_raster` of the mask at the display grid: as the canvas draws it

    #: the mask's digest (`mask_digest`), made where the Prepared is made (a worker)
    region_key: tuple | None = dataclasses.field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.region_key = mask_digest(self.mask)

    def series_key(self, harmonized: bool) -> tuple:
        """What names the item's series: its stack's scenes, the index read, its region's pixels, harmonized."""
        scenes = tuple((sc.files_root, sc.key) for sc in self.stack.scenes)
        return (scenes, item_series_name(self.view), self.region_key, harmonized)


def mask_digest(mask: np.ndarray | None) -> tuple | None:
    """A region mask named by its shape and a digest of its pixels. (The key held the mask's bytes: on a whole
    Landsat scene 58.8 MB copied on the UI thread at each look-up, ~0.1 s, and kept with each series read.)"""
    if mask is None:
        return None
    import hashlib

    pixels = np.ascontiguousarray(mask, dtype=bool)
    return (pixels.shape, hashlib.blake2b(pixels.view(np.uint8), digest_size=16).digest())


def item_stack(index, view, want: tuple, cache):
    """The item's stack with its filters (`want`: EvidenceLoader._wanted_for): what its evidence shows and its
    series reads, so a series read ahead from it is the one the item shows."""
    from reviewer.record.stack import open_stack

    sensors, years, months, max_cloud, _pair_method, _chip_months = want
    return open_stack(
        index,
        composite=view.composite,
        sensors=sensors or None,
        years=years,
        months=months or None,
        max_cloud=max_cloud if max_cloud < 1.0 else None,
        cache=cache,
    )


@dataclass(frozen=True)
class ItemRequest:
    """What the evidence worker needs to prepare one item: its view, its filters (`want`: sensors, years, months,
    max cloud, pair method, chip months), the dates it opens on, and its site: an open `index`, else the `folder`
    to index (through the store at `db`; `want` is None then, made from `opens_with`: the question's sensors, the
    pair method and chip months, as a site opens with no other filter). `token` names the request
    (item_pipeline.Token)."""

    key: str
    view: Any
    want: tuple
    focus: EvidenceFocus
    index: Any = None
    folder: str | None = None
    db: Any = None
    token: Any = None
    opens_with: tuple = ((), "clearest", ())


def prepare_item(req: ItemRequest, render_frame, cache) -> Prepared:
    """Worker: the item's site indexed when it is not open yet (the store knows its scenes: no file walk), then its
    evidence (`prepare_evidence`). `render_frame(stack, composite, stretch, i)` reads and renders a date for the
    canvas (StackSession.render_frame)."""
    index = req.index
    if index is None:
        from reviewer.record.scan import open_index
        from reviewer.store import Store

        with Store(req.db) as store:
            index = open_index(req.folder, store)
        _ = index.site.cell_m  # a lon/lat grid's cell measured here, pyproj imported off the UI thread (~35 ms there)
        try:  # read, reproject and rasterize the boundary here; the UI thread only draws it
            if index.site.boundary_path is not None:
                site_boundary_raster(index.site)
        except ReviewerError:
            pass  # said when the boundary is drawn
        site_choices(index)  # the Stack dock's composites, sensors and years, made here (the UI thread sets them)
    want = req.want
    if want is None:
        sensors, pair_method, chip_months = req.opens_with
        labels = frozenset(sc.label for sc in index.record_scenes())
        want = (sensor_filter(labels, sensors), None, (), 1.0, pair_method, chip_months)
    out = prepare_evidence(req.key, index, req.view, want, render_frame, cache, req.focus)
    out.token = req.token
    return out


def prepare_evidence(key: str, index, view, want: tuple, render_frame, cache, focus: EvidenceFocus | None = None):
    """Worker: the item's stack with its filters, the date it opens on read (`focus`: the dates the question turns
    on), the pair's panels resolved and stretched, the chip strip over its period read at chip size and stretched,
    its region's mask and raster."""
    from reviewer.record.render import resolve_panel
    from reviewer.record.series import clearest_per_year

    focus = focus or EvidenceFocus(None, None)
    _sensors, _years, _months, _cloud, pair_method, chip_months = want
    comp, stretch = view.composite, view.stretch
    stack = item_stack(index, view, want, cache)
    years = view_years(view)
    try:
        mask, _ring = region_mask(view.region, index.site)
    except (ReviewerError, ValueError):
        mask = None
    out = Prepared(key, view, index, want, stack, 0, years, None, None, "", [], {}, mask)
    out.region = region_raster(display_mask(mask)) if mask is not None else None
    if not len(stack):
        return out
    best = clearest_per_year(stack)
    if view.dates:
        out.current = stack.nearest(_date(view.dates[-1]))
    elif focus.year is not None:
        y = focus.year
        out.current = best.get(y, stack.nearest(_date(f"{int(y):04d}-07-01")))
    try:
        render_frame(stack, comp, stretch, out.current)  # napari's slice of it then only takes the RGB
    except ReviewerError:
        pass  # the canvas says so when it shows the date
    # the pair is always the item's: its view's two panels, else the years the question turns on
    pair = (view.panels[0], view.panels[-1]) if len(view.panels) >= 2 else focus.pair
    if pair is not None:
        out.pair = pair
        try:
            out.panels = [resolve_panel(shown_stack(stack), p, comp, method=pair_method) for p in out.pair]
        except ReviewerError as exc:
            out.pair_error = str(exc)
        else:  # stretched here: two panels of up to VIEW_PX across held the UI thread ~20-60 ms
            out.pair_rgb = [stretch.apply(panel.channels, nodata_rgb=NODATA_RGB) for panel in out.panels]
    picks = clearest_per_year(stack, months=set(chip_months) if chip_months else None)
    if years is not None:
        picks = {y: i for y, i in picks.items() if years[0] <= y <= years[1]}
    out.chips, out.chip_rgb = read_chips(stack, picks, comp, stretch)
    return out


def read_chips(stack, picks: dict[int, int], comp: str, stretch) -> tuple[list, dict]:
    """The chip strip's chips, each date read at CHIP_READ_PX across (from overviews where the files have them):
    [(year, i, label, channels)] and {year: RGB}. A date that cannot be read is a chip of masked pixels."""
    small = stack.at_width(CHIP_READ_PX)
    chips, rgb = [], {}
    for year, i in picks.items():
        sc = small.scenes[i]
        try:
            ch = small.read(i, comp)
        except ReviewerError as exc:
            logger.warning("chip %d: %s", year, exc)
            ch = np.full((len(stretch.channels), *small.grid.shape), np.nan, np.float32)
        chips.append((year, i, f"{sc.date.isoformat()} {sc.label}", ch))
        if ch.shape[0] == len(stretch.channels):
            rgb[year] = stretch.apply(ch, nodata_rgb=NODATA_RGB)
    return chips, rgb


FIRST_SCENES = 100  # a longer series is read in parts (100, 200, 400, ... scenes), each part drawn as it lands


def item_trajectory(p: Prepared, harmonized: bool, stop, partial=None, cube=None):
    """Worker: the item's index over its region through its stack (`stop()` asked before each scene: True
    cancels); with `partial(series so far, scenes read, of)`, a long stack (a MODIS record: seconds) is read in growing parts in date order, reporting each; through
    `cube` (series.series_cube) when the whole stack's series fits it: once its scenes are there (an earlier item
    of the site, or a read cancelled half-way), no file is opened and no part is reported."""
    from reviewer.record.series import cube_fits, cube_holds, trajectory

    stack = dataclasses.replace(p.stack, harmonized=harmonized) if harmonized else p.stack
    n = len(stack)
    name = item_series_name(p.view)
    cube = cube if cube_fits(cube, stack) else None  # decided on the whole stack, not on each part
    if partial is None or n <= FIRST_SCENES or cube_holds(cube, stack, name):
        return trajectory(stack, name, region=p.mask, cancel=stop, cube=cube)
    out, start, size = None, 0, FIRST_SCENES
    while start < n:
        part = trajectory(
            dataclasses.replace(stack, scenes=stack.scenes[start : start + size]),
            name,
            region=p.mask,
            cancel=stop,
            cube=cube,
        )
        part.indices = [i + start for i in part.indices]  # indices into the whole stack
        out = part if out is None else joined(out, part)
        start, size = start + size, 2 * size
        if start < n:
            partial(dataclasses.replace(out, **{f: list(getattr(out, f)) for f in SERIES_LISTS}), start, n)
    return out


SERIES_LISTS = ("indices", "dates", "sensors", "scene_ids", "values", "spread", "masked", "n_pixels")


def joined(a, b):
    """Series a followed by series b (of the same index and region)."""
    for f in SERIES_LISTS:
        getattr(a, f).extend(getattr(b, f))
    return a


ITEM_SERIES_DEFAULT = "ndvi"  # the index of a view that names none (evidence_for's default by task, too)


def item_series_name(view) -> str:
    """What the trajectory plots and reads for an item: its view's index, else the index its composite shows (an
    NBR image came with the NDVI trajectory left from the item before), else NDVI. One name for the plot and the
    read: a built-up compare item (SWIR composite, no index) read no series and said "no observation of NDVI"."""
    from reviewer.record.series import series_names

    if view.index:
        return view.index
    return view.composite if view.composite in series_names() else ITEM_SERIES_DEFAULT


def _date(text: str):
    import datetime as dt

    return dt.date.fromisoformat(text)
