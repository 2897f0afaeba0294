"""Benchmark: the review core on a bank of 10,000 items x 3 annotators (k=2, so ~20,000 stage-1 decisions).

Run: .venv/bin/python tests/bench/bench_review.py [--items 10000] [--runs 10] [--keep]
Builds everything in a temporary folder through the public functions (write_bank, import_bank, add_user, assign,
next_item, decide, agreement) and prints each figure next to a baseline measured in the same run, the ratio, the
target and whether it is met:

- assignment wall time (median of 3, each on a fresh copy of the imported store); baseline: the same assignment
  rows inserted with one executemany into a fresh table without events.
- one durable stage-1 decision through `decide` (its checks, event and routing), p50/p95; baseline: the same
  INSERT into a decisions table without events, checks or triggers, each in its own committed transaction (same
  WAL mode and synchronous=FULL, a fresh file).
- `next_item`, p50/p95, at 5 points of each queue (0, 25, 50, 75 and 97% done); baseline: a bare
  `SELECT item FROM assignments WHERE user = ? ORDER BY rank LIMIT 1` at the same moments.
- the full `agreement` report through the API after ~20,000 decisions (first call with its imports, and warm);
  baseline: the same decisions read with plain SQL and a per-item Python loop computing percent agreement.
- CLI start-up: `reviewer --help` and `reviewer review decide ITEM --user U --accept` on the 10,000-item store,
  median and p95 of --runs runs; baseline `python -c pass`.
- every other review verb in a cold process on the same store (next, undo, queue, status, show, log, drafts,
  rule, verify-log: median of --runs runs, target 0.3 s) and a cold `reviewer review agreement` (target 2 s).
  The CLI runs with bytecode cached as an installed package has it (pip compiles it): PYTHONDONTWRITEBYTECODE
  is dropped and PYTHONPYCACHEPREFIX points into the temporary folder, one warm-up run first; without that
  every run recompiles the modules it imports (about 0.1-0.3 s more), which is not what a user sees.

Between the timed points the queues are filled through `decide` too, 500 decisions to an outer transaction (the
same checks, events and routing, one commit per 500) so that the run takes minutes, not a quarter of an hour.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

import bank_factory as bf  # noqa: E402

from reviewer.bank.io import BankContent, write_bank  # noqa: E402
from reviewer.review import api  # noqa: E402
from reviewer.review.banks import import_bank  # noqa: E402
from reviewer.store import Store  # noqa: E402

_SCRIPT = Path(sys.executable).with_name("reviewer")
REVIEWER = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "reviewer.cli"]
ANNOTATORS = ("ann", "bo", "cy")
BANK = "bench"
FLAG_REASONS = ("ambiguous_evidence", "wrong_reference", "format_wording", "other")
POINTS = (0.0, 0.25, 0.5, 0.75, 0.97)  # how far each queue is done when next_item and decide are timed
PER_POINT = 40  # timed (next_item, decide) pairs per annotator and point: 5 x 3 x 40 = 600
RESERVE = 12  # items of the first annotator's queue left for the CLI decide runs (1 warm-up + 10)
BULK = 500  # decisions per outer transaction while filling the queues


def pct(times: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(times)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def ms(x: float) -> str:
    return f"{x * 1000:.2f} ms"


def s(x: float) -> str:
    return f"{x:.3f} s"


def connect(path: Path) -> sqlite3.Connection:
    """A plain connection set up like the store's (WAL, synchronous=FULL, autocommit)."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = FULL")
    return con


def verdict(rng: random.Random) -> tuple[str, list[str] | None]:
    """~10% flags, one reason (sometimes two)."""
    if rng.random() < 0.1:
        reasons = {rng.choice(FLAG_REASONS)}
        if rng.random() < 0.2:
            reasons.add(rng.choice(FLAG_REASONS))
        return "flag", sorted(reasons)
    return "accept", None


# ----------------------------------------------------------------------------- baselines

PLAIN_DECISIONS = """CREATE TABLE decisions (
    id INTEGER PRIMARY KEY, item INTEGER NOT NULL, version INTEGER NOT NULL, user TEXT NOT NULL,
    stage INTEGER NOT NULL, verdict TEXT NOT NULL, reasons TEXT NOT NULL DEFAULT '[]', comment TEXT,
    correction TEXT, rationale TEXT, view TEXT, seconds REAL, retracts INTEGER, created TEXT NOT NULL)"""


