"""Durability of the review store under real processes: a decision confirmed to the annotator survives a SIGKILL of
the process that made it; six writers at once neither fail nor lose or duplicate anything; eight CLI imports into a
store that does not exist yet all succeed.

The children are real interpreters running reviewer.review.api (or the `reviewer` console script) on one SQLite
file; the parent checks the file afterwards with plain sqlite3 and through the API.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import bank_factory as bf

from reviewer import DB_DIR
from reviewer.bank.io import BankContent, write_bank
from reviewer.review import api
from reviewer.review.banks import import_bank
from reviewer.store import APPLICATION_ID, Store, migrations

_SCRIPT = Path(sys.executable).with_name("reviewer")
REVIEWER = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "reviewer.cli"]
#: children must not pick up a user from the environment of whoever runs the tests
ENV = {k: v for k, v in os.environ.items() if k != "REVIEWER_USER"}

# The child processes. One script, several modes; every line it prints is flushed at once, so a line the parent
# read is a call that returned in the child.
CHILD = r"""
import json, os, random, sys, time
from reviewer.errors import ReviewError
from reviewer.review import api
from reviewer.store import Store

mode, path, bank, arg = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
store = Store(path)

def say(*parts):
    print(*parts, flush=True)

def wait_for_go():
    say("ready")
    while not os.path.exists(arg["go"]):
        time.sleep(0.005)

def verdict(rng):
    if rng.random() < arg.get("flag_share", 0.3):
        return "flag", [rng.choice(["ambiguous_evidence", "wrong_reference", "format_wording"])]
    return "accept", None

if mode == "kill":
    # decide through the annotators' queues until killed; each confirmed decision is one line
    rng = random.Random(arg["seed"])
    users = arg["users"]
    while True:
        progressed = False
        for user in users:
            view = api.next_item(store, bank, user=user)
            if view is None:
                continue
            v, reasons = verdict(rng)
            out = api.decide(store, view["item"], api.Decision(v, reasons=reasons), user=user)
            say("confirmed", out["decision"], out["item"])
            progressed = True
        if not progressed:
            say("exhausted")
            sys.exit(3)

elif mode == "annotate":
    rng = random.Random(arg["seed"])
    wait_for_go()
    for _ in range(arg["n"]):
        view = api.next_item(store, bank, user=arg["user"])
        if view is None:
            say("exhausted")
            sys.exit(3)
        v, reasons = verdict(rng)
        out = api.decide(store, view["item"], api.Decision(v, reasons=reasons), user=arg["user"])
        say("decided", out["decision"], out["item"])

elif mode == "undo":
    # pairs: decide one item and keep it, decide the next and take that one back
    rng = random.Random(arg["seed"])
    wait_for_go()
    for _ in range(arg["n"]):
        for keep in (True, False):
            view = api.next_item(store, bank, user=arg["user"])
            if view is None:
                say("exhausted")
                sys.exit(3)
            v, reasons = verdict(rng)
            out = api.decide(store, view["item"], api.Decision(v, reasons=reasons), user=arg["user"])
            say("decided", out["decision"], out["item"])
        try:
            out = api.undo(store, bank, user=arg["user"])
            say("undone", out["undone"], out["item"])
        except ReviewError as exc:  # the expert adjudicated the item in between: a legal refusal
            say("refused-undo", json.dumps(str(exc)))

elif mode == "expert":
    # adjudicate whatever reaches the queue, until the parent says stop and the queue is empty
    wait_for_go()
    done, deadline = 0, time.monotonic() + 120
    while done < arg["max"] and time.monotonic() < deadline:
        rows = api.queue(store, bank, user=arg["user"])
        if not rows:
            if os.path.exists(arg["stop"]):
                break
            time.sleep(0.02)
            continue
        row = rows[0]
        try:
            if row["kind"] == "audit" or done % 3 == 0:
                out = api.adjudicate(store, row["item"], api.Decision("accept", rationale="fine as is"), user=arg["user"])
            else:
                out = api.adjudicate(
                    store, row["item"], api.Decision("reject", reasons=["unfixable_evidence"],
                    rationale="cannot be settled"), user=arg["user"],
                )
        except ReviewError as exc:  # an undo sent the item back to stage 1 in between
            say("refused-adjudicate", json.dumps(str(exc)))
            continue
        say("adjudicated", out["decision"], out["item"], out["verdict"])
        done += 1
    else:
        if done < arg["max"]:
            say("deadline")
            sys.exit(4)
