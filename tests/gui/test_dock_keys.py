"""Issue 27, the keyboard between the canvas and the docks, as an annotator with the keyboard only: Tab from the
canvas goes to the Review dock first (where the work is), then on through the other docks in their keys' order;
Esc in any field of a dock (the review filters, the Stack dock's years, the trajectory's shade period, the pair's
dates) gives the keyboard back to the canvas, where the review keys work again, and keeps what was typed."""

from __future__ import annotations

import pytest
from qtpy.QtCore import Qt
from qtpy.QtWidgets import QApplication

from tests.gui.test_review_dock import store_path, wait_evidence, window  # noqa: F401 - fixtures

pytestmark = pytest.mark.gui


def dock_of(app, widget) -> str | None:
    """The name of the app's dock `widget` is in (None: the canvas or napari's own widgets)."""
    for name, dock in app.docks.items():
        if widget is not None and dock.isAncestorOf(widget):
            return name
    return None


def test_tab_goes_to_the_review_dock_first_and_esc_gives_the_keys_back_to_the_canvas(window, qtbot):  # noqa: F811
    app = window("ann", "annotator")
    wait_evidence(app, qtbot, trajectory=False)
    canvas = app.viewer.window._qt_viewer.canvas.native
    canvas.setFocus()
    qtbot.waitUntil(canvas.hasFocus, timeout=2000)

    def tab(key=Qt.Key_Tab, mod=Qt.NoModifier):
        qtbot.keyClick(QApplication.focusWidget(), key, mod)
        return QApplication.focusWidget()

    # Tab from the canvas: the Review dock's fields top to bottom (it had gone to napari's activity button, then the
    # Stack dock, and never reached the Review dock); Shift+Tab comes back to the canvas
    review = app.review
    assert tab() is review.bank_combo
    walked = [tab() for _ in range(6)]
    ann = review.annotator
    assert walked == [review.tabs.tabBar(), ann.site_combo, ann.task_combo, ann.state_combo, ann.list, ann.focus]
    docks = []
    for _ in range(40):  # then the other docks, in their keys' order (Ctrl+2, 3, ...)
        name = dock_of(app, tab())
        if name and (not docks or docks[-1] != name):
            docks.append(name)
    assert docks[:3] == ["Stack", "Trajectory", "Chips"] or docks[:3] == ["Stack", "Trajectory", "Coverage"], docks
    review.bank_combo.setFocus()
    assert tab(Qt.Key_Backtab, Qt.ShiftModifier) is canvas

    # Esc in a field of any dock: the keys back on the canvas, the text typed kept; N then works as a review key
    controls, tools, pair = app.controls, app.trajectory.tools, app.pair
    fields = [
        (ann.state_combo, None),
        (controls.year_from, "2001"),
        (tools.period_to, "2012"),
        (pair.a_edit, "2003-2005"),
    ]
    for field, text in fields:
        app.docks[dock_of(app, field)].raise_()
        field.setFocus()
        qtbot.waitUntil(field.hasFocus, timeout=2000)
        if text is not None:
            qtbot.keyClick(field, Qt.Key_A, Qt.ControlModifier)
            qtbot.keyClicks(field, text)
        qtbot.keyClick(field, Qt.Key_Escape)
        assert canvas.hasFocus(), (field, QApplication.focusWidget())
        if text is not None:
            assert field.text() == text
    assert controls.year_from.value() == 2001  # taken, as when Tab leaves it
    before = ann.view["item"]
    qtbot.keyClick(canvas, Qt.Key_N)
    assert ann.view["item"] != before
