"""The mouse wheel scrolls the docks: a spin box, combo box or slider in one of the app's docks changes under the
wheel only once it has the keyboard focus (a click or Tab); unfocused, the wheel scrolls the dock it is in (it had
changed the maintainer's 'adjudicate share' from 1.00 to 0.50 instead of scrolling)."""

from __future__ import annotations

from qtpy.QtCore import QEvent, QObject
from qtpy.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QScrollBar,
    QWidget,
)

#: the dynamic property that marks the app's own dock contents (napari's widgets are left as they are)
OWN = "reviewer_dock"
VALUE_WIDGETS = (QAbstractSpinBox, QComboBox, QAbstractSlider)


def mark_own(widget: QWidget) -> None:
    """Let the wheel guard look after `widget` and everything in it."""
    widget.setProperty(OWN, True)


def _own(widget: QWidget) -> bool:
    w = widget
    while w is not None:
        if w.property(OWN):
            return True
        w = w.parentWidget()
    return False


class WheelGuard(QObject):
    """An application event filter: wheel events on an unfocused value widget of the app's docks go to the scroll
    area around it instead."""

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() != QEvent.Wheel or not isinstance(obj, VALUE_WIDGETS) or isinstance(obj, QScrollBar):
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
    return _guard
