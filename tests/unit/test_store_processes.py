"""Several connections and processes on one store, as a team uses it: whatever one connection wrote and
was told is saved stays in the file, whoever else opens and closes the store in this process, in its
threads or in another process (issue 26: a plain open and close of the store file dropped this process's
SQLite locks, another process then deleted the WAL under the open connection and its later writes were lost)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from reviewer.review import api
from reviewer.store import Store

READ = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
print(con.execute("SELECT count(*) FROM users").fetchone()[0], con.execute("PRAGMA integrity_check").fetchone()[0])
"""
OPEN_CLOSE = "import sys; from reviewer.store import Store; Store(sys.argv[1]).close()"


def _other_process(code: str, path: Path) -> str:
    """Run Python code on the store in a separate process (as `reviewer review status` would open it)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), *sys.path])}
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _wal_descriptors() -> list[str]:
    """What this process's open descriptors on a WAL file point at (Linux /proc)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.endswith("-wal") or target.endswith("-wal (deleted)"):
            out.append(target)
    return out


def test_a_second_store_opened_and_closed_does_not_lose_the_firsts_writes(tmp_path):
    path = tmp_path / "store.sqlite"
    first = Store(path)
    api.add_user(first, "mia", "maintainer")
    Store(path).close()  # the app's workers do this all the time
    _other_process(OPEN_CLOSE, path)  # `reviewer review status` in another terminal
    assert all("(deleted)" not in d for d in _wal_descriptors()), _wal_descriptors()
    api.add_user(first, "ann", "annotator", by="mia")  # shown as saved to the user
    assert _other_process(READ, path) == "2 ok"  # read by another process while the first is still open
    first.close()
    assert _other_process(READ, path) == "2 ok"


def test_one_long_lived_connection_while_threads_and_processes_open_and_close(tmp_path):
    path = tmp_path / "store.sqlite"
    with Store(path) as setup:
        api.add_user(setup, "mia", "maintainer")
    long_lived = Store(path)
    stop = threading.Event()
    errors: list[BaseException] = []

    def open_and_close() -> None:
        try:
            while not stop.is_set():
                with Store(path) as s:
                    s.db.execute("SELECT count(*) FROM users").fetchone()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=open_and_close) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for n in range(30):
            api.add_user(long_lived, f"a{n}", "annotator", by="mia")
            if n % 10 == 0:
                _other_process(OPEN_CLOSE, path)
        assert _other_process(READ, path) == "31 ok"  # all 30, read while the long-lived one is open
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors
    long_lived.close()
    assert _other_process(READ, path) == "31 ok"


def test_a_text_file_is_refused_unchanged(tmp_path):
    from reviewer.errors import StoreError

    path = tmp_path / "notes.sqlite"
    path.write_text("my notes, not a store\n" * 10)
    before = path.read_bytes()
    try:
        Store(path)
    except StoreError as exc:
        assert "not a SQLite file" in str(exc)
    else:
        raise AssertionError("a text file was opened as a store")
    assert path.read_bytes() == before and not Path(f"{path}-wal").exists()
