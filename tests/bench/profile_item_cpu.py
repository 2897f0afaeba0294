"""Where an item change's UI-thread CPU goes (standalone, not collected by pytest). Run under Xvfb:

    xvfb-run -a -s "-screen 0 1600x1000x24" nice -n 10 .venv/bin/python tests/bench/profile_item_cpu.py \
        [--items 16] [--profile] [--top 40] [--paints] [--hide DOCK ...]

Steps through the items of bench_review_dock's demo site with N (1 s read on each, prefetch on) and prints the UI
thread's CPU per item change (time.thread_time, key -> all shown, as bench_review_dock measures it), p50/p95.
With --profile, cProfile runs on the UI thread with time.thread_time as its clock during each item change only
(so the figures are the UI thread's own CPU, apart from waiting), and prints the functions by cumulative and own
time, and the share of each part of the app (by file). The profiler's own overhead inflates every figure: compare
parts with each other, and take the per-item figure from a run without --profile. With --paints, each item's window
paints (one is the least: the item shown), what each painted and napari's status line as set (its value under the
cursor, before or after the first paint); with --hide DOCK (a dock's title, repeatable), the
same steps with that dock hidden: what it costs an item, against a run without it (alternate fresh processes).
With --two-sites, the items of bench_review_dock's bank over two sites (about half the steps change the site), and
the figures of the items that change the site (bench_review_dock's "another site") apart from the others.
With --writes, the writes to napari's evented models per item change (its EventedModel.__setattr__, each with a
round of comparisons and events; the nested ones napari makes itself counted too), by model and field and by the
app's line that caused them, and the image layer's slices (its public set_data event): which of the app's writes
churn napari's models (a profile hook on the UI thread during each item change; slower, so no CPU figure from it).
With --gc, Python's garbage collections on the UI thread during each item change (a `gc.callbacks` hook of this
process: nothing switched), per generation, and each item's CPU beside its collections' (the p95 outliers' share).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_review_dock import prepare  # noqa: E402
from bench_viewer import pct, pump_until  # noqa: E402


class ModelWrites:
    """Counts napari's EventedModel.__setattr__ calls while on (`sys.setprofile` on the UI thread: a measuring hook of
    this helper's process only): per model.field, and per the line of reviewer/ or plugins/ nearest on the stack."""

    def __init__(self) -> None:
        from napari.utils.events import EventedModel

        self.code = EventedModel.__setattr__.__code__
        self.fields: dict[str, int] = {}
        self.lines: dict[str, int] = {}

    def hook(self, frame, event, _arg) -> None:
        if event != "call" or frame.f_code is not self.code:
            return
        field = f"{type(frame.f_locals.get('self')).__name__}.{frame.f_locals.get('name')}"
        self.fields[field] = self.fields.get(field, 0) + 1
        f, where = frame.f_back, "-"
        while f is not None:
            path = f.f_code.co_filename.replace("\\", "/")
            if "/reviewer/" in path or "/plugins/" in path:
                where = f"{path.rsplit('/reviewer/', 1)[-1]}:{f.f_lineno}({f.f_code.co_name})"
                break
            f = f.f_back
        self.lines[where] = self.lines.get(where, 0) + 1

    def enable(self) -> None:
        sys.setprofile(self.hook)

    def disable(self) -> None:
        sys.setprofile(None)

    def print(self, n: int, slices: int, top: int) -> None:
        print(
            f"\nnapari EventedModel writes per item: {sum(self.fields.values()) / n:.1f}; image slices per item "
            f"(the layer's set_data events): {slices / n:.2f}"
        )
        for name, rows in (("by model.field", self.fields), ("by the app's line", self.lines)):
            print(f"  {name}:")
            for key, count in sorted(rows.items(), key=lambda kv: -kv[1])[:top]:
                print(f"    {count / n:6.1f}  {key}")


