"""Small style helpers the docks share, so they fit a 1366 px screen under napari's stylesheet."""

from __future__ import annotations

from qtpy.QtCore import QPoint, QRect, QSize, Qt
from qtpy.QtWidgets import QAbstractSpinBox, QLabel, QLayout, QWidget

#: napari's stylesheet gives every spin box min-width 70px plus 10px padding a side (~130 px with its +/-
#: buttons): three stretch columns of those made the Stack dock 600 px wide
COMPACT_SPIN = "QAbstractSpinBox { min-width: 40px; padding: 1px 2px; }"
#: px a compact spin box's min-width needs beyond its text: napari's +/- buttons and the frame take 39 px of the
#: box (measured at 1366 and 1600 px wide screens), the line edit's text margins 6, less the 4 px padding above
SPIN_CHROME = 41


def set_style(widget: QWidget, sheet: str) -> None:
    """`widget`'s own style sheet, set only when it changes: Qt polishes the widget anew at every set, even of the
    sheet it has (~0.1 ms under napari's style sheet, and its size hints computed again), and the docks set their
    status lines' colours at every save, run shown or job update."""
    if widget.styleSheet() != sheet:
        widget.setStyleSheet(sheet)


def scroll_into_view(start: QWidget | None, *widgets: QWidget) -> None:
    """Scroll the scroll area around `start` (the nearest at or above it: a dock's) so that `widgets` are seen, as
    Qt's scroll area does for a field Tab gives the keyboard to."""
    from qtpy.QtWidgets import QScrollArea

    area = start
    while area is not None and not isinstance(area, QScrollArea):
        area = area.parentWidget()
    if area is not None:
        for w in widgets:
            area.ensureWidgetVisible(w)


def compact(spin: QAbstractSpinBox, widest: str | None = None) -> QAbstractSpinBox:
    """A spin box only as wide as its value and buttons need. `widest`: the longest text it must show whole (a
    squeezed row otherwise cut the Scoring dock's 10000 resamples to "1000(", the last digit under the buttons):
    the spin box never gets narrower than that text, its frame and its buttons under the style in force."""
    spin.setStyleSheet(COMPACT_SPIN)
    if widest is not None:
        # in the style sheet, not setMinimumWidth: a style sheet's min-width is applied again at every polish
        # (a dock moving into the window), over any minimum set in code
        width = max(40, spin.fontMetrics().horizontalAdvance(widest) + SPIN_CHROME)
        spin.setStyleSheet(COMPACT_SPIN.replace("min-width: 40px", f"min-width: {width}px"))
    return spin


class StatusLabel(QLabel):
    """A word-wrapped status line (saved, pending, evidence problems) that takes no room while it says nothing: an
    empty wrapped QLabel kept a line's height, and three of them left a blank band above the key list."""

    def __init__(self, text: str = "", parent=None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return super().sizeHint() if self.text() else QSize(0, 0)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return super().minimumSizeHint() if self.text() else QSize(0, 0)

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        return super().heightForWidth(width) if self.text() else 0


class RichCaption(QLabel):
    """A word-wrapped rich-text caption that asks for no repaint of its own when a layout measures it.

    Qt builds a rich label's document lazily and measures its height for a width by re-laying the document out
    to that width and back, and each re-layout asks for the label's repaint. The trajectory's caption, set once
    per review item, was measured by its dock's layouts after the window's paint (at the dock's width and at
    its one-row width), which painted the window once more (~20 ms under Xvfb) for a caption already shown.
    Here the caption's document is built and its size hints kept when the text is set, and heights for a
    width are measured on a hidden twin (same text, font and style), whose re-layouts paint nothing; and the
    caption's own document is laid out again when it is resized, not in its paint (where the re-layout's
    repaint request was queued, and painted the window once more). The twin's heights are kept per width until
    the text, font or style changes: the layouts ask ~10 times per review item for the same two or three widths,
    and each answer lays the rich text out again (~0.1 ms)."""

    def __init__(self, text: str = "", parent=None) -> None:
        super().__init__(parent)
        self._heights: dict[int, int] = {}  # width -> the twin's height for it, for the text, font and style now
        self._twin = QLabel(self)  # a child: the dock's font and style sheet reach it as they reach the caption
        self._twin.hide()
        for label in (self, self._twin):
            label.setTextFormat(Qt.RichText)
            label.setWordWrap(True)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        if text == self.text():
            return
        self._heights.clear()
        super().setText(text)
        self._twin.setText(text)
        self.sizeHint()  # QLabel keeps both hints until the text, font or style changes
        self.minimumSizeHint()

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        height = self._heights.get(width)
        if height is None:
            height = self._heights[width] = self._twin.heightForWidth(width)
        return height

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override: a font or style (sheet) change, say
        self._heights.clear()
        super().changeEvent(event)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        QLabel.heightForWidth(self, self.width())  # lays the document out at the new width


class FlowLayout(QLayout):
    """A row of tools that wraps onto further rows when the dock is narrower than the row (Qt's flow-layout
    example): a bottom dock under the canvas beside a review dock is ~500 px wide, its tool row ~800 px."""

    def __init__(self, parent=None, spacing: int = 4) -> None:
        super().__init__(parent)
        self._items: list = []
        #: width -> height of the rows, until the layout is invalidated (a tool's size hint, a tool shown or hidden):
        #: the dock's layouts ask ~5 times per review item for the same widths
        self._heights: dict[int, int] = {}
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    def invalidate(self) -> None:  # noqa: D102 - Qt override
        self._heights.clear()
        super().invalidate()

    def addItem(self, item) -> None:  # noqa: N802 - Qt override
        self._items.append(item)
        self._heights.clear()

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):  # noqa: N802 - Qt override
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):  # noqa: N802 - Qt override
        self._heights.clear()
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self):  # noqa: N802 - Qt override
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        height = self._heights.get(width)
        if height is None:
            height = self._heights[width] = self._place(QRect(0, 0, width, 0), move=False)
        return height

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt override
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override: the tools in one row
        items = [i for i in self._items if not i.isEmpty()]
        width = sum(i.sizeHint().width() for i in items) + self.spacing() * max(len(items) - 1, 0)
        height = max((i.sizeHint().height() for i in items), default=0)
        m = self.contentsMargins()
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt override: the widest tool, one row high
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return QSize(size.width() + m.left() + m.right(), size.height() + m.top() + m.bottom())

    def _place(self, rect: QRect, *, move: bool) -> int:
        """Fill rows left to right; each tool centred in its row's height (a check box beside a button)."""
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        rows: list[list] = [[]]
        x = area.x()
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            if x > area.x() and x + hint.width() > area.right() + 1:
                rows.append([])
                x = area.x()
            rows[-1].append((item, QPoint(x, 0), hint))
            x += hint.width() + self.spacing()
        y = area.y()
        for row in rows:
            line = max((hint.height() for _, _, hint in row), default=0)
            if move:
                for item, at, hint in row:
                    item.setGeometry(QRect(QPoint(at.x(), y + (line - hint.height()) // 2), hint))
            y += line + self.spacing()
        return y - self.spacing() - rect.y() + m.bottom() if rows[0] else area.y() - rect.y() + m.bottom()
