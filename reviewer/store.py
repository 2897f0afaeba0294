"""The review store: one SQLite file (sqlite-utils, WAL, foreign keys on) with numbered SQL migrations.

The store is recognised before anything is written to it: a file that is not ours (another
application's SQLite file, not SQLite at all) or that a newer version of the tool wrote is refused
unchanged. Migrations are the files db/migrations/NNNN_name.sql; NNNN is the schema version kept
in SQLite's `user_version`, each applied once inside one write transaction, so several processes
opening a new store at the same time wait for each other instead of failing.

Every write goes through `Store.transaction()` (BEGIN IMMEDIATE: the write lock is taken at the
start, so two writers queue on the busy timeout instead of failing with 'database is locked'
half-way), and a transaction that returned is on disk (synchronous=FULL).

**The one rule of this module: a store file (and a review package, which is a store too) is only ever
touched through SQLite.** Never open, read, copy or hash it with plain file calls while this process
may hold a connection to it. SQLite knows that another connection is alive through POSIX advisory
locks, and on POSIX closing *any* descriptor of a file releases every lock the process holds on it:
one `open(path).read(16)` and close by a second `Store` let another process take the file for unused,
delete its WAL under the first connection (`store.sqlite-wal (deleted)`), and every write after that
was lost. SQLite itself keeps one lock table per file for all the connections of a process, so
`Store` objects may be opened and closed freely in any thread; the header is recognised through
SQLite (`_recognise`); a copy of a store is made with SQLite's backup API (`sqlite3.Connection.backup`),
never a file copy (which also misses what is still in the WAL).
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from reviewer import APP_NAME, DB_DIR
from reviewer.errors import StoreError
from reviewer.imports import without

logger = logging.getLogger(__name__)

#: SQLite's application_id header field marks a file as this tool's store ('ERRV').
APPLICATION_ID = 0x45525256
#: Stores of version 0.1 used sqlite-utils' migration table instead of user_version.
_LEGACY_MIGRATIONS = {"0001_scene_index": 1, "0002_bank": 2}
#: How long a writer waits for another process's transaction before giving up (seconds).
BUSY_TIMEOUT_S = 60.0

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+$")


def _sqlite_utils() -> Any:
    """Import sqlite-utils without pandas and numpy when they are not loaded yet: review verbs are scripted in
    loops and must start in well under the 0.3 s they cost."""
    with without("pandas", "numpy", unless_loaded="sqlite_utils"):
        import sqlite_utils
    return sqlite_utils


def default_db_path() -> Path:
    """The embedded store lives in the user data directory unless --db is given."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME)) / "review.sqlite"


@cache
def migrations() -> list[tuple[int, str, str]]:
    """(version, name, sql) of every migration file, in version order (read once per process)."""
    out = []
    for sql_file in sorted((DB_DIR / "migrations").glob("*.sql")):
        match = _MIGRATION_NAME.match(sql_file.stem)
        if not match:
            raise StoreError("migration file names must be NNNN_name.sql", path=sql_file)
        out.append((int(match.group(1)), sql_file.stem, sql_file.read_text(encoding="utf-8")))
    versions = [v for v, _, _ in out]
    if versions != list(range(1, len(out) + 1)):
        raise StoreError(f"migrations must be numbered 1..n without gaps, found {versions}", path=DB_DIR)
    return out


def schema_version() -> int:
    """The schema version this tool writes (the number of its migrations)."""
    return len(migrations())


def _split_sql(sql: str) -> list[str]:
    """Split a script into statements (executescript would commit and break the migration's transaction)."""
    statements, current = [], ""
    for line in sql.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            if current.strip():
                statements.append(current.strip())
            current = ""
    if current.strip() and not all(x.strip().startswith("--") for x in current.strip().splitlines()):
        raise StoreError("a migration ends with an incomplete statement")
    return statements


def sha256_text(text: str) -> str:
    """'sha256:<hex>' of a text's UTF-8 bytes (also a SQL function of the store)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def describe(exc: sqlite3.Error) -> str:
    """A user's reading of a SQLite error."""
    text = str(exc)
    if "disk is full" in text or "disk I/O" in text:
        return f"disk full or unwritable: {text}; nothing of this change was saved"
    if "locked" in text or "busy" in text:
        return f"the store stayed busy for {BUSY_TIMEOUT_S:.0f} s (another process is writing); nothing was saved"
    return text


