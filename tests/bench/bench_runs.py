"""Benchmark of `reviewer run` (issue 29): a 100-question run of Inspect's mockllm in the local sandbox (record
condition, one pass: each run lists the record, writes a PNG, views it and submits, 4 model turns; q1 first
submits once invalid) against its
baseline, scoring the same 100 questions from a prepared runs file with `reviewer score`. Each is measured in a
process of its own: wall time and peak resident memory (the children's ru_maxrss).

Plain script: `python tests/bench/bench_runs.py [--questions N] [--max-samples N]`.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "unit")]


def _child_run(work: Path, max_samples: int) -> None:
    from runs_agents import honest_steps, mock_model

    from reviewer.runs.run import RunOptions, run_bank

    opts = RunOptions(
        bank=str(work / "bank"),
        model="mockllm/model",
        out=str(work / "runs"),
        conditions=["record"],
        passes=1,
        sandbox="local",
        sites=[str(work / "site")],
        max_samples=max_samples,
        display="none",
    )
    run_bank(opts, model=mock_model(lambda q, closed: honest_steps(q, closed, render="shell")))


def _child_score(work: Path) -> None:
    from reviewer.cli import main

    main(["score", str(work / "bank"), str(work / "prepared.jsonl"), "--passes", "1", "--out", str(work / "rep")])


def _measure(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of `python this_file ARGS` in a process of its own."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run([sys.executable, __file__, *args], check=True)
    took = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return took, max(peak, before) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--max-samples", type=int, default=8)
    ap.add_argument("--child", choices=("run", "score"))
    ap.add_argument("--work")
    a = ap.parse_args()
    if a.child:
        (_child_run if a.child == "run" else _child_score)(Path(a.work), *([a.max_samples] if a.child == "run" else []))
        return
    from runs_agents import make_bank

    from reviewer.record.site import load_site
    from tests.sites import make_site

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        site = make_site(work / "site", "landsat_small")
        make_bank(work / "bank", load_site(site).id, n_number=a.questions - 1)
        qids = ["q1"] + [f"q{i + 2}" for i in range(a.questions - 1)]
        answer = {"q1": {"direction": "increase", "trend": 0.3}}
        prepared = [
            {"model": "m", "question": q, "condition": "record", "pair": None, "pass": 1,
             "answer": answer.get(q, {"area": 101.0}), "confidence": 0.7}
            for q in qids
        ]  # fmt: skip
        (work / "prepared.jsonl").write_text("\n".join(json.dumps(r) for r in prepared) + "\n")
        score_s, score_mb = _measure(["--child", "score", "--work", str(work)])
        run_s, run_mb = _measure(["--child", "run", "--work", str(work), "--max-samples", str(a.max_samples)])
        runs = [json.loads(x) for x in (work / "runs" / "runs.jsonl").read_text().splitlines()]
        errors = sum(r["error"] is not None for r in runs)
        print(f"{a.questions} questions, 1 pass, record condition, local sandbox, max {a.max_samples} samples at once")
        print(
            f"  reviewer run (mockllm, 4 turns each):  {run_s:7.1f} s  peak {run_mb:6.0f} MB  ({len(runs)} runs, {errors} errors)"
        )
        print(f"  baseline: reviewer score of the same:  {score_s:7.1f} s  peak {score_mb:6.0f} MB")
        print(f"  per run: {run_s / len(runs):.2f} s; ratio to scoring {run_s / score_s:.1f}x")


if __name__ == "__main__":
    main()
