"""Plain napari with the five docks of the plugin (Plugins > EarthRecord Reviewer > Stack, Trajectory, Coverage,
Chips, Pair), a site open and a pixel's trajectory plotted, in a window that fills the screen (as a user maximizes
it): a screenshot and what of the trajectory's plotting area is in sight. Run in a fresh process under an Xvfb screen
of the size to look at (tests/gui/test_plugin_docks.py does, at 1366 x 768):

    xvfb-run -a -s "-screen 0 1366x768x24" python tests/gui/shots_plugin.py SITE_DIR OUT_DIR

Writes OUT_DIR/plugin_docks_WxH.png and OUT_DIR/plugin_docks_WxH.json: {"screen", "window", "plot_area" (the view
box's height), "plot_area_seen" (its rows in sight, not scrolled away in the dock), "docks": {name: height}}."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT, ROOT / "plugins"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

WIDGETS = ("Stack", "Trajectory", "Coverage", "Chips", "Pair")


def main(site: str, out: str) -> int:
    private = Path(tempfile.mkdtemp())  # napari's settings, the recent sites and the store: none of the user's
    os.environ.setdefault("NAPARI_CONFIG", str(private / "napari_settings.yaml"))
    os.environ.setdefault("REVIEWER_RECENT_FILE", str(private / "recent_sites.json"))
    os.environ.setdefault("XDG_DATA_HOME", str(private / "data"))
    os.environ.setdefault("XDG_CONFIG_HOME", str(private / "config"))
    import napari
    from qtpy.QtCore import QPoint, QRect

    from tests.gui.shots_review import wait

    viewer = napari.Viewer(show=True)
    docks, widgets = {}, {}
    for name in WIDGETS:
        docks[name], widgets[name] = viewer.window.add_plugin_dock_widget("earthrecord-reviewer", name)
    qwin = docks["Stack"].window()
    avail = qwin.screen().availableGeometry()
    qwin.setGeometry(avail)  # (what a maximized window takes; Xvfb has no window manager to maximize it)
    session = widgets["Stack"].session
    session.open_site(site)
    assert wait(lambda: session.stack is not None and session.frame_shown(), 120), "the site did not open"
    h, w = session.stack.grid.shape
    session.pixel_clicked.emit(h // 2, w // 2)  # a click on the canvas's middle: its trajectory plotted
    traj = widgets["Trajectory"].panel
    wait(lambda: traj.series is not None and not traj.busy, 60)
    wait(lambda: False, 1.0)  # the docks lay out and paint
    vb = traj.plot.getPlotItem().vb
    box = vb.mapRectToScene(vb.boundingRect()).toAlignedRect()  # the plotting area, in the plot widget's pixels
    seen = traj.plot.visibleRegion().boundingRect().intersected(QRect(box.topLeft(), box.size()))
    size = f"{avail.width()}x{avail.height()}"
    shot = qwin.grab()
    Path(out).mkdir(parents=True, exist_ok=True)
    shot.save(str(Path(out) / f"plugin_docks_{size}.png"))
    report = {
        "screen": size,
        "window": [qwin.width(), qwin.height()],
        "plot_area": box.height(),
        "plot_area_seen": seen.height() if traj.plot.isVisible() else 0,
        "plot_top_in_window": traj.plot.mapTo(qwin, QPoint(0, 0)).y(),
        "docks": {name: dock.height() for name, dock in docks.items()},
    }
    (Path(out) / f"plugin_docks_{size}.json").write_text(json.dumps(report))
    print(json.dumps(report))
    viewer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
