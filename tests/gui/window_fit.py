"""A day's first minutes in the window, checked for fit: open the demo site, click a pixel and a trajectory
point, run a score in the Scoring dock; after each step the window's frame lies inside the screen's available
area and has not grown, no two docks overlap, napari's layer docks stay hidden and the Stack dock needs no
sideways scrolling. Used in-process by test_window_fit.py and as a script under an Xvfb screen of a given size:

    xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python tests/gui/window_fit.py SITE DB OUT
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT, ROOT / "tests" / "unit"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))


def visible_docks(app) -> dict[str, object]:
    """Docks a user sees now (a tab behind another is not seen), napari's own included."""
    from qtpy.QtWidgets import QDockWidget

    qwin = app.viewer.window._qt_window
    return {
        d.objectName() or d.windowTitle(): d
        for d in qwin.findChildren(QDockWidget)
        if d.isVisible() and not d.visibleRegion().isEmpty()
    }


def layout_problems(app, size0) -> list[str]:
    """What a user would see wrong with the window's layout now (empty: nothing)."""
    qwin = app.viewer.window._qt_window
    avail = qwin.screen().availableGeometry()
    frame = qwin.frameGeometry()
    out = []
    if not avail.contains(frame):
        out.append(f"frame {frame.getRect()} is not inside the available screen {avail.getRect()}")
    if size0 is not None and (frame.width() > size0[0] or frame.height() > size0[1]):
        out.append(f"the window grew from {size0} to {(frame.width(), frame.height())}")
    docks = visible_docks(app)
    names = sorted(docks)
    for i, a in enumerate(names):
        ga = docks[a].geometry()
        if not qwin.rect().contains(ga):
            out.append(f"dock {a} {ga.getRect()} reaches outside the window {qwin.rect().getRect()}")
        for b in names[i + 1 :]:
            gb = docks[b].geometry()
            if ga.intersects(gb):
                out.append(f"docks {a} {ga.getRect()} and {b} {gb.getRect()} overlap")
    qt_viewer = app.viewer.window._qt_viewer
    if qt_viewer.dockLayerControls.isVisible() or qt_viewer.dockLayerList.isVisible():
        out.append("napari's layer controls or layer list are shown")
    for name in ("Stack", "Scoring"):  # the side docks are as wide as their controls need
        dock = app.docks.get(name)
        if dock is not None and name in docks and dock.widget().horizontalScrollBar().isVisible():
            out.append(f"the {name} dock scrolls sideways")
    return out


def clipped_spin_boxes(widget) -> list[str]:
    """Spin boxes in `widget` whose value does not fit the room their buttons leave (a digit cut or hidden)."""
    from qtpy.QtWidgets import QAbstractSpinBox

    out = []
    for spin in widget.findChildren(QAbstractSpinBox):
        edit = spin.lineEdit()
        need = edit.fontMetrics().horizontalAdvance(spin.text()) + 4  # the line edit's own text margins
        if spin.isVisible() and edit.width() < need:
            out.append(f"spin box {spin.text()!r} shows in {edit.width()} px, needs {need}")
    return out


def scoring_inputs(folder: Path) -> tuple[Path, Path, Path]:
    """The small hand-built bank and runs of the scoring tests."""
    from test_scoring_metrics import all_runs, make_bank

    bank = make_bank(folder / "bank")
    runs = folder / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    return bank, runs, folder / "report"


def _pause(wait_until: Callable, seconds: float) -> None:
    end = time.monotonic() + seconds
    wait_until(lambda: time.monotonic() > end, int(seconds * 1000) + 5000)


