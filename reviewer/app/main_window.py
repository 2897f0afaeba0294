"""The reviewer window: a napari viewer with the tool's docks (stack controls, status line, trajectory,
coverage, chip strip, pair view, and the scoring panel when present), keys, and the launch entry point.
"""

from __future__ import annotations

import logging
from pathlib import Path

from qtpy.QtCore import QEvent, QObject, QSize
from qtpy.QtWidgets import QFrame, QScrollArea

from reviewer.app.errors import ErrorReporter
from reviewer.app.jobs import Progress, alive, run_in_thread
from reviewer.app.qt_caption import QtDateSlider, caption_over_canvas
from reviewer.app.qt_dock_keys import follow_tab, hold_tabs_behind
from reviewer.app.qt_lazy import LazyTab
from reviewer.app.qt_wheel import guard_wheel, mark_own
from reviewer.app.qt_window import (
    after_next_paint,
    canvas_widget,
    give_keys_to_canvas,
    main_window,
    napari_docks,
)
from reviewer.app.recent import RecentSites
from reviewer.app.session import StackSession
from reviewer.app.state import ViewState
from reviewer.errors import ReviewerError
from reviewer.record.demo import cached_demo_site, ensure_demo_site

logger = logging.getLogger(__name__)

#: the window's size where the screen has room; on a smaller screen it takes the available area
WINDOW_SIZE = (1560, 960)
#: room kept for a window manager's title bar before the window is shown (its frame is unknown until then)
FRAME_ALLOWANCE = 32
#: a vertical scroll bar's width (napari's style) plus a margin
SCROLL_BAR_ALLOWANCE = 20
#: the longest the built window waits hidden for the first site's stack (a slow disk or a demo being generated
#: shows the window with its progress instead)
SHOW_WAIT_MS = 1500
#: the status bar's hint (napari's own names its layer-mode keys, which the review's keys replace)
KEYS_HINT = "F1: the keys of this window"


class DockScroll(QScrollArea):
    """A dock's content in a scroll area: the content fills the dock and scrolls only below its own
    minimum size. (Qt's resizable scroll area sizes word-wrapped content by its preferred height, which
    put a scroll bar on every dock with a plot and a wrapped caption.)"""

    def __init__(self, widget, *, natural_height: bool = False) -> None:
        super().__init__()
        self.natural_height = natural_height  # forms scroll at their own height rather than squeeze rows
        self.setObjectName(f"{widget.objectName() or type(widget).__name__} scroll")
        self.setFrameShape(QFrame.NoFrame)
        self.setWidgetResizable(False)
        self.setWidget(widget)
        widget.installEventFilter(self)

    def _fit(self) -> None:
        w = self.widget()
        if w is None:
            return
        need = w.minimumSizeHint().expandedTo(w.minimumSize())
        view = self.maximumViewportSize()  # the viewport without scroll bars
        if self.natural_height and w.sizeHint().height() > view.height():
            need.setHeight(max(need.height(), w.sizeHint().height()))
        width = max(view.width(), need.width())
        height = max(view.height(), need.height())
        # a scroll bar one way takes room the other way
        if width > view.width():
            height = max(height - self.horizontalScrollBar().sizeHint().height(), need.height())
        if height > view.height():
            width = max(width - self.verticalScrollBar().sizeHint().width(), need.width())
        if w.size() != QSize(width, height):
            w.resize(width, height)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._fit()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.widget() and event.type() == QEvent.LayoutRequest:
            self._fit()
        return super().eventFilter(obj, event)

    def sizeHint(self) -> QSize:  # noqa: N802 - what the dock would like, not what it needs
        w = self.widget()
        return w.sizeHint() if w is not None else super().sizeHint()

    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: N802, A002 - Qt override (Tab / Shift+Tab in the dock)
        """Tab goes round the docks' fields and the canvas, not into napari's widgets (`qt_dock_keys.tab_round`)."""
        from reviewer.app.qt_dock_keys import tab_round

        return tab_round(next) or super().focusNextPrevChild(next)


