"""The stack dock: open a site (with progress and recent sites), filter the stack, choose the composite,
set the one stretch, toggle the quality overlay and save what is shown. A thin view of `ViewState`.
"""

from __future__ import annotations

import html
import logging
from pathlib import Path

from qtpy.QtCore import Qt
from qtpy.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSlider,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.composite_choices import site_choices
from reviewer.app.jobs import alive
from reviewer.app.qt_style import RichCaption, compact
from reviewer.app.session import StackSession
from reviewer.record.stretch import Stretch, composites

logger = logging.getLogger(__name__)

MONTHS = "JFMAMJJASOND"


def skipped_files(problems) -> str:
    """The site line's note of the files the scan left out (a truncated download, a stray file), kept in sight while
    the site is open: the warning said once at the open went by in a few seconds. All of them in the tooltip."""
    if not problems:
        return ""
    first = problems[0]
    more = f" and {len(problems) - 1} more (hover, or reviewer scan)" if len(problems) > 1 else ""
    noun = "file" if len(problems) == 1 else "files"
    return (
        f'<br><span style="color: #e0c060">{len(problems)} {noun} not used: '
        f"{html.escape(first.path)} ({html.escape(first.reason)}){more}</span>"
    )


class QtStackControls(QWidget):
    """Site, filters, composite, stretch, overlay and export controls for one `StackSession`."""

    def __init__(self, session: StackSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.state = session.state
        self._updating = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self._site_box())
        layout.addWidget(self._filter_box())
        layout.addWidget(self._display_box())
        layout.addLayout(self._export_row())
        layout.addStretch(1)
        self._connect(session)
        self._fill_recent()
        self._sync_from_state()

    def _site_box(self) -> QGroupBox:
        """Open, Keys..., the site label, recent sites and the opening progress."""
        site_box = QGroupBox("Site")
        sl = QVBoxLayout(site_box)
        row = QHBoxLayout()
        self.open_button = QPushButton("Open site...")
        self.open_button.setToolTip("Open a site folder (with site.json)")
        self.open_button.clicked.connect(self._on_open_clicked)
        self.help_button = QPushButton("Keys...")
        self.help_button.clicked.connect(self._on_help_clicked)
        row.addWidget(self.open_button, 1)
        row.addWidget(self.help_button)
        sl.addLayout(row)
        self.site_label = QLabel("No site open. Open a site folder, or pick a recent one:")
        self.site_label.setWordWrap(True)
        sl.addWidget(self.site_label)
        self.recent_list = QListWidget()
        self.recent_list.setMaximumHeight(64)
        # a long path loses its middle ("site   /work/.../reviewer-demo"), it does not scroll sideways
        self.recent_list.setTextElideMode(Qt.ElideMiddle)
        self.recent_list.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.recent_list.itemActivated.connect(lambda item: self._on_recent_chosen(item.data(Qt.UserRole)))
        self.recent_list.itemDoubleClicked.connect(lambda item: self._on_recent_chosen(item.data(Qt.UserRole)))
        sl.addWidget(self.recent_list)
        prow = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setVisible(False)
        self.progress.setFormat("%p%")
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.session.cancel_open)
        prow.addWidget(self.progress, 1)
        prow.addWidget(self.cancel_button)
        sl.addLayout(prow)
        self.progress_label = QLabel("")
        self.progress_label.setVisible(False)
        sl.addWidget(self.progress_label)

        return site_box

    def _filter_box(self) -> QGroupBox:
        """Sensors, years, months and the maximum cloud share."""
        filt = QGroupBox("Filters")
        fl = QFormLayout(filt)
        self.sensor_box = QWidget()
        self.sensor_layout = QGridLayout(self.sensor_box)
        self.sensor_layout.setContentsMargins(0, 0, 0, 0)
        self.sensor_layout.setAlignment(Qt.AlignTop)  # (the box may be taller than its rows)
        self.sensor_checks: dict[str, QCheckBox] = {}  # the site's sensors' boxes, in their order
        self._sensor_boxes: dict[str, QCheckBox] = {}  # every box made so far, by sensor
        self._sensor_cells: dict[str, tuple[int, int]] = {}  # the boxes in the grid now: (row, column) by sensor
        fl.addRow("Sensors", self.sensor_box)
        yrow = QHBoxLayout()
        self.year_from = QSpinBox()
        self.year_to = QSpinBox()
        for sb in (self.year_from, self.year_to):
            compact(sb)
            sb.setRange(1970, 2100)
            sb.setSpecialValueText(" ")  # no site, no years (a maintainer's window said "1970 - 1970")
            sb.setKeyboardTracking(False)
            sb.valueChanged.connect(self._on_years_edited)
            yrow.addWidget(sb)
        fl.addRow("Years", yrow)
        mrow = QHBoxLayout()
        mrow.setSpacing(1)
        self.month_buttons: list[QToolButton] = []
        for m, letter in enumerate(MONTHS, start=1):
            b = QToolButton()
            b.setText(letter)
            b.setToolTip(f"month {m}")
            b.setCheckable(True)
            b.setChecked(True)
            b.toggled.connect(self._on_months_edited)
            mrow.addWidget(b)
            self.month_buttons.append(b)
        fl.addRow("Months", mrow)
        crow = QHBoxLayout()
        self.cloud_slider = QSlider(Qt.Horizontal)
        self.cloud_slider.setRange(0, 100)
        self.cloud_slider.setValue(100)
        self.cloud_label = QLabel("100%")
        self.cloud_slider.valueChanged.connect(lambda v: self.cloud_label.setText(f"{v}%"))
        self.cloud_slider.sliderReleased.connect(lambda: self._on_max_cloud_changed(self.cloud_slider.value() / 100))
        self.cloud_slider.valueChanged.connect(self._on_cloud_slider_value)
        crow.addWidget(self.cloud_slider, 1)
        crow.addWidget(self.cloud_label)
        fl.addRow("Max cloud", crow)
        self.count_label = QLabel("")
        fl.addRow("", self.count_label)

        return filt

    def _display_box(self) -> QGroupBox:
        """The composite, the one stretch (low/high/gamma per channel, lock, percentiles, reset), the overlay."""
        disp = QGroupBox("Composite and stretch (one stretch for every date)")
        dl = QVBoxLayout(disp)
        self.composite_combo = QComboBox()
        for key, spec in composites().items():
            self.composite_combo.addItem(spec["label"], key)
        self.composite_combo.currentIndexChanged.connect(
            lambda _: self._on_composite_changed(self.composite_combo.currentData())
        )
        dl.addWidget(self.composite_combo)
        self.stretch_grid, self.stretch_rows = stretch_rows(self._on_stretch_edited)
        dl.addLayout(self.stretch_grid)
        srow = QGridLayout()  # two rows: one row of the three made the dock ~420 px wide
        self.lock_check = QCheckBox("Lock stretch (S)")
        self.lock_check.toggled.connect(self._on_lock_toggled)
        self.percentile_button = QPushButton("From whole-stack percentiles")
        self.percentile_button.clicked.connect(self._on_percentiles_clicked)
        self.reset_button = QPushButton("Reset")
        self.reset_button.clicked.connect(self._on_reset_clicked)
        srow.addWidget(self.lock_check, 0, 0)
        srow.addWidget(self.reset_button, 0, 1)
        srow.addWidget(self.percentile_button, 1, 0, 1, 2)
        dl.addLayout(srow)
        # measured by the dock's layout at each item without asking for its own repaint after the window's
        self.stretch_source = RichCaption("")
        dl.addWidget(self.stretch_source)
        self.overlay_check = QCheckBox("Quality overlay (O)")
        self.overlay_check.toggled.connect(self._on_overlay_toggled)
        dl.addWidget(self.overlay_check)
        # the key wraps under the check box (as the check box's own text it set the dock's width to ~600 px)
        self.overlay_key = QLabel("cloud (white), shadow (purple), snow (cyan), fill / SLC gaps (magenta)")
        self.overlay_key.setWordWrap(True)
        self.overlay_key.setIndent(24)
        dl.addWidget(self.overlay_key)

        return disp

    def _export_row(self) -> QHBoxLayout:
        erow = QHBoxLayout()
        self.export_button = QPushButton("Save view as PNG...")
        self.export_button.clicked.connect(lambda: self._on_export_view(None))
        erow.addWidget(self.export_button)
        return erow

    def _connect(self, session: StackSession) -> None:
        """Follow the view state and the session."""
        s = self.state.events
        s.composite.connect(self._sync_from_state)
        s.stretch.connect(self._sync_from_state)
        s.locked.connect(self._sync_from_state)
        s.overlay.connect(self._sync_from_state)
        session.site_opened.connect(self._on_site_opened)
        session.site_failed.connect(self._on_site_failed)
        session.stack_changed.connect(self.show_stack)
        session.indexing.connect(self._on_indexing)
        session.busy.connect(self._on_busy)

    # ------------------------------------------------------------------ site

    def _fill_recent(self) -> None:
        self.recent_list.clear()
        recent = self.session.recent.load() if self.session.recent is not None else []
        for path in recent:
            item = QListWidgetItem(Path(path).name + "   " + str(Path(path).parent))
            item.setData(Qt.UserRole, path)
            item.setToolTip(path)
            self.recent_list.addItem(item)
        self.recent_list.setVisible(bool(recent))
        self.recent_list.doItemsLayout()  # now: on the list's own timer it came after a site change's paint, one more

    def _on_open_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open site folder (with site.json)")
        if path:
            self.session.open_site(path)

    def _on_recent_chosen(self, path: str) -> None:
        if path:
            self.session.open_site(path)

    def _on_help_clicked(self) -> None:
        from reviewer.app.qt_help import show_help
        from reviewer.app.qt_window import canvas_widget

        self._help = show_help(self, return_focus=canvas_widget(self.session.viewer))

    def _on_indexing(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(1000 * fraction))
        self.progress_label.setText(message)

    def _on_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.progress_label.setVisible(busy)
        self.open_button.setEnabled(not busy)

    def _on_site_failed(self, site_dir: str, why: str) -> None:
        """No site shown and the one asked for could not open: said where the site would be, until another opens
        (the notification fades, and the line had gone on saying only "No site open")."""
        if self.session.index is None and alive(self.site_label):
            folder = site_dir.rstrip("/") + "/"
            why = why.removeprefix(folder)  # "DIR/site.json, field ...": the folder is named once, before it
            self.site_label.setText(
                f"<b>Could not open</b> {html.escape(site_dir)}: {html.escape(why)}<br>"
                "Open a site folder, or pick a recent one:"
            )

    def _on_site_opened(self, index) -> None:
        if not alive(self.sensor_layout):
            return
        site, choices = index.site, site_choices(index)  # (made by the worker that opened the site)
        n = choices.scenes
        # set once (it was set, then set again with the skipped files: a rich text parsed and laid out twice)
        text = (
            f"<b>{site.name}</b> ({site.id}), {site.theme}, {n} scenes, "
            f"{site.shape[1]} x {site.shape[0]} px {cell_size_text(site)}{skipped_files(index.problems)}"
        )
        if self.site_label.text() != text:
            self.site_label.setText(text)
        tip = "\n".join(f"{p.path}: {p.reason}" for p in index.problems[:50])
        if self.site_label.toolTip() != tip:
            self.site_label.setToolTip(tip)
        self._fill_recent()
        self._updating = True
        try:
            self._show_sensor_boxes(list(choices.sensors))
            self.show_composite_choices(choices.composites)
            first, last = choices.years or (2000, 2000)
            for sb in (self.year_from, self.year_to):
                sb.setSpecialValueText("")  # the site's first year is its minimum: shown as it is
                sb.setRange(first, last)
            self.year_from.setValue(first)
            self.year_to.setValue(last)
            for b in self.month_buttons:
                b.setChecked(True)
            self.cloud_slider.setValue(100)
        finally:
            self._updating = False

    def show_composite_choices(self, choices) -> None:
        """The composites the site's bands can make offered, the others greyed out with a tooltip saying why
        (`composite_choices`): picked, one gave a blank canvas and a notice."""
        model = self.composite_combo.model()
        for choice in choices:
            i = self.composite_combo.findData(choice.key)
            item = model.item(i) if i >= 0 else None
            if item is None:
                continue
            item.setEnabled(choice.enabled)
            item.setToolTip(f"{choice.label}: {choice.missing}" if choice.missing else "")

    def _show_sensor_boxes(self, labels: list[str]) -> None:
        """One ticked box per sensor of the site, three to a row, at the top of a box as tall as the most rows shown
        so far. A sensor's box is made once and kept for the next site with it (hidden meanwhile): a new box is
        polished with the style sheet as it is shown (~1 ms each), in the site change's turn (a layout's own showing
        of a new child came a turn later and re-laid the dock out after its paint, one more paint). A box already in
        its cell stays there as it is: only the boxes of sensors the other site lacks or adds are hidden, moved or
        shown (each box had been taken out of the grid, hidden and shown again at every site change)."""
        cells = {label: divmod(k, 3) for k, label in enumerate(labels)}
        for label, cb in self.sensor_checks.items():
            if self._sensor_cells.get(label) != cells.get(label):
                self.sensor_layout.removeWidget(cb)
                self._sensor_cells.pop(label, None)
                if label not in cells:
                    cb.hide()
        self.sensor_checks = {}
        for label in labels:
            cb = self._sensor_boxes.get(label)
            if cb is None:
                cb = self._sensor_boxes[label] = QCheckBox(label)
                cb.toggled.connect(self._on_sensors_edited)
            cb.setChecked(True)
            if label not in self._sensor_cells:
                self.sensor_layout.addWidget(cb, *cells[label])
                self._sensor_cells[label] = cells[label]
                cb.show()
            self.sensor_checks[label] = cb
        # the box keeps the height of the most rows it has shown: a site with fewer sensors leaves their rows empty
        # rather than move every control below up (and back down with the next site): a review queue over two sites
        # re-laid out and repainted the whole dock at each site change (56-70 widgets; now 25-39)
        self.sensor_box.setMinimumHeight(max(self.sensor_box.minimumHeight(), self.sensor_layout.sizeHint().height()))

    def show_sensors(self, chosen) -> None:
        """Tick the sensor boxes of `chosen` (all when empty) without editing the filters: the state already says
        them (a review item's sensors)."""
        chosen = set(chosen)
        self._updating = True
        try:
            for label, box in self.sensor_checks.items():
                box.setChecked(not chosen or label in chosen)
        finally:
            self._updating = False

    def show_stack(self, stack) -> None:
        """The count of dates shown and the stretch line for `stack` (on `stack_changed`, or from the review dock,
        which hands the docks its prepared stack itself)."""
        if not alive(self.count_label):
            return
        total = len(self.session.index.record_scenes()) if self.session.index else 0
        self.count_label.setText(f"{len(stack)} of {total} scenes shown")
        self._sync_from_state()  # the stretch line says when the percentiles came from other dates

    # ------------------------------------------------------------------ filters (handlers tests call)

    def _on_sensors_edited(self, *_: object) -> None:
        if self._updating:
            return
        chosen = tuple(k for k, cb in self.sensor_checks.items() if cb.isChecked())
        self._on_sensors_changed(() if len(chosen) == len(self.sensor_checks) else chosen)

    def _on_sensors_changed(self, sensors: tuple[str, ...]) -> None:
        """Show only these sensor labels (empty: all)."""
        self.state.sensors = tuple(sensors)

    def _on_years_edited(self, *_: object) -> None:
        if self._updating:
            return
        lo, hi = self.year_from.value(), self.year_to.value()
        self._on_years_changed((min(lo, hi), max(lo, hi)))

    def _on_years_changed(self, years: tuple[int, int] | None) -> None:
        self.state.years = years

    def _on_months_edited(self, *_: object) -> None:
        if self._updating:
            return
        chosen = tuple(m for m, b in enumerate(self.month_buttons, start=1) if b.isChecked())
        self._on_months_changed(() if len(chosen) == 12 else chosen)

    def _on_months_changed(self, months: tuple[int, ...]) -> None:
        self.state.months = tuple(months)

    def _on_cloud_slider_value(self, value: int) -> None:
        if not self.cloud_slider.isSliderDown() and not self._updating:
            self._on_max_cloud_changed(value / 100)

    def _on_max_cloud_changed(self, fraction: float) -> None:
        self.state.max_cloud = float(fraction)

    # ------------------------------------------------------------------ composite, stretch, overlay

    def _on_composite_changed(self, composite: str) -> None:
        if composite and composite != self.state.composite:
            self.state.composite = composite

    def _on_stretch_edited(self, channel: int) -> None:
        if self._updating:
            return
        _, lo, hi, ga = self.stretch_rows[channel]
        if hi.value() <= lo.value():
            self.session.reporter.info("high must be above low")
            self._sync_from_state()
            return
        new = self.state.stretch.with_channel(channel, low=lo.value(), high=hi.value(), gamma=ga.value())
        if not self.session.set_stretch(new):
            self._sync_from_state()

    def _on_lock_toggled(self, locked: bool) -> None:
        if not self._updating:
            self.state.locked = bool(locked)

    def _on_percentiles_clicked(self) -> None:
        self.session.stretch_from_percentiles()

    def _on_reset_clicked(self) -> None:
        self.session.reset_stretch()

    def _on_overlay_toggled(self, on: bool) -> None:
        if not self._updating:
            self.state.overlay = bool(on)

    def _on_export_view(self, path: str | None):
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Save view", "view.png", "PNG (*.png)")
            if not path:
                return None
        return self.session.export_view(path)

    def _sync_from_state(self, event=None) -> None:
        self._updating = True
        try:
            st = self.state
            i = self.composite_combo.findData(st.composite)
            if i >= 0 and i != self.composite_combo.currentIndex():
                self.composite_combo.setCurrentIndex(i)
            show_stretch(self.stretch_rows, st.composite, st.stretch, st.locked)
            self.lock_check.setChecked(st.locked)
            self.percentile_button.setEnabled(not st.locked)
            self.reset_button.setEnabled(not st.locked)
            stale = (
                " <span style='color:#ffb000'>: computed over other dates than the filtered stack shows now; "
                "press From whole-stack percentiles to recompute</span>"
                if self.session.stretch_is_stale()
                else ""
            )
            self.stretch_source.setText(
                f"stretch: {html.escape(st.stretch.source)}" + ("  (locked)" if st.locked else "") + stale
            )
            self.overlay_check.setChecked(st.overlay)
        finally:
            self._updating = False

    def current_stretch(self) -> Stretch:
        return self.state.stretch