class GcTime:
    """Python's garbage collections on the UI thread while on (`gc.callbacks`: a measuring hook of this helper's
    process only, nothing switched): per item, their CPU by generation, and the objects each generation held."""

    def __init__(self) -> None:
        self.ui = threading.get_ident()
        self.on = False
        self._t0 = 0.0
        self.items: list[dict[int, list[float]]] = []  # per item: generation -> CPU (ms) of each collection

    def callback(self, phase: str, info: dict) -> None:
        if not self.on or threading.get_ident() != self.ui:
            return
        if phase == "start":
            self._t0 = time.thread_time()
        else:
            self.items[-1].setdefault(info["generation"], []).append((time.thread_time() - self._t0) * 1000)

    def start(self) -> None:
        self.items.append({})
        self.on = True

    def stop(self) -> None:
        self.on = False

    def print(self, cpu: list[float]) -> None:
        import gc

        n = len(self.items)
        print(f"\nUI thread's garbage collections per item ({n} items; objects tracked now {len(gc.get_objects())}):")
        for gen in (0, 1, 2):
            times = [t for item in self.items for t in item.get(gen, [])]
            print(
                f"  gen {gen}: {len(times) / n:5.2f} per item, {sum(times) / n:6.2f} ms per item"
                + (f", each p50 {pct(times, 50):.1f} max {max(times):.1f} ms" if times else "")
            )
        print("  per item: CPU ms (GC ms: gen0/gen1/gen2 counts)")
        for c, item in zip(cpu, self.items, strict=True):
            gc_ms = sum(sum(v) for v in item.values())
            counts = "/".join(str(len(item.get(g, []))) for g in (0, 1, 2))
            print(f"    {c:6.1f}  ({gc_ms:5.1f}: {counts})")


class WindowPaints:
    """The window paints of each item change (Qt's UpdateRequest to the main window: each paints the dirty widgets and
    composes the window, ~5 ms of UI-thread CPU even for a small one) and what each painted, by dock; the layout
    requests and resizes after the first one (a dock re-laid out after the paint that showed the item is painted
    again in a window paint of its own). An application event filter that only looks: a measuring hook of this
    helper's process only."""

    def __init__(self, window, viewer=None) -> None:
        from qtpy.QtCore import QEvent, QObject

        self.items: list[list[dict]] = []  # per item: per window paint {"cpu": ms after the key, "painted": {dock: n}}
        #: per item: napari's status line as set (the window paint it came after, its value under the cursor)
        self.statuses: list[list[tuple[int, str]]] = []
        if viewer is not None:  # (a status set after the item's first paint re-lays napari's status bar out)
            viewer.events.status.connect(self._on_status)
        self.on = False
        self.t0 = 0.0
        me, names = self, {QEvent.LayoutRequest: "layout", QEvent.Resize: "resize"}

        class Filter(QObject):
            def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
                if not me.on or not obj.isWidgetType():
                    return False
                kind, paints = event.type(), me.items[-1]
                if kind == QEvent.UpdateRequest and obj is window:
                    paints.append({"cpu": 1000 * (time.thread_time() - me.t0), "painted": {}, "after": []})
                elif kind == QEvent.Paint and paints:
                    painted = paints[-1]["painted"]
                    painted[dock_of(obj)] = painted.get(dock_of(obj), 0) + 1
                elif kind in names and paints:
                    paints[-1]["after"].append(f"{names[kind]} {dock_of(obj)} {type(obj).__name__}")
                return False

        self.filter = Filter()

    def _on_status(self, event) -> None:
        if self.on:
            value = event.value.get("coordinates", "") if isinstance(event.value, dict) else str(event.value)
            self.statuses[-1].append((len(self.items[-1]), value))

    def start(self) -> None:
        self.items.append([])
        self.statuses.append([])
        self.t0, self.on = time.thread_time(), True

    def stop(self) -> None:
        self.on = False

    def print(self, cpu: list[float]) -> None:
        print("\nwindow paints per item (Qt's UpdateRequest to the main window), what each painted (widgets by dock)")
        for k, paints in enumerate(self.items):
            print(f"  item {k:2d}: {cpu[k]:5.0f} ms CPU, {len(paints)} window paint(s)")
            for after, value in self.statuses[k]:
                print(
                    f"      napari's status {'before the first paint' if not after else f'after paint {after}'}: {value}"
                )
            for i, p in enumerate(paints):
                docks = ", ".join(f"{d} {n}" for d, n in sorted(p["painted"].items(), key=lambda kv: -kv[1]))
                print(f"      at {p['cpu']:5.1f} ms: {docks}")
                if i + 1 < len(paints) and p["after"]:  # what was laid out before the next window paint
                    print(f"        then: {'; '.join(sorted(set(p['after'])))}")


