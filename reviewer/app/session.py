"""The stack on the napari canvas: the open site, its filtered stack and the date shown, in step with the
`ViewState` model. The docks talk to this object and to the model, never to each other. Its parts, each in its own
module: `SiteOpener` (a site indexed in a worker), `CanvasLayers` (the image, overlay, boundary and region layers,
the scale bar), `FrameSource` (frames read off the UI thread at display size), `ShownDate` (the shown date: the
canvas, the date slider's and the caption's models, the dates around it read ahead; the date is the session's
`state.current`, no napari dims axis), `StretchKeeper` (each composite's stretch) and `CanvasPointer` (the status
line and clicks).
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any

import numpy as np
from qtpy.QtCore import QObject, Signal

from reviewer.app.errors import ErrorReporter
from reviewer.app.jobs import run_in_thread
from reviewer.app.session_dates import ShownDate
from reviewer.app.session_frames import FrameSource
from reviewer.app.session_layers import CanvasLayers
from reviewer.app.session_pointer import CanvasPointer
from reviewer.app.session_site import SiteOpener
from reviewer.app.session_stretch import StretchKeeper
from reviewer.app.state import ViewState
from reviewer.errors import ReviewerError
from reviewer.record.scan import Scene, SceneIndex
from reviewer.record.stack import SceneCache, Stack, composite_bands, open_stack
from reviewer.record.stretch import Stretch, composites

logger = logging.getLogger(__name__)


class StackSession(QObject):
    """Owns the open site and its layers in one napari viewer.

    Signals
    -------
    site_opened(SceneIndex) : a site was indexed and is shown.
    site_failed(str, str) : a site folder could not be opened (the folder, why).
    stack_changed(Stack) : the filtered stack (filters or composite) changed.
    indexing(float, str) : progress of indexing a site.
    busy(bool) : indexing started / ended.
    status(str) : the status line (date, sensor, scene, tier, clear %, values under the cursor).
    pixel_clicked(int, int) : a click (not a drag) on the canvas at (row, col).
    """

    site_opened = Signal(object)
    site_failed = Signal(str, str)
    stack_changed = Signal(object)
    indexing = Signal(float, str)
    busy = Signal(bool)
    status = Signal(str)
    pixel_clicked = Signal(int, int)
    modules_ready = Signal()  # `SiteOpener.warm_up` imported what later work needs

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
        self.dates = ShownDate(self, prefetch=prefetch)  # the shown date: slider, caption, neighbours read ahead
        self.recent = recent
        self.index: SceneIndex | None = None
        self.stack: Stack | None = None
        self.canvas = CanvasLayers(self)  # the stack, overlay, boundary and region layers, the scale bar
        self.frames = FrameSource(self._on_frame_read, lambda exc, context: self.reporter.error(exc, context=context))
        self.site = SiteOpener(self)  # opening a site in a worker
        self.stretches = StretchKeeper(self)  # each composite's stretch, the user's edits, percentiles
        self.pointer = CanvasPointer(self)  # the status line and clicks on the canvas
        # napari's experimental async slicing is off by default: with PySide6 its slicing thread can
        # deadlock against the UI thread (a Qt disconnect waiting for the GIL while the UI thread holds
        # the GIL inside a Qt connect; seen about one run in five). Reads still happen in our prefetch
        # workers (numpy only, no Qt), so the UI thread slices from the cache.
        # (None: napari's setting as the user has it; the plugin's docks change nothing outside themselves)
        if async_slicing is not None:
            from napari.settings import get_settings

            get_settings().experimental.async_ = bool(async_slicing)
        s = self.state.events
        s.current.connect(self.dates.on_current_changed)
        s.composite.connect(self._on_composite_changed)
        s.stretch.connect(self._on_stretch_changed)
        s.overlay.connect(self._on_overlay_changed)
        for name in ("sensors", "years", "months", "max_cloud"):
            getattr(s, name).connect(self._on_filters_changed)
        viewer.mouse_move_callbacks.append(self.pointer.on_mouse_move)
        viewer.mouse_drag_callbacks.append(self.pointer.on_mouse_press)
        #: brings napari's status bar up to date in this turn (the review dock calls it as an item is shown)
        self.update_status_bar = viewer.update_status_from_cursor
        self.who = ""  # who is working (review), shown in the window title

    # ------------------------------------------------------------------ opening a site (SiteOpener)

    def open_site(self, site_dir: str | Path, *, rescan: bool = False):
        """Index the site in a worker (progress on `indexing`); the stack shows when it returns."""
        return self.site.open(site_dir, rescan=rescan)

    def cancel_open(self) -> None:
        self.site.cancel()

    @property
    def opening(self) -> bool:
        """A site is being opened (indexed) in the open worker."""
        return self.site.opening

    def window_title(self, site: str | None = None) -> str:
        """'EarthRecord Reviewer[ - who (role)][ - site]'."""
        return " - ".join(t for t in ("EarthRecord Reviewer", self.who, site) if t)

    def show_index(self, index: SceneIndex, *, stack: tuple[Stack, int] | None = None) -> None:
        """Show an indexed site (also used directly by tests and the plugin): its boundary, its stack and, unless
        `stack` is given, the docks take it (`announce`). `stack`: (a stack of this index, its date) shown instead of
        the default one (a review item's, prepared in the evidence worker); its caller then hands the docks the
        site and the item's stack itself."""
        self.indexing.emit(1.0, f"{len(index.scenes)} scenes")
        self.canvas.dress_canvas()
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
        self.stretches.forget()
        self.viewer.title = self.window_title(f"{index.site.name} ({index.site.id})")
        if self.recent is not None:
            self.recent.add(index.site.dir)
        with self.state.events.blocker_all():  # (the filters a new site opens with; a field already so is not written)
            for name, value in (("sensors", ()), ("years", None), ("months", ()), ("max_cloud", 1.0), ("current", 0)):
                if getattr(self.state, name) != value:
                    setattr(self.state, name, value)
        self.state.site_dir = str(index.site.dir)
        self.canvas.draw_boundary()
        if stack is not None:
            self.show_stack(*stack, announce=False)
        else:
            if (opening := opening_composite(self.state.composite, usable)) != self.state.composite:
                self.stack = None  # (a new site: it opens on its first date, not near the last site's)
                self.state.composite = opening  # _on_composite_changed rebuilds the stack
            else:
                self.rebuild_stack(keep_date=None)
            self.announce(index)
        self.site.warm_after_first_site()

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
        self.dates.prefetcher.cancel()
        self.stack = stack
        if not len(stack):
            self.canvas.drop_stack()
            self.dates.position.clear()
            if self.index.record_scenes():
                self.reporter.info(f"no scene matches the filters with {composites()[st.composite]['label']} bands")
            self.caption.no_scene(self.index.site.name)
            self.stack_changed.emit(stack)
            return
        current = stack.nearest(old_date) if old_date is not None else 0
        self.show_stack(stack, current)

    def show_stack(self, stack: Stack, current: int, *, announce: bool = True) -> None:
        """Show a filtered stack (made by `rebuild_stack`, or ahead of time in a worker by the review dock) at
        date `current`, slicing the canvas once. `announce=False` leaves `stack_changed` to the caller (the
        review dock hands the docks what it prepared instead of letting each re-read it)."""
        self.dates.prefetcher.cancel()
        self.stack = stack
        if not len(stack):
            self.rebuild_stack()
            return
        current = int(np.clip(current, 0, len(stack) - 1))
        if self.state.current != current:
            with self.state.events.current.blocker():
                self.state.current = current
        self.canvas.show_image()  # (one slice: the layer's own refresh, or napari's setters on another grid)
        if self.state.overlay:
            self.canvas.show_overlay()
        self.dates.on_current_changed(caption_now=True)  # the slider, the caption and the status line
        if announce:  # (the review dock brings napari's status bar up to date itself, with the item's docks)
            self.update_status_bar()
            self.stack_changed.emit(stack)

    # ------------------------------------------------------------------ the canvas's layers (CanvasLayers)

    @property
    def image_layer(self):
        return self.canvas.image_layer

    @property
    def overlay_layer(self):
        return self.canvas.overlay_layer

    @property
    def boundary_layer(self):
        return self.canvas.boundary_layer

    @property
    def region_layer(self):
        return self.canvas.region_layer

    @property
    def caption(self):
        """The date caption (`caption.DateCaption`, plain evented state): a label over the canvas draws it."""
        return self.dates.caption

    def dress_canvas(self) -> None:
        self.canvas.dress_canvas()

    def warm_canvas(self) -> None:
        self.canvas.warm_canvas()

    def region_shapes_layer(self):
        """The Shapes layer where the user draws a polygon for the trajectory (created on demand)."""
        return self.canvas.region_shapes_layer()

    # ------------------------------------------------------------------ frames, read off the UI thread (FrameSource)

    @property
    def all_masked(self) -> set[tuple[int, int]]:
        """(id(stack), date) of the frames shown with no clear pixel."""
        return self.frames.all_masked

    def read_frame(self, stack: Stack, composite: str, i: int) -> np.ndarray:
        """Read date i's channels as the canvas shows them (any thread: the evidence worker too)."""
        return self.frames.read_frame(stack, composite, i)

    def render_frame(self, stack: Stack, composite: str, stretch: Stretch, i: int) -> None:
        """Read and render date i as the canvas will show it (any thread: the evidence worker, for an item's date)."""
        self.frames.render_ahead(stack, composite, stretch, i)

    def _on_frame_read(self, key: tuple, exc: BaseException | None) -> None:
        """A frame the canvas asked for is read: the layer showing it re-slices."""
        if self.stack is None or not len(self.stack):
            return
        i, f = min(self.state.current, len(self.stack) - 1), self.frames
        if key == f.frame_key(self.stack, self.state.composite, i) and self.image_layer is not None:
            self.canvas.frame_read(self.image_layer)
            self.pointer.refresh()  # values under a still cursor replace "reading..."
            self.update_status_bar()  # and in napari's status bar, which read the placeholder's grey at the step
            self.dates.show_caption()  # " - every pixel masked" once the frame says so
        elif key == f.codes_key(self.stack, i) and self.overlay_layer is not None:
            self.canvas.frame_read(self.overlay_layer)

    def frame_shown(self, i: int | None = None) -> bool:
        """True once the canvas shows date i (default: the current one) itself, not the placeholder (and its
        quality overlay, when that is on)."""
        if self.stack is None or self.image_layer is None or self.canvas.placeholder:  # (the placeholder is unseen)
            return False
        i = self.state.current if i is None else i
        if not 0 <= i < len(self.stack):
            return False
        f = self.frames
        if f.shown != f.frame_key(self.stack, self.state.composite, i) or not self.image_layer.loaded:
            return False
        if self.overlay_layer is not None:  # the quality overlay, when on, is part of what the date shows
            return f.overlay_shown == f.codes_key(self.stack, i) and bool(self.overlay_layer.loaded)
        return True

    def rgb_array(self, stack: Stack | None = None, composite: str | None = None, stretch: Stretch | None = None):
        """Lazy (t, y, x, 3) uint8 frames at display size, each date rendered with one stretch when it is shown."""
        return self.frames.rgb_array(
            stack or self.stack, composite or self.state.composite, stretch or self.state.stretch
        )

    def overlay_array(self, stack: Stack | None = None):
        """Lazy (t, y, x) uint8 overlay codes at display size (1 cloud, 2 shadow, 3 snow, 4 fill/SLC gap)."""
        return self.frames.overlay_array(stack or self.stack)

    # ------------------------------------------------------------------ model -> canvas

    def _on_composite_changed(self, event=None) -> None:
        comp = self.state.composite
        if comp not in composites():
            self.reporter.error(ReviewerError(f"unknown composite {comp!r}", field="composite"))
            return
        stretch = self.stretches.for_composite(comp)
        with self.state.events.stretch.blocker():
            self.state.stretch = stretch
        self.rebuild_stack()

    def _on_filters_changed(self, event=None) -> None:
        """Re-filter the stack. The stretch stays as it is (it changes only when the user asks for it); when it
        is a percentile stretch of other dates, `stretch_is_stale` says so and the Stack dock offers to recompute."""
        self.rebuild_stack()

    def _on_stretch_changed(self, event=None) -> None:
        self.stretches.keep_stretch(self.state.composite, self.state.stretch)
        if self.stack is not None and len(self.stack) and self.image_layer is not None:
            self.canvas.show_image()

    def _on_overlay_changed(self, event=None) -> None:
        if self.state.overlay and self.stack is not None and len(self.stack):
            self.canvas.show_overlay()
        else:
            self.canvas.drop_overlay()

    # ------------------------------------------------------------------ navigation (keys, docks)

    @property
    def current_scene(self) -> Scene | None:
        if self.stack is None or not len(self.stack):
            return None
        return self.stack.scenes[min(self.state.current, len(self.stack) - 1)]

    def jump_to_index(self, i: int) -> None:
        self.dates.jump_to_index(i)

    def jump_to_date(self, date: dt.date) -> None:
        self.dates.jump_to_date(date)

    def jump_to_year(self, year: int) -> None:
        """Show the clearest scene of that year (or the nearest date when the year has none)."""
        self.dates.jump_to_year(year)

    def _on_next_date(self) -> None:
        self.dates.step(+1)

    def _on_prev_date(self) -> None:
        self.dates.step(-1)

    def _on_next_year(self) -> None:
        self.dates.step_year(+1)

    def _on_prev_year(self) -> None:
        self.dates.step_year(-1)

    def read_neighbours(self) -> None:
        """The dates around the shown one read ahead into the cache (stepping then shows them without disk)."""
        self.dates.read_neighbours()

    # ------------------------------------------------------------------ stretch (StretchKeeper)

    def keep_stretch(self, composite: str, stretch: Stretch) -> None:
        """The stretch a composite comes back with when the user switches to it again (a review item's stored one)."""
        self.stretches.keep_stretch(composite, stretch)

    def set_stretch(self, stretch: Stretch) -> bool:
        """Apply a new stretch to every date; refused (False) while the stretch is locked."""
        return self.stretches.set_stretch(stretch)

    def reset_stretch(self) -> bool:
        return self.stretches.reset_stretch()

    def toggle_lock(self) -> None:
        self.stretches.toggle_lock()

    def stretch_from_percentiles(self):
        """Percentiles of pooled clear pixels of the whole filtered stack, computed in a worker."""
        return self.stretches.stretch_from_percentiles()

    def stretch_is_stale(self) -> bool:
        """A percentile stretch computed over a stack other than the one shown now (filters changed since)."""
        return self.stretches.stretch_is_stale()

    # ------------------------------------------------------------------ status line (CanvasPointer)

    def status_text(self, pixel: tuple[int, int] | None = None) -> str:
        return self.pointer.status_text(pixel)

    def world_to_pixel(self, position) -> tuple[int, int] | None:
        return self.pointer.world_to_pixel(position)

    # ------------------------------------------------------------------ export

    def export_view(self, out: str | Path, *, on_done=None):
        """Save the shown date as a labelled PNG with scale bar and the exact stretch in its metadata."""
        return self.dates.export_view(out, on_done=on_done)

    def _export(self, work, on_done=None):
        def done(path: Path) -> None:
            self.reporter.info(f"saved {path}")
            if on_done is not None:
                on_done(path)

        return run_in_thread(work, on_done=done, on_error=lambda exc: self.reporter.error(exc, context="export"))

    def close(self) -> None:
        self.canvas.boundary_waiting = False  # a warm-up ending after the close draws nothing
        self.dates.prefetcher.shutdown()
        self.frames.close()
        self.site.cancel()

    def describe(self) -> dict[str, Any]:
        """A small summary for logs and tests."""
        return {
            "site": self.index.site.id if self.index else None,
            "scenes": len(self.stack) if self.stack is not None else 0,
            "current": self.state.current,
            "composite": self.state.composite,
            "stretch": self.state.stretch.to_json(),
        }


def opening_composite(shown: str, scenes: list) -> str:
    """The composite a site opens on: the one shown, or when no scene of the site has its bands (an LST,
    ERA5-Land or NDVI-only site opened after true colour) the first the site can show, not an empty canvas."""

    def shows(c: str) -> bool:
        return any(composite_bands(c, s) is not None for s in scenes)

    if not scenes or shows(shown):
        return shown
    return next((c for c in composites() if shows(c)), shown)