StretchRow = tuple[QLabel, QDoubleSpinBox, QDoubleSpinBox, QDoubleSpinBox]  # a channel's name, low, high, gamma


def stretch_rows(edited) -> tuple[QGridLayout, list[StretchRow]]:
    """The stretch's grid: a header and three channel rows (name, low, high, gamma); `edited(channel)` when the user
    edits one. A hidden row keeps its room (a one-channel index shows one): nothing below moves (issue 27)."""
    grid, rows = QGridLayout(), []
    for col, head in enumerate(("", "low", "high", "gamma")):
        grid.addWidget(QLabel(head), 0, col)
    for i in range(3):
        name = QLabel("")
        lo, hi, ga = QDoubleSpinBox(), QDoubleSpinBox(), QDoubleSpinBox()
        for sb, rng, step in ((lo, (-2, 2), 0.01), (hi, (-2, 2), 0.01), (ga, (0.1, 5), 0.05)):
            compact(sb)
            sb.setRange(*rng)
            sb.setDecimals(3)
            sb.setSingleStep(step)
            sb.setKeyboardTracking(False)
            sb.valueChanged.connect(lambda _v, ch=i: edited(ch))
        for col, w in enumerate((name, lo, hi, ga)):
            policy = w.sizePolicy()
            policy.setRetainSizeWhenHidden(True)
            w.setSizePolicy(policy)
            grid.addWidget(w, i + 1, col)
        rows.append((name, lo, hi, ga))
    return grid, rows