class _FitOnShown(QObject):
    """Calls `fit()` once, at the first resize of `widget` in a window shown on screen, then lets go."""

    def __init__(self, widget, fit) -> None:
        super().__init__(widget)
        self.fit = fit
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize and watched.window().isVisible():
            watched.removeEventFilter(self)
            self.fit()
        return False


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
        warm_canvas: bool = True,
        site: str | Path | None = None,
        demo: bool = False,
        later: bool = False,
    ) -> None:
        """`warm_canvas=False`: the image layer is made by the first open, as before (benchmarks).
        `site` or `demo`: open that site (the demo site) from the start: its worker (index, boundary, first date read)
        then runs while the docks are built; what it found is shown from the event loop, once the window is whole.
        `later`: what the first imagery does not need waits for `after_first_imagery`, which the launch calls once it
        is on screen: the Trajectory plot (in front, empty until a pixel is clicked; pyqtgraph and the plot cost
        ~0.15 s of CPU), the canvas's scale bar (its visual) and
        the wheel guard (a Python filter of every Qt event, ~9,000 events before the imagery)."""
        from reviewer.app.qt_chips import QtChipStrip
        from reviewer.app.qt_controls import QtStackControls
        from reviewer.app.qt_status import QtStatusLine

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
        viewer.title = "EarthRecord Reviewer"
        if not later:
            guard_wheel()
        self.session.canvas.overlays_held = later  # the scale bar: after the first imagery
        # the date caption in a label over the canvas's top-left corner (shown once a date is)
        self.caption = caption_over_canvas(viewer, self.session.caption)
        self._busy = False
        self.session.busy.connect(lambda busy: setattr(self, "_busy", bool(busy)))
        self.controls = QtStackControls(self.session)
        self.status = QtStatusLine(self.session)
        # the date slider: the app's own, under the canvas where napari's dims bar was (the date is no dims axis)
        dates = self.session.dates
        self.date_slider = QtDateSlider(dates.position, dates.jump_to_index, dates.step_year)
        self.trajectory_tab = LazyTab(self._make_trajectory, "Trajectory", held=later)
        if not later:
            self.trajectory_tab.content()
        self.coverage_tab = LazyTab(self._make_coverage, "Coverage")  # built when its tab is first picked
        self.chips = QtChipStrip(self.session)
        self.pair_tab = LazyTab(self._make_pair, "Pair")  # built when its tab is first picked, or by P
        # the first site's worker starts once the docks that follow the open (progress, site_opened) exist: building
        # the rest of the window (~1 s on the UI thread) no longer comes before the index read and the first date
        if demo:
            self.open_demo()
        elif site:
            self.open_site(site)
        self.docks: dict[str, object] = {}
        self.add_dock("Stack", self.controls, "right")
        self.add_dock("Status", self.status, "top", scroll=False)
        self.add_dock("Date", self.date_slider, "bottom", scroll=False)
        self.add_dock("Trajectory", self.trajectory_tab, "bottom")
        self._slider_over("Trajectory")
        self.add_dock("Coverage", self.coverage_tab, "bottom", tabify=True)
        self.add_dock("Chips", self.chips, "bottom", tabify=True)
        self.add_dock("Pair", self.pair_tab, "bottom", tabify=True)
        # after the docks' own site_opened handlers: paint the whole window while the site is opening,
        # not on the user's first keypress (a full repaint of the docks costs ~100 ms once)
        self.session.site_opened.connect(self._repaint_window)
        if scoring:
            self._add_scoring_panel()
        self.bind_keys()
        # the image layer made now, while the user picks a site: the first one held the open ~1 s
        if warm_canvas:
            self.session.warm_canvas()
        self._raise_default_docks()
        self._add_menu()
        self.show_napari_docks(False)  # napari's layer list and controls mean nothing to an annotator
        self.fit_to_screen()

    # ------------------------------------------------------------------ layout

    def add_dock(
        self, name: str, widget, area: str, *, tabify: bool = False, scroll: bool = True, form: bool | None = None
    ):
        """Mount `widget` as dock `name` in `area` ("right", "bottom", "left", "top"); `tabify` puts it behind
        the area's last dock as a tab. The widget sits in a scroll area, so content taller or wider than the
        dock scrolls instead of raising the dock's (and so the window's) minimum size: the window never grows
        past the screen by itself. A `form` (default: a side dock) scrolls at its natural height rather than
        squeezing its rows; other docks (plots) shrink to their minimum first. Returns napari's dock widget,
        also kept in `self.docks[name]`."""
        if form is None:
            form = area in ("left", "right")
        mark_own(widget)  # the wheel scrolls it unless a value widget in it has the focus (qt_wheel)
        content = DockScroll(widget, natural_height=form) if scroll else widget
        dock = self.viewer.window.add_dock_widget(
            content, name=name, area=area, tabify=tabify, add_vertical_stretch=False
        )
        follow_tab(dock, widget)  # a tab behind another is no Tab stop (Qt keeps it shown off the window)
        if hasattr(widget, "on_shown"):  # a tab brought to the front draws what changed while it was behind
            dock.visibilityChanged.connect(lambda visible, w=widget: visible and alive(w) and w.on_shown())
        self.docks[name] = dock
        return dock

    def _slider_over(self, name: str) -> None:
        """The date slider's strip across the canvas's width, over dock `name` (the bottom docks' tabs: Qt puts a
        second bottom dock beside the first)."""
        from qtpy.QtCore import Qt
        from qtpy.QtWidgets import QDockWidget, QWidget

        date = self.docks["Date"]
        # no title bar and its row's height (napari's docks are 50 px tall at least, twice the row) and neither
        # movable nor closable: a strip of the canvas, as napari's dims bar was
        date.setTitleBarWidget(QWidget())
        date.setFeatures(QDockWidget.DockWidgetFeature.NoDockWidgetFeatures)
        date.setMinimumHeight(0)  # (napari's docks are at least 50 px tall)
        date.setFixedHeight(self.date_slider.sizeHint().height())
        qwin = main_window(self.viewer)
        if qwin is not None:
            qwin.splitDockWidget(date, self.docks[name], Qt.Orientation.Vertical)
        # the bottom docks' heights once the window is laid out on screen: asked before (`fit_to_screen`, a window
        # not shown or not laid out yet), Qt kept the bottom area's old height and the strip came out of the
        # Trajectory's (its plot 152 px tall at 1366 x 768) instead of the canvas's
        self._fit_once = _FitOnShown(date, self.fit_bottom)

    def fit_to_screen(self) -> None:
        """Size the window to WINDOW_SIZE or the screen's available area, whichever is smaller, and place its
        frame inside that area; the right and bottom docks get a share of the window that fits both."""
        from qtpy.QtCore import Qt

        qwin = main_window(self.viewer)
        if qwin is None:
            return
        screen = qwin.screen()
        avail = screen.availableGeometry()
        # the window manager's frame (title bar, borders) counts against the screen too
        dw = max(qwin.frameGeometry().width() - qwin.width(), 0)
        dh = max(qwin.frameGeometry().height() - qwin.height(), 0)
        if not qwin.isVisible():
            dh = FRAME_ALLOWANCE
        w = min(WINDOW_SIZE[0], avail.width() - dw)
        h = min(WINDOW_SIZE[1], avail.height() - dh)
        # the side dock areas take the corners, so the bottom docks sit under the canvas only
        qwin.setCorner(Qt.BottomLeftCorner, Qt.LeftDockWidgetArea)
        qwin.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)
        qwin.resize(w, h)
        x = min(max(qwin.frameGeometry().x(), avail.x()), avail.right() + 1 - w - dw)
        y = min(max(qwin.frameGeometry().y(), avail.y()), avail.bottom() + 1 - h - dh)
        qwin.move(max(x, avail.x()), max(y, avail.y()))
        self.fit_bottom(h)
        # the Stack dock as wide as its controls (and a scroll bar) need, so only its height scrolls
        need = self.controls.minimumSizeHint().width() + SCROLL_BAR_ALLOWANCE
        qwin.resizeDocks([self.docks["Stack"]], [max(min(440, int(w * 0.3)), min(need, int(w * 0.4)))], Qt.Horizontal)

    def fit_bottom(self, height: int | None = None) -> None:
        """The date slider's strip at its own height over the Trajectory's (its plot >= 150 px) in a window `height`
        tall (default: the window's): the canvas gives up the strip's height, as it gave napari's dims row."""
        from qtpy.QtCore import Qt

        qwin = main_window(self.viewer)
        if qwin is None:
            return
        h = qwin.height() if height is None else height
        date, traj = self.docks["Date"], self.docks["Trajectory"]
        qwin.resizeDocks([date, traj], [date.minimumSizeHint().height(), min(360, int(h * 0.42))], Qt.Vertical)

    def make_room_for(self, name: str, share: float = 0.45) -> None:
        """Give a bottom dock at least `share` of the window's height (the pair view's square panels are as
        wide as the dock is tall), when the user asks for that dock."""
        from qtpy.QtCore import Qt

        qwin = main_window(self.viewer)
        dock = self.docks.get(name)
        if qwin is None or dock is None or dock.height() >= share * qwin.height():
            return
        qwin.resizeDocks([dock], [int(share * qwin.height())], Qt.Vertical)

    def _add_menu(self) -> None:
        """A Reviewer menu: napari's layer list and controls come back from here (hidden by default)."""
        bar = getattr(self.viewer.window, "main_menu", None)  # napari's menu bar
        if bar is None:
            return
        menu = bar.addMenu("&Reviewer")
        self.napari_docks_action = menu.addAction("napari layer list and controls")
        self.napari_docks_action.setCheckable(True)
        self.napari_docks_action.setToolTip("show napari's own layer list and layer controls (for napari users)")
        self.napari_docks_action.toggled.connect(self.show_napari_docks)
        self.generate_action = menu.addAction("Generate questions…")
        self.generate_action.setToolTip("generate candidate questions for one or many sites (reviewer generate)")
        self.generate_action.triggered.connect(self.show_generate_panel)
        from reviewer.app.qt_dock_keys import add_dock_keys

        add_dock_keys(self, menu)  # Ctrl+1..9 bring a dock to the front (a tab behind another had no key)
        self.reviewer_menu = menu

    def show_generate_panel(self, _checked: bool = False):
        """The maintainer's Generate dock (reviewer generate SITE [SITE ...]): mounted once, then raised."""
        from reviewer.app.qt_generate import GeneratePanel

        if "Generate" not in self.docks:
            site = self.session.index.site.dir if self.session.index else None
            self.generate_panel = GeneratePanel(sites=[site] if site else None)
            self.add_dock("Generate", self.generate_panel, "right")
        self.docks["Generate"].show()
        self.docks["Generate"].raise_()
        return self.generate_panel

    def show_napari_docks(self, on: bool) -> None:
        """Show or hide napari's layer controls and layer list (the Reviewer menu's check follows)."""
        for napari_dock in napari_docks(self.viewer):
            napari_dock.setVisible(bool(on))
        action = getattr(self, "napari_docks_action", None)
        if action is not None and action.isChecked() != bool(on):
            action.blockSignals(True)
            action.setChecked(bool(on))
            action.blockSignals(False)

    def start_review(self, user: str, role: str, *, store=None, prefetch: bool = True):
        """Add the review dock for this user (their role's modes), the review keys and the title."""
        from reviewer.app.qt_review import ReviewDock
        from reviewer.store import Store

        self.review_store = store or Store(self.session.db)
        self.session.site.warm_up()  # the first item draws its region, a shapes layer: pandas imported in a worker meanwhile
        self.review = ReviewDock(self, self.review_store, user, role, prefetch=prefetch)
        if role != "maintainer" and getattr(self, "generate_action", None) is not None:
            self.generate_action.setVisible(False)  # generation is the maintainer's; an annotator sees review only
        self.add_dock("Review", self.review, "left", form=False)  # its list and focus view shrink for the flag bar
        self.session.who = f"{user} ({role})"
        self.viewer.title = self.session.window_title(
            f"{self.session.index.site.name} ({self.session.index.site.id})" if self.session.index else None
        )
        self.show_napari_docks(False)  # the review dock takes their column
        qwin = main_window(self.viewer)
        if qwin is not None:
            self.review.install_keys(qwin)
            try:
                from qtpy.QtCore import Qt

                qwin.resizeDocks([self.docks["Review"]], [min(520, int(qwin.width() * 0.34))], Qt.Horizontal)
                self.fit_bottom()
            except AttributeError:
                pass
        # P is 'previous item' while reviewing: the pair view moves to Shift+P
        self.viewer.bind_key("Shift-P", lambda viewer: self.show_pair(), overwrite=True)
        return self.review

    def _repaint_window(self, _index=None) -> None:
        """The first site: paint the window once. Later sites repaint only the docks that change (a whole-window
        paint is 100-200 ms on a software-GL canvas, one UI block per site change)."""
        if getattr(self, "_painted_once", False):
            return
        self._painted_once = True
        qwin = main_window(self.viewer)
        if qwin is not None and alive(qwin):
            qwin.update()  # queued, not synchronous: a full repaint blocked a site change 0.6-0.7 s

    @property
    def settled(self) -> bool:
        """True when no background work is still to land on the UI thread (site open, chips,
        trajectory): what a user sees a moment after a site opened; benchmarks start from here."""
        busy = self._busy or self.chips.busy or self.session.canvas.boundary_waiting or self.trajectory_tab.held
        return not (busy or (self.trajectory_tab.built and self.trajectory.busy))

    def _add_scoring_panel(self) -> None:
        """The Scoring tab, its panel built when the tab is first picked (its scoring loads when a score runs)."""

        def build():
            from reviewer.app.scoring_panel import ScoringPanel

            return ScoringPanel(viewer=self.viewer)  # a failure to build it is a bug, not a condition

        self.scoring_tab = LazyTab(build, "Scoring")
        self.add_dock("Scoring", self.scoring_tab, "right", tabify=True)

    @property
    def scoring_panel(self):
        """The Scoring dock's panel (built now if its tab was never picked)."""
        return self.scoring_tab.content()

    @property
    def trajectory(self):
        """The Trajectory dock's plot (built now if the launch had not built it yet)."""
        return self.trajectory_tab.content()

    @property
    def pair(self):
        """The Pair dock's view (built now if its tab was never picked)."""
        return self.pair_tab.content()

    def after_first_imagery(self) -> None:
        """What `later` held back: the wheel guard installed, the scale bar shown, the Trajectory
        plot built (the launch calls this once the first imagery is on screen)."""
        guard_wheel()
        self.session.canvas.release_overlays()
        self.trajectory_tab.release()

    def _make_trajectory(self):
        from reviewer.app.qt_trajectory import QtTrajectoryPlot

        return QtTrajectoryPlot(self.session)

    def _make_pair(self):
        from reviewer.app.qt_pair import QtPairView

        return QtPairView(self.session)

    @property
    def coverage(self):
        """The Coverage dock's plot (built now if its tab was never picked)."""
        return self.coverage_tab.content()

    def _make_coverage(self):
        from reviewer.app.qt_coverage import QtCoveragePlot

        return QtCoveragePlot(self.session)

    def _raise_default_docks(self) -> None:
        """Stack controls and the trajectory are the tabs in front (after Qt has placed every dock)."""
        from qtpy.QtCore import QTimer

        def front() -> None:
            qwin = main_window(self.viewer)
            for name in ("Stack", "Trajectory"):
                dock = self.docks.get(name)
                if dock is not None and alive(dock):
                    dock.raise_()
                    if qwin is not None and alive(qwin):
                        hold_tabs_behind(qwin, dock)  # Qt says nothing of the tabs placed behind (`follow_tab`)

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
            "P": lambda viewer: self.show_pair(),
            "S": lambda viewer: s.toggle_lock(),
            "O": lambda viewer: setattr(self.state, "overlay", not self.state.overlay),
            "F1": lambda viewer: self._on_help_key(),
        }
        for key, func in bindings.items():
            v.bind_key(key, func, overwrite=True)
        v.layers.events.inserted.connect(self._name_the_keys)
        self._name_the_keys()
        # napari binds O on image layers (orient the 3D plane), and layer keys win over the viewer's: this
        # viewer is 2D, so O is the quality overlay the Keys dialog lists
        from napari.utils.action_manager import action_manager

        action_manager.unbind_shortcut("napari:orient_plane_normal_along_view_direction")

    def _name_the_keys(self, event=None) -> None:
        """The status bar's hint names F1: napari's names its layer-mode keys ('use <2> for transform'), and here 1-4
        are the review's (flag reasons) and the layer modes are not used. Set after napari's own (on insert)."""
        for layer in self.viewer.layers:
            layer.help = KEYS_HINT
        self.viewer.help = KEYS_HINT

    def show_pair(self):
        """P: show the pair view (the remembered pair, else the first date and the shown date)."""
        dock = self.docks["Pair"]
        dock.show()
        dock.raise_()
        self.make_room_for("Pair")
        pair = self.state.pair or self.pair.default_pair()
        if pair is None:
            self.reporter.info("open a site first")
            return None
        return self.pair._on_show_pair(*pair)

    def _on_help_key(self):
        from reviewer.app.qt_help import show_help

        self._help = show_help(main_window(self.viewer), return_focus=canvas_widget(self.viewer))
        return self._help

    def close(self, wait_ms: int = 15000) -> None:
        """Cancel background work and wait for worker threads, so none outlives the window's signals."""
        from qtpy.QtCore import QThreadPool

        store = getattr(self, "review_store", None)
        if store is not None:
            self.review.loader.closed = True
            store.close()
            self.review_store = None

        if self.trajectory_tab.built:
            self.trajectory._cancel.set()
        self.session.close()
        QThreadPool.globalInstance().waitForDone(wait_ms)

    # ------------------------------------------------------------------ opening

    def open_site(self, site_dir: str | Path):
        return self.session.open_site(site_dir)

    def open_demo(self, **kwargs):
        """Generate the demo site once (worker, progress) and open it; a demo already in the cache opens at once
        (the generation worker's result waited for the event loop, so the open started only after the window)."""
        cached = None if kwargs else cached_demo_site()
        if cached is not None:
            return self.session.open_site(cached)
        progress = Progress()
        progress.changed.connect(self.session.indexing)
        self.session.busy.emit(True)
        self.session.indexing.emit(0.0, "preparing the demo site (generated once, then cached)")

        def done(path: Path) -> None:
            # still busy: the open says so next (busy off and on again showed and hid the progress row between the
            # two, each time a re-layout and a canvas paint)
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

    # the window is built hidden and shown once whole: each dock added to a shown window resized the canvas and
    # painted it (a software-GL paint is 0.1-0.5 s; five of them came before the first imagery)
    viewer = napari.Viewer(title="EarthRecord Reviewer", show=False)
    # the site's worker (index, first date read) starts while the window is built, so the two overlap
    app = ReviewerApp(viewer, db=db, site=site_dir, demo=demo, later=True)
    _ask_who(app, user)
    failure: list[str] = []
    if screenshot:
        _screenshot_when_shown(app, Path(screenshot), failure)
    _show_built_window(app)
    napari.run()
    app.close()
    if screenshot:
        end_screenshot_run(app, failure)
    return 0


