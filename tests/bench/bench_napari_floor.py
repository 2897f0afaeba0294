"""Bare napari's floor per date step (standalone, not collected by pytest; bench_review_dock.py runs it too). Under Xvfb:

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/bench/bench_napari_floor.py [--items 16]

What napari itself costs the UI thread per step on this machine, with nothing of the reviewer: a napari Viewer at
the app's window size with one RGB image layer (a stack of dates in memory), napari's text overlay whose caption
changes on each step (or, as the app shows its date caption, the app's Qt caption label over the canvas's top-left
corner, `qt_caption.caption_over_canvas`, whose text changes on each step), and optionally one dock widget (a QLabel
whose text changes on each step). Each step sets
`viewer.dims.current_step` as the app does on an item change; the step is over at its last canvas frame on screen
(Qt's `QOpenGLWidget.frameSwapped`; napari puts 2-3 frames on screen per step), once no new frame came for SETTLE_S.
The UI thread's CPU (time.thread_time) and the wall time to that last frame, p50/p95, the CPU to the first frame and
the frames per step. Under Xvfb napari paints with software GL (llvmpipe) on the UI thread, so this is the floor under
the app's 'UI-thread CPU per item change' (llvmpipe's own rasterizer threads are not counted in it).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_viewer import pct, pump_until  # noqa: E402

WARMUP_STEPS = 4  # unmeasured: the caption font's glyphs are drawn once per process, the first paints link shaders
SETTLE_S = 0.15  # a step is over once its last canvas frame is this old
READ_PAUSE_S = 0.3  # idle between steps (the app's bench waits 1 s on each item): nothing left over from the last


@dataclass(frozen=True)
class FloorCase:
    """One bare-napari setting: the frame (rows, cols), the window (width, height), with a dock or not."""

    frame: tuple[int, int]
    window: tuple[int, int]
    dock: bool = False
    caption: bool = True  # napari's canvas text overlay changed on each step
    qt_caption: bool = False  # the app's caption label over the canvas changed on each step

    @property
    def label(self) -> str:
        dock = " + a QLabel dock" if self.dock else ""
        caption = "" if self.caption or self.qt_caption else ", caption unchanged"
        if self.qt_caption:
            caption += " + a Qt caption label"
        return f"bare napari {self.frame[1]} x {self.frame[0]} px{dock}{caption}"


def dates_stack(n: int, frame: tuple[int, int]) -> np.ndarray:
    """(n, rows, cols, 3) uint8: each date its own picture, so every step uploads a new texture."""
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(n, *frame, 3), dtype=np.uint8)


def floor_run(case: FloorCase, steps: int) -> dict[str, list[float]]:
    """`steps` measured date steps (after WARMUP_STEPS unmeasured ones): UI-thread CPU and wall (ms) per step."""
    import napari
    from qtpy.QtWidgets import QApplication, QLabel

    from reviewer.app.caption import DateCaption
    from reviewer.app.qt_caption import caption_over_canvas
    from reviewer.app.qt_window import canvas_widget, main_window

    n = WARMUP_STEPS + steps + 1
    viewer = napari.Viewer(show=True)
    qwin = main_window(viewer)
    qwin.resize(*case.window)
    layer = viewer.add_image(dates_stack(n, case.frame), rgb=True, contrast_limits=(0, 255), name="dates")
    caption = viewer.canvas.overlays.text  # the public text overlay, where the app writes its date caption
    caption.visible = not case.qt_caption
    qt_caption = DateCaption()
    if case.qt_caption:
        caption_over_canvas(viewer, qt_caption)
    label = None
    if case.dock:
        label = QLabel("item 0")
        viewer.window.add_dock_widget(label, area="right", name="item")
    viewer.dims.set_current_step(0, 0)
    frames: list[tuple[float, float]] = []  # (wall, UI-thread CPU) at each canvas frame put on screen
    canvas_widget(viewer).frameSwapped.connect(lambda: frames.append((time.perf_counter(), time.thread_time())))
    pump_until(lambda: time.sleep(0.01) or bool(frames), timeout=60)
    out: dict[str, list[float]] = {"cpu": [], "wall": [], "cpu_first": [], "frames": []}
    for i in range(1, n):
        t = time.perf_counter()
        while time.perf_counter() - t < READ_PAUSE_S:
            QApplication.processEvents()
            time.sleep(0.005)
        frames.clear()
        t0, cpu0 = time.perf_counter(), time.thread_time()
        viewer.dims.set_current_step(0, i)
        if case.caption and not case.qt_caption:
            caption.text = f"Landsat 5 TM {1984 + i}-06-{10 + i % 19:02d} ({i + 1} of {n})"
        if case.qt_caption:
            qt_caption.show_date(f"{1984 + i}-06-{10 + i % 19:02d} TM", "True colour" if i % 3 else "NDVI")
        if label is not None:
            label.setText(f"item {i}: was the forest cleared between {1983 + i} and {1984 + i}?")
        pump_until(lambda i=i: bool(frames) and int(viewer.dims.current_step[0]) == i and layer.loaded, timeout=60)
        # napari puts 2-3 frames on screen per step: wait until SETTLE_S passes with no new one
        pump_until(lambda: time.perf_counter() - frames[-1][0] > SETTLE_S, timeout=60)
        if i > WARMUP_STEPS:
            out["cpu"].append((frames[-1][1] - cpu0) * 1000)
            out["wall"].append((frames[-1][0] - t0) * 1000)
            out["cpu_first"].append((frames[0][1] - cpu0) * 1000)
            out["frames"].append(float(len(frames)))
    viewer.close()
    return out


def floor_cases(frame: tuple[int, int], window: tuple[int, int], full: int = 1600) -> list[FloorCase]:
    """The app's frame, without and with a dock (and once with the caption left as it is, to show what a caption
    costs, and once with the app's Qt caption label instead of napari's text overlay); a full-size site's frame
    (`full` px square), without and with a dock."""
    return [
        FloorCase(frame, window, caption=False),
        FloorCase(frame, window, qt_caption=True),
        FloorCase(frame, window),
        FloorCase(frame, window, dock=True),
        FloorCase((full, full), window),
        FloorCase((full, full), window, dock=True),
    ]


def floor_rows(cases: list[FloorCase], steps: int) -> list[tuple]:
    """(label, CPU p50, CPU p95, wall p50, wall p95, CPU to the first frame p50, frames per step p50) per case."""
    rows = []
    for case in cases:
        r = floor_run(case, steps)
        rows.append(
            (case.label, pct(r["cpu"], 50), pct(r["cpu"], 95), pct(r["wall"], 50), pct(r["wall"], 95))
            + (pct(r["cpu_first"], 50), pct(r["frames"], 50))
        )
    return rows


def print_floor(rows, steps: int, window: tuple[int, int], ours: list[tuple[str, list[float], list[float]]] = ()):
    """The floor table; `ours` (label, UI-thread CPU per item, wall per item): the app's rows first."""
    print(f"\nbare napari's floor per date step ({steps} steps, window {window[0]} x {window[1]}, set_current_step +")
    print("caption -> the step's last canvas frame on screen), next to the app's item change in the same run")
    print(f"{'row':48} {'CPU p50':>8} {'CPU p95':>8} {'wall p50':>9} {'wall p95':>9} {'1st frame':>9} {'frames':>6}")
    for name, cpu, wall in ours:
        print(f"{name:48} {pct(cpu, 50):8.1f} {pct(cpu, 95):8.1f} {pct(wall, 50):9.1f} {pct(wall, 95):9.1f}")
    for name, c50, c95, w50, w95, first, nframes in rows:
        print(f"{name:48} {c50:8.1f} {c95:8.1f} {w50:9.1f} {w95:9.1f} {first:9.1f} {nframes:6.0f}")
    print("CPU = the UI thread's own time.thread_time to the step's last frame (software GL paints on it under Xvfb);")
    print("1st frame = its CPU p50 to the first frame; frames = canvas frames per step, p50. Target (issue 27): the")
    print("app's whole item change (image, region, caption, docks, trajectory) UI-thread CPU p95 < 60 ms")


def main(argv: list[str] | None = None) -> int:
    from reviewer.app.main_window import WINDOW_SIZE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=16, help="measured steps per row")
    parser.add_argument("--frame", type=int, default=64, help="the app's frame on the bench site (px, square)")
    args = parser.parse_args(argv)
    window = WINDOW_SIZE
    rows = floor_rows(floor_cases((args.frame, args.frame), window), args.items)
    print_floor(rows, args.items, window)
    load = os.getloadavg()
    print(f"load average (1, 5, 15 min) at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
