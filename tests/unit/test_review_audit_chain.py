"""The audit chain covers what was decided (issue 26): each decision's seal rides in the event chain, so
`reviewer review verify-log` fails, exit 2, naming the first decision that was edited, added or deleted
behind the tool's back (its triggers dropped), and reports SQLite's integrity check."""

from __future__ import annotations

import sqlite3

import bank_factory as bf
import pytest

from reviewer.bank.io import BankContent, write_bank
from reviewer.cli import main
from reviewer.review import api
from reviewer.review.banks import import_bank
from reviewer.store import Store

BANK = "rb"


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "review.sqlite"
    qs = [bf.trend_question(f"q{i:03d}") for i in range(4)]
    write_bank(tmp_path / "bank", BankContent(BANK, "1", qs, [bf.site()], [], created="2026-11-30T12:00:00Z"))
    with Store(path) as store:
        api.add_user(store, "mia", "maintainer")
        for name in ("ann", "bob"):
            api.add_user(store, name, "annotator", by="mia")
        api.add_user(store, "eve", "expert", by="mia")
        import_bank(store, tmp_path / "bank", user="mia")
        api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
        for qid in ("q000", "q001", "q002"):
            api.decide(store, f"{BANK}/{qid}", api.Decision("accept"), user="ann")
        api.decide(store, f"{BANK}/q000", api.Decision("accept"), user="bob")
        api.decide(store, f"{BANK}/q001", api.Decision("flag", reasons=["wrong_reference"]), user="bob")
        api.undo(store, BANK, user="bob")  # a retraction is a decision too
        api.decide(store, f"{BANK}/q001", api.Decision("flag", reasons=["ambiguous_evidence"]), user="bob")
    return path


def _verify(capsys, path) -> tuple[int, str, str]:
    code = main(["--db", str(path), "review", "verify-log"])
    out = capsys.readouterr()
    return code, out.out, out.err


def _tamper(path, *sql: str) -> None:
    """What someone with write access to the file can do: drop the triggers and edit rows by hand."""
    con = sqlite3.connect(path)
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        con.execute(f"DROP TRIGGER {name}")
    for statement in sql:
        con.execute(statement)
    con.commit()
    con.close()


def test_an_untouched_store_verifies(store_path, capsys):
    code, out, err = _verify(capsys, store_path)
    assert code == 0 and err == ""
    assert "integrity check ok" in out and "chain intact" in out
    assert "7 decisions match their seals" in out  # 3 + 2 + the retraction + the new flag


def test_a_flipped_verdict_is_named(store_path, capsys):
    _tamper(store_path, "UPDATE decisions SET verdict = 'flag', reasons = '[\"wrong_reference\"]' WHERE id = 2")
    with Store(store_path) as store:
        api.verify_chain(store)  # the event chain alone still holds: only the seals see the edit
    code, out, err = _verify(capsys, store_path)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "decision 2:" in err and "no longer match the seal" in err


def test_a_changed_confidence_is_named(store_path, capsys):
    _tamper(store_path, "UPDATE decisions SET confidence = 'high' WHERE id = 3")
    code, _out, err = _verify(capsys, store_path)
    assert code == 2 and "decision 3:" in err


def test_an_edited_question_text_is_named(store_path, capsys):
    _tamper(
        store_path, """UPDATE item_versions SET json = replace(json, '"text": "', '"text": "Edited: ') WHERE item = 1"""
    )
    code, _out, err = _verify(capsys, store_path)
    assert code == 2 and "decision 1:" in err  # ann's accept judged the text as it was


def test_a_deleted_decision_is_named(store_path, capsys):
    _tamper(store_path, "DELETE FROM decisions WHERE id = 7")
    code, _out, err = _verify(capsys, store_path)
    assert code == 2 and "decision 7:" in err and "deleted" in err


def test_a_decision_added_by_hand_is_named(store_path, capsys):
    _tamper(
        store_path,
        "INSERT INTO decisions (item, version, user, stage, verdict, reasons, created) "
        "VALUES (3, 1, 'bob', 1, 'accept', '[]', '2026-12-01T00:00:00Z')",
    )
    code, _out, err = _verify(capsys, store_path)
    assert code == 2 and "decision 8:" in err and "not in the audit log" in err


def test_a_damaged_index_is_reported(store_path, capsys):
    con = sqlite3.connect(store_path)
    pages = dict(con.execute("SELECT name, rootpage FROM sqlite_master WHERE type = 'index'").fetchall())
    con.execute("PRAGMA writable_schema = ON")  # point one index at another's pages, as a torn write would
    con.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = 'decisions_by_user'", [pages["events_by_item"]])
    con.commit()
    con.close()
    code, out, err = _verify(capsys, store_path)
    assert code == 2 and out == ""
    assert "integrity check" in err and "decisions_by_user" in err
