"""Issue 27, the keyboard between the canvas and the docks, as an annotator with the keyboard only: Tab from the
canvas goes to the Review dock first (where the work is), then on through the other docks in their keys' order;
Esc in any field of a dock (the review filters, the Stack dock's years, the trajectory's shade period, the pair's
dates) gives the keyboard back to the canvas, where the review keys work again, and keeps what was typed."""

from __future__ import annotations

import pytest
from qtpy.QtCore import Qt
from qtpy.QtWidgets import QApplication

from tests.gui.test_review_dock import label_lines, store_path, wait_evidence, window  # noqa: F401 - fixtures

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
    # (the tabs behind the Trajectory, Coverage, Chips and Pair, are not walked: their fields are out of sight)
    assert docks[:2] == ["Stack", "Trajectory"] and not {"Coverage", "Chips", "Pair"} & set(docks), docks
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


def test_tab_never_takes_the_focus_out_of_sight_into_a_tab_behind(window, qtbot):  # noqa: F811
    """The bottom docks are tabs (Trajectory in front; Coverage, Chips and Pair behind it), which Qt keeps shown
    off-screen: Tab walked 17 fields and title buttons of the Coverage, Chips and Pair tabs behind the Trajectory
    (the focus out of sight, 17 presses with nothing seen to move). Now every stop of a Tab walk round the window is in sight; the Pair view's fields
    take the focus again once its tab is in front, and not once it is behind again."""
    from tests.gui.shots_review import seen

    app = window("ann", "annotator")
    wait_evidence(app, qtbot, trajectory=False)
    app.docks["Trajectory"].raise_()
    qtbot.wait(50)
    assert not app.coverage_tab.built and app.coverage is not None  # the Coverage plot built while its tab is behind
    app.review.bank_combo.setFocus()
    qtbot.waitUntil(app.review.bank_combo.hasFocus, timeout=2000)

    def walk() -> list[tuple]:
        """Tab, then Shift+Tab, 80 times each from the Review dock's first field (round the docks and the canvas
        twice): the stops out of sight."""
        out_of_sight = []
        for key, mod in ((Qt.Key_Tab, Qt.NoModifier), (Qt.Key_Backtab, Qt.ShiftModifier)):
            app.review.bank_combo.setFocus()
            for _ in range(80):
                qtbot.keyClick(QApplication.focusWidget(), key, mod)
                w = QApplication.focusWidget()
                if w is not None and not seen(w):
                    out_of_sight.append((key == Qt.Key_Tab, dock_of(app, w), type(w).__name__))
        return out_of_sight

    assert walk() == []
    app.docks["Pair"].raise_()
    qtbot.wait(50)
    app.pair.a_edit.setFocus()
    assert app.pair.a_edit.hasFocus()
    qtbot.keyClick(app.pair.a_edit, Qt.Key_Tab)
    assert QApplication.focusWidget() is app.pair.use_a  # "A = shown", beside the field
    # Ctrl+3: the Trajectory in front again, the Pair view behind it: its fields are out of the walk again
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key_3, Qt.ControlModifier)
    qtbot.wait(50)
    assert not seen(app.pair.a_edit)
    app.review.bank_combo.setFocus()
    assert walk() == []


def test_tab_and_shift_tab_go_round_canvas_docks_canvas(window, qtbot):  # noqa: F811
    """Tab from the canvas goes through the docks in sight and back to the canvas (it went on after the last dock
    field into napari's date field, its dims bar, the activity button and the docks' title buttons, and never came
    back); Shift+Tab goes the same round backwards, from the canvas to the last dock field first."""
    app = window("ann", "annotator")
    wait_evidence(app, qtbot, trajectory=False)
    app.docks["Trajectory"].raise_()
    qtbot.wait(50)
    canvas = app.viewer.window._qt_viewer.canvas.native

    def round_from_canvas(key, mod) -> list:
        canvas.setFocus()
        qtbot.waitUntil(canvas.hasFocus, timeout=2000)
        stops = []
        for _ in range(80):
            qtbot.keyClick(QApplication.focusWidget(), key, mod)
            w = QApplication.focusWidget()
            if w is canvas:
                return stops
            stops.append(w)
        last = [(dock_of(app, w), type(w).__name__) for w in stops[-12:]]
        raise AssertionError(f"80 presses and not back on the canvas: {last}")

    forward = round_from_canvas(Qt.Key_Tab, Qt.NoModifier)
    ann = app.review.annotator
    review = [app.review.bank_combo, app.review.tabs.tabBar(), ann.site_combo, ann.task_combo, ann.state_combo]
    assert forward[:7] == [*review, ann.list, ann.focus]
    # every stop of the round is a field of a dock, in the docks' keys' order, each dock's fields together
    docks = [dock_of(app, w) for w in forward]
    fields = [d is not None and app.docks[d].widget().isAncestorOf(w) for d, w in zip(docks, forward, strict=True)]
    assert all(fields), [(d, type(w).__name__) for d, w in zip(docks, forward, strict=True)]  # (no title buttons)
    order = [d for i, d in enumerate(docks) if i == 0 or docks[i - 1] != d]
    assert order == ["Review", "Stack", "Trajectory"], order
    tools = app.trajectory.tools  # the round ends on the Trajectory dock's shade period and its plot
    assert forward[-3:] == [tools.period_from, tools.period_to, app.trajectory.plot], forward[-3:]
    # the Stack dock's sensor boxes (made when the site opened, after the docks were put in order) are in it
    sensors = app.controls.sensor_checks  # TM, ETM+, OLI, MODIS Terra, MODIS Aqua, VIIRS: the demo site's
    assert len(sensors) == 6 and all(any(box is w for w in forward) for box in sensors.values()), list(sensors)
    # Shift+Tab: the same round backwards, stop for stop, from the last dock field to the first; the Review dock's
    # tab bar between its bank and site fields either way
    backward = round_from_canvas(Qt.Key_Backtab, Qt.ShiftModifier)
    assert backward[-5:] == review[::-1]
    assert backward == forward[::-1]


