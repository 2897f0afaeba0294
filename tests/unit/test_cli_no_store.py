"""`--db` naming a store that is not there: a verb that only works on an existing store (a read, a report, a
decision, which all need its users or banks) says `error: no store at PATH` with exit 2 and creates nothing, not
the folder and not the file (it made an empty store there, folders and all, then said "unknown user"); the verbs
that may be a store's first write (`users add`, `bank import`, `scan`) keep creating it."""

from __future__ import annotations

import bank_factory as bf
import pytest

from reviewer.bank.io import BankContent, write_bank
from reviewer.cli import main

READ_VERBS = [
    ["users", "list"],
    ["users", "bind", "mia", "--login", "x", "--user", "mia"],
    ["review", "status", "rb", "--user", "mia"],
    ["review", "queue", "rb", "--user", "ann"],
    ["review", "next", "rb", "--user", "ann"],
    ["review", "decide", "rb/q001", "--accept", "--user", "ann"],
    ["review", "agreement", "rb", "--user", "mia"],
    ["review", "log", "rb/q001", "--user", "mia"],
    ["review", "verify-log", "--user", "mia"],
    ["bank", "export", "rb", "OUT"],
    ["package", "export", "rb", "--annotator", "ann", "--out", "OUT/p.pkg", "--user", "mia"],
]


@pytest.mark.parametrize("verb", READ_VERBS, ids=lambda v: " ".join(v[:2]))
def test_a_read_verb_on_a_store_in_a_missing_folder_says_so_and_creates_nothing(verb, tmp_path, capsys):
    missing = tmp_path / "typo" / "team.sqlite"
    args = [str(tmp_path / "out") if a == "OUT" else a.replace("OUT", str(tmp_path / "out")) for a in verb]
    assert main(["--db", str(missing), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: no store at {missing}"), err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "typo").exists()  # neither the folder nor the file
    assert not (tmp_path / "out").exists()


def test_a_read_verb_on_a_missing_file_in_an_existing_folder_creates_no_file(tmp_path, capsys):
    missing = tmp_path / "taem.sqlite"
    assert main(["--db", str(missing), "review", "status", "rb", "--user", "mia"]) == 2
    assert capsys.readouterr().err.startswith(f"error: no store at {missing}")
    assert list(tmp_path.iterdir()) == []


def test_the_verbs_that_make_a_store_still_make_it_with_its_folder(tmp_path, capsys):
    first = tmp_path / "new" / "team.sqlite"
    assert main(["--db", str(first), "users", "add", "mia", "--role", "maintainer"]) == 0
    assert first.is_file()
    assert main(["--db", str(first), "users", "list"]) == 0  # and the read verbs read it
    assert "mia" in capsys.readouterr().out

    bank = tmp_path / "bank"
    write_bank(bank, BankContent("rb", "1", [bf.trend_question("q001")], [bf.site()], []))
    imported = tmp_path / "other" / "bank.sqlite"
    assert main(["--db", str(imported), "bank", "import", str(bank)]) == 0
    assert imported.is_file()
    assert main(["--db", str(imported), "bank", "export", "rb", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out").is_dir()


def test_a_bank_named_by_its_folder_or_a_typo_lists_the_banks_the_store_has(tmp_path, capsys):
    """`bank import candidates/` then `review assign candidates ...`, as one does after importing a folder: the
    store's bank is called by its manifest's name ('rb'), which the user had to guess; the error names it."""
    db = tmp_path / "team.sqlite"
    bank = tmp_path / "candidates"
    write_bank(bank, BankContent("rb", "1", [bf.trend_question("q001")], [bf.site()], []))
    assert main(["--db", str(db), "users", "add", "mia", "--role", "maintainer"]) == 0
    assert main(["--db", str(db), "users", "add", "ann", "--role", "annotator", "--user", "mia"]) == 0
    assert main(["--db", str(db), "bank", "import", str(bank), "--user", "mia"]) == 0
    capsys.readouterr()
    for name in (str(bank), "candidates", "rb2"):
        assert main(["--db", str(db), "review", "status", name, "--user", "mia"]) == 2
        err = capsys.readouterr().err
        assert err == f"error: no bank named {name!r} in the store; its banks: rb\n", err
    empty = tmp_path / "empty.sqlite"
    assert main(["--db", str(empty), "users", "add", "mia", "--role", "maintainer"]) == 0
    capsys.readouterr()
    assert main(["--db", str(empty), "review", "status", "rb", "--user", "mia"]) == 2
    err = capsys.readouterr().err
    assert (
        err == "error: no bank named 'rb' in the store; it has none yet: import one with `reviewer bank import DIR`\n"
    )
