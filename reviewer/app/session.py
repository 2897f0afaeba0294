"""The stack on the napari canvas: opens a site off the UI thread, keeps the filtered stack, the lazy
image layer (one stretch for every date), the quality overlay, the boundary and the date navigation in
step with the `ViewState` model. The docks talk to this object and to the model, never to each other.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from qtpy.QtCore import QObject, QTimer, Signal

from reviewer.app.errors import ErrorReporter
from reviewer.app.frames import FrameArray
from reviewer.app.jobs import Prefetcher, Progress, alive, next_turn, run_in_thread, when_settled
from reviewer.app.state import ViewState
from reviewer.errors import NoSceneError, ReviewerError
from reviewer.record.scan import Scene, SceneIndex
from reviewer.record.series import OVERLAY_CODES, clearest_per_year, quality_codes, step_year
from reviewer.record.stack import SceneCache, Stack, open_stack
from reviewer.record.stretch import Stretch, composites, percentile_stretch

logger = logging.getLogger(__name__)

IMAGE_LAYER = "stack"
OVERLAY_LAYER = "quality overlay"
BOUNDARY_LAYER = "site boundary"
BOUNDARY_OPACITY = 0.7  # napari's default for a shapes layer, as the boundary was always drawn
REGION_LAYER = "trajectory region"
READY_KEYS = 4096  # frames remembered as read (their data is in the scene cache)
PLACEHOLDER_GREY = 40  # what a date shows for the few ms until its frame is read
#: the start-up layers' pixel size (m): a site of this pixel size (Landsat's, the site grid's default) opens without
#: napari's scale setters (~20-60 ms each for the image and the boundary)
PLACEHOLDER_RESOLUTION = 30.0
CAPTION_DELAY_MS = 120  # the canvas caption follows the date once stepping pauses this long
NEIGHBOURS_LATER_MS = 300  # a new stack's (a review item's) neighbouring dates are read ahead after this long

OVERLAY_COLORS = {
    None: (0, 0, 0, 0),
    0: (0, 0, 0, 0),
    OVERLAY_CODES["cloud"]: (1.0, 1.0, 1.0, 0.85),
    OVERLAY_CODES["shadow"]: (0.25, 0.0, 0.45, 0.85),
    OVERLAY_CODES["snow"]: (0.2, 0.9, 1.0, 0.85),
    OVERLAY_CODES["fill"]: (1.0, 0.0, 0.8, 0.85),
}


#: modules the first image and boundary layers import (pandas via the shapes layer's features table,
#: scipy.ndimage and napari's histogram via the image layer): imported in the open worker instead, where
#: they do not hold the UI thread (~1 s the first time a site opened, 'longest UI block, opening')
WARM_MODULES = (
    "sqlite_utils",  # the store (imported by the first open's worker: ~100 ms, its file reads starving the UI thread)
    "rasterio.warp",
    "pandas",
    "scipy.ndimage",
    "napari.components.histogram",
    "OpenGL.arrays.lists",
)


def warm_imports() -> None:
    """Import WARM_MODULES and make the index composites' colour tables (any thread; a no-op once done):
    the first NDVI/MNDWI frame imported matplotlib on the UI thread (~0.7 s, or a wait on the import lock)."""
    import importlib

    from reviewer.record.stretch import colormap_lut

    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            logger.debug("cannot preload %s", name)
    for spec in composites().values():
        if spec.get("colormap"):
            colormap_lut(spec["colormap"])


class StackSession(QObject):
    """Owns the open site and its layers in one napari viewer.

    Signals
    -------
    site_opened(SceneIndex) : a site was indexed and is shown.
    stack_changed(Stack) : the filtered stack (filters or composite) changed.
    indexing(float, str) : progress of indexing a site.
    busy(bool) : indexing started / ended.
    status(str) : the status line (date, sensor, scene, tier, clear %, values under the cursor).
    pixel_clicked(int, int) : a click (not a drag) on the canvas at (row, col).
    """

    site_opened = Signal(object)
    stack_changed = Signal(object)
    indexing = Signal(float, str)
    busy = Signal(bool)
    status = Signal(str)
    pixel_clicked = Signal(int, int)
    frame_read = Signal(object)  # (key, error or None) from the frame reader, handled on the UI thread

    def __init__(
        self,
        viewer,
        *,
        state: ViewState | None = None,
        reporter: ErrorReporter | None = None,
        db: str | Path | None = None,
        cache: SceneCache | None = None,
        prefetch: bool = True,
        async_slicing: bool | None = None,
        recent=None,
    ) -> None:
        super().__init__()
        self.viewer = viewer
        self.state = state or ViewState()
        self.reporter = reporter or ErrorReporter()
        self.db = db
        self.cache = cache or SceneCache(max_bytes=1024 * 2**20)
        self.prefetcher = Prefetcher()
        self.prefetcher.enabled = prefetch
        # a new stack's neighbouring dates are read a little later: read at once, their readers held the GIL and a
        # CPU while the stack's first date (a review item's evidence) was being painted
        self._neighbours_later = QTimer(singleShot=True, interval=NEIGHBOURS_LATER_MS)
        self._neighbours_later.timeout.connect(self._read_neighbours)
        self.recent = recent
        self.index: SceneIndex | None = None
        self.stack: Stack | None = None
        self.image_layer = None
        self.overlay_layer = None
        self.boundary_layer = None
        self.region_layer = None
        # recent physical frames (by `_frame_key`), for the status line
        self._frames: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._frames_lock = threading.Lock()
        # Frames are read off the UI thread: napari slices on the UI thread, and a date not read yet shows
        # a placeholder until the frame reader has it (then the layer re-slices). `_ready` holds the keys
        # of frames read recently (their data sits in the scene cache).
        self._ready: OrderedDict[tuple, None] = OrderedDict()
        self._requested: set[tuple] = set()
        self._failed: dict[tuple, BaseException] = {}
        self._shown: tuple | None = None
        self._pointer: tuple[int, int] | None = None  # the grid pixel under the cursor
        self._overlay_shown: tuple | None = None
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="frame")
        self.frame_read.connect(self._on_frame_read)
        self.all_masked: set[tuple[int, int]] = set()
        self._direction = 1
        self._open_worker = None
        self._open_cancel = threading.Event()
        self._stretch_worker = None
        self._stretches: dict[str, Stretch] = {}
        self._percentile_dates: tuple | None = None  # the dates the last percentile stretch was computed over
        self._last_status = ""
        self._label_width = 22
        self._warm_layers = False  # the image layer is still the start-up placeholder (see `warm_canvas`)
        self._unveil_later = False  # a site opening shows the placeholder in a turn of its own (`show_index`)
        # napari's experimental async slicing is off by default: with PySide6 its slicing thread can
        # deadlock against the UI thread (a Qt disconnect waiting for the GIL while the UI thread holds
        # the GIL inside a Qt connect; seen about one run in five). Reads still happen in our prefetch
        # workers (numpy only, no Qt), so the UI thread slices from the cache.
        # (None: napari's setting as the user has it; the plugin's docks change nothing outside themselves)
        if async_slicing is not None:
            from napari.settings import get_settings

            get_settings().experimental.async_ = bool(async_slicing)
        s = self.state.events
        s.current.connect(self._on_current_changed)
        s.composite.connect(self._on_composite_changed)
        s.stretch.connect(self._on_stretch_changed)
        s.overlay.connect(self._on_overlay_changed)
        for name in ("sensors", "years", "months", "max_cloud"):
            getattr(s, name).connect(self._on_filters_changed)
        viewer.dims.events.current_step.connect(self._on_dims_step)
        viewer.mouse_move_callbacks.append(self._on_mouse_move)
        viewer.mouse_drag_callbacks.append(self._on_mouse_press)
        self.text = viewer.canvas.overlays.text
        self._caption = ""
        self._caption_when_settled = when_settled(self._show_caption, CAPTION_DELAY_MS, self)
        #: brings napari's status bar up to date in this turn (the review dock calls it as an item is shown)
        self.update_status_bar = viewer.update_status_from_cursor
        self.who = ""  # who is working (review), shown in the window title
        self._canvas_dressed = False
        # the modules and colour tables the first site and review item need, while the user picks a site
        threading.Thread(target=warm_imports, name="warm-imports", daemon=True).start()

    def dress_canvas(self) -> None:
        """The scale bar and the date caption on napari's canvas: set when the session first shows something of its
        own (a site, the app's start-up layers), never merely by making the session (a plugin dock in plain napari)."""
        if self._canvas_dressed:
            return
        self._canvas_dressed = True
        bar = self.viewer.canvas.overlays.scale_bar
        bar.visible, bar.box = True, True
        self.text.visible, self.text.font_size, self.text.position, self.text.box = True, 10, "top_left", True

    def warm_canvas(self) -> None:
        """Make the image and boundary layers before any site opens, drawn once unseen (opacity 0), so opening a site
        only hands them data: the first image layer (its layer controls, the date slider's widgets, its visual and
        the first compile of its shaders on a software-GL canvas) held the UI ~1 s in the open, the first shapes
        layer another ~0.3 s. The placeholder has one date, so no slider shows before a site."""
        if self.image_layer is not None or self.index is not None:
            return
        self.dress_canvas()
        self.image_layer = self.viewer.add_image(
            np.full((1, 16, 16, 3), PLACEHOLDER_GREY, np.uint8),
            rgb=True,
            name=IMAGE_LAYER,
            scale=(1.0, PLACEHOLDER_RESOLUTION, PLACEHOLDER_RESOLUTION),
            units=("pixel", "m", "m"),
            contrast_limits=(0, 255),
            cache=False,
            opacity=0.0,
        )
        ring = np.array([[0.0, 0.0], [0.0, 16.0], [16.0, 16.0]])
        self.boundary_layer = self.viewer.add_shapes(
            [ring],
            shape_type="path",
            edge_color="yellow",
            edge_width=0.1,
            name=BOUNDARY_LAYER,
            scale=(PLACEHOLDER_RESOLUTION, PLACEHOLDER_RESOLUTION),
            units=("m", "m"),  # as the site's (mixed units hide the scale bar and raise a warning)
            opacity=0.0,
        )
        self.viewer.layers.move(self.viewer.layers.index(self.image_layer), 0)
        # nothing of the placeholder said before a site: no layer active (napari's status line read its grey
        # value under the cursor) and no scale bar (it measured the 16 px placeholder: "5 m")
        self.viewer.layers.selection.clear()
        # the scale bar and a caption drawn unseen, so their shaders compile now (the caption's, first drawn with the
        # first site's date, held that paint 65-90 ms); `_show_overlays` shows them with the first site
        self.viewer.canvas.overlays.scale_bar.opacity = 0.0
        self.text.opacity, self.text.text = 0.0, "0"
        self._warm_layers = True
        # the date slider's row kept empty until a site's dates fill it: its first showing resized the canvas (a GL
        # resize and a whole-window re-layout in the open's first paint)

    def keep_stretch(self, composite: str, stretch: Stretch) -> None:
        """The stretch a composite comes back with when the user switches to it again (a review item's stored one)."""
        self._stretches[composite] = stretch

    # ------------------------------------------------------------------ opening a site

    def open_site(self, site_dir: str | Path, *, rescan: bool = False):
        """Index the site in a worker (progress on `indexing`); the stack shows when it returns."""
        from reviewer.record.scan import open_index

        if self._open_worker is not None:
            self._open_cancel.set()
        self._open_cancel = threading.Event()
        cancel = self._open_cancel
        progress = Progress()
        progress.changed.connect(self.indexing)
        db = self.db

        composite, cache = self.state.composite, self.cache

        def work() -> SceneIndex:
            from reviewer.store import Store

            warm_imports()  # the first image and shapes layers imported ~1 s of modules on the UI thread
            with Store(db) as store:
                index = open_index(site_dir, store, rescan=rescan, progress=progress, cancel=cancel.is_set)
            try:  # read and reproject the boundary here; the UI thread only draws it
                index.site.boundary_geometries()
            except ReviewerError:
                pass  # reported when the boundary is drawn
            # the first date is read here, so showing the site does not wait on disk in the UI thread
            first = open_stack(index, composite=composite, cache=cache)
            if len(first) and not cancel.is_set():
                try:
                    self.read_frame(first, composite, 0)
                except ReviewerError:
                    logger.debug("first date not preloaded", exc_info=True)  # shown as a message when displayed
            return index

        self.reporter.forget()
        self.busy.emit(True)
        self.indexing.emit(0.0, f"opening {site_dir}")

        def done(index: SceneIndex) -> None:
            self._open_worker = None
            self.busy.emit(False)
            progress.deleteLater()
            if not cancel.is_set():
                self.show_index(index, in_turns=True)

        def failed(exc: BaseException) -> None:
            self._open_worker = None
            self.busy.emit(False)
            self.indexing.emit(1.0, "")
            self.reporter.error(exc, context="cannot open the site")

        self._open_worker = run_in_thread(work, on_done=done, on_error=failed)
        self._open_worker.progress_ref = progress  # keep the QObject alive with the worker
        return self._open_worker

    def window_title(self, site: str | None = None) -> str:
        """'EarthRecord Reviewer[ - who (role)][ - site]'."""
        return " - ".join(t for t in ("EarthRecord Reviewer", self.who, site) if t)

    def cancel_open(self) -> None:
        self._open_cancel.set()

    def show_index(self, index: SceneIndex, *, stack: tuple[Stack, int] | None = None, in_turns: bool = False) -> None:
        """Show an indexed site (also used directly by tests and the plugin); `stack`: (a stack of this index,
        its date) to show at once instead of the default one (a review item's, prepared ahead of time): its
        caller hands the docks the site (`announce`) and the stack in later event-loop turns, so no turn holds
        the UI long. `in_turns` (a site opened): the boundary now, the stack and the docks each in a later turn of
        the event loop, for the same reason (one turn held the UI 0.7-1.1 s). The turns are 1 ms timers, not 0 ms ones:
        Qt ran a chain of 0 ms single shots as posted events in one go, with no timer or input in between."""
        self.indexing.emit(1.0, f"{len(index.scenes)} scenes")
        self.dress_canvas()
        usable = index.record_scenes()
        if not usable:
            first = f" (first: {index.problems[0].path}: {index.problems[0].reason})" if index.problems else ""
            self.reporter.error(
                ReviewerError(
                    f"no usable scene in this site: {len(index.problems)} file(s) could not be read{first}",
                    path=index.site.dir,
                )
            )
        elif index.problems:
            p = index.problems[0]
            self.reporter.warning(f"{len(index.problems)} file(s) skipped while indexing (first: {p.path}: {p.reason})")
        self.index = index
        self._stretches.clear()
        self.viewer.title = self.window_title(f"{index.site.name} ({index.site.id})")
        if self.recent is not None:
            self.recent.add(index.site.dir)
        with self.state.events.blocker_all():
            self.state.sensors = ()
            self.state.years = None
            self.state.months = ()
            self.state.max_cloud = 1.0
            self.state.current = 0
        self.state.site_dir = str(index.site.dir)
        if stack is not None:
            self._boundary_later(index)
            self.show_stack(*stack, announce=False)
            return
        self._draw_boundary()
        if not in_turns:
            self.rebuild_stack(keep_date=None)
            self.announce(index)
            return

        def stack_turn() -> None:
            if alive(self) and self.index is index:
                self._unveil_later = True  # the placeholder's fit and showing: the next turn
                try:
                    self.rebuild_stack(keep_date=None)
                finally:
                    self._unveil_later = False
                next_turn(unveil_turn)

        def unveil_turn() -> None:
            if alive(self) and self.index is index:
                self._unveil()
                next_turn(docks_turn)

        def docks_turn() -> None:
            if alive(self) and self.index is index:
                self.announce(index)

        self._scale_image()  # napari's scale setter (~20-40 ms) in this turn, not in the stack's
        next_turn(stack_turn)

    def _boundary_later(self, index: SceneIndex) -> None:
        """The site's boundary drawn in the next event-loop turn (a prepared stack shown at once: the two in one turn
        held the UI 70-240 ms); the boundary of the site shown before is hidden meanwhile."""

        if self.boundary_layer is not None and self.boundary_layer in self.viewer.layers:
            self.boundary_layer.opacity = 0.0  # (`_draw_boundary` shows it again)

        def draw() -> None:
            if alive(self) and self.index is index:
                self._draw_boundary()

        next_turn(draw)

    def announce(self, index: SceneIndex) -> None:
        """The docks fill in for the site shown."""
        self.site_opened.emit(index)

    # ------------------------------------------------------------------ the stack and its layers

    def rebuild_stack(self, keep_date: dt.date | None | bool = True) -> None:
        """Re-filter the stack from the state (filters, composite) and show it, keeping the shown date."""
        if self.index is None:
            return
        old_date = None
        if keep_date is True and self.stack is not None and len(self.stack):
            old_date = self.stack.dates[min(self.state.current, len(self.stack) - 1)]
        elif isinstance(keep_date, dt.date):
            old_date = keep_date
        st = self.state
        stack = open_stack(
            self.index,
            composite=st.composite,
            sensors=st.sensors or None,
            years=st.years,
            months=st.months or None,
            max_cloud=st.max_cloud if st.max_cloud < 1.0 else None,
            cache=self.cache,
        )
        self.prefetcher.cancel()
        self.stack = stack
        if not len(stack):
            self._remove_layer(IMAGE_LAYER)
            self._remove_layer(OVERLAY_LAYER)
            self.image_layer = self.overlay_layer = None
            self._warm_layers = False
            self._show_overlays()
            if self.index.record_scenes():
                self.reporter.info(f"no scene matches the filters with {composites()[st.composite]['label']} bands")
            self.text.text = f"{self.index.site.name}: no scene matches the filters"
            self.text.visible = True
            self.stack_changed.emit(stack)
            return
        current = stack.nearest(old_date) if old_date is not None else 0
        self.show_stack(stack, current)

    def show_stack(self, stack: Stack, current: int, *, announce: bool = True) -> None:
        """Show a filtered stack (made by `rebuild_stack`, or ahead of time in a worker by the review dock) at
        date `current`, slicing the canvas once. `announce=False` leaves `stack_changed` to the caller (the
        review dock hands the docks what it prepared instead of letting each re-read it)."""
        self.prefetcher.cancel()
        self.stack = stack
        if not len(stack):
            self.rebuild_stack()
            return
        current = int(np.clip(current, 0, len(stack) - 1))
        with self.state.events.current.blocker():
            self.state.current = current
        sliced = self._show_image(reslice=False)
        if self.state.overlay:
            self._show_overlay()
        same_step = self.viewer.dims.ndim >= 3 and int(self.viewer.dims.current_step[0]) == current
        self._on_current_changed(caption_now=True)  # sets the step (one slice) when it differs
        if same_step and not sliced:
            self.image_layer.refresh()  # the same step: napari would not re-slice by itself (its data setter did)
        if announce:
            self.stack_changed.emit(stack)

    # ------------------------------------------------------------------ frames, read off the UI thread

    def _mark_ready(self, key: tuple) -> None:
        with self._frames_lock:
            self._ready[key] = None
            self._ready.move_to_end(key)
            while len(self._ready) > READY_KEYS:
                self._ready.popitem(last=False)

    def _is_ready(self, key: tuple) -> bool:
        with self._frames_lock:
            return key in self._ready

    @staticmethod
    def _frame_key(stack: Stack, composite: str, i: int) -> tuple:
        """Names what a read puts in the scene cache: the same for every stack over the same scene."""
        s = stack.scenes[i]
        return ("frame", s.files_root, s.key, composite, stack.harmonized)

    @staticmethod
    def _codes_key(stack: Stack, i: int) -> tuple:
        s = stack.scenes[i]
        return ("overlay", s.files_root, s.key)

    def read_frame(self, stack: Stack, composite: str, i: int) -> np.ndarray:
        """Read date i's channels (any thread: the review dock's evidence worker too) and remember that the frame is
        in the cache, so the canvas shows it without asking the frame reader again."""
        channels = stack.read(i, composite)
        self._mark_ready(self._frame_key(stack, composite, i))
        return channels

    def _read_codes(self, stack: Stack, i: int) -> np.ndarray:
        codes = quality_codes(stack, i)
        self._mark_ready(self._codes_key(stack, i))
        return codes

    def _request(self, key: tuple, read) -> None:
        """Read a frame in the frame reader; `frame_read` brings the result back to the UI thread."""
        if key in self._requested:
            return
        self._requested.add(key)

        def job() -> None:
            try:
                read()
                result = (key, None)
            except Exception as exc:  # noqa: BLE001 - reported on the UI thread, once
                result = (key, exc)
            try:
                self.frame_read.emit(result)
            except RuntimeError:  # the session closed meanwhile
                pass

        self._reader.submit(job)

    def _on_frame_read(self, payload) -> None:
        key, exc = payload
        self._requested.discard(key)
        if not alive(self):
            return
        if exc is not None:
            self._failed[key] = exc
        if self.stack is None or not len(self.stack):
            return
        i = min(self.state.current, len(self.stack) - 1)
        if key == self._frame_key(self.stack, self.state.composite, i) and self.image_layer is not None:
            self.image_layer.refresh()
            self._emit_status(self._pointer)  # values under a still cursor replace "reading..."
        elif key == self._codes_key(self.stack, i) and self.overlay_layer is not None:
            self.overlay_layer.refresh()

    def frame_shown(self, i: int | None = None) -> bool:
        """True once the canvas shows date i (default: the current one) itself, not the placeholder (and its
        quality overlay, when that is on)."""
        if self.stack is None or self.image_layer is None or self._warm_layers:  # (the placeholder is unseen)
            return False
        i = self.state.current if i is None else i
        if not 0 <= i < len(self.stack):
            return False
        if self._shown != self._frame_key(self.stack, self.state.composite, i) or not self.image_layer.loaded:
            return False
        if self.overlay_layer is not None:  # the quality overlay, when on, is part of what the date shows
            return self._overlay_shown == self._codes_key(self.stack, i) and bool(self.overlay_layer.loaded)
        return True

    def _render(self, stack: Stack, composite: str, stretch: Stretch, i: int) -> np.ndarray:
        """One frame (UI thread, from napari's slicing): physical channels through the stack's stretch if
        they were read, else a placeholder while the frame reader reads them; never raises."""
        shape = (*stack.grid.shape, 3)
        key = self._frame_key(stack, composite, i)
        exc = self._failed.pop(key, None)  # a read that failed in the frame reader
        if exc is None and not self._is_ready(key):
            self._shown = None
            self._request(key, lambda: self.read_frame(stack, composite, i))
            return np.full(shape, PLACEHOLDER_GREY, np.uint8)
        if exc is None:
            try:
                channels = stack.read(i, composite)  # from the cache (re-read if evicted since)
            except Exception as err:  # noqa: BLE001 - a broken file must not break slicing
                exc = err
        self._shown = key
        if exc is not None:
            s = stack.scenes[i]
            self.reporter.error(exc, context=f"{s.date.isoformat()} {s.label}")
            return np.zeros(shape, np.uint8)
        with self._frames_lock:
            self._frames[key] = channels
            while len(self._frames) > 16:
                self._frames.popitem(last=False)
        if not np.isfinite(channels).any():
            self.all_masked.add((id(stack), i))
        return stretch.apply(channels)

    def rgb_array(self, stack: Stack | None = None, composite: str | None = None, stretch: Stretch | None = None):
        """Lazy (t, y, x, 3) uint8 frames, each date rendered with one stretch when napari slices it."""
        stack = stack or self.stack
        composite = composite or self.state.composite
        stretch = stretch or self.state.stretch
        return FrameArray(
            len(stack), (*stack.grid.shape, 3), np.uint8, lambda i: self._render(stack, composite, stretch, i)
        )

    def overlay_array(self, stack: Stack | None = None):
        """Lazy (t, y, x) uint8 overlay codes (1 cloud, 2 shadow, 3 snow, 4 fill/SLC gap)."""
        stack = stack or self.stack
        h, w = stack.grid.shape

        def frame(i: int) -> np.ndarray:
            key = self._codes_key(stack, i)
            exc = self._failed.pop(key, None)
            if exc is None and not self._is_ready(key):
                self._overlay_shown = None
                self._request(key, lambda: self._read_codes(stack, i))
                return np.zeros((h, w), np.uint8)
            self._overlay_shown = key
            if exc is None:
                try:
                    return quality_codes(stack, i)
                except Exception as err:  # noqa: BLE001 - a broken QA file must not break slicing
                    exc = err
            self.reporter.error(exc, context="quality overlay")
            return np.zeros((h, w), np.uint8)

        return FrameArray(len(stack), (h, w), np.uint8, frame)

    def _scale(self) -> tuple[float, float]:
        r = float(self.index.site.resolution) if self.index else 1.0
        return (r, r)

    def _show_image(self, *, reslice: bool = True) -> bool:
        """Show the stack in the image layer: an array of the same shape swaps only what it renders (another
        stretch, composite or filter with as many dates) and the layer re-slices once; napari's data setter
        (a new layer shape, dims and slider) runs only when the number of dates or the grid changed. True when the
        layer was sliced anew (napari's setter and a new layer slice by themselves)."""
        data = self.rgb_array()
        scale = (1.0, *self._scale())
        layer = self.image_layer
        if layer is not None and layer in self.viewer.layers:
            old = layer.data
            if isinstance(old, FrameArray) and old.shape == data.shape and tuple(layer.scale) == scale:
                old.set_frame(data._frame)  # noqa: SLF001 - the array's own renderer
                if reslice:
                    layer.refresh()
                sliced = reslice
            else:
                # another number of dates: napari's setter (layer shape, extent, the slider's range). Hiding the
                # layer meanwhile saved a slice but left the slider's range stale (napari re-reads the extent of
                # a layer shown again only on its next refresh). napari clamps the step to the new length meanwhile:
                # that is not the user's step (state.current is already the shown date's index in the new stack)
                with self.viewer.dims.events.current_step.blocker(self._on_dims_step):
                    layer.data = data
                self._scale_image()
                if self._warm_layers and not self._unveil_later:
                    self._unveil()
                sliced = True
        else:
            sliced = True
            first = self.image_layer is None
            self.image_layer = self.viewer.add_image(
                data,
                rgb=True,
                name=IMAGE_LAYER,
                scale=scale,
                units=("pixel", "m", "m"),
                contrast_limits=(0, 255),
                cache=False,
            )
            self.viewer.layers.move(self.viewer.layers.index(self.image_layer), 0)
            self._show_overlays()
            if first:
                self.viewer.reset_view()
        self._label_time_axis(min(self.state.current, len(self.stack) - 1))
        if not self._warm_layers and self.viewer.layers.selection.active is not self.image_layer:
            self.viewer.layers.selection.active = self.image_layer  # (the placeholder's: when it is shown)
        return sliced

    def _scale_image(self) -> None:
        """The image layer in the open site's pixel size (napari's setter costs ~100 ms even when nothing changes)."""
        layer, scale = self.image_layer, (1.0, *self._scale())
        if layer is not None and layer in self.viewer.layers and tuple(layer.scale) != scale:
            layer.scale = scale

    def _unveil(self) -> None:
        """The start-up placeholder (`warm_canvas`) took the first site: fit the view to it, then show it (a turn of its
        own when a site opens: the data setter and this together held the UI ~150 ms)."""
        layer = self.image_layer
        if not self._warm_layers or layer is None or layer not in self.viewer.layers:
            return
        self._warm_layers = False
        self.viewer.reset_view()
        layer.opacity = 1.0
        self.viewer.layers.selection.active = layer
        self._show_overlays()

    def _show_overlays(self) -> None:
        """The scale bar and the caption seen: unseen while only the start-up placeholder was there (the scale bar
        measured its 16 px)."""
        bar = self.viewer.canvas.overlays.scale_bar
        bar.visible, bar.opacity = True, 1.0
        self.text.opacity = 1.0

    def _show_overlay(self) -> None:
        from napari.utils.colormaps import DirectLabelColormap

        data = self.overlay_array()
        scale = (1.0, *self._scale())
        layer = self.overlay_layer
        if layer is not None and layer in self.viewer.layers:
            old = layer.data
            if isinstance(old, FrameArray) and old.shape == data.shape:
                old.set_frame(data._frame)  # noqa: SLF001 - the array's own renderer
                layer.refresh()
            else:
                layer.data = data
        else:
            self.overlay_layer = self.viewer.add_labels(
                data,
                name=OVERLAY_LAYER,
                scale=scale,
                units=("pixel", "m", "m"),
                opacity=0.7,
                colormap=DirectLabelColormap(color_dict=OVERLAY_COLORS),
                cache=False,
            )
            if self.image_layer is not None:
                self.viewer.layers.selection.active = self.image_layer

    def _draw_boundary(self) -> None:
        """The site's boundary; the layer of the site shown before takes the new rings (removing it and adding
        another cost ~1.5 s on the UI thread: a new layer, its list entry and its visual's first draw)."""
        old, self.boundary_layer = self.boundary_layer, None
        if old is not None and old not in self.viewer.layers:
            old = None
        site = self.index.site
        if site.boundary_path is None:
            self._remove_layer(BOUNDARY_LAYER)
            return
        try:
            rings = site.boundary_lines()
        except ReviewerError as exc:  # Site wraps reader and reprojection failures in SiteError
            self._remove_layer(BOUNDARY_LAYER)
            self.reporter.error(exc, context="site boundary not drawn")
            return
        h, w = site.shape
        inside = [
            r
            for r in rings
            if len(r) and (r[:, 0].max() >= 0 and r[:, 0].min() <= h and r[:, 1].max() >= 0 and r[:, 1].min() <= w)
        ]
        if not inside:
            self._remove_layer(BOUNDARY_LAYER)
        if rings and not inside:
            self.reporter.error(
                ReviewerError(
                    "the boundary does not overlap the site grid (is its CRS right?); not drawn",
                    path=site.boundary_path,
                )
            )
            return
        if not inside:
            return
        if old is not None:
            if tuple(old.scale) != self._scale():
                old.scale = self._scale()
            old.data = [(r, "path") for r in inside]
            old.edge_width = max(h, w) / 250.0
            old.edge_color = "yellow"
            if old.opacity == 0.0:  # the start-up placeholder (`warm_canvas`) or hidden meanwhile (`_boundary_later`)
                old.opacity = BOUNDARY_OPACITY
            self.boundary_layer = old
            return
        self.boundary_layer = self.viewer.add_shapes(
            inside,
            shape_type="path",
            edge_color="yellow",
            edge_width=max(h, w) / 250.0,
            name=BOUNDARY_LAYER,
            scale=self._scale(),
            units=("m", "m"),
        )
        if self.image_layer is not None:
            self.viewer.layers.selection.active = self.image_layer

    def _remove_layer(self, name: str) -> None:
        if name in self.viewer.layers:
            self.viewer.layers.remove(name)

    def region_shapes_layer(self):
        """The Shapes layer where the user draws a polygon for the trajectory (created on demand)."""
        if self.region_layer is None or self.region_layer not in self.viewer.layers:
            self.region_layer = self.viewer.add_shapes(
                name=REGION_LAYER,
                ndim=2,
                scale=self._scale(),
                units=("m", "m"),
                edge_color="cyan",
                face_color=[0, 1, 1, 0.15],
                edge_width=max(self.index.site.shape) / 200.0 if self.index else 1.0,
            )
        return self.region_layer

    # ------------------------------------------------------------------ model -> canvas

    def _on_composite_changed(self, event=None) -> None:
        comp = self.state.composite
        if comp not in composites():
            self.reporter.error(ReviewerError(f"unknown composite {comp!r}", field="composite"))
            return
        stretch = self._stretches.get(comp) or Stretch.default(comp)
        with self.state.events.stretch.blocker():
            self.state.stretch = stretch
        self.rebuild_stack()

    def _on_filters_changed(self, event=None) -> None:
        """Re-filter the stack. The stretch stays as it is (it changes only when the user asks for it); when it
        is a percentile stretch of other dates, `stretch_is_stale` says so and the Stack dock offers to recompute."""
        self.rebuild_stack()

    def stretch_is_stale(self) -> bool:
        """A percentile stretch computed over a stack other than the one shown now (filters changed since)."""
        return (
            self.state.stretch.source.startswith("percentiles")
            and self._percentile_dates is not None
            and self.stack is not None
            and tuple(self.stack.dates) != self._percentile_dates
        )

    def _on_stretch_changed(self, event=None) -> None:
        self.keep_stretch(self.state.composite, self.state.stretch)
        if self.stack is not None and len(self.stack) and self.image_layer is not None:
            self._show_image()

    def _on_overlay_changed(self, event=None) -> None:
        if self.state.overlay and self.stack is not None and len(self.stack):
            self._show_overlay()
            self._set_dims_step(self.state.current)
        else:
            self._remove_layer(OVERLAY_LAYER)
            self.overlay_layer = None

    def _set_dims_step(self, i: int) -> None:
        if self.viewer.dims.ndim >= 3 and int(self.viewer.dims.current_step[0]) != i:
            self.viewer.dims.set_current_step(0, i)

    def _on_dims_step(self, event=None) -> None:
        if self.stack is None or not len(self.stack) or self.viewer.dims.ndim < 3:
            return
        i = int(np.clip(self.viewer.dims.current_step[0], 0, len(self.stack) - 1))
        if i != self.state.current:
            self._direction = 1 if i > self.state.current else -1
            self.state.current = i

    def _label_time_axis(self, i: int) -> str:
        """Label the slider with date i's date and sensor (padded to one width, so the label does not
        re-layout the window at every step)."""
        s = self.stack.scenes[i]
        label = f"{s.date.isoformat()} {s.label}"
        labels = (label.ljust(self._label_width), "row", "col")
        if tuple(self.viewer.dims.axis_labels) != labels:  # (napari validates every set, ~1 ms: twice per stack shown)
            self.viewer.dims.axis_labels = labels
        return label

    def _on_current_changed(self, event=None, *, caption_now: bool = False) -> None:
        """The canvas, slider, caption, status line and prefetch follow the shown date; `caption_now`: not stepping
        (another stack, a review item), so the caption is set in this turn and drawn with the frame."""
        if self.stack is None or not len(self.stack):
            return
        i = int(np.clip(self.state.current, 0, len(self.stack) - 1))
        self._set_dims_step(i)
        label = self._label_time_axis(i)
        masked = " - every pixel masked" if (id(self.stack), i) in self.all_masked else ""
        # the canvas caption is re-typeset by vispy (~50 ms): set it once stepping pauses, not at every step
        self._caption = f"{label}   {composites()[self.state.composite]['label']}{masked}"
        if caption_now:
            self._show_caption()
        elif self.text.text.strip() and self.text.text != self._caption:
            # a caption naming another date is worse than none: blank until it is set. Blanked, not hidden: hiding
            # detaches the caption's box, and re-attaching it recompiled its shader at the next draw (~40 ms)
            self.text.text = " " * len(self.text.text)
        self._caption_when_settled()
        self._emit_status(self._pointer)
        if caption_now:  # another stack: its neighbouring dates are read once it is painted (see NEIGHBOURS_LATER_MS)
            self.prefetcher.cancel()
            self._neighbours_later.start()
        else:
            self._neighbours_later.stop()
            self._read_neighbours()

    def read_neighbours_later(self) -> None:
        """The shown date's neighbours read NEIGHBOURS_LATER_MS from now (again, if they were to be read sooner)."""
        if self._neighbours_later.isActive():
            self._neighbours_later.start()

    def _read_neighbours(self) -> None:
        """The dates around the shown one read ahead into the cache (stepping then shows them without disk)."""
        stack = self.stack
        if stack is None or not len(stack):
            return
        comp, i = self.state.composite, int(np.clip(self.state.current, 0, len(stack) - 1))
        self.prefetcher.schedule(lambda j: self.read_frame(stack, comp, j), i, len(stack), self._direction)
        if self.state.overlay:
            self.prefetcher.schedule(lambda j: self._read_codes(stack, j), i, len(stack), self._direction)

    def _show_caption(self) -> None:
        caption = self._caption

        if self.text.text != caption:
            self.text.text = caption
        if not self.text.visible:
            self.text.visible = True

    # ------------------------------------------------------------------ navigation (keys, docks)

    @property
    def current_scene(self) -> Scene | None:
        if self.stack is None or not len(self.stack):
            return None
        return self.stack.scenes[min(self.state.current, len(self.stack) - 1)]

    def jump_to_index(self, i: int) -> None:
        if self.stack is None or not len(self.stack):
            return
        i = int(np.clip(i, 0, len(self.stack) - 1))
        self._direction = 1 if i >= self.state.current else -1
        self.state.current = i

    def jump_to_date(self, date: dt.date) -> None:
        if self.stack is None or not len(self.stack):
            return
        self.jump_to_index(self.stack.nearest(date))

    def jump_to_year(self, year: int) -> None:
        """Show the clearest scene of that year (or the nearest date when the year has none)."""
        if self.stack is None or not len(self.stack):
            return
        best = clearest_per_year(self.stack)
        if year in best:
            self.jump_to_index(best[year])
        else:
            self.jump_to_date(dt.date(int(year), 7, 1))

    def _on_next_date(self) -> None:
        self._direction = 1
        self.jump_to_index(self.state.current + 1)

    def _on_prev_date(self) -> None:
        self._direction = -1
        self.jump_to_index(self.state.current - 1)

    def _on_next_year(self) -> None:
        if self.stack is not None and len(self.stack):
            self.jump_to_index(step_year(self.stack.dates, self.state.current, +1))

    def _on_prev_year(self) -> None:
        if self.stack is not None and len(self.stack):
            self.jump_to_index(step_year(self.stack.dates, self.state.current, -1))

    # ------------------------------------------------------------------ stretch

    def set_stretch(self, stretch: Stretch) -> bool:
        """Apply a new stretch to every date; refused (False) while the stretch is locked."""
        if self.state.locked:
            self.reporter.info("the stretch is locked (press S to unlock)")
            return False
        if stretch.composite != self.state.composite:
            raise ReviewerError(f"the stretch is for {stretch.composite}, not {self.state.composite}", field="stretch")
        self.state.stretch = stretch
        return True

    def reset_stretch(self) -> bool:
        return self.set_stretch(Stretch.default(self.state.composite))

    def toggle_lock(self) -> None:
        self.state.locked = not self.state.locked

    def stretch_from_percentiles(self):
        """Percentiles of pooled clear pixels of the whole filtered stack, computed in a worker."""
        if self.state.locked:
            self.reporter.info("the stretch is locked (press S to unlock)")
            return None
        if self.stack is None or not len(self.stack):
            self.reporter.error(NoSceneError("no stack is open"))
            return None
        stack, comp = self.stack, self.state.composite

        def work() -> Stretch:
            samples, n = stack.pooled_samples(comp)
            return percentile_stretch(samples, comp, n_scenes=n)

        def done(stretch: Stretch) -> None:
            self._stretch_worker = None
            if comp == self.state.composite and not self.state.locked:
                self._percentile_dates = tuple(stack.dates)
                self.state.stretch = stretch

        def failed(exc: BaseException) -> None:
            self._stretch_worker = None
            self.reporter.error(exc, context="percentile stretch")

        self._stretch_worker = run_in_thread(work, on_done=done, on_error=failed)
        return self._stretch_worker

    # ------------------------------------------------------------------ status line, canvas clicks

    def frame_values(self, i: int | None = None) -> np.ndarray | None:
        """Physical channels of a frame already read (None when not yet in memory: never blocks)."""
        if self.stack is None:
            return None
        i = self.state.current if i is None else i
        if not 0 <= i < len(self.stack):
            return None
        with self._frames_lock:
            return self._frames.get(self._frame_key(self.stack, self.state.composite, i))

    def world_to_pixel(self, position) -> tuple[int, int] | None:
        if self.index is None:
            return None
        res = float(self.index.site.resolution)
        r, c = int(np.floor(position[-2] / res + 0.5)), int(np.floor(position[-1] / res + 0.5))
        h, w = self.index.site.shape
        if 0 <= r < h and 0 <= c < w:
            return r, c
        return None

    def status_text(self, pixel: tuple[int, int] | None = None) -> str:
        s = self.current_scene
        if s is None:
            return "no site open" if self.index is None else "no scene matches the filters"
        clear = "-" if s.clear_fraction is None else f"{100 * s.clear_fraction:.0f}%"
        parts = [s.date.isoformat(), s.label, s.scene_id, f"tier {s.tier or '-'}", f"clear {clear}"]
        if pixel is not None:
            values = self.frame_values()
            r, c = pixel
            if values is not None:
                spec = composites()[self.state.composite]
                names = [spec["label"]] if "index" in spec else spec["bands"]
                vals = ", ".join(
                    f"{n} {'masked' if not np.isfinite(v) else f'{v:.4f}'}"
                    for n, v in zip(names, values[:, r, c], strict=False)
                )
                parts.append(f"({r}, {c}) {vals}")
            else:
                parts.append(f"({r}, {c}) reading...")
        return "  |  ".join(parts)

    def _emit_status(self, pixel) -> None:
        text = self.status_text(pixel)
        if text != self._last_status:
            self._last_status = text
            self.status.emit(text)

    def _on_mouse_move(self, viewer, event) -> None:
        self._pointer = self.world_to_pixel(event.position)
        self._emit_status(self._pointer)

    def _on_mouse_press(self, viewer, event):
        """A click (press and release without moving) picks the trajectory pixel; a drag pans as usual."""
        if event.button != 1 or self.index is None:
            return
        pixel = self.world_to_pixel(event.position)
        yield
        moved = False
        while event.type == "mouse_move":
            moved = True
            yield
        if (
            not moved
            and pixel is not None
            and viewer.layers.selection.active in (self.image_layer, None, self.overlay_layer, self.boundary_layer)
        ):
            self.pixel_clicked.emit(*pixel)

    # ------------------------------------------------------------------ export

    def export_view(self, out: str | Path, *, on_done=None):
        """Save the shown date as a labelled PNG with scale bar and the exact stretch in its metadata."""
        from reviewer.record.render import Panel, render_panels

        if self.stack is None or not len(self.stack):
            self.reporter.error(NoSceneError("nothing to export: no date is shown"))
            return None
        stack, comp, stretch, i = self.stack, self.state.composite, self.state.stretch, self.state.current
        site = self.index.site

        def work() -> Path:
            s = stack.scenes[i]
            panel = Panel(f"{s.date.isoformat()}  {s.label}  {s.scene_id}", stack.read(i, comp), [s], "scene")
            return render_panels(
                [panel], stretch, pixel_size_m=site.resolution, out=out, title=f"{site.name} ({site.id})"
            )

        return self._export(work, on_done)

    def _export(self, work, on_done=None):
        def done(path: Path) -> None:
            self.reporter.info(f"saved {path}")
            if on_done is not None:
                on_done(path)

        return run_in_thread(work, on_done=done, on_error=lambda exc: self.reporter.error(exc, context="export"))

    def close(self) -> None:
        self._neighbours_later.stop()
        self.prefetcher.shutdown()
        self._reader.shutdown(wait=False, cancel_futures=True)
        self.cancel_open()

    def describe(self) -> dict[str, Any]:
        """A small summary for logs and tests."""
        return {
            "site": self.index.site.id if self.index else None,
            "scenes": len(self.stack) if self.stack is not None else 0,
            "current": self.state.current,
            "composite": self.state.composite,
            "stretch": self.state.stretch.to_json(),
        }
