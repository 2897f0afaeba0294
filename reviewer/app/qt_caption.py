"""The date caption's and the date slider's Qt views. The caption: a label that draws a `caption.DateCaption` and
follows it. In the app's window it sits
over the canvas's top-left corner (`caption_over_canvas`: white text on a translucent dark box, as napari's text
overlay drew it, letting every mouse event through to the canvas); in the plugin's Stack dock it is a line of the dock
(in plain napari the plugin changes nothing outside its own widgets).

A child widget, not napari's canvas text overlay: a new text there made napari resize the overlay's box and vispy
relink its shader program at the next draw (~40 ms of the UI thread per item under software GL); a label's new text
repaints the label's few pixels, composed with the canvas's frame.

The date slider (`QtDateSlider`): the app's own widget over `caption.DatePosition`, stepping the session's shown date
(`state.current`); in the app's window a strip under the canvas (`main_window.ReviewerApp`'s "Date" dock), in the
plugin's Stack dock a line under the caption. (It was napari's dims slider, the date a napari dims axis: each date step had napari slice
every layer, each stack of another length its data setter, and the bar's labels needed their widths kept by hand.)"""

from __future__ import annotations

from collections.abc import Callable

from qtpy.QtCore import QEvent, QSize, Qt
from qtpy.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QSlider, QWidget

from reviewer.app.caption import DateCaption, DatePosition

#: the label's distance from the canvas's top and left edges (px), as napari's overlay padding
MARGIN_PX = 10
#: white on black at 80% opacity: napari's text overlay box on its dark canvas (the canvas colour at 0.8 alpha)
OVER_CANVAS_STYLE = (
    "QLabel { color: white; background-color: rgba(0, 0, 0, 204); padding: 3px 6px; border-radius: 2px; }"
)


class QtDateCaption(QLabel):
    """A label saying what `caption` says, hidden while it says nothing."""

    def __init__(self, caption: DateCaption, parent: QWidget | None = None, *, over_canvas: bool = False) -> None:
        super().__init__(parent)
        self.caption = caption
        self.over_canvas = over_canvas
        self.setObjectName("date caption")
        self.setTextFormat(Qt.PlainText)
        if over_canvas:
            self.setStyleSheet(OVER_CANVAS_STYLE)
            self.setAttribute(Qt.WA_TransparentForMouseEvents)  # clicks, drags and the wheel reach the canvas
            self.setFocusPolicy(Qt.NoFocus)
            self.move(MARGIN_PX, MARGIN_PX)
            if parent is not None:
                parent.installEventFilter(self)  # the canvas resized: the caption fitted to its width again
        else:
            self.setWordWrap(True)
            font = self.font()
            font.setBold(True)
            self.setFont(font)
        self._seen: bool | None = None  # shown (explicitly, so an empty caption stays hidden when its window shows)
        caption.events.text.connect(self._on_text)
        self._on_text(caption.text)

    def _on_text(self, text: str) -> None:
        try:
            if text != self.text():
                self.setText(text)
                if self.over_canvas:
                    self.fit()
            if self._seen != bool(text):
                self._seen = bool(text)
                self.setVisible(self._seen)
        except RuntimeError:  # the label is gone with its window (the model outlived it; psygnal holds it weakly)
            return

    def fit(self) -> None:
        """Over the canvas (a free child: no layout sizes it): one line as wide as the text, or wrapped at words to the
        canvas's width less the margins when the canvas is narrower (never cut)."""
        parent = self.parentWidget()
        room = max(parent.width() - 2 * MARGIN_PX, 80) if parent is not None else 10_000
        self.setWordWrap(False)
        one_line = self.sizeHint()
        if one_line.width() <= room:
            size = one_line
        else:
            self.setWordWrap(True)
            size = QSize(room, self.heightForWidth(room))
        if size != self.size():
            self.resize(size)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize and watched is self.parentWidget() and self.text():
            self.fit()
        return False


