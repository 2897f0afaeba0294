"""Chip strip (TimeSync's chip window): one chip per year, the clearest scene of the year or of a month
window, all visible at once in the stack's stretch; the shown year is highlighted and a click jumps there.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from qtpy.QtCore import Qt, Signal
from qtpy.QtGui import QImage, QPixmap
from qtpy.QtWidgets import (
    QFileDialog,
    QGridLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.evidence_prep import CHIP_PX, NODATA_RGB, read_chips
from reviewer.app.jobs import alive, on_screen, run_in_thread, when_settled
from reviewer.app.qt_style import FlowLayout
from reviewer.app.session import StackSession
from reviewer.errors import ReviewerError
from reviewer.record.render import Panel, render_panels
from reviewer.record.series import clearest_per_year
from reviewer.record.stretch import Stretch

logger = logging.getLogger(__name__)

MIN_CHIP_PX, MAX_CHIP_PX = 48, 192
CHIP_PAD_PX = 12  # grid spacing and the highlight border around a chip
CAPTION_PX = 18
RESIZE_DELAY_MS = 150
MARKED = "border: 3px solid #ffcc00;"
UNMARKED = "border: 3px solid transparent;"


def _chip_rgb(year: int, channels: np.ndarray, stretch, used, rgb: dict[int, np.ndarray]) -> np.ndarray | None:
    """A chip's RGB: the one the worker stretched when it used the stretch shown now, else stretched here
    (None when the channels do not fit the stretch: a composite switch under way)."""
    image = rgb.get(year) if used is stretch else None
    if image is None and channels.shape[0] == len(stretch.channels):
        image = stretch.apply(channels, nodata_rgb=NODATA_RGB)
    return image


class ChipLabel(QLabel):
    clicked = Signal(int)

    def __init__(self, year: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.year = year
        self.setAlignment(Qt.AlignCenter)
        self.setCursor(Qt.PointingHandCursor)

    def mousePressEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.clicked.emit(self.year)
        super().mousePressEvent(event)


def rgb_pixmap(rgb: np.ndarray, size: int) -> QPixmap:
    rgb = np.ascontiguousarray(rgb)
    h, w, _ = rgb.shape
    image = QImage(rgb.data, w, h, 3 * w, QImage.Format_RGB888).copy()
    return QPixmap.fromImage(image).scaled(size, size, Qt.KeepAspectRatio, Qt.FastTransformation)


class QtChipStrip(QWidget):
    """Per-year chips; `chips` holds (year, stack index, label, channels) of what is shown."""

    def __init__(self, session: StackSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.state = session.state
        self.chips: list[tuple[int, int, str, np.ndarray]] = []
        self.labels: dict[int, ChipLabel] = {}
        self.captions: dict[int, QLabel] = {}
        self._worker = None
        self._generation = 0
        self._dirty = True
        self._refill_pending = False  # chips given while the dock was behind another tab, placed when it shows
        self._resized_when_settled = when_settled(self._on_resized, RESIZE_DELAY_MS, self)
        self._rgb: tuple[Stretch | None, dict[int, np.ndarray]] = (None, {})
        self._highlighted: int | None = None  # the year whose chip is styled as the shown one
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        row = FlowLayout()  # wraps in a narrow dock (beside the review dock the strip scrolled sideways)
        row.addWidget(QLabel("Clearest scene per year, months"))
        self.month_from = QSpinBox()
        self.month_to = QSpinBox()
        for sb, v in ((self.month_from, 1), (self.month_to, 12)):
            sb.setRange(1, 12)
            sb.setValue(v)
            sb.setKeyboardTracking(False)
            sb.valueChanged.connect(self._on_window_edited)
            row.addWidget(sb)
        self.columns = QSpinBox()
        self.columns.setRange(0, 20)
        self.columns.setSpecialValueText("fit")  # 0: as many columns and as large as fits the dock, all visible
        self.columns.setValue(0)
        self.columns.valueChanged.connect(lambda _: self._layout_chips())
        self.chip_px = CHIP_PX
        self.chip_columns = 10
        row.addWidget(QLabel("columns"))
        row.addWidget(self.columns)
        self.export_button = QPushButton("Save strip...")
        self.export_button.clicked.connect(lambda: self._on_export_strip(None))
        row.addWidget(self.export_button)
        self.info = QLabel("")
        row.addWidget(self.info)
        layout.addLayout(row)
        self.area = QScrollArea()
        self.area.setWidgetResizable(True)
        self.area.setMinimumWidth(200)
        self.grid_host = QWidget()
        self.grid = QGridLayout(self.grid_host)
        self.grid.setSpacing(3)
        self.grid.setContentsMargins(2, 2, 2, 2)
        self.area.setWidget(self.grid_host)
        layout.addWidget(self.area, 1)
        self.state.events.stretch.connect(self._redraw)
        self.state.events.current.connect(self._highlight)
        self.state.events.chip_months.connect(lambda e=None: self.refresh())
        self.state.events.chip_years.connect(lambda e=None: self.refresh())
        session.stack_changed.connect(self._on_stack_changed)

    def _months(self) -> set[int] | None:
        m = self.state.chip_months
        return set(m) if m else None

    def _on_window_edited(self, *_: object) -> None:
        a, b = self.month_from.value(), self.month_to.value()
        months = tuple(range(a, b + 1)) if a <= b else tuple(list(range(a, 13)) + list(range(1, b + 1)))
        self._on_month_window_changed(() if len(months) == 12 else months)

    def _on_month_window_changed(self, months: tuple[int, ...]) -> None:
        self.state.chip_months = tuple(months)

    def _on_stack_changed(self, stack) -> None:
        self._dirty = True
        if alive(self.area) and on_screen(self):  # a tab behind another reads its chips when brought to the front
            self.refresh()

    def on_shown(self) -> None:
        """Its dock came to the front (its tab picked): the chips given meanwhile, or those of a stack that changed."""
        if self._dirty:
            self.refresh()
        elif self._refill_pending:
            self._refill_pending = False
            self._layout_chips()
            self._resized_when_settled()  # the dock may still take its front size: fitted again once it has

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.on_shown()

    def refresh(self):
        """Read the clearest scene of each year (in a worker) and draw the chips."""
        stack, comp = self.session.stack, self.state.composite
        if stack is None or not len(stack):
            self.chips = []
            self._layout_chips()
            return None
        self._dirty = False
        self._refill_pending = False  # the chips read now replace any given while the dock was behind
        self._generation += 1
        generation = self._generation
        picks = clearest_per_year(stack, months=self._months())
        if self.state.chip_years is not None:  # fitted to a period (a review item's)
            y0, y1 = self.state.chip_years
            picks = {y: i for y, i in picks.items() if y0 <= y <= y1}
        self.info.setText(f"reading {len(picks)} chips...")
        stretch = self.state.stretch

        def work():
            out, rgb = read_chips(stack, picks, comp, stretch)  # at chip size; stretched here, not on the UI thread
            return out, rgb, stretch, comp, stack

        def done(result) -> None:
            if not alive(self.area) or generation != self._generation:  # a newer refresh is on its way
                return
            self._worker = None
            chips, rgb, used, c, st = result
            if c != self.state.composite or st is not self.session.stack:
                return
            self.chips = chips
            self._rgb = (used, rgb)
            self._layout_chips()
            self.info.setText(f"{len(chips)} years, one stretch ({self.state.stretch.source})")

        def failed(exc: BaseException) -> None:
            if generation != self._generation:
                return
            self._worker = None
            self.session.reporter.error(exc, context="chip strip")

        self._worker = run_in_thread(work, on_done=done, on_error=failed)
        return self._worker

    def _layout_chips(self) -> None:
        """Lay the strip out for `chips` in this event-loop turn: the chip widgets on screen take the new images
        and places (widgets made or dropped only for a longer or shorter strip)."""
        self.chip_columns, self.chip_px = self._geometry(len(self.chips))
        self._refill()

    def _geometry(self, n: int) -> tuple[int, int]:
        """(columns, chip size): the largest chips with which all n fit the visible area (TimeSync shows
        every year at once), or the chosen number of columns at the default size."""
        if self.columns.value() > 0:
            return self.columns.value(), CHIP_PX
        vp = self.area.maximumViewportSize()  # as without scroll bars, so a bar appearing does not flip the grid
        width, height = max(vp.width() - 8, 1), max(vp.height() - 8, 1)  # less the grid's margins
        best_cols, best_px = max(1, width // (MIN_CHIP_PX + CHIP_PAD_PX)), 0
        for cols in range(1, max(n, 1) + 1):
            rows = -(-max(n, 1) // cols)
            px = min(width // cols - CHIP_PAD_PX, height // rows - CHIP_PAD_PX - CAPTION_PX, MAX_CHIP_PX)
            if px > best_px:
                best_cols, best_px = cols, px
        if best_px < MIN_CHIP_PX:  # too many to fit: the smallest readable chips, scrolling down
            width -= self.area.verticalScrollBar().sizeHint().width()
            return max(1, width // (MIN_CHIP_PX + CHIP_PAD_PX)), MIN_CHIP_PX
        return best_cols, best_px

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._resized_when_settled()

    def _on_resized(self) -> None:
        """Fit the chips to the dock's new size: the widgets on screen re-placed and re-scaled in one go."""
        if self._refill_pending or not self.chips or self.busy:
            return
        if self._geometry(len(self.chips)) != (self.chip_columns, self.chip_px):
            self._layout_chips()

    @property
    def busy(self) -> bool:
        """Chips still being read."""
        return self._worker is not None

    @property
    def laid_out(self) -> bool:
        """True once every chip of `chips` is on screen, sized for the dock as it is now (behind another tab: given
        to the strip, placed when the tab comes to the front)."""
        if self._refill_pending and not on_screen(self):
            return True
        return len(self.labels) == len(self.chips) and self._geometry(len(self.chips)) == (
            self.chip_columns,
            self.chip_px,
        )

    def show_chips(self, chips: list[tuple[int, int, str, np.ndarray]], rgb: dict[int, np.ndarray], stretch) -> None:
        """Show chips read and stretched elsewhere (a review item's, prepared ahead), in this event-loop turn: the
        chip widgets on screen take the new images and places (widgets made or dropped only for a longer or shorter
        strip). One repaint, where a sliced layout repainted the window once per slice, ~25 ms of widgets less."""
        self._generation += 1  # a refresh still reading is stale now
        self._worker = None
        self._dirty = False
        self.chips = list(chips)
        self._rgb = (stretch, rgb)
        if not on_screen(self):  # behind another tab: the widgets take the chips when the tab comes to the front
            self._refill_pending = True
            return
        self._refill_pending = False
        self._layout_chips()

    def _refill(self) -> None:
        """The strip's grid shows `chips`: each widget (in order) takes a chip's image, year, caption and place."""
        used, rgb = self._rgb
        stretch = self.state.stretch
        cols, size = self.chip_columns, self.chip_px
        marked = self.labels.get(self._highlighted)  # the widget styled as the shown year
        pairs = list(zip(self.labels.values(), self.captions.values(), strict=True))
        labels, captions = {}, {}
        for k, (year, _i, label, ch) in enumerate(self.chips):
            if k < len(pairs):
                chip, cap = pairs[k]
                chip.year = year
            else:
                chip, cap = ChipLabel(year), QLabel()
                chip.clicked.connect(self._on_chip_clicked)
                chip.setStyleSheet(UNMARKED)
                cap.setAlignment(Qt.AlignCenter)
            place = (2 * (k // cols), k % cols)
            if getattr(chip, "place", None) != place:
                for w in (chip, cap):
                    self.grid.removeWidget(w)  # a widget added again without this kept its old cell too
                self.grid.addWidget(chip, *place)
                self.grid.addWidget(cap, place[0] + 1, place[1])
                chip.place = place
            chip.setToolTip(label)
            image = _chip_rgb(year, ch, stretch, used, rgb)
            if image is not None:
                chip.setPixmap(rgb_pixmap(image, size))
            else:
                chip.clear()
            cap.setText(f"{year}")
            cap.setToolTip(label)
            labels[year], captions[year] = chip, cap
        for chip, cap in pairs[len(self.chips) :]:
            for w in (chip, cap):
                self.grid.removeWidget(w)
                w.deleteLater()
            if chip is marked:
                marked = None
        self.labels, self.captions = labels, captions
        year = self.current_year()
        target = labels.get(year)
        if marked is not target:  # restyle only the two chips that change (a stylesheet change relayouts)
            if marked is not None:
                marked.setStyleSheet(UNMARKED)
            if target is not None:
                target.setStyleSheet(MARKED)
        self._highlighted = year

    def _redraw(self, event=None) -> None:
        stretch = self.state.stretch
        for year, _i, _label, ch in self.chips:
            if ch.shape[0] != len(stretch.channels):
                return
            if year in self.labels:
                self.labels[year].setPixmap(rgb_pixmap(stretch.apply(ch, nodata_rgb=NODATA_RGB), self.chip_px))
        self._highlight(force=True)

    def current_year(self) -> int | None:
        s = self.session.current_scene
        return s.year if s is not None else None

    def _highlight(self, event=None, *, force: bool = False) -> None:
        """Restyle only the chips whose state changed: a stylesheet change relayouts the window."""
        year = self.current_year()
        previous = self._highlighted
        if year == previous and not force:
            return
        for y, chip in self.labels.items():
            if force or y in (year, previous):
                chip.setStyleSheet(MARKED if y == year else UNMARKED)
        self._highlighted = year

    def _on_chip_clicked(self, year: int) -> None:
        """Jump the canvas to the chip's scene."""
        for y, i, _label, _ch in self.chips:
            if y == year:
                self.session.jump_to_index(i)
                return
        self.session.jump_to_year(year)

    def _on_export_strip(self, path: str | None, on_done=None):
        """Save the strip (full-resolution chips) as one PNG with the current year highlighted."""
        if not self.chips:
            self.session.reporter.error(ReviewerError("the chip strip is empty"))
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Save chip strip", "strip.png", "PNG (*.png)")
            if not path:
                return None
        stack, comp, stretch, site = (
            self.session.stack,
            self.state.composite,
            self.state.stretch,
            self.session.index.site,
        )
        chips = list(self.chips)
        year = self.current_year()
        cols = self.chip_columns

        def work() -> Path:
            panels = [
                Panel(f"{y}  {label.split(' ', 1)[1]}", stack.read(i, comp), [stack.scenes[i]], "clearest")
                for y, i, label, _ch in chips
            ]
            hl = next((k for k, (y, *_rest) in enumerate(chips) if y == year), None)
            return render_panels(
                panels,
                stretch,
                pixel_size_m=site.cell_m[0],
                out=path,
                title=f"{site.name} ({site.id}): clearest scene per year",
                highlight=hl,
                columns=cols,
            )

        return self.session._export(work, on_done)
