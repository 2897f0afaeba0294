"""Trajectory plot (TimeSync's trajectory window): an index or band through time at the clicked pixel or
over a drawn polygon (mean with spread), one colour per sensor, masked observations hollow or hidden, a
shaded period, the shown date marked; clicking a point shows that date. Export to CSV.
"""

from __future__ import annotations

import dataclasses
import html
import logging
import threading
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from qtpy.QtCore import QSize
from qtpy.QtGui import QPainter, QPicture
from qtpy.QtWidgets import (
    QFileDialog,
    QGraphicsItem,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.jobs import Progress, alive, run_in_thread, when_settled
from reviewer.app.qt_style import RichCaption
from reviewer.app.qt_trajectory_tools import TrajectoryTools
from reviewer.app.session import StackSession
from reviewer.app.trajectory_view import (
    NO_SERIES_CAPTION,
    TrajectoryContent,
    drawing,
    point_tip,
    shown_as,
    why_empty,
)
from reviewer.errors import ReviewerError
from reviewer.record.catalog import catalog
from reviewer.record.series import Trajectory, decimal_year, polygon_region, series_cube, trajectory

logger = logging.getLogger(__name__)

CURSOR_DELAY_MS = 60
PLOT_MIN_HEIGHT = 150  # px of the plotting area (the view box), axes not counted (below it the dock scrolls)


class QtTrajectoryPlot(QWidget):
    """Plots `trajectory()` of the session's stack; `series` is what is drawn."""

    def __init__(self, session: StackSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.state = session.state
        self.content = TrajectoryContent()  # what is drawn: the series, how it was read, the reading line
        self.where: tuple[str, object] | None = None  # ("pixel", (r, c)) or ("region", mask)
        self._worker = None
        self._cancel = threading.Event()
        # the series grids read for this plot (the review's items and the viewer's clicks): a small site's later
        # pixels and regions over an index already read are drawn without opening a file
        self.cube = series_cube()
        self.scatters: dict[str, list[pg.ScatterPlotItem]] = {}  # what the series drawn shows, per sensor
        self._scatter_pool: dict[tuple[str, bool], pg.ScatterPlotItem] = {}  # (sensor, masked) -> its scatter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 0, 2, 0)
        layout.setSpacing(2)
        self.tools = TrajectoryTools(self.state)
        self.tools.draw_button.clicked.connect(self._on_draw_polygon_clicked)
        self.tools.use_polygon.clicked.connect(self._on_use_polygon_clicked)
        self.tools.export_button.clicked.connect(lambda: self._on_export_csv(None))
        self.progress = self.tools.progress
        layout.addWidget(self.tools)
        self.plot = pg.PlotWidget(background="#262930")
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.tools.overlay_progress_on(self.plot)  # not in the tool row, which it made a row taller while reading
        # no "year" under the axis: its ticks are years, and the label's ~17 px went from the plotting area (at 1366 x
        # 768 beside a 520 px review dock it left 154 px; issue 27 asks 150 at least)
        self.plot.setXRange(1984, 2025, padding=0.02)  # no site yet: the Landsat era, not a unit axis around 0
        self._label: str | None = None  # the value axis's label shown
        for side in ("left", "bottom"):  # index values and years as they are, never "NDVI (x0.001)" or "year (x0.001)"
            self.plot.getAxis(side).enableAutoSIPrefix(False)
            # each axis kept as drawn (Qt's item cache) until its ticks or size change: the plot repainted for an item's
            # points (or the date cursor) had replayed both axes' ticks, labels and grid lines (~1 ms each under
            # Xvfb), the year axis unchanged for every item of a site
            self.plot.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#ffcc00", width=1))
        self.plot.addItem(self.cursor, ignoreBounds=True)
        self.region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 204, 0, 40))
        self.region.setZValue(-10)
        self.region.setVisible(False)
        self.plot.addItem(self.region, ignoreBounds=True)
        self.errors = pg.ErrorBarItem(
            x=np.zeros(0), y=np.zeros(0), height=np.zeros(0), pen=pg.mkPen(150, 150, 150, 120)
        )
        self.plot.addItem(self.errors)
        # the plotting area itself at least PLOT_MIN_HEIGHT px (it had been ~100 px at 1366 x 768 under the review
        # dock), the year axis and its label below it: the dock's layout never squeezes the axis into the caption
        self.plot.setMinimumHeight(PLOT_MIN_HEIGHT + int(self.plot.getAxis("bottom").maximumHeight()) + 4)
        layout.addWidget(self.plot, 1)
        self.info = RichCaption("Click a pixel on the canvas (or draw a polygon) to plot its trajectory.")
        # two lines kept whatever the text: a caption of one line then two re-laid the dock out and repainted the
        # plot a second time for every review item
        self.info.setMinimumHeight(2 * self.info.fontMetrics().lineSpacing() + 4)
        layout.addWidget(self.info)
        # the cursor follows the shown date once stepping pauses: a pyqtgraph repaint per step costs ~5 ms
        self._cursor_when_settled = when_settled(self._update_cursor, CURSOR_DELAY_MS, self)
        self.state.events.current.connect(self._cursor_when_settled)
        self.state.events.period.connect(self._update_period)
        self.state.events.series.connect(lambda e=None: self.recompute())
        self.state.events.show_masked.connect(lambda e=None: self._draw())
        self.state.events.trajectory_harmonized.connect(lambda e=None: self.recompute())
        session.pixel_clicked.connect(self._on_pixel_clicked)
        session.stack_changed.connect(lambda _s: self.recompute())
        session.site_opened.connect(self._on_site_opened)
        if session.index is not None:  # built after the site opened (the launch builds it after the first imagery)
            self._on_site_opened(session.index)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        """As tall as the tool rows and the caption's lines at the present width, and the plot's minimum: the dock
        scrolls below it rather than squeeze the plot's year axis into the caption (the layout's own minimum
        counted the wrapping tools as one row and the caption as two lines)."""
        hint = super().minimumSizeHint()
        layout, width = self.layout(), max(self.width(), hint.width())
        m = layout.contentsMargins()
        inner = width - m.left() - m.right()
        height = self.tools.heightForWidth(inner) + self.plot.minimumHeight()
        height += max(self.info.heightForWidth(inner), self.info.minimumHeight())
        return QSize(hint.width(), max(hint.height(), height + 2 * layout.spacing() + m.top() + m.bottom()))

    @property
    def series(self) -> Trajectory | None:
        """The series drawn (None: the plot is empty)."""
        return self.content.series

    @property
    def series_harmonized(self) -> bool:
        """Whether `series` was read with TM/ETM+ harmonised to OLI."""
        return self.content.harmonized

    @property
    def busy(self) -> bool:
        """A series is being read."""
        return self._worker is not None

    @property
    def expecting(self) -> bool:
        """A series read elsewhere is coming (`expect_series`), not one the plot reads itself."""
        return self._worker is True

    # ------------------------------------------------------------------ inputs

    def _on_site_opened(self, index) -> None:
        years = [s.year for s in index.record_scenes()] or [2000]
        self.tools.set_years(min(years), max(years))
        self.where = None
        self.content.clear()
        # an empty plot already spans the record's years (decimal years, not a scaled default axis); set before the
        # draw settles the view (set after it, the range was fitted in the paint, which cost the window one more)
        self.plot.setXRange(min(years), max(years) + 1, padding=0.02)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        if not self.expecting:  # (a review item's series is handed over in this turn: its draw shows the new site)
            self._draw()

    def _on_pixel_clicked(self, row: int, col: int):
        """Plot the trajectory at this pixel (row, col of the site grid)."""
        self.where = ("pixel", (int(row), int(col)))
        return self.recompute()

    def _on_draw_polygon_clicked(self) -> None:
        if self.session.index is None:
            return
        layer = self.session.region_shapes_layer()
        self.session.viewer.layers.selection.active = layer
        layer.mode = "add_polygon"
        self.info.setText("draw the polygon on the canvas (double-click to close it), then press 'Plot it'")

    def _on_use_polygon_clicked(self):
        layer = self.session.region_layer
        if layer is None or not len(layer.data):
            self.session.reporter.info("draw a polygon first (Draw polygon)")
            return None
        vertices = np.asarray(layer.data[-1])[:, -2:]  # the layer's data coordinates are grid pixels
        return self._on_polygon(vertices)

    def _on_polygon(self, vertices: np.ndarray):
        """Plot the mean (with spread) over the polygon given in (row, col) pixel vertices."""
        try:
            region = polygon_region(vertices, self.session.index.site.shape)
        except ReviewerError as exc:
            self.session.reporter.error(exc)
            return None
        self.where = ("region", region)
        self.session.canvas.select_image()
        return self.recompute()

    def plot_region(self, mask: np.ndarray, series: str | None = None):
        """Plot the mean over a region mask of the site grid (a review item's region), optionally another series."""
        self.set_region(mask, series)
        return self.recompute()

    def set_region(self, mask: np.ndarray, series: str | None = None) -> None:
        """What the next recompute plots (a review item's region and index), without reading it yet."""
        self.where = ("region", np.asarray(mask, bool))
        if series and series != self.state.series:
            with self.state.events.series.blocker():
                self.state.series = series
            self.tools.show_series_name(series)

    # ------------------------------------------------------------------ compute (worker) and draw

    def expect_series(self, text: str = "") -> threading.Event:
        """A series read elsewhere (a review item's, by its evidence worker) is coming: the plot's own read stops and
        the plot is busy until `show_series` or `series_failed`, its caption saying `text` meanwhile (none: the
        series is shown in this turn, and its caption with it). Returns the event set once the plot reads anew
        (another pixel, index or harmonisation asked for): the series expected is stale then."""
        self._cancel.set()
        self._cancel = threading.Event()
        self._worker = True  # busy, with no worker of its own
        self.progress.setVisible(False)
        self.content.expect(text)
        if text:  # nothing of the item's to show meanwhile: the empty plot drawn, never the item before's points
            self._draw()
        if text:
            self.info.setText(text)
            self.layout().activate()  # the caption's lines now, not after the window's next paint
        return self._cancel

    def show_series(self, series: Trajectory, harmonized: bool, *, partial: str = "") -> None:
        """Draw a series read elsewhere; `partial` (what is still being read) keeps the plot busy for the rest."""
        self.content.show(series, harmonized, partial=bool(partial))
        if not partial:
            self._worker = None
        self._draw()
        if partial:
            self.info.setText(f"{self.info.text()} {html.escape(partial)}")

    def no_series(self, why: str) -> None:
        """Nothing to plot for the item shown, and why (the series of the item before is not left on the plot)."""
        self._cancel.set()
        self._worker = None
        self.where = None
        self.content.clear()
        self._draw()
        self.info.setText(html.escape(why))

    def series_failed(self, exc: BaseException) -> None:
        """The series expected could not be read: said in the plot and the message area."""
        self._worker = None
        self.session.reporter.error(exc, context="trajectory")
        self.info.setText(f"trajectory not read: {html.escape(str(exc))}")

    def _show_progress(self, fraction: float, _message: str = "") -> None:
        """Every step of 5% at most: each setValue repaints the bar at once (~60 ms on a software canvas)."""
        value = int(1000 * fraction)
        if alive(self.progress) and (abs(value - self.progress.value()) >= 50 or value >= 1000):
            self.progress.setValue(value)

    def recompute(self):
        if not alive(self.plot):
            return None
        stack = self.session.stack
        if self.where is None or stack is None or not len(stack):
            self.content.clear()
            self._draw()
            return None
        self._cancel.set()
        self._cancel = threading.Event()
        cancel = self._cancel
        name = self.state.series
        kind, where = self.where
        # the same scenes read through the core's harmonisation (reviewer.record.stack.harmonize) or as recorded
        stack = dataclasses.replace(stack, harmonized=self.state.trajectory_harmonized)
        progress = Progress()
        progress.changed.connect(self._show_progress)
        self.progress.setVisible(True)
        self.progress.setValue(0)

        def work() -> Trajectory:
            kw = {"pixel": where} if kind == "pixel" else {"region": where}
            return trajectory(stack, name, progress=progress, cancel=cancel.is_set, cube=self.cube, **kw)

        def done(series: Trajectory) -> None:
            if cancel.is_set() or not alive(self.plot):
                return
            self._worker = None
            self.progress.setVisible(False)
            self.content.show(series, stack.harmonized)
            self._draw()

        def failed(exc: BaseException) -> None:
            if cancel.is_set():
                return
            self._worker = None
            self.progress.setVisible(False)
            self.session.reporter.error(exc, context="trajectory")

        self._worker = run_in_thread(work, on_done=done, on_error=failed)
        self._worker.progress_ref = progress
        return self._worker

    def _draw(self) -> None:
        """Draw `series` (what `trajectory_view.drawing` says): one scatter per sensor and clear/masked; the
        scatters of the last draw take the new points (made and added to the plot only for a sensor not drawn
        before: ~4 ms each, and each add re-ranged the view), the others are emptied."""
        unused = dict(self._scatter_pool)
        self.scatters.clear()
        self.errors.setData(x=np.zeros(0), y=np.zeros(0), height=np.zeros(0))
        s = self.series
        region = bool(self.where and self.where[0] == "region")
        if s is None or not len(s):
            self._hide_scatters(unused)
            n = len(self.session.stack) if self.session.stack is not None else 0
            self.info.setText(NO_SERIES_CAPTION if s is None else why_empty(self.state.series, n, region=region))
            self._update_cursor()
            self._update_period()
            self._settle_view()
            return
        d = drawing(
            s, self.state.series, show_masked=self.state.show_masked, harmonized=self.series_harmonized,
            region=region, colors=catalog().sensor_colors,
        )  # fmt: skip

        def tip(x, y, data, s=s) -> str:
            return point_tip(s, data, y)

        for g in d.groups:
            item = unused.pop((g.sensor, g.hollow), None)
            if item is None:
                item = pg.ScatterPlotItem(
                    x=d.x[g.points], y=d.y[g.points], data=g.points, hoverable=True, tip=tip,
                    size=6 if g.hollow else 7, pen=pg.mkPen(g.color, width=1.2),
                    brush=None if g.hollow else pg.mkBrush(g.color),
                )  # fmt: skip
                item.sigClicked.connect(self._on_scatter_clicked)
                self.plot.addItem(item)
                self._scatter_pool[(g.sensor, g.hollow)] = item
            else:  # the sensor's colour and sizes stay the item's own: only the points and their tips change
                item.setData(x=d.x[g.points], y=d.y[g.points], data=g.points, tip=tip)
                item.setVisible(True)
            self.scatters.setdefault(g.sensor, []).append(item)
        self._hide_scatters(unused)
        bx, by, bh = d.error_bars
        if bx.size:
            self.errors.setData(x=bx, y=by, height=bh, beam=0)
        self._set_label(d.value_label)
        self.info.setText(d.caption)
        self._update_cursor()
        self._update_period()
        self._settle_view()

    def _settle_view(self) -> None:
        """The dock laid out (the caption's lines, the plot's height), the plot's axes and view box placed in it, the
        y range fitted to the points drawn, the view's transform set and the axes' ticks drawn, all now rather
        than in or after the window's next paint: pyqtgraph defers the range, the transform and the ticks to the
        paint (ViewBox.prepareForPaint, AxisItem.paint, which widens or narrows the axis to its tick labels) and
        Qt the layouts to later events, and each, done after or during the paint, moved or re-dirtied the plot
        already drawn and cost the window one more paint per review item (~20-35 ms under Xvfb)."""
        self.layout().activate()
        if not self.plot.isVisible():  # no paint to spare; and an axis drawn unshown could keep an empty picture
            return
        for _ in range(2):  # a second time when the new tick labels resized an axis
            self.plot.getPlotItem().layout.activate()
            self.plot.getViewBox().prepareForPaint()
            if not self._draw_ticks():
                break

    def _draw_ticks(self) -> bool:
        """Each shown axis's ticks and labels drawn into the picture its paint replays; True if one of them took
        another width or height for its tick labels (the plot is then laid out again)."""
        resized = False
        for side in ("left", "bottom"):
            axis = self.plot.getAxis(side)
            size = (axis.maximumWidth(), axis.maximumHeight())
            picture = QPicture()
            painter = QPainter(picture)
            try:
                axis.paint(painter, None, None)
            finally:
                painter.end()
            resized |= (axis.maximumWidth(), axis.maximumHeight()) != size
        return resized

    def _set_label(self, left: str) -> None:
        """The value axis's label, set only when it changes: pyqtgraph re-lays the plot out at every set, even of
        the same text, which cost the window one more paint per review item (~25 ms here)."""
        if left == self._label:
            return
        self._label = left
        self.plot.setLabel("left", left)

    def _hide_scatters(self, items: dict) -> None:
        """Scatters of sensors the series drawn now lacks: emptied and hidden, kept for a later series."""
        for item in items.values():
            if item.isVisible() or len(item.data):
                item.setData(x=np.zeros(0), y=np.zeros(0))
                item.setVisible(False)

    def shown_as(self) -> str:
        """What the plotted values are: TM/ETM+ harmonised to OLI, or each sensor as recorded."""
        return shown_as(self.series_harmonized)

    def _on_scatter_clicked(self, item, points, *args) -> None:
        if len(points):
            self._on_trajectory_point_clicked(int(points[0].data()))

    def _on_trajectory_point_clicked(self, k: int) -> None:
        """Show the date of series point k on the canvas."""
        if self.series is None or not (0 <= k < len(self.series)):
            return
        stack = self.session.stack
        i = self.series.indices[k]
        if stack is not None and i < len(stack) and stack.scenes[i].scene_id == self.series.scene_ids[k]:
            self.session.jump_to_index(i)
        else:
            self.session.jump_to_date(self.series.dates[k])

    def _update_cursor(self, event=None) -> None:
        s = self.session.current_scene
        self.cursor.setVisible(s is not None)
        if s is not None:
            self.cursor.setValue(decimal_year(s.date))

    def _update_period(self, event=None) -> None:
        p = self.state.period
        self.region.setVisible(p is not None)
        if p is not None:
            self.region.setRegion((p[0], p[1] + 1))

    def point_positions(self) -> list[tuple[float, float, int]]:
        """(x, y, series point) of every drawn point, for tests and tooltips."""
        out = []
        for items in self.scatters.values():
            for it in items:
                for p in it.points():
                    out.append((p.pos().x(), p.pos().y(), int(p.data())))
        return out

    def _on_export_csv(self, path: str | None) -> Path | None:
        if self.series is None:
            self.session.reporter.info("no trajectory to export yet")
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export trajectory", f"{self.state.series}.csv", "CSV (*.csv)")
            if not path:
                return None
        out = self.series.to_csv(path)
        self.session.reporter.info(f"saved {out}")
        return out
