"""The maintainer's quality table: per annotator the figures of `reviewer review quality` (reviewer.review.quality),
sortable by any column, and a small plot of reliability against gold accuracy. Computing runs in a worker (crowd-kit's
Dawid-Skene takes seconds) with its own store connection; the figures come back on the UI thread."""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from qtpy.QtCore import QEvent, Qt
from qtpy.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from reviewer.app.jobs import alive
from reviewer.app.qt_rows import fit_table_height
from reviewer.console import seconds_text

#: how near (gold accuracy, reliability) two annotators' points are for one label: a name's line and ~60 px wide
LABEL_NEAR = (0.15, 0.08)
#: (column header, key of a quality_report annotator row, what the column means: the header's tooltip), in two
#: tables of six columns, each whole in the review dock at 1366 x 768 (the eleven in one were 979 px wide, cut at the
#: dock's edge): the model's figures, and gold and pace
COLUMNS = (
    ("annotator", "annotator", "the annotator (click a header to sort by it)"),
    ("done", "decisions", "stage-1 decisions"),
    ("reliab.", "reliability", "reliability: Dawid-Skene's probability that the annotator's verdict is right"),
    ("sens.", "sensitivity", "sensitivity: accepts an acceptable item"),
    ("spec.", "specificity", "specificity: flags a flawed item"),
    ("outcome", "outcome_agreement", "agreement with the item's outcome after review"),
)
PACE_COLUMNS = (
    ("annotator", "annotator", "the annotator (click a header to sort by it)"),
    ("gold", "gold_accuracy", "gold accuracy: the share of gold items decided as the gold answer says"),
    ("gold n", "gold_decided", "gold items decided"),
    ("median s", "median_seconds", "median seconds per decision"),
    ("skips", "skip_share", "share of items skipped"),
    ("undos", "undo_share", "share of decisions undone"),
)


#: the mark after the sorted column's header: ascending (lowest first), descending (highest first)
SORT_MARKS = {Qt.SortOrder.AscendingOrder: "\u25b2", Qt.SortOrder.DescendingOrder: "\u25bc"}


def header_text(head: str, column: int, sorted_column: int, order: Qt.SortOrder) -> str:
    """A header as shown: the sorted column's with its arrow ("reliab. \u25bc"), the others as they are."""
    return f"{head} {SORT_MARKS[order]}" if column == sorted_column else head


def _sortable(table: QTableWidget) -> None:
    """Sorted by a click on a header, the sorted column's header ending in its arrow (`header_text`): Qt's own sort
    arrow takes its room in every header (~25 px each), which would not leave the six columns whole in the review
    dock at 1366 x 768, and hidden, nothing said which column the rows were sorted by, nor which way."""
    table.setSortingEnabled(True)  # (shows Qt's arrow again)
    table.horizontalHeader().setSortIndicatorShown(False)
    _mark_sort(table)


def _mark_sort(table: QTableWidget) -> None:
    """The headers' texts for the column sorted now, each column wide enough for its header and values."""
    head = table.horizontalHeader()
    col, order = head.sortIndicatorSection(), head.sortIndicatorOrder()
    for j, (text, _key, _tip) in enumerate(table.columns):
        item = table.horizontalHeaderItem(j)
        want = header_text(text, j, col, order)
        if item is not None and item.text() != want:
            item.setText(want)
            table.resizeColumnToContents(j)


class _QualityTable(QTableWidget):
    """Its columns as wide as their headers and values whenever it is shown or its style changes: empty, each kept
    Qt's 100 px, the six behind a sideways scroll bar in the review dock at 1366 x 768 ("median s" cut); sized
    before the dock's style sheet came, they kept the default font's widths and cut the headers."""

    def fit_columns(self) -> None:
        """Each column as wide as its header and values, the last one stretched over the room left (Qt stretches
        it from the width it had when the stretch was set: its default 100 px, 18 px past the dock)."""
        head = self.horizontalHeader()
        head.setStretchLastSection(False)
        self.resizeColumnsToContents()
        head.setStretchLastSection(True)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.fit_columns()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() in (QEvent.Type.StyleChange, QEvent.Type.FontChange):
            self.fit_columns()


def _quality_table(columns: tuple[tuple[str, str, str], ...]) -> _QualityTable:
    t = _QualityTable(0, len(columns))
    t.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
    for j, (head, _key, tip) in enumerate(columns):
        item = QTableWidgetItem(head)
        item.setToolTip(tip)
        t.setHorizontalHeaderItem(j, item)
    t.columns = columns  # type: ignore[attr-defined]  # (the headers' texts, for `_mark_sort`)
    t.horizontalHeader().sortIndicatorChanged.connect(lambda *_: _mark_sort(t))
    t.verticalHeader().setVisible(False)  # row numbers said nothing (and the rows sort)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    t.horizontalHeader().setStretchLastSection(True)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    _sortable(t)
    fit_table_height(t)
    return t


class _Cell(QTableWidgetItem):
    """A cell that sorts by its number (None last), not by its text; `text`: how it reads (three decimals)."""

    def __init__(self, value: Any, text: str | None = None) -> None:
        if text is None:
            text = "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
        super().__init__(text)
        self.value = value
        if not isinstance(value, str):
            self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        a, b = self.value, getattr(other, "value", None)
        if a is None or b is None:
            return b is None and a is not None
        return a < b


