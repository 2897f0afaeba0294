"""The review dock's trajectories under Xvfb, on the demo bank: while the annotator reads an item, the next item and
the one after it are prepared with their series, so stepping to either draws its trajectory at once."""

from __future__ import annotations

import pytest

from tests.gui.test_review_dock import make_store, press

pytestmark = pytest.mark.gui


@pytest.fixture
def app(make_napari_viewer, tmp_path, demo_db, demo_bank, demo_site, qtbot):
    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    store = make_store(tmp_path / "review.sqlite", demo_db, demo_bank, demo_site)
    viewer = make_napari_viewer(show=True)
    made = ReviewerApp(viewer, db=store, recent=RecentSites(tmp_path / "recent.json"), scoring=False)
    made.start_review("ann", "annotator")
    qwin = viewer.window._qt_window
    qwin.activateWindow()
    qtbot.waitUntil(qwin.isActiveWindow, timeout=5000)
    yield made
    made.close()


def test_the_next_two_items_come_with_their_trajectories(app, qtbot):
    """Reading the first item, the next two are made ready, trajectories included (a MODIS record's series reads
    for seconds: one item's reading time is not enough for it); skipping to each draws its index over its region in
    the turn of the key, nothing left to read."""
    from reviewer.app.review_evidence import region_mask
    from reviewer.bank.evidence import evidence_for

    panel, loader = app.review.annotator, app.review.loader
    order = [r["item"] for r in panel.rows]
    qtbot.waitUntil(lambda: loader.shown(trajectory=True), timeout=60000)
    qtbot.waitUntil(lambda: loader.ready(order[1], trajectory=True), timeout=60000)
    qtbot.waitUntil(lambda: loader.ready(order[2], trajectory=True), timeout=60000)
    for k in (1, 2):
        press(qtbot, app, "Space")  # skip: the next item
        assert panel.view["item"] == order[k]
        view = evidence_for(panel.view["question"])
        qtbot.waitUntil(lambda: loader.shown(trajectory=False), timeout=10000)
        plot = app.trajectory
        assert not plot.busy and plot.series is not None
        mask, _ring = region_mask(view.region, app.session.index.site)
        assert (plot.series.name, plot.series.where) == (view.index, f"region of {int(mask.sum())} pixels")
