"""Pair view: two dates or periods side by side on the same site grid, in the same stretch, with zoom and
pan linked, each labelled, with a km scale bar. Periods become their clearest scene or a median.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from qtpy.QtCore import Qt
from qtpy.QtWidgets import (
    QComboBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.evidence_prep import NODATA_RGB, shown_stack
from reviewer.app.jobs import alive, on_screen, run_in_thread
from reviewer.app.qt_style import FlowLayout
from reviewer.app.session import StackSession
from reviewer.errors import NoSceneError, ReviewerError
from reviewer.record.render import Panel, nice_scale_km, render_panels, resolve_panel

logger = logging.getLogger(__name__)


class _PairGraphics(pg.GraphicsLayoutWidget):
    """The two panels' canvas: each column gets half the width, whatever the titles or scale bars ask for
    (the grid's own share left the panels ~180 px wide in a 900 px dock); a title longer than its column wraps
    onto a second line (at 1366 x 768 "A: 2023-07-12  OLI  (clearest of 2019-2023)" was cut to "(clearest of")."""

    titles: list[pg.LabelItem]

    def resizeEvent(self, ev) -> None:  # noqa: N802 - Qt override
        if not hasattr(self, "ci"):  # pyqtgraph resizes once while building itself
            super().resizeEvent(ev)
            return
        grid = self.ci.layout
        left, _, right, _ = self.ci.getContentsMargins()
        half = max((self.viewport().width() - left - right - grid.horizontalSpacing()) / 2.0, 10.0)
        for k in range(2):
            grid.setColumnFixedWidth(k, half)
        for title in getattr(self, "titles", []):
            wrap_title(title, half)
        super().resizeEvent(ev)


def wrap_title(title: pg.LabelItem, width: float) -> None:
    """The title's text wrapped at `width` (centred on each line), its height that of the lines it takes."""
    title.item.setTextWidth(max(width - 4, 20.0))
    option = title.item.document().defaultTextOption()
    option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
    title.item.document().setDefaultTextOption(option)
    title.updateMin()


class QtPairView(QWidget):
    """Two linked image views (A, B) showing `resolve_panel` results through the session's stretch."""

    def __init__(self, session: StackSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.state = session.state
        self.panels: list[Panel] = []
        self.rgbs: list[np.ndarray] = []
        self._worker = None
        self._generation = 0  # a worker's result for an older request is dropped
        self._stale = False  # the stack changed while the dock was behind another tab
        #: (stretch, reset) of panels given while the dock was behind another tab, drawn when it comes to the front
        self._undrawn: tuple | None = None
        #: why a review item's pair shows no panels ("" while it shows them): said in the dock's info line
        self.error = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        row = FlowLayout()  # wraps in a narrow dock
        self.a_edit = QLineEdit()
        self.b_edit = QLineEdit()
        for e, tip in ((self.a_edit, "A"), (self.b_edit, "B")):
            # wide enough for a whole date (it showed "5-07"); a period "YYYY-YYYY" fits too
            e.setMinimumWidth(e.fontMetrics().horizontalAdvance("2000-00-00") + 24)
            e.setPlaceholderText("YYYY-MM-DD, YYYY or YYYY-YYYY")
            e.setToolTip(f"date or period {tip}")
            e.returnPressed.connect(self._on_show_clicked)
        self.method_combo = QComboBox()
        self.method_combo.addItem("clearest scene", "clearest")
        self.method_combo.addItem("median", "median")
        self.method_combo.currentIndexChanged.connect(
            lambda _: self._on_method_changed(self.method_combo.currentData())
        )
        self.show_button = QPushButton("Show")
        self.show_button.clicked.connect(self._on_show_clicked)
        self.use_a = QPushButton("A = shown")
        self.use_a.setToolTip("put the date on the canvas in A")
        self.use_a.clicked.connect(lambda: self._use_current(0))
        self.use_b = QPushButton("B = shown")
        self.use_b.clicked.connect(lambda: self._use_current(1))
        self.export_button = QPushButton("Save pair...")
        self.export_button.clicked.connect(lambda: self._on_export_pair(None))
        for w in (
            QLabel("A"),
            self.a_edit,
            self.use_a,
            QLabel("B"),
            self.b_edit,
            self.use_b,
            QLabel("period as"),
            self.method_combo,
            self.show_button,
            self.export_button,
        ):
            row.addWidget(w)
        layout.addLayout(row)
        self.graphics = _PairGraphics()
        self.graphics.setBackground("#262930")
        self.labels = [pg.LabelItem("A", color="w", size="10pt"), pg.LabelItem("B", color="w", size="10pt")]
        self.graphics.addItem(self.labels[0], row=0, col=0)
        self.graphics.addItem(self.labels[1], row=0, col=1)
        self.graphics.titles = self.labels
        self.views: list[pg.ViewBox] = []
        self.images: list[pg.ImageItem] = []
        self.scale_bars: list[pg.ScaleBar | None] = [None, None]
        for k in range(2):
            vb = self.graphics.addViewBox(row=1, col=k, lockAspect=True, invertY=True, enableMenu=False)
            img = pg.ImageItem(axisOrder="row-major")
            vb.addItem(img)
            self.views.append(vb)
            self.images.append(img)
        self.views[1].setXLink(self.views[0])
        self.views[1].setYLink(self.views[0])
        # the two panels split the dock's width evenly and take all its height but the titles' line: a
        # title's preferred width used to set its column's width, and default margins ate the rest
        grid = self.graphics.ci.layout
        self.graphics.ci.setContentsMargins(2, 2, 2, 2)
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(0)
        for k in range(2):
            grid.setColumnStretchFactor(k, 1)
            self.labels[k].setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
            self.views[k].setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        grid.setRowStretchFactor(1, 1)
        layout.addWidget(self.graphics, 1)
        self.info = QLabel("Pick two dates or periods (P shows the first and the shown date).")
        self.info.setWordWrap(True)
        layout.addWidget(self.info)
        self.state.events.stretch.connect(self._redraw)
        self.state.events.pair.connect(self._on_state_pair)
        session.stack_changed.connect(self._on_stack_changed)
        if self.state.pair:  # built after a pair was asked for: shown when its tab comes to the front (`on_shown`)
            self.a_edit.setText(self.state.pair[0])
            self.b_edit.setText(self.state.pair[1])
            self._stale = True

    @property
    def busy(self) -> bool:
        """The panels are being read."""
        return self._worker is not None

    # ------------------------------------------------------------------ handlers

    def _use_current(self, k: int) -> None:
        """A = shown / B = shown: the date on the canvas goes into the field and, with both fields given, the
        panels show it at once (their titles used to keep the old date until Show was pressed)."""
        s = self.session.current_scene
        if s is None:
            return
        (self.a_edit, self.b_edit)[k].setText(s.date.isoformat())
        a, b = self.a_edit.text().strip(), self.b_edit.text().strip()
        if a and b:
            self._on_show_pair(a, b)

    def _on_method_changed(self, method: str) -> None:
        self.state.pair_method = method
        if self.state.pair:
            self.compute(*self.state.pair)

    def _on_show_clicked(self) -> None:
        a, b = self.a_edit.text().strip(), self.b_edit.text().strip()
        if not a or not b:
            self.session.reporter.info("give two dates or periods (YYYY-MM-DD, YYYY or YYYY-YYYY)")
            return
        self._on_show_pair(a, b)

    def _on_show_pair(self, a: str, b: str):
        """Show dates/periods a and b side by side (sets the model's pair)."""
        if self.state.pair == (a, b):
            return self.compute(a, b)
        self.state.pair = (a, b)
        return self._worker

    def _on_state_pair(self, event=None) -> None:
        if self.state.pair:
            a, b = self.state.pair
            self.a_edit.setText(a)
            self.b_edit.setText(b)
            self.compute(a, b)

    def _on_stack_changed(self, stack) -> None:
        self._stale = True
        if self.state.pair and alive(self.graphics) and on_screen(self):  # a tab behind another: when brought up
            self.compute(*self.state.pair)

    def on_shown(self) -> None:
        """Its dock came to the front (its tab picked): read the pair again if the stack changed meanwhile, else draw
        the panels given meanwhile (a review item's)."""
        if getattr(self, "_stale", False) and self.state.pair and alive(self.graphics):
            self.compute(*self.state.pair)
        elif self._undrawn is not None and alive(self.graphics):
            stretch, reset = self._undrawn
            self._draw(self.rgbs, stretch, reset=reset, now=True)  # (its tab is in front, whatever Qt's region)

    def default_pair(self) -> tuple[str, str] | None:
        """The pair P shows: the remembered pair, else the first date of the stack and the shown date."""
        stack = self.session.stack
        if stack is None or not len(stack):
            return None
        cur = self.session.current_scene.date
        first = stack.dates[0] if stack.dates[0] != cur else stack.dates[-1]
        return (first.isoformat(), cur.isoformat())

    def compute(self, a: str, b: str):
        """Resolve both panels in a worker (reads may be slow), then draw them."""
        stack, comp, method = self.session.stack, self.state.composite, self.state.pair_method
        if stack is None or not len(stack):
            self.session.reporter.error(NoSceneError("no stack is open"))
            return None
        self.info.setText(f"reading {a} and {b}...")
        self.error = ""

        # at the canvas's display size (a full Landsat scene's date is ~700 MB of float32 at its own 7,741 px, a
        # Sentinel-2 tile's ~1.4 GB; at 1,600 px ~30 MB), as a review item's panels are read
        shown = shown_stack(stack)

        def work() -> tuple[list[Panel], str]:
            return [resolve_panel(shown, a, comp, method=method), resolve_panel(shown, b, comp, method=method)], comp

        self._stale = False
        self._generation += 1
        generation = self._generation

        def done(result) -> None:
            if not alive(self.graphics) or generation != self._generation:
                return
            self._worker = None
            panels, c = result
            if c != self.state.composite:
                return
            self.panels = panels
            self._redraw(reset=True)

        def failed(exc: BaseException) -> None:
            if generation != self._generation:
                return
            self._worker = None
            self.error = str(exc)
            self.info.setText(str(exc))
            self.session.reporter.error(exc, context="pair view")

        self._worker = run_in_thread(work, on_done=done, on_error=failed)
        return self._worker

    def show_panels(self, a: str, b: str, panels: list[Panel] | None, error: str = "", rgbs=None, stretch=None) -> None:
        """Show panels resolved elsewhere (a review item's, prepared ahead) for dates or periods a and b, or the
        error that kept them from being read; a read of this dock still running is dropped. `rgbs`: the panels
        already stretched through `stretch` off the UI thread, drawn as they are while that is the stretch shown."""
        self.a_edit.setText(a)
        self.b_edit.setText(b)
        self._generation += 1
        self._worker = None
        self._stale = False
        if panels is None:
            # a review item's pair with no scene to show (an insufficient-evidence item on a sparse record: that is
            # its evidence) is said here, in the dock's own line, with the previous item's panels cleared; it had
            # been an error notification over the canvas at every such item, the last item's panels left drawn
            self.panels, self.rgbs, self._undrawn, self.error = [], [], None, error
            for k, (image, title) in enumerate(zip(self.images, self.labels, strict=True)):
                image.clear()
                title.setText(f"{'AB'[k]}: {(a, b)[k]}")  # (the line below says which date has no scene)
            self.info.setText(error)
            logger.info("pair view: %s", error)
            return
        self.error = ""
        self.panels = panels
        if rgbs is not None and stretch is self.state.stretch:
            self._draw(rgbs, stretch, reset=True)
        else:
            self._redraw(reset=True)

    def _redraw(self, event=None, reset: bool = False) -> None:
        """The panels through the stretch shown (it changed, or they were read here)."""
        if not self.panels or self.panels[0].channels.shape[0] != len(self.state.stretch.channels):
            return
        stretch = self.state.stretch
        self._draw([stretch.apply(p.channels, nodata_rgb=NODATA_RGB) for p in self.panels], stretch, reset=reset)

    def _draw(self, rgbs: list[np.ndarray], stretch, *, reset: bool, now: bool = False) -> None:
        """Hand the panels' RGB images to their views; titles and the caption are set only when they change (a
        pyqtgraph title's text relayouts the pair's graphics). Behind another tab (the Pair dock is a tab behind the
        Trajectory at launch) they are kept and drawn when the tab comes to the front (`on_shown`): at every review
        item the titles' rich text, the images and the views' range were set for panels nobody saw (~1 ms)."""
        self.rgbs = list(rgbs)
        if not now and not on_screen(self):
            reset = reset or (self._undrawn is not None and self._undrawn[1])
            self._undrawn = (stretch, reset)
            return
        self._undrawn = None
        # the panels cover the site: drawn in its ground metres (`Site.cell_m`) whatever their pixels (a review item's
        # are read at display size), the bar reads metres and a lon/lat site has its ground aspect
        site = self.session.index.site if self.session.index else None
        ground = (site.shape[1] * site.cell_m[0], site.shape[0] * site.cell_m[1]) if site else None
        for k, (panel, rgb) in enumerate(zip(self.panels, self.rgbs, strict=True)):
            self.images[k].setImage(rgb, autoLevels=False, levels=(0, 255))
            self.images[k].setRect(0, 0, *(ground or (rgb.shape[1], rgb.shape[0])))
            masked = "" if np.isfinite(panel.channels).any() else "  (every pixel masked)"
            title = f"{'AB'[k]}: {panel.label}{masked}"
            if self.labels[k].text != title:
                self.labels[k].setText(title)
            size_m = nice_scale_km((ground or rgb.shape[1::-1])[0] / 1000.0) * 1000.0
            bar = self.scale_bars[k]
            if bar is None:
                bar = pg.ScaleBar(size=size_m, suffix="m")
                bar.setParentItem(self.views[k])
                bar.anchor((1, 1), (1, 1), offset=(-15, -15))
                self.scale_bars[k] = bar
            elif bar.size != size_m:  # another site: a bar for its width
                bar.size = size_m
                bar.text.setText(pg.siFormat(size_m, suffix="m"))
                bar.updateBar()
        if reset:
            self.views[0].autoRange(padding=0.01)
        self.info.setText(f"same extent, same stretch ({stretch.source}); zoom and pan are linked")

    def _on_export_pair(self, path: str | None, on_done=None):
        """Save both panels as one PNG with labels, scale bar and the stretch in its metadata."""
        if not self.panels:
            self.session.reporter.error(ReviewerError("no pair is shown"))
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Save pair", "pair.png", "PNG (*.png)")
            if not path:
                return None
        panels, stretch, site = list(self.panels), self.state.stretch, self.session.index.site
        # a panel's pixel on the ground (a review item's panels are read at display size)
        cell_m = site.cell_m[0] * (site.shape[1] / panels[0].channels.shape[-1])

        def work() -> Path:
            return render_panels(panels, stretch, pixel_size_m=cell_m, out=path, title=f"{site.name} ({site.id})")

        return self.session._export(work, on_done)
