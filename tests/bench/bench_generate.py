"""Benchmark of `reviewer generate` at scale (issue 17): time per scene-megapixel and peak memory against the
budget across site sizes, and 8 small sites on a 2-worker dask LocalCluster against the same 8 one by one.

    .venv/bin/python tests/bench/bench_generate.py        # 100 and 250 px x 25/yr, 500 px x 6/yr, 8 small sites
    .venv/bin/python tests/bench/bench_generate.py --sizes 250:25 500:25 1000:6    # the issue's full sizes
    .venv/bin/python tests/bench/bench_generate.py --sizes --split ''    # only the 8 small sites

Building a site takes about as long as generating it several times (250 px x 25/yr: ~6 min, 500 px x 6/yr:
~6 min on 2 loaded cores); the issue's 500 px x 25/yr and 1000 px x 6/yr sites took 12 and 14 min to build
(built side by side, load ~8) and 3.4-3.5 GB of disk each, so they are not the default of `make bench`.

Synthetic sites (1984-2026, Landsat with MODIS/VIIRS, ERA5-Land, WorldCover, Hansen; no Sentinel-2 or
thermal) are built once under tests/bench/_data (gitignored) and reused. Each size is generated in a fresh
process (`reviewer generate SITE --out DIR --memory BUDGET`) so the peak RSS it reports is that run's alone.
Figures print next to a baseline measured in the same run (the smallest size; the sequential run), as ratios.
The cluster figures also print the load average before and after: the machine's 2 CPUs are shared, and a
parallel speed-up needs both free.
"""

# ruff: noqa: T201
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "bench" / "_data"
GB = 1024**3


def line(name: str, value: float, baseline: float | None, unit: str, target: str) -> None:
    ratio = f"{value / baseline:6.2f}x" if baseline else "      "
    base = f"{baseline:10.3f} {unit}" if baseline is not None else " " * (11 + len(unit))
    print(f"{name:44} {value:10.3f} {unit}   baseline {base}   ratio {ratio}   target {target}", flush=True)


def build_site(size: int, per_year: int, *, seed: int = 1, start: int = 1984, end: int = 2026) -> Path:
    """The bench site of this size and scene rate, built once (a finished site has truth.json)."""
    from reviewer.record.synthetic import make_demo_site

    site = DATA / f"gen_{size}px_{per_year}py_{start}-{end}_s{seed}"
    if not (site / "truth.json").is_file():
        shutil.rmtree(site, ignore_errors=True)
        t0 = time.perf_counter()
        make_demo_site(
            site,
            seed=seed,
            size=size,
            start=start,
            end=end,
            scenes_per_year=per_year,
            sentinel2=False,
            thermal=False,
            mtl=False,
            extras=False,
        )
        print(f"(built {site.name} in {time.perf_counter() - t0:.0f} s)", flush=True)
    return site


def _run(cmd: list[str]) -> None:
    """Run a command; when it fails, stop with what it wrote on stderr (the reason, not just the status)."""
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-4000:]}")


def generate_in_process(site: Path, out: Path, memory: str) -> dict:
    """`reviewer generate` in a fresh process; its generation_report.json plus the wall time."""
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "reviewer.cli", "generate", str(site), "--out", str(out), "--memory", memory]
    _run(cmd)
    rep = json.loads((out / "generation_report.json").read_text())
    rep["wall"] = time.perf_counter() - t0
    return rep


def landsat_scenes(site: Path) -> int:
    from reviewer.bank.series import LANDSAT, cached_index

    return sum(1 for s in cached_index(site).scenes if s.record and s.label in LANDSAT)


def bench_sizes(sizes: list[tuple[int, int]], memory: str, tmp: Path) -> None:
    from reviewer.review.gen_cli import memory_size

    budget = memory_size(memory)
    rows = []
    for size, per_year in sizes:
        site = build_site(size, per_year)
        n = landsat_scenes(site)
        rep = generate_in_process(site, tmp / f"out_{size}_{per_year}", memory)
        smp = n * size * size / 1e6
        rows.append((size, per_year, n, smp, rep))
        print(
            f"  {size} px, {per_year}/yr: {n} Landsat scenes ({smp:.0f} scene-Mpx), {rep['questions']} questions, "
            f"{rep['seconds']:.1f} s, peak {rep['peak_memory_bytes'] / GB:.2f} GB, "
            f"{rep['spilled_bytes'] / GB:.2f} GB of frames in files",
            flush=True,
        )
    base = rows[0]
    for size, per_year, _n, smp, rep in rows:
        line(
            f"generate {size}px {per_year}/yr: s per scene-Mpx",
            rep["seconds"] / smp,
            base[4]["seconds"] / base[3],
            "s",
            "about 1x the smallest",
        )
        line(
            f"generate {size}px {per_year}/yr: peak memory",
            rep["peak_memory_bytes"] / GB,
            budget / GB,
            "GB",
            "under the budget (ratio < 1)",
        )
    if len(rows) >= 2:
        import numpy as np

        x = np.log([r[3] for r in rows])
        y = np.log([r[4]["seconds"] for r in rows])
        k = float(np.polyfit(x, y, 1)[0])
        line("growth exponent of time in scene-Mpx", k, 1.0, "", "about 1 (linear)")


