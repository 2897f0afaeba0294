"""A full disk under the store: the change is refused in one line, and what was saved before stays."""

import os
import subprocess
import uuid

import bank_factory as bf
import pytest

from reviewer.bank.io import BankContent, write_bank
from reviewer.cli import main
from reviewer.store import Store


@pytest.fixture
def small_disk(tmp_path):
    """A 400 KB tmpfs (root only); skipped where mounting is not permitted."""
    mount = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mount)]).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def _bank(folder, name, n, text_size=0):
    qs = []
    for i in range(n):
        q = bf.trend_question(f"q{i:04d}")
        q["text"] = q["text"] + " " + "x" * text_size
        qs.append(q)
    write_bank(folder, BankContent(name, "1", qs, [bf.site()], [], created="2026-11-30T12:00:00Z"))
    return folder


def test_import_onto_a_full_disk_is_refused_and_keeps_what_was_saved(tmp_path, small_disk, capsys):
    db = small_disk / "review.sqlite"
    assert main(["--db", str(db), "bank", "import", str(_bank(tmp_path / "small", "small", 3))]) == 0
    capsys.readouterr()
    big = _bank(tmp_path / "big", "big", 200, text_size=3000)  # ~ 1.5 MB in the store: does not fit
    assert main(["--db", str(db), "bank", "import", str(big)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "disk full" in err and "review.sqlite" in err, err
    with Store(db) as store:  # opens cleanly; the first bank is whole, nothing of the second
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        banks = dict(store.db.execute("SELECT bank, count(*) FROM items GROUP BY bank").fetchall())
        assert banks == {"small": 3}
