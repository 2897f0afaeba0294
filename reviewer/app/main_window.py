"""The reviewer window: a napari viewer with the tool's docks (stack controls, status line, trajectory,
coverage, chip strip, pair view, and the scoring panel when present), keys, and the launch entry point.
"""

from __future__ import annotations

import logging
from pathlib import Path

from reviewer.app.errors import ErrorReporter
from reviewer.app.jobs import Progress, alive, run_in_thread
from reviewer.app.recent import RecentSites
from reviewer.app.session import StackSession
from reviewer.app.state import ViewState
from reviewer.record.demo import ensure_demo_site

logger = logging.getLogger(__name__)

WINDOW_SIZE = (1560, 960)


class ReviewerApp:
    """Builds the docks on a napari viewer around one `StackSession`."""

    def __init__(
        self,
        viewer,
        *,
        db: str | Path | None = None,
        recent: RecentSites | None = None,
        prefetch: bool = True,
        async_slicing: bool = False,
        scoring: bool = True,
    ) -> None:
        from reviewer.app.qt_chips import QtChipStrip
        from reviewer.app.qt_controls import QtStackControls
        from reviewer.app.qt_coverage import QtCoveragePlot
        from reviewer.app.qt_pair import QtPairView
        from reviewer.app.qt_status import QtStatusLine
        from reviewer.app.qt_trajectory import QtTrajectoryPlot

        self.viewer = viewer
        self.state = ViewState()
        self.reporter = ErrorReporter()
        self.session = StackSession(
            viewer,
            state=self.state,
            reporter=self.reporter,
            db=db,
            recent=recent or RecentSites(),
            prefetch=prefetch,
            async_slicing=async_slicing,
        )
        self._busy = False
        self.session.busy.connect(lambda busy: setattr(self, "_busy", bool(busy)))
        self.controls = QtStackControls(self.session)
        self.status = QtStatusLine(self.session)
        self.trajectory = QtTrajectoryPlot(self.session)
        self.coverage = QtCoveragePlot(self.session)
        self.chips = QtChipStrip(self.session)
        self.pair = QtPairView(self.session)
        win = viewer.window
        self.docks = {
            "Stack": win.add_dock_widget(self.controls, name="Stack", area="right"),
            "Status": win.add_dock_widget(self.status, name="Status", area="top"),
            "Trajectory": win.add_dock_widget(self.trajectory, name="Trajectory", area="bottom"),
            "Coverage": win.add_dock_widget(self.coverage, name="Coverage", area="bottom", tabify=True),
            "Chips": win.add_dock_widget(self.chips, name="Chips", area="bottom", tabify=True),
            "Pair": win.add_dock_widget(self.pair, name="Pair", area="bottom", tabify=True),
        }
        # after the docks' own site_opened handlers: paint the whole window while the site is opening,
        # not on the user's first keypress (a full repaint of the docks costs ~100 ms once)
        self.session.site_opened.connect(self._repaint_window)
        if scoring:
            self._add_scoring_panel()
        self.bind_keys()
        self._raise_default_docks()
        try:
            from qtpy.QtCore import Qt

            qwin = win._qt_window  # noqa: SLF001 - napari has no public resize
            # the side dock areas take the corners, so the bottom docks sit under the canvas only
            qwin.setCorner(Qt.BottomLeftCorner, Qt.LeftDockWidgetArea)
            qwin.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)
            qwin.resize(*WINDOW_SIZE)
            qwin.resizeDocks([self.docks["Trajectory"]], [340], Qt.Vertical)
            qwin.resizeDocks([self.docks["Stack"]], [440], Qt.Horizontal)
        except AttributeError:
            pass

    def start_review(self, user: str, role: str, *, store=None, prefetch: bool = True):
        """Add the review dock for this user (their role's modes), the review keys and the title."""
        from reviewer.app.qt_review import ReviewDock
        from reviewer.store import Store

        self.review_store = store or Store(self.session.db)
        self.review = ReviewDock(self, self.review_store, user, role, prefetch=prefetch)
        self.review.setMinimumWidth(480)
        self.docks["Review"] = self.viewer.window.add_dock_widget(self.review, name="Review", area="left")
        self.session.who = f"{user} ({role})"
        self.viewer.title = self.session.window_title(
            f"{self.session.index.site.name} ({self.session.index.site.id})" if self.session.index else None
        )
        qt_viewer = getattr(self.viewer.window, "_qt_viewer", None)  # noqa: SLF001 - napari's own docks
        for name in ("dockLayerControls", "dockLayerList"):  # the review dock takes their column
            napari_dock = getattr(qt_viewer, name, None)
            if napari_dock is not None:
                napari_dock.hide()
        qwin = getattr(self.viewer.window, "_qt_window", None)  # noqa: SLF001 - shortcuts need the window
        if qwin is not None:
            self.review.install_keys(qwin)
            try:
                from qtpy.QtCore import Qt

                qwin.resizeDocks([self.docks["Review"]], [520], Qt.Horizontal)
            except AttributeError:
                pass
        # P is 'previous item' while reviewing: the pair view moves to Shift+P
        self.viewer.bind_key("Shift-P", lambda viewer: self._on_pair_key(), overwrite=True)
        return self.review

    def _repaint_window(self, _index=None) -> None:
        qwin = getattr(self.viewer.window, "_qt_window", None)  # noqa: SLF001 - no public handle
        if qwin is not None and alive(qwin):
            qwin.repaint()

    @property
    def settled(self) -> bool:
        """True when no background work is still to land on the UI thread (site open, glyphs, chips,
        trajectory): what a user sees a moment after a site opened; benchmarks start from here."""
        return not (self._busy or self.session.glyphs.pending or self.chips.busy or self.trajectory.busy)

    def _add_scoring_panel(self) -> None:
        try:
            from reviewer.app.scoring_panel import ScoringPanel
        except ImportError:
            logger.info("no scoring panel module; the Scoring dock is skipped")
            return
        try:
            panel = ScoringPanel(viewer=self.viewer)
        except Exception as exc:  # noqa: BLE001 - another team's panel must not stop the viewer
            self.reporter.error(exc, context="the Scoring panel could not be built")
            return
        self.docks["Scoring"] = self.viewer.window.add_dock_widget(panel, name="Scoring", area="right", tabify=True)

    def _raise_default_docks(self) -> None:
        """Stack controls and the trajectory are the tabs in front (after Qt has placed every dock)."""
        from qtpy.QtCore import QTimer

        def front() -> None:
            for name in ("Stack", "Trajectory"):
                dock = self.docks.get(name)
                if dock is not None and alive(dock):
                    dock.raise_()

        front()
        QTimer.singleShot(0, front)

    # ------------------------------------------------------------------ keys

    def bind_keys(self) -> None:
        v = self.viewer
        s = self.session
        bindings = {
            "Left": lambda viewer: s._on_prev_date(),
            "Right": lambda viewer: s._on_next_date(),
            "Shift-Left": lambda viewer: s._on_prev_year(),
            "Shift-Right": lambda viewer: s._on_next_year(),
            "P": lambda viewer: self._on_pair_key(),
            "S": lambda viewer: s.toggle_lock(),
            "O": lambda viewer: setattr(self.state, "overlay", not self.state.overlay),
            "F1": lambda viewer: self._on_help_key(),
        }
        for key, func in bindings.items():
            v.bind_key(key, func, overwrite=True)
        # napari binds O on image layers (orient the 3D plane), and layer keys win over the viewer's: this
        # viewer is 2D, so O is the quality overlay the Keys dialog lists
        from napari.utils.action_manager import action_manager

        action_manager.unbind_shortcut("napari:orient_plane_normal_along_view_direction")

    def _on_pair_key(self):
        """P: show the pair view (the remembered pair, else the first date and the shown date)."""
        dock = self.docks["Pair"]
        dock.show()
        dock.raise_()
        pair = self.state.pair or self.pair.default_pair()
        if pair is None:
            self.reporter.info("open a site first")
            return None
        return self.pair._on_show_pair(*pair)

    def _on_help_key(self):
        from reviewer.app.qt_help import show_help

        window = self.viewer.window
        self._help = show_help(window._qt_window, return_focus=window._qt_viewer.canvas.native)  # noqa: SLF001
        return self._help

    def close(self, wait_ms: int = 15000) -> None:
        """Cancel background work and wait for worker threads, so none outlives the window's signals."""
        from qtpy.QtCore import QThreadPool

        store = getattr(self, "review_store", None)
        if store is not None:
            self.review.loader.closed = True
            store.close()
            self.review_store = None

        self.trajectory._cancel.set()
        self.session.close()
        QThreadPool.globalInstance().waitForDone(wait_ms)

    # ------------------------------------------------------------------ opening

    def open_site(self, site_dir: str | Path):
        return self.session.open_site(site_dir)

    def open_demo(self, **kwargs):
        """Generate the demo site once (worker, progress) and open it."""
        progress = Progress()
        progress.changed.connect(self.session.indexing)
        self.session.busy.emit(True)
        self.session.indexing.emit(0.0, "preparing the demo site (generated once, then cached)")

        def done(path: Path) -> None:
            self.session.busy.emit(False)
            self.session.open_site(path)

        def failed(exc: BaseException) -> None:
            self.session.busy.emit(False)
            self.reporter.error(exc, context="demo site")

        worker = run_in_thread(ensure_demo_site, progress, on_done=done, on_error=failed, **kwargs)
        worker.progress_ref = progress
        return worker