def plain_assign(path: Path, rows: list[tuple]) -> float:
    con = connect(path)
    con.execute("DROP TABLE IF EXISTS assignments")
    con.execute("CREATE TABLE assignments (item INTEGER, user TEXT, rank REAL, created TEXT, PRIMARY KEY (item, user))")
    t = time.perf_counter()
    con.execute("BEGIN IMMEDIATE")
    con.executemany("INSERT INTO assignments (item, user, rank, created) VALUES (?, ?, ?, ?)", rows)
    con.execute("COMMIT")
    took = time.perf_counter() - t
    con.close()
    return took


def plain_insert(con: sqlite3.Connection, item: int, user: str, v: str, reasons: list[str] | None) -> float:
    t = time.perf_counter()
    con.execute("BEGIN IMMEDIATE")
    con.execute(
        "INSERT INTO decisions (item, version, user, stage, verdict, reasons, comment, correction, view, seconds, "
        "created) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)",
        [item, 1, user, v, json.dumps(reasons or []), None, None, None, None, "2026-12-01T00:00:00.000000Z"],
    )
    con.execute("COMMIT")
    return time.perf_counter() - t


def bare_next(store: Store, user: str) -> float:
    t = time.perf_counter()
    store.db.execute("SELECT item FROM assignments WHERE user = ? ORDER BY rank LIMIT 1", [user]).fetchone()
    return time.perf_counter() - t


