"""The trajectory dock shows a review item's series completely in the turn that hands it over (range, axis
label, caption), as the next paint draws it, and keeps it after the events that follow; its caption
is measured like any word-wrapped rich label. Series here are made by hand so the expected ranges and counts
can be read off them."""

from __future__ import annotations

import numpy as np
import pytest
from qtpy.QtWidgets import QLabel, QVBoxLayout, QWidget

from reviewer.app.qt_style import RichCaption
from reviewer.record.series import Trajectory

pytestmark = pytest.mark.gui


def hand_series(stack, name: str, values: list[float], masked: list[bool]) -> Trajectory:
    """A region series over the first scenes of the stack with the given values (no spread: the error bars,
    which count in the y range, are then the points themselves)."""
    s = Trajectory(name=name, where="region of 16 pixels")
    for i, (v, m) in enumerate(zip(values, masked, strict=True)):
        s.append(i, stack.scenes[i], v, 0.0, m, 16)
    return s


def show_item(traj, series: Trajectory, mask: np.ndarray) -> None:
    """What the review's docks turn does for an item whose series was read ahead."""
    traj.set_region(mask, series.name)
    traj.expect_series(f"reading {series.name} over the region...")
    traj.show_series(series, False)


def left_label_offset(traj) -> float:
    """How far (px) the value axis's label sits from the middle of the axis, along it."""
    axis = traj.plot.getAxis("left")
    return abs(axis.label.sceneBoundingRect().center().y() - axis.sceneBoundingRect().center().y())


def trajectory_in_front(app, qtbot):
    """The Trajectory dock in front once the site's docks are filled in (the trajectory's, which resets the plot for
    the site, in the open's last turn), and a 4 x 4 px region."""
    s, traj = app.session, app.trajectory
    first_year = min(sc.year for sc in s.index.record_scenes())
    qtbot.waitUntil(lambda: app.settled and traj.tools.period_from.minimum() == first_year, timeout=30000)
    app.docks["Trajectory"].raise_()
    mask = np.zeros(s.index.site.shape, bool)
    mask[4:8, 4:8] = True
    return traj, mask


def test_an_items_series_is_ranged_labelled_and_captioned_in_its_turn(opened, qtbot):
    s = opened.session
    traj, mask = trajectory_in_front(opened, qtbot)
    ndvi = hand_series(s.stack, "ndvi", [0.10, 0.20, 0.30, 0.25], [False, False, False, True])
    mndwi = hand_series(s.stack, "mndwi", [-0.50, 0.40, 0.90], [False, False, False])
    vb = traj.plot.getViewBox()
    x_range = vb.viewRange()[0]

    show_item(traj, ndvi, mask)  # no event processed yet: what the next paint draws
    low, high = vb.viewRange()[1]
    # the four values (the masked one drawn hollow) with a margin a side for the padding (at most 10% of the
    # 0.2 span) and the points' radius: at most a quarter of the span
    assert 0.05 <= low <= 0.10 and 0.30 <= high <= 0.35, (low, high)
    assert traj.plot.getAxis("left").labelText == "NDVI"
    assert "as recorded (not harmonised)" in traj.info.text()  # said once, in the caption
    assert "3 clear, 1 masked (hollow)" in traj.info.text()

    show_item(traj, mndwi, mask)
    low, high = vb.viewRange()[1]
    assert -0.85 <= low <= -0.50 and 0.90 <= high <= 1.25, (low, high)  # span 1.4: a quarter is 0.35
    assert traj.plot.getAxis("left").labelText == "MNDWI"
    assert "3 clear, 0 masked (hollow)" in traj.info.text()
    qtbot.wait(150)  # the layouts, the paint and the cursor's settling: the item stays as shown
    assert vb.viewRange()[1] == pytest.approx([low, high])
    assert vb.viewRange()[0] == pytest.approx(x_range)  # the record's years, not re-ranged to the points
    assert vb.autoRangeEnabled()[1]  # the next item's values re-range y again

    show_item(traj, ndvi, mask)
    qtbot.wait(150)
    assert 0.05 <= vb.viewRange()[1][0] <= 0.10
    # the shorter label is centred on the axis again, not left where the longer one ended
    assert left_label_offset(traj) <= 1.5


