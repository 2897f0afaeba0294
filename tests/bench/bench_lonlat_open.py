"""The UI thread's CPU when a lon/lat site is shown (standalone, not collected by pytest). Run under Xvfb:

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/bench/bench_lonlat_open.py [--runs 4]

A lon/lat grid's cell is measured on its ellipsoid (`Site.cell_m`, through pyproj): the first lon/lat site of a
process imported pyproj on the UI thread (~35 ms), in `StackSession.show_index`, when the layers took their scale.
Each run is a fresh process that opens one site, scanned before (its index read from the store, as a site opened
again: a first scan measures the cell in its worker), and prints the UI thread's CPU (time.thread_time) in
`show_index` and from the open to the site shown, and which thread imported pyproj; the lon/lat site (20 x 20 cells of 0.01 degree, an
AppEEARS MOD11A2 export) alternates with its baseline in the same run, the same site on a UTM grid (no pyproj).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def write_site(root: Path, lonlat: bool) -> Path:
    """20 x 20 cells of MOD11A2 LST as AppEEARS exports it: 0.01 degree over 11.0-11.2 E, 45.8-46.0 N, or 1 km
    cells of the same count on UTM 32N."""
    import rasterio
    from affine import Affine

    crs, bbox, cell = ("EPSG:4326", [11.0, 45.8, 11.2, 46.0], 0.01) if lonlat else (
        "EPSG:32632", [650000.0, 5080000.0, 670000.0, 5100000.0], 1000.0)  # fmt: skip
    root.mkdir(parents=True, exist_ok=True)
    doc = {"id": "ll" if lonlat else "utm", "name": "bench site", "kind": "core", "theme": "forest", "role": "obscure",
           "bbox": bbox, "crs": crs, "shape": [20, 20]}  # fmt: skip
    (root / "site.json").write_text(json.dumps(doc))
    profile = dict(driver="GTiff", width=20, height=20, count=1, crs=crs,
                   transform=Affine(cell, 0, bbox[0], 0, -cell, bbox[3]))  # fmt: skip
    lst = (14500 + 50 * np.add.outer(np.arange(20), np.arange(20))).astype(np.uint16)
    for layer, arr in (("LST_Day_1km", lst), ("QC_Day", np.zeros((20, 20), np.uint8))):
        with rasterio.open(root / f"MOD11A2.061_{layer}_doy2024017000000_aid0001.tif", "w", dtype=arr.dtype.name,
                           **profile) as d:  # fmt: skip
            d.write(arr, 1)
    return root


def one(site: Path, db: Path) -> dict:
    """In this process: the app opens `site`; the UI thread's CPU in show_index (ms) and pyproj's import there."""
    import threading

    import napari
    from bench_viewer import pump_until

    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    importer = {}  # which thread imported pyproj first, and in what of the app's

    class Watch:  # a finder that only notes the first import of pyproj (it finds nothing itself)
        def find_spec(self, name, path=None, target=None):
            if name == "pyproj" and "thread" not in importer:
                import traceback

                importer["thread"] = threading.current_thread().name
                frames = [f for f in traceback.extract_stack() if "/reviewer/" in f.filename]
                importer["where"] = " < ".join(f"{Path(f.filename).name}:{f.name}" for f in frames[::-1][:4])
            return None

    sys.meta_path.insert(0, Watch())
    viewer = napari.Viewer(show=True)
    app = ReviewerApp(viewer, db=db, recent=RecentSites(db.with_suffix(".recent.json")), scoring=False)
    pump_until(lambda: app.settled, 60)
    session, spent = app.session, {}
    show_index = session.show_index

    def timed(*args, **kw):  # (the bench's own wrapper of the app's method: nothing of napari's)
        had = "pyproj" in sys.modules
        t0 = time.thread_time()
        try:
            return show_index(*args, **kw)
        finally:
            spent["ms"] = 1000 * (time.thread_time() - t0)
            spent["pyproj_imported_here"] = not had and "pyproj" in sys.modules

    session.show_index = timed
    t0 = time.thread_time()
    app.open_site(site)
    pump_until(lambda: "ms" in spent and session.frame_shown() and app.settled, 120)
    spent["open_ms"] = 1000 * (time.thread_time() - t0)  # the UI thread's CPU from the open to the site shown
    spent["pyproj_thread"] = f"{importer.get('thread', 'not imported')} ({importer.get('where', '')})"
    app.close()
    viewer.close()
    return spent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4, help="fresh processes per site, alternating")
    parser.add_argument("--one", nargs=2, metavar=("SITE", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(Path(args.one[0]), Path(args.one[1]))))
        return 0
    root = Path(os.environ.get("BENCH_ROOT", tempfile.mkdtemp(prefix="bench-lonlat-")))
    sites = {"lon/lat": write_site(root / "lonlat", True), "UTM (baseline)": write_site(root / "utm", False)}
    figures: dict[str, list[dict]] = {name: [] for name in sites}
    from reviewer.record.scan import open_index
    from reviewer.store import Store

    for site in sites.values():  # scanned once, as a site a user opens again: its index comes from the store
        with Store(root / f"store-{site.name}.sqlite") as store:
            open_index(site, store)
    for _k in range(args.runs):
        for name, site in sites.items():
            db = root / f"store-{site.name}.sqlite"
            out = subprocess.run([sys.executable, __file__, "--one", str(site), str(db)], capture_output=True,
                                 text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(ROOT)))  # fmt: skip
            if out.returncode:
                print(out.stderr[-2000:])
                return 1
            figures[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"load average {os.getloadavg()[0]:.2f}; the UI thread's CPU, ms (fresh processes, alternating):")
    for name, runs in figures.items():
        ms, whole = [r["ms"] for r in runs], [r["open_ms"] for r in runs]
        print(f"  {name:15s} show_index median {np.median(ms):6.1f} ({', '.join(f'{m:.0f}' for m in ms)}); "
              f"open to shown median {np.median(whole):6.1f} ({', '.join(f'{m:.0f}' for m in whole)})")  # fmt: skip
        print(f"  {'':15s} pyproj imported by: {'; '.join(sorted({r['pyproj_thread'] for r in runs}))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
