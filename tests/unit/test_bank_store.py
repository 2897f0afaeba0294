"""Import into the review store and export again: byte-stable, through the CLI too."""

import bank_factory as bf

from reviewer.bank.io import BankContent, write_bank
from reviewer.cli import main
from reviewer.review.banks import export_bank, import_bank
from reviewer.store import Store

FILES = ("questions.jsonl", "sites.jsonl", "pairs.jsonl", "manifest.json")


def _bank(folder):
    write_bank(
        folder,
        BankContent(
            "earthrecord",
            "1",
            [bf.trend_question(), bf.year_question("a24-3", accept=[2014]), bf.insufficient_question("a24-4")],
            [bf.site()],
            [bf.pair("a24-1-p", "a24-1")],
            created="2026-11-30T12:00:00Z",
        ),
    )
    return folder


def test_round_trip_is_byte_stable(tmp_path):
    src = _bank(tmp_path / "src")
    store = Store(memory=True)
    assert import_bank(store, src) == ("earthrecord", "1")
    rows = list(store.db.query("SELECT qid AS id, class, task, state AS status FROM items ORDER BY position"))
    assert rows[0] == {"id": "a24-1", "class": "computable", "task": "trend", "status": "generated"}
    assert rows[2]["task"] is None
    export_bank(store, "earthrecord", tmp_path / "out")
    for name in FILES:
        assert (tmp_path / "out" / name).read_bytes() == (src / name).read_bytes(), name


def test_reimport_keeps_items_and_adds_versions_only_for_changed_content(tmp_path):
    src = _bank(tmp_path / "src")
    store = Store(memory=True)
    import_bank(store, src)
    import_bank(store, src)  # same content: no new version, no state change
    rows = list(store.db.query("SELECT qid, state, current_version FROM items ORDER BY position"))
    assert [(r["qid"], r["state"], r["current_version"]) for r in rows] == [
        ("a24-1", "generated", 1),
        ("a24-3", "generated", 1),
        ("a24-4", "generated", 1),
    ]
    changed = bf.trend_question()
    changed["text"] = "Has the lake area changed from 1990 to 2021?"
    write_bank(
        tmp_path / "v2",
        BankContent(
            "earthrecord",
            "1",
            [changed, bf.year_question("a24-3", accept=[2014]), bf.insufficient_question("a24-4")],
            [bf.site()],
            [bf.pair("a24-1-p", "a24-1")],
            created="2026-11-30T12:00:00Z",
        ),
    )
    import_bank(store, tmp_path / "v2")
    versions = dict(store.db.execute("SELECT qid, current_version FROM items").fetchall())
    assert versions == {"a24-1": 2, "a24-3": 1, "a24-4": 1}
    texts = [r[0] for r in store.db.execute("SELECT json FROM item_versions WHERE item = 1 ORDER BY version")]
    assert "Has the lake area changed" not in texts[0] and "Has the lake area changed" in texts[1]


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
    assert main(["bank", "validate", str(src)]) == 2
    out = capsys.readouterr().out
    assert "pairs.jsonl:1: question:" in out and "sha256 does not match" in out


def test_cli_import_refuses_a_bad_bank_in_one_line(tmp_path, capsys):
    src = _bank(tmp_path / "src")
    (src / "manifest.json").write_text("{}")
    assert main(["--db", str(tmp_path / "db.sqlite"), "bank", "import", str(src)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def _reordered_bank(folder):
    """A valid frozen bank written by another tool: same records, keys in reverse order, other spacing."""
    import json

    from reviewer.bank.io import sha256_file

    _bank(folder)
    for name in ("questions.jsonl", "sites.jsonl", "pairs.jsonl"):
        lines = (folder / name).read_text().splitlines()
        out = [json.dumps(dict(reversed(list(json.loads(line).items()))), separators=(",", ":")) for line in lines]
        (folder / name).write_text("\n".join(out) + "\n")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["frozen"] = True
    manifest["files"] = {n: sha256_file(folder / n) for n in manifest["files"]}
    (folder / "manifest.json").write_text(json.dumps(dict(reversed(list(manifest.items()))), indent=4))
    return folder


def test_a_foreign_frozen_bank_comes_out_byte_for_byte(tmp_path, capsys):
    src = _reordered_bank(tmp_path / "foreign")
    db = str(tmp_path / "review.sqlite")
    assert main(["bank", "validate", str(src)]) == 0
    assert main(["--db", db, "bank", "import", str(src)]) == 0
    assert main(["--db", db, "bank", "export", "earthrecord", str(tmp_path / "out")]) == 0
    for name in FILES:
        assert (tmp_path / "out" / name).read_bytes() == (src / name).read_bytes(), name
    # re-importing the export is the same content, not a clash
    assert main(["--db", db, "bank", "import", str(tmp_path / "out")]) == 0
    # a different frozen content under the same name and version is refused
    changed = _reordered_bank(tmp_path / "changed")
    (changed / "manifest.json").write_text((changed / "manifest.json").read_text().replace("2026-11-30", "2026-12-01"))
    assert main(["--db", db, "bank", "import", str(changed)]) == 2
    assert "frozen in the store with different content" in capsys.readouterr().err
