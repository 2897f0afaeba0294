"""The review store: one SQLite file (sqlite-utils, WAL) with versioned SQL migrations from db/migrations."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs
import sqlite_utils
from sqlite_utils import Migrations

from reviewer import DB_DIR
from reviewer.errors import StoreError

logger = logging.getLogger(__name__)

APP_NAME = "earthrecord-reviewer"


def default_db_path() -> Path:
    """The embedded store lives in the user data directory unless --db is given."""
    return Path(platformdirs.user_data_dir(APP_NAME)) / "review.sqlite"


def _split_sql(sql: str) -> list[str]:
    """Split a script into statements (executescript would commit and break the migration's transaction)."""
    statements, current = [], ""
    for line in sql.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            if current.strip():
                statements.append(current.strip())
            current = ""
    if current.strip() and not current.strip().startswith("--"):
        statements.append(current.strip())
    return statements


def _migrations() -> Migrations:
    """Every db/migrations/NNNN_name.sql file becomes one migration, applied in file-name order."""
    migrations = Migrations("reviewer")
    for sql_file in sorted((DB_DIR / "migrations").glob("*.sql")):
        sql = sql_file.read_text(encoding="utf-8")

        def apply(db: sqlite_utils.Database, _sql: str = sql) -> None:
            for statement in _split_sql(_sql):
                db.execute(statement)

        apply.__name__ = sql_file.stem
        migrations(name=sql_file.stem)(apply)
    return migrations


class Store:
    """Owns the SQLite connection; use as a context manager or call close()."""

    def __init__(self, path: str | Path | None = None, *, memory: bool = False) -> None:
        self.path = None if memory else Path(path) if path else default_db_path()
        try:
            if memory:
                self.db = sqlite_utils.Database(memory=True)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.db = sqlite_utils.Database(self.path)
                self.db.enable_wal()
            _migrations().apply(self.db)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise StoreError(f"cannot open the review store: {exc}", path=self.path) from exc

    @contextmanager
    def atomic(self) -> Iterator[sqlite_utils.Database]:
        """A multi-step write either lands whole or not at all."""
        with self.db.atomic():
            yield self.db

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
