"""Benchmark: the stage-1 agreement report for 10,000 items x 3 annotators (2 or 3 ratings per item, 5 flag
reasons, so 6 tables: accept/flag and one yes/no table per reason).

Run: .venv/bin/python tests/bench/bench_agreement.py [--items 10000] [--seed 0]
Prints agreement_report's time (every figure: percent agreement, Cohen per pair, Fleiss, Krippendorff, AC1) next to
a baseline measured in the same run: a plain per-item Python loop computing only percent agreement and Fleiss' kappa
by formula for the same 6 tables, and the ratio; checks that both give the same numbers. Also times a cold process
(imports of numpy, statsmodels, krippendorff and agreement included). Target: the report well under 2 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from reviewer.review.agreement import agreement_report  # noqa: E402

RATERS = ("ann", "bo", "cy")
REASONS = ("ambiguous_evidence", "wrong_reference", "format_wording", "other", "units")


def make_decisions(items: int, seed: int) -> list[tuple[str, str, str, list[str]]]:
    """Each item rated by 2 or 3 of the 3 annotators; ~8% of items have a real problem (one reason), which a rater
    flags with p 0.8 (adding a second reason with p 0.2); otherwise a rater flags by mistake with p 0.03."""
    rng = np.random.default_rng(seed)
    k = rng.integers(2, 4, size=items)
    problem = rng.random(items) < 0.08
    true_reason = rng.integers(0, len(REASONS), size=items)
    decisions = []
    for i in range(items):
        for r in rng.permutation(len(RATERS))[: k[i]]:
            if problem[i] and rng.random() < 0.8:
                flagged = {REASONS[true_reason[i]]}
                if rng.random() < 0.2:
                    flagged.add(REASONS[rng.integers(len(REASONS))])
            elif rng.random() < 0.03:
                flagged = {REASONS[rng.integers(len(REASONS))]}
            else:
                flagged = set()
            decisions.append((f"q{i:05d}", RATERS[r], "flag" if flagged else "accept", sorted(flagged)))
    return decisions


def loop_figures(decisions: list[tuple[str, str, str, list[str]]]) -> dict[str, tuple[float, float]]:
    """Baseline: group the labels by item in Python, then a per-item loop for percent agreement and Fleiss."""
    tables: dict[str, dict[str, dict[str, str]]] = {"overall": defaultdict(dict)}
    for reason in REASONS:
        tables[reason] = defaultdict(dict)
    for item, rater, verdict, flagged in decisions:
        tables["overall"][item][rater] = verdict
        for reason in REASONS:
            tables[reason][item][rater] = "yes" if verdict == "flag" and reason in flagged else "no"
    out = {}
    for name, by_item in tables.items():
        shares = []
        for labels in by_item.values():
            values = list(labels.values())
            n = len(values)
            if n < 2:
                continue
            agree = 0
            for a in range(n):
                for b in range(a + 1, n):
                    agree += values[a] == values[b]
            shares.append(agree / (n * (n - 1) / 2))
        percent = sum(shares) / len(shares)
        sizes = Counter(len(labels) for labels in by_item.values() if len(labels) >= 2)
        size = max(sizes, key=lambda s: (sizes[s], s))
        p_items, totals, n_items = 0.0, Counter(), 0
        for labels in by_item.values():
            if len(labels) != size:
                continue
            counts = Counter(labels.values())
            p_items += (sum(c * c for c in counts.values()) - size) / (size * (size - 1))
            totals.update(counts)
            n_items += 1
        p_bar = p_items / n_items
        p_e = sum((c / (n_items * size)) ** 2 for c in totals.values())
        out[name] = (percent, (p_bar - p_e) / (1 - p_e))
    return out


def timed(fn, repeat: int = 3):
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


COLD = """
import sys, time
t = time.perf_counter()
sys.path.insert(0, {root!r}); sys.path.insert(0, {bench!r})
from bench_agreement import make_decisions
decisions = make_decisions({items}, {seed})
t0 = time.perf_counter()
from reviewer.review.agreement import agreement_report
agreement_report(decisions, {reasons!r})
print(time.perf_counter() - t0)
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    decisions = make_decisions(args.items, args.seed)
    flags = sum(v == "flag" for _, _, v, _ in decisions)
    print(
        f"synthetic decisions: {args.items} items x {len(RATERS)} annotators, {len(decisions)} decisions "
        f"({flags} flags), {len(REASONS)} flag reasons -> {1 + len(REASONS)} tables"
    )

    code = COLD.format(
        root=str(ROOT), bench=str(Path(__file__).parent), items=args.items, seed=args.seed, reasons=REASONS
    )
    cold = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)

    t_vec, report = timed(lambda: agreement_report(decisions, REASONS), repeat=5)
    t_loop, loop = timed(lambda: loop_figures(decisions), repeat=3)
    tables = {"overall": report["overall"], **report["per_reason"]}
    for name, (percent, fleiss) in loop.items():
        assert np.isclose(tables[name]["percent_agreement"], percent), f"percent agreement differs for {name}"
        assert np.isclose(tables[name]["fleiss_kappa"], fleiss), f"Fleiss' kappa differs for {name}"

    print(f"{'figure':<44} {'vectorised':>11} {'loop':>10} {'ratio':>8}")
    print(
        f"{'agreement_report vs loop (6 tables)':<44} {t_vec:>10.3f}s {t_loop:>9.3f}s {t_loop / t_vec:>7.1f}x"
        "   (report: all figures; loop: percent agreement + Fleiss only)"
    )
    print(f"{'cold process: imports + agreement_report':<44} {cold:>10.3f}s   (limit 2 s)")
    o = report["overall"]
    print(
        f"overall: percent agreement {o['percent_agreement']:.4f}, Fleiss {o['fleiss_kappa']:.4f} "
        f"({o['fleiss_note']}), Krippendorff {o['krippendorff_alpha']:.4f}, AC1 {o['gwet_ac1']:.4f}"
    )
    print("same percent agreement and Fleiss' kappa from both implementations (6 tables): yes")
    print(
        json.dumps(
            {
                "decisions": len(decisions),
                "report_s": round(t_vec, 3),
                "loop_s": round(t_loop, 3),
                "cold_s": round(cold, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
