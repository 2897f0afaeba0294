"""The trajectory dock's tool row: the series, TM/ETM+ harmonisation, masked points, the shaded period (these
four are the viewer state's; the row edits the state and follows it), and the buttons whose work the plot does
(draw / use a polygon, CSV). A flow of tools that wraps in a narrow dock: at 1366 x 768 beside the review dock
(360-450 px) it takes two rows, the series' view settings first and the region and period tools second; the
period ("shade" and its two years) wraps as one tool, so a year box is never alone on a row."""

from __future__ import annotations

from qtpy.QtCore import QEvent
from qtpy.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QProgressBar, QPushButton, QSpinBox, QWidget

from reviewer.app.qt_style import FlowLayout
from reviewer.app.state import ViewState
from reviewer.app.trajectory_view import harmonization_source, series_title
from reviewer.record.series import series_names

#: the period's year spin boxes with narrow +/- buttons (napari's are 20 px a side): the row's tools then wrap
#: into two rows beside the review dock at 1366 x 768, not three (buttonless spin boxes lose their text under
#: napari's style sheet, whose buttons are placed in the margin)
YEAR_SPIN = (
    "QAbstractSpinBox { min-width: 30px; padding: 1px 2px; } "
    "QAbstractSpinBox::up-button, QAbstractSpinBox::down-button { width: 12px; }"
)
#: a year box's width past its four digits: the two 12 px buttons, the line edit's margins and 3 px to spare (its
#: own size hint, 74 px, counts the range's widest text with napari's 10 px padding)
YEAR_SPIN_EXTRA = 2 * 12 + 4 + 3


class TrajectoryTools(QWidget):
    """The tools above the plot; `progress` shows the plot's own reads."""

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.name_combo = QComboBox()
        for n in series_names():
            self.name_combo.addItem(series_title(n), n)
        self.name_combo.currentIndexChanged.connect(lambda _: setattr(state, "series", self.name_combo.currentData()))
        self.harmonize_check = QCheckBox("TM/ETM+ as OLI")
        self.harmonize_check.setToolTip(
            "harmonise TM and ETM+ reflectance to OLI with the catalogue's coefficients "
            f"({harmonization_source()}) before computing the index"
        )
        self.harmonize_check.toggled.connect(lambda on: setattr(state, "trajectory_harmonized", bool(on)))
        self.masked_check = QCheckBox("masked")
        self.masked_check.setToolTip("draw the observations a mask covers (cloud, shadow, snow, fill), hollow")
        self.masked_check.setChecked(True)
        self.masked_check.toggled.connect(lambda on: setattr(state, "show_masked", bool(on)))
        self.export_button = QPushButton("CSV...")
        self.export_button.setToolTip("save the plotted series as CSV")
        self.draw_button = QPushButton("Draw polygon")
        self.draw_button.setToolTip("draw a polygon on the canvas, then press 'Plot it'")
        self.use_polygon = QPushButton("Plot it")  # short labels: two rows of tools in a ~390 px dock
        self.use_polygon.setToolTip("plot the mean (with spread) over the polygon drawn last")
        self.period_check = QCheckBox("shade")
        self.period_check.setToolTip("shade the years from .. to on the plot")
        self.period_from, self.period_to = QSpinBox(), QSpinBox()
        for sb in (self.period_from, self.period_to):
            sb.setRange(1970, 2100)
            sb.setSpecialValueText(" ")  # no site, no years (the tools said "shade 1970 - 1970" before a site)
            sb.setStyleSheet(YEAR_SPIN)
            sb.setFixedWidth(sb.fontMetrics().horizontalAdvance("0000") + YEAR_SPIN_EXTRA)
            sb.setKeyboardTracking(False)
            sb.valueChanged.connect(self._on_period_edited)
        self.period_check.toggled.connect(self._on_period_edited)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(120)
        self.progress.setVisible(False)
        self.period = QWidget()  # one tool in the flow: "shade" and its years wrap together
        period_row = QHBoxLayout(self.period)
        period_row.setContentsMargins(0, 0, 0, 0)
        period_row.setSpacing(2)
        for w in (self.period_check, self.period_from, self.period_to):
            period_row.addWidget(w)
        self.period.setEnabled(False)  # until a site gives it its years (`set_years`)
        row = FlowLayout(self)
        for w in (
            self.name_combo,
            self.harmonize_check,
            self.masked_check,
            self.export_button,
            self.draw_button,
            self.use_polygon,
            self.period,
        ):
            row.addWidget(w)
        state.events.trajectory_harmonized.connect(self._on_state_harmonized)

    def overlay_progress_on(self, widget: QWidget) -> None:
        """The plot's read progress in `widget`'s top right corner, over it, not in the tool row: shown in the row it
        took a third row while a clicked pixel's series was read, and the plot jumped down and back."""
        self.progress.setParent(widget)
        self.progress.setFixedHeight(self.progress.fontMetrics().height() + 2)
        widget.installEventFilter(self)
        self._place_progress(widget)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override: the corner follows the plot's size
        if event.type() == QEvent.Type.Resize and obj is self.progress.parentWidget():
            self._place_progress(obj)
        return False

    def _place_progress(self, widget: QWidget) -> None:
        self.progress.move(max(widget.width() - self.progress.maximumWidth() - 4, 0), 2)
        self.progress.resize(self.progress.maximumWidth(), self.progress.height())
        self.progress.raise_()

    def set_years(self, first: int, last: int) -> None:
        """A site opened: the period spans its record's years."""
        for sb in (self.period_from, self.period_to):
            sb.blockSignals(True)
            sb.setSpecialValueText("")  # the site's first year is its minimum: shown as it is
            sb.setRange(first, last)
            sb.blockSignals(False)
        self.period_from.setValue(first)
        self.period_to.setValue(last)
        self.period.setEnabled(True)

    def show_series_name(self, name: str) -> None:
        """The series was set elsewhere (a review item's index): the combo says it, without a new read."""
        k = self.name_combo.findData(name)
        if k >= 0 and k != self.name_combo.currentIndex():
            self.name_combo.blockSignals(True)
            self.name_combo.setCurrentIndex(k)
            self.name_combo.blockSignals(False)

    def _on_state_harmonized(self, event=None) -> None:
        on = self.state.trajectory_harmonized
        if self.harmonize_check.isChecked() != on:
            self.harmonize_check.blockSignals(True)
            self.harmonize_check.setChecked(on)
            self.harmonize_check.blockSignals(False)

    def _on_period_edited(self, *_: object) -> None:
        if self.period_check.isChecked():
            a, b = self.period_from.value(), self.period_to.value()
            self.state.period = (min(a, b), max(a, b))
        else:
            self.state.period = None
