"""napari's status bar hint in the review app: it named napari's layer-mode keys ('use <2> for transform'), where 1-4
are the review's keys (the flag reasons) and the layer modes are not used."""

from __future__ import annotations

from qtpy.QtCore import Qt

from tests.gui.test_review_dock import store_path, wait_evidence, window  # noqa: F401 - fixtures


def test_the_status_bar_hint_names_f1_not_napari_layer_keys(window, qtbot):  # noqa: F811
    app = window("ann", "annotator")
    wait_evidence(app, qtbot, trajectory=False)
    image = app.viewer.layers.selection.active
    assert app.viewer.help == "F1: the keys of this window", app.viewer.help
    assert all("use <" not in layer.help for layer in app.viewer.layers)
    canvas = app.viewer.window._qt_viewer.canvas.native
    canvas.setFocus()
    qtbot.waitUntil(canvas.hasFocus, timeout=2000)
    qtbot.keyClick(canvas, Qt.Key_2)
    qtbot.wait(100)
    # 2 is the review's key here: the image layer stays in pan/zoom, and the hint stays
    assert image.mode == "pan_zoom" and app.viewer.help == "F1: the keys of this window"
