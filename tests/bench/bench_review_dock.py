"""Review dock benchmark (standalone, not collected by pytest). Run under Xvfb:

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/bench/bench_review_dock.py [--items 30]

On the GUI demo site (900 scenes: Landsat, Sentinel-2, MODIS, VIIRS; 64 x 64 px) and its generated bank
(seed 5), both made once into /tmp/bench/review:
- the UI thread's own CPU time per item change (time.thread_time from the key to all shown: what the item costs
  the UI thread, apart from waiting on workers and paints), p50/p95;
- next item on the same site: key press (N) -> the item's evidence shown and painted (canvas, pair, chips,
  and trajectory; also without the trajectory, which for MODIS items reads ~800 scenes), p50/p95, with
  prefetch of the next item's evidence, against the same steps without prefetch in the same run (the
  baseline), the longest UI block while it comes up, and what one repaint of the whole unchanged window costs
  on this machine (Xvfb, software OpenGL: the floor under any 'shown'), measured before each item, and each
  item's 'all shown' less that repaint; the canvas's frames and the shader programs linked per item (each link
  compiles on the UI thread under software GL);
- bare napari's floor per date step in the same run (bench_napari_floor.py): a Viewer at the app's window size, one
  RGB image layer of the app's frame size (and of a 1,600 px full-size frame), the text overlay's caption changed
  each step (or the app's Qt caption label over the canvas instead, as the app shows it), with and without one QLabel dock: UI-thread CPU and wall p50/p95, printed next to the app's item change;
- 200 decisions with the keyboard (A accept, Backspace undo, alternating): latency per key, the first 20
  against the last 20 (growth), and the process's resident memory before and after.

`--parts`: only where an item change's UI-thread CPU goes, part by part (bench_item_parts.py), on the same site and
on items of another site, with prefetch (as the app runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_item_parts import PartTimes, print_parts  # noqa: E402
from bench_napari_floor import floor_cases, floor_rows, print_floor  # noqa: E402
from bench_viewer import Heartbeat, pct, pump_until  # noqa: E402

ROOT = Path(os.environ.get("BENCH_ROOT", "/tmp/bench/review"))  # (one per engineer on a shared machine)
BANK = "demo-core-seed0-generated"


def prepare(two_sites: bool = False) -> Path:
    """The site, its scanned index and the generated bank (once), and a fresh store with ann's queue. With
    `two_sites`, a second small site (seed 1, no MODIS) and a bank of both sites' questions (TWO_BANK)."""
    from reviewer.bank.generate import generate
    from reviewer.bank.options import GenerationOptions
    from reviewer.record.scan import open_index
    from reviewer.review import api
    from reviewer.review.banks import import_bank
    from reviewer.store import Store
    from tests.sites import make_site

    site, base, bank = ROOT / "site", ROOT / "index.sqlite", ROOT / "bank"
    if not (site / "truth.json").is_file():
        print("generating the GUI demo site (once) ...", flush=True)
        make_site(site, "gui")
    if not base.is_file():
        with Store(base) as store:
            open_index(site, store)
    if not (bank / "manifest.json").is_file():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            generate(site, bank, GenerationOptions(seed=5))
    if two_sites:
        bank = two_site_bank(bank)
    db = ROOT / ("run2.sqlite" if two_sites else "run.sqlite")
    for p in ROOT.glob(db.name + "*"):
        p.unlink()
    shutil.copy(base, db)
    with Store(db) as store:
        if two_sites:
            open_index(ROOT / "site2", store)
        api.add_user(store, "mia", "maintainer")
        for name in ("ann", "bob"):
            api.add_user(store, name, "annotator", by="mia")
        import_bank(store, bank, user="mia")
        api.assign(store, TWO_BANK if two_sites else BANK, annotators=["ann", "bob"], k=2, seed=11, user="mia")
    return db


TWO_BANK = "bench-two-sites"


