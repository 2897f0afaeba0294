"""Benchmark: launch to the first imagery, `python main.py --demo` against bare napari opening one 512 x 512 image.

Run (under a display or Xvfb): .venv/bin/python tests/bench/bench_launch.py [--runs 5] [--compare CHECKOUT]

Both sides are fresh processes started the same way, alternating (so a busy machine weighs on both alike), with
the same detector: the child wraps `napari.Viewer` so that each viewer connects to its canvas's draw event, and the
first draw after which an image layer is visible (opacity > 0), sliced (`layer.loaded`) and at least 64 x 64
pixels prints the wall clock and the process's CPU time so far (all its threads); the parent subtracts the time it
started the child. The app's side then also waits for its Trajectory plot to be shown (built after the first
imagery, with the scale bar; the date caption comes with the imagery) and prints that stage too. (The app's unseen
16 x 16 placeholder does not count; the demo's stack does.) The wrapper is bench code: it reads napari's canvas through
`viewer.window._qt_viewer`, which reviewer/ and plugins/ may not.

The demo site is generated once before timing into a temporary cache (REVIEWER_DEMO_DIR), as `make demo` leaves it;
XDG folders point into the same temporary folder, so the store is fresh and nobody is asked who is working.
Bytecode is cached as an installed package has it (PYTHONPYCACHEPREFIX in the temporary folder, one warm-up run
of each side first). Prints the medians, the ratio and the target (within 1.3x of bare napari, issue 27).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET_RATIO = 1.3
MIN_SIDE = 64  # pixels: larger than the app's placeholder (16 x 16), smaller than any real image

#: run in the child before the program: wrap napari.Viewer so each viewer reports its first painted imagery
HOOK = r"""
import os, sys, time
import napari
from napari.layers import Image

_Viewer = napari.Viewer

def _big(layer):
    shape = layer.data.shape[-3:-1] if layer.rgb else layer.data.shape[-2:]
    return min(shape) >= MIN_SIDE

def _cpu():
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def _settled(viewer):
    # the app's Trajectory plot (a pyqtgraph PlotWidget) shown: what it builds after the first imagery is in
    from qtpy.QtCore import QTimer
    qwin, start = viewer.window._qt_window, time.monotonic()
    def poll():
        if "pyqtgraph" in sys.modules:
            import pyqtgraph as pg
            if any(p.isVisible() for p in qwin.findChildren(pg.PlotWidget)):
                print("SETTLED", time.time(), _cpu(), flush=True)
                os._exit(0)
        if time.monotonic() - start > 30:
            os._exit(0)
        QTimer.singleShot(20, poll)
    QTimer.singleShot(0, poll)

def _watch(viewer):
    print("VIEWER", time.time(), flush=True)
    canvas = viewer.window._qt_viewer.canvas._scene_canvas
    done = []
    def on_draw(event):
        for layer in viewer.layers:
            if isinstance(layer, Image) and layer.visible and layer.opacity > 0 and layer.loaded and _big(layer):
                if done:
                    return
                done.append(True)
                print("PAINTED", time.time(), _cpu(), flush=True)
                if not SETTLE:
                    os._exit(0)
                _settled(viewer)
                return
    canvas.events.draw.connect(on_draw)

class TimedViewer(_Viewer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _watch(self)

napari.Viewer = TimedViewer
"""

APP = "sys.argv = ['main.py', '--demo']; sys.path.insert(0, ROOT); import main; sys.exit(main.main(['--demo']))"

BARE = """
import numpy as np
viewer = napari.Viewer()
viewer.add_image(np.random.default_rng(0).integers(0, 255, (512, 512), dtype=np.uint8))
napari.run()
"""


def child_code(side: str, root: Path) -> str:
    body = BARE if side == "bare" else APP
    return f"MIN_SIDE = {MIN_SIDE}\nROOT = {str(root)!r}\nSETTLE = {side != 'bare'}\n{HOOK}\n{body}\n"


def side_env(base: dict[str, str], root: Path, tmp: Path) -> dict[str, str]:
    """The child's environment: XDG folders and bytecode in `tmp`, the checkout `root` first on the path."""
    env = dict(base)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        env[name] = str(tmp / name.lower())
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("REVIEWER_USER", None)
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "plugins"), base.get("PYTHONPATH", "")])
    return env


