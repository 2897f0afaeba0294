"""Review dock benchmark (standalone, not collected by pytest). Run under Xvfb:

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/bench/bench_review_dock.py [--items 16]

On the GUI demo site (900 scenes: Landsat, Sentinel-2, MODIS, VIIRS; 64 x 64 px) and its generated bank
(seed 5), both made once into /tmp/bench/review:
- next item on the same site: key press (N) -> the item's evidence shown (canvas, pair, chips; not the
  trajectory, which for MODIS items reads ~800 scenes in its worker), p50/p95, with prefetch of the next
  item's evidence, against the same steps without prefetch in the same run (the baseline), and the
  longest UI block while it comes up;
- 200 decisions with the keyboard (A accept, Backspace undo, alternating): latency per key, the first 20
  against the last 20 (growth), and the process's resident memory before and after.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_viewer import Heartbeat, pct, pump_until  # noqa: E402

ROOT = Path("/tmp/bench/review")
BANK = "demo-core-seed0-generated"


def prepare() -> Path:
    """The site, its scanned index and the generated bank (once), and a fresh store with ann's queue."""
    from reviewer.bank.generate import generate
    from reviewer.bank.store import import_bank
    from reviewer.record.scan import open_index
    from reviewer.review import api
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
            generate(site, bank, seed=5)
    db = ROOT / "run.sqlite"
    for p in ROOT.glob("run.sqlite*"):
        p.unlink()
    shutil.copy(base, db)
    with Store(db) as store:
        api.add_user(store, "mia", "maintainer")
        for name in ("ann", "bob"):
            api.add_user(store, name, "annotator", by="mia")
        import_bank(store, bank, user="mia")
        api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=11, user="mia")
    return db


def next_item_run(db: Path, n: int, prefetch: bool) -> dict[str, list[float]]:
    """Step through n items with N; ms from the key press to the evidence shown, and to the trajectory."""
    import napari
    from qtpy.QtWidgets import QApplication

    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    viewer = napari.Viewer(show=True)
    app = ReviewerApp(viewer, db=db, recent=RecentSites(ROOT / "recent.json"), scoring=False)
    app.start_review("ann", "annotator", prefetch=prefetch)
    loader = app.review.loader
    pump_until(lambda: loader.shown(trajectory=False), timeout=300)
    out: dict[str, list[float]] = {"shown": [], "block": []}
    for _ in range(n):
        t_read = time.perf_counter()
        while time.perf_counter() - t_read < 1.0:  # the annotator reads the item: prefetch has time to work
            QApplication.processEvents()
            time.sleep(0.005)
        hb = Heartbeat()
        hb.start()
        t0 = time.perf_counter()
        app.review.key("N")
        pump_until(lambda: loader.shown(trajectory=False), timeout=120)
        out["shown"].append((time.perf_counter() - t0) * 1000)
        out["block"].append(hb.stop())
    app.close()
    viewer.close()
    return out


def decisions_run(db: Path, n: int) -> tuple[list[float], float, float]:
    """n keyboard decisions (A, Backspace alternating): ms per key (until the next turn of the event loop)."""
    import napari
    from qtpy.QtWidgets import QApplication

    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    viewer = napari.Viewer(show=True)
    app = ReviewerApp(viewer, db=db, recent=RecentSites(ROOT / "recent.json"), scoring=False)
    app.start_review("ann", "annotator")
    pump_until(lambda: app.review.loader.shown(trajectory=False), timeout=300)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lat = []
    for k in range(n):
        t0 = time.perf_counter()
        assert app.review.key("A" if k % 2 == 0 else "Backspace"), app.review.annotator.saved.text()
        QApplication.processEvents()
        lat.append((time.perf_counter() - t0) * 1000)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    app.close()
    viewer.close()
    return lat, rss0, rss1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--decisions", type=int, default=200)
    args = parser.parse_args(argv)
    ROOT.mkdir(parents=True, exist_ok=True)
    with_pf = next_item_run(prepare(), args.items, prefetch=True)
    without = next_item_run(prepare(), args.items, prefetch=False)
    lat, rss0, rss1 = decisions_run(prepare(), args.decisions)
    rows = [
        ("next item, key -> shown p50 (ms)", pct(with_pf["shown"], 50), pct(without["shown"], 50)),
        ("next item, key -> shown p95 (ms)", pct(with_pf["shown"], 95), pct(without["shown"], 95)),
        ("next item, longest UI block (ms)", max(with_pf["block"]), max(without["block"])),
    ]
    print(f"\n{args.items} items of one site, N pressed after 1 s on each item")
    print(f"{'figure':36} {'prefetch':>10} {'baseline':>10} {'ratio':>7}")
    for name, ours, base in rows:
        print(f"{name:36} {ours:10.1f} {base:10.1f} {ours / base if base else float('nan'):7.2f}")
    first, last = lat[:20], lat[-20:]
    print(f"\n{args.decisions} keyboard decisions (A / Backspace alternating), ms per key:")
    print(f"{'figure':36} {'last 20':>10} {'first 20':>10} {'ratio':>7}")
    for name, q in (("p50", 50), ("p95", 95)):
        a, b = pct(last, q), pct(first, q)
        print(f"{'decision latency ' + name:36} {a:10.1f} {b:10.1f} {a / b:7.2f}")
    print(f"{'peak RSS (MiB), after vs before':36} {rss1:10.0f} {rss0:10.0f} {rss1 / rss0:7.2f}")
    print("\ntarget: next item p95 < 150 ms with prefetch; no growth over 200 decisions (ratios ~1)")
    print("baseline = the same steps with the next item's evidence not prefetched")
    print(f"all keys: p50 {np.median(lat):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
