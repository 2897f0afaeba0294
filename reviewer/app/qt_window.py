"""The Qt widgets of napari's window that the app needs, reached through napari's public attributes and Qt's
own API only (napari's `window.main_menu` is the window's menu bar; no private napari names)."""

from __future__ import annotations

import weakref

from qtpy.QtCore import QEvent, QObject
from qtpy.QtWidgets import QDockWidget, QMainWindow, QWidget

#: napari's own docks (their object names), hidden while a review or coding dock takes their column
NAPARI_DOCKS = ("layer controls", "layer list")


def main_window(viewer) -> QMainWindow | None:
    """The QMainWindow napari's viewer lives in (the menu bar's window), or None without a Qt window."""
    menu = getattr(getattr(viewer, "window", None), "main_menu", None)
    try:
        window = menu.window() if menu is not None else None
    except RuntimeError:  # the window is gone (a dims event after it closed)
        return None
    return window if isinstance(window, QMainWindow) else None


#: viewer -> its canvas widget, found once (a walk of the window's centre, ~0.4 ms: twice per review item)
_canvases: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def canvas_widget(viewer) -> QWidget | None:
    """The canvas's native widget in the window's centre (where napari's key bindings listen), or None."""
    from reviewer.app.jobs import alive

    window = main_window(viewer)
    kept = _canvases.get(viewer) if window is not None else None
    if kept is not None and alive(kept) and kept.window() is window:
        return kept
    found = canvas_in(window) if window is not None else None
    if found is not None:
        _canvases[viewer] = found
    return found


def canvas_in(window: QWidget) -> QWidget | None:
    """The canvas in the centre of napari's main window `window` (its one OpenGL widget there), or None."""
    from qtpy.QtOpenGLWidgets import QOpenGLWidget

    centre = window.centralWidget() if isinstance(window, QMainWindow) else None
    found = centre.findChildren(QOpenGLWidget) if centre is not None else []
    return found[0] if found else None


def after_next_paint(viewer, func) -> None:
    """Call `func` once the canvas has put its next frame on screen (Qt's `QOpenGLWidget.frameSwapped`), or at once
    when the canvas is not shown (a hidden canvas never paints)."""
    canvas = canvas_widget(viewer)
    if canvas is None or not canvas.isVisible():
        func()
        return

    def once() -> None:
        canvas.frameSwapped.disconnect(once)
        func()

    canvas.frameSwapped.connect(once)


def give_keys_to_canvas(viewer, fallback: QWidget | None = None) -> None:
    """Keyboard focus back to the canvas (napari's keys), or to `fallback` when there is none."""
    target = canvas_widget(viewer) or fallback
    if target is not None:
        target.setFocus()


def napari_docks(viewer) -> list[QDockWidget]:
    """napari's layer list and layer controls docks (empty when napari made none)."""
    window = main_window(viewer)
    if window is None:
        return []
    return [d for d in window.findChildren(QDockWidget) if d.objectName() in NAPARI_DOCKS]


class _OnResize(QObject):
    """An event filter calling `func(widget)` after a widget it watches was resized."""

    def __init__(self, func) -> None:
        super().__init__()
        self.func = func

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize and isinstance(watched, QWidget):
            self.func(watched)
        return False


def fit_slider_labels(viewer) -> None:
    """Keep napari's date-slider counts ("456 | 899") and axis label ("date") whole: napari sizes the counts with the
    dims bar's font, but its style sheet draws them larger, so with ~900 dates "899" showed as "89", and the axis label
    before the slider row had a width. The labels are found by the object names napari's own style sheet selects
    them by (`slice_label`, `axis_label`), through Qt's API, and re-sized whenever the dates change."""
    from qtpy.QtCore import QTimer

    from reviewer.app.jobs import alive

    found: dict[str, list[QWidget]] = {}  # object name -> napari's labels, found again when the sliders change

    def labels(window: QMainWindow, name: str) -> list[QWidget]:
        kept = found.get(name)
        if kept is None or not all(alive(w) for w in kept):  # (a walk of the whole window: ~1 ms, 3x per item)
            kept = found[name] = window.findChildren(QWidget, name)
        return kept

    def fit() -> None:
        window = main_window(viewer)
        if window is None:
            return
        digits = max([len(str(max(int(n) - 1, 0))) for n in viewer.dims.nsteps] or [1])
        for label in labels(window, "slice_label"):
            margins = label.contentsMargins()
            extra = margins.left() + margins.right() + 10  # the line edit's frame and text margins
            width = label.fontMetrics().horizontalAdvance("8" * digits) + extra
            if label.minimumWidth() != width or label.maximumWidth() != width:
                label.setFixedWidth(width)
        # the axis label left of the slider ("date"; the caption over the canvas names the date shown): napari sizes
        # it before the slider has its width (then at most a fifth of 0 px); widened to its text, at most half the
        # slider's row. Its eliding line edit (superqt's) elides the text to its width less the room napari keeps for
        # the ellipsis, three average characters (with only the text's width and 16 px, a label lost its last letter).
        # Only widened: napari sizes all its axis labels again whenever a slider row resizes, so narrowing one napari
        # made wide enough came back at once, and each such round trip laid out the dims bar and the window again
        # (two extra canvas frames per item change)
        for label in labels(window, "axis_label"):
            label.installEventFilter(widen)  # (once: Qt keeps one entry per filter)
            fit_date(label)

    def fit_date(label: QWidget) -> None:
        row = label.parentWidget().width() if label.parentWidget() is not None else 0
        fm, margins = label.fontMetrics(), label.contentsMargins()
        need = fm.horizontalAdvance(label.text()) + fm.averageCharWidth() * 3  # the text and the ellipsis' room
        want = min(need + margins.left() + margins.right() + 8, row // 2)  # and the line edit's frame and margins
        if row > 0 and label.width() < want:
            label.setFixedWidth(want)

    # napari narrows the axis label again to a fifth of its slider whenever a slider row resizes (a dock made wider
    # beside it); its resize that follows widens it back, in the same layout pass
    widen = _OnResize(fit_date)

    fitted: list[tuple] = []  # what the labels were last fitted to (`shape`)

    def shape() -> tuple:
        """What the labels' widths follow: each slider's count digits (0: not shown) and the axis labels' text widths."""
        window = main_window(viewer)
        kept = labels(window, "axis_label") if window is not None else []
        widths = tuple(w.fontMetrics().horizontalAdvance(w.text()) for w in kept if alive(w))
        return (tuple(len(str(int(n) - 1)) if n > 1 else 0 for n in viewer.dims.nsteps), widths)

    def later(_event=None, *, sliders_changed: bool = False, range_changed: bool = False) -> None:
        """Fit the labels now and after napari's own resizes; only when what they show changed width (a new date
        label of the same width, every item and every step, changes nothing: no fit, no timers)."""
        now = shape()
        if not sliders_changed and fitted and fitted[0] == now:
            if range_changed:  # napari set the counts' widths again (`_update_range`, before this handler)
                fit()
            return
        fitted[:] = [now]

        def refit() -> None:
            if sliders_changed:  # napari may have made the slider rows anew: found again
                found.clear()
            fit()

        refit()  # now, before the next paint
        QTimer.singleShot(0, refit)  # and after napari's own resize of the same labels (a no-op if unchanged)
        QTimer.singleShot(200, refit)  # and once the slider row is laid out (its width known)

    viewer.dims.events.ndim.connect(lambda _event=None: later(sliders_changed=True))
    viewer.dims.events.range.connect(lambda _event=None: later(range_changed=True))
    viewer.dims.events.axis_labels.connect(later)
    later(sliders_changed=True)
