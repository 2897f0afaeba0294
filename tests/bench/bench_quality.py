"""Benchmark: annotator reliability on 10,000 items x 3 annotators, and paired comparisons of 12 models.

Run: .venv/bin/python tests/bench/bench_quality.py [--items 10000] [--models 12] [--questions 238] [--resamples 10000]

1. `reliability` (what `reviewer review quality` computes: crowd-kit Dawid-Skene over the verdicts, and over the
   first flag reasons) on 10,000 items x 3 annotators of accuracy 0.95 / 0.85 / 0.65, next to a baseline measured in
   the same run: crowd-kit's MajorityVote on the same decisions. Prints how often each recovers the simulated truth.
   Target: under 3 s.
2. Paired comparisons of 12 models on 238 questions with 10,000 resamples (the shared bootstrap, then every pair's
   difference interval and McNemar), next to the unpaired intervals alone (the bootstrap and each model's percentile
   interval). Target: under 5 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from reviewer.review.quality import reliability  # noqa: E402
from reviewer.scoring.metrics import bootstrap_means, paired_comparisons, percentile_ci  # noqa: E402

ACCURACY = {"ann_a": 0.95, "ann_b": 0.85, "ann_c": 0.65}
REASONS = ("ambiguous_evidence", "wrong_reference", "format_wording")


def simulate(items: int, seed: int):
    rng = np.random.default_rng(seed)
    truth = rng.random(items) < 0.85
    reason = rng.integers(0, len(REASONS), size=items)
    decisions = []
    for i in range(items):
        for name, acc in ACCURACY.items():
            ok = truth[i] if rng.random() < acc else not truth[i]
            # a flag on a bad item names its true reason; a mistaken flag on a good one any reason
            r = [REASONS[rng.integers(len(REASONS)) if truth[i] else reason[i]]]
            decisions.append((f"q{i:05d}", name, "accept" if ok else "flag", [] if ok else r))
    return truth, decisions


def bench_reliability(items: int, seed: int) -> None:
    import pandas as pd
    from crowdkit.aggregation import MajorityVote

    truth, decisions = simulate(items, seed)
    t = time.perf_counter()
    df = pd.DataFrame([d[:3] for d in decisions], columns=["task", "worker", "label"])
    mv = MajorityVote().fit_predict(df)
    base = time.perf_counter() - t
    t = time.perf_counter()
    out = reliability(decisions)
    took = time.perf_counter() - t
    ids = [f"q{i:05d}" for i in range(items)]
    mv_right = float(np.mean((mv.reindex(ids).to_numpy() == "accept") == truth))
    post = np.array([out["items"][q]["posterior_acceptable"] for q in ids])
    ds_right = float(np.mean((post >= 0.5) == truth))
    rel = {n: round(a["reliability"], 3) for n, a in out["annotators"].items()}
    steps = out["models"]["dawid_skene"]["iterations"], out["models"]["per_reason"].get("iterations")
    print(f"reliability, {items} items x {len(ACCURACY)} annotators ({len(decisions)} decisions):")
    print(f"  review quality models  {took:7.2f} s   (Dawid-Skene steps: verdicts {steps[0]}, reasons {steps[1]})")
    print(f"  majority vote baseline {base:7.2f} s   ratio {took / base:.0f}x   target < 3 s")
    print(f"  truth recovered: Dawid-Skene {ds_right:.3f}, majority vote {mv_right:.3f}; reliabilities {rel}")


def bench_paired(models: int, questions: int, resamples: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.3, 0.8, models)
    x = (rng.random((questions, models)) < skill).astype(float)
    names = [f"model-{m:02d}" for m in range(models)]
    t = time.perf_counter()
    means = bootstrap_means(x, resamples, 0)
    percentile_ci(means)
    unpaired = time.perf_counter() - t
    t = time.perf_counter()
    means = bootstrap_means(x, resamples, 0)
    percentile_ci(means)
    pairs = paired_comparisons(x, means, names)
    paired = time.perf_counter() - t
    print(f"paired comparisons, {models} models x {questions} questions, {resamples} resamples ({len(pairs)} pairs):")
    print(f"  bootstrap + intervals + pairs {paired:7.2f} s   target < 5 s")
    print(f"  unpaired intervals baseline   {unpaired:7.2f} s   ratio {paired / unpaired:.1f}x")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--items", type=int, default=10000)
    p.add_argument("--models", type=int, default=12)
    p.add_argument("--questions", type=int, default=238)
    p.add_argument("--resamples", type=int, default=10000)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    bench_paired(a.models, a.questions, a.resamples, a.seed)
    bench_reliability(a.items, a.seed)


if __name__ == "__main__":
    main()
