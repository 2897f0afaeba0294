"""Progress stays readable wherever stderr goes (issue 26): a bar only on a terminal; redirected (CI, a log
file, the app's job process), a plain line each tenth of the work, never a carriage return."""

from __future__ import annotations

import io
import json
import os

from test_scoring_metrics import all_runs, make_bank

from reviewer.cli import main
from reviewer.progress import StderrProgress


def test_redirected_progress_is_a_plain_line_each_tenth():
    log = io.StringIO()
    with StderrProgress("drafts", stream=log) as bar:
        for done in range(0, 41):
            bar.count(done, 40, f"item {done}")
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue() and "\x1b" not in log.getvalue()
    assert lines[0] == "drafts:  10% 4/40 item 4" and lines[-1] == "drafts: 100% 40/40 item 40"
    assert len(lines) == 10  # 10%, 20%, ... 100%: not one line per item


def test_redirected_progress_can_stay_silent():
    log = io.StringIO()
    with StderrProgress("generate", stream=log, lines_when_redirected=False) as bar:
        bar.update(0.5, "half")
        bar.update(1.0, "done")
    assert log.getvalue() == ""


def test_a_terminal_gets_a_bar_that_is_gone_at_the_end():
    leader, follower = os.openpty()
    with open(follower, "w", buffering=1) as tty:
        with StderrProgress("drafts", stream=tty) as bar:
            assert bar.tty and not bar.lines
            bar.count(3, 10, "item 3")
    drawn = os.read(leader, 65536).decode("utf-8", "replace")
    os.close(leader)
    assert "drafts" in drawn and "\x1b" in drawn  # drawn with terminal codes, cleared when it stopped


def test_score_progress_in_a_log(tmp_path, capfd):
    bank = make_bank(tmp_path / "bank")
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    code = main(["score", str(bank), str(runs), "--out", str(tmp_path / "r"), "--bootstrap", "20", "--progress"])
    err = capfd.readouterr().err
    assert code == 0 and "\r" not in err
    lines = [x for x in err.splitlines() if x.startswith("score:")]
    assert lines and lines[-1].startswith("score: 100%")