else:
    raise SystemExit(f"unknown mode {mode}")
store.close()
"""


# ----------------------------------------------------------------------------- helpers


def _write_bank(folder: Path, name: str, n: int) -> Path:
    """A bank of n copies of the factory's trend question with their own ids."""
    base = bf.trend_question()
    questions = [{**base, "id": f"q{i:04d}"} for i in range(n)]
    write_bank(folder, BankContent(name, "1", questions, [bf.site()], [], created="2026-11-30T12:00:00Z"))
    return folder


def _review_store(path: Path, folder: Path, annotators: list[str], *, k: int, experts: tuple[str, ...] = ()) -> str:
    """A store with one imported bank assigned to the annotators; returns the bank name."""
    with Store(path) as store:
        api.add_user(store, "mia", "maintainer")
        for name in annotators:
            api.add_user(store, name, "annotator", by="mia")
        for name in experts:
            api.add_user(store, name, "expert", by="mia")
        bank, _ = import_bank(store, folder, user="mia")
        api.assign(store, bank, annotators=annotators, k=k, seed=1, user="mia")
    return bank


def _child(tmp_path: Path, mode: str, path: Path, bank: str, arg: dict, **popen) -> subprocess.Popen:
    script = tmp_path / "child.py"
    if not script.exists():
        script.write_text(CHILD, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, str(script), mode, str(path), bank, json.dumps(arg)], env=ENV, cwd=tmp_path, **popen
    )


