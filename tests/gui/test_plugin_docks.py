"""The plugin's docks open from napari's Plugins menu in plain napari and change nothing outside themselves."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gui

WIDGETS = ("Stack", "Trajectory", "Coverage", "Chips", "Pair")


def test_each_dock_opens_in_plain_napari_and_leaves_the_users_layers_alone(make_napari_viewer, demo_site, qtbot):
    from napari.settings import get_settings

    viewer = make_napari_viewer()
    # the user's own layer, sliced along its first axis by napari's dims
    data = np.arange(4 * 8 * 8, dtype=np.uint8).reshape(4, 8, 8)
    mine = viewer.add_image(data, name="mine")
    title = viewer.title
    asynchronous = get_settings().experimental.async_
    bar = viewer.canvas.overlays.scale_bar.visible
    text, text_visible = viewer.canvas.overlays.text.text, viewer.canvas.overlays.text.visible
    docks = {}
    for name in WIDGETS:
        # what Plugins > EarthRecord Reviewer > NAME does
        dock, widget = viewer.window.add_plugin_dock_widget("earthrecord-reviewer", name)
        assert dock.widget() is not None and widget is not None, name
        docks[name] = widget
    assert len({id(w.session) for w in docks.values()}) == 1  # one session per viewer
    # napari still updates the user's layer when its slider moves
    viewer.dims.set_current_step(0, 3)
    qtbot.waitUntil(lambda: int(np.asarray(mine._slice.image.raw).max()) == int(data[3].max()), timeout=5000)
    assert viewer.title == title
    assert get_settings().experimental.async_ == asynchronous
    assert viewer.canvas.overlays.scale_bar.visible == bar
    assert [layer.name for layer in viewer.layers] == ["mine"]
    # the Stack dock opens a site in the user's napari (napari hands plugins a public-only viewer)
    session = docks["Stack"].session
    session.open_site(demo_site)
    qtbot.waitUntil(lambda: session.stack is not None and session.frame_shown(), timeout=60000)
    assert "mine" in [layer.name for layer in viewer.layers]
    # the date caption is a line of the Stack dock, naming the shown date; napari's canvas text overlay stays the
    # user's (the session wrote its caption there, and made it visible)
    caption, scene = docks["Stack"].caption, session.current_scene
    assert caption.text() == f"{scene.date.isoformat()} {scene.label}   True colour"
    assert docks["Stack"].isAncestorOf(caption) and caption.isVisibleTo(docks["Stack"])  # (the dock may be a tab)
    assert viewer.canvas.overlays.text.text == text and viewer.canvas.overlays.text.visible == text_visible
    session.jump_to_index(len(session.stack) - 1)
    assert caption.text().startswith(session.current_scene.date.isoformat() + " ")