def exercise(app, wait_until: Callable, click: Callable, shots: Path, tag: str, work: Path) -> dict:
    """The steps; returns the frame sizes and the problems seen after each step, and saves screenshots."""
    from qtpy.QtCore import QPointF

    qwin = app.viewer.window._qt_window
    s = app.session
    steps: dict[str, list[str]] = {}
    size0 = (qwin.frameGeometry().width(), qwin.frameGeometry().height())
    steps["opened window"] = layout_problems(app, None)
    wait_until(lambda: s.stack is not None and len(s.stack) > 0 and s.frame_shown() and app.settled, 120000)
    # the docks take their content's width in Qt's next layout pass, which comes late on a busy machine: what is
    # checked is the window as it stays, not a frame in between (a sideways scroll bar still there after 3 s fails)
    end = time.monotonic() + 3.0
    wait_until(lambda: not layout_problems(app, size0) or time.monotonic() > end, 8000)
    steps["site open"] = layout_problems(app, size0)
    from tests.gui.shots_review import caption_problems, elided_date_label  # napari's date label whole (it read
    # "2006-04-02 T..."); the date caption over the canvas names the date, whole and clear of the scale bar

    steps["site open"] += elided_date_label(app) + caption_problems(app)
    app.docks["Trajectory"].raise_()
    s.pixel_clicked.emit(32, 32)  # what a click on the canvas emits
    traj = app.trajectory
    wait_until(lambda: traj.series is not None and bool(traj.point_positions()), 60000)
    _pause(wait_until, 0.3)  # the plot lays out and ranges its axes when it paints
    before = s.state.current
    x, y, k = max(traj.point_positions(), key=lambda p: abs(traj.series.indices[p[2]] - before))
    vb = traj.plot.getPlotItem().vb
    click(traj.plot.viewport(), traj.plot.mapFromScene(vb.mapViewToScene(QPointF(x, y))))
    wait_until(lambda: s.state.current != before and s.frame_shown(), 20000)
    wait_until(lambda: app.settled, 20000)
    steps["trajectory click"] = layout_problems(app, size0)
    from tests.gui.shots_review import trajectory_problems  # the plotting area >= 170 px (it had been ~50 px)

    steps["trajectory click"] += trajectory_problems(app)
    steps["trajectory click"] += elided_date_label(app) + caption_problems(app)
    app.viewer.screenshot(str(shots / f"window_{tag}_trajectory.png"), canvas_only=False, flash=False)
    panel = app.scoring_panel
    app.docks["Scoring"].raise_()
    _pause(wait_until, 0.2)  # the dock lays out when it comes to the front
    steps["scoring dock"] = clipped_spin_boxes(panel)  # "1000(": the default 10000 resamples under the buttons
    bank, runs, report = scoring_inputs(work)
    panel.set_inputs(bank, [runs], report)
    panel.bootstrap_spin.setValue(300)
    done = []
    panel.finished.connect(done.append)
    panel._on_run_clicked()
    wait_until(lambda: bool(done), 120000)
    for tab in range(panel.tabs.count()):  # every result tab, the 700 px figure included
        panel.tabs.setCurrentIndex(tab)
        _pause(wait_until, 0.1)  # let the tab paint
    steps["scoring run"] = layout_problems(app, size0)
    if panel.figure_area.horizontalScrollBar().isVisible():  # the figure tab is the one shown last
        steps["scoring run"].append("the pass^k figure is wider than its tab")
    app.viewer.screenshot(str(shots / f"window_{tag}_scoring.png"), canvas_only=False, flash=False)
    app.napari_docks_action.trigger()  # the Reviewer menu brings napari's layer docks back
    _pause(wait_until, 0.2)
    napari_back = app.viewer.window._qt_viewer.dockLayerList.isVisible()
    steps["napari docks shown"] = [p for p in layout_problems(app, size0) if "napari's layer" not in p]
    app.napari_docks_action.trigger()
    frame = qwin.frameGeometry()
    return {
        "screen": qwin.screen().availableGeometry().getRect(),
        "size0": size0,
        "size": (frame.width(), frame.height()),
        "steps": steps,
        "scored": done[0] is not None,
        "napari_back": napari_back,
    }


def main(site: str, db: str, out: str) -> int:
    """The script form: one run under whatever screen the display has; the result as JSON in OUT."""
    import napari
    from qtpy.QtCore import Qt
    from qtpy.QtTest import QTest
    from qtpy.QtWidgets import QApplication

    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    viewer = napari.Viewer(show=True)
    app = ReviewerApp(viewer, db=db, recent=RecentSites(out_dir / "recent.json"))
    qapp = QApplication.instance()

    def wait_until(cond, timeout_ms):
        end = time.monotonic() + timeout_ms / 1000
        while True:
            qapp.processEvents()
            if cond():
                return
            if time.monotonic() > end:
                raise TimeoutError("timed out")
            time.sleep(0.01)

    def click(widget, pos):
        QTest.mouseClick(widget, Qt.LeftButton, Qt.NoModifier, pos.toPoint() if hasattr(pos, "toPoint") else pos)

    app.open_site(site)
    w = viewer.window._qt_window.screen().availableGeometry()
    result = exercise(app, wait_until, click, out_dir, f"{w.width()}x{w.height()}", out_dir)
    (out_dir / "result.json").write_text(json.dumps(result, indent=1))
    app.close()
    viewer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
