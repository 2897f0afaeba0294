"""The Qt widgets of napari's window that the app needs, reached through napari's public attributes and Qt's
own API only (napari's `window.main_menu` is the window's menu bar; no private napari names)."""

from __future__ import annotations

import weakref

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