class Store:
    """Owns one SQLite connection; use as a context manager or call close()."""

    def __init__(self, path: str | Path | None = None, *, memory: bool = False, create: bool = True) -> None:
        """`create=False`: a store that is not there is refused (`no store at PATH`) and nothing is made, neither
        the file nor its folder (a verb that needs an existing store's users or banks: a mistyped --db)."""
        self.path = None if memory else Path(path) if path else default_db_path()
        self._create = create
        self._depth = 0
        #: the last event hash written in the open transaction (the event chain's head), else None
        self.chain_head: str | None = None
        #: seals of decisions written in the open transaction that the next event is to carry (ledger.py)
        self.pending_seals: dict[int, str] = {}
        try:
            conn = self._connect()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open the review store: {exc}", path=self.path) from exc
        except OSError as exc:
            raise StoreError(f"cannot open the review store: {exc.strerror or exc}", path=self.path) from exc
        conn.execute("PRAGMA recursive_triggers = ON")  # as sqlite-utils' Database sets it (made in `db`, later)
        #: the SQLite connection (what `db` wraps); plain reads go through it or `query` without sqlite-utils
        self.conn = conn
        self._db: Any = None

    @property
    def db(self) -> Any:
        """sqlite-utils' Database on this connection, made when first used: opening a store and reading it
        (`query`) does not import sqlite-utils (~30 ms of CPU, before the app's first imagery)."""
        if self._db is None:
            self._db = _sqlite_utils().Database(self.conn, execute_plugins=False)
        return self._db

    def query(self, sql: str, params: Sequence[Any] = ()) -> Iterator[dict[str, Any]]:
        """Rows of a read as dicts (column name -> value), as sqlite-utils' `Database.query` gives them."""
        cursor = self.conn.execute(sql, params)
        names = [d[0] for d in cursor.description]
        for row in cursor:
            yield dict(zip(names, row, strict=True))

    # ------------------------------------------------------------------ opening

    def _connect(self) -> sqlite3.Connection:
        if self.path is None:
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            self._prepare(conn)
            self._migrate(conn)
            return conn
        if self.path.is_dir():  # a stat, not an open: safe while connections are open (see the module rule)
            raise StoreError("is a folder, not a review store", path=self.path)
        if not self._create and not self.path.exists():  # a stat too
            raise StoreError(f"no store at {self.path}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            self._recognise(conn)
            self._prepare(conn)
            self._enable_wal(conn)
            self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _recognise(self, conn: sqlite3.Connection) -> None:
        """Refuse, before any write, a SQLite file that is another application's or a newer tool's."""
        # one read transaction: a consistent snapshot even while another process migrates a new store;
        # SQLite reads the header itself (a plain open of the file would drop this process's locks)
        try:
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if "not a database" in str(exc) or "encrypted" in str(exc):
                raise StoreError(
                    "is not an EarthRecord Reviewer store (not a SQLite file); nothing was changed", path=self.path
                ) from exc
            raise
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            legacy = (
                {r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations WHERE migration_set = 'reviewer'")}
                if "_sqlite_migrations" in tables
                else set()
            )
        finally:
            conn.execute("COMMIT")
        known = schema_version()
        if app_id == APPLICATION_ID:
            if version > known:
                raise StoreError(
                    f"was written by a newer version of EarthRecord Reviewer (store schema {version}, this version "
                    f"knows up to {known}); upgrade the tool. Nothing was changed",
                    path=self.path,
                )
            return
        if app_id == 0 and not tables:
            return  # a new, empty file
        if app_id == 0 and "_sqlite_migrations" in tables:
            names = legacy
            if names and names <= set(_LEGACY_MIGRATIONS):
                return  # a store of version 0.1, upgraded by _migrate
            if names:
                raise StoreError(
                    "was written by a newer version of EarthRecord Reviewer (unknown migrations "
                    f"{sorted(names - set(_LEGACY_MIGRATIONS))}); upgrade the tool. Nothing was changed",
                    path=self.path,
                )
        raise StoreError(
            "is not an EarthRecord Reviewer store (another application's SQLite file); nothing was changed",
            path=self.path,
        )

    @staticmethod
    def _prepare(conn: sqlite3.Connection) -> None:
        conn.create_function("sha256", 1, sha256_text, deterministic=True)
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = FULL")

    @staticmethod
    def _enable_wal(conn: sqlite3.Connection) -> None:
        """WAL lets readers go on while one process writes; switching waits for other openers."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL").fetchone()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Apply the pending migrations in one write transaction (re-checked under the lock)."""
        known = migrations()
        if conn.execute("PRAGMA user_version").fetchone()[0] >= len(known):
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            if current == 0:
                current = self._legacy_version(conn)
            if current > len(known):
                raise StoreError("was written by a newer version of EarthRecord Reviewer", path=self.path)
            for number, name, sql in known[current:]:
                for statement in _split_sql(sql):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")
                logger.info("store %s: applied migration %s", self.path or ":memory:", name)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        fk = conn.execute("PRAGMA foreign_key_check").fetchall()
        if fk:
            raise StoreError(f"foreign key check failed after migrating: {fk[:3]}", path=self.path)

    @staticmethod
    def _legacy_version(conn: sqlite3.Connection) -> int:
        """A 0.1 store kept its applied migrations in _sqlite_migrations; take them over into user_version."""
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "_sqlite_migrations" not in tables:
            return 0
        names = [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations WHERE migration_set = 'reviewer'")]
        conn.execute("DROP TABLE _sqlite_migrations")
        return max((_LEGACY_MIGRATIONS[n] for n in names), default=0)

    # ------------------------------------------------------------------ writing

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A multi-step write lands whole or not at all; nested blocks are savepoints.

        The outermost block takes the write lock at once (BEGIN IMMEDIATE) and commits durably.
        """
        conn = self.db.conn
        if self._depth:
            name = f"sp{self._depth}"
            conn.execute(f"SAVEPOINT {name}")
            self._depth += 1
            try:
                yield self.db
            except BaseException:
                conn.execute(f"ROLLBACK TO {name}")
                conn.execute(f"RELEASE {name}")
                self.chain_head = None  # the rolled-back part may have written events
                self.pending_seals.clear()
                raise
            else:
                conn.execute(f"RELEASE {name}")
            finally:
                self._depth -= 1
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StoreError(describe(exc), path=self.path) from exc
        self._depth = 1
        self.chain_head = None
        self.pending_seals.clear()
        try:
            yield self.db
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError):
                raise StoreError(describe(exc), path=self.path) from exc
            raise
        finally:
            self._depth = 0
            self.chain_head = None
            self.pending_seals.clear()

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
