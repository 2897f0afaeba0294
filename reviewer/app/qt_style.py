"""Small style helpers the docks share, so they fit a 1366 px screen under napari's stylesheet."""

from __future__ import annotations

from qtpy.QtWidgets import QAbstractSpinBox

#: napari's stylesheet gives every spin box min-width 70px plus 10px padding a side (~130 px with its +/-
#: buttons): three stretch columns of those made the Stack dock 600 px wide
COMPACT_SPIN = "QAbstractSpinBox { min-width: 40px; padding: 1px 2px; }"


def compact(spin: QAbstractSpinBox) -> QAbstractSpinBox:
    """A spin box only as wide as its value and buttons need."""
    spin.setStyleSheet(COMPACT_SPIN)
    return spin
