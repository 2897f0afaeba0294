"""Where the UI thread's CPU of an item change goes (a helper of bench_review_dock.py --parts; not collected by pytest).

Each part is one of the app's own calls (or vispy's public `SceneCanvas.draw_visual`, the canvas draw), timed with
time.thread_time on the UI thread by a measuring wrapper installed in this benchmark's process only (as
`count_links` counts vispy's links). Times are inclusive: a part holds the parts indented under it. What no part
holds (Qt's layout, the window's paints of the docks and their composition on screen, napari's own handlers
between turns) is the rest of the item's UI-thread CPU.
"""

from __future__ import annotations

import functools
import importlib
import threading
import time

import numpy as np

#: (module, class, method, label), in the order an item change calls them; indentation = inside the part above
PARTS = (
    ("reviewer.app.qt_review", "ReviewDock", "key", "the key's turn (all of it)"),
    ("reviewer.app.review_evidence", "EvidenceLoader", "_apply", "  the apply: the item's evidence set"),
    ("reviewer.app.session", "StackSession", "show_index", "    another site: show_index (holds the stack)"),
    ("reviewer.app.session_layers", "CanvasLayers", "draw_boundary", "      its boundary (Labels layer)"),
    ("reviewer.app.recent", "RecentSites", "add", "      its line in the recent sites file"),
    ("reviewer.app.session", "StackSession", "announce", "    another site: the docks take it"),
    ("reviewer.app.qt_controls", "QtStackControls", "_on_site_opened", "      the Stack dock"),
    ("reviewer.app.qt_trajectory", "QtTrajectoryPlot", "_on_site_opened", "      the Trajectory dock"),
    ("reviewer.app.qt_coverage", "QtCoveragePlot", "_on_site_opened", "      the Coverage dock"),
    ("reviewer.app.session", "StackSession", "show_stack", "    the stack at the item's date"),
    ("reviewer.app.session_layers", "CanvasLayers", "show_image", "      the image layer's data"),
    ("reviewer.app.session_layers", "CanvasLayers", "scale_image", "        napari's scale setters (another grid)"),
    ("reviewer.app.session_dates", "ShownDate", "show_caption", "      the caption's text"),
    ("reviewer.app.session_layers", "CanvasLayers", "show_item_region", "    the region (Labels layer)"),
    ("reviewer.app.qt_controls", "QtStackControls", "show_stack", "    Stack dock"),
    ("reviewer.app.qt_pair", "QtPairView", "show_panels", "    Pair"),
    ("reviewer.app.qt_chips", "QtChipStrip", "show_chips", "    Chips"),
    ("reviewer.app.review_series", "ItemSeries", "show", "    Trajectory"),
    ("reviewer.app.review_evidence", "EvidenceLoader", "prefetch", "the prefetch plan (and its cancel in the key)"),
    ("vispy.scene", "SceneCanvas", "draw_visual", "the canvas draw (vispy, each frame)"),
)


class PartTimes:
    """UI-thread CPU (ms) per part since the last `take`."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self._installed = False

    def install(self) -> None:
        if self._installed:
            return
        self._installed = True
        main = threading.main_thread()
        for module, cls_name, method, label in PARTS:
            cls = getattr(importlib.import_module(module), cls_name)
            original = getattr(cls, method)

            def timed(*args, __f=original, __label=label, **kwargs):
                if threading.current_thread() is not main:
                    return __f(*args, **kwargs)
                t0 = time.thread_time()
                try:
                    return __f(*args, **kwargs)
                finally:
                    self.spent[__label] = self.spent.get(__label, 0.0) + (time.thread_time() - t0) * 1000

            setattr(cls, method, functools.wraps(original)(timed))

    def take(self) -> dict[str, float]:
        out, self.spent = self.spent, {}
        return out


def print_parts(title: str, per_item: list[dict[str, float]], cpu: list[float], frames: list[int]) -> None:
    """Mean and p95 per part over the items (a part an item did not call counts 0 for it), next to the whole."""
    print(f"\n{title}: where the UI thread's CPU of an item change goes (ms per item, {len(cpu)} items)")
    print(f"{'part':44} {'mean':>7} {'p50':>7} {'p95':>7}")
    print(
        f"{'the whole item change (key -> all shown)':44} {np.mean(cpu):7.1f} {np.percentile(cpu, 50):7.1f} "
        f"{np.percentile(cpu, 95):7.1f}"
    )
    for _m, _c, _f, label in PARTS:
        v = [p.get(label, 0.0) for p in per_item]
        print(f"{label:44} {np.mean(v):7.1f} {np.percentile(v, 50):7.1f} {np.percentile(v, 95):7.1f}")
    top = [p.get(PARTS[0][3], 0.0) + p.get(PARTS[-2][3], 0.0) + p.get(PARTS[-1][3], 0.0) for p in per_item]
    rest = [c - t for c, t in zip(cpu, top, strict=True)]
    print(
        f"{'the rest (Qt layout, dock paints, composition)':44} {np.mean(rest):7.1f} {np.percentile(rest, 50):7.1f} "
        f"{np.percentile(rest, 95):7.1f}"
    )
    print(f"canvas frames per item: mean {np.mean(frames):.1f}, max {max(frames)}")
