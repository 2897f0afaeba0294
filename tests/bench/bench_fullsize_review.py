"""Benchmark: reviewing whole-site items on a full-size scene (20 Landsat dates, 7,741 px across, a boundary), as
annotator ann does it: launch to the first item's evidence shown (the site opens with it: its boundary, the item's
region, the trajectory read), A twice (the next items), then the quality overlay on, a date step with it, the
overlay off and on again. Each step: wall time until it is shown, the UI thread's CPU time (`time.thread_time`), the
longest the UI thread was blocked meanwhile (gap between 20 ms polls), the process's VmHWM after it. Old and new code in the same run: fresh
processes alternating old/new for --rounds rounds, each on a fresh copy of the store; medians printed side by side.

  STORE: a store with bank "fs" (whole-site items) over the full-size site, assigned to ann (left27j's bank2 over
  the landsat20 site of fullsize_scenes.py, with a boundary.geojson added to its site.json).
  git archive main | tar -x -C /tmp/x-base
  .venv/bin/python tests/bench/bench_fullsize_review.py STORE OUT_DIR --old /tmp/x-base --new . [--also x=TREE] [--rounds 3]
With UISAMPLE=1 each run also samples the UI thread's stack every 2 ms and writes what it was in during each step's
longest block (OUT_JSON.blockN.txt).
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


class Sampler:
    """With UISAMPLE set: the UI thread's stack sampled every 2 ms by a thread of its own, so the longest block of a
    step can be told apart (what the UI thread was in while the 20 ms poll waited), written next to OUT_JSON."""

    def __init__(self):
        import threading

        self.samples = []  # (perf_counter, stack of "file:function" names, innermost last)
        self.main = threading.main_thread().ident
        self.stop = False
        threading.Thread(target=self._run, daemon=True, name="ui-sampler").start()

    def _run(self):
        names = {}
        while not self.stop:
            frame = sys._current_frames().get(self.main)
            stack = []
            while frame is not None:
                code = frame.f_code
                key = (code.co_filename, code.co_name, code.co_firstlineno)
                name = names.get(key)
                if name is None:
                    path = code.co_filename
                    short = path.split("site-packages/")[-1] if "site-packages/" in path else path
                    for top in ("/reviewer/", "/tests/", "/plugins/"):
                        short = top[1:] + short.split(top, 1)[1] if top in short else short
                    name = names[key] = sys.intern(f"{short}:{code.co_name}")
                stack.append(name)
                frame = frame.f_back
            self.samples.append((time.perf_counter(), tuple(reversed(stack))))
            time.sleep(0.002)

    def report(self, t0, t1, path):
        """Inclusive and own sample counts of the UI thread's functions between t0 and t1."""
        import collections

        inner, own = collections.Counter(), collections.Counter()
        n = 0
        for t, stack in self.samples:
            if t0 <= t <= t1:
                n += 1
                inner.update(set(stack))
                if stack:
                    own[stack[-1]] += 1
        with open(path, "w") as f:
            f.write(f"block {t1 - t0:.3f} s, {n} samples (2 ms)\n== inclusive\n")
            for name, c in inner.most_common(70):
                f.write(f"{c:6d} {100 * c / max(n, 1):5.1f}%  {name}\n")
            f.write("== own\n")
            for name, c in own.most_common(30):
                f.write(f"{c:6d} {100 * c / max(n, 1):5.1f}%  {name}\n")
        self.samples = [s for s in self.samples if s[0] > t1]


def drive(db, out_json, shots):
    t0 = time.perf_counter()
    prof = None
    if os.environ.get("UIPROF"):  # the UI thread's profile, written next to OUT_JSON
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    sampler = Sampler() if os.environ.get("UISAMPLE") else None
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
    state = {"i": 0, "t": None, "last": None, "gap": 0.0, "cpu": 0.0, "gap_at": (0.0, 0.0)}
    timer = QTimer()
    timer.setInterval(20)

    def tick():
        now = time.perf_counter()
        if state["last"] is not None:
            if now - state["last"] > state["gap"]:
                state["gap"], state["gap_at"] = now - state["last"], (state["last"], now)
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
            if sampler is not None:
                sampler.report(*state["gap_at"], f"{out_json}.block{state['i']}.txt")
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


def compare(store, out_dir, trees, rounds):
    """`trees`: [(name, source tree)], run in that order in each round; medians printed side by side."""
    os.makedirs(out_dir, exist_ok=True)
    figures = {name: [] for name, _tree in trees}
    names = " | ".join(figures)
    for r in range(rounds):
        for name, tree in trees:
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

    def med(name, k, get):
        return statistics.median(get(run[k]) for run in figures[name])

    first = next(iter(figures))
    print(f"\nmedians of {rounds} rounds ({names}), load now {load()}")
    print(f"{'step':28} {'wall s':>22} {'UI CPU s':>22} {'max block s':>22} {'VmHWM MB':>20}")
    for k, step in enumerate(figures[first][0]):
        missed = [sum(not run[k]["ok"] for run in figures[v]) for v in figures]
        row = [step["step"] + ("" if not any(missed) else f" (timed out: {' | '.join(map(str, missed))})")]
        for f in ("s", "ui_cpu_s", "max_block_s", "hwm_mb"):
            row.append(" | ".join(f"{med(v, k, lambda st, f=f: st[f]):g}" for v in figures))
        print(f"{row[0]:28} {row[1]:>22} {row[2]:>22} {row[3]:>22} {row[4]:>20}")
    print(f"\nthe app's parts on the UI thread, medians ({names}): wall s, CPU s, longest call s")
    for k, step in enumerate(figures[first][0]):
        parts = sorted({p for v in figures for run in figures[v] for p in run[k].get("parts", {})})
        for p in parts:
            cells = [
                " | ".join(
                    f"{med(v, k, lambda st, j=j, p=p: st.get('parts', {}).get(p, [0, 0, 0])[j]):g}" for v in figures
                )
                for j in range(3)
            ]
            print(f"{step['step'][:22]:22} {p:32} {cells[0]:>22} {cells[1]:>22} {cells[2]:>22}")


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
        p.add_argument("--also", action="append", default=[], metavar="NAME=TREE", help="a third tree (and more)")
        p.add_argument("--rounds", type=int, default=3)
        a = p.parse_args()
        trees = [("old", a.old), ("new", a.new)] + [tuple(t.split("=", 1)) for t in a.also]
        compare(a.store, a.out_dir, [(n, os.path.abspath(t)) for n, t in trees], a.rounds)