def launch_once(
    side: str, env: dict[str, str], timeout: float, root: Path = ROOT
) -> tuple[float, float, float, float, float]:
    """(seconds to the viewer, seconds to the first painted imagery, CPU seconds the process used until then, and
    for the app the seconds and CPU seconds until its Trajectory plot is shown (built after the first imagery), else
    the imagery's) of one fresh process. CPU time is what the launch cost the machine, less sensitive to other load
    than the wall time."""
    code = child_code(side, root)
    t0 = time.time()
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, timeout=timeout
    )
    marks = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines() if line.split()[:1] in (["VIEWER"], ["PAINTED"], ["SETTLED"])}  # fmt: skip
    if "PAINTED" not in marks:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise SystemExit(f"error: {side} launch never painted imagery (exit {proc.returncode}):\n{tail}")
    painted, cpu = float(marks["PAINTED"][0]) - t0, float(marks["PAINTED"][1])
    settled = marks.get("SETTLED", marks["PAINTED"])
    return float(marks["VIEWER"][0]) - t0, painted, cpu, float(settled[0]) - t0, float(settled[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="timed launches of each side (default 5)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds before a launch counts as hung")
    ap.add_argument(
        "--compare", metavar="CHECKOUT", help="also launch another checkout's main.py --demo (e.g. the code before)"
    )
    args = ap.parse_args(argv)
    roots = {"bare": ROOT, "app": ROOT}
    if args.compare:
        roots["compare"] = Path(args.compare).resolve()
    with tempfile.TemporaryDirectory(prefix="bench-launch-") as tmp:
        envs = {side: side_env(dict(os.environ), root, Path(tmp) / side) for side, root in roots.items()}
        for side, env in envs.items():
            env["REVIEWER_DEMO_DIR"] = str(Path(tmp) / side / "demo-site")
            if side != "bare":  # the demo site as `make demo` leaves it, by that checkout's generator
                gen = "from reviewer.record.demo import ensure_demo_site; ensure_demo_site()"
                subprocess.run([sys.executable, "-c", gen], env=env, cwd=roots[side], check=True)
        for side in roots:  # warm-up: bytecode written, the demo's first store made
            launch_once(side, envs[side], args.timeout, roots[side])
        times: dict[str, list[tuple[float, float, float]]] = {side: [] for side in roots}
        for i in range(args.runs):
            for side in list(roots) if i % 2 == 0 else list(roots)[::-1]:
                times[side].append(launch_once(side, envs[side], args.timeout, roots[side]))
                print(
                    f"  run {i + 1} {side}: viewer {times[side][-1][0]:.2f} s, imagery {times[side][-1][1]:.2f} s, "
                    f"CPU {times[side][-1][2]:.2f} s, plot {times[side][-1][3]:.2f} s",
                    flush=True,
                )
    med = {s: [statistics.median(t[k] for t in v) for k in range(5)] for s, v in times.items()}
    ratio = med["app"][1] / med["bare"][1]
    cpu_ratio = med["app"][2] / med["bare"][2]
    print(
        f"launch to first imagery, median of {args.runs} fresh processes each (load average {os.getloadavg()[0]:.1f}):"
    )
    names = {"bare": "bare napari, one 512 x 512 image", "app": "python main.py --demo"}
    names["compare"] = f"main.py --demo of {args.compare}"
    for side in roots:
        v, w, c, _, _ = med[side]
        name = names[side]
        print(f"  {name:34s} {w:6.2f} s wall (viewer made at {v:.2f} s), {c:6.2f} s CPU")
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(f"  wall ratio {ratio:.2f}x (target <= {TARGET_RATIO}x: {verdict}); CPU ratio {cpu_ratio:.2f}x")
    if "compare" in med:
        print(
            f"  {args.compare}: wall ratio {med['compare'][1] / med['bare'][1]:.2f}x, "
            f"CPU ratio {med['compare'][2] / med['bare'][2]:.2f}x"
        )
    print("then the app's Trajectory plot shown (what the launch builds after the first imagery):")
    for side in [s for s in roots if s != "bare"]:
        print(f"  {names[side]:34s} {med[side][3]:6.2f} s wall, {med[side][4]:6.2f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
