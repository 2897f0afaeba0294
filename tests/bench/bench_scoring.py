"""Benchmark: scoring the seed-001 scale (12 models x 238 questions x 3 passes, record and closed book,
plus 30 pairs x 3 passes = 18,216 runs) with 10,000 bootstrap resamples.

Run: .venv/bin/python tests/bench/bench_scoring.py [--resamples 10000]
Prints each figure next to a straightforward per-question Python loop baseline and the ratio, and
checks that both give the same numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic  # noqa: E402

from reviewer.bank.io import load_bank  # noqa: E402
from reviewer.scoring.api import score  # noqa: E402
from reviewer.scoring.metrics import CHUNK, Questions, bootstrap_means, build_cube, percentile_ci  # noqa: E402
from reviewer.scoring.options import ScoringOptions
from reviewer.scoring.runs import load_runs  # noqa: E402


def loop_pass3(runs: list[dict], models: list[str], qids: list[str], passes: int) -> dict[str, list[int]]:
    """Baseline: per (model, question) a Python loop over the passes."""
    right = defaultdict(dict)
    for r in runs:
        if r["condition"] == "record":
            right[(r["model"], r["question"])][r["pass"]] = r["_right"]
    return {m: [int(all(right[(m, q)].get(k, False) for k in range(1, passes + 1))) for q in qids] for m in models}


def loop_bootstrap(p3: dict[str, list[int]], resamples: int, seed: int) -> dict[str, tuple[float, float]]:
    """Baseline: for each resample and model, a Python loop over the resampled questions (same draws)."""
    n = len(next(iter(p3.values())))
    rng = np.random.default_rng(seed)
    means: dict[str, list[float]] = {m: [] for m in p3}
    for start in range(0, resamples, CHUNK):
        idx = rng.integers(0, n, size=(min(CHUNK, resamples - start), n)).tolist()
        for row in idx:
            for m, values in p3.items():
                total = 0
                for i in row:
                    total += values[i]
                means[m].append(total / n)
    out = {}
    for m, v in means.items():
        lo, hi = np.percentile(v, [2.5, 97.5]) * 100
        out[m] = (float(lo), float(hi))
    return out


def vec_pass3(runs: list[dict], models: list[str], index: dict[str, int], passes: int) -> np.ndarray:
    """Vectorised: scatter the judged runs into a (model, question, pass) array, then all() over passes."""
    m_index = {m: i for i, m in enumerate(models)}
    record = [r for r in runs if r["condition"] == "record"]
    right = np.zeros((len(models), len(index), passes), dtype=bool)
    mi = np.fromiter((m_index[r["model"]] for r in record), np.intp, len(record))
    qi = np.fromiter((index[r["question"]] for r in record), np.intp, len(record))
    pi = np.fromiter((r["pass"] - 1 for r in record), np.intp, len(record))
    right[mi, qi, pi] = np.fromiter((r["_right"] for r in record), bool, len(record))
    return right.all(axis=2)


def timed(fn, repeat: int = 3):
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--resamples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bank_data = synthetic.make_bank(tmp / "bank")
        n_runs = synthetic.make_runs(bank_data, tmp / "runs.jsonl")
        print(
            f"synthetic bank: {len(bank_data['questions'])} questions, {len(bank_data['pairs'])} pairs, "
            f"{n_runs} runs, {args.resamples} resamples"
        )

        t_full, scores = timed(
            lambda: score(
                tmp / "bank",
                [tmp / "runs.jsonl"],
                tmp / "out",
                ScoringOptions(bootstrap=args.resamples, seed=args.seed),
                report=False,
            ),
            repeat=3,
        )
        t_report, _ = timed(
            lambda: score(
                tmp / "bank",
                [tmp / "runs.jsonl"],
                tmp / "out_report",
                ScoringOptions(bootstrap=args.resamples, seed=args.seed),
            ),
            repeat=1,
        )

        bank = load_bank(tmp / "bank")
        runset = load_runs([tmp / "runs.jsonl"], bank)
        qt = Questions.of(bank)
        models = runset.models
        scored_ids = [q for q, s in zip(qt.ids, qt.scored, strict=True) if s]
        for r in runset.runs:
            r["_conclusion"] = bank.question(r["question"])["conclusion"]
        record = [r for r in runset.runs if r["condition"] == "record"]

        t_cube, cube = timed(lambda: build_cube(record, models, qt.index, "question", 3))
        t_vec_p3, p3_all = timed(lambda: vec_pass3(runset.runs, models, qt.index, 3))
        t_loop_p3, loop_p3 = timed(lambda: loop_pass3(runset.runs, models, scored_ids, 3))
        vec_p3 = p3_all[:, qt.scored]
        assert np.array_equal(vec_p3, cube.all_right[:, qt.scored])
        assert all(list(vec_p3[m].astype(int)) == loop_p3[name] for m, name in enumerate(models)), "pass^3 differs"

        x = vec_p3.T.astype(float)
        t_vec_bs, means = timed(lambda: bootstrap_means(x, args.resamples, args.seed))
        ci = percentile_ci(means)
        t_loop_bs, loop_ci = timed(lambda: loop_bootstrap(loop_p3, args.resamples, args.seed), repeat=1)
        for m, name in enumerate(models):
            assert np.allclose(ci[:, m], loop_ci[name]), f"bootstrap interval differs for {name}"
            assert np.allclose(scores["models"][name]["record"]["pass3_ci"], loop_ci[name])

    rows = [
        ("pass^3 array (12 x 238 x 3)", t_vec_p3, t_loop_p3),
        (f"bootstrap {args.resamples} x 12 models", t_vec_bs, t_loop_bs),
        ("pass^3 + bootstrap", t_vec_p3 + t_vec_bs, t_loop_p3 + t_loop_bs),
    ]
    print(f"{'figure':<34} {'vectorised':>11} {'loop':>10} {'ratio':>8}")
    for name, vec, loop in rows:
        print(f"{name:<34} {vec:>10.3f}s {loop:>9.3f}s {loop / vec:>7.1f}x")
    print(f"{'full record cube (all 10 arrays)':<34} {t_cube:>10.3f}s   (pass^3 plus confidence, work, values)")
    print(
        f"{'full scoring to scores.json':<34} {t_full:>10.3f}s   (limit 10 s; includes bank hash check, run "
        "validation, judging, all metrics, regression)"
    )
    print(f"{'full scoring + report + figures':<34} {t_report:>10.3f}s")
    print("same pass^3 and same 95% intervals from both implementations: yes")
    print(
        json.dumps(
            {
                "runs": n_runs,
                "full_s": round(t_full, 3),
                "vectorised_s": round(t_vec_p3 + t_vec_bs, 3),
                "loop_s": round(t_loop_p3 + t_loop_bs, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