def dock_of(obj) -> str:
    from qtpy.QtWidgets import QDockWidget, QWidget

    w = obj if isinstance(obj, QWidget) else None
    while w is not None and not isinstance(w, QDockWidget):
        w = w.parentWidget()
    return w.windowTitle() if w is not None else "-"


def run(
    n: int,
    profiler: cProfile.Profile | ModelWrites | None,
    hide: list[str],
    paints: bool = False,
    two_sites: bool = False,
    slices: list[int] | None = None,
    collections: GcTime | None = None,
    other_site: list[bool] | None = None,
    profiles: list[cProfile.Profile] | None = None,
) -> list[float]:
    import napari
    from bench_review_dock import ROOT
    from qtpy.QtWidgets import QApplication

    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    viewer = napari.Viewer(show=True)
    app = ReviewerApp(viewer, db=prepare(two_sites), recent=RecentSites(ROOT / "recent.json"), scoring=False)
    app.start_review("ann", "annotator", prefetch=True)
    loader = app.review.loader
    pump_until(lambda: loader.shown(trajectory=True), timeout=300)
    window = None
    if paints:
        from reviewer.app.qt_window import main_window

        window = WindowPaints(main_window(viewer), viewer)
        QApplication.instance().installEventFilter(window.filter)
    if hide:  # what a dock costs an item: the same steps with it hidden (its widgets neither laid out nor painted)
        from qtpy.QtWidgets import QDockWidget

        from reviewer.app.qt_window import main_window

        docks = {d.windowTitle(): d for d in main_window(viewer).findChildren(QDockWidget)}
        for name in hide:
            docks[name].hide()
        print("docks:", ", ".join(f"{t}{' (hidden)' if t in hide else ''}" for t in docks))
    if slices is not None:  # the image layer's slices (napari's public set_data event), while an item changes
        measuring = [False]
        app.session.image_layer.events.set_data.connect(lambda _e: slices.append(1) if measuring[0] else None)
    cpu: list[float] = []
    for _ in range(n):
        t_read = time.perf_counter()
        while time.perf_counter() - t_read < 1.0:
            QApplication.processEvents()
            time.sleep(0.005)
        cpu0 = time.thread_time()
        if slices is not None:
            measuring[0] = True
        if profiles is not None:  # one profile per item (kept apart: another site's items from the others)
            profiler = cProfile.Profile(time.thread_time)
            profiles.append(profiler)
        if profiler is not None:
            profiler.enable()
        if window is not None:
            window.start()
        if collections is not None:
            collections.start()
        index = app.session.index
        app.review.key("N")
        pump_until(lambda: loader.shown(trajectory=False), timeout=120)
        QApplication.processEvents()
        pump_until(lambda: loader.shown(trajectory=True), timeout=120)
        QApplication.processEvents()
        if profiler is not None:
            profiler.disable()
        if slices is not None:
            measuring[0] = False
        if window is not None:
            window.stop()
        if collections is not None:
            collections.stop()
        cpu.append((time.thread_time() - cpu0) * 1000)
        if other_site is not None:  # the item is on another site than the one before (its site shown anew)
            other_site.append(app.session.index is not index)
    if window is not None:
        window.print(cpu)
    app.close()
    viewer.close()
    return cpu


