"""The Qt widgets of napari's window that the app needs, reached through napari's public attributes and Qt's
own API only (napari's `window.main_menu` is the window's menu bar; no private napari names)."""

from __future__ import annotations

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


def canvas_widget(viewer) -> QWidget | None:
    """The canvas's native widget in the window's centre (where napari's key bindings listen), or None."""
    from qtpy.QtOpenGLWidgets import QOpenGLWidget

    window = main_window(viewer)
    centre = window.centralWidget() if window is not None else None
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


def fit_slider_labels(viewer) -> None:
    """Keep napari's date-slider counts ("456 | 899") and date label whole: napari sizes the counts with the dims
    bar's font, but its style sheet draws them larger, so with ~900 dates "899" showed as "89", and the date label
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
        # the date label left of the slider ("2016-10-01 ETM+"): napari sizes it before the slider has its width
        # (then at most a fifth of 0 px: "201"); widened to its text, at most a third of the slider's row. Only
        # widened: napari sizes all its axis labels again whenever a slider row resizes, so narrowing one napari
        # made wide enough came back at once, and each such round trip laid out the dims bar and the window again
        # (two extra canvas frames per item change)
        for label in labels(window, "axis_label"):
            row = label.parentWidget().width() if label.parentWidget() is not None else 0
            want = min(label.fontMetrics().horizontalAdvance(label.text().rstrip()) + 16, row // 3)
            if row > 0 and label.width() < want:
                label.setFixedWidth(want)

    def later(_event=None, *, sliders_changed: bool = False) -> None:
        def refit() -> None:
            if sliders_changed:  # napari may have made the slider rows anew: found again
                found.clear()
            fit()

        refit()  # now, before the next paint
        QTimer.singleShot(0, refit)  # and after napari's own resize of the same labels (a no-op if unchanged)
        QTimer.singleShot(200, refit)  # and once the slider row is laid out (its width known)

    viewer.dims.events.ndim.connect(lambda _event=None: later(sliders_changed=True))
    viewer.dims.events.range.connect(later)
    viewer.dims.events.axis_labels.connect(later)
    later(sliders_changed=True)