def test_rich_caption_is_as_tall_as_a_label_with_its_text(qtbot):
    """The caption's heights for a width come from its hidden twin: they must be a word-wrapped rich QLabel's
    for the same text in the same place, more lines when narrower, and the caption shown whole in a layout."""
    box = QWidget()
    qtbot.addWidget(box)
    layout = QVBoxLayout(box)
    caption = RichCaption("short")
    reference = QLabel()
    reference.setTextFormat(caption.textFormat())
    reference.setWordWrap(True)
    layout.addWidget(caption)
    layout.addWidget(reference)
    text = (
        "ndvi at region of 169 pixels, as recorded (no cross-sensor harmonisation): 61 clear, 6 masked "
        "observations (hollow). <span style='color:#1f77b4'>&#9679;</span> TM "
        "<span style='color:#ff7f0e'>&#9679;</span> ETM+"
    )
    caption.setText(text)
    reference.setText(text)
    heights = {w: caption.heightForWidth(w) for w in (160, 320, 900)}
    assert heights == {w: reference.heightForWidth(w) for w in heights}
    line = caption.fontMetrics().lineSpacing()
    assert heights[160] >= heights[320] + line and heights[320] >= heights[900] + line, heights
    box.resize(320, 400)
    box.show()
    qtbot.waitExposed(box)
    assert caption.height() >= caption.heightForWidth(caption.width())
    caption.setText("one line")  # measured anew, not the longer text's height
    assert caption.heightForWidth(320) < heights[320]
    caption.setText(text)
    assert caption.heightForWidth(320) == heights[320]
    font = caption.font()
    font.setPointSizeF(2 * font.pointSizeF())
    caption.setFont(font)  # a larger font: measured anew, taller
    reference.setFont(font)
    assert caption.heightForWidth(320) == reference.heightForWidth(320) > heights[320]


def test_the_next_items_points_redraw_the_value_axis_not_the_year_axis(opened, qtbot):
    """Each review item's points repaint the plot. The year axis of a site is the same for all its items: it is shown
    as drawn (each axis's ticks, labels and grid lines had been replayed at every repaint of the plot, ~1 ms each),
    while the value axis, re-ranged to the item's values, is drawn anew; and a year range changed (another site)
    draws the year axis again, with its new years."""
    from qtpy.QtGui import QPicture

    app, s = opened, opened.session
    traj, mask = trajectory_in_front(app, qtbot)
    first_year = min(sc.year for sc in s.index.record_scenes())
    show_item(traj, hand_series(s.stack, "ndvi", [0.10, 0.20, 0.30, 0.25], [False] * 4), mask)
    qtbot.wait(200)  # painted
    played: list[str] = []  # the axes whose ticks, labels and grid lines were replayed onto the plot

    class Played(QPicture):
        """An axis's drawing as it was, saying when it is replayed (the axis's paint replays its picture)."""

        def __init__(self, axis) -> None:
            super().__init__(axis.picture)
            self.side = axis.orientation

        def play(self, painter) -> bool:
            if not isinstance(painter.device(), QPicture):  # (not a picture that measures the ticks)
                played.append(self.side)
            return super().play(painter)

    left, bottom = traj.plot.getAxis("left"), traj.plot.getAxis("bottom")
    left.picture, bottom.picture = Played(left), Played(bottom)
    years_before = traj.plot.grab().toImage()
    played.clear()
    # the next item, its series read ahead (drawn in the item's turn, no empty plot first), its values a little
    # higher: other ticks on the value axis, their labels as wide as before
    traj.set_region(mask, "ndvi")
    traj.expect_series("")
    traj.show_series(hand_series(s.stack, "ndvi", [0.35, 0.45, 0.55, 0.50], [False] * 4), False)
    shown = traj.plot.grab().toImage()  # what the window's next paint draws
    qtbot.wait(150)
    assert 0.30 <= traj.plot.getViewBox().viewRange()[1][0] <= 0.35
    assert not isinstance(left.picture, Played)  # the value axis drawn anew
    assert isinstance(bottom.picture, Played) and "bottom" not in played, played  # the year axis as it was
    assert shown != years_before  # the item's points and value axis drawn

    traj.plot.setXRange(first_year - 10, first_year + 30, padding=0)  # years the axis did not show before
    moved = traj.plot.grab().toImage()
    assert not isinstance(bottom.picture, Played)  # the year axis drawn anew, with its new years
    ticks = bottom.tickValues(first_year - 10, first_year + 30, 400)
    assert any(first_year - 10 <= v < first_year for _, values in ticks for v in values)
    assert moved != shown
