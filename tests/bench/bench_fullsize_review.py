"""Benchmark: reviewing whole-site items on a full-size scene (20 Landsat dates, 7,741 px across, a boundary), as
annotator ann does it: launch to the first item's evidence shown (the site opens with it: its boundary, the item's
region, the trajectory read), A twice (the next items), then the quality overlay on, a date step with it, the
overlay off and on again. Each step: wall time until it is shown, the UI thread's CPU time (`time.thread_time`), the
longest the UI thread was blocked meanwhile (gap between 20 ms polls), the process's VmHWM after it. Old and new code in the same run: fresh
processes alternating old/new for --rounds rounds, each on a fresh copy of the store; medians printed side by side.

  STORE: a store with bank "fs" (whole-site items) over the full-size site, assigned to ann (left27j's bank2 over
  the landsat20 site of fullsize_scenes.py, with a boundary.geojson added to its site.json).
  git archive main | tar -x -C /tmp/x-base
  .venv/bin/python tests/bench/bench_fullsize_review.py STORE OUT_DIR --old /tmp/x-base --new . [--rounds 3]
A single run (what each round starts, under xvfb-run at 1600x1000):
  .venv/bin/python tests/bench/bench_fullsize_review.py --drive DB OUT_JSON SHOTS
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


#: the app's own calls (and vispy's public canvas draw) timed on the UI thread per step: (module, class, method)
PARTS = (
    ("reviewer.app.review_evidence", "EvidenceLoader", "_apply"),
    ("reviewer.app.session", "StackSession", "show_index"),
    ("reviewer.app.session_layers", "CanvasLayers", "draw_boundary"),
    ("reviewer.app.session_layers", "CanvasLayers", "show_item_region"),
    ("reviewer.app.session_layers", "CanvasLayers", "show_overlay"),
    ("reviewer.app.session_layers", "CanvasLayers", "drop_overlay"),
    ("reviewer.app.review_series", "ItemSeries", "show"),
    ("vispy.scene", "SceneCanvas", "draw_visual"),
)


def time_parts(spent):
    """A measuring wrapper around each of PARTS, in this benchmark's process only: the UI thread's wall and CPU
    seconds and the longest call of each go into `spent` ({name: [wall, cpu, longest wall]})."""
    import functools
    import importlib
    import threading

    main = threading.main_thread()
    for module, cls_name, method in PARTS:
        cls = getattr(importlib.import_module(module), cls_name)
        original = getattr(cls, method)
        name = f"{cls_name}.{method}"

        @functools.wraps(original)
        def timed(*args, __f=original, __name=name, **kwargs):
            if threading.current_thread() is not main:
                return __f(*args, **kwargs)
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return __f(*args, **kwargs)
            finally:
                wall = time.perf_counter() - t0
                row = spent.setdefault(__name, [0.0, 0.0, 0.0])
                row[0] += wall
                row[1] += time.thread_time() - c0
                row[2] = max(row[2], wall)

        setattr(cls, method, timed)


def drive(db, out_json, shots):
    t0 = time.perf_counter()
    prof = None
    if os.environ.get("UIPROF"):  # the UI thread's profile, written next to OUT_JSON
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    import napari
    from qtpy.QtCore import Qt, QTimer
    from qtpy.QtTest import QTest

    from reviewer.app.main_window import ReviewerApp, _show_built_window, main_window
    from reviewer.app.qt_window import canvas_widget
    from reviewer.app.recent import RecentSites

    def mem(field):
        with open(f"/proc/{os.getpid()}/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) / 1024
        return 0.0

    viewer = napari.Viewer(title="EarthRecord Reviewer", show=False)
    app = ReviewerApp(viewer, db=db, later=True, recent=RecentSites(os.path.dirname(out_json) + "/recent.json"))
    spent = {}
    time_parts(spent)
    _show_built_window(app)
    app.start_review("ann", "annotator")
    s = app.session
    results = {"db": db, "steps": []}

    def item():
        ann = app.review.annotator
        return ann.view["item"] if ann is not None and ann.view else None

    def shown():
        return app.review.loader.shown(trajectory=True)

    def frame_ok():
        return s.frame_shown() and app.settled

    before = {}

    def accept():
        before["item"] = item()
        QTest.keyClick(canvas_widget(viewer), Qt.Key_A)

    # (name, action, shown when, timeout s)
    steps = [("first item (site open)", lambda: None, lambda: main_window(viewer).isVisible() and shown(), 600)]
    steps += [("next item (A)", accept, lambda: item() != before.get("item") and shown(), 600)] * 2
    steps.append(("quality overlay on", lambda: setattr(s.state, "overlay", True), frame_ok, 60))
    right = lambda: QTest.keyClick(canvas_widget(viewer), Qt.Key_Right)  # noqa: E731
    steps.append(("date step with overlay", right, frame_ok, 60))
    steps.append(("quality overlay off", lambda: setattr(s.state, "overlay", False), frame_ok, 60))
    # (main before this branch: the overlay made anew on a second O never said its date's codes were shown)
    steps.append(("quality overlay on again", lambda: setattr(s.state, "overlay", True), frame_ok, 60))
    state = {"i": 0, "t": None, "last": None, "gap": 0.0, "cpu": 0.0}
    timer = QTimer()
    timer.setInterval(20)

    def tick():
        now = time.perf_counter()
        if state["last"] is not None:
            state["gap"] = max(state["gap"], now - state["last"])
        state["last"] = now
        if state["i"] >= len(steps):
            timer.stop()
            results["messages"] = [str(m) for m in s.reporter.messages[:20]]
            with open(out_json, "w") as f:
                json.dump(results, f, indent=1)
            if prof is not None:
                prof.disable()
                prof.dump_stats(out_json + ".prof")
            viewer.close()
            return
        name, action, cond, timeout = steps[state["i"]]
        if state["t"] is None:
            state["t"] = now if state["i"] else t0
            state["cpu"] = time.thread_time() if state["i"] else 0.0
            state["gap"] = 0.0
            action()
            return
        ok = cond()
        if ok or now - state["t"] > timeout:
            r = {
                "step": name,
                "ok": ok,
                "s": round(now - state["t"], 2),
                "ui_cpu_s": round(time.thread_time() - state["cpu"], 3),
                "max_block_s": round(state["gap"], 3),
                "hwm_mb": round(mem("VmHWM")),
                "item": item(),
                "parts": {k: [round(x, 3) for x in v] for k, v in spent.items()},
            }
            spent.clear()
            main_window(viewer).grab().save(f"{shots}_{state['i']}.png")
            results["steps"].append(r)
            print(json.dumps(r), flush=True)
            state["i"] += 1
            state["t"] = None

    timer.timeout.connect(tick)
    timer.start()
    napari.run()


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def compare(store, out_dir, old, new, rounds):
    os.makedirs(out_dir, exist_ok=True)
    figures = {"old": [], "new": []}
    for r in range(rounds):
        for name, tree in (("old", old), ("new", new)):
            db = os.path.join(out_dir, f"{name}{r}.sqlite")
            shutil.copy(store, db)
            out = os.path.join(out_dir, f"{name}{r}.json")
            xdg = os.path.join(out_dir, "xdg")
            env = dict(os.environ, PYTHONPATH=f"{tree}:{tree}/plugins", XDG_CONFIG_HOME=f"{xdg}/config")
            env.update(XDG_STATE_HOME=f"{xdg}/state", XDG_CACHE_HOME=f"{xdg}/cache")
            print(f"== round {r + 1} {name} ({tree}) load {load()}", flush=True)
            subprocess.run(
                ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", sys.executable, os.path.abspath(__file__)]
                + ["--drive", db, out, os.path.join(out_dir, f"{name}{r}")],
                env=env,
                check=False,
                timeout=1800,
            )
            with open(out) as f:
                figures[name].append(json.load(f)["steps"])
    print(f"\nmedians of {rounds} rounds (old | new), load now {load()}")
    print(f"{'step':28} {'wall s':>15} {'UI CPU s':>15} {'max block s':>15} {'VmHWM MB':>13}")
    for k, step in enumerate(figures["old"][0]):
        missed = {v: sum(not run[k]["ok"] for run in figures[v]) for v in ("old", "new")}
        row = [step["step"] + ("" if not any(missed.values()) else f" (timed out: {missed['old']} | {missed['new']})")]
        for f in ("s", "ui_cpu_s", "max_block_s", "hwm_mb"):
            o = statistics.median(run[k][f] for run in figures["old"])
            n = statistics.median(run[k][f] for run in figures["new"])
            row.append(f"{o:g} | {n:g}")
        print(f"{row[0]:28} {row[1]:>15} {row[2]:>15} {row[3]:>15} {row[4]:>13}")
    print("\nthe app's parts on the UI thread, medians (old | new): wall s, CPU s, longest call s")
    for k, step in enumerate(figures["old"][0]):
        names = sorted({p for run in figures["old"] + figures["new"] for p in run[k].get("parts", {})})
        for p in names:
            cells = []
            for j in range(3):
                o = statistics.median(run[k].get("parts", {}).get(p, [0, 0, 0])[j] for run in figures["old"])
                n = statistics.median(run[k].get("parts", {}).get(p, [0, 0, 0])[j] for run in figures["new"])
                cells.append(f"{o:g} | {n:g}")
            print(f"{step['step'][:22]:22} {p:32} {cells[0]:>15} {cells[1]:>15} {cells[2]:>15}")


if __name__ == "__main__":
    if sys.argv[1] == "--drive":
        drive(*sys.argv[2:5])
    else:
        import argparse

        p = argparse.ArgumentParser()
        p.add_argument("store")
        p.add_argument("out_dir")
        p.add_argument("--old", required=True)
        p.add_argument("--new", required=True)
        p.add_argument("--rounds", type=int, default=3)
        a = p.parse_args()
        compare(a.store, a.out_dir, os.path.abspath(a.old), os.path.abspath(a.new), a.rounds)