def end_screenshot_run(app: ReviewerApp, failure: list[str]) -> None:
    """A --screenshot run's errors, which its reporter held (`notify` False), each said once: a site that could not
    open raised for main.py's `error:` line (status 2), any other error as a log line."""
    if failure:  # the window saved as it was
        raise ReviewerError(failure[0])
    for level, text in app.reporter.messages:
        if level == "error":
            logger.error("%s", text)


def _show_built_window(app: ReviewerApp, wait_ms: int = SHOW_WAIT_MS) -> None:
    """Show the window built hidden once the site being opened has its stack (or after `wait_ms`), at the size and
    place `fit_to_screen` gave it, keys on the canvas. Shown before the stack, the window was painted three times
    before the first imagery (at show, again when the date slider appeared with the stack's dates and when the
    layout settled; 0.1-0.3 s of CPU each on a software-GL canvas): shown with the stack, its first paint has the
    final layout and the next one the imagery. Qt's own show: napari's `Window.show()` would now put back the
    geometry and dock layout an earlier napari session saved (meant for napari's docks, it moved and resized the
    app's docks, and a 1366 px session shrank the canvas)."""
    from qtpy.QtCore import QTimer

    qwin = main_window(app.viewer)
    if qwin is None:
        app.viewer.window.show()
        app.after_first_imagery()
        return

    def show(*_args) -> None:
        if not alive(qwin) or qwin.isVisible():
            return
        # the site was fitted while the window was hidden, to a canvas of another size (a 64 px site came zoomed in
        # ~2x, its top and bottom cut): fitted again once the canvas has its size, before its first paint (which
        # Qt makes within show)
        qwin.setUpdatesEnabled(False)
        qwin.show()
        if app.session.index is not None:
            app.viewer.reset_view()
        qwin.setUpdatesEnabled(True)
        qwin.raise_()
        qwin.activateWindow()
        give_keys_to_canvas(app.viewer)
        # the rest once the window's first paint (the first imagery) is on screen: at once, before the warm-up thread
        # (connected after this) starts importing, whose GIL share made the plot come ~1.2 s after the imagery
        after_next_paint(app.viewer, lambda: alive(qwin) and app.after_first_imagery())

    if app.session.index is None and app._busy:  # the first site (or the demo) is being opened
        # its worker done: busy off, then the stack shown in the same turn; the window follows in the next (shown at
        # once, Qt painted it there and then, before the stack)
        app.session.busy.connect(lambda busy: busy or QTimer.singleShot(0, show))
        QTimer.singleShot(wait_ms, show)
    else:
        show()


