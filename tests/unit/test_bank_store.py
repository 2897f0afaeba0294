"""Import into the review store and export again: byte-stable, through the CLI too."""

import bank_factory as bf

from reviewer.bank.io import write_bank
from reviewer.bank.store import export_bank, import_bank
from reviewer.cli import main
from reviewer.review.store import Store

FILES = ("questions.jsonl", "sites.jsonl", "pairs.jsonl", "manifest.json")


def _bank(folder):
    write_bank(
        folder,
        "earthrecord",
        "1",
        [bf.trend_question(), bf.year_question("a24-3", accept=[2014]), bf.insufficient_question("a24-4")],
        [bf.site()],
        [bf.pair("a24-1-p", "a24-1")],
        created="2026-11-30T12:00:00Z",
    )
    return folder


def test_round_trip_is_byte_stable(tmp_path):
    src = _bank(tmp_path / "src")
    store = Store(memory=True)
    assert import_bank(store, src) == ("earthrecord", "1")
    rows = list(store.db.query("SELECT id, class, task, status FROM bank_questions ORDER BY position"))
    assert rows[0] == {"id": "a24-1", "class": "computable", "task": "trend", "status": "generated"}
    assert rows[2]["task"] is None
    export_bank(store, "earthrecord", tmp_path / "out")
    for name in FILES:
        assert (tmp_path / "out" / name).read_bytes() == (src / name).read_bytes(), name


def test_reimport_keeps_review_status(tmp_path):
    src = _bank(tmp_path / "src")
    store = Store(memory=True)
    import_bank(store, src)
    store.db.execute("UPDATE bank_questions SET status = 'accepted' WHERE id = 'a24-1'")
    import_bank(store, src)
    status = store.db.execute("SELECT status FROM bank_questions WHERE id = 'a24-1'").fetchone()[0]
    assert status == "accepted"


def test_cli_validate_import_export(tmp_path, capsys):
    src = _bank(tmp_path / "src")
    db = str(tmp_path / "review.sqlite")
    assert main(["bank", "validate", str(src)]) == 0
    assert main(["--db", db, "bank", "import", str(src)]) == 0
    assert "imported bank earthrecord 1: 3 questions" in capsys.readouterr().out
    assert main(["--db", db, "bank", "export", "earthrecord", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "manifest.json").read_bytes() == (src / "manifest.json").read_bytes()
    assert main(["--db", db, "bank", "export", "earthrecord", str(tmp_path / "frozen"), "--frozen"]) == 0
    assert '"frozen": true' in (tmp_path / "frozen" / "manifest.json").read_text()


def test_cli_validate_lists_problems_and_fails(tmp_path, capsys):
    src = _bank(tmp_path / "src")
    (src / "pairs.jsonl").write_text('{"id": "p"}\n')
    assert main(["bank", "validate", str(src)]) == 1
    out = capsys.readouterr().out
    assert "pairs.jsonl:1: question:" in out and "sha256 does not match" in out


def test_cli_import_refuses_a_bad_bank_in_one_line(tmp_path, capsys):
    src = _bank(tmp_path / "src")
    (src / "manifest.json").write_text("{}")
    assert main(["--db", str(tmp_path / "db.sqlite"), "bank", "import", str(src)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
