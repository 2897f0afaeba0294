"""The app's docks' one input filter (`WheelGuard`, on the application: it sees every widget's events, so no
widget needs one of its own):

- The mouse wheel scrolls the docks: a spin box, combo box or slider in one of the app's docks changes under the
  wheel only once it has the keyboard focus (a click or Tab; the wheel itself gives none, `no_wheel_focus`);
  unfocused, the wheel scrolls the dock it is in (it had changed the maintainer's 'adjudicate share' from 1.00 to
  0.50 instead of scrolling).
- Esc that no field took (a text field, spin box, combo, list: none of them uses it) gives the keyboard back to the
  canvas, where the review keys work (`leave_field`); the text typed stays. Esc in a dialog (a form)
  stays the dialog's: it cancels it."""

from __future__ import annotations

from qtpy.QtCore import QEvent, QObject, Qt
from qtpy.QtGui import QKeyEvent, QWheelEvent
from qtpy.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QMainWindow,
    QScrollBar,
    QWidget,
)

#: the dynamic property that marks the app's own dock contents (napari's widgets are left as they are)
OWN = "reviewer_dock"
VALUE_WIDGETS = (QAbstractSpinBox, QComboBox, QAbstractSlider)


def mark_own(widget: QWidget) -> None:
    """Let the wheel guard look after `widget` and everything in it."""
    widget.setProperty(OWN, True)
    for w in widget.findChildren(QWidget):
        if isinstance(w, VALUE_WIDGETS):
            no_wheel_focus(w)


def no_wheel_focus(widget: QWidget) -> None:
    """A click or Tab focuses the value widget, the wheel not: Qt gives the focus to a wheel-focus widget under the
    pointer (spin and combo boxes are) before any event filter sees the wheel, so the guard found it focused and let
    the wheel change it (a real wheel over the maintainer's unfocused 'k' turned 2 into 1)."""
    if widget.focusPolicy() == Qt.FocusPolicy.WheelFocus:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)


def _own(widget: QWidget) -> bool:
    w = widget
    while w is not None:
        if w.property(OWN):
            return True
        w = w.parentWidget()
    return False


def own_dock(widget: QWidget) -> QWidget | None:
    """The app's dock content `widget` is in, in the same window (a dialog opened from a dock is its own window:
    None), or None."""
    w = widget
    while w is not None:
        if w.property(OWN):
            return w
        if w.isWindow():
            return None
        w = w.parentWidget()
    return None


class WheelGuard(QObject):
    """An application event filter: wheel events on an unfocused value widget of the app's docks go to the scroll
    area around it instead; an Esc no field of a dock took gives the keyboard back to the canvas."""

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        # every event of every object comes here (~100 per review item, most of them paints): the event's class
        # sorts them out before its type is asked for (~2 us of Python each, ~0.3 us this way)
        cls = type(event)
        if cls is QKeyEvent:
            if event.type() == QEvent.KeyPress and event.key() == Qt.Key.Key_Escape and obj.property(OWN):
                return leave_field(obj)  # Esc came up untaken from a field of this dock (one that uses Esc takes it)
            return False
        if cls is QEvent:  # (a Polish is a plain event)
            if event.type() == QEvent.Polish and isinstance(obj, VALUE_WIDGETS) and _own(obj):
                no_wheel_focus(obj)  # one made after its dock was marked (a lazy tab, the maintainer's forms)
            return False
        if cls is not QWheelEvent or not isinstance(obj, VALUE_WIDGETS) or isinstance(obj, QScrollBar):
            return False
        if obj.hasFocus() or not _own(obj):
            return False
        area = obj.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            QApplication.sendEvent(area.verticalScrollBar(), event)
        return True  # never the value widget's own change


_guard: WheelGuard | None = None


def guard_wheel() -> WheelGuard:
    """Install the guard once per application."""
    global _guard  # noqa: PLW0603 - one filter per QApplication
    if _guard is None:
        _guard = WheelGuard()
        QApplication.instance().installEventFilter(_guard)
        for w in QApplication.allWidgets():  # those polished before the guard came (it comes after the first imagery)
            if isinstance(w, VALUE_WIDGETS) and _own(w):
                no_wheel_focus(w)
    return _guard


def leave_field(root: QWidget | None = None) -> bool:
    """Esc: the keyboard back to the canvas when it is in a field of the app's docks (under `root`, else any dock
    marked as the app's own, `qt_wheel.mark_own`), so that the review keys work again. Nothing typed is lost: a
    field keeps its text (a spin box takes the value typed, as when Tab leaves it). False: the keyboard was not in
    a dock's field (on the canvas, in a dialog, in napari's own widgets)."""
    focus = QApplication.focusWidget()
    if focus is None:
        return False
    dock = own_dock(focus)
    if dock is None or (root is not None and dock is not root):
        return False
    canvas = _window_canvas(dock)
    if canvas is None:
        return False
    if not canvas.window().isActiveWindow():  # from a floating dock: the window with the canvas
        canvas.window().activateWindow()
    canvas.setFocus(Qt.FocusReason.ShortcutFocusReason)
    return True


def _window_canvas(w: QWidget) -> QWidget | None:
    """The canvas of the napari window `w` is in (a floating dock's window is still a child of it)."""
    from qtpy.QtOpenGLWidgets import QOpenGLWidget

    while w is not None and not isinstance(w, QMainWindow):
        w = w.parentWidget()
    centre = w.centralWidget() if w is not None else None
    found = centre.findChildren(QOpenGLWidget) if centre is not None else []
    return found[0] if found else None