def caption_over_canvas(viewer, caption: DateCaption) -> QtDateCaption | None:
    """The caption in a label over the top-left corner of the viewer's canvas (None: the viewer has no Qt canvas)."""
    from reviewer.app.qt_window import canvas_widget

    canvas = canvas_widget(viewer)
    if canvas is None:
        return None
    label = QtDateCaption(caption, canvas, over_canvas=True)
    label.raise_()
    return label


#: what the slider's tooltip and F1 say of its keys
SLIDER_KEYS = "Left / Right: previous / next date; Shift+Left / Shift+Right: a year; Home / End: first / last date"


class _DateBar(QSlider):
    """The slider: its own keys step dates as the canvas's do, Shift+Left / Shift+Right a year (`on_year`)."""

    def __init__(self, on_year: Callable[[int], None]) -> None:
        super().__init__(Qt.Orientation.Horizontal)
        self.on_year = on_year

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt override
        key, shift = event.key(), bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if shift and key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            self.on_year(-1 if key == Qt.Key.Key_Left else 1)
            event.accept()
            return
        super().keyPressEvent(event)


class QtDateSlider(QWidget):
    """The date slider: the shown date's name (unless `name_date` is False), a slider over the stack's dates and its
    place, "12 / 67" (as napari's dims slider counted). Moving it (mouse or keys, once it has the focus) calls
    `jump(index)`; Shift+Left / Right call `step_year(-1 | +1)`. It follows `position` (the session's `DatePosition`), disabled while no date is shown.
    The labels only widen (to the widest date name and count seen), so stepping never re-lays out the window."""

    def __init__(
        self,
        position: DatePosition,
        jump: Callable[[int], None],
        step_year: Callable[[int], None],
        parent: QWidget | None = None,
        *,
        name_date: bool = True,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("date slider")
        self.position = position
        self.jump = jump
        self.date = QLabel()
        self.date.setObjectName("date slider date")
        self.date.setVisible(name_date)  # (the plugin's Stack dock names it in the caption line over the slider)
        self.slider = _DateBar(step_year)
        self.slider.setObjectName("date slider bar")
        self.slider.setMinimum(0)
        self.slider.setPageStep(10)
        self.slider.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # a click or Tab; the wheel only once focused (qt_wheel)
        self.slider.setAccessibleName("date")
        self.slider.setToolTip(SLIDER_KEYS)
        self.count = QLabel()
        self.count.setObjectName("date slider count")
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(self.date)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.count)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.slider.valueChanged.connect(self._on_moved)
        for name in ("index", "count", "date"):
            getattr(position.events, name).connect(self._sync)
        self._sync()

    def _on_moved(self, value: int) -> None:
        if value != self.position.index:
            self.jump(int(value))

    def _sync(self, _value=None) -> None:
        p = self.position
        try:
            if p.count and self.slider.maximum() != p.count - 1:
                self.slider.blockSignals(True)
                self.slider.setMaximum(p.count - 1)
                self.slider.blockSignals(False)
            if self.slider.value() != p.index:
                self.slider.blockSignals(True)
                self.slider.setValue(p.index)
                self.slider.blockSignals(False)
            _set_text(self.date, p.date)
            digits = len(str(max(p.count, 1)))
            _set_text(self.count, p.text, widest="8" * digits + " / " + "8" * digits)
            self.slider.setAccessibleDescription(f"{p.date}, {p.text}")
            if self.slider.isEnabled() != bool(p.count):
                self.slider.setEnabled(bool(p.count))
        except RuntimeError:  # the widget is gone with its window (the model outlived it; psygnal holds it weakly)
            return


def _set_text(label: QLabel, text: str, *, widest: str | None = None) -> None:
    """A label's new text; its width only grows (to the text, or to `widest`), so the row keeps its layout."""
    if label.text() == text:
        return
    label.setText(text)
    need = label.fontMetrics().horizontalAdvance(widest or text) + 4
    if need > label.minimumWidth():
        label.setMinimumWidth(need)
