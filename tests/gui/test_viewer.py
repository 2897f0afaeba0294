"""The stack viewer under Xvfb: open the demo site, step, switch composites, pair view with the same
stretch (checked on the rendered screenshot), trajectory clicks, sensor filters, chips, coverage, export
and bad input. Screenshots are written to /tmp/reviewer-gui-shots for a human to look at.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from qtpy.QtCore import QPoint, QPointF, Qt

from tests.gui.conftest import wait_frame

pytestmark = pytest.mark.gui


def canvas_rgb(app) -> np.ndarray:
    return np.asarray(app.viewer.screenshot(canvas_only=True, flash=False))[..., :3]


def test_open_step_and_keys(opened, qtbot, shots):
    app, s = opened, opened.session
    assert app.viewer.title.endswith(f"({s.index.site.id})")
    first = s.stack.labels[0]
    assert app.caption.text().startswith(first + "   ")  # the caption names the date and sensor
    assert app.date_slider.count.text() == f"1 / {len(s.stack)}"  # the slider counts the dates
    for k in range(1, 4):
        s._on_next_date()
        wait_frame(app, qtbot)
        assert s.state.current == k
        assert app.caption.text().startswith(s.stack.labels[k] + "   ")
        assert app.date_slider.slider.value() == k and app.date_slider.count.text() == f"{k + 1} / {len(s.stack)}"
    s._on_prev_date()
    assert s.state.current == 2
    year = s.current_scene.year
    s._on_next_year()
    assert s.current_scene.year > year
    s._on_prev_year()
    assert s.current_scene.year == year
    wait_frame(app, qtbot)
    assert "tier" in app.status.text() and s.current_scene.scene_id in app.status.text()
    assert "(5, 5)" in s.status_text((5, 5))
    img = canvas_rgb(app)
    assert img.std() > 5  # not a blank canvas
    app.viewer.screenshot(str(shots / "01_stack.png"), canvas_only=False, flash=False)
    keys = {str(k) for k in app.viewer.keymap}
    for key in ("Left", "Right", "Shift+Left", "Shift+Right", "P", "S"):
        assert any(key.lower() == k.lower() or key.lower().replace("+", "-") == k.lower() for k in keys), keys
    assert not [m for m in app.reporter.messages if m[0] == "error"]


def test_composites_switch(opened, qtbot, shots):
    app, s = opened, opened.session
    seen = []
    for comp in ("truecolor", "swir", "ndvi", "ndwi", "mndwi", "nbr"):
        app.controls._on_composite_changed(comp)
        assert s.state.composite == comp
        assert s.state.stretch.composite == comp
        wait_frame(app, qtbot)
        # the caption still names the shown date and sensor
        assert app.caption.text().startswith(s.stack.labels[s.state.current] + "   "), comp
        img = canvas_rgb(app)
        assert img.std() > 3, comp
        seen.append(img.mean(axis=(0, 1)))
        if comp == "ndvi":
            app.viewer.screenshot(str(shots / "02_ndvi.png"), canvas_only=False, flash=False)
    assert np.ptp(np.array(seen), axis=0).max() > 5  # the composites look different
    # the stretch panel edits the one stretch of the stack; a locked stretch refuses edits
    app.controls._on_composite_changed("truecolor")
    wait_frame(app, qtbot)
    new = s.state.stretch.with_channel(0, high=0.2)
    assert s.set_stretch(new) and s.state.stretch == new
    s.toggle_lock()
    assert app.controls.lock_check.isChecked()
    assert not s.set_stretch(new.with_channel(0, high=0.25))
    assert s.state.stretch == new
    s.toggle_lock()
    worker = s.stretch_from_percentiles()
    qtbot.waitUntil(lambda: s.state.stretch.source.startswith("percentiles"), timeout=30000)
    assert worker is not None
    assert s.reset_stretch() and s.state.stretch.source == "fixed default"


def test_stack_dock_controls_keep_their_place_when_the_composite_changes(opened, qtbot):
    """An index (one channel: NDVI) after a colour composite (three) hides two stretch rows; their room is kept,
    so the lock, reset, stretch line, overlay and export below them stay where the reviewer's eye and mouse
    are (they moved up ~50 px and back at every review item of the other kind, the Stack dock re-laid out and
    painted again after the window's paint, issue 27)."""
    from qtpy.QtWidgets import QApplication

    app = opened
    c = app.controls
    below = (c.lock_check, c.reset_button, c.percentile_button, c.stretch_source, c.overlay_check, c.export_button)

    def places() -> list[int]:
        QApplication.processEvents()
        return [w.mapTo(c, w.rect().topLeft()).y() for w in below]

    app.controls._on_composite_changed("truecolor")
    wait_frame(app, qtbot)
    three = places()
    assert all(name.isVisible() for name, *_ in c.stretch_rows)  # red, green, blue
    app.controls._on_composite_changed("ndvi")
    wait_frame(app, qtbot)
    assert [name.isVisible() for name, *_ in c.stretch_rows] == [True, False, False]
    assert c.stretch_rows[0][0].text() == "NDVI"
    assert places() == three
    app.controls._on_composite_changed("truecolor")
    wait_frame(app, qtbot)
    assert places() == three


def _panel_screen_colours(pair, k: int, rows: np.ndarray, cols: np.ndarray, grab) -> np.ndarray:
    """Colours on the grabbed widget at the centres of image pixels (rows, cols) of panel k."""
    img = pair.images[k]
    ratio = grab.devicePixelRatio()
    qimg = grab.toImage()
    out = np.zeros((len(rows), 3), np.uint8)
    for n, (r, c) in enumerate(zip(rows, cols, strict=True)):
        scene_pt = img.mapToScene(QPointF(c + 0.5, r + 0.5))  # item coordinates are image pixels
        view_pt = pair.graphics.mapFromScene(scene_pt)
        color = qimg.pixelColor(int(view_pt.x() * ratio), int(view_pt.y() * ratio))
        out[n] = (color.red(), color.green(), color.blue())
    return out


def test_pair_view_same_stretch(opened, qtbot, shots):
    app, s = opened, opened.session
    s.jump_to_index(len(s.stack) - 1)
    wait_frame(app, qtbot)
    app.docks["Pair"].raise_()
    app.show_pair()
    pair = app.pair
    qtbot.waitUntil(lambda: len(pair.rgbs) == 2, timeout=30000)
    a, b = s.state.pair
    assert a == s.stack.dates[0].isoformat() and b == s.current_scene.date.isoformat()
    qtbot.wait(50)  # let the views paint once
    grab = pair.graphics.grab()
    grab.save(str(shots / "03_pair.png"))
    app.viewer.screenshot(str(shots / "03_pair_window.png"), canvas_only=False, flash=False)
    # zoom and pan are linked
    v0, v1 = pair.views
    assert np.allclose(v0.viewPixelSize(), v1.viewPixelSize(), rtol=0.02)
    centre = lambda vb: np.mean(vb.viewRange(), axis=1)  # noqa: E731
    assert np.allclose(centre(v0), centre(v1), atol=1.0)
    v0.translateBy(x=300.0, y=-150.0)
    assert np.allclose(centre(v0), centre(v1), atol=1.0)
    v0.scaleBy((0.5, 0.5))
    assert np.allclose(v0.viewPixelSize(), v1.viewPixelSize(), rtol=0.02)
    pair._redraw(reset=True)
    qtbot.wait(50)
    grab = pair.graphics.grab()
    h, w = pair.panels[0].channels.shape[1:]
    rr, cc = np.meshgrid(np.arange(1, h - 1, 3), np.arange(1, w - 1, 3), indexing="ij")
    rows, cols = rr.ravel(), cc.ravel()
    stretch = s.state.stretch
    screen = [_panel_screen_colours(pair, k, rows, cols, grab) for k in range(2)]
    for k in range(2):
        assert screen[k].std() > 3, f"panel {k} is empty"
        expected = stretch.apply(pair.panels[k].channels, nodata_rgb=(40, 40, 40))[rows, cols]
        assert np.abs(screen[k].astype(int) - expected.astype(int)).max() <= 2, f"panel {k} not drawn with the stretch"
    # identical reflectance maps to identical colours in both panels
    va = np.round(pair.panels[0].channels[:, rows, cols].T, 3)
    vb = np.round(pair.panels[1].channels[:, rows, cols].T, 3)
    lookup = {tuple(v): screen[0][n] for n, v in enumerate(va) if np.isfinite(v).all()}
    matches = [(lookup[tuple(v)], screen[1][n]) for n, v in enumerate(vb) if tuple(v) in lookup]
    for ca, cb in matches:
        assert np.abs(ca.astype(int) - cb.astype(int)).max() <= 2
    # a stretch change redraws both panels the same way
    s.set_stretch(stretch.with_channel(1, high=0.2))
    assert np.array_equal(pair.rgbs[0], s.state.stretch.apply(pair.panels[0].channels, nodata_rgb=(40, 40, 40)))
    out = shots / "03_pair_export.png"
    pair._on_export_pair(str(out))
    qtbot.waitUntil(out.exists, timeout=30000)
    from PIL import Image

    meta = Image.open(out).info
    assert json.loads(meta["Stretch"]) == s.state.stretch.to_json()


def test_trajectory_click_changes_date(opened, qtbot, shots):
    app, s = opened, opened.session
    traj = app.trajectory
    app.docks["Trajectory"].raise_()
    traj._on_pixel_clicked(32, 32)
    qtbot.waitUntil(lambda: traj.series is not None, timeout=60000)
    assert len(traj.series) >= len(s.stack) // 2
    assert set(traj.scatters)  # one colour per sensor
    qtbot.wait(50)
    app.viewer.screenshot(str(shots / "04_trajectory.png"), canvas_only=False, flash=False)
    points = traj.point_positions()
    target = max(points, key=lambda p: abs(traj.series.indices[p[2]] - s.state.current))
    x, y, k = target
    # a real mouse click on that point
    vb = traj.plot.getPlotItem().vb
    scene_pt = vb.mapViewToScene(QPointF(x, y))
    view_pt = traj.plot.mapFromScene(scene_pt)
    qtbot.mouseClick(traj.plot.viewport(), Qt.LeftButton, pos=view_pt)
    qtbot.waitUntil(lambda: s.state.current == traj.series.indices[k], timeout=5000)
    assert app.caption.text().startswith(traj.series.dates[k].isoformat())
    # the handler directly, and the CSV export
    traj._on_trajectory_point_clicked(0)
    assert s.state.current == traj.series.indices[0]
    csv = traj._on_export_csv(str(shots / "trajectory.csv"))
    assert csv.read_text().count("\n") == len(traj.series) + 2
    # a polygon gives the mean with spread
    traj._on_polygon(np.array([[10, 10], [10, 40], [40, 40], [40, 10]]))
    qtbot.waitUntil(lambda: traj.series is not None and traj.series.where.startswith("region"), timeout=60000)
    assert max(traj.series.n_pixels) > 100


def test_sensor_filter_changes_slider_dates(opened, qtbot):
    app, s = opened, opened.session
    total = len(s.stack)
    app.controls._on_sensors_changed(("TM",))
    assert s.stack.labels and all(lab.endswith(" TM") for lab in s.stack.labels)
    assert app.date_slider.slider.maximum() + 1 == len(s.stack) < total  # the slider's dates
    wait_frame(app, qtbot)
    assert app.caption.text().split("   ")[0].endswith(" TM")
    app.controls._on_sensors_changed(("OLI", "ETM+"))
    assert {lab.split(" ", 1)[1] for lab in s.stack.labels} == {"OLI", "ETM+"}
    app.controls._on_years_changed((2005, 2010))
    assert all(2005 <= d.year <= 2010 for d in s.stack.dates)
    app.controls._on_months_changed((6, 7, 8))
    assert all(d.month in (6, 7, 8) for d in s.stack.dates)
    app.controls._on_max_cloud_changed(0.2)
    assert all((sc.cloud_fraction or 0) <= 0.2 for sc in s.stack.scenes)
    app.controls._on_sensors_changed(("MODIS Terra",))  # no true-colour bands
    assert len(s.stack) == 0 and s.image_layer is None
    assert any("no scene matches" in m[1] for m in app.reporter.messages)
    app.controls._on_sensors_changed(())
    app.controls._on_years_changed(None)
    app.controls._on_months_changed(())
    app.controls._on_max_cloud_changed(1.0)
    assert len(s.stack) == total and s.image_layer is not None


def test_chips_and_coverage(opened, qtbot, shots):
    app, s = opened, opened.session
    chips = app.chips
    app.docks["Chips"].raise_()
    chips.refresh()
    qtbot.waitUntil(lambda: len(chips.chips) > 10 and chips.laid_out, timeout=60000)
    years = [c[0] for c in chips.chips]
    assert years == sorted(set(years))
    # every chip shows an image (stretched in the worker, placed in slices on the UI thread), and all
    # of them are visible at once in the dock (as in TimeSync), no scrolling
    assert all(not chips.labels[y].pixmap().isNull() for y in years)
    qtbot.wait(50)
    viewport = chips.area.viewport().rect()
    for y in years:
        box = chips.labels[y].geometry()
        assert viewport.contains(box), (y, box, viewport)
    chips._on_chip_clicked(years[5])
    assert s.current_scene.year == years[5]
    assert "ffcc00" in chips.labels[years[5]].styleSheet()
    qtbot.wait(50)
    app.viewer.screenshot(str(shots / "05_chips.png"), canvas_only=False, flash=False)
    cov = app.coverage
    # a tab behind another draws when it is brought to the front (as the user picks it)
    app.docks["Coverage"].raise_()
    qtbot.waitUntil(lambda: "scenes" in cov.info.text(), timeout=10000)
    assert cov.coverage is not None and {"TM", "ETM+", "OLI"} <= set(cov.coverage.sensors)
    assert cov.coverage.slc_off is not None
    # the bars count Landsat scenes only (MODIS composites and ERA5 months are not cloudy-or-clear scenes)
    landsat = [sc for sc in s.index.record_scenes() if sc.label in ("TM", "ETM+", "OLI", "OLI-2")]
    assert sum(cov.coverage.clear) + sum(cov.coverage.cloudy) == len(landsat)
    assert "TM/ETM+/OLI scenes" in cov.info.text()
    cov._on_year_clicked(2012)
    assert s.current_scene.year == 2012
    app.state.period = (2003, 2008)
    assert cov.regions[0].isVisible()
    app.docks["Coverage"].raise_()
    # a hidden coverage tab draws when shown: one timeline row per sensor
    qtbot.waitUntil(lambda: len(cov.timeline.listDataItems()) == len(cov.coverage.sensors), timeout=5000)
    qtbot.wait(50)
    app.viewer.screenshot(str(shots / "06_coverage.png"), canvas_only=False, flash=False)
    out = shots / "05_strip_export.png"
    chips._on_export_strip(str(out))
    qtbot.waitUntil(out.exists, timeout=60000)


def test_a_second_o_shows_the_overlay_again_without_a_new_layer(opened, qtbot):
    """O, O, O on a cloudy date: the quality overlay on, off, on again. Off, nothing of it is drawn (its layer hidden);
    on again, the same layer shows the date's codes: no new Labels layer (each one napari's list entry, layer
    controls and vispy visual: ~0.15-0.3 s of the UI thread, 0.6 s blocked on a whole Landsat scene, 1.28 s under
    load). Its eye in napari's layer list is the same switch: the Stack dock's check box follows it."""
    from qtpy.QtTest import QTest

    from reviewer.app.qt_window import canvas_widget

    app, s = opened, opened.session
    cloudy = max(range(len(s.stack)), key=lambda i: s.stack.scenes[i].cloud_fraction or 0)
    s.jump_to_index(cloudy)
    wait_frame(app, qtbot)
    QTest.keyClick(canvas_widget(app.viewer), Qt.Key_O)
    wait_frame(app, qtbot)
    layer = s.overlay_layer
    codes = np.asarray(layer.data)
    assert layer.data.date == cloudy
    assert app.state.overlay and layer.visible and codes.max() > 0
    made = []
    app.viewer.layers.events.inserted.connect(lambda e: made.append(e.value.name))
    QTest.keyClick(canvas_widget(app.viewer), Qt.Key_O)
    assert not app.state.overlay and not app.controls.overlay_check.isChecked()
    assert [x for x in app.viewer.layers if x.name == "quality overlay" and x.visible] == []
    QTest.keyClick(canvas_widget(app.viewer), Qt.Key_O)
    wait_frame(app, qtbot)
    assert made == [] and s.overlay_layer is layer and layer.visible
    assert layer.data.date == cloudy and np.array_equal(np.asarray(layer.data), codes)
    layer.visible = False  # its eye in the layer list
    assert not app.state.overlay and not app.controls.overlay_check.isChecked() and s.overlay_layer is None
    layer.visible = True
    assert app.state.overlay and app.controls.overlay_check.isChecked() and s.overlay_layer is layer
    wait_frame(app, qtbot)
    assert made == []


def test_overlay_and_export_view(opened, qtbot, shots):
    app, s = opened, opened.session
    app.state.overlay = True
    assert s.overlay_layer is not None
    # a date with clouds shows overlay codes
    cloudy = max(range(len(s.stack)), key=lambda i: s.stack.scenes[i].cloud_fraction or 0)
    s.jump_to_index(cloudy)
    wait_frame(app, qtbot)  # the frame and its overlay codes, read off the UI thread
    app.viewer.screenshot(str(shots / "07_overlay.png"), canvas_only=False, flash=False)
    assert s.overlay_layer.data.date == cloudy and np.asarray(s.overlay_layer.data).max() > 0
    # the clouds are painted: light grey overlay pixels over a good part of the canvas
    canvas = canvas_rgb(app).astype(int)
    light = (canvas.min(axis=2) > 120) & (np.ptp(canvas, axis=2) < 30)
    assert light.mean() > 0.05, light.mean()
    assert not [m for m in app.reporter.messages if m[0] == "error"], app.reporter.messages
    app.state.overlay = False
    assert s.overlay_layer is None
    out = shots / "07_view_export.png"
    app.controls._on_export_view(str(out))
    qtbot.waitUntil(out.exists, timeout=30000)
    from PIL import Image

    assert json.loads(Image.open(out).info["Stretch"]) == s.state.stretch.to_json()


def test_bad_input(reviewer_app, demo_site, qtbot, tmp_path):
    app, s = reviewer_app, reviewer_app.session
    # not a site
    s.open_site(tmp_path)
    qtbot.waitUntil(lambda: any("not a site" in m[1] for m in app.reporter.messages), timeout=10000)
    assert s.stack is None and app.controls.open_button.isEnabled()
    # ... said in the Stack dock where the site would be, after the notification has gone (it went on saying only
    # "No site open")
    line = app.controls.site_label.text()
    assert line.startswith(f"<b>Could not open</b> {tmp_path}: ") and "not a site" in line, line
    # a site.json with a mistake: the folder named once ("Could not open DIR: DIR/site.json, ..." had said it twice)
    typo = tmp_path / "typo-site"
    typo.mkdir()
    doc = json.loads((demo_site / "site.json").read_text())
    (typo / "site.json").write_text(json.dumps(doc | {"resolution": "30 m"}))
    s.open_site(typo)
    qtbot.waitUntil(lambda: "typo-site" in app.controls.site_label.text(), timeout=10000)
    line = app.controls.site_label.text()
    assert line.startswith(f"<b>Could not open</b> {typo}: site.json, field &#x27;resolution&#x27;: "), line
    assert line.count("typo-site") == 1, line
    # a site whose scenes all fail
    bad = tmp_path / "bad-site"
    (bad / "landsat").mkdir(parents=True)
    shutil.copy(demo_site / "site.json", bad / "site.json")
    doc = json.loads((bad / "site.json").read_text())
    doc.pop("boundary", None)
    (bad / "site.json").write_text(json.dumps(doc))
    src = next((demo_site / "landsat").iterdir())
    for f in src.iterdir():
        (bad / "landsat" / src.name).mkdir(exist_ok=True)
        (bad / "landsat" / src.name / f.name).write_bytes(b"II*\x00" + b"\x00" * 64)
    s.open_site(bad)
    qtbot.waitUntil(lambda: any("no usable scene" in m[1] for m in app.reporter.messages), timeout=30000)
    # no image on the canvas: the start-up placeholder layer goes once the (empty) stack is in, a turn later
    qtbot.waitUntil(lambda: s.stack is not None and len(s.stack) == 0, timeout=5000)
    assert s.image_layer is None and "stack" not in app.viewer.layers
    # a boundary declared in a CRS that puts it off the grid: a clear message, the app stays usable
    far = tmp_path / "far-boundary"
    far.mkdir()
    shutil.copy(demo_site / "site.json", far / "site.json")
    gj = json.loads((demo_site / "boundary.geojson").read_text())
    gj["crs"] = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::3857"}}
    (far / "boundary.geojson").write_text(json.dumps(gj))
    s.open_site(far)
    qtbot.waitUntil(lambda: any("boundary" in m[1] for m in app.reporter.messages), timeout=60000)
    qtbot.waitUntil(lambda: app.controls.open_button.isEnabled(), timeout=10000)
    # a site with a stray file and a half-downloaded band: opened, and the Stack dock's site line says which files
    # it left out for as long as the site is open (the warning at the open went by in seconds)
    mixed = tmp_path / "mixed-site"
    (mixed / "landsat").mkdir(parents=True)
    for name in ("site.json", "boundary.geojson"):
        shutil.copy(demo_site / name, mixed / name)
    shutil.copytree(src, mixed / "landsat" / src.name)
    (mixed / "landsat" / "notes.txt").write_text("to do: ask about 2003")
    band = sorted((mixed / "landsat" / src.name).glob("*_SR_B4.TIF"))[0]
    band.write_bytes(band.read_bytes()[: band.stat().st_size // 2])
    s.open_site(mixed)
    qtbot.waitUntil(lambda: s.index is not None and Path(s.index.site.dir) == mixed, timeout=30000)
    line = app.controls.site_label.text()
    assert "2 files not used: " in line and "1 more" in line, line
    assert {"notes.txt", band.name} <= {
        Path(t.split(": ")[0]).name for t in app.controls.site_label.toolTip().split("\n")
    }
    # the good site still opens afterwards, and its line says nothing of the other's files
    s.open_site(demo_site)
    qtbot.waitUntil(lambda: s.index is not None and Path(s.index.site.dir) == demo_site, timeout=60000)
    qtbot.waitUntil(lambda: s.stack is not None and len(s.stack) > 0, timeout=60000)
    wait_frame(app, qtbot)
    assert "not used" not in app.controls.site_label.text() and not app.controls.site_label.toolTip()
    # a date with every pixel masked: a black frame and a note, no exception
    stack = s.stack
    real_read = stack.read
    stack.read = lambda i, comp, mask=None: np.full_like(real_read(i, comp), np.nan)
    rgb = s.frames.render(stack, "truecolor", s.state.stretch, 0)
    assert rgb.max() == 0 and (id(stack), 0) in s.all_masked
    stack.read = real_read


def test_slow_or_failing_file_never_blocks_the_ui(opened, qtbot, monkeypatch):
    """Item 7: a date whose file is slow shows a placeholder at once and its frame when read; a file
    that fails gives one message naming it; stepping goes on meanwhile."""
    import time
    from types import SimpleNamespace

    from reviewer.errors import ReviewerError

    app, s = opened, opened.session
    n = len(s.stack)
    slow, broken = n - 1, n // 2
    real = s.frames.read_frame

    def read(stack, composite, i):
        if i == slow:
            time.sleep(1.0)
        if i == broken:
            raise ReviewerError("truncated band file", path=f"{stack.scenes[i].scene_id}_SR_B4.TIF")
        return real(stack, composite, i)

    monkeypatch.setattr(s.frames, "read_frame", read)  # (the frame reader's reads)
    res = s.index.site.resolution
    s.pointer.on_mouse_move(app.viewer, SimpleNamespace(position=(0.0, 5 * res, 5 * res)))  # cursor on pixel (5, 5)
    t0 = time.perf_counter()
    s.jump_to_index(slow)
    took = time.perf_counter() - t0
    assert took < 0.5, f"the jump waited {took:.2f} s for the slow file"
    assert not s.frame_shown() and s.state.current == slow

    def centre(img):
        h, w, _ = img.shape
        return np.median(img[h // 2 - 20 : h // 2 + 20, w // 2 - 20 : w // 2 + 20].reshape(-1, 3), axis=0)

    # the grey placeholder, not the previous date's picture under the new date's label
    assert centre(canvas_rgb(app)).tolist() == [40, 40, 40]
    assert "(5, 5) reading..." in app.status.text()
    qtbot.waitUntil(s.frame_shown, timeout=10000)
    qtbot.wait(50)
    assert centre(canvas_rgb(app)).tolist() != [40, 40, 40]
    # the values under the still cursor replace "reading..." once the frame is in
    qtbot.waitUntil(lambda: "reading" not in app.status.text(), timeout=5000)
    assert "(5, 5) red" in app.status.text()
    s.jump_to_index(broken)
    qtbot.waitUntil(
        lambda: any(f"{s.stack.scenes[broken].scene_id}_SR_B4.TIF" in m[1] for m in app.reporter.messages),
        timeout=10000,
    )
    assert s.frame_shown()  # the failed date shows black, and the next date still opens
    s.jump_to_index(broken + 1)
    qtbot.waitUntil(s.frame_shown, timeout=10000)


def test_caption_follows_the_date_over_the_canvas(opened, qtbot, shots):
    """The date caption is a label over the canvas's top-left corner naming the shown date, sensor and composite in
    the turn the date changes; the window draws it as white text on a dark box over the imagery, and the mouse over it
    reaches the canvas. napari's own canvas text overlay is left unused (each new text there relinked a shader)."""
    from qtpy.QtCore import QPoint
    from qtpy.QtWidgets import QApplication

    from reviewer.app.qt_window import canvas_widget, main_window

    app, s = opened, opened.session
    label, canvas = app.caption, canvas_widget(app.viewer)
    assert label.parentWidget() is canvas and label.testAttribute(Qt.WA_TransparentForMouseEvents)
    for _ in range(3):
        s._on_next_date()
        scene = s.current_scene
        assert label.text() == f"{scene.date.isoformat()} {scene.label}   True colour"  # in this turn, not later
    app.controls._on_composite_changed("ndvi")
    assert label.text() == f"{s.current_scene.date.isoformat()} {s.current_scene.label}   NDVI"
    overlay = app.viewer.canvas.overlays.text
    assert not overlay.visible and overlay.text == ""
    wait_frame(app, qtbot)
    qtbot.wait(100)
    assert label.isVisible() and label.pos() == QPoint(10, 10) and canvas.rect().contains(label.geometry())
    assert label.sizeHint().width() <= label.width()  # the whole text
    centre = label.mapToGlobal(label.rect().center())
    assert QApplication.widgetAt(centre) is canvas  # a click or drag there goes to the canvas
    # drawn over the canvas in the window's picture: a dark box (the canvas there is bright or dark) with white text
    qwin = main_window(app.viewer)
    app.viewer.screenshot(str(shots / "caption_over_canvas.png"), canvas_only=False, flash=False)
    shot = qwin.grab().toImage()
    top_left = label.mapTo(qwin, QPoint(0, 0))
    box = np.array(
        [
            [shot.pixelColor(top_left.x() + x, top_left.y() + y).getRgb()[:3] for x in range(label.width())]
            for y in range(label.height())
        ]
    )
    grey = box.mean(axis=2)
    assert np.median(grey) < 60, np.median(grey)  # the box: dark whatever the imagery under it
    assert grey.max() > 200 and (grey > 200).sum() > 20 * len(label.text().replace(" ", "")) // 4  # white letters


def test_boundary_in_other_crs_is_drawn(opened, qtbot):
    s = opened.session
    assert s.index.site.crs.to_epsg() != 4326  # the demo boundary is EPSG:4326, the grid UTM
    # the first boundary follows the first imagery (its shapes layer waits for pandas, imported in a worker)
    qtbot.waitUntil(lambda: s.boundary_layer is not None, timeout=30000)
    h, w = s.index.site.shape
    ring = s.index.site.boundary_lines()[0]  # (row, col) on the site grid
    assert ring[:, 0].min() > -2 and ring[:, 0].max() < h + 2 and ring[:, 1].max() < w + 2
    # drawn in yellow, at about 1,600 raster pixels across (k per site pixel), its lines a 250th of that wide,
    # on the ring's vertices and nowhere far from its lines
    layer = s.boundary_layer
    k = 1600 // max(h, w)
    drawn = np.asarray(layer.data)
    assert drawn.shape == (h * k, w * k) and tuple(layer.scale) == (s.index.site.resolution / k,) * 2
    assert np.allclose(layer.colormap.map(1), [1.0, 1.0, 0.0, 1.0])
    for r, c in ring.astype(float) * k:
        if 0 <= r < h * k and 0 <= c < w * k:
            assert drawn[int(r), int(c)] == 1, (r, c)
    assert drawn.sum() <= 2 * len(ring) * max(h, w) * k * round(max(h, w) * k / 250)  # lines, not a fill


def test_plugin_reader_and_widgets(make_napari_viewer, demo_site, demo_db, tmp_path, monkeypatch):
    from reviewer_napari._reader import napari_get_reader

    assert napari_get_reader(str(tmp_path)) is None
    assert napari_get_reader(str(tmp_path / "nothing.tif")) is None
    reader = napari_get_reader(str(demo_site))
    assert reader is not None
    from reviewer import store as store_mod

    monkeypatch.setattr(store_mod, "default_db_path", lambda: demo_db)
    layers = reader(str(demo_site))
    kinds = [t for _, _, t in layers]
    assert kinds[0] == "image" and "shapes" in kinds
    data, kwargs, _ = layers[0]
    assert data.ndim == 4 and data.shape[-1] == 3 and kwargs["rgb"]
    frame = np.asarray(data[0])
    assert frame.dtype == np.uint8 and frame.std() > 0
    viewer = make_napari_viewer()
    from reviewer_napari._widget import CoverageDock, StackDock

    w = StackDock(viewer)
    assert CoverageDock(viewer).session is w.session


def test_every_key_in_the_help_dialog_does_what_it_says(opened, qtbot):
    """The keys of qt_help.KEYS pressed on the canvas, each checked by its effect; after the Keys... dialog
    closes the keys work again without a click on the canvas (focus goes back to it)."""
    from qtpy.QtWidgets import QApplication, QLabel

    from reviewer.app.qt_help import KEYS

    app, s = opened, opened.session
    assert [k for k, _ in KEYS][:6] == [
        "Left / Right", "Shift+Left / Shift+Right", "P (Shift+P while reviewing / coding)", "S", "O", "F1",
    ]  # fmt: skip
    canvas = app.viewer.window._qt_viewer.canvas.native
    qwin = app.viewer.window._qt_window
    qwin.activateWindow()
    qtbot.waitUntil(qwin.isActiveWindow, timeout=5000)

    def press(key, modifier=Qt.NoModifier, target=None):
        qtbot.keyClick(target or canvas, key, modifier)
        qtbot.wait(50)

    s.jump_to_index(len(s.stack) // 2)
    i = s.stack.dates.index(s.current_scene.date)
    press(Qt.Key_Right)
    assert s.stack.dates.index(s.current_scene.date) == i + 1
    press(Qt.Key_Left)
    assert s.stack.dates.index(s.current_scene.date) == i
    year = s.current_scene.year
    press(Qt.Key_Right, Qt.ShiftModifier)
    assert s.current_scene.year > year
    press(Qt.Key_Left, Qt.ShiftModifier)
    assert s.current_scene.year == year
    locked = app.state.locked
    press(Qt.Key_S)
    assert app.state.locked != locked
    press(Qt.Key_S)
    overlay = app.state.overlay
    press(Qt.Key_O)
    assert app.state.overlay != overlay
    press(Qt.Key_O)
    assert app.state.overlay == overlay
    press(Qt.Key_P)
    assert app.docks["Pair"].isVisible()
    app.docks["Stack"].raise_()
    press(Qt.Key_F1)
    dialog = app._help
    assert dialog.isVisible() and "quality overlay" in dialog.findChild(QLabel).text()
    assert "Review dock, annotator mode" in dialog.label.text() and "Failures dock" not in dialog.label.text()
    dialog.reject()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is canvas, timeout=5000)
    press(Qt.Key_O, target=QApplication.focusWidget())  # straight after the dialog, no click on the canvas
    assert app.state.overlay != overlay
    app.controls._on_help_clicked()  # the Stack dock's Keys... button: the same
    app.controls._help.reject()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is canvas, timeout=5000)
    press(Qt.Key_O, target=QApplication.focusWidget())
    assert app.state.overlay == overlay


def test_pair_fields_show_whole_dates_and_titles_follow_a_equals_shown(opened, qtbot):
    app, s = opened, opened.session
    pair = app.pair
    app.docks["Pair"].raise_()
    app.show_pair()
    qtbot.waitUntil(lambda: len(pair.rgbs) == 2, timeout=30000)
    text = pair.a_edit.text()
    assert len(text) == 10 and pair.a_edit.width() >= pair.a_edit.fontMetrics().horizontalAdvance(text)
    s.jump_to_index(len(s.stack) // 3)
    shown = s.current_scene.date.isoformat()
    pair.use_a.click()  # the panel title follows without pressing Show
    qtbot.waitUntil(lambda: shown in pair.labels[0].text, timeout=30000)
    assert pair.a_edit.text() == shown and s.state.pair[0] == shown


def test_the_caption_never_names_another_date_than_the_shown_one(opened, qtbot):
    """Stepping fast: the caption names the date the slider and the status line show at every step (it was blank
    while it waited for stepping to pause), and nothing comes later to change it."""
    app, s = opened, opened.session
    for _ in range(5):
        s._on_next_date()
        shown = s.current_scene.date.isoformat()
        assert app.caption.text().startswith(shown + " "), (app.caption.text(), shown)
        assert shown in s.status_text()
    qtbot.wait(200)  # nothing comes later to change it
    assert app.caption.isVisible() and app.caption.text().startswith(s.current_scene.date.isoformat() + " ")


def test_a_shorter_stack_goes_straight_to_its_date(opened, qtbot):
    """A stack with fewer dates than the date shown (a review item's filters, another site) on the same grid: the
    canvas shows its date with one slice of the image layer and no napari dims change. (As a dims axis, the slider
    was moved and napari's data setter sliced the layer again: two slices and a dims round, after a grey frame
    dance to keep napari from clamping the step to a date nobody saw.)"""
    from reviewer.record.stack import open_stack

    app, s = opened, opened.session
    s.jump_to_index(len(s.stack) - 1)  # the last date: past the end of the TM-only stack
    wait_frame(app, qtbot)
    tm = open_stack(s.index, composite=s.state.composite, sensors=("TM",), cache=s.cache)
    assert 2 < len(tm) <= s.state.current
    s.read_frame(tm, s.state.composite, 1)  # its date 1 read already (no re-slice when a read comes back)
    dims_events, slices = [], []
    app.viewer.dims.events.connect(lambda e: dims_events.append(e.type))
    s.image_layer.events.set_data.connect(lambda e: slices.append(1))
    s.show_stack(tm, 1)
    assert dims_events == [] and len(slices) == 1
    wait_frame(app, qtbot)
    assert s.state.current == 1 and s.image_layer.data.date == 1
    assert app.date_slider.count.text() == f"2 / {len(tm)}" and app.date_slider.slider.maximum() == len(tm) - 1
    assert app.caption.text().startswith(tm.labels[1] + "   ")
    assert len(slices) == 1 and dims_events == []  # the date shown was sliced once: nothing re-sliced it once read


def rest_pointer_on_image(canvas, app, qtbot) -> None:
    """The pointer moved onto the image's middle and left there (by way of another point: Qt sends no move to where the
    pointer already is, and napari may have reset its cursor meanwhile)."""
    for x, y in ((canvas.width() // 3, canvas.height() // 3), (canvas.width() // 2, canvas.height() // 2)):
        qtbot.mouseMove(canvas, QPoint(x, y))
    qtbot.waitUntil(lambda: app.viewer.cursor.position[-1] > 0, timeout=5000)


def status_value(app) -> tuple[int, ...] | None:
    """The RGB napari's status bar gives under the cursor (None: it gives none)."""
    status = app.viewer.status
    value = status.get("value") if isinstance(status, dict) else None
    if value in (None, ""):
        return None
    return tuple(int(v) for v in str(value).strip("[]").split(","))[:3]


def shown_rgb(layer, position) -> tuple[int, ...]:
    """The RGB the image layer shows at world `position` (the pixel napari's status bar reads)."""
    row, col = (int(v) for v in np.round(layer.world_to_data(position)[-2:]))
    return tuple(int(v) for v in np.asarray(layer.data)[row, col][:3])


def test_napari_status_names_the_shorter_stacks_date_not_the_grey(opened, qtbot):
    """napari's status bar gives the value under a still pointer of the date shown once a shorter stack comes (a
    review item's filters), not of the date before nor the placeholder's grey "[40, 40, 40]"."""
    from reviewer.record.stack import open_stack

    app, s = opened, opened.session
    s.jump_to_index(len(s.stack) - 1)
    wait_frame(app, qtbot)
    tm = open_stack(s.index, composite=s.state.composite, sensors=("TM",), cache=s.cache)
    assert 2 < len(tm) <= s.state.current
    s.read_frame(tm, s.state.composite, 1)
    canvas = app.viewer.window._qt_viewer.canvas.native
    rest_pointer_on_image(canvas, app, qtbot)
    layer, cursor = s.image_layer, app.viewer.cursor
    s.show_stack(tm, 1)
    wait_frame(app, qtbot)
    rgb = shown_rgb(layer, cursor.position)
    assert layer.data.date == 1 and rgb != (40, 40, 40)  # a real pixel of the demo's date 1
    assert status_value(app) == rgb, app.viewer.status


def a_coloured_date(s, stack, row: int, col: int) -> tuple[int, tuple[int, ...]]:
    """The first date after the first of `stack` whose pixel (row, col) is neither black (masked) nor the
    placeholder's grey, read into the session's frames, and that pixel's RGB."""
    frames = s.rgb_array(stack)
    for i in range(1, len(stack)):
        s.read_frame(stack, s.state.composite, i)
        rgb = tuple(int(v) for v in frames[i][row, col][:3])
        if rgb not in ((0, 0, 0), (40, 40, 40)):
            return i, rgb
    raise AssertionError("no date of the stack has a coloured pixel there")


def test_napari_status_names_the_date_of_a_shorter_stack_on_another_grid(opened, qtbot):
    """The same as a shorter stack's, when the new stack's grid is another one (another site of another size; here the
    demo's TM dates read 48 px across in a 64 px site, its pixels the same size): napari's data setter takes the new
    date's frame, and the status bar gives its value under the still pointer."""
    from reviewer.record.stack import open_stack

    app, s = opened, opened.session
    s.jump_to_index(len(s.stack) - 1)
    wait_frame(app, qtbot)
    small = open_stack(s.index, composite=s.state.composite, sensors=("TM",), cache=s.cache).at_width(48)
    assert 2 < len(small) <= s.state.current and small.grid.shape == (48, 48)
    layer, cursor = s.image_layer, app.viewer.cursor
    app.viewer.mouse_over_canvas = True
    cursor.position = (960.0, 960.0)  # the pointer on the image's middle (as a mouse move sets it)
    row, col = (int(v) for v in np.round(np.asarray(cursor.position) / np.asarray(layer.scale)))
    assert 0 <= row < 48 and 0 <= col < 48  # the pointer rests on the smaller image too
    i, rgb = a_coloured_date(s, small, row, col)
    s.show_stack(small, i)
    wait_frame(app, qtbot)
    assert layer.data.shape == (48, 48, 3) and layer.data.date == i
    assert tuple(int(v) for v in np.round(layer.world_to_data(cursor.position))) == (row, col)
    assert shown_rgb(layer, cursor.position) == rgb  # what the canvas shows there
    assert status_value(app) == rgb, app.viewer.status


def test_napari_status_names_the_date_of_a_shorter_stack_in_another_pixel_size(opened, qtbot, monkeypatch):
    """Another site whose dates show at another pixel size (read at the canvas's width where the site is wider): the
    status bar gives the value of the new date's pixel under the pointer, in the new pixel size. Here the canvas reads
    at most 48 px across once the 64 px site is shown, so its TM dates show 48 px across, each pixel 40 m, not 30 m."""
    from reviewer.app import evidence_prep
    from reviewer.record.stack import open_stack

    app, s = opened, opened.session
    s.jump_to_index(len(s.stack) - 1)
    wait_frame(app, qtbot)
    layer, cursor = s.image_layer, app.viewer.cursor
    app.viewer.mouse_over_canvas = True
    cursor.position = (960.0, 960.0)  # the pointer on the image's middle (as a mouse move sets it)
    assert tuple(layer.scale) == (30.0, 30.0)
    monkeypatch.setattr(evidence_prep, "VIEW_PX", 48)
    tm = open_stack(s.index, composite=s.state.composite, sensors=("TM",), cache=s.cache)
    assert 2 < len(tm) <= s.state.current
    row, col = (int(v) for v in np.round((np.asarray(cursor.position) - 5.0) / 40.0))  # (pixel 0 centred on 5 m)
    assert 0 <= row < 48 and 0 <= col < 48
    i, rgb = a_coloured_date(s, tm, row, col)
    s.show_stack(tm, i)
    wait_frame(app, qtbot)
    assert layer.data.shape == (48, 48, 3) and tuple(layer.scale) == (40.0, 40.0) and layer.data.date == i
    assert tuple(int(v) for v in np.round(layer.world_to_data(cursor.position))) == (row, col)
    assert shown_rgb(layer, cursor.position) == rgb  # what the canvas shows there
    assert status_value(app) == rgb, app.viewer.status


def test_napari_status_follows_a_date_read_after_the_step(opened, qtbot):
    """A date not read yet shows the placeholder's grey for the few ms of its read; napari's status bar read that grey
    at the step and kept "[40, 40, 40]" under a still pointer until the mouse moved (the MODIS shot at 1366x768)."""
    app, s = opened, opened.session
    canvas = app.viewer.window._qt_viewer.canvas.native
    rest_pointer_on_image(canvas, app, qtbot)
    unread = [i for i in range(len(s.stack)) if s.frames.values(s.stack, s.state.composite, i) is None]
    i = unread[len(unread) // 2]
    s.jump_to_index(i)
    qtbot.waitUntil(lambda: s.frame_shown(i), timeout=20000)
    layer, cursor = s.image_layer, app.viewer.cursor
    r, g, b = shown_rgb(layer, cursor.position)
    assert layer.data.date == i and (r, g, b) != (40, 40, 40)  # a real pixel of that date
    status = app.viewer.status
    text = status if isinstance(status, str) else str(status.get("coordinates", status))
    assert f"[{r}, {g}, {b}]" in text, (text, (r, g, b))


def test_napari_status_follows_a_step_under_a_still_pointer(opened, qtbot):
    """Right on the canvas with the pointer still over the image: napari's status bar gives the new date's value
    there (the date is no part of napari's cursor position, so no cursor move has napari read it again)."""
    from qtpy.QtTest import QTest

    from reviewer.app.qt_window import canvas_widget

    app, s = opened, opened.session
    canvas = app.viewer.window._qt_viewer.canvas.native
    rest_pointer_on_image(canvas, app, qtbot)
    layer, cursor = s.image_layer, app.viewer.cursor

    def under_pointer() -> tuple[int, ...]:  # the RGB the layer shows under the pointer (napari's own reading of it)
        return tuple(int(v) for v in layer.get_value(cursor.position, world=True))[:3]

    start, before = s.state.current, under_pointer()
    qtbot.wait(500)  # napari's status thread has answered the pointer's moves (an answer landing after the step
    # would be of the date before, read in that thread: the step's own is given in the step's turn)
    for k in range(1, len(s.stack) - start):
        QTest.keyClick(canvas_widget(app.viewer), Qt.Key_Right)
        wait_frame(app, qtbot)
        rgb = under_pointer()
        assert s.state.current == start + k and layer.data.date == start + k
        if rgb != before:
            break
    else:
        pytest.fail("no two dates in a row differ under the pointer")
    assert status_value(app) == rgb, (app.viewer.status, rgb)


def test_slider_count_is_whole_with_900_dates(opened, qtbot):
    """Issue 16 item 5: with ~900 dates the slider's count read "0 | 89". The date slider's count shows every digit
    of "900 / 900" (a site of 900 dates at its last), and the slider's row is inside the window."""
    app = opened
    position, slider = app.session.dates.position, app.date_slider
    kept = (position.index, position.count, position.date)
    try:
        position.show(899, 900, "2016-05-15 MODIS Terra")
        qtbot.wait(50)
        assert slider.count.text() == "900 / 900" and slider.slider.maximum() == 899 and slider.slider.value() == 899
        for label in (slider.count, slider.date):
            text = label.text()
            assert label.fontMetrics().horizontalAdvance(text) <= label.contentsRect().width(), (text, label.width())
        qwin = app.viewer.window._qt_window
        right = slider.count.mapTo(qwin, slider.count.rect().topRight()).x()
        assert right < qwin.width()
    finally:
        position.show(*kept)


def test_pair_panels_use_the_docks_width(opened, qtbot, shots):
    """Issue 16 item 6: the two panels were ~180 px wide in a 900 px dock. Each panel's view takes half the
    dock's width and most of its height, and the image fills its view's height (a square site)."""
    app = opened
    pair = app.pair
    app.show_pair()
    qtbot.waitUntil(lambda: len(pair.rgbs) == 2, timeout=30000)
    qtbot.wait(100)
    dock = app.docks["Pair"]
    dw, dh = dock.width(), dock.height()
    assert dh >= 0.4 * app.viewer.window._qt_window.height()  # P makes room for the pair
    views = [v.sceneBoundingRect() for v in pair.views]
    for k, v in enumerate(views):
        assert v.width() >= 0.45 * pair.graphics.width(), (k, v, dw)
        assert v.height() >= 0.7 * (dh - 80), (k, v, dh)  # all but the dock's tool row, titles and caption
        img = pair.images[k].sceneBoundingRect()
        assert min(img.width(), img.height()) >= 0.95 * min(v.width(), v.height()), (k, img, v)
    assert abs(views[0].width() - views[1].width()) <= 2
    app.viewer.screenshot(str(shots / "03_pair_dock.png"), canvas_only=False, flash=False)


def test_trajectory_harmonise_toggle(opened, qtbot, shots):
    """Issue 16 item 8: the toggle reads TM/ETM+ harmonised to OLI with the catalogue's coefficients (Roy et
    al. 2016 OLS), the plot says which is shown, OLI points stay as they were. Expected NDVI worked from the
    raw bands with the paper's red and NIR coefficients."""
    from reviewer.record.stack import read_bands

    app, s = opened, opened.session
    traj = app.trajectory
    app.docks["Trajectory"].raise_()
    traj._on_pixel_clicked(20, 40)
    qtbot.waitUntil(lambda: traj.series is not None and not traj.busy, timeout=60000)
    raw = traj.series
    assert "as recorded" in traj.info.text()
    traj.tools.harmonize_check.click()
    assert app.state.trajectory_harmonized
    qtbot.waitUntil(lambda: traj.series is not raw and not traj.busy and traj.series_harmonized, timeout=60000)
    harm = traj.series
    assert "TM/ETM+ harmonised to OLI" in traj.info.text() and "Roy et al. 2016" in traj.info.text()
    checked = {"TM": 0, "ETM+": 0, "OLI": 0}
    for k, sensor in enumerate(raw.sensors):
        if sensor not in checked or raw.masked[k] or not np.isfinite(raw.values[k]):
            continue
        if sensor == "OLI":
            assert harm.values[k] == pytest.approx(raw.values[k], abs=1e-6)
        else:
            nir, red = read_bands(s.stack.scenes[raw.indices[k]], ["nir", "red"], s.stack.grid)[:, 20, 40]
            nir_oli, red_oli = 0.8462 * nir + 0.0412, 0.9047 * red + 0.0061  # Roy et al. 2016 Table 2 OLS
            assert harm.values[k] == pytest.approx((nir_oli - red_oli) / (nir_oli + red_oli), abs=1e-4)
        checked[sensor] += 1
    assert min(checked.values()) > 0, checked
    qtbot.wait(50)
    app.viewer.screenshot(str(shots / "04_trajectory_harmonised.png"), canvas_only=False, flash=False)
    traj.tools.harmonize_check.click()
    qtbot.waitUntil(lambda: not traj.busy and not traj.series_harmonized, timeout=60000)
    assert "as recorded" in traj.info.text()


def test_first_open_fits_the_site_and_shows_the_whole_date(reviewer_app, demo_site, qtbot, shots):
    """Issue 10: the image layer is made at start-up, unseen, so the first open only hands it data. Before a
    site the date slider is empty and disabled; after the first open the view is fitted to the site (not to the start-up
    placeholder of 16 px): the whole grid is on the canvas and fills it along its tighter axis, and the
    slider's count and date show whole (the caption names the date and sensor too)."""
    app, s = reviewer_app, reviewer_app.session
    viewer = app.viewer
    slider = app.date_slider
    qtbot.wait(100)
    assert not slider.slider.isEnabled() and slider.count.text() == "" and slider.date.text() == ""
    # nothing of the placeholder is said before a site: no scale bar seen (drawn fully transparent, so its shaders
    # are compiled before the first site), no date caption, no layer whose value the status line reads
    bar, caption = viewer.canvas.overlays.scale_bar, app.caption
    assert not (bar.visible and bar.opacity > 0) and not caption.isVisible() and caption.text() == ""
    assert viewer.layers.selection.active is None
    years = (app.controls.year_from, app.controls.year_to)
    assert [sb.text().strip() for sb in years] == ["", ""]  # no site, no years (it said "1970 - 1970")
    app.open_site(demo_site)
    qtbot.waitUntil(lambda: s.stack is not None and len(s.stack) > 0, timeout=60000)
    wait_frame(app, qtbot)
    first, last = min(sc.year for sc in s.index.record_scenes()), max(sc.year for sc in s.index.record_scenes())
    assert [sb.text() for sb in years] == [str(first), str(last)]  # the first year shown, not blank
    qtbot.waitUntil(lambda: app.settled, timeout=30000)
    qtbot.wait(100)
    viewer.screenshot(str(shots / "first_open_fitted.png"), canvas_only=False, flash=False)
    h, w = s.index.site.shape
    res = s.index.site.resolution
    canvas_h, canvas_w = canvas_rgb(app).shape[:2]
    zoom = viewer.scene.camera.zoom  # screen px per metre
    site_h, site_w = h * res * zoom, w * res * zoom
    assert site_h <= canvas_h + 1 and site_w <= canvas_w + 1, (site_h, site_w, canvas_h, canvas_w)
    assert max(site_h / canvas_h, site_w / canvas_w) > 0.8, (site_h, site_w, canvas_h, canvas_w)
    cy, cx = viewer.scene.camera.center[-2:]
    assert abs(cy - (h - 1) * res / 2) < 0.05 * h * res and abs(cx - (w - 1) * res / 2) < 0.05 * w * res
    scene = s.stack.scenes[s.state.current]
    assert slider.slider.isEnabled() and slider.count.text() == f"{s.state.current + 1} / {len(s.stack)}"
    for label in (slider.count, slider.date):  # whole
        text = label.text()
        assert label.fontMetrics().horizontalAdvance(text) <= label.contentsRect().width(), (text, label.width())
    assert bar.visible and bar.opacity == 1.0 and viewer.layers.selection.active is s.image_layer
    assert caption.isVisible() and caption.text() == f"{scene.date.isoformat()} {scene.label}   True colour"
    assert not viewer.canvas.overlays.text.visible  # napari's own text overlay: unused
    # the placeholder's boundary layer now draws the site's boundary, seen
    assert s.boundary_layer is not None and s.boundary_layer.opacity > 0 and len(s.boundary_layer.data) >= 1


def test_sensor_boxes_follow_the_site_opened(opened, qtbot, tmp_path, shots):
    """Opening another site shows its sensors' boxes only, all ticked; back on the first site its boxes are there
    again (kept from before), and unticking one filters the stack."""
    from tests.sites import make_site

    app, s = opened, opened.session
    demo_dir, first = s.index.site.dir, {sc.label for sc in s.index.record_scenes()}
    assert {"TM", "OLI", "MODIS Terra"} <= first  # the demo site: Landsat, Sentinel-2, MODIS, VIIRS

    def boxes() -> dict[str, bool]:
        shown = app.controls.sensor_checks.items()
        return {label: cb.isChecked() for label, cb in shown if cb.isVisibleTo(app.controls)}

    def below() -> list[int]:  # where the controls under the sensor boxes are, below the boxes' top (y, px)
        c = app.controls
        return [w.mapTo(c, w.rect().topLeft()).y() - c.sensor_box.mapTo(c, c.sensor_box.rect().topLeft()).y()
                for w in (c.year_from, c.month_buttons[0], c.cloud_slider, c.composite_combo)]  # fmt: skip

    qtbot.waitUntil(lambda: set(boxes()) == first, timeout=60000)  # the docks take the site after its first frame
    assert all(boxes().values())
    app.controls.layout().activate()
    where = below()
    small = make_site(tmp_path / "small", "landsat_small", seed=1)  # Landsat only
    # the boxes of the sensors both sites have, in the same places: left where they are (each box had been taken out
    # of its grid, hidden and shown again at every site change, and the dock re-laid out and repainted around them)
    from qtpy.QtCore import QEvent, QObject
    from qtpy.QtWidgets import QApplication

    before = {label: cb.pos() for label, cb in app.controls.sensor_checks.items()}
    shown_again: list[str] = []

    class Watch(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
            if event.type() in (QEvent.Type.Hide, QEvent.Type.Show) and obj in app.controls.sensor_checks.values():
                shown_again.append(obj.text())
            return False

    watch = Watch()
    QApplication.instance().installEventFilter(watch)
    try:
        app.open_site(small)
        qtbot.waitUntil(lambda: s.index.site.dir != demo_dir and "MODIS Terra" not in boxes(), timeout=60000)
    finally:
        QApplication.instance().removeEventFilter(watch)
    second = {sc.label for sc in s.index.record_scenes()}
    assert "MODIS Terra" not in second and set(boxes()) == second and all(boxes().values())
    kept = [label for label, cb in app.controls.sensor_checks.items() if before.get(label) == cb.pos()]
    assert kept and not set(shown_again) & set(kept), (kept, shown_again)
    assert len(first) > 3 >= len(second)  # two rows of boxes, then one
    # the controls under the boxes stay where they were: the row the small site leaves empty is kept
    app.controls.layout().activate()
    assert below() == where
    box = app.controls.sensor_box  # the small site's one row at the top of the boxes' area, not in its middle
    rows = {cb.mapTo(box, cb.rect().topLeft()).y() for cb in app.controls.sensor_checks.values()}
    assert rows == {0}, rows
    others = [cb for label, cb in app.controls._sensor_boxes.items() if label not in second]  # noqa: SLF001
    assert others and not any(cb.isVisibleTo(app.controls) for cb in others)  # the demo site's other boxes: hidden
    app.controls.grab().save(str(shots / "08_sensor_boxes_small_site.png"))

    app.open_site(demo_dir)
    qtbot.waitUntil(lambda: s.index.site.dir == demo_dir and set(boxes()) == first, timeout=60000)
    assert all(boxes().values())
    wait_frame(app, qtbot)
    app.controls.grab().save(str(shots / "08_sensor_boxes_back.png"))
    app.controls.sensor_checks["TM"].setChecked(False)  # the user unticks a box
    assert s.stack is not None and len(s.stack) and "TM" not in {sc.label for sc in s.stack.scenes}
    app.controls.sensor_checks["TM"].setChecked(True)
    assert "TM" in {sc.label for sc in s.stack.scenes}


def test_the_caption_over_a_narrow_canvas_wraps_at_words_and_is_never_cut(qtbot):
    """Over a canvas narrower than its text (a small screen with the review and Stack docks open), the caption wraps
    at its words inside the canvas's width less its margins; back on a wide canvas it is one line again."""
    from qtpy.QtWidgets import QWidget

    from reviewer.app.caption import DateCaption
    from reviewer.app.qt_caption import MARGIN_PX, QtDateCaption

    canvas = QWidget()
    qtbot.addWidget(canvas)
    canvas.resize(900, 400)
    caption = DateCaption()
    label = QtDateCaption(caption, canvas, over_canvas=True)
    canvas.show()
    assert not label.isVisible()  # nothing to say yet
    caption.show_date("2016-05-15 MODIS Terra", "Land surface temperature (day)", all_masked=True)
    assert label.isVisible() and label.text() == caption.text
    one_line = label.height()
    assert label.width() == label.sizeHint().width() <= 900 - 2 * MARGIN_PX
    canvas.resize(260, 400)
    qtbot.waitUntil(lambda: label.width() <= 260 - 2 * MARGIN_PX, timeout=2000)
    assert label.wordWrap() and label.height() >= 2 * one_line - 12  # two lines or more
    assert label.height() >= label.heightForWidth(label.width())  # every line shown
    canvas.resize(900, 400)
    qtbot.waitUntil(lambda: label.height() == one_line, timeout=2000)


def test_the_date_slider_steps_the_date_by_mouse_and_keys(opened, qtbot):
    """The date slider under the canvas (the app's own: the date is no napari dims axis): a click gives it the keys;
    End shows the last date, Left the one before, Shift+Left the year before (`step_year`), Home the first; its
    count says the place, "1 / N", and the caption the date. napari's dims never move."""
    from reviewer.record.series import step_year

    app, s = opened, opened.session
    slider, n = app.date_slider, len(s.stack)
    dims_events = []
    app.viewer.dims.events.connect(lambda e: dims_events.append(e.type))
    qwin = app.viewer.window._qt_window
    qwin.activateWindow()
    qtbot.waitUntil(qwin.isActiveWindow, timeout=5000)
    qtbot.mouseClick(slider.slider, Qt.LeftButton)  # (a click on the groove also pages the slider)
    qtbot.waitUntil(slider.slider.hasFocus, timeout=2000)
    qtbot.keyClick(slider.slider, Qt.Key_End)
    assert s.state.current == n - 1 and slider.count.text() == f"{n} / {n}"
    qtbot.keyClick(slider.slider, Qt.Key_Left)
    assert s.state.current == n - 2 and slider.count.text() == f"{n - 1} / {n}"
    year_before = step_year(s.stack.dates, n - 2, -1)
    qtbot.keyClick(slider.slider, Qt.Key_Left, Qt.ShiftModifier)
    assert s.state.current == year_before < n - 2 and slider.slider.value() == year_before
    assert s.stack.dates[year_before].year < s.stack.dates[n - 2].year
    qtbot.keyClick(slider.slider, Qt.Key_Home)
    assert s.state.current == 0 and slider.count.text() == f"1 / {n}"
    wait_frame(app, qtbot)
    assert app.caption.text().startswith(s.stack.labels[0] + "   ") and slider.date.text() == s.stack.labels[0]
    assert dims_events == []
