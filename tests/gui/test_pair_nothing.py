"""A review item's pair with no scene to show (an insufficient-evidence item on a sparse record, as on the real
Landsat fixtures of south-east Australia: 1998 and 2021 only) is said in the Pair dock, not as an error."""

from __future__ import annotations


def test_a_review_items_pair_with_no_scene_is_said_in_the_dock_and_the_last_panels_go(opened, qtbot):
    """Found walking the real-record bank as an annotator: every insufficient item popped a red "pair view: field
    'date': no scene with ..." notification over the canvas (cut after 40 characters), and the Pair tab kept the
    item before's two panels under their old titles. Now: no error, the dock's line gives the reason, both panels
    are empty and their titles name the dates asked for."""
    app = opened
    app.docks["Pair"].raise_()
    app.show_pair()
    qtbot.waitUntil(lambda: len(app.pair.rgbs) == 2 and not app.pair.busy, timeout=30000)
    assert all(img.image is not None for img in app.pair.images)  # the item before's panels
    before = len(app.session.reporter.messages)
    why = "field 'date': no scene with mndwi bands in 1999-2008; the nearest dates the site has: 2021-03-31"
    app.pair.show_panels("1999-2008", "2021", None, why)  # as the review dock applies such an item
    qtbot.wait(50)
    assert [m for m in app.session.reporter.messages[before:] if m[0] == "error"] == []
    assert app.pair.info.text() == why and app.pair.error == why
    assert [img.image for img in app.pair.images] == [None, None]
    assert [t.text for t in app.pair.labels] == ["A: 1999-2008", "B: 2021"]  # (2021 has a scene: no claim on it)