def launch(
    site_dir: str | Path | None = None,
    *,
    demo: bool = False,
    db: str | Path | None = None,
    screenshot: str | Path | None = None,
    user: str | None = None,
) -> int:
    """Open the window (optionally a site or the demo) and run the Qt event loop.

    Asks who is working when the store has profiles (`user` or REVIEWER_USER skip the question) and then
    adds the review dock; the first item's evidence opens its site.

    With `screenshot`, save the whole window once the site's first date is on screen, then quit
    (for machines without a display: `make demo` runs this under Xvfb).
    """
    import napari

    viewer = napari.Viewer(title="EarthRecord Reviewer")
    app = ReviewerApp(viewer, db=db)
    _ask_who(app, user)
    if screenshot:
        _screenshot_when_shown(app, Path(screenshot))
    if demo:
        app.open_demo()
    elif site_dir:
        app.open_site(site_dir)
    viewer._reviewer_app = app  # keep the docks' controller alive with the viewer
    napari.run()
    app.close()
    return 0


def _ask_who(app: ReviewerApp, user: str | None) -> None:
    """Start the review dock for the person working, if the store has profiles."""
    from reviewer.app.qt_review_login import who_is_working
    from reviewer.errors import ReviewerError
    from reviewer.store import Store

    try:
        store = Store(app.session.db)
        who = who_is_working(store, user)
    except ReviewerError as exc:
        app.reporter.error(exc, context="review")
        return
    if who is None:
        store.close()
        return
    app.start_review(*who, store=store)


def _screenshot_when_shown(app: ReviewerApp, path: Path, timeout_s: float = 120.0) -> None:
    """Poll until the stack layer has data on the canvas, save the window, close it."""
    import time

    from qtpy.QtCore import QTimer

    started = time.monotonic()
    timer = QTimer()
    timer.setInterval(500)

    def poll() -> None:
        shown = app.state.site_dir is not None and app.session.frame_shown() and app.settled
        if shown or time.monotonic() - started > timeout_s:
            timer.stop()
            path.parent.mkdir(parents=True, exist_ok=True)
            app.viewer.screenshot(str(path), canvas_only=False)
            logger.warning("saved a screenshot of the window to %s", path)
            app.viewer.close()

    timer.timeout.connect(poll)
    timer.start()
    app._screenshot_timer = timer
