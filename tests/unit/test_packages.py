"""Review packages: export one annotator's open items, work them elsewhere with the review verbs (--package), and
merge the decisions back (idempotent, conflicts listed, signed, blinded, durable).

The round trip is checked against a control store built the same way in which the same decisions were made
directly: the team store must end with the same decisions, states, queue flags and events.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import bank_factory as bf
import pytest

from reviewer.bank.io import BankContent, write_bank
from reviewer.cli import main
from reviewer.review import api
from reviewer.review.banks import import_bank
from reviewer.review.packages import open_package
from reviewer.store import Store

BANK = "rb"
SITE_DIR = "/data/earthrecord/sites/a24"


def _write(folder, questions, name=BANK):
    write_bank(folder, BankContent(name, "1", questions, [bf.site()], [], created="2026-11-30T12:00:00Z"))
    return folder


def _team(path, *, n=8, annotators=("ann", "bob"), k=2, banks=(BANK,), gold=None):
    """A team store: a maintainer, annotators, an expert, the banks imported and assigned (seeded), a site record."""
    store = Store(path)
    api.add_user(store, "mia", "maintainer")
    for a in annotators:
        api.add_user(store, a, "annotator", by="mia")
    api.add_user(store, "eve", "expert", by="mia")
    for b in banks:
        questions = [bf.trend_question(f"q{i:03d}") for i in range(n)]
        import_bank(store, _write(path.parent / f"bank-{path.stem}-{b}", questions, name=b), user="mia")
        api.assign(store, b, annotators=list(annotators), k=k, seed=1, user="mia", **(gold or {}))
    with store.transaction() as db:  # the scene index of the site, as `reviewer` keeps it by folder path
        db.execute(
            "INSERT INTO sites (site_dir, site_id, name, signature, scanned_at, site_json) VALUES (?, ?, ?, ?, ?, ?)",
            [SITE_DIR, "a24", "Site a24", "sig:1", "2026-11-30T12:00:00Z", json.dumps(bf.site())],
        )
        db.execute(
            "INSERT INTO scenes (site_dir, scene_id, product, date, bands) VALUES (?, 'LT05_1990', 'L2', '1990-07-01', "
            "'{}')",
            [SITE_DIR],
        )
    return store


def _cli(capsys, *args):
    """Run `reviewer ARGS` in this process: (exit status, stdout, stderr)."""
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _ok(capsys, *args):
    code, out, err = _cli(capsys, *args)
    assert code == 0, err
    return out


def _queue(store, user, bank=BANK):
    return [r["id"] for r in api.queue(store, bank, user=user)]


def _count(store, table):
    return store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _export(capsys, team_path, out, annotator="ann", bank=BANK):
    out.parent.mkdir(parents=True, exist_ok=True)
    return _ok(
        capsys, "--db", team_path, "package", "export", bank, "--annotator", annotator, "--out", out, "--user", "mia"
    )


def _decisions(store):
    """Every decision as the team sees it, ids replaced by what they point at."""
    rows = store.db.query(
        "SELECT d.id, i.qid, d.version, d.user, d.stage, d.verdict, d.reasons, d.comment, d.correction, d.rationale, "
        "d.view, d.seconds, r.id AS retracts FROM decisions d JOIN items i ON i.id = d.item "
        "LEFT JOIN decisions r ON r.id = d.retracts ORDER BY d.id"
    )
    rows = list(rows)
    order = {r["id"]: n for n, r in enumerate(rows)}
    return [{**{k: v for k, v in r.items() if k != "id"}, "retracts": order.get(r["retracts"])} for r in rows]


def _events(store):
    """The item events in order; decision seals left out (they cover each decision's own time, which differs)."""
    return [
        (r[0], r[1], r[2], r[3], r[4], r[5], {k: v for k, v in json.loads(r[6] or "{}").items() if k != "seals"})
        for r in store.db.execute(
            "SELECT e.action, e.user, i.qid, e.version, e.before, e.after, e.detail FROM events e "
            "JOIN items i ON i.id = e.item ORDER BY e.id"
        )
    ]


def _steps(qids):
    """An annotator's session: accept, flag with reasons and a comment, a suggested correction taken back and
    replaced by a flag with a view, a skip; then the queue and the progress."""
    a, b, c, d = qids[:4]
    return [
        ("review", "next", BANK),
        ("review", "decide", f"{BANK}/{a}", "--accept", "--seconds", "4.25"),
        ("review", "decide", b, "--bank", BANK, "--flag", "wrong_reference,format_wording", "--comment", "doubled"),
        (
            "review",
            "decide",
            c,
            "--accept",
            "--seconds",
            "9",
            "--correct",
            '{"text": "Has the lake grown?", "reason": "x"}',
        ),
        ("review", "undo", BANK),
        ("review", "decide", c, "--flag", "ambiguous_evidence", "--seconds", "2.5", "--view", '{"composite": "swir"}'),
        ("review", "decide", d, "--skip", "--seconds", "1"),
        ("review", "queue", BANK),
        ("review", "status", BANK),
    ]


def _session(capsys, where, qids):
    """Run the session on a package (`--package FILE`) or a store (`--db FILE`); returns what each verb printed."""

    def args(step):  # --db is the tool's option, --package the verb's
        return (*where, *step) if where[0] == "--db" else (*step, *where)

    return [_ok(capsys, *args(step), "--user", "ann") for step in _steps(qids)]


def _worked(tmp_path, capsys, **team_args):
    """A team store and ann's package, worked on the laptop (another folder) through the CLI."""
    team = _team(tmp_path / "team" / "review.sqlite", **team_args)
    qids = _queue(team, "ann")
    pkg = tmp_path / "laptop" / "ann.pkg"
    _export(capsys, team.path, pkg)
    _session(capsys, ("--package", pkg), qids)
    return team, pkg, qids


# ----------------------------------------------------------------------------- the round trip


def test_package_round_trip_gives_the_decisions_made_locally(tmp_path, capsys):
    team = _team(tmp_path / "team" / "review.sqlite")
    control = _team(tmp_path / "control" / "review.sqlite")
    qids = _queue(team, "ann")
    assert qids == _queue(control, "ann")
    for store in (team, control):  # bob works at home, in both: ann's decisions complete items
        for qid in _queue(store, "bob"):
            api.decide(store, qid, api.Decision("accept", seconds=3.0), bank=BANK, user="bob")
    pkg = tmp_path / "laptop" / "ann.pkg"
    exported = _export(capsys, team.path, pkg)
    assert "8 open item(s) of rb for ann, 1 site record(s)" in exported
    assert os.listdir(pkg.parent) == ["ann.pkg"]  # one file

    on_laptop = _session(capsys, ("--package", pkg), qids)
    at_home = _session(capsys, ("--db", control.path), qids)
    assert [re.sub(r"decision \d+", "decision N", o) for o in on_laptop] == [
        re.sub(r"decision \d+", "decision N", o) for o in at_home
    ]  # the same answers, the same queue left, the same progress
    assert os.listdir(pkg.parent) == ["ann.pkg"]  # each verb closed the package whole again

    imported = _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    assert "from ann, bank rb: merged 5 decision(s) and 1 undo(s), 0 conflict(s)" in imported
    assert _decisions(team) == _decisions(control)
    flags = (
        "SELECT i.qid, i.state, i.audit, a.user, a.open, a.skipped FROM items i JOIN assignments a ON a.item = i.id "
    )
    assert team.db.execute(flags + "ORDER BY 1, 4").fetchall() == control.db.execute(flags + "ORDER BY 1, 4").fetchall()
    assert _events(team) == _events(control)  # decide, route, undo and its state change: all through the core
    states = dict(team.db.execute("SELECT qid, state FROM items").fetchall())
    assert [states[q] for q in qids[:4]] == ["consensus_accepted", "flagged", "flagged", "in_review"]
    routed = {r[0] for r in team.db.execute("SELECT action FROM events")}
    assert {"route_consensus", "route_flagged", "undo", "undo_stage1"} <= routed
    packaged = [r[0] for r in team.db.execute("SELECT action FROM events WHERE action LIKE 'package%' ORDER BY id")]
    assert packaged == ["package_export", "package_import"]
    detail = json.loads(team.db.execute("SELECT detail FROM events WHERE action = 'package_import'").fetchone()[0])
    assert (detail["merged"], detail["retracted"], detail["conflicts"], detail["annotator"]) == (5, 1, 0, "ann")
    with open_package(pkg) as package:  # the time each decision was made in the package is kept
        made = [r[0] for r in package.db.execute("SELECT created FROM decisions ORDER BY id")]
    assert [r[0] for r in team.db.execute("SELECT created FROM decisions WHERE user = 'ann' ORDER BY id")] == made
    assert api.verify_chain(team)[0] == _count(team, "events")

    # the signing key is kept in the team store, and is in nothing printed and no event
    secret = team.db.execute("SELECT secret FROM packages WHERE kind = 'issued'").fetchone()[0]
    assert len(secret) == 64
    assert secret not in exported + "".join(on_laptop) + imported
    assert secret not in json.dumps(list(team.db.query("SELECT * FROM events")))


def test_importing_twice_changes_nothing(tmp_path, capsys):
    team, pkg, _ = _worked(tmp_path, capsys)
    _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    tables = ("decisions", "events", "package_decisions", "assignments")
    before = {t: team.db.execute(f"SELECT * FROM {t}").fetchall() for t in tables}
    again = _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    assert "nothing new (all 6 decision(s) were imported before)" in again
    assert {t: team.db.execute(f"SELECT * FROM {t}").fetchall() for t in tables} == before
    # work goes on in the package: the next import merges only what is new
    _ok(capsys, "review", "undo", BANK, "--package", pkg, "--user", "ann")  # takes back the skip
    more = _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    assert "merged 0 decision(s) and 1 undo(s), 0 conflict(s), 6 imported before" in more
    assert _count(team, "decisions") == len(before["decisions"]) + 1


def test_a_version_changed_since_export_is_a_conflict_and_the_rest_merge(tmp_path, capsys):
    team, pkg, qids = _worked(tmp_path, capsys)
    changed = qids[0]  # accepted in the package
    questions = [bf.trend_question(f"q{i:03d}") for i in range(8)]
    for q in questions:
        if q["id"] == changed:
            q["text"] = "Has the open-water area grown from 1990 to 2021?"
    import_bank(team, _write(tmp_path / "bank-changed", questions), user="mia")
    out = _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    assert "merged 4 decision(s) and 1 undo(s), 1 conflict(s)" in out
    assert (
        f"conflict: rb/{changed} v1 (accept): the item changed since export (version 1 exported, now version 2)" in out
    )
    mine = [
        r[0]
        for r in team.db.execute("SELECT i.qid FROM decisions d JOIN items i ON i.id = d.item WHERE d.user = 'ann'")
    ]
    assert changed not in mine and set(qids[1:4]) <= set(mine)
    row = team.db.execute(
        "SELECT i.state, i.current_version, a.open FROM items i JOIN assignments a ON a.item = i.id AND a.user = 'ann' "
        "WHERE i.qid = ?",
        [changed],
    ).fetchone()
    assert tuple(row) == ("in_review", 2, 1)  # still waits for ann's decision on the new version
    assert (
        team.db.execute("SELECT reason FROM package_decisions WHERE outcome = 'conflict'")
        .fetchone()[0]
        .startswith("the item changed since export")
    )
    again = _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    # (it had said "all 6 decision(s) were imported before", then that one of them was refused: not imported)
    assert again.splitlines()[0].endswith(
        "nothing new: all 6 decision(s) were read by an earlier import (5 merged, 1 refused as conflicts)"
    )
    assert "imported before" not in again and len(again.splitlines()) == 1


def test_an_undo_of_a_decision_not_merged_is_not_merged_either(tmp_path, capsys):
    team, pkg, qids = _worked(tmp_path, capsys)
    changed = qids[2]  # accepted with a correction, taken back, flagged: all three on version 1
    questions = [bf.trend_question(f"q{i:03d}") for i in range(8)]
    for q in questions:
        if q["id"] == changed:
            q["text"] = "Has the open-water area grown from 1990 to 2021?"
    import_bank(team, _write(tmp_path / "bank-changed", questions), user="mia")
    out = _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    assert "merged 3 decision(s) and 0 undo(s), 3 conflict(s)" in out
    assert f"conflict: rb/{changed} v1 (retract): takes back a decision that was not merged; not merged" in out
    assert _count(team, "decisions") == 3 and team.db.execute(
        "SELECT count(*) FROM decisions WHERE verdict = 'retract'"
    ).fetchone() == (0,)


# ----------------------------------------------------------------------------- refused packages


def _tamper(path, *sql):
    con = sqlite3.connect(path)
    con.executescript(";\n".join(sql))
    con.commit()
    con.close()


def _refused(capsys, team, pkg, *expected):
    before = {t: _count(team, t) for t in ("decisions", "events", "package_decisions")}
    code, out, err = _cli(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: package {pkg} (")
    for text in expected:
        assert text in err
    assert err.rstrip().endswith("nothing was merged")
    assert {t: _count(team, t) for t in before} == before
    return err


@pytest.mark.parametrize(
    "sql, expected",
    [
        (
            [
                "INSERT INTO decisions (item, version, user, stage, verdict, reasons, created) "
                "VALUES (5, 1, 'ann', 1, 'accept', '[]', '2026-12-01T00:00:00.000000Z')"
            ],
            "decision 7 is not signed (added outside the tool)",
        ),
        (
            [
                "DROP TRIGGER decisions_no_update",
                "UPDATE decisions SET verdict = 'accept', reasons = '[]' WHERE id = 2",
            ],
            "decision 2 does not match its signature",
        ),
        (
            [
                "DROP TRIGGER package_signatures_no_update",
                "UPDATE package_signatures SET hmac = '" + "0" * 64 + "' WHERE decision = 1",
            ],
            "decision 1 does not match its signature",
        ),
        (
            [
                "DROP TRIGGER decisions_no_delete",
                "DROP TRIGGER package_signatures_no_delete",
                "DELETE FROM package_signatures WHERE decision = 1",
                "DELETE FROM decisions WHERE id = 1",
            ],
            "decision 2 does not match its signature",  # the chain of signatures is broken
        ),
        (
            ["DROP TRIGGER decisions_no_delete", "DELETE FROM decisions WHERE id = 6"],
            "decision 6 was signed but is gone",
        ),
        (["UPDATE items SET qid = 'q999' WHERE id = 1"], "decision 1 does not match its signature"),
        (
            ["DROP TRIGGER decisions_no_update", "UPDATE decisions SET confidence = 'high' WHERE id = 2"],
            "decision 2 does not match its signature",  # a confidence given afterwards (issue 30)
        ),
    ],
    ids=[
        "forged-decision",
        "changed-verdict",
        "edited-signature",
        "removed-decision",
        "removed-last",
        "moved-item",
        "added-confidence",
    ],
)
def test_a_package_edited_by_hand_is_refused_whole(tmp_path, capsys, sql, expected):
    team, pkg, _ = _worked(tmp_path, capsys)
    _tamper(pkg, *sql)
    _refused(capsys, team, pkg, expected)


def _confidences(store, user="ann"):
    return dict(
        store.db.execute(
            "SELECT i.qid, d.confidence FROM decisions d JOIN items i ON i.id = d.item WHERE d.user = ? "
            "AND d.verdict != 'retract' ORDER BY d.id",
            [user],
        ).fetchall()
    )


def test_the_confidence_given_in_a_package_is_signed_and_merged(tmp_path, capsys):
    team = _team(tmp_path / "team" / "review.sqlite")
    a, b, c = _queue(team, "ann")[:3]
    pkg = tmp_path / "laptop" / "ann.pkg"
    _export(capsys, team.path, pkg)
    for qid, verdict, sure in ((a, "--accept", "high"), (b, "--flag", "low"), (c, "--accept", None)):
        flag = ("wrong_reference",) if verdict == "--flag" else ()
        more = ("--confidence", sure) if sure else ()
        _ok(capsys, "review", "decide", qid, "--bank", BANK, verdict, *flag, *more, "--package", pkg, "--user", "ann")
    edited = tmp_path / "edited.pkg"  # low changed to high by hand: refused whole
    shutil.copy(pkg, edited)
    _tamper(edited, "DROP TRIGGER decisions_no_update", "UPDATE decisions SET confidence = 'high' WHERE id = 2")
    _refused(capsys, team, edited, "decision 2 does not match its signature")
    out = _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    assert "merged 3 decision(s)" in out and "without their confidence" not in out
    assert _confidences(team) == {a: "high", b: "low", c: None}


def test_a_package_signed_before_the_confidence_still_imports_without_it(tmp_path, capsys):
    """A package made by an earlier version signed each decision without its confidence (the columns of
    signing.SIGNED_COLS). It still imports; a confidence in it is covered by nothing, so it is not merged."""
    import hashlib
    import hmac

    from reviewer.review.signing import SIGNED_COLS

    team, pkg, qids = _worked(tmp_path, capsys)
    secret, pid, kid = team.db.execute("SELECT secret, id, key_id FROM packages WHERE kind = 'issued'").fetchone()
    con = sqlite3.connect(pkg)
    con.executescript(
        "DROP TRIGGER decisions_no_update; DROP TRIGGER package_signatures_no_update; "
        "UPDATE decisions SET confidence = 'high' WHERE id = 1"  # given with a version that did not sign it
    )
    cols = ", ".join(f"d.{c}" for c in SIGNED_COLS)
    rows = con.execute(
        f"SELECT {cols}, i.bank, i.qid, v.json FROM decisions d JOIN items i ON i.id = d.item "
        "JOIN item_versions v ON v.item = d.item AND v.version = d.version ORDER BY d.id"
    ).fetchall()
    prev = ""
    for r in rows:  # the chain as the earlier version signed it (the module's documented scheme)
        decision = dict(zip(SIGNED_COLS, r[: len(SIGNED_COLS)], strict=True))
        bank, qid, text = r[len(SIGNED_COLS) :]
        item = {
            "bank": bank,
            "qid": qid,
            "version": decision["version"],
            "sha256": "sha256:" + hashlib.sha256(text.encode()).hexdigest(),
        }
        body = {"package": pid, "key_id": kid, "decision": decision, "item": item, "prev": prev}
        raw = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
        prev = hmac.new(bytes.fromhex(secret), raw, hashlib.sha256).hexdigest()
        con.execute("UPDATE package_signatures SET hmac = ? WHERE decision = ?", [prev, decision["id"]])
    con.commit()
    con.close()
    out = _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    assert "merged 5 decision(s) and 1 undo(s), 0 conflict(s)" in out
    assert "1 decision(s) merged without their confidence" in out
    assert set(_confidences(team).values()) == {None}


def _swap_record(pkg, donor):
    """Give `pkg` the package record (id, key and secret, annotator, bank) of the package `donor`."""
    row = sqlite3.connect(donor).execute("SELECT * FROM packages WHERE kind = 'self'").fetchone()
    con = sqlite3.connect(pkg)
    con.execute("DELETE FROM packages")
    con.execute(f"INSERT INTO packages VALUES ({', '.join('?' * len(row))})", row)
    con.commit()
    con.close()


def test_a_package_replayed_for_another_annotator_bank_or_store_is_refused(tmp_path, capsys):
    team, pkg, _ = _worked(tmp_path, capsys, banks=(BANK, "rb2"))
    bob = tmp_path / "laptop" / "bob.pkg"
    _export(capsys, team.path, bob, annotator="bob")
    other_bank = tmp_path / "laptop" / "ann-rb2.pkg"
    _export(capsys, team.path, other_bank, bank="rb2")

    as_bob = tmp_path / "replay-bob.pkg"
    shutil.copy(pkg, as_bob)
    _swap_record(as_bob, bob)
    _refused(capsys, team, as_bob, "was issued to bob, but holds decisions or a profile of ann")

    as_rb2 = tmp_path / "replay-rb2.pkg"
    shutil.copy(pkg, as_rb2)
    _swap_record(as_rb2, other_bank)
    _refused(capsys, team, as_rb2, "was issued for bank rb2, but holds items of bank rb")

    elsewhere = _team(tmp_path / "elsewhere" / "review.sqlite", banks=(BANK, "rb2"))
    before = _count(elsewhere, "decisions")
    code, _, err = _cli(capsys, "--db", elsewhere.path, "package", "import", pkg, "--user", "mia")
    assert code == 2 and "was not issued by this store" in err and _count(elsewhere, "decisions") == before

    # the real one still imports
    assert "merged 5 decision(s)" in _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")


def test_package_verbs_refuse_what_is_not_a_package_and_non_maintainers(tmp_path, capsys):
    team = _team(tmp_path / "team" / "review.sqlite")
    code, _, err = _cli(capsys, "review", "next", BANK, "--package", tmp_path / "none.pkg", "--user", "ann")
    assert code == 2 and "no review package there" in err and not (tmp_path / "none.pkg").exists()
    code, _, err = _cli(capsys, "review", "next", BANK, "--package", team.path, "--user", "ann")
    assert code == 2 and "is a review store, not a review package" in err
    pkg = tmp_path / "ann.pkg"
    code, _, err = _cli(
        capsys, "--db", team.path, "package", "export", BANK, "--annotator", "ann", "--out", pkg, "--user", "ann"
    )
    assert code == 2 and "only maintainer may export or import review packages" in err and not pkg.exists()
    _export(capsys, team.path, pkg)
    code, _, err = _cli(
        capsys, "--db", team.path, "package", "export", BANK, "--annotator", "ann", "--out", pkg, "--user", "mia"
    )
    assert code == 2 and "exists already" in err
    code, _, err = _cli(capsys, "--db", team.path, "review", "next", BANK, "--package", pkg, "--user", "ann")
    assert code == 2 and "not both" in err
    code, _, err = _cli(capsys, "--db", team.path, "package", "import", team.path, "--user", "mia")
    assert code == 2 and "is a review store, not a review package" in err
    assert _count(team, "packages") == 1


# ----------------------------------------------------------------------------- durability


CHILD = r"""
import sys
from reviewer.review import api
from reviewer.review.packages import open_package

store = open_package(sys.argv[1])
while True:
    view = api.next_item(store, "rb", user="ann")
    if view is None:
        print("exhausted", flush=True)
        break
    verdict = "flag" if view["id"].endswith(("3", "7")) else "accept"
    out = api.decide(store, view["item"], api.Decision(verdict, reasons=["other"] if verdict == "flag" else None), user="ann")
    print("confirmed", out["decision"], flush=True)
"""


def test_a_package_killed_mid_decision_keeps_its_confirmed_decisions_and_imports(tmp_path, capsys):
    team = _team(tmp_path / "team" / "review.sqlite", n=120, k=1)
    pkg = tmp_path / "laptop" / "ann.pkg"
    _export(capsys, team.path, pkg)
    env = {k: v for k, v in os.environ.items() if k != "REVIEWER_USER"}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(pkg)], stdout=subprocess.PIPE, text=True, env=env)
    confirmed = []
    try:
        while len(confirmed) < 12:
            line = child.stdout.readline()
            assert line.startswith("confirmed"), line
            confirmed.append(int(line.split()[1]))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert Path(f"{pkg}-wal").exists()  # killed with its connection open
    with open_package(pkg) as package:  # reopen: SQLite recovers the write-ahead log
        ids = [r[0] for r in package.db.execute("SELECT id FROM decisions ORDER BY id")]
        signed = [r[0] for r in package.db.execute("SELECT decision FROM package_signatures ORDER BY decision")]
    assert set(confirmed) <= set(ids) and signed == ids
    out = _ok(capsys, "--db", team.path, "package", "import", pkg, "--user", "mia")
    assert f"merged {len(ids)} decision(s) and 0 undo(s), 0 conflict(s)" in out
    assert _count(team, "decisions") == len(ids)


# ----------------------------------------------------------------------------- blinding


def test_a_package_holds_no_trace_of_other_annotators_or_stage_2(tmp_path, capsys):
    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text(json.dumps({"question": bf.trend_question("q900"), "verdict": "accept"}) + "\n")
    team = _team(
        tmp_path / "team" / "review.sqlite",
        n=12,
        annotators=("ann", "bob", "cat"),
        gold={"gold": gold_file, "gold_share": 0.1},
    )
    shared = set(_queue(team, "ann")) & set(_queue(team, "bob"))
    assert shared
    for qid in _queue(team, "bob"):  # bob decides everything first, cat too; an expert adjudicates what is flagged
        api.decide(team, qid, api.Decision("flag", reasons=["other"], comment="bob was here"), bank=BANK, user="bob")
    for qid in _queue(team, "cat"):
        api.decide(team, qid, api.Decision("accept"), bank=BANK, user="cat")
    adjudicate = api.queue(team, BANK, user="eve")
    assert adjudicate
    for row in adjudicate:
        api.adjudicate(team, row["item"], api.Decision("accept", rationale="fine"), user="eve")
    assert "q900" in _queue(team, "ann")
    pkg = tmp_path / "ann.pkg"
    _export(capsys, team.path, pkg)

    con = sqlite3.connect(pkg)
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    dump = "\n".join(json.dumps(con.execute(f"SELECT * FROM {t}").fetchall()) for t in tables)
    for name in ("bob", "cat", "eve"):
        assert not re.search(rf"\b{name}\b", dump), name
    assert con.execute("SELECT name FROM users").fetchall() == [("ann",)]
    assert {r[0] for r in con.execute("SELECT DISTINCT user FROM assignments")} == {"ann"}
    for table in ("decisions", "gold", "shown", "allowances", "bank_review", "package_signatures"):
        assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
    items = con.execute("SELECT qid, gold, audit, state, position FROM items ORDER BY id").fetchall()
    assert [q for q, *_ in items] == _queue(team, "ann")  # in queue order, bob's decided ones among them
    assert {(g, a, s) for _, g, a, s, _ in items} == {(0, 0, "in_review")}  # the gold item looks like any other
    assert [p for *_, p in items] == list(range(len(items)))
    assert [r[0] for r in con.execute("SELECT action FROM events")] == ["package_export"]
    assert con.execute("SELECT DISTINCT origin, created_by FROM item_versions").fetchall() == [("generated", "package")]
    assert con.execute("SELECT site_dir FROM sites").fetchall() == [(SITE_DIR,)]
    assert con.execute("SELECT count(*) FROM scenes").fetchone()[0] == 1
    assert con.execute("SELECT id FROM bank_sites").fetchall() == [("a24",)]
    con.close()
    raw = pkg.read_bytes()  # nor in a free page of the file
    for name in (b"bob", b"cat", b"eve"):
        assert not re.search(rb"\b" + name + rb"\b", raw), name


def test_a_package_with_the_record_is_self_contained_and_reads_the_same_pixels(demo, tmp_path, capsys):
    """--with-record: the package carries the scenes its items need, clipped to the site. Unpacked on another
    machine (the team's site folder out of reach), the same dates open and read the same reflectance on the
    site grid; scenes outside the items' years are left out."""
    import numpy as np

    from reviewer.record.scan import open_index
    from reviewer.record.stack import open_stack

    site = tmp_path / "home" / "site"
    shutil.copytree(demo["site"], site)
    doc = json.loads((site / "site.json").read_text())  # the site: the inner 32 x 32 px of the scenes' 64 x 64
    w, s_, e, n = doc["bbox"]
    doc["bbox"] = [w + 480.0, s_ + 480.0, e - 480.0, n - 480.0]
    doc["shape"] = [32, 32]
    (site / "site.json").write_text(json.dumps(doc))
    team = Store(tmp_path / "team.sqlite")
    api.add_user(team, "mia", "maintainer")
    api.add_user(team, "ann", "annotator", by="mia")
    name, _ = import_bank(team, demo["out"], user="mia")
    open_index(site, team)
    trend = next(q for q in demo["bank"].questions if q["task"] == "quantify")
    api.assign(team, name, annotators=["ann"], k=1, seed=1, user="mia")
    pkg = tmp_path / "ann.pkg"
    out = _ok(capsys, "--db", tmp_path / "team.sqlite", "package", "export", name, "--annotator", "ann",
              "--out", pkg, "--with-record", "--user", "mia")  # fmt: skip
    assert "with the record:" in out
    home = open_index(site, team)
    team.close()
    shutil.move(str(site), str(tmp_path / "away"))  # the team's folder is gone from this machine
    assert _ok(capsys, "package", "open", pkg, "--no-gui").startswith("ready: reviewer review next")
    unpacked = Path(str(pkg) + ".record") / home.site.id
    with open_package(pkg) as package:
        assert api.site_folder(package, home.site.id) == str(unpacked)
        there = open_index(unpacked, package)
    start, end = int(trend["period"]["start"][:4]), int(trend["period"]["end"][:4])
    years = {s.date.year for s in there.record_scenes()}
    assert {start, end} <= years
    away = open_index(tmp_path / "away", Store(tmp_path / "scratch.sqlite"))
    assert len(there.record_scenes()) < len(away.record_scenes())  # only what the items need
    a = open_stack(away, sensors=("TM", "ETM+", "OLI"))
    b = open_stack(there, sensors=("TM", "ETM+", "OLI"))
    common = sorted(set(a.dates) & set(b.dates))
    assert common
    for day in common[:3]:
        i, j = a.dates.index(day), b.dates.index(day)
        ra, rb = a.read(i, "truecolor"), b.read(j, "truecolor")
        assert ra.shape == rb.shape and np.array_equal(np.isnan(ra), np.isnan(rb))
        assert np.allclose(ra, rb, equal_nan=True)
    clipped = next(unpacked.rglob("*_SR_B4.TIF"))
    original = tmp_path / "away" / clipped.relative_to(unpacked)
    import rasterio

    with rasterio.open(clipped) as small, rasterio.open(original) as big:
        assert (small.width, small.height) == (32 + 4, 32 + 4)  # the site plus 2 source pixels each side
        assert (big.width, big.height) == (64, 64)
        assert small.nodata == big.nodata and small.dtypes == big.dtypes
        assert np.array_equal(small.read(1), big.read(1, window=((14, 50), (14, 50))))


def test_a_packed_safe_keeps_its_root_metadata_and_reads_its_offset(tmp_path):
    """--with-record packs a Sentinel-2 SAFE with its root MTD_MSIL2A.xml (four folders above the bands),
    so the unpacked scene takes BOA_ADD_OFFSET from it, as at home, not from the baseline in the SAFE's
    name. The MTD here states -900 (the name's N0400 would give -1000), so B04 DN 1500 reads
    (1500 - 900) / 10000 = 0.06 on the unpacked copy."""
    import numpy as np

    from reviewer.record.decode import Grid, read_scene
    from reviewer.record.scan import open_index
    from reviewer.review.packages import _clip_needed
    from tests.conftest import write_site_json
    from tests.formats import S2_CRS, S2_ORIGIN, mtd_msil2a, write_safe

    w, n = S2_ORIGIN
    site = write_site_json(tmp_path / "home" / "s2", bbox=[w, n - 600, w + 600, n], crs=S2_CRS, resolution=10)
    bands = {("B04", 10): np.full((60, 60), 1500, np.uint16), ("SCL", 20): np.full((30, 30), 4, np.uint8)}
    safe = write_safe(site, bands, when="20230601T101559", baseline="04.00")
    (safe / "MTD_MSIL2A.xml").write_text(mtd_msil2a(baseline="04.00", offsets={b: -900 for b in range(13)}))
    store = Store(tmp_path / "team.sqlite")
    home = open_index(site, store)
    assert home.scenes[0].extra["offset"] == -900.0
    item = {**bf.trend_question("t1-1", "t1"), "period": {"start": "2023-01-01", "end": "2023-12-31"}}
    content = {  # what export_package gathers for an item of the site in 2023
        "items": [{"site": "t1", "json": json.dumps(item)}],
        "sites": [{"site_id": "t1", "site_dir": str(site)}],
        "scenes": [dict(r) for r in store.db.query("SELECT * FROM scenes")],
    }
    rows = _clip_needed(store, content, None)
    packed = {r["path"] for r in rows}
    assert f"{safe.name}/MTD_MSIL2A.xml" in packed
    away = tmp_path / "laptop" / "t1"
    for r in rows:
        (away / r["path"]).parent.mkdir(parents=True, exist_ok=True)
        (away / r["path"]).write_bytes(r["bytes"])
    shutil.rmtree(tmp_path / "home")  # the team's folder is gone from this machine
    (scene,) = open_index(away, Store(tmp_path / "laptop.sqlite")).scenes
    assert (scene.extra["offset"], scene.extra["offset_source"]) == (-900.0, "MTD_MSIL2A.xml")
    red = read_scene(scene, scene.product_spec, ["red"], Grid.of_site(open_index(away).site)).bands["red"]
    assert red[0, 0] == pytest.approx((1500 - 900) / 1e4, abs=1e-6)
