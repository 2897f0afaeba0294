"""Small layout pieces the app's panels share."""

from __future__ import annotations

from qtpy.QtCore import Qt
from qtpy.QtWidgets import QHBoxLayout, QListWidget, QSplitter, QTableWidget, QWidget


def hrow(*widgets: QWidget) -> QWidget:
    """The widgets side by side in one form row, without the layout's own margins."""
    w = QWidget()
    lay = QHBoxLayout(w)
    lay.setContentsMargins(0, 0, 0, 0)
    for x in widgets:
        lay.addWidget(x)
    return w


class WholeRowsSplitter(QSplitter):
    """A vertical splitter whose first pane, a list, shows whole rows only (at least `min_rows`): its height is put
    back to a whole number of rows whenever the splitter is resized or its handle dragged, the rest going to the
    second pane (the expert's queue had opened three and a half rows tall, the fourth cut in half)."""

    def __init__(self, min_rows: int = 3) -> None:
        super().__init__(Qt.Orientation.Vertical)
        self.min_rows = min_rows
        self.splitterMoved.connect(lambda *_: self.whole_rows())

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.whole_rows()

    def whole_rows(self) -> None:
        """The list's height to the nearest whole number of its rows (call again when its rows change)."""
        lst = self.widget(0)
        row = lst.sizeHintForRow(0) if isinstance(lst, QListWidget) and lst.count() else 0
        if row <= 0 or self.count() < 2:
            return
        chrome = 2 * lst.frameWidth() + (lst.horizontalScrollBar().height() if lst.horizontalScrollBar().isVisible() else 0)  # fmt: skip
        lst.setMinimumHeight(self.min_rows * row + chrome)
        sizes = self.sizes()
        want = max(self.min_rows, round((sizes[0] - chrome) / row)) * row + chrome
        if want != sizes[0]:
            sizes[1] += sizes[0] - want
            sizes[0] = want
            self.setSizes(sizes)


def table_width(table: QTableWidget) -> int:
    """The width at which every column of `table` shows its header and values whole, no sideways scroll bar."""
    head = table.horizontalHeader()
    cols = sum(max(head.sectionSizeHint(j), table.columnWidth(j) if getattr(table, "wrap_first", False) and j == 0
                   else table.sizeHintForColumn(j)) for j in range(table.columnCount()))  # fmt: skip
    bar = table.verticalScrollBar().sizeHint().width() if table.verticalScrollBar().isVisible() else 0
    return cols + bar + 2 * table.frameWidth()


def fit_table_height(table: QTableWidget, max_rows: int = 8) -> None:
    """Tall enough for the header, up to max_rows rows and, when its columns are wider than it, the sideways scroll
    bar (rows beyond scroll)."""
    rows = min(table.rowCount(), max_rows)
    shown = sum(table.rowHeight(i) for i in range(rows))  # the rows as the style sheet draws them
    h = table.horizontalHeader().sizeHint().height() + (shown or table.verticalHeader().defaultSectionSize())
    if table.width() < table_width(table):
        h += table.horizontalScrollBar().sizeHint().height()
    h += 2 * table.frameWidth() + 2
    if table.height() != h:
        table.setFixedHeight(h)
