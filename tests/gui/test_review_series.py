"""The review dock's trajectories under Xvfb, on the demo bank: while the annotator reads an item, the next item and
the one after it are prepared with their series, so stepping to either draws its trajectory at once."""

from __future__ import annotations

import pytest

from tests.gui.test_review_dock import press, store_path, window  # noqa: F401 - fixtures

pytestmark = pytest.mark.gui


@pytest.fixture
def app(window):  # noqa: F811 - the fixture imported above
    """ann's review window (test_review_dock's window fixture), on the first item of her queue."""
    return window("ann", "annotator")


def test_the_next_two_items_come_with_their_trajectories(app, qtbot):
    """Reading the first item, the next one is made ready with its trajectory and the one after it has its series
    read (a MODIS record's series reads for seconds: one item's reading time is not enough for it); skipping to
    each draws its index over its region as soon as the item is shown, nothing left to read."""
    from reviewer.app.review_evidence import region_mask
    from reviewer.bank.evidence import evidence_for

    panel, loader = app.review.annotator, app.review.loader
    order = [r["item"] for r in panel.rows]
    qtbot.waitUntil(lambda: loader.shown(trajectory=True), timeout=60000)
    qtbot.waitUntil(lambda: loader.ready(order[1], trajectory=True), timeout=60000)
    qtbot.waitUntil(lambda: loader.series_read(order[2]), timeout=60000)  # (its frame, pair, chips: once it is next)
    for k in (1, 2):
        press(qtbot, app, "Space")  # skip: the next item
        assert panel.view["item"] == order[k]
        view = evidence_for(panel.view["question"])
        qtbot.waitUntil(lambda: loader.shown(trajectory=False), timeout=10000)
        plot = app.trajectory
        assert not plot.busy and plot.series is not None
        mask, _ring = region_mask(view.region, app.session.index.site)
        assert (plot.series.name, plot.series.where) == (view.index, f"region of {int(mask.sum()):,} pixels")


def test_later_items_series_are_read_ahead_into_the_cube(app, qtbot):
    """Past the next two, the series of the items after them in my order are read while I read the first one (a
    MODIS record's series reads for seconds cold): each later item's stack over its index, on the site shown, is in
    the trajectory plot's cube, so its trajectory will be a mean over grids already read."""
    from reviewer.app.qt_review import SERIES_AHEAD
    from reviewer.bank.evidence import evidence_for
    from reviewer.record.series import cube_holds
    from reviewer.record.stack import open_stack

    panel, loader, session = app.review.annotator, app.review.loader, app.session
    qtbot.waitUntil(lambda: loader.shown(trajectory=True), timeout=60000)
    labels = {sc.label for sc in session.index.record_scenes()}
    later = []
    for row in panel.rows[3 : 3 + SERIES_AHEAD]:
        view = evidence_for(row["question"])
        if row["question"].get("site") != session.index.site.id or view.index is None:
            continue
        sensors = [x for x in row["question"].get("sensors") or () if x in labels]
        stack = open_stack(session.index, sensors=None if set(sensors) == labels else sensors)
        later.append((stack, view.index))
    assert later, "no later item on the site shown in the demo queue"
    cube = app.trajectory.cube
    qtbot.waitUntil(lambda: all(cube_holds(cube, stack, name) for stack, name in later), timeout=90000)


def test_the_plot_shows_none_of_the_previous_items_points_while_the_next_items_series_is_read(app, qtbot):
    """Item 1's trajectory drawn, I open an item far down my list, whose series was not read ahead: from the turn it
    is shown until its series lands, the plot says it is reading and shows no point (item 1's points under item 2's
    "reading ..." line were another item's evidence); then item 2's own series is drawn, over its own region."""
    from reviewer.app.review_evidence import region_mask
    from reviewer.bank.evidence import evidence_for

    panel, loader, plot = app.review.annotator, app.review.loader, app.trajectory
    qtbot.waitUntil(lambda: loader.shown(trajectory=True), timeout=60000)
    first = plot.series
    assert first is not None and len(plot.point_positions()) > 0
    site = app.session.index.site.id
    far = [  # an item of this site with a region, past the ones whose series are read ahead
        r
        for r in panel.rows[3:]
        if r["question"].get("site") == site
        and evidence_for(r["question"]).region is not None
        and not loader.series_read(r["item"])
    ]
    assert far, "no item past the read-ahead ones"
    target = far[-1]
    seen = []  # (caption, points drawn, series drawn) in the turn the item is applied

    def on_applied(key: str, _problem: str) -> None:
        if key == target["item"]:
            seen.append((plot.info.text(), plot.point_positions(), plot.series))

    loader.applied.connect(on_applied)
    panel.show_item(target["item"])
    qtbot.waitUntil(lambda: bool(seen), timeout=30000)
    caption, points, series = seen[0]
    assert caption.startswith("reading "), caption
    assert points == [] and series is None
    qtbot.waitUntil(lambda: loader.shown(trajectory=True), timeout=60000)
    view = evidence_for(target["question"])
    mask, _ring = region_mask(view.region, app.session.index.site)
    assert plot.series is not first and plot.series.where == f"region of {int(mask.sum()):,} pixels"
    assert len(plot.point_positions()) > 0