def show_stretch(rows: list[StretchRow], composite: str, stretch: Stretch, locked: bool) -> None:
    """The stretch's channels in the rows (the rows past its channels hidden), named as the composite's channels:
    an RGB's bands, an index's name, one band's unit (LST, ERA5-Land: "K"; the combo above names the band)."""
    spec = composites()[composite]
    names = spec.get("bands") or [spec["label"] if "index" in spec else spec["unit"]]
    for k, (name, lo, hi, ga) in enumerate(rows):
        visible = k < len(stretch.channels)
        for w in (name, lo, hi, ga):
            w.setVisible(visible)
            w.setEnabled(not locked)
        if visible:
            c = stretch.channels[k]
            name.setText(names[k] if k < len(names) else f"ch {k}")
            # a band in kelvin or mm (LST, ERA5-Land: 260-330 K) held as it is, not clamped to a reflectance's
            span = c.high - c.low
            rng = (-2.0, 2.0) if -2.0 <= c.low and c.high <= 2.0 else (c.low - span, c.high + span)
            for sb in (lo, hi):
                if (sb.minimum(), sb.maximum()) != rng:
                    sb.setRange(*rng)
            for sb, value in ((lo, c.low), (hi, c.high), (ga, c.gamma)):
                # only a value that shows otherwise: Qt repaints a spin box at every setValue, even of its value
                # (the gamma's 1.000 and its group box were repainted at every review item)
                if sb.value() != round(value, sb.decimals()):
                    sb.setValue(value)


def cell_size_text(site) -> str:
    """A grid cell's size as the Stack dock says it: "at 30 m"; a grid not in metres in its own unit and on the ground
    (`Site.cell_m`): "at 0.01° (776 x 1,112 m)", "at 100 US survey foot (30.5 m)"."""
    x_m, y_m = site.cell_m
    if x_m == y_m == site.resolution:
        return f"at {site.resolution:g} m"
    unit = "°" if site.crs.is_geographic else f" {site.crs.linear_units}"
    metres = [f"{v:,.0f}" if v >= 100 else f"{v:.3g}" for v in (x_m, y_m)]
    ground = " x ".join(metres) if metres[0] != metres[1] else metres[0]
    return f"at {site.resolution:g}{unit} ({ground} m)"
