"""The date caption's Qt view: a label that draws a `caption.DateCaption` and follows it. In the app's window it sits
over the canvas's top-left corner (`caption_over_canvas`: white text on a translucent dark box, as napari's text
overlay drew it, letting every mouse event through to the canvas); in the plugin's Stack dock it is a line of the dock
(in plain napari the plugin changes nothing outside its own widgets).

A child widget, not napari's canvas text overlay: a new text there made napari resize the overlay's box and vispy
relink its shader program at the next draw (~40 ms of the UI thread per item under software GL); a label's new text
repaints the label's few pixels, composed with the canvas's frame."""

from __future__ import annotations

from qtpy.QtCore import QEvent, QSize, Qt
from qtpy.QtWidgets import QLabel, QWidget

from reviewer.app.caption import DateCaption

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
