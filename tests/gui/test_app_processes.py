"""Several processes on one store, the way a team works (issue 26): the real app in a child process decides by
keys while CLI processes read and decide on the same store; two annotators' apps at once, one quitting and
reopening. Every decision an app showed as saved is in the store, read by another process while the app is
still open and after it quits, with its own decision number, and SQLite's integrity check and the audit log
hold. (Before the fix the app kept 1 of 4 decisions once another process had opened the store.)"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gui.app_process import AppProcess
from tests.gui.test_review_dock import BANK, make_store

pytestmark = pytest.mark.gui


def _cli(db: Path, *args: str) -> str:
    """`reviewer ARGS` in a process of its own (another terminal)."""
    code = "import sys; from reviewer.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "--db", str(db), *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _stored(db: Path) -> dict[int, tuple[str, str, str]]:
    """decision number -> (user, question id, verdict), read from this process (not the app's)."""
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return {
            r[0]: (r[1], r[2], r[3])
            for r in con.execute("SELECT d.id, d.user, i.qid, d.verdict FROM decisions d JOIN items i ON i.id = d.item")
        }
    finally:
        con.close()


def _holds(db: Path, shown: list[tuple[str, str, str, int]]) -> None:
    stored = _stored(db)
    for user, verdict, qid, number in shown:
        assert stored.get(number) == (user, qid, verdict), (number, stored)
    assert len({number for *_, number in shown}) == len(shown)  # no decision number told twice


def test_the_app_keeps_every_decision_while_cli_processes_use_the_store(tmp_path, demo_db, demo_bank, demo_site):
    db = make_store(tmp_path / "review.sqlite", demo_db, demo_bank, demo_site)
    ann = AppProcess(db, "ann", tmp_path / "ann-home")
    shown: list[tuple[str, str, str, int]] = []
    try:
        for _ in range(4):
            verdict, qid, number = ann.press("A")
            shown.append(("ann", verdict, qid, number))
            _cli(db, "review", "status", BANK, "--user", "mia")  # the maintainer looks in between her keys
            nxt = json.loads(_cli(db, "review", "next", BANK, "--user", "bob", "--json"))
            out = _cli(db, "review", "decide", f"{BANK}/{nxt['id']}", "--accept", "--user", "bob")
            assert "decision" in out
        _holds(db, shown)  # while her app is still open
        ann.quit()
    finally:
        ann.kill()
    _holds(db, shown)
    stored = _stored(db)
    assert sum(1 for u, _q, _v in stored.values() if u == "bob") == 4
    assert "chain intact" in _cli(db, "review", "verify-log")


def test_two_annotators_apps_at_once_one_quitting_and_reopening(tmp_path, demo_db, demo_bank, demo_site):
    db = make_store(tmp_path / "review.sqlite", demo_db, demo_bank, demo_site)
    shown: list[tuple[str, str, str, int]] = []
    ann = AppProcess(db, "ann", tmp_path / "ann-home")
    bob = AppProcess(db, "bob", tmp_path / "bob-home")
    try:
        for app in (ann, bob, ann, bob):
            shown.append((app.user, *app.press("A")))
        ann.quit()
        for _ in range(2):
            shown.append(("bob", *bob.press("A")))
        _holds(db, shown)
        ann = AppProcess(db, "ann", tmp_path / "ann-home")  # she comes back
        for app in (ann, bob, ann):
            shown.append((app.user, *app.press("A")))
        _holds(db, shown)  # both still open
        ann.quit()
        bob.quit()
    finally:
        ann.kill()
        bob.kill()
    _holds(db, shown)
    assert len(_stored(db)) == len(shown) == 9
    assert "chain intact" in _cli(db, "review", "verify-log")