class LineReader:
    """Whole lines from a child's stdout pipe as they arrive (non-blocking, with a timeout)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc, self.buf, self.lines = proc, b"", []

    def _pump(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return True
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            return False
        self.buf += chunk
        *whole, self.buf = self.buf.split(b"\n")
        self.lines.extend(w.decode() for w in whole)
        return True

    def until(self, count: int, timeout: float = 30.0) -> None:
        """Read until `count` lines arrived in all (or the child ended / the timeout passed)."""
        deadline = time.monotonic() + timeout
        while len(self.lines) < count and time.monotonic() < deadline:
            if not self._pump(max(0.0, deadline - time.monotonic())):
                return

    def rest(self) -> None:
        """Everything the child wrote before it ended (call after it ended)."""
        while self._pump(5.0):
            pass


def _integrity(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


def _decisions(store: Store) -> dict[int, str]:
    """decision id -> 'BANK/QID' of every decision in the store."""
    return dict(
        store.db.execute(
            "SELECT d.id, i.bank || '/' || i.qid FROM decisions d JOIN items i ON i.id = d.item"
        ).fetchall()
    )


def _event_decisions(store: Store, action: str) -> Counter:
    """How many events of an action name each decision id (detail.decision)."""
    return Counter(
        r[0]
        for r in store.db.execute(
            "SELECT json_extract(detail, '$.decision') FROM events WHERE action = ?", [action]
        ).fetchall()
    )


# ----------------------------------------------------------------------------- kill safety

KILLS = 50


def test_confirmed_decisions_survive_sigkill(tmp_path):
    """50 children decide in a loop and are killed at random points (while starting, between calls, inside a
    write); every decision a child printed as confirmed is in the store afterwards, and the store is sound."""
    path = tmp_path / "review.sqlite"
    annotators = ["a1", "a2", "a3", "a4"]
    # 800 assignments each: a child on a fast machine makes a dozen or more decisions before its kill (400 items ran
    # out on a quiet machine after ~37 runs)
    bank = _review_store(path, _write_bank(tmp_path / "bank", "kill", 1600), annotators, k=2)
    rng = random.Random(20261201)
    confirmed: dict[int, str] = {}
    modes = Counter()
    for run in range(KILLS):
        users = [annotators[run % len(annotators)]]
        proc = _child(tmp_path, "kill", path, bank, {"seed": run, "users": users}, stdout=subprocess.PIPE)
        reader = LineReader(proc)
        mode = rng.choice(["lines", "lines", "lines+ms", "ms"])
        modes[mode] += 1
        if mode == "ms":  # anywhere from interpreter start-up to a few decisions in
            time.sleep(rng.uniform(0.0, 0.35))
        else:
            reader.until(rng.randint(0, 6))
            if mode == "lines+ms":
                time.sleep(rng.uniform(0.0, 0.008))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        reader.rest()
        proc.stdout.close()
        assert "exhausted" not in reader.lines, "the store ran out of items: make the bank larger"
        assert proc.returncode == -signal.SIGKILL, f"run {run}: child ended by itself ({proc.returncode})"
        mine = {}
        for line in reader.lines:
            word, decision, item = line.split()
            assert word == "confirmed", line
            mine[int(decision)] = item
        confirmed.update(mine)

        assert _integrity(path) == "ok", f"run {run}"
        with Store(path) as store:
            stored = _decisions(store)
            lost = {d: i for d, i in confirmed.items() if stored.get(d) != i}
            assert not lost, f"run {run}: confirmed decisions not in the store: {lost}"
            # a decision and its event land together or not at all
            events = _event_decisions(store, "decide")
            assert set(events) == set(stored), f"run {run}: decisions and decide events differ"
            assert all(n == 1 for n in events.values()), f"run {run}: a decision with several events"
            api.verify_chain(store)
            per_item = store.db.execute(
                "SELECT item, user, count(*) FROM decisions GROUP BY item, user HAVING count(*) > 1"
            ).fetchall()
            assert not per_item, f"run {run}: an annotator decided an item twice: {per_item}"
    print(f"{KILLS} kills {dict(modes)}: {len(confirmed)} confirmed decisions, {len(stored)} in the store")
    assert len(confirmed) >= KILLS, f"too few decisions confirmed before the kills ({len(confirmed)})"
    assert modes["ms"] and modes["lines"], modes


# ----------------------------------------------------------------------------- concurrent writers


def _parse(lines: list[str]) -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for line in lines:
        word, *rest = line.split(" ", 2)
        if word in ("decided", "undone", "adjudicated"):
            out[word].append((int(rest[0]), rest[1].split()[0]))
        elif word.startswith("refused"):
            out[word].append((0, line))
    return out


def test_six_writers_at_once(tmp_path):
    """4 annotators decide, a 5th decides and undoes, an expert adjudicates what reaches its queue, all at once."""
    path = tmp_path / "review.sqlite"
    annotators = ["ann", "bo", "cy", "di", "eve"]
    bank = _review_store(path, _write_bank(tmp_path / "bank", "busy", 60), annotators, k=2, experts=("xu",))
    go, stop = tmp_path / "go", tmp_path / "stop"
    plan = {name: 20 for name in annotators[:4]}  # 24 items each: never runs out
    procs: dict[str, subprocess.Popen] = {}
    for i, name in enumerate(annotators[:4]):
        procs[name] = _child(
            tmp_path,
            "annotate",
            path,
            bank,
            {"user": name, "n": plan[name], "seed": i, "go": str(go)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
    procs["eve"] = _child(
        tmp_path,
        "undo",
        path,
        bank,
        {"user": "eve", "n": 10, "seed": 9, "go": str(go)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    procs["xu"] = _child(
        tmp_path,
        "expert",
        path,
        bank,
        {"user": "xu", "max": 40, "go": str(go), "stop": str(stop)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    readers = {name: LineReader(p) for name, p in procs.items()}
    for name, reader in readers.items():
        reader.until(1, timeout=60)
        assert reader.lines[:1] == ["ready"], (name, reader.lines, procs[name].poll())
    go.touch()  # everyone starts writing at the same moment
    for name in annotators:
        procs[name].wait(timeout=120)
    stop.touch()
    procs["xu"].wait(timeout=120)
    outputs = {}
    for name, reader in readers.items():
        reader.rest()
        procs[name].stdout.close()
        outputs[name] = "\n".join(reader.lines + [reader.buf.decode()])
    for name, proc in procs.items():
        text = outputs[name]
        assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{text}"
        assert "database is locked" not in text and "Traceback" not in text, f"{name}:\n{text}"

    parsed = {name: _parse(readers[name].lines) for name in procs}
    decided = {d: i for name in annotators for d, i in parsed[name]["decided"]}
    undone = {d: i for d, i in parsed["eve"]["undone"]}
    adjudicated = {d: i for d, i in parsed["xu"]["adjudicated"]}
    for name in annotators[:4]:
        assert len(parsed[name]["decided"]) == plan[name], name
    assert len(parsed["eve"]["decided"]) == 20
    assert len(undone) + len(parsed["eve"]["refused-undo"]) == 10
    print(
        f"decided {len(decided)}, undone {len(undone)} (refused {len(parsed['eve']['refused-undo'])}), adjudicated "
        f"{len(adjudicated)} (refused {len(parsed['xu']['refused-adjudicate'])})"
    )
    assert undone, "no undo went through"
    assert adjudicated, "nothing reached the expert while the annotators worked"

    assert _integrity(path) == "ok"
    with Store(path) as store:
        api.verify_chain(store)
        rows = list(
            store.db.query("SELECT d.*, i.bank || '/' || i.qid AS key FROM decisions d JOIN items i ON i.id = d.item")
        )
        assert len(rows) == len(decided) + len(undone) + len(adjudicated)
        stage1 = {r["id"]: r["key"] for r in rows if r["stage"] == 1 and r["verdict"] != "retract"}
        retracts = {r["retracts"]: r["key"] for r in rows if r["verdict"] == "retract"}
        stage2 = {r["id"]: r["key"] for r in rows if r["stage"] == 2}
        assert stage1 == decided
        assert retracts == undone
        assert stage2 == adjudicated
        assert _event_decisions(store, "decide") == Counter(decided.keys())
        assert _event_decisions(store, "adjudicate") == Counter(adjudicated.keys())
        assert store.db.execute("SELECT count(*) FROM events WHERE action = 'undo'").fetchone()[0] == len(undone)

        # every item's state follows from its decisions
        assigned = defaultdict(set)
        for item, user in store.db.execute("SELECT item, user FROM assignments"):
            assigned[item].add(user)
        items = {r["id"]: r for r in store.db.query("SELECT id, qid, state, current_version FROM items")}
        retracted = {r["retracts"] for r in rows if r["retracts"]}
        effective = defaultdict(list)
        final = defaultdict(list)
        for r in rows:
            if r["id"] in retracted or r["verdict"] == "retract" or r["version"] != items[r["item"]]["current_version"]:
                continue
            (effective if r["stage"] == 1 else final)[r["item"]].append(r)
        for item_id, item in items.items():
            eff = effective[item_id]
            users = [r["user"] for r in eff]
            where = f"item {item['qid']} ({item['state']}): {[(r['user'], r['verdict']) for r in eff]}"
            assert len(users) == len(set(users)) <= len(assigned[item_id]) == 2, where
            assert set(users) <= assigned[item_id], where
            if item["state"] == "in_review":
                assert len(eff) < 2 and not final[item_id], where
            elif item["state"] == "consensus_accepted":
                assert len(eff) == 2 and all(r["verdict"] == "accept" for r in eff) and not final[item_id], where
            elif item["state"] == "flagged":
                assert len(eff) == 2 and any(r["verdict"] == "flag" for r in eff) and not final[item_id], where
            elif item["state"] in ("accepted", "rejected"):
                assert len(eff) == 2, where
                assert [r["verdict"] for r in final[item_id]] == [item["state"][:-2]], where
            else:
                raise AssertionError(f"unexpected state: {where}")


# ----------------------------------------------------------------------------- a fresh store, 8 creators

ROUNDS = 4


def test_eight_cli_imports_create_one_store(tmp_path):
    """8 `reviewer bank import` started together on a store file that does not exist yet all succeed, in each of
    4 rounds (issue: 1-3 of them exited 2 with 'database is locked' or 'UNIQUE constraint failed'; before 0cf4b2d
    about 1 round in 6 had one exit 2 refusing the new store as another application's file)."""
    folders = [_write_bank(tmp_path / f"bank{j}", f"bank{j}", 5) for j in range(8)]
    for r in range(ROUNDS):
        path = tmp_path / f"round{r}" / "new.sqlite"
        assert not path.exists()
        procs = [
            subprocess.Popen(
                [*REVIEWER, "--db", str(path), "bank", "import", str(folder)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=ENV,
            )
            for folder in folders
        ]
        outs = [p.communicate(timeout=120) for p in procs]
        failed = [(p.returncode, err.strip()) for p, (_, err) in zip(procs, outs, strict=True) if p.returncode]
        assert not failed, f"round {r}: {len(failed)} of 8 imports failed: {failed}"
        con = sqlite3.connect(path)
        try:
            assert con.execute("PRAGMA user_version").fetchone()[0] == len(list((DB_DIR / "migrations").glob("*")))
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            banks = {r[0] for r in con.execute("SELECT name FROM banks")}
            assert banks == {f"bank{j}" for j in range(8)}
            counts = dict(con.execute("SELECT bank, count(*) FROM items GROUP BY bank").fetchall())
            assert counts == {f"bank{j}": 5 for j in range(8)}
        finally:
            con.close()
        with Store(path) as store:
            assert api.verify_chain(store)[0] == 8 * 5 + 8  # item_add per question, bank_import per bank


class _Rows:
    """Rows already fetched, standing in for the cursor of a recognition read."""

    def __init__(self, rows: list) -> None:
        self.rows = rows

    def fetchone(self):
        return self.rows[0] if self.rows else None

    def fetchall(self):
        return self.rows

    def __iter__(self):
        return iter(self.rows)


RECOGNITION_READS = ("PRAGMA application_id", "PRAGMA user_version", "SELECT name FROM sqlite_master")


def test_new_store_migrated_by_another_process_while_it_is_recognised(tmp_path, monkeypatch):
    """The interleaving behind the failures of the test above, made deterministic: process A makes its first
    recognition read of the new file (empty); process B creates and migrates the store; A makes the rest of its
    reads. Reads in separate autocommit statements let B get in between, and A refused the half-seen store as
    another application's file (fixed in 0cf4b2d: one read transaction, so B waits for A's reads to end)."""
    import threading

    import reviewer.store as store_mod

    monkeypatch.setattr(store_mod, "BUSY_TIMEOUT_S", 10.0)  # a wrong interleaving fails instead of hanging
    path = tmp_path / "new.sqlite"
    real_connect = sqlite3.connect
    fired, b_errors = [], []

    def process_b() -> None:
        try:
            Store(path).close()
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            b_errors.append(exc)

    class Racing(sqlite3.Connection):
        def execute(self, sql, *args):
            if fired or not sql.startswith(RECOGNITION_READS):
                return super().execute(sql, *args)
            rows = super().execute(sql, *args).fetchall()  # no statement left open
            b = threading.Thread(target=process_b)
            fired.append(b)
            b.start()
            b.join(1.5)  # B completes at once unless A's reads hold a read lock (then B waits for them)
            return _Rows(rows)

    def connect(*args, **kwargs):
        if fired:
            return real_connect(*args, **kwargs)
        return real_connect(*args, factory=Racing, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    Store(path).close()  # process A
    assert len(fired) == 1, "the recognition reads were not reached"
    fired[0].join(30)
    assert not fired[0].is_alive() and not b_errors, b_errors
    with Store(path) as store:
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == len(migrations())
        assert store.db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