class QualityBox(QGroupBox):
    """Annotator reliability (Dawid-Skene), gold accuracy, agreement with the outcome, pace; the thresholds of
    assets/review/quality.json drawn on the plot."""

    def __init__(self, store_path: Any, user: str | None) -> None:
        super().__init__("Annotator quality (Dawid-Skene over the stage-1 verdicts)")
        self.store_path, self.user = store_path, user
        self.bank: str | None = None
        self.report: dict[str, Any] | None = None
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        self.compute = QPushButton("Compute")
        self.compute.setToolTip("fit the reliability model on this bank's decisions (a few seconds)")
        self.compute.clicked.connect(self.start_compute)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        row.addWidget(self.compute)
        row.addWidget(self.message, 1)
        layout.addLayout(row)
        self.table = _quality_table(COLUMNS)  # the model's figures
        layout.addWidget(self.table)
        self.pace = _quality_table(PACE_COLUMNS)  # gold and pace
        layout.addWidget(self.pace)
        self.fit_note = QLabel("")  # whether the fit converged: the line `reviewer review quality` prints
        self.fit_note.setWordWrap(True)
        layout.addWidget(self.fit_note)
        self.plot = pg.PlotWidget()  # the dark background of the app's other plots
        self.plot.setFixedHeight(200)
        self.plot.setLabel("bottom", "gold accuracy")
        self.plot.setLabel("left", "reliability")
        self.plot.setXRange(-0.05, 1.05)
        self.plot.setYRange(0, 1.15)  # room for the labels above a point at 1
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        layout.addWidget(self.plot)

    def set_bank(self, bank: str | None) -> None:
        if bank != self.bank:
            self.bank, self.report = bank, None
            for table in (self.table, self.pace):
                table.setRowCount(0)
                table.fit_columns()
            self.plot.clear()
            self.fit_note.setText("")
            self.message.setText("Compute fits the model on this bank's decisions")

    def start_compute(self) -> bool:
        from reviewer.app.jobs import run_in_thread
        from reviewer.review.quality import quality_report
        from reviewer.store import Store

        if not self.bank:
            self.message.setText("no bank")
            return False
        path, bank, user = self.store_path, self.bank, self.user

        def work() -> dict[str, Any]:
            with Store(path) as store:  # its own connection: SQLite connections stay in their thread
                return quality_report(store, bank, user=user, reasons=False)  # the table shows no per-reason figure

        def failed(exc: BaseException) -> None:
            if alive(self.compute):
                self.compute.setEnabled(True)
                self.message.setText(f"not computed: {exc}")

        self.compute.setEnabled(False)
        self.message.setText(f"fitting the model on {bank}...")
        self.worker = run_in_thread(work, on_done=self.show_report, on_error=failed)
        return True

    def show_report(self, report: dict[str, Any]) -> None:
        if not alive(self.compute):
            return
        from reviewer.review.quality import convergence_note, quality_settings, weak_annotators

        self.compute.setEnabled(True)
        self.report = report
        rows = report["annotators"]
        for table, columns in ((self.table, COLUMNS), (self.pace, PACE_COLUMNS)):
            table.setSortingEnabled(False)
            table.setRowCount(len(rows))
            for i, a in enumerate(rows):
                for j, (_, key, _tip) in enumerate(columns):
                    text = seconds_text(a[key]) if key == "median_seconds" else None
                    table.setItem(i, j, _Cell(a[key], text))
            _sortable(table)
            table.fit_columns()
            fit_table_height(table)  # its rows, no more (two rows had shown behind a scroll bar)
        s = quality_settings()
        weak = weak_annotators(report, s)
        low, high = s.uncertain_posterior
        uncertain = sum(
            1
            for i in report["items"]
            if i["posterior_acceptable"] is not None and low <= i["posterior_acceptable"] <= high
        )
        said = f"{len(rows)} annotators, {uncertain} item(s) with an uncertain posterior"
        if weak:
            said += "; under the thresholds: " + ", ".join(w["annotator"] for w in weak) + " (review route)"
        self.message.setText(said)
        note = convergence_note(report["models"]) or ""
        self.fit_note.setText(note)
        self.fit_note.setStyleSheet(
            "" if report["models"].get("dawid_skene", {}).get("converged") else "color: #e0a030"
        )
        self._plot(rows, s)

    def _plot(self, rows: list[dict[str, Any]], s: Any) -> None:
        self.plot.clear()
        for y, x in ((s.min_reliability, None), (None, s.min_gold_accuracy)):
            line = pg.InfiniteLine(
                pos=y if y is not None else x,
                angle=0 if y is not None else 90,
                pen=pg.mkPen("#ff6b6b", width=1, style=Qt.PenStyle.DashLine),
            )
            self.plot.addItem(line)
        # annotators at nearly the same point share one label (ann at 0.932 and bob at 0.977 had been written over
        # each other): a point within LABEL_NEAR of a label's joins it
        at: list[tuple[float, float, list[str]]] = []
        for a in rows:
            if a["reliability"] is None:
                continue
            gold = a["gold_accuracy"]
            x = gold if gold is not None else 0.0  # no gold items: drawn on the axis, hollow
            y = a["reliability"]
            near = next(
                (names for lx, ly, names in at if abs(lx - x) < LABEL_NEAR[0] and abs(ly - y) < LABEL_NEAR[1]), None
            )
            if near is None:
                at.append((x, y, [a["annotator"]]))
            else:
                near.append(a["annotator"])
            brush = pg.mkBrush("#6baed6") if gold is not None else pg.mkBrush(None)
            self.plot.addItem(
                pg.ScatterPlotItem([x], [a["reliability"]], size=10, brush=brush, pen=pg.mkPen("#6baed6"))
            )
        for x, y, names in at:
            label = pg.TextItem(", ".join(names), color="#dddddd", anchor=(0, 1))
            label.setPos(x, y)
            self.plot.addItem(label)
        hollow = any(a["gold_accuracy"] is None for a in rows)
        self.plot.setTitle(
            "dashed: thresholds (quality.json)" + ("<br>hollow at 0: no gold items decided" if hollow else ""),
            size="8pt",
        )
