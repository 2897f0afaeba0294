"""Benchmark: start-up wall time of the CLI (`reviewer --help`, `reviewer bank --help`), which annotators
call in shell loops.

Run: .venv/bin/python tests/bench/bench_cli.py [--runs 10]
Prints the median and p95 of each command next to a bare interpreter start (`python -c pass`, same
interpreter, measured in the same run) and the ratio; the target is under 0.3 s per command.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: The `reviewer` console script installed beside this interpreter (falls back to `python -m reviewer.cli`).
_SCRIPT = Path(sys.executable).with_name("reviewer")
REVIEWER = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "reviewer.cli"]
LIMIT_S = 0.3


def wall_times(cmd: list[str], runs: int) -> list[float]:
    """Wall time of `runs` runs of `cmd` (after one warm-up run), output discarded."""
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return times


def p95(times: list[float]) -> float:
    """Nearest-rank 95th percentile."""
    ordered = sorted(times)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()

    baseline = wall_times([sys.executable, "-c", "pass"], args.runs)
    base_med = statistics.median(baseline)
    print(f"{' '.join(REVIEWER)} vs {sys.executable} -c pass, {args.runs} runs each")
    print(f"{'command':<26} {'median':>9} {'p95':>9} {'baseline':>9} {'ratio':>7}")
    print(f"{'python -c pass':<26} {base_med:>8.3f}s {p95(baseline):>8.3f}s {base_med:>8.3f}s {1.0:>6.1f}x")
    summary: dict[str, float] = {"baseline_median_s": round(base_med, 3)}
    ok = True
    for key, label, argv in (
        ("help", "reviewer --help", ["--help"]),
        ("bank_help", "reviewer bank --help", ["bank", "--help"]),
    ):
        times = wall_times(REVIEWER + argv, args.runs)
        med, high = statistics.median(times), p95(times)
        ok = ok and med < LIMIT_S
        print(f"{label:<26} {med:>8.3f}s {high:>8.3f}s {base_med:>8.3f}s {med / base_med:>6.1f}x")
        summary[f"{key}_median_s"] = round(med, 3)
        summary[f"{key}_p95_s"] = round(high, 3)
    print(f"every median under {LIMIT_S} s: {'yes' if ok else 'no'}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
