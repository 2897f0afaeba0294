"""Small layout pieces the app's panels share."""

from __future__ import annotations

from qtpy.QtWidgets import QHBoxLayout, QWidget


def hrow(*widgets: QWidget) -> QWidget:
    """The widgets side by side in one form row, without the layout's own margins."""
    w = QWidget()
    lay = QHBoxLayout(w)
    lay.setContentsMargins(0, 0, 0, 0)
    for x in widgets:
        lay.addWidget(x)
    return w