def two_site_bank(bank: Path) -> Path:
    """A second demo site (another seed: another id and landscape; 2006-2016 without MODIS, so it is small)
    and its generated bank, merged with the first bank into one (once)."""
    from reviewer.bank.generate import generate
    from reviewer.bank.io import BankContent, load_bank, write_bank
    from reviewer.bank.options import GenerationOptions
    from tests.sites import make_site

    site2, bank2, both = ROOT / "site2", ROOT / "bank2", ROOT / "bank-two-sites"
    if not (site2 / "truth.json").is_file():
        print("generating a second demo site (once) ...", flush=True)
        make_site(site2, "gui", seed=1, start=2006, modis=False)
    if not (bank2 / "manifest.json").is_file():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            generate(site2, bank2, GenerationOptions(seed=5))
    if not (both / "manifest.json").is_file():
        a, b = load_bank(bank), load_bank(bank2)
        write_bank(
            both, BankContent(TWO_BANK, "1", [*a.questions, *b.questions], [*a.sites, *b.sites], created=CREATED)
        )
    return both


CREATED = "2026-12-01T12:00:00Z"


def site_of(app) -> str | None:
    view = app.review.annotator.view
    return view["question"].get("site") if view else None


def next_item_run(db: Path, n: int, prefetch: bool, parts: PartTimes | None = None) -> dict[str, list]:
    """Step through n items with N; ms from the key press to the evidence shown and painted (canvas, pair,
    chips), to the trajectory drawn too, the longest UI block meanwhile, and one window repaint (the floor);
    with `parts`, each item's UI-thread CPU per part too."""
    import napari
    from qtpy.QtWidgets import QApplication

    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    viewer = napari.Viewer(show=True)
    app = ReviewerApp(viewer, db=db, recent=RecentSites(ROOT / "recent.json"), scoring=False)
    app.start_review("ann", "annotator", prefetch=prefetch)
    loader = app.review.loader
    pump_until(lambda: loader.shown(trajectory=True), timeout=300)
    out: dict[str, list[float]] = {"shown": [], "trajectory": [], "block": [], "repaint": []}
    from reviewer.app.qt_window import canvas_widget, main_window

    qwin = main_window(viewer)
    frames: list[int] = []  # the canvas's frames put on screen (Qt's QOpenGLWidget.frameSwapped)
    canvas_widget(viewer).frameSwapped.connect(lambda: frames.append(1))
    for _ in range(n):
        t_read = time.perf_counter()
        while time.perf_counter() - t_read < 1.0:  # the annotator reads the item: prefetch has time to work
            QApplication.processEvents()
            time.sleep(0.005)
        t0 = time.perf_counter()
        qwin.repaint()  # what one paint of the whole window costs on this machine: the floor of 'shown'
        out["repaint"].append((time.perf_counter() - t0) * 1000)
        hb = Heartbeat()
        hb.start()
        before = site_of(app)
        t0, cpu0 = time.perf_counter(), time.thread_time()
        frames.clear()
        links.clear()
        if parts is not None:
            parts.take()
        item_before = loader.key
        app.review.key("N")
        pump_until(lambda: loader.shown(trajectory=False), timeout=120)
        QApplication.processEvents()  # ... and painted
        shown = (time.perf_counter() - t0) * 1000
        pump_until(lambda: loader.shown(trajectory=True), timeout=120)
        QApplication.processEvents()
        if loader.key == item_before:  # the end of ann's queue: N moves no further (not an item change)
            hb.stop()
            break
        out.setdefault("other_site", []).append(float(site_of(app) != before))
        out["shown"].append(shown)
        out["trajectory"].append((time.perf_counter() - t0) * 1000)
        out.setdefault("cpu", []).append((time.thread_time() - cpu0) * 1000)  # the UI thread's own CPU
        out.setdefault("frames", []).append(len(frames))
        out.setdefault("links", []).append(len(links))
        out["block"].append(hb.stop())
        if parts is not None:
            out.setdefault("parts", []).append(parts.take())
        stack = app.session.stack
        out.setdefault("item", []).append((loader.key, loader.view.index, len(stack) if stack is not None else 0))
    out["window"] = [float(qwin.width()), float(qwin.height())]  # for bare napari's floor at the same size
    out["frame"] = [float(x) for x in app.session.image_layer.data.shape[:2]]  # (the shown date: row, col, RGB)
    app.close()
    viewer.close()
    return out


