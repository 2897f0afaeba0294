"""The store recognises itself before writing: foreign and newer files are refused unchanged; migrations
apply once; the append-only tables cannot be changed, even with plain SQL."""

import hashlib
import sqlite3

import pytest

from reviewer.cli import main
from reviewer.errors import StoreError
from reviewer.store import APPLICATION_ID, Store, migrations


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_new_store_gets_every_migration_once(tmp_path):
    path = tmp_path / "review.sqlite"
    Store(path).close()
    Store(path).close()  # reopening applies nothing again
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == len(migrations()) == 8
    assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"items", "item_versions", "decisions", "events", "users", "assignments"} <= tables
    assert "bank_questions" not in tables and "_sqlite_migrations" not in tables


def test_foreign_sqlite_file_is_refused_unchanged(tmp_path, capsys):
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    con.execute("INSERT INTO notes (body) VALUES ('mine')")
    con.commit()
    con.close()
    before = _digest(path)
    with pytest.raises(StoreError, match="another application's SQLite file"):
        Store(path)
    assert _digest(path) == before
    assert not (tmp_path / "other.db-wal").exists()
    assert main(["--db", str(path), "scan", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "other.db" in err and err.count("\n") == 1
    assert _digest(path) == before


def test_non_sqlite_file_is_refused_unchanged(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("not a database at all, just some notes\n" * 10)
    before = _digest(path)
    with pytest.raises(StoreError, match="not a SQLite file"):
        Store(path)
    assert _digest(path) == before


def test_store_of_a_newer_version_is_refused_unchanged(tmp_path, capsys):
    path = tmp_path / "review.sqlite"
    Store(path).close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 99")
    con.close()
    before = _digest(path)
    with pytest.raises(StoreError, match="newer version"):
        Store(path)
    assert _digest(path) == before
    assert main(["--db", str(path), "users", "list"]) == 2
    err = capsys.readouterr().err
    assert "newer version" in err and "store schema 99" in err and "review.sqlite" in err


def test_store_of_version_0_1_is_upgraded_keeping_its_questions(tmp_path):
    """A 0.1 store kept sqlite-utils' migration table and bank_questions rows with a status column."""
    from reviewer import DB_DIR

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    for name in ("0001_scene_index", "0002_bank"):
        con.executescript((DB_DIR / "migrations" / f"{name}.sql").read_text())
    con.execute("CREATE TABLE _sqlite_migrations (migration_set TEXT, name TEXT, applied_at TEXT)")
    con.executemany(
        "INSERT INTO _sqlite_migrations VALUES ('reviewer', ?, '2026-11-01')", [("0001_scene_index",), ("0002_bank",)]
    )
    con.execute("INSERT INTO banks VALUES ('b', '1', '2026-11-01T00:00:00Z', '1', 0, '{}', '2026-11-01T00:00:00Z')")
    q = '{"id": "q1", "reference_source": "method", "text": "x"}'
    con.execute(
        "INSERT INTO bank_questions VALUES ('b', '1', 0, 'q1', 's1', 'computable', 'trend', 'generated', ?)", [q]
    )
    con.commit()
    con.close()
    with Store(path) as store:
        rows = list(store.db.query("SELECT bank, qid, state, current_version, reference_source FROM items"))
        assert rows == [
            {"bank": "b", "qid": "q1", "state": "generated", "current_version": 1, "reference_source": "method"}
        ]
        v = store.db.execute("SELECT json, sha256 FROM item_versions").fetchone()
        assert v[0] == q and v[1] == "sha256:" + hashlib.sha256(q.encode()).hexdigest()
        assert store.db.execute("SELECT count(*) FROM bank_items").fetchone()[0] == 1
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == 8


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE events SET action = 'nothing'",
        "DELETE FROM events",
        "UPDATE decisions SET verdict = 'accept'",
        "DELETE FROM decisions",
        "UPDATE item_versions SET json = '{}'",
        "DELETE FROM item_versions",
        "UPDATE user_logins SET login = 'eve'",
        "DELETE FROM user_logins",
    ],
)
def test_append_only_tables_refuse_changes_in_sqlite_itself(tmp_path, sql):
    path = tmp_path / "review.sqlite"
    with Store(path) as store:
        with store.transaction() as db:
            db.execute("INSERT INTO users VALUES ('ann', 'annotator', 'now')")
            db.execute(
                "INSERT INTO items (bank, qid, position, site, class, reference_source, state, current_version) "
                "VALUES ('b', 'q', 0, 's', 'computable', 'method', 'in_review', 1)"
            )
            db.execute("INSERT INTO item_versions VALUES (1, 1, '{}', 'h', 'generated', 'import', NULL, 'now')")
            db.execute(
                "INSERT INTO decisions (item, version, user, stage, verdict, created) VALUES (1, 1, 'ann', 1, 'flag', 'now')"
            )
            db.execute("INSERT INTO events (at, action, tool_version, hash) VALUES ('now', 'x', '0', 'h')")
            db.execute("INSERT INTO user_logins (user, login, bound, at) VALUES ('ann', 'ann', 1, 'now')")
    con = sqlite3.connect(path)  # plain SQL, not the tool: the triggers still hold
    with pytest.raises(sqlite3.IntegrityError, match="append-only|immutable"):
        con.execute(sql)
    con.rollback()
    tables = ("events", "decisions", "item_versions", "user_logins")
    counts = [con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables]
    assert counts == [1, 1, 1, 1]


def test_foreign_keys_are_enforced(tmp_path):
    with Store(tmp_path / "review.sqlite") as store:
        with pytest.raises(StoreError, match="FOREIGN KEY"):
            with store.transaction() as db:
                db.execute(
                    "INSERT INTO decisions (item, version, user, stage, verdict, created) VALUES (9, 1, 'nobody', 1, 'accept', 'now')"
                )
        assert store.db.execute("SELECT count(*) FROM decisions").fetchone()[0] == 0


def test_folder_as_store_is_refused(tmp_path):
    with pytest.raises(StoreError, match="is a folder"):
        Store(tmp_path)