def part_of(filename: str) -> str:
    """The part of the app (or library) a function's file belongs to."""
    path = filename.replace("\\", "/")
    if "/reviewer/" in path:
        return "reviewer/" + path.split("/reviewer/", 1)[1]
    for lib in ("napari", "vispy", "pyqtgraph", "qtpy", "superqt", "psygnal", "numpy", "PySide6", "OpenGL"):
        if f"/{lib}/" in path:
            return lib
    return "other" if path.startswith("/") else path  # '~' = built-ins (Qt's C++ calls show here)


def print_parts(stats: pstats.Stats, n: int, top: int) -> None:
    """Own (tottime) CPU per item by part, and the biggest functions by cumulative CPU per item."""
    own: dict[str, float] = {}
    for (file, _line, _name), (_cc, _nc, tt, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        own[part_of(file)] = own.get(part_of(file), 0.0) + tt
    total = sum(own.values())
    print(f"\nown CPU per item by file (profiled; total {1000 * total / n:.1f} ms/item)")
    for name, t in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {1000 * t / n:7.2f} ms  {100 * t / total:5.1f}%  {name}")
    rows = []
    for (file, line, name), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((ct, tt, nc, f"{part_of(file)}:{line}({name})"))
    print("\ncumulative CPU per item (ms), own (ms), calls per item, function")
    for ct, tt, nc, where in sorted(rows, reverse=True)[:top]:
        print(f"  {1000 * ct / n:7.2f} {1000 * tt / n:7.2f} {nc / n:7.1f}  {where}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--hide", action="append", default=[], help="a dock to hide (its title), to see its share")
    parser.add_argument("--paints", action="store_true", help="the window paints of each item and what they painted")
    parser.add_argument("--writes", action="store_true", help="napari's model writes per item, by field and app line")
    parser.add_argument("--gc", action="store_true", help="the UI thread's garbage collections per item")
    parser.add_argument("--dump", type=Path, help="write the profiles (pstats) as well: PATH.all_items.pstats, ...")
    parser.add_argument(
        "--two-sites", action="store_true", help="the bank over two sites (about half the steps go to the other site)"
    )
    args = parser.parse_args(argv)
    writes = ModelWrites() if args.writes else None
    profiler = writes
    profiles: list[cProfile.Profile] | None = [] if args.profile else None
    slices: list[int] = []
    collections = GcTime() if args.gc else None
    if collections is not None:
        import gc

        gc.callbacks.append(collections.callback)
    other_site: list[bool] = []
    cpu = run(args.items, profiler, args.hide, args.paints, args.two_sites, slices, collections, other_site, profiles)
    later = cpu[len(cpu) // 2 :]
    print(
        f"UI-thread CPU per item (ms): p50 {pct(cpu, 50):.1f} p95 {pct(cpu, 95):.1f}; "
        f"later half p50 {pct(later, 50):.1f} p95 {pct(later, 95):.1f}; all: {' '.join(f'{c:.0f}' for c in cpu)}"
    )
    if args.two_sites:  # bench_review_dock's "another site" figures are of the items that change the site
        for name, keep in (("another site", True), ("same site", False)):
            part = [c for c, o in zip(cpu, other_site, strict=True) if o is keep]
            if part:
                print(
                    f"  {name} ({len(part)} items): p50 {pct(part, 50):.1f} p95 {pct(part, 95):.1f}; "
                    f"all: {' '.join(f'{c:.0f}' for c in part)}"
                )
    if collections is not None:
        collections.print(cpu)
    if writes is not None:
        writes.print(args.items, len(slices), args.top)
    elif profiles:
        groups = [("all items", [True] * len(profiles))]
        if args.two_sites:  # another site's items apart from the same site's
            groups += [("another site", other_site), ("same site", [not o for o in other_site])]
        for name, keep in groups:
            chosen = [p for p, k in zip(profiles, keep, strict=True) if k]
            if not chosen:
                continue
            stats = pstats.Stats(chosen[0])
            for p in chosen[1:]:
                stats.add(p)
            if args.dump:
                stats.dump_stats(str(args.dump.with_suffix(f".{name.replace(' ', '_')}.pstats")))
            print(f"\n===== profile: {name} ({len(chosen)} items)")
            print_parts(stats, len(chosen), args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
