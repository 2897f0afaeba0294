"""Coverage dock: the sensor coverage timeline (one row per sensor, ETM+ SLC-off period marked) above a
scenes-per-year bar chart split into clear and cloudy, with the period shaded; clicking a year jumps there.
"""

from __future__ import annotations

import datetime as dt
import logging

import numpy as np
import pyqtgraph as pg
from qtpy.QtCore import QSize, Qt
from qtpy.QtGui import QFont, QFontMetrics
from qtpy.QtWidgets import QGraphicsRectItem, QLabel, QVBoxLayout, QWidget

from reviewer.app.jobs import on_screen, when_settled
from reviewer.app.session import StackSession
from reviewer.record.catalog import catalog
from reviewer.record.series import Coverage, coverage, decimal_year

logger = logging.getLogger(__name__)

CURSOR_DELAY_MS = 60


class QtCoveragePlot(QWidget):
    """Timeline and per-year bars of the open site's record (all its scenes, not only the filtered ones)."""

    def __init__(self, session: StackSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.state = session.state
        self._index = None
        self._coverage: Coverage | None = None
        self._dirty = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("#262930")
        self.timeline = self.graphics.addPlot(row=0, col=0)
        self.bars = self.graphics.addPlot(row=1, col=0)
        self.bars.setXLink(self.timeline)
        self.timeline.setMouseEnabled(x=True, y=False)
        self.timeline.hideAxis("bottom")  # the years once, under the bars (linked): room for the sensors' lanes
        self.bars.setMouseEnabled(x=True, y=False)
        self.bars.setLabel("left", "scenes")
        # no label under the years ("year (click to jump)"): the caption says it, and its line went to the lanes
        self.graphics.ci.layout.setRowStretchFactor(0, 3)
        self.graphics.ci.layout.setRowStretchFactor(1, 1)
        layout.addWidget(self.graphics, 1)
        self.info = QLabel("")
        self.info.setTextFormat(Qt.RichText)
        self.info.setWordWrap(True)
        layout.addWidget(self.info)
        self.cursors = [pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#ffcc00")) for _ in range(2)]
        self.regions = [pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 204, 0, 40)) for _ in range(2)]
        self.graphics.scene().sigMouseClicked.connect(self._on_scene_clicked)
        # the cursor follows the shown date once stepping pauses: a pyqtgraph repaint per step costs ~5 ms
        self._cursor_when_settled = when_settled(self._update_cursor, CURSOR_DELAY_MS, self)
        self.state.events.current.connect(self._cursor_when_settled)
        self.state.events.period.connect(self._update_period)
        self.state.events.sensors.connect(self._on_sensors_changed)
        session.site_opened.connect(self._on_site_opened)
        if session.index is not None:  # made after the site opened (its tab first picked then)
            self._on_site_opened(session.index)

    @property
    def coverage(self) -> Coverage | None:
        """The open site's coverage, computed when first needed (~100 ms for 1,400 scenes)."""
        if self._coverage is None and self._index is not None:
            self._coverage = coverage(self._index, sensors=self.state.sensors)
        return self._coverage

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        """The plots' minimum and the caption's lines at the present width: the dock scrolls below it (the layout's
        own minimum counted the caption as one line, and it was drawn over the plots' years)."""
        hint = super().minimumSizeHint()
        m = self.layout().contentsMargins()
        inner = max(self.width() - m.left() - m.right(), 1)
        height = self.graphics.minimumHeight() + self.info.heightForWidth(inner) + self.layout().spacing()
        return QSize(hint.width(), max(hint.height(), height + m.top() + m.bottom()))

    def _on_sensors_changed(self, event=None) -> None:
        """The bars count the sensors the user chose (Landsat when none)."""
        self._coverage = None
        self._dirty = True
        if on_screen(self):
            self._draw()

    def _on_site_opened(self, index) -> None:
        self._index, self._coverage = index, None
        self._dirty = True
        if on_screen(self):  # a tab behind another draws when it is brought to the front (~50-100 ms of items)
            self._draw()

    def on_shown(self) -> None:
        """Its dock came to the front (its tab picked): draw what changed meanwhile."""
        if self._dirty:
            self._draw()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if self._dirty:
            self._draw()

    def _draw(self) -> None:
        self._dirty = False
        cov = self.coverage
        self.timeline.clear()
        self.bars.clear()
        if cov is None or not cov.years:
            self.info.setText("no scenes")
            return
        colors = catalog().sensor_colors
        labels = list(cov.sensors)
        n = len(labels)
        for k, label in enumerate(labels):
            y = n - 1 - k
            xs = np.array([decimal_year(d) for d in cov.sensors[label]])
            item = pg.ScatterPlotItem(
                x=xs,
                y=np.full(xs.shape, y),
                symbol="s",
                size=5,
                pen=None,
                brush=pg.mkBrush(colors.get(label, "#cccccc")),
            )
            self.timeline.addItem(item)
            if label == "ETM+" and cov.slc_off is not None and len(xs):
                x0, x1 = decimal_year(cov.slc_off), xs.max()
                if x1 > x0:
                    rect = QGraphicsRectItem(x0, y - 0.4, x1 - x0, 0.8)
                    rect.setPen(pg.mkPen("#ff5555", width=1))
                    rect.setBrush(pg.mkBrush(255, 85, 85, 50))
                    self.timeline.addItem(rect)
        # a lane per sensor at least a tick label high: at 1366 x 768 ten lanes had ~9 px each and their names
        # overlapped ("ETM+ (SLC-off red)" over "OLI"). The names a point smaller, the lanes their height apart, the
        # bars' three count ticks, year axis and label whole; the dock scrolls below the sum
        font = QFont(self.graphics.font())
        if font.pointSizeF() > 7:
            font.setPointSizeF(font.pointSizeF() - 1)
        axis = self.timeline.getAxis("left")
        axis.setStyle(tickFont=font)
        lane = QFontMetrics(font).height()
        self.timeline.setMinimumHeight(n * lane + lane // 2)
        self.bars.setMinimumHeight(6 * QFontMetrics(self.graphics.font()).height())
        need = self.graphics.ci.effectiveSizeHint(Qt.SizeHint.MinimumSize).height()  # with its margins and spacing
        self.graphics.setMinimumHeight(int(need) + 2 * self.graphics.frameWidth() + 1)
        self.updateGeometry()  # the dock's scroll area reads the new minimum
        # SLC-off named in the lane's tick label, so no text covers a lane
        axis.setTicks(
            [
                [
                    (n - 1 - k, f"{label} (SLC-off red)" if label == "ETM+" and cov.slc_off else label)
                    for k, label in enumerate(labels)
                ]
            ]
        )
        self.timeline.setYRange(-0.7, n - 0.3, padding=0)
        years = np.asarray(cov.years, float) + 0.5
        clear = np.asarray(cov.clear, float)
        cloudy = np.asarray(cov.cloudy, float)
        self.bars.addItem(pg.BarGraphItem(x=years, height=clear, width=0.8, brush=pg.mkBrush("#4daf4a"), pen=None))
        self.bars.addItem(
            pg.BarGraphItem(x=years, y0=clear, height=cloudy, width=0.8, brush=pg.mkBrush("#999999"), pen=None)
        )
        # "scenes" alone: the caption says which sensors the bars count ("scenes (TM, ETM+)" ran past a short plot)
        self.bars.setLabel("left", "scenes")
        for plot, cursor, region in (
            (self.timeline, self.cursors[0], self.regions[0]),
            (self.bars, self.cursors[1], self.regions[1]),
        ):
            region.setZValue(-10)
            plot.addItem(region, ignoreBounds=True)
            plot.addItem(cursor, ignoreBounds=True)
        self.timeline.setXRange(cov.years[0], cov.years[-1] + 1, padding=0.01)
        counted = sum(cov.clear) + sum(cov.cloudy)
        total = sum(len(d) for d in cov.sensors.values())
        slc = f"; ETM+ SLC-off after {cov.slc_off.isoformat()}" if cov.slc_off else ""
        # the key of the bars lives in this line, so no legend covers a bar
        self.info.setText(
            f"{len(labels)} sensors, {total} dates, {cov.years[0]}-{cov.years[-1]}{slc}. Bars: {counted} "
            f"{'/'.join(cov.counted) or 'no'} scenes, <span style='color:#4daf4a'>&#9632;</span> clear "
            f"(&gt;= {cov.clear_threshold:.0%} clear) <span style='color:#999999'>&#9632;</span> cloudy; click a "
            "year to show it"
        )
        self._update_cursor()
        self._update_period()

    def _update_cursor(self, event=None) -> None:
        s = self.session.current_scene
        for c in self.cursors:
            c.setVisible(s is not None)
            if s is not None:
                c.setValue(decimal_year(s.date))

    def _update_period(self, event=None) -> None:
        p = self.state.period
        for r in self.regions:
            r.setVisible(p is not None)
            if p is not None:
                r.setRegion((p[0], p[1] + 1))

    def _on_scene_clicked(self, event) -> None:
        pos = event.scenePos()
        for plot in (self.bars, self.timeline):
            if plot.sceneBoundingRect().contains(pos):
                x = plot.vb.mapSceneToView(pos).x()
                self._on_year_clicked(int(np.floor(x)))
                return

    def _on_year_clicked(self, year: int) -> None:
        """Jump the canvas to that year (its clearest scene)."""
        if self.coverage and self.coverage.years and self.coverage.years[0] <= year <= self.coverage.years[-1]:
            self.session.jump_to_year(year)

    def year_of(self, d: dt.date) -> int:
        return d.year
