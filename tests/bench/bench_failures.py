"""Benchmark: wall time of `reviewer failures code` (scripted one call per run) on a coding set at the paper's
scale (the seeded synthetic bank and runs of tests/bench/synthetic.py: 144 step + the pair runs).

Run: .venv/bin/python tests/bench/bench_failures.py [--runs 10]
Prints median and p95 next to two baselines measured in the same run, `python -c pass` and `reviewer --help`,
with the ratios. 'cold' is a call whose schema checks are not remembered yet (a fresh cache folder each call:
what every call cost before the checks were remembered); 'warm' is every later call on the same set. Target: a
warm call well under 0.35 s, within ~0.15 s of `reviewer --help`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_cli import REVIEWER, p95  # noqa: E402

TARGET_S = 0.35


def timed(cmd: list[str], runs: int, env_for=None) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) time of `runs` runs (after one warm-up run); env_for(i) gives each run's
    environment. CPU time is the steadier figure on a shared machine."""
    import resource

    def one(env) -> tuple[float, float]:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    one(env_for(-1) if env_for else None)
    walls, cpus = [], []
    for i in range(runs):
        wall, cpu = one(env_for(i) if env_for else None)
        walls.append(wall)
        cpus.append(cpu)
    return walls, cpus


def make_inputs(folder: Path) -> tuple[Path, Path]:
    """The synthetic bank and runs, the coding set sampled from them, a store with an expert."""
    from reviewer.cli import main
    from reviewer.review import api
    from reviewer.store import Store
    from tests.bench.synthetic import make_bank, make_runs

    bank = make_bank(folder / "bank")
    make_runs(bank, folder / "runs.jsonl")
    out = folder / "set.json"
    argv = ["failures", "sample", str(folder / "runs.jsonl"), str(folder / "bank"), "--seed", "1", "--out", str(out)]
    assert main(argv) == 0
    with Store(folder / "db.sqlite") as s:
        api.add_user(s, "mia", "maintainer")
        api.add_user(s, "eve", "expert", by="mia")
    return out, folder / "db.sqlite"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        set_path, db = make_inputs(tmp)
        doc = json.loads(set_path.read_text())
        print(f"coding set: {len(doc['runs'])} runs, {set_path.stat().st_size / 1e3:.0f} kB; {args.runs} runs each")
        warm_env = dict(os.environ, XDG_CACHE_HOME=str(tmp / "cache"))

        def cold_env(i: int) -> dict[str, str]:
            return dict(os.environ, XDG_CACHE_HOME=str(tmp / f"cold-{i + 1}"))

        code = REVIEWER + ["--db", str(db), "failures", "code", str(set_path), "--run", "s001", "--code", "1",
                           "--user", "eve"]  # fmt: skip
        rows = [
            ("python -c pass", timed([sys.executable, "-c", "pass"], args.runs)),
            ("reviewer --help", timed(REVIEWER + ["--help"], args.runs, lambda i: warm_env)),
            ("failures code (cold)", timed(code, args.runs, cold_env)),
            ("failures code (warm)", timed(code, args.runs, lambda i: warm_env)),
        ]
    base, helped = statistics.median(rows[0][1][0]), statistics.median(rows[1][1][0])
    base_cpu, help_cpu = statistics.median(rows[0][1][1]), statistics.median(rows[1][1][1])
    print(
        f"{'command':<24} {'median':>8} {'p95':>8} {'/python':>8} {'/help':>6}   {'cpu':>7} {'/python':>8} {'/help':>6}"
    )
    summary = {}
    for label, (walls, cpus) in rows:
        med, cpu = statistics.median(walls), statistics.median(cpus)
        print(
            f"{label:<24} {med:>7.3f}s {p95(walls):>7.3f}s {med / base:>7.1f}x {med / helped:>5.2f}x   "
            f"{cpu:>6.3f}s {cpu / base_cpu:>7.1f}x {cpu / help_cpu:>5.2f}x"
        )
        summary[label] = {"wall_s": round(med, 3), "cpu_s": round(cpu, 3)}
    warm = summary["failures code (warm)"]
    print(
        f"warm call under {TARGET_S} s: {'yes' if warm['wall_s'] < TARGET_S else 'no'} (wall {warm['wall_s']:.3f} s, "
        f"{warm['wall_s'] - summary['reviewer --help']['wall_s']:+.3f} s over reviewer --help; cpu "
        f"{warm['cpu_s']:.3f} s, {warm['cpu_s'] - summary['reviewer --help']['cpu_s']:+.3f} s over it)"
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