def _ask_who(app: ReviewerApp, user: str | None) -> None:
    """Start the review dock for the person working, if the store has profiles."""
    from reviewer.app.qt_review_login import who_is_working
    from reviewer.store import Store

    try:
        store = Store(app.session.db)
        who = who_is_working(store, user, parent=main_window(app.viewer))  # in the window's dark style
    except ReviewerError as exc:
        app.reporter.error(exc, context="review")
        return
    if who is None:
        store.close()
        return
    app.start_review(*who, store=store)


def _screenshot_when_shown(app: ReviewerApp, path: Path, failure: list[str], timeout_s: float = 120.0) -> None:
    """Poll until the stack layer has data on the canvas, save the window, close it. A site that cannot open (an
    error before any site is shown) saves the window with its message at once and puts the message in `failure`:
    the launch had waited the whole timeout for imagery that could not come, then quit with status 0."""
    import time

    from qtpy.QtCore import QTimer

    started = time.monotonic()
    timer = QTimer()
    timer.setInterval(500)

    def save_and_quit() -> None:
        timer.stop()
        path.parent.mkdir(parents=True, exist_ok=True)
        app.viewer.screenshot(str(path), canvas_only=False)
        logger.info("saved a screenshot of the window to %s", path)
        app.viewer.close()

    def poll() -> None:
        shown = app.state.site_dir is not None and app.session.frame_shown() and app.settled
        if shown or time.monotonic() - started > timeout_s:
            save_and_quit()

    def on_report(level: str, text: str) -> None:
        if level == "error" and app.state.site_dir is None and not failure and timer.isActive():
            failure.append(text)
            save_and_quit()

    timer.timeout.connect(poll)
    app.reporter.notify = False  # each message said once, in the terminal (see ErrorReporter)
    app.reporter.reported.connect(on_report)
    timer.start()
    app._screenshot_timer = timer
