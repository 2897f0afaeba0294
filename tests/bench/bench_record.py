"""Benchmark of the raw-record layer on a synthetic site of >= 1,000 Landsat scenes of 400 x 400 px.

Each figure is printed next to a baseline measured in the same run (machines here are noisy):
- scan / index build vs reading the same quality-layer bytes with rasterio in a plain loop (target ratio <= 1.5)
- second open of the site from the stored index (target < 1 s)
- one date's composite, cold, vs a plain rasterio read of its three bands plus QA (target ratio <= 1.5); warm < 50 ms
- resident memory after opening the whole stack lazily (< 500 MB) and while rendering every date (bounded)

- scanning 1,000 MODIS HDF4 granules (MOD10A1, real layout, small arrays) vs a plain pyhdf read of the same
  SDS (target ratio <= 1.5): as a user's scan runs (a forked copy shares the granules on a second CPU) and in
  one process; and one date onto the site grid vs the plain read (target ratio <= 1.5)
- the trajectory at a pixel over the demo site's MODIS HDF4 series vs a plain pyhdf read of that cell's NDVI
  and pixel reliability from the same files

Run: .venv/bin/python tests/bench/bench_record.py [--size 400] [--scenes-per-year 9]  (--modis-only: the HDF4 rows;
--landsat-scan-only: the Landsat scan row and its baseline)
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
import rasterio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from reviewer.record.scan import open_index, scan_site  # noqa: E402
from reviewer.record.stack import SceneCache, open_stack  # noqa: E402
from reviewer.record.stretch import Stretch  # noqa: E402
from reviewer.record.synthetic import make_demo_site  # noqa: E402
from reviewer.store import Store  # noqa: E402

DATA = ROOT / "tests" / "bench" / "_data"
log = logging.getLogger("bench")


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def line(name: str, value: float, baseline: float | None, unit: str, target: str) -> None:
    ratio = f"{value / baseline:6.2f}x" if baseline else "      "
    base = f"{baseline:10.3f} {unit}" if baseline is not None else " " * (11 + len(unit))
    print(f"{name:44} {value:10.3f} {unit}   baseline {base}   ratio {ratio}   target {target}")


#: the scans and their baselines are each run this many times, alternating, and the best time of each
#: kept: on this shared 2-CPU machine one run of either can be twice the other's time
REPEATS = 3


def best_of(baseline, ours, before=None, repeats=REPEATS):
    """(best baseline time, best time of ours, ours' last result), the two alternated `repeats` times;
    `before` runs untimed before each of ours (to make it cold again)."""
    base, mine, result = [], [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        baseline()
        base.append(time.perf_counter() - t0)
        if before is not None:
            before()
        t0 = time.perf_counter()
        result = ours()
        mine.append(time.perf_counter() - t0)
    return min(base), min(mine), result


def build_site(size: int, scenes_per_year: int) -> Path:
    site = DATA / f"landsat_{size}px_{scenes_per_year}py"
    if not (site / "truth.json").is_file():
        t0 = time.perf_counter()
        make_demo_site(
            site,
            seed=1,
            size=size,
            start=1984,
            end=2024,
            scenes_per_year=scenes_per_year,
            landsat_only=True,
            thermal=False,
        )
        print(f"(built the bench site in {time.perf_counter() - t0:.1f} s: {site})")
    return site


def landsat_scan(site: Path):
    """The scan / index build vs reading the same QA_PIXEL layers with rasterio in a plain loop (each
    REPEATS times, alternating; the best of each): (the index, the best scan time)."""
    qa_files = sorted(site.rglob("*_QA_PIXEL.TIF"))

    def plain_qa() -> None:
        for f in qa_files:
            with rasterio.open(f) as ds:
                ds.read(1)

    base_scan, scan, index = best_of(plain_qa, lambda: scan_site(site))
    landsat = [s for s in index.scenes if s.sensor in ("TM", "ETM+", "OLI", "OLI-2")]
    print(
        f"site: {len(landsat)} Landsat scenes of {index.site.shape[0]} x {index.site.shape[1]} px, {len(qa_files)} QA layers"
        f" (load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})"
    )
    line("scan / index build", scan, base_scan, "s", "ratio <= 1.5")
    return index, scan


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=400)
    ap.add_argument("--scenes-per-year", type=int, default=17)
    ap.add_argument("--dates", type=int, default=40, help="dates sampled for the composite timings")
    ap.add_argument("--landsat-scan-only", action="store_true", help="only the scan row and its baseline")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    site = build_site(args.size, args.scenes_per_year)
    index, scan = landsat_scan(site)
    if args.landsat_scan_only:
        return
    # the scan's check of every indexed file (header + the strip/tile ranges it promises), timed alone
    from reviewer.record.check import check_file

    indexed = [Path(s.files_root) / rel for s in index.scenes for rel in s.files.values()]
    t0 = time.perf_counter()
    bad = sum(check_file(f) is not None for f in indexed)
    checks = time.perf_counter() - t0
    line(f"  of which file checks ({len(indexed)} files, {bad} bad)", checks, scan, "s", "small share of the scan")

    with tempfile.TemporaryDirectory() as tmp:
        with Store(Path(tmp) / "bench.sqlite") as store:
            open_index(site, store)
            t0 = time.perf_counter()
            again = open_index(site, store)
            reopen = time.perf_counter() - t0
        assert again.from_store
    line("second open (stored index)", reopen, None, "s", "< 1 s")

    # ---- one date's composite, cold vs plain read of 3 bands + QA
    stack = open_stack(index, composite="truecolor", cache=SceneCache())
    picks = np.linspace(0, len(stack) - 1, args.dates).round().astype(int)
    cold, plain, warm = [], [], []
    for i in picks:
        scene = stack.scenes[i]
        prod = scene.product_spec
        tokens = [prod.band_by_name(n).token for n in ("red", "green", "blue")] + [prod.quality.band]
        t0 = time.perf_counter()
        for tok in tokens:
            with rasterio.open(Path(scene.files_root) / scene.files[tok]) as ds:
                ds.read(1)
        plain.append(time.perf_counter() - t0)
        stack.cache.clear()
        t0 = time.perf_counter()
        stack.read(int(i), "truecolor")
        cold.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        stack.read(int(i), "truecolor")
        warm.append(time.perf_counter() - t0)
    line(
        "composite cold, median per date",
        statistics.median(cold) * 1e3,
        statistics.median(plain) * 1e3,
        "ms",
        "ratio <= 1.5",
    )
    line("composite warm (cached), median", statistics.median(warm) * 1e3, None, "ms", "< 50 ms")
    rgb_times = []
    stretch = Stretch.default("truecolor")
    for i in picks[:10]:
        t0 = time.perf_counter()
        stretch.apply(stack.read(int(i), "truecolor"))
        rgb_times.append(time.perf_counter() - t0)
    line("rendered RGB from cache, median", statistics.median(rgb_times) * 1e3, None, "ms", "(info)")

    # ---- memory
    del stack
    gc.collect()
    before = rss_mb()
    stack = open_stack(index, composite="truecolor", cache=SceneCache())
    lazy = stack.rgb("truecolor", stretch)
    after_open = rss_mb()
    line("RSS after opening whole stack lazily", after_open, before, "MB", "< 500 MB")
    checkpoints = []
    n = len(stack)
    for i in range(n):
        stretch.apply(stack.read(i, "truecolor"))
        if i + 1 in {n // 4, n // 2, 3 * n // 4, n}:
            checkpoints.append((i + 1, rss_mb()))
    marks = ", ".join(f"{k}: {v:.0f} MB" for k, v in checkpoints)
    print(f"RSS while rendering all {n} dates: {marks} (cache bound {stack.cache.max_bytes // 2**20} MB)")
    growth = checkpoints[-1][1] - checkpoints[1][1]
    line("RSS growth, second half of the dates", growth, None, "MB", "~0 (bounded)")
    print(f"(lazy array {lazy.shape}, {lazy.dtype})")


# ----------------------------------------------------------------------------- MODIS HDF4 as distributed

SNOW_GRID = "MOD_Grid_Snow_500m"


def build_modis_site(n_tiles: int, size: int) -> Path:
    """n_tiles daily MOD10A1 granules of tile h08v05 (real layout: one HDF4 file, the real SDS names and
    StructMetadata.0; small arrays of size x size cells) and a site of the tile's upper-left quarter."""
    import datetime as dt

    from tests.conftest import write_site_json
    from tests.formats import SINU, TILE_M, tile_corner, write_modis_hdf4

    site = DATA / f"modis_hdf4_{n_tiles}x{size}px"
    if (site / "site.json").is_file() and len(list(site.glob("*.hdf"))) == n_tiles:
        return site
    t0 = time.perf_counter()
    site.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    ulx, uly = tile_corner(8, 5)
    cell = TILE_M / size
    write_site_json(
        site, bbox=[ulx, uly - size // 2 * cell, ulx + size // 2 * cell, uly], crs=SINU, shape=[size // 2] * 2
    )
    day0 = dt.date(2020, 1, 1)
    for i in range(n_tiles):
        d = day0 + dt.timedelta(days=i)
        snow = rng.integers(0, 101, (size, size), dtype=np.uint8)
        snow[rng.random((size, size)) < 0.2] = 250  # cloud
        write_modis_hdf4(
            site / f"MOD10A1.A{d.year}{d.timetuple().tm_yday:03d}.h08v05.061.2021{i % 1000:03d}000000.hdf",
            SNOW_GRID,
            8,
            5,
            {
                "NDSI_Snow_Cover": (snow, {"_FillValue": 255}),
                "NDSI_Snow_Cover_Basic_QA": (np.zeros((size, size), np.uint8), {}),
                "NDSI_Snow_Cover_Algorithm_Flags_QA": (np.zeros((size, size), np.uint8), {}),
            },
        )
    print(f"(built {n_tiles} MOD10A1 HDF4 granules in {time.perf_counter() - t0:.1f} s: {site})")
    return site


def bench_modis(n_tiles: int, size: int) -> None:
    from pyhdf.SD import SD, SDC

    from reviewer.record.catalog import catalog
    from reviewer.record.decode import Grid, read_scene
    from reviewer.record.forked import copies_for
    from reviewer.record.hdf import forget

    site = build_modis_site(n_tiles, size)
    files = sorted(site.glob("*.hdf"))
    catalog()  # loaded (and schema-checked, ~1 s) once per process: not part of a scan (--modis-only ran it cold)

    def plain() -> None:  # a plain pyhdf read of the layer the scan reads (the snow layer is its own QA)
        for f in files:
            sd = SD(str(f), SDC.READ)
            sd.select("NDSI_Snow_Cover")[:]
            sd.end()

    # each scan cold (no grid kept); as a user's scan runs (workers=2: a forked copy shares the granules when
    # there is a second CPU), and in one process (workers=1), each next to its own baseline runs
    # (5 alternations, not 3: a MODIS scan is a fraction of a second, and on this shared machine the best of
    # 3 of either was often a run another process had slowed)
    base, scan, index = best_of(plain, lambda: scan_site(site), before=forget, repeats=5)
    load = os.getloadavg()
    base1, scan1, _ = best_of(plain, lambda: scan_site(site, workers=1), before=forget, repeats=5)
    load = [max(a, b) for a, b in zip(load, os.getloadavg(), strict=True)]
    assert len(index.scenes) == n_tiles and not index.problems, index.problems[:3]
    print(
        f"site: {n_tiles} MOD10A1 HDF4 granules of {size} x {size} cells, site {index.site.shape[0]} px a side"
        f" (load average {' '.join(f'{x:.2f}' for x in load)}; {copies_for(n_tiles, 2)} forked copy)"
    )
    line("MODIS HDF4 scan / index build", scan, base, "s", "ratio <= 1.5")
    line("MODIS HDF4 scan, one process (workers=1)", scan1, base1, "s", "ratio <= 1.5")
    grid = Grid.of_site(index.site)
    plain, ours = [], []
    for scene in index.scenes[:: max(1, n_tiles // 40)]:
        path = site / scene.files["NDSI_Snow_Cover"].split("::")[0]
        t0 = time.perf_counter()
        sd = SD(str(path), SDC.READ)
        sd.select("NDSI_Snow_Cover")[:]
        sd.end()
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        read_scene(scene, scene.product_spec, ["snow"], grid)
        ours.append(time.perf_counter() - t0)
    line(
        "MODIS one date onto the site grid, median",
        statistics.median(ours) * 1e3,
        statistics.median(plain) * 1e3,
        "ms",
        "ratio <= 1.5",
    )


def bench_trajectory() -> None:
    """The trajectory dock's series (issue 10) over the demo site's MODIS HDF4 NDVI granules (MOD13Q1 and
    MYD13Q1, `reviewer demo`'s site, built under _data/ once) at the site's centre pixel, vs a plain pyhdf read
    of the same cell (NDVI and pixel reliability, what the series is masked by) from the same files."""
    import os

    from pyhdf.SD import SD, SDC
    from rasterio.warp import transform as warp

    from reviewer.record.catalog import catalog
    from reviewer.record.demo import ensure_demo_site
    from reviewer.record.hdf import grid_of, split
    from reviewer.record.series import trajectory
    from reviewer.record.stack import SceneCache

    os.environ.setdefault("REVIEWER_DEMO_DIR", str(DATA / "demo_site"))
    site = ensure_demo_site()
    catalog()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.sqlite") as store:
        index = open_index(site, store)
    labels = ("MODIS Terra", "MODIS Aqua")
    stack = open_stack(index, sensors=labels, cache=SceneCache())
    pixel = (index.site.shape[0] // 2, index.site.shape[1] // 2)
    layers = [split(Path(s.files_root) / s.files["NDVI"])[0] for s in stack.scenes]
    info = grid_of(layers[0])  # the cell under the pixel's centre (every granule of the tile has this grid)
    t = index.site.transform
    x, y = t.c + (pixel[1] + 0.5) * t.a, t.f + (pixel[0] + 0.5) * t.e
    (sx,), (sy,) = warp(index.site.crs, info.crs_wkt, [x], [y])
    col, row = int((sx - info.transform[2]) // info.transform[0]), int((sy - info.transform[5]) // info.transform[4])

    def plain_cells() -> None:
        for f in layers:
            sd = SD(f, SDC.READ)
            sd.select("250m 16 days NDVI")[row, col]
            sd.select("250m 16 days pixel reliability")[row, col]
            sd.end()

    plain, ours, series = best_of(plain_cells, lambda: trajectory(stack, "ndvi", pixel=pixel), stack.cache.clear)
    assert len(series) == len(layers)
    masked = sum(series.masked)
    print(f"trajectory: {len(layers)} MODIS HDF4 granules of the demo site, pixel {pixel}, {masked} masked dates")
    line("MODIS trajectory at a pixel (whole series)", ours, plain, "s", "as fast as possible")


if __name__ == "__main__":
    if "--modis-only" in sys.argv:
        bench_modis(1000, 240)
        bench_trajectory()
    elif "--landsat-scan-only" in sys.argv:
        main()
    else:
        main()
        bench_modis(1000, 240)
        bench_trajectory()