def _cpu_seconds() -> float:
    """CPU time of this process and of its children that ended (a LocalCluster's workers, once it is closed)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def bench_many(n_sites: int, tmp: Path) -> None:
    """n small sites one after another in this process against the same on a 2-worker LocalCluster (start-up
    included), with the CPU time each used: the cluster's extra CPU is its overhead (start-up, imports and
    caches paid once per worker), a wall time above half the sequential one with no extra CPU is the load."""
    import os

    from reviewer.bank.many import generate_many

    sites = [build_site(64, 6, seed=s, start=1996, end=2020) for s in range(n_sites)]
    print(f"  load before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    c0 = _cpu_seconds()
    serial = generate_many(sites, tmp / "serial", workers=0)
    c1 = _cpu_seconds()
    cluster = generate_many(sites, tmp / "cluster", workers=2)
    c2 = _cpu_seconds()
    print(f"  load after: {os.getloadavg()[0]:.1f}", flush=True)
    same = all(
        (tmp / "serial" / s.name / f).read_bytes() == (tmp / "cluster" / s.name / f).read_bytes()
        for s in sites
        for f in ("questions.jsonl", "dropped.jsonl")
    )
    line(f"{n_sites} sites one by one", serial.seconds, None, "s", "")
    line(
        f"{n_sites} sites on a 2-worker LocalCluster",
        cluster.seconds,
        serial.seconds,
        "s",
        "about 0.5x on 2 cores (start-up included)",
    )
    line(f"{n_sites} sites on the cluster: CPU time", c2 - c1, c1 - c0, "s", "about 1x (the cluster's overhead)")
    print(f"  outputs byte-identical: {same}; statuses {[s.status for s in cluster.sites]}", flush=True)


def bench_split(size: int, per_year: int, tmp: Path, memory: str) -> None:
    """One large site alone in a process against the same site on a 2-worker LocalCluster, its Landsat years,
    MODIS/VIIRS runs and per-pixel trend blocks as tasks (`reviewer generate SITE --workers 2`)."""
    import os

    site = build_site(size, per_year)
    print(f"  load before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    alone = generate_in_process(site, tmp / "alone", memory)
    out = tmp / "split"
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "reviewer.cli", "generate", str(site), "--out", str(out), "--workers", "2"]
    _run([*cmd, "--memory", memory])
    wall = time.perf_counter() - t0
    print(f"  load after: {os.getloadavg()[0]:.1f}", flush=True)
    rep = json.loads((out / site.name / "generation_report.json").read_text())
    same = all(
        (tmp / "alone" / f).read_bytes() == (out / site.name / f).read_bytes()
        for f in ("questions.jsonl", "dropped.jsonl")
    )
    line(f"one {size}px {per_year}/yr site alone", alone["wall"], None, "s", "")
    line(
        "the same site split on a 2-worker cluster",
        wall,
        alone["wall"],
        "s",
        "about 0.5x on 2 cores (start-up and the site's own scan included)",
    )
    print(f"  {rep['cluster_tasks']} tasks; outputs byte-identical: {same}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="*", default=["100:25", "250:25", "500:6"], help="SIZE:SCENES_PER_YEAR")
    ap.add_argument("--memory", default="2GB")
    ap.add_argument("--small", type=int, default=8, help="small sites for the cluster comparison (0: skip)")
    ap.add_argument("--split", default="250:25", help="SIZE:SCENES_PER_YEAR of the split-site comparison ('' skips)")
    args = ap.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    sizes = [tuple(int(v) for v in s.split(":")) for s in args.sizes]
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp:
        if sizes:
            bench_sizes(sizes, args.memory, Path(tmp))
        if args.small:
            bench_many(args.small, Path(tmp))
        if args.split:
            size, per_year = (int(v) for v in args.split.split(":"))
            bench_split(size, per_year, Path(tmp), args.memory)


if __name__ == "__main__":
    main()
