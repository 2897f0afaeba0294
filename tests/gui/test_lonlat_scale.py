"""A lon/lat site in the real viewer (issue 31): its grid's resolution is in degrees, and the app took it as metres:
napari's scale bar read "25 mm" on an AppEEARS export, the Pair view's bar "50 mm", the Stack dock "at 0.01 m", the
image was square. Now the canvas, the pointer and the Pair view measure a cell on the ground (`Site.cell_m`).

The site: MOD11A2 LST as AppEEARS exports it, 20 x 20 cells of 0.01 degree over 11.0-11.2 E, 45.8-46.0 N (centre
45.9 N). By hand, on the WGS 84 ellipsoid (a = 6,378,137 m, e2 = 0.00669438; sin2(45.9) = 0.515711):
- a cell east-west is N cos(lat) x 0.01 x pi / 180 with N = a / sqrt(1 - e2 sin2) = 6,389,175 m, cos = 0.695913:
  776.03 m; the site 15,520.5 m across;
- north-south M x 0.01 x pi / 180 with M = a (1 - e2) / (1 - e2 sin2)^1.5 = 6,368,389 m: 1,111.49 m; the site
  22,229.9 m tall.
At a camera zoom of 0.01 screen px per metre the image is 155.2 x 222.3 px, and napari's scale bar (about 150 px:
15 km, rounded down to its preferred 1-2-5 values) reads "10 km" over 100 px. The Pair view's bar is a fifth of the
site's width rounded up to 1, 2 or 5 x 10^k km: 3.1 -> 5 km.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import rasterio
from affine import Affine
from qtpy.QtCore import QPoint, Qt

from tests.conftest import write_site_json
from tests.gui.conftest import wait_frame

pytestmark = pytest.mark.gui

CELL_X_M, CELL_Y_M = 776.03, 1111.49  # by hand (module docstring)
ZOOM = 0.01  # screen px per metre


def _appeears_lst_site(root):
    site = write_site_json(root, bbox=[11.0, 45.8, 11.2, 46.0], crs="EPSG:4326", shape=[20, 20])
    profile = dict(driver="GTiff", width=20, height=20, count=1, crs="EPSG:4326",
                   transform=Affine(0.01, 0, 11.0, 0, -0.01, 46.0))  # fmt: skip
    lst = (14500 + 50 * np.add.outer(np.arange(20), np.arange(20))).astype(np.uint16)  # 290-309 K: never black
    for layer, arr in (("LST_Day_1km", lst), ("QC_Day", np.zeros((20, 20), np.uint8))):
        with rasterio.open(site / f"MOD11A2.061_{layer}_doy2024017000000_aid0001.tif", "w", dtype=arr.dtype.name,
                           **profile) as d:  # fmt: skip
            d.write(arr, 1)
    return site


def _image_box(rgb: np.ndarray) -> tuple[int, int, int, int]:
    """(left, top, right, bottom), exclusive, of the image centred on the canvas: the run of pixels not black
    (napari's canvas) through the canvas's middle, along its middle row and column (the date caption and a message
    elsewhere on the canvas are not counted)."""
    lit = rgb.sum(axis=2) > 30
    cy, cx = rgb.shape[0] // 2, rgb.shape[1] // 2
    assert lit[cy, cx], "no image at the canvas's middle"

    def run(line: np.ndarray, at: int) -> tuple[int, int]:
        dark = np.flatnonzero(~line)
        return int(dark[dark < at].max(initial=-1)) + 1, int(dark[dark > at].min(initial=len(line)))

    (left, right), (top, bottom) = run(lit[cy], cx), run(lit[:, cx], cy)
    return left, top, right, bottom


def test_a_lon_lat_site_is_measured_on_the_ground(make_napari_viewer, tmp_path, qtbot, shots):
    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    site = _appeears_lst_site(tmp_path / "lst")
    viewer = make_napari_viewer(show=True)
    app = ReviewerApp(viewer, db=tmp_path / "store.sqlite", recent=RecentSites(tmp_path / "recent.json"), scoring=False)
    s = app.session
    app.open_site(site)
    qtbot.waitUntil(lambda: s.index is not None, timeout=60000)
    # the site opens on the one composite it can show (it opened on true colour, of which it has no scene: an empty
    # canvas and "no scene matches the filters with True colour bands" until the user picked LST)
    qtbot.waitUntil(lambda: s.stack is not None and len(s.stack) == 1, timeout=60000)
    assert s.state.composite == "lst" and app.controls.composite_combo.currentData() == "lst"
    wait_frame(app, qtbot)
    assert "20 x 20 px at 0.01° (776 x 1,111 m)" in app.controls.site_label.text()  # was "at 0.01 m"
    # the caption over the canvas: the 8-day composite of day 17 of 2024, its sensor and the composite
    assert app.caption.isVisible()
    assert app.caption.text() == f"2024-01-17 {s.current_scene.label}   Land surface temperature (day)"
    # the LST stretch (composites.json: 260-330 K) in the dock's boxes, and a gamma typed there keeps it (the boxes
    # were clamped to a reflectance's -2..2: they read 2.0 and 2.0, and every edit was refused, "high must be above low")
    _, low, high, gamma = app.controls.stretch_rows[0]
    assert (low.value(), high.value()) == (260.0, 330.0)
    gamma.setValue(1.5)
    c = s.state.stretch.channels[0]
    assert (c.low, c.high, c.gamma) == (260.0, 330.0, 1.5)

    # the canvas: 0.01 px per metre, centred on the site's middle (napari centres pixel 0 on 0)
    viewer.scene.camera.zoom = ZOOM
    viewer.scene.camera.center = (9.5 * CELL_Y_M, 9.5 * CELL_X_M)
    qtbot.wait(100)
    rgb = np.asarray(viewer.screenshot(canvas_only=True, flash=False))[..., :3]
    viewer.screenshot(str(shots / "lonlat_canvas.png"), canvas_only=False, flash=False)
    left, top, right, bottom = _image_box(rgb)
    assert right - left == pytest.approx(20 * CELL_X_M * ZOOM, abs=1.5)  # 155.2 px (the degrees: 0.002 px)
    assert bottom - top == pytest.approx(20 * CELL_Y_M * ZOOM, abs=1.5)  # 222.3 px: its ground aspect, not square

    # napari's scale bar: its text and drawn length, as its vispy overlay has them (no public reader)
    bar = viewer.window._qt_viewer.canvas._viewer_overlay_to_visual[viewer.canvas.overlays.scale_bar][0]
    assert bar.node.text.text == "10 km"
    assert bar._current_length == pytest.approx(10_000 * ZOOM, abs=0.5)  # 100 px

    # a real click on cell (15, 4)'s centre picks that cell (rows / 1,111.49 m, columns / 776.03 m)
    clicked: list[tuple[int, int]] = []
    s.pixel_clicked.connect(lambda r, c: clicked.append((r, c)))
    row, col = 15, 4
    x = left + (col + 0.5) * (right - left) / 20
    y = top + (row + 0.5) * (bottom - top) / 20
    canvas = viewer.window._qt_viewer.canvas.native
    assert (canvas.width(), canvas.height()) == (rgb.shape[1], rgb.shape[0])  # screenshot px = widget px
    statuses: list[str] = []
    s.status.connect(statuses.append)
    qtbot.mouseMove(canvas, QPoint(round(x), round(y)))
    qtbot.mouseClick(canvas, Qt.LeftButton, pos=QPoint(round(x), round(y)))
    qtbot.waitUntil(lambda: bool(clicked), timeout=5000)
    assert clicked == [(row, col)]
    # the status line reads that cell: DN 14,500 + 50 x (15 + 4) = 15,450 x 0.02 K = 309.0 K
    qtbot.waitUntil(lambda: any("(15, 4) Land surface temperature (day) 309.0000" in t for t in statuses), timeout=5000)

    # the Pair view: panels over the site's ground extent, a "5 km" bar
    app.docks["Pair"].raise_()
    app.show_pair()
    pair = app.pair
    qtbot.waitUntil(lambda: len(pair.rgbs) == 2 and not pair.busy, timeout=30000)
    drawn = pair.images[0].mapRectToView(pair.images[0].boundingRect())
    assert drawn.width() == pytest.approx(20 * CELL_X_M, rel=1e-4)
    assert drawn.height() == pytest.approx(20 * CELL_Y_M, rel=1e-4)
    assert pair.scale_bars[0].size == 5000.0 and pair.scale_bars[0].text.toPlainText() == "5 km"
    qtbot.wait(50)
    viewer.screenshot(str(shots / "lonlat_pair.png"), canvas_only=False, flash=False)
    # a review item's panels are read at display size: 10 x 10 px of the same 20 x 20 cells, the same ground
    a, b = pair.a_edit.text(), pair.b_edit.text()
    pair.show_panels(a, b, [replace(p, channels=p.channels[:, ::2, ::2]) for p in pair.panels])
    drawn = pair.images[0].mapRectToView(pair.images[0].boundingRect())
    assert (drawn.width(), drawn.height()) == pytest.approx((20 * CELL_X_M, 20 * CELL_Y_M), rel=1e-4)
    assert pair.scale_bars[0].text.toPlainText() == "5 km"
    app.close()
