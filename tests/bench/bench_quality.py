"""Benchmark: `reviewer review quality` on 10,000 items x 3 annotators, and paired comparisons of 12 models.

Run: .venv/bin/python tests/bench/bench_quality.py [--items 10000] [--models 12] [--questions 238] [--resamples 10000]
     [--runs 5] [--keep DIR] [--parts paired,models,verb]

1. Paired comparisons of 12 models on 238 questions with 10,000 resamples (the shared bootstrap, then every pair's
   difference interval and McNemar), next to the unpaired intervals alone (the bootstrap and each model's percentile
   interval). Target: under 5 s.
2. `reliability` in process (crowd-kit's Dawid-Skene over the verdicts, and also over the first flag reasons as
   --json and --csv ask) on 10,000 items x 3 annotators of accuracy 0.95 / 0.85 / 0.65, next to crowd-kit's
   MajorityVote on the same decisions; how often each recovers the simulated truth; how far the 100-step posteriors
   are from a 1,000-step crowd-kit fit, and where crowd-kit's own rule would stop at tighter tols.
3. The verb as a user runs it: a store of 10,000 items x 3 annotators (k=3, 30,000 stage-1 decisions made through
   `decide`), then `reviewer review quality BANK` (and `--json`) each in a fresh process (cold: its imports and
   the store read included), median of --runs runs, wall and CPU seconds; baseline in the same run: a fresh
   Python process that reads the same decisions with sqlite3 and takes the majority vote per item. Target: under
   3 s. Beside it the floor of any verb built on crowd-kit's DawidSkene, in fresh processes too: importing pandas and
   crowd-kit alone, and reading the decisions with sqlite3 and fitting crowd-kit's DawidSkene with our settings
   (nothing of ours). The machine is shared: the load average is printed, and the CPU seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))
_SCRIPT = Path(sys.executable).with_name("reviewer")
REVIEWER = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "reviewer.cli"]

from reviewer.review.quality import NEVER_STOP, dawid_skene, quality_settings, reliability  # noqa: E402
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
    verdicts = reliability(decisions, reasons=False)
    plain = time.perf_counter() - t
    t = time.perf_counter()
    out = reliability(decisions)
    both = time.perf_counter() - t
    ids = [f"q{i:05d}" for i in range(items)]
    mv_right = float(np.mean((mv.reindex(ids).to_numpy() == "accept") == truth))
    post = np.array([out["items"][q]["posterior_acceptable"] for q in ids])
    ds_right = float(np.mean((post >= 0.5) == truth))
    rel = {n: round(a["reliability"], 3) for n, a in out["annotators"].items()}
    steps = verdicts["models"]["dawid_skene"]["iterations"], out["models"]["per_reason"].get("iterations")
    print(
        f"reliability in process (crowd-kit), {items} items x {len(ACCURACY)} annotators ({len(decisions)} decisions):"
    )
    print(f"  Dawid-Skene on the verdicts             {plain:7.2f} s   ({steps[0]} EM steps)")
    print(f"  and per reason (--json, --csv)          {both:7.2f} s   (reasons: {steps[1]} EM steps)")
    print(f"  majority vote baseline (crowd-kit)      {base:7.2f} s   ratio {plain / base:.0f}x")
    print(f"  truth recovered: Dawid-Skene {ds_right:.3f}, majority vote {mv_right:.3f}; reliabilities {rel}")
    # how far the step limit leaves the fit from converged: the same crowd-kit fit run for 1,000 steps (a negative tol:
    # crowd-kit stops on no rise); where its own rule would have stopped at tighter tols is read off that one history
    s = quality_settings()
    rows = [(q, w, v) for q, w, v, _ in decisions]
    t = time.perf_counter()
    ds, names, _ = dawid_skene(rows, {}, dataclasses.replace(s, ds_iterations=1000, ds_tol=-1.0))
    long_s = time.perf_counter() - t
    ref = dict(zip(names, ds.probas_[0].reindex(range(len(names))).to_numpy(), strict=True))
    off = max(abs(verdicts["items"][q]["posterior_acceptable"] - ref[q]) for q in ids)
    rises = np.diff(ds.loss_history_)
    stops = {tol: next((k + 2 for k, r in enumerate(rises) if r < tol), None) for tol in (1e-5, 1e-6, 1e-7)}
    said = ", ".join(f"tol {tol:g}: {'over 1000' if k is None else k} steps" for tol, k in stops.items())
    print(f"  the {s.ds_iterations}-step fit's posteriors are up to {off:.4f} from a 1,000-step fit ({long_s:.1f} s)")
    print(f"  crowd-kit's own rule on that run would stop at {said}")


def build_store(folder: Path, items: int, seed: int) -> Path:
    """A bank of `items` copies of one question, 3 annotators (k=3) whose verdicts follow ACCURACY, every decision
    through `decide` (500 to a transaction). Returns the store's path."""
    import bank_factory as bf

    from reviewer.bank.io import BankContent, write_bank
    from reviewer.review import api
    from reviewer.review.banks import import_bank
    from reviewer.store import Store

    db = folder / "review.sqlite"
    base = bf.trend_question()
    qs = [{**base, "id": f"q{i:05d}"} for i in range(items)]
    write_bank(folder / "bank", BankContent("bench", "1", qs, [bf.site()], [], created="2026-12-01T00:00:00Z"))
    rng = random.Random(seed)
    with Store(db) as store:
        api.add_user(store, "mia", "maintainer")
        for name in ACCURACY:
            api.add_user(store, name, "annotator", by="mia")
        import_bank(store, folder / "bank", user="mia")
        api.assign(store, "bench", annotators=list(ACCURACY), k=3, seed=seed, user="mia")
        keys = [f"bench/{q['id']}" for q in qs]
        for start in range(0, items, 500):
            with store.transaction():
                for key in keys[start : start + 500]:
                    good, reason = rng.random() < 0.85, rng.choice(REASONS)
                    for name, acc in ACCURACY.items():
                        ok = good if rng.random() < acc else not good
                        why = None if ok else [rng.choice(REASONS) if good else reason]
                        said = api.Decision("accept" if ok else "flag", reasons=why, seconds=rng.uniform(3, 30))
                        api.decide(store, key, said, user=name)
    return db