links: list[str] = []  # the shader programs vispy linked on the UI thread, by class (counted once `main` starts)


def count_links() -> None:
    """Count the shader programs vispy links on the UI thread into `links` (a measuring hook on
    `vispy.gloo.Program.set_shaders` for this benchmark's process only): under software GL (llvmpipe) each link
    compiles the program on the UI thread at its next draw, ~10 ms of its CPU with vispy's own shader build."""
    import threading

    from vispy.gloo import Program

    set_shaders = Program.set_shaders

    def counted(self, *args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            links.append(type(self).__name__)
        return set_shaders(self, *args, **kwargs)

    Program.set_shaders = counted


def resident_mib() -> float:
    """The process's resident memory now, after a collection (the peak, ru_maxrss, also keeps one-off highs)."""
    import gc

    import psutil

    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


def decisions_run(db: Path, n: int) -> tuple[list[float], float, float, list[float]]:
    """n keyboard decisions (A, Backspace alternating): ms per key (until the next turn of the event loop), the peak
    resident memory before and after, and the resident memory now at every quarter of the run."""
    import napari
    from qtpy.QtWidgets import QApplication

    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    viewer = napari.Viewer(show=True)
    app = ReviewerApp(viewer, db=db, recent=RecentSites(ROOT / "recent.json"), scoring=False)
    app.start_review("ann", "annotator")
    pump_until(lambda: app.review.loader.shown(trajectory=False), timeout=300)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lat, resident = [], [resident_mib()]
    for k in range(n):
        t0 = time.perf_counter()
        assert app.review.key("A" if k % 2 == 0 else "Backspace"), app.review.annotator.saved.text()
        QApplication.processEvents()
        lat.append((time.perf_counter() - t0) * 1000)
        if (k + 1) % max(1, n // 4) == 0:
            resident.append(resident_mib())
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    app.close()
    viewer.close()
    return lat, rss0, rss1, resident


def above_floor(run: dict[str, list[float]]) -> list[float]:
    """Each item's 'all shown' less the repaint of the unchanged window measured just before it (the floor)."""
    return [t - r for t, r in zip(run["trajectory"], run["repaint"], strict=True)]


def later(values: list[float]) -> list[float]:
    """The later half of a run's items: the first items of a fresh process pay once-per-process costs (shaders linked
    at their first draw; napari's canvas caption, before it became a Qt label, drew each glyph of its font once)."""
    return values[len(values) // 2 :]


def same_steps(*runs: dict[str, list]) -> None:
    """The runs cut to the item changes all of them made (a queue's end can come before --items; the repaint is
    measured before a key that then moved nowhere)."""
    n = min(len(run["item"]) for run in runs)
    for run in runs:
        for name, values in run.items():
            if name not in ("window", "frame"):
                del values[n:]


def print_items(title: str, ours: dict[str, list], base: dict[str, list]) -> None:
    """Each step's item (its index and stack length: a MODIS record's series is the long one) and its times."""
    print(
        f"\n{title}, per item: key -> shown / all shown (ms), UI-thread CPU (ms), programs linked; prefetch vs baseline"
    )
    for k, (item, index, n) in enumerate(ours["item"]):
        other = "other site" if ours["other_site"][k] else ""
        print(
            f"  {k:2d} {item[-28:]:28} {str(index):6} {n:4d} scenes {other:10} "
            f"{ours['shown'][k]:7.0f} / {ours['trajectory'][k]:7.0f} cpu {ours['cpu'][k]:5.0f} links {ours['links'][k]}"
            f"   base {base['shown'][k]:7.0f} / {base['trajectory'][k]:7.0f} cpu {base['cpu'][k]:5.0f}"
        )


def print_decisions(n: int, lat: list[float], rss0: float, rss1: float, resident: list[float]) -> None:
    first, last = lat[:20], lat[-20:]
    print(f"\n{n} keyboard decisions (A / Backspace alternating), ms per key:")
    print(f"{'figure':36} {'last 20':>10} {'first 20':>10} {'ratio':>7}")
    for name, q in (("p50", 50), ("p95", 95)):
        a, b = pct(last, q), pct(first, q)
        print(f"{'decision latency ' + name:36} {a:10.1f} {b:10.1f} {a / b:7.2f}")
    print(f"{'peak RSS (MiB), after vs before':36} {rss1:10.0f} {rss0:10.0f} {rss1 / rss0:7.2f}")
    marks = " / ".join(f"{r:.0f}" for r in resident)
    print(f"resident memory after a collection (MiB) at 0, 1/4, 1/2, 3/4 and all of the decisions: {marks}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--decisions", type=int, default=200)
    parser.add_argument("--decisions-only", action="store_true", help="only the run of keyboard decisions")
    parser.add_argument("--parts", action="store_true", help="only where an item change's UI-thread CPU goes")
    args = parser.parse_args(argv)
    ROOT.mkdir(parents=True, exist_ok=True)
    count_links()
    if args.parts:
        parts_run(args.items)
        return 0
    if args.decisions_only:
        print_decisions(args.decisions, *decisions_run(prepare(), args.decisions))
        return 0
    load0, steal0 = os.getloadavg(), cpu_steal()
    with_pf = next_item_run(prepare(), args.items, prefetch=True)
    without = next_item_run(prepare(), args.items, prefetch=False)
    same_steps(with_pf, without)
    window = (int(with_pf["window"][0]), int(with_pf["window"][1]))
    frame = (int(with_pf["frame"][0]), int(with_pf["frame"][1]))
    floor = floor_rows(floor_cases(frame, window), args.items)  # bare napari, in the same run
    two_pf = next_item_run(prepare(two_sites=True), args.items, prefetch=True)
    two_base = next_item_run(prepare(two_sites=True), args.items, prefetch=False)
    same_steps(two_pf, two_base)
    decisions = decisions_run(prepare(), args.decisions)
    rows = [
        ("next item, key -> all shown p50 (ms)", pct(with_pf["trajectory"], 50), pct(without["trajectory"], 50)),
        ("next item, key -> all shown p95 (ms)", pct(with_pf["trajectory"], 95), pct(without["trajectory"], 95)),
        ("  canvas, pair, chips p50 (ms)", pct(with_pf["shown"], 50), pct(without["shown"], 50)),
        ("  canvas, pair, chips p95 (ms)", pct(with_pf["shown"], 95), pct(without["shown"], 95)),
        ("next item, UI-thread CPU p50 (ms)", pct(with_pf["cpu"], 50), pct(without["cpu"], 50)),
        ("next item, UI-thread CPU p95 (ms)", pct(with_pf["cpu"], 95), pct(without["cpu"], 95)),
        ("  p95 of the later half of the items (ms)", pct(later(with_pf["cpu"]), 95), pct(later(without["cpu"]), 95)),
        ("next item, longest UI block (ms)", max(with_pf["block"]), max(without["block"])),
        ("canvas frames per item, max", max(with_pf["frames"]), max(without["frames"])),
        ("shader programs linked per item, p50", pct(with_pf["links"], 50), pct(without["links"], 50)),
        ("shader programs linked per item, max", max(with_pf["links"]), max(without["links"])),
        ("one window repaint, p50 (ms)", pct(with_pf["repaint"], 50), pct(without["repaint"], 50)),
        ("one window repaint, p95 (ms)", pct(with_pf["repaint"], 95), pct(without["repaint"], 95)),
        ("all shown minus that repaint, p50 (ms)", pct(above_floor(with_pf), 50), pct(above_floor(without), 50)),
        ("all shown minus that repaint, p95 (ms)", pct(above_floor(with_pf), 95), pct(above_floor(without), 95)),
    ]
    print(
        f"\n{len(with_pf['item'])} items of one site (of {args.items} asked: ann's queue ends), N pressed after 1 s on each"
    )
    print(f"{'figure':40} {'prefetch':>10} {'baseline':>10} {'ratio':>7}")
    for name, ours, base in rows:
        print(f"{name:40} {ours:10.1f} {base:10.1f} {ours / base if base else float('nan'):7.2f}")
    print("all shown = canvas, pair, chips and trajectory, painted; 'one window repaint' (of the unchanged window,")
    print("measured before each item) is the floor of any 'shown' on this machine; minus it: the item's own cost")

    ours = [
        ("the app: next item, same site (prefetch)", with_pf["cpu"], with_pf["trajectory"]),
        ("  its later half of the items", later(with_pf["cpu"]), later(with_pf["trajectory"])),
    ]
    print_floor(floor, args.items, window, ours)

    print_items("same site", with_pf, without)
    print_items("two sites", two_pf, two_base)

    def other(run: dict[str, list[float]], name: str) -> list[float]:
        return [v for v, o in zip(run[name], run["other_site"], strict=True) if o]

    n_other = len(other(two_pf, "shown"))
    rows = [
        ("another site, key -> all shown p50 (ms)", other(two_pf, "trajectory"), other(two_base, "trajectory"), 50),
        ("another site, key -> all shown p95 (ms)", other(two_pf, "trajectory"), other(two_base, "trajectory"), 95),
        ("  canvas, pair, chips p95 (ms)", other(two_pf, "shown"), other(two_base, "shown"), 95),
        ("another site, UI-thread CPU p95 (ms)", other(two_pf, "cpu"), other(two_base, "cpu"), 95),
        ("another site, longest UI block (ms)", other(two_pf, "block"), other(two_base, "block"), 100),
        ("another site, programs linked, max", other(two_pf, "links"), other(two_base, "links"), 100),
    ]
    print(f"\n{len(two_pf['item'])} items of a bank over two sites; {n_other} steps went to the other site")
    print(f"{'figure':40} {'prefetch':>10} {'baseline':>10} {'ratio':>7}")
    for name, ours, base, q in rows:
        a, b = pct(ours, q), pct(base, q)
        print(f"{name:40} {a:10.1f} {b:10.1f} {a / b if b else float('nan'):7.2f}")
    print("target (issue 27): another site's item all shown p95 < 1 s, UI-thread CPU p95 < 60 ms")
    print_decisions(args.decisions, *decisions)
    print("\ntarget (issue 27): same site all shown p95 < 250 ms, UI-thread CPU p95 < 60 ms per item change;")
    print("no growth in latency or memory over 200 decisions (ratios ~1)")
    print("baseline = the same steps with the next item's evidence not prefetched")
    print(f"all keys: p50 {np.median(decisions[0]):.1f} ms")
    load1 = os.getloadavg()
    print(
        f"load average (1, 5, 15 min) at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
        f"at end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} ({os.cpu_count()} CPUs)"
    )
    steal1 = cpu_steal()
    if steal0 is not None and steal1 is not None and steal1[1] > steal0[1]:
        share = (steal1[0] - steal0[0]) / (steal1[1] - steal0[1])
        print(f"CPU time the virtual machine's host took meanwhile (steal): {100 * share:.1f}%")
    return 0


def parts_run(n: int) -> None:
    """The same-site and two-site item loops with prefetch, each item's UI-thread CPU split into parts (the first two
    items left out: a fresh process links shaders once)."""
    parts = PartTimes()
    parts.install()
    same = next_item_run(prepare(), n, prefetch=True, parts=parts)
    print_parts("same site", same["parts"][2:], same["cpu"][2:], same["frames"][2:])
    two = next_item_run(prepare(two_sites=True), n, prefetch=True, parts=parts)
    other = [k for k, o in enumerate(two["other_site"]) if o and k >= 2]
    pick = lambda name: [two[name][k] for k in other]  # noqa: E731
    print_parts("another site", pick("parts"), pick("cpu"), pick("frames"))


def cpu_steal() -> tuple[int, int] | None:
    """(steal, total) clock ticks of all CPUs so far, from /proc/stat (Linux), else None: a virtual machine's CPUs
    lost to its host, one reason these figures move between runs."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None
    return (fields[7] if len(fields) > 7 else 0), sum(fields)


if __name__ == "__main__":
    sys.exit(main())
