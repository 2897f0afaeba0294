"""Opening a site for a StackSession: the site indexed in a worker (progress on the session's `indexing`, its
boundary reprojected and its first date read there too), then shown on the UI thread (`StackSession.show_index`)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from qtpy.QtCore import Qt, QTimer

from reviewer.app.composite_choices import site_choices
from reviewer.app.evidence_prep import site_boundary_raster
from reviewer.app.jobs import Progress, run_in_thread
from reviewer.app.qt_window import after_next_paint
from reviewer.errors import ReviewerError
from reviewer.record.scan import SceneIndex
from reviewer.record.stack import open_stack
from reviewer.record.stretch import composites

logger = logging.getLogger(__name__)

#: modules the boundary layer and later work import (pandas via the shapes layer's features table, scipy.ndimage
#: and napari's histogram via the image layer): imported in a worker once the first site's imagery is on screen
#: (`StackSession.warm_after_first_site`), where they do not hold the UI thread (~1 s the first time a site opened)
#: nor the first imagery (imported before it, they took ~0.5 s of the launch's CPU; issue 27)
WARM_MODULES = (
    "sqlite_utils",  # the store (imported by the first open's worker: ~100 ms, its file reads starving the UI thread)
    "rasterio.warp",
    "pandas",
    "scipy.ndimage",
    "napari.components.histogram",
    "OpenGL.arrays.lists",
)


_warmed = threading.Event()  # set once `warm_imports` ran in this process (imports are process-wide)


def warm_imports() -> None:
    """Import WARM_MODULES and make the index composites' colour tables (any thread; a no-op once done):
    the first NDVI/MNDWI frame imported matplotlib on the UI thread (~0.7 s, or a wait on the import lock)."""
    import importlib

    from reviewer.record.stretch import colormap_lut

    if _warmed.is_set():
        return
    try:
        for name in WARM_MODULES:
            try:
                importlib.import_module(name)
            except ImportError:
                logger.debug("cannot preload %s", name)
        for spec in composites().values():
            if spec.get("colormap"):
                colormap_lut(spec["colormap"])
    finally:  # tried: a boundary waiting for these is drawn either way (what failed is imported where it is used)
        _warmed.set()


def modules_warmed() -> bool:
    """`warm_imports` has run: a shapes layer no longer imports pandas on the UI thread."""
    return _warmed.is_set()


class SiteOpener:
    """Opens sites for the session `s`, one at a time: opening another cancels the one under way."""

    def __init__(self, session) -> None:
        self.s = session
        self._open_worker = None
        self._open_cancel = threading.Event()
        self._warm_planned = False  # `warm_after_first_site` asked for the warm-up
        self._warming = False  # `warm_up` started

    @property
    def opening(self) -> bool:
        return self._open_worker is not None

    def open(self, site_dir: str | Path, *, rescan: bool = False):
        """Index the site in a worker (progress on `indexing`); the stack shows when it returns."""
        from reviewer.record.scan import open_index

        if self._open_worker is not None:
            self._open_cancel.set()
        self._open_cancel = threading.Event()
        cancel = self._open_cancel
        progress = Progress()
        progress.changed.connect(self.s.indexing)
        db = self.s.db

        composite, cache = self.s.state.composite, self.s.cache

        def work() -> SceneIndex:
            from reviewer.store import Store

            with Store(db) as store:
                index = open_index(site_dir, store, rescan=rescan, progress=progress, cancel=cancel.is_set)
            # a lon/lat grid's cell measured on its ellipsoid here: the first one imported pyproj on the UI thread
            _ = index.site.cell_m  # (~35 ms there; a cached property, read by the layers' scale and the scale bar)
            try:  # read, reproject and rasterize the boundary here; the UI thread only draws it
                site_boundary_raster(index.site)
            except ReviewerError:
                pass  # reported when the boundary is drawn
            site_choices(index)  # the Stack dock's composites, sensors and years, made here (the UI thread sets them)
            # the first date is read here, so showing the site does not wait on disk in the UI thread
            first = open_stack(index, composite=composite, cache=cache)
            if len(first) and not cancel.is_set():
                try:
                    self.s.read_frame(first, composite, 0)
                except ReviewerError:
                    logger.debug("first date not preloaded", exc_info=True)  # shown as a message when displayed
            return index

        self.s.reporter.forget()
        self.s.busy.emit(True)
        self.s.indexing.emit(0.0, f"opening {site_dir}")

        def done(index: SceneIndex) -> None:
            self._open_worker = None
            self.s.busy.emit(False)
            progress.deleteLater()
            if not cancel.is_set():
                self.s.show_index(index)

        def failed(exc: BaseException) -> None:
            self._open_worker = None
            self.s.busy.emit(False)
            self.s.indexing.emit(1.0, "")
            if not cancel.is_set():  # the Stack dock says it where the site would be (a notification fades)
                why = str(exc) if isinstance(exc, ReviewerError) else f"{type(exc).__name__}: {exc}"
                self.s.site_failed.emit(str(site_dir), why)
            self.s.reporter.error(exc, context="cannot open the site")

        self._open_worker = run_in_thread(work, on_done=done, on_error=failed)
        self._open_worker.progress_ref = progress  # keep the QObject alive with the worker
        return self._open_worker

    def cancel(self) -> None:
        self._open_cancel.set()

    def warm_after_first_site(self) -> None:
        """`warm_up` once the first site's imagery is on screen: imported at start-up, its modules competed with the
        first imagery (issue 27's launch figure)."""
        if not self._warm_planned:
            self._warm_planned = True
            # on the next turn: the launch shows its window then, with the first site (main_window._show_built_window)
            QTimer.singleShot(0, lambda: after_next_paint(self.s.viewer, self.warm_up))

    def warm_up(self) -> None:
        """Import the modules later work needs (`warm_imports`: pandas for the boundary's and a region's shapes
        layers, the colour tables) in a thread, then draw the boundary if it waited for them (`modules_ready`)."""
        if not self._warming:
            self._warming = True
            self.s.modules_ready.connect(self.s.canvas.modules_in, Qt.QueuedConnection)  # drawn on the UI thread
            threading.Thread(target=self._warm, name="warm-imports", daemon=True).start()

    def _warm(self) -> None:
        """The warm-up thread: no Qt worker, so a window closed meanwhile leaves nothing to deliver to."""
        try:
            warm_imports()
        finally:
            try:
                self.s.modules_ready.emit()  # queued to the UI thread
            except RuntimeError:  # the session was deleted meanwhile (its window closed)
                pass