def loop_percent_agreement(db: Path, bank: str) -> float:
    """Baseline: plain SQL for the stage-1 verdicts, then a per-item loop over the rater pairs."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT i.qid, d.user, d.verdict FROM decisions d JOIN items i ON i.id = d.item "
        "WHERE i.bank = ? AND d.stage = 1 AND d.verdict IN ('accept', 'flag') ORDER BY d.id",
        [bank],
    ).fetchall()
    con.close()
    by_item: dict[str, dict[str, str]] = defaultdict(dict)
    for qid, user, v in rows:
        by_item[qid][user] = v
    shares = []
    for labels in by_item.values():
        values = list(labels.values())
        n = len(values)
        if n < 2:
            continue
        agree = sum(values[a] == values[b] for a in range(n) for b in range(a + 1, n))
        shares.append(agree / (n * (n - 1) / 2))
    return sum(shares) / len(shares)


#: the CLI's environment: bytecode cached (see the module docstring), set by run()
CLI_ENV: dict[str, str] | None = None


def wall_times(cmd: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, env=CLI_ENV)
        times.append(time.perf_counter() - t)
    return times


# ----------------------------------------------------------------------------- the run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=10, help="runs of each CLI command")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_review_"))
    try:
        run(tmp, args)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run(tmp: Path, args: argparse.Namespace) -> None:
    rng = random.Random(0)
    db = tmp / "review.sqlite"
    plain = tmp / "plain.sqlite"

    # -- setup: a bank of n copies of one factory question, imported through import_bank
    t = time.perf_counter()
    base = bf.trend_question()
    write_bank(
        tmp / "bank",
        BankContent(
            BANK,
            "1",
            [{**base, "id": f"q{i:05d}"} for i in range(args.items)],
            [bf.site()],
            [],
            created="2026-12-01T00:00:00Z",
        ),
    )
    t_write = time.perf_counter() - t
    with Store(db) as store:
        api.add_user(store, "mia", "maintainer")
        for name in ANNOTATORS:
            api.add_user(store, name, "annotator", by="mia")
        t = time.perf_counter()
        import_bank(store, tmp / "bank", user="mia")
        t_import = time.perf_counter() - t
    print(
        f"setup: write_bank of {args.items} questions {t_write:.1f} s, import_bank {t_import:.1f} s "
        f"(every question schema-checked); store {db}"
    )

    # -- assignment: 3 runs, each on a fresh copy of the imported store (the last on the one used below)
    copies = [tmp / f"assign{i}.sqlite" for i in range(2)]
    for c in copies:
        shutil.copyfile(db, c)
    t_assign = []
    for path in [*copies, db]:
        with Store(path) as store:
            t = time.perf_counter()
            out = api.assign(store, BANK, annotators=list(ANNOTATORS), k=2, seed=1, user="mia")
            t_assign.append(time.perf_counter() - t)
    for c in copies:
        c.unlink()
    store = Store(db)
    rows = store.db.execute("SELECT item, user, rank, created FROM assignments").fetchall()
    t_plain_assign = statistics.median(plain_assign(plain, rows) for _ in range(3))
    print(f"assigned {out['items']} items x k=2 to {len(ANNOTATORS)} annotators: {out['per_annotator']}")

    # -- decisions and next_item at 5 points of each queue; the queues filled through decide in between
    plain_con = connect(plain)
    plain_con.execute("DROP TABLE IF EXISTS decisions")
    plain_con.execute(PLAIN_DECISIONS)
    order = {u: [r["item"] for r in api.queue(store, BANK, user=u)] for u in ANNOTATORS}
    done = dict.fromkeys(ANNOTATORS, 0)
    t_decide, t_plain, t_next, t_bare = [], [], [], []
    t_bulk, n_bulk = 0.0, 0

    def fill(user: str, upto: int) -> None:
        nonlocal t_bulk, n_bulk
        t = time.perf_counter()
        while done[user] < upto:
            with store.transaction():
                for key in order[user][done[user] : min(upto, done[user] + BULK)]:
                    v, reasons = verdict(rng)
                    api.decide(store, key, api.Decision(v, reasons=reasons), user=user)
                    done[user] += 1
                    n_bulk += 1
        t_bulk += time.perf_counter() - t

    item_id = dict(store.db.execute("SELECT bank || '/' || qid, id FROM items").fetchall())
    for point in POINTS:
        for u in ANNOTATORS:
            fill(u, min(int(point * len(order[u])), len(order[u]) - PER_POINT - RESERVE))
        for _ in range(PER_POINT):
            for u in ANNOTATORS:
                t = time.perf_counter()
                view = api.next_item(store, BANK, user=u)
                t_next.append(time.perf_counter() - t)
                t_bare.append(bare_next(store, u))
                assert view is not None and view["item"] == order[u][done[u]], (u, view and view["item"])
                v, reasons = verdict(rng)
                t = time.perf_counter()
                api.decide(store, view["item"], api.Decision(v, reasons=reasons), user=u)
                t_decide.append(time.perf_counter() - t)
                done[u] += 1
                t_plain.append(plain_insert(plain_con, item_id[view["item"]], u, v, reasons))
    for u in ANNOTATORS:
        fill(u, len(order[u]) - (RESERVE if u == ANNOTATORS[0] else 0))
    plain_con.close()
    n_decisions = store.db.execute("SELECT count(*) FROM decisions").fetchone()[0]
    states = dict(store.db.execute("SELECT state, count(*) FROM items GROUP BY state").fetchall())
    print(
        f"{n_decisions} stage-1 decisions made ({len(t_decide)} timed one by one, {n_bulk} in transactions of "
        f"{BULK}: {t_bulk / max(n_bulk, 1) * 1000:.2f} ms each); item states {states}"
    )

    # -- the agreement report through the API
    t = time.perf_counter()
    report = api.agreement(store, BANK, user="mia")
    t_agree_cold = time.perf_counter() - t
    warm = []
    for _ in range(3):
        t = time.perf_counter()
        report = api.agreement(store, BANK, user="mia")
        warm.append(time.perf_counter() - t)
    t_agree = statistics.median(warm)
    loop = []
    for _ in range(3):
        t = time.perf_counter()
        percent = loop_percent_agreement(db, BANK)
        loop.append(time.perf_counter() - t)
    t_loop = statistics.median(loop)
    assert math.isclose(report["overall"]["percent_agreement"], percent), (report["overall"], percent)
    store.close()

    # -- CLI start-up (bytecode cached as an install has it; one warm-up run of each command)
    global CLI_ENV
    CLI_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    CLI_ENV["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    baseline = wall_times([sys.executable, "-c", "pass"], args.runs + 1)[1:]
    helps = wall_times([*REVIEWER, "--help"], args.runs + 1)[1:]
    reserved = order[ANNOTATORS[0]][-RESERVE:]
    decides = []
    for key in reserved[: args.runs + 1]:
        decides += wall_times(
            [*REVIEWER, "--db", str(db), "review", "decide", key, "--user", ANNOTATORS[0], "--accept"], 1
        )
    decides = decides[1:]
    db_arg = ["--db", str(db), "review"]
    first = order[ANNOTATORS[0]][0]
    verbs = {
        "undo": ["undo", BANK, "--user", ANNOTATORS[0]],  # each run takes back one of the decides above
        "next": ["next", BANK, "--user", ANNOTATORS[0]],
        "queue": ["queue", BANK, "--user", ANNOTATORS[0]],
        "status": ["status", BANK, "--user", "mia"],
        "show": ["show", first, "--user", "eve"],
        "log": ["log", first, "--user", "mia"],
        "drafts": ["drafts", BANK, "--user", "mia"],
        "rule": ["rule", BANK, "--user", "mia"],
        # checks the whole hash chain (~50,000 events): work in proportion to the log, no start-up target
        "verify-log": ["verify-log", "--user", "mia"],
    }
    with Store(db) as s2:
        api.add_user(s2, "eve", "expert", by="mia")
    verb_times = {}
    for name, argv in verbs.items():
        runs = min(args.runs, len(decides)) if name == "undo" else args.runs
        verb_times[name] = wall_times([*REVIEWER, *db_arg, *argv], runs + (name != "undo"))[name != "undo" :]
    agreement_cold = wall_times([*REVIEWER, *db_arg, "agreement", BANK, "--user", "mia"], args.runs + 1)[1:]

    # -- the table
    base_med = statistics.median(baseline)
    figures = [
        # label, value, baseline, target (s), format
        (f"assignment, {args.items:,} items x 3 (k=2)", statistics.median(t_assign), t_plain_assign, 1.0, s),
        ("decide p50", pct(t_decide, 0.5), pct(t_plain, 0.5), None, ms),
        ("decide p95", pct(t_decide, 0.95), pct(t_plain, 0.95), 0.020, ms),
        ("next_item p50", pct(t_next, 0.5), pct(t_bare, 0.5), None, ms),
        ("next_item p95", pct(t_next, 0.95), pct(t_bare, 0.95), 0.020, ms),
        ("agreement (first call, with imports)", t_agree_cold, t_loop, 2.0, s),
        ("agreement (warm, median of 3)", t_agree, t_loop, 2.0, s),
        ("reviewer --help (median)", statistics.median(helps), base_med, 0.3, s),
        ("reviewer --help (p95)", pct(helps, 0.95), pct(baseline, 0.95), None, s),
        ("reviewer review decide (median)", statistics.median(decides), base_med, 0.3, s),
        ("reviewer review decide (p95)", pct(decides, 0.95), pct(baseline, 0.95), None, s),
        *[
            (
                f"reviewer review {name} (median)",
                statistics.median(t),
                base_med,
                0.3 if name != "verify-log" else None,
                s,
            )
            for name, t in verb_times.items()
        ],
        ("reviewer review agreement, cold (median)", statistics.median(agreement_cold), base_med, 2.0, s),
    ]
    baselines = {
        "assignment": "executemany of the same rows into a fresh table, no events",
        "decide": "the same INSERT, no event/checks, own committed transaction (WAL, synchronous=FULL)",
        "next_item": "bare SELECT ... ORDER BY rank LIMIT 1 on assignments",
        "agreement": "plain SQL + per-item Python loop, percent agreement only",
        "reviewer": f"python -c pass ({args.runs} runs)",
    }
    print()
    print(f"{'figure':<40} {'value':>11} {'baseline':>11} {'ratio':>8} {'target':>9}  met")
    ok = True
    summary = {}
    for label, value, base, target, fmt in figures:
        met = "-" if target is None else "yes" if value < target else "NO"
        ok = ok and met != "NO"
        tgt = "" if target is None else f"< {target * 1000:g} ms" if fmt is ms else f"< {target:g} s"
        print(f"{label:<40} {fmt(value):>11} {fmt(base):>11} {value / base:>7.1f}x {tgt:>9}  {met}")
        summary[label] = {"value_s": round(value, 5), "baseline_s": round(base, 5)}
    print()
    for name, text in baselines.items():
        print(f"baseline of {name}: {text}")
    print(
        f"next_item and decide timed at {len(POINTS)} points of each queue ({', '.join(f'{p:.0%}' for p in POINTS)} "
        f"done), {PER_POINT} calls per annotator each: {len(t_next)} calls; agreement over {n_decisions} decisions, "
        f"same percent agreement from both ({percent:.4f})"
    )
    per = PER_POINT * len(ANNOTATORS)
    by_point = [t_next[i * per : (i + 1) * per] for i in range(len(POINTS))]
    print(
        "next_item p50 / p95 by how far the queues are done: "
        + ", ".join(f"{p:.0%} {ms(pct(x, 0.5))} / {ms(pct(x, 0.95))}" for p, x in zip(POINTS, by_point, strict=True))
    )
    print(f"every target met: {'yes' if ok else 'no'}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