@pytest.fixture
def scoring_window(make_napari_viewer, store_path, tmp_path, qtbot):  # noqa: F811
    """An annotator's window with the Scoring dock (a tab behind the Stack dock, built when first in front)."""
    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    viewer = make_napari_viewer(show=True)
    app = ReviewerApp(viewer, db=store_path, recent=RecentSites(tmp_path / "recent.json"), scoring=True)
    try:
        app.start_review("ann", "annotator")
        qwin = viewer.window._qt_window
        qwin.activateWindow()
        qtbot.waitUntil(qwin.isActiveWindow, timeout=5000)
        wait_evidence(app, qtbot, trajectory=False)
        qtbot.wait(50)
        yield app
    finally:
        app.close()


def test_ctrl_7_gives_the_keyboard_to_the_scoring_dock_never_shown_before(scoring_window, qtbot):
    """Ctrl+7 on a Scoring dock never in front: its form is made and takes the keyboard at its bank field (the
    keyboard had stayed on the canvas: the dock was empty when its first field was looked for)."""
    app = scoring_window
    assert not app.scoring_tab.built
    canvas = app.viewer.window._qt_viewer.canvas.native
    canvas.setFocus()
    qtbot.waitUntil(canvas.hasFocus, timeout=2000)
    qtbot.keyClick(canvas, Qt.Key_7, Qt.ControlModifier)
    qtbot.waitUntil(lambda: app.scoring_tab.built and app.scoring_panel.bank_edit.hasFocus(), timeout=2000)


def test_the_scoring_dock_behind_the_stack_is_no_tab_stop_until_brought_to_the_front(scoring_window, qtbot):
    """The Scoring dock is a tab behind the Stack dock: Tab's round never stops in its fields (out of sight), built
    while behind or not; Ctrl+7 brings it to the front with the keyboard at its bank field, Tab then goes on
    through its fields; Ctrl+2 puts the Stack in front again and the Scoring fields leave the round."""
    from tests.gui.shots_review import seen

    app = scoring_window
    qwin = app.viewer.window._qt_window
    assert app.docks["Scoring"] in qwin.tabifiedDockWidgets(app.docks["Stack"])
    panel = app.scoring_panel  # built now, while its tab is behind the Stack's
    assert not seen(panel.bank_edit)
    canvas = app.viewer.window._qt_viewer.canvas.native

    def round_docks() -> set:
        """The docks Tab stops in, once round from the canvas."""
        canvas.setFocus()
        qtbot.waitUntil(canvas.hasFocus, timeout=2000)
        docks = set()
        for _ in range(80):
            qtbot.keyClick(QApplication.focusWidget(), Qt.Key_Tab)
            w = QApplication.focusWidget()
            if w is canvas:
                return docks
            docks.add(dock_of(app, w))
        raise AssertionError("not back on the canvas after 80 presses")

    assert round_docks() == {"Review", "Stack", "Trajectory"}
    qtbot.keyClick(canvas, Qt.Key_7, Qt.ControlModifier)  # the Scoring dock to the front, its bank field first
    qtbot.waitUntil(lambda: panel.bank_edit.hasFocus() and seen(panel.bank_edit), timeout=2000)
    qtbot.keyClick(panel.bank_edit, Qt.Key_Tab)
    assert dock_of(app, QApplication.focusWidget()) == "Scoring"  # its next field ('Bank...')
    assert round_docks() == {"Review", "Scoring", "Trajectory"}  # (the Stack behind it now)
    qtbot.keyClick(canvas, Qt.Key_2, Qt.ControlModifier)  # the Stack in front again: Scoring out of the round
    qtbot.wait(50)
    assert not seen(panel.bank_edit)
    assert round_docks() == {"Review", "Stack", "Trajectory"}


def test_the_key_line_breaks_between_pairs_never_inside_one(qtbot):
    """At a narrow Review dock the key line broke between a key and what it does ("... · E" at a line's end,
    "correct · L/M/H ..." on the next): each pair is now one unit, at every dock width from 260 px up, for the
    annotator's and the expert's lines; the failure dock's long descriptions still wrap, each key kept with its first
    word."""
    from reviewer.app.qt_review_parts import (
        ANNOTATOR_KEYS_SHORT,
        EXPERT_KEYS_SHORT,
        FAILURE_KEYS,
        keys_label,
    )

    for keys in (ANNOTATOR_KEYS_SHORT, EXPERT_KEYS_SHORT, FAILURE_KEYS):
        label = keys_label(keys)
        qtbot.addWidget(label)
        for width in range(260, 620, 6):
            lines = [" ".join(line.split()) for line in label_lines(label, width)]
            said = " · ".join(f"{k} {v}" for k, v in keys)
            assert "".join("".join(lines).split()) == "".join(said.split()), (width, lines)  # all of it, in order
            for k, v in keys:
                whole = f"{k} {v}" if keys is not FAILURE_KEYS else f"{k} {v.split()[0]}"
                assert any(whole in line for line in lines), (width, whole, lines)