#: the floor of any `review quality` built on crowd-kit's DawidSkene: a fresh process reading the same decisions with
#: sqlite3, importing crowd-kit and fitting its DawidSkene for the steps of assets/review/quality.json (argv 2) with the
#: tol we give it (argv 3: -inf, so that it never stops on a fall of its bound)
CROWDKIT_FLOOR = """
import sqlite3, sys, warnings
import pandas as pd
from crowdkit.aggregation import DawidSkene
con = sqlite3.connect(sys.argv[1])
df = pd.DataFrame(con.execute("SELECT d.item, d.user, d.verdict = 'flag' FROM decisions d "
                              "WHERE d.stage = 1 AND d.verdict IN ('accept', 'flag')").fetchall(),
                  columns=["task", "worker", "label"]).sort_values(["task", "worker"], ignore_index=True)
df["worker"] = pd.factorize(df["worker"])[0]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print(len(DawidSkene(n_iter=int(sys.argv[2]), tol=float(sys.argv[3])).fit(df).loss_history_))
"""

#: the baseline: a fresh process reading the same decisions with sqlite3 and taking the majority vote per item
MAJORITY = """
import collections, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
votes = collections.defaultdict(collections.Counter)
for qid, verdict in con.execute("SELECT i.qid, d.verdict FROM decisions d JOIN items i ON i.id = d.item "
                                "WHERE d.stage = 1 AND d.verdict IN ('accept', 'flag')"):
    votes[qid][verdict] += 1
print(sum(v.most_common(1)[0][0] == "accept" for v in votes.values()))
"""


def cold(cmd: list[str], runs: int, env: dict[str, str]) -> tuple[float, float]:
    """Median wall and CPU seconds of `runs` fresh processes (one warm-up first: bytecode cached, files in the
    page cache, as a user's second run has them)."""
    walls, cpus = [], []
    for i in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, env=env)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i:
            walls.append(wall)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def bench_verb(items: int, runs: int, seed: int, keep: Path | None) -> None:
    folder = keep or Path(tempfile.mkdtemp(prefix="bench_quality_"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        db = folder / "review.sqlite"
        t = time.perf_counter()
        if not db.exists():
            build_store(folder, items, seed)
            print(f"store of {items} items x {len(ACCURACY)} annotators built in {time.perf_counter() - t:.0f} s: {db}")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        verb = [*REVIEWER, "--db", str(db), "review", "quality", "bench", "--user", "mia"]
        s = quality_settings()
        base = cold([sys.executable, "-c", MAJORITY, str(db)], runs, env)
        imports = cold([sys.executable, "-c", "import pandas, crowdkit.aggregation"], runs, env)
        floor = cold([sys.executable, "-c", CROWDKIT_FLOOR, str(db), str(s.ds_iterations), str(NEVER_STOP)], runs, env)
        plain = cold(verb, runs, env)
        as_json = cold([*verb, "--json"], runs, env)
        print(f"`reviewer review quality` cold, {items} items x {len(ACCURACY)} annotators (median of {runs}):")
        for label, (wall, cpu) in (("review quality", plain), ("review quality --json", as_json)):
            print(f"  {label:<31} {wall:6.2f} s wall {cpu:6.2f} s CPU   ratio {wall / base[0]:.1f}x   target < 3 s")
        print(f"  majority vote baseline process  {base[0]:6.2f} s wall {base[1]:6.2f} s CPU")
        print(
            f"  floor with crowd-kit: import    {imports[0]:6.2f} s wall {imports[1]:6.2f} s CPU   (pandas + crowdkit)"
        )
        print(
            f"  floor with crowd-kit: + its DS  {floor[0]:6.2f} s wall {floor[1]:6.2f} s CPU   "
            f"(sqlite3 read + DawidSkene, {s.ds_iterations} steps, tol {NEVER_STOP:g}; nothing of ours)"
        )
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)


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
    p.add_argument("--runs", type=int, default=5, help="fresh processes of each command")
    p.add_argument("--keep", type=Path, help="build the store in DIR and keep it (reused when it is there)")
    p.add_argument("--parts", default="paired,models,verb", help="which of paired, models, verb to run")
    a = p.parse_args()
    parts = set(a.parts.split(","))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if "paired" in parts:
        bench_paired(a.models, a.questions, a.resamples, a.seed)
    if "models" in parts:
        bench_reliability(a.items, a.seed)
    if "verb" in parts:
        bench_verb(a.items, a.runs, a.seed, a.keep)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
