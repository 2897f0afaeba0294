"""Benchmark: the real app on a full-size site as a user drives it (issue 31, the viewer part): launch to the first
imagery, five date steps (Right), composites NDVI / SWIR / true colour, the whole-stack percentile stretch, a click for
the Trajectory, the Pair tab (P), the Chips tab, the quality overlay. Each step: wall time until what it shows is on
screen, the longest the UI thread was blocked meanwhile (gap between 20 ms polls), the process's VmHWM after it.

Run one site per process, the demo site in the same run as the baseline, under Xvfb (1600x1000 or 1366x768):
  BENCH_CACHE=/tmp/x/bench .venv/bin/python tests/bench/fullsize_scenes.py   # then `reviewer site init` each folder
  xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/bench/bench_fullsize_app.py SITE_DIR STORE OUT_JSON SHOTS
Bench code: it uses the launch's own window builder (`_show_built_window`) so that the window is the user's.
"""

import json
import os
import sys
import time

T0 = time.perf_counter()

import napari  # noqa: E402
from qtpy.QtCore import Qt, QTimer  # noqa: E402
from qtpy.QtTest import QTest  # noqa: E402
from qtpy.QtWidgets import QApplication  # noqa: E402

from reviewer.app.main_window import ReviewerApp, _show_built_window, main_window  # noqa: E402

site, db, out_json, shots = sys.argv[1:5]
demo = site == "--demo"


def mem(field):
    with open(f"/proc/{os.getpid()}/status") as f:
        lines = f.readlines()
    for line in lines:
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return 0.0


if demo:
    # the demo site made first, in its own process: made by the app, its generation's process pool spawns (threads
    # are running by then) and each worker re-imports this script, which has no main guard: the bench stopped with
    # "unexpected error (demo site)" and no imagery wherever the demo site was not cached yet
    import subprocess

    subprocess.run([sys.executable, "-m", "reviewer.cli", "demo"], check=True, stdout=subprocess.DEVNULL)

viewer = napari.Viewer(title="EarthRecord Reviewer", show=False)
app = ReviewerApp(viewer, db=db, site=None if demo else site, demo=demo, later=True)
_show_built_window(app)
s = app.session
results = {"site": site, "steps": []}
log = open(out_json + ".log", "w")


def shot(name):
    path = f"{shots}_{name}.png"
    main_window(viewer).grab().save(path)
    return path


def press(key):
    w = QApplication.focusWidget() or main_window(viewer)
    QTest.keyClick(w, key)


def frame_ok():
    return s.frame_shown() and app.settled


steps = []


def step(name, action, cond, timeout=120, screenshot=False):
    steps.append((name, action, cond, timeout, screenshot))


step("first imagery", lambda: None, lambda: main_window(viewer).isVisible() and s.frame_shown(), 300, True)
step("settled", lambda: None, lambda: frame_ok())
for k in range(1, 6):
    step(
        f"date step {k} (Right)",
        lambda: press(Qt.Key_Right),
        lambda k=k: s.state.current == min(k, len(s.stack) - 1) and frame_ok(),
    )
for comp in ("ndvi", "swir", "truecolor"):
    step(
        f"composite {comp}",
        lambda c=comp: setattr(s.state, "composite", c),
        lambda c=comp: (
            s.state.composite == c
            and s.state.stretch.composite == c
            and (frame_ok() or (s.stack is not None and not len(s.stack)))
        ),
        screenshot=comp != "truecolor",
    )
step(
    "percentile stretch (whole stack)",
    lambda: s.stretch_from_percentiles(),
    lambda: s.state.stretch.source.startswith("percentiles") and frame_ok(),
    screenshot=True,
)


def click():
    h, w = s.index.site.shape
    results["click_pixel"] = (h // 2, w // 3)
    results["traj_before"] = id(app.trajectory.series)
    s.pixel_clicked.emit(h // 2, w // 3)


step(
    "trajectory click",
    click,
    lambda: (
        app.trajectory.series is not None
        and not app.trajectory.busy
        and id(app.trajectory.series) != results["traj_before"]
    ),
    screenshot=True,
)
step("pair tab (P)", lambda: app.show_pair(), lambda: bool(app.pair.panels) and not app.pair.busy, screenshot=True)


def chips():
    d = app.docks["Chips"]
    d.show()
    d.raise_()


step("chips tab", chips, lambda: not app.chips.busy and bool(app.chips.chips), screenshot=True)
step("quality overlay on", lambda: setattr(s.state, "overlay", True), lambda: frame_ok(), screenshot=True)
step(
    "date step with overlay",
    lambda: press(Qt.Key_Left),
    lambda: frame_ok() and s.state.current == 4 % max(1, len(s.stack)) or (len(s.stack) <= 4 and frame_ok()),
)

state = {"i": 0, "t": None, "last_tick": None, "gap": 0.0}
timer = QTimer()
timer.setInterval(20)


def record(name, ok, t, screenshot):
    r = {
        "step": name,
        "ok": ok,
        "s": round(t, 3),
        "max_block_s": round(state["gap"], 3),
        "hwm_mb": round(mem("VmHWM")),
        "rss_mb": round(mem("VmRSS")),
    }
    if screenshot:
        r["shot"] = shot(name.split()[0] + "_" + name.split()[-1].strip("()"))
    results["steps"].append(r)
    log.write(json.dumps(r) + "\n")
    log.flush()


def tick():
    now = time.perf_counter()
    if state["last_tick"] is not None:
        state["gap"] = max(state["gap"], now - state["last_tick"])
    state["last_tick"] = now
    if state["i"] >= len(steps):
        timer.stop()
        results["stack"] = len(s.stack) if s.stack is not None else 0
        results["grid"] = list(s.index.site.shape) if s.index else None
        results["messages"] = s.reporter.messages[:20]
        json.dump(results, open(out_json, "w"), indent=1)
        viewer.close()
        return
    name, action, cond, timeout, screenshot = steps[state["i"]]
    if state["t"] is None:
        state["t"] = now if state["i"] else T0
        state["gap"] = 0.0
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - a step that fails is reported, the next runs
            record(name + f" FAILED {exc!r}", False, now - state["t"], False)
            state["i"] += 1
            state["t"] = None
        return
    try:
        ok = cond()
    except Exception as exc:  # noqa: BLE001 - a condition not yet true
        ok = False
        results.setdefault("errors", []).append(f"{name}: {exc!r}")
    if ok or now - state["t"] > timeout:
        record(name + ("" if ok else " TIMEOUT"), ok, now - state["t"], screenshot)
        state["i"] += 1
        state["t"] = None


timer.timeout.connect(tick)
timer.start()
napari.run()
