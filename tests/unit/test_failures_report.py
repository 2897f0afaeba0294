"""Outputs of a coded set (issue 13): Tab. 13 by leading vs other models, the C.5 counts, the CSV of coded runs,
the figure. A hand-built set; expected counts worked out below.

Models by pass^k: M1 90, M2 80, M3 50, M4 20, M5 10 -> the top half (rounded down) leads: M1, M2.
Step runs (code in force: the newest expert code, else the LLM's):
  s001 M1 LLM close_call, expert analysis -> analysis      s002 M1 LLM question             -> question
  s003 M2 expert analysis                 -> analysis      s004 M3 LLM data                 -> data
  s005 M4 LLM unfinished, expert unfinished then data -> data   s006 M5 LLM data           -> data
  s007 M5 not coded
  Tab. 13: Lead analysis 2, question 1; Other data 3; one step run not coded.
Pair runs: p001 M1 moved LLM nothing; p002 M2 moved LLM generic; p003 M3 moved expert reports_break;
  p004 M1 beyond LLM attributes; p005 M4 beyond LLM nothing, expert attributes; p006 M2 moved not coded.
  C.5: moved nothing 1, generic 1, reports_break 1; beyond attributes 2; one pair run not coded.
"""

from __future__ import annotations

import csv
import json

import pytest
from test_failures import all_runs, make_bank

from reviewer.cli import main
from reviewer.errors import ReviewError
from reviewer.failures.coding import FailureCode, code_run, insert_code
from reviewer.failures.report import leading, write_report
from reviewer.failures.sample import build_set, write_set
from reviewer.review import api
from reviewer.store import Store

STEPS = [("s001", "M1"), ("s002", "M1"), ("s003", "M2"), ("s004", "M3"), ("s005", "M4"), ("s006", "M5"), ("s007", "M5")]
PAIRS = [("p001", "M1", "moved"), ("p002", "M2", "moved"), ("p003", "M3", "moved"), ("p004", "M1", "beyond"),
         ("p005", "M4", "beyond"), ("p006", "M2", "moved")]  # fmt: skip


def hand_set():
    runs = [{"id": i, "part": "steps", "model": m, "question": "q1", "condition": "record", "pair": None, "pass": 1}
            for i, m in STEPS]  # fmt: skip
    runs += [{"id": i, "part": "pairs", "model": m, "question": "q1", "condition": "altered", "pair": "P1", "pass": 1,
              "outcome": o} for i, m, o in PAIRS]  # fmt: skip
    models = [{"model": f"M{i}", "pass3": p} for i, p in zip(range(1, 6), (90.0, 80.0, 50.0, 20.0, 10.0), strict=True)]
    return {"id": "fs-aaaaaaaaaaaa", "bank": {"name": "tiny", "version": "1", "sha256": "x"}, "pools": {},
            "models": models, "runs": runs}  # fmt: skip


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "review.sqlite") as s:
        api.add_user(s, "mia", "maintainer")
        api.add_user(s, "eve", "expert", by="mia")
        yield s


@pytest.fixture
def coded(store):
    doc = hand_set()
    run = {r["id"]: r for r in doc["runs"]}
    llm = {"s001": "close_call", "s002": "question", "s004": "data", "s005": "unfinished", "s006": "data",
           "p001": "nothing", "p002": "generic", "p004": "attributes", "p005": "nothing"}  # fmt: skip
    for rid, code in llm.items():
        insert_code(store, doc["id"], run[rid], FailureCode(code, "llm", "m", quote=f"quote {rid}"), event_user="mia")
    for rid, code in [("s001", "analysis"), ("s003", "analysis"), ("s005", "unfinished"), ("s005", "data"),
                      ("p003", "reports_break"), ("p005", "attributes")]:  # fmt: skip
        code_run(store, doc, rid, code, user="eve", note="checked" if rid == "s001" else None)
    return doc


def test_table13_and_c5_counts(store, coded, tmp_path):
    r = write_report(store, coded, tmp_path / "out", user="mia")
    assert r["leading"] == ["M1", "M2"]
    t13 = {c: v for c, v in r["table13"].items() if v["lead"] or v["other"]}
    assert t13 == {
        "data": {"lead": 0, "other": 3},
        "question": {"lead": 1, "other": 0},
        "analysis": {"lead": 2, "other": 0},
    }
    assert r["table13_totals"] == {"lead": 3, "other": 3}
    c5 = {c: v for c, v in r["c5"].items() if v["moved"] or v["beyond"]}
    assert c5 == {
        "attributes": {"moved": 0, "beyond": 2}, "reports_break": {"moved": 1, "beyond": 0},
        "generic": {"moved": 1, "beyond": 0}, "nothing": {"moved": 1, "beyond": 0}}  # fmt: skip
    assert r["not_coded"] == {"steps": 1, "pairs": 1}
    table = list(csv.reader((tmp_path / "out" / "table13.csv").open()))
    assert (
        table[0] == ["step", "lead", "other"] and table[1] == ["data", "0", "3"] and table[4] == ["analysis", "2", "0"]
    )
    assert "| Analysis | maps change from the imagery" in (tmp_path / "out" / "failures.md").read_text()


def test_csv_lists_every_coded_run_with_code_coder_quote_and_note(store, coded, tmp_path):
    write_report(store, coded, tmp_path / "out", user="mia")
    rows = list(csv.DictReader((tmp_path / "out" / "coded_runs.csv").open()))
    assert [r["run"] for r in rows] == [
        "s001",
        "s002",
        "s003",
        "s004",
        "s005",
        "s006",
        "p001",
        "p002",
        "p003",
        "p004",
        "p005",
    ]
    s001 = rows[0]
    assert (s001["code"], s001["coded_by"], s001["coder"], s001["quote"], s001["note"], s001["llm_code"]) == (
        "analysis",
        "expert",
        "eve",
        "quote s001",
        "checked",
        "close_call",
    )
    assert (rows[1]["code"], rows[1]["coded_by"], rows[1]["coder"], rows[1]["group"]) == (
        "question",
        "llm",
        "m",
        "lead",
    )
    assert (rows[4]["code"], rows[4]["expert_code"], rows[4]["group"]) == ("data", "data", "other")


def test_the_split_is_configurable(store, coded, tmp_path):
    assert leading(coded, "1") == ["M1"] and leading(coded, "M2,M4") == ["M2", "M4"] and leading(coded) == ["M1", "M2"]
    r = write_report(store, coded, tmp_path / "out", user="mia", split="1")
    t13 = {c: v for c, v in r["table13"].items() if v["lead"] or v["other"]}
    assert t13 == {
        "data": {"lead": 0, "other": 3},
        "question": {"lead": 1, "other": 0},
        "analysis": {"lead": 1, "other": 1},
    }
    with pytest.raises(ReviewError, match="'M9', not a model of the set"):
        leading(coded, "M1,M9")


def test_figure_as_png_and_svg(store, coded, tmp_path):
    write_report(store, coded, tmp_path / "out", user="mia")
    png = (tmp_path / "out" / "failures.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000
    svg = (tmp_path / "out" / "failures.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg  # text is drawn as paths; the PNG was looked at by eye


def _sampled_set(tmp_path):
    """(bank, runs file, set file, store) of the scoring tests' bank and runs, sampled with seed 3; users mia
    (maintainer) and eve (expert)."""
    bank = make_bank(tmp_path / "bank")
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    path = write_set(build_set([runs], bank, seed=3), tmp_path / "set.json")
    db = str(tmp_path / "review.sqlite")
    with Store(db) as s:
        api.add_user(s, "mia", "maintainer")
        api.add_user(s, "eve", "expert", by="mia")
    return bank, runs, path, db


def test_report_cli_on_a_sampled_set(tmp_path, capsys):
    bank, runs, path, db = _sampled_set(tmp_path)
    assert main(["--db", db, "failures", "code", str(path), "--run", "s002", "--code", "data", "--user", "eve"]) == 0
    assert main(["--db", db, "failures", "code", str(path), "--run", "p001", "--code", "nothing", "--user", "eve"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "failures", "report", str(path), "--out", str(tmp_path / "rep"), "--user", "eve"]) == 2
    assert "only maintainer may see the LLM's codes" in capsys.readouterr().err and not (tmp_path / "rep").exists()
    assert main(["--db", db, "failures", "report", str(path), "--out", str(tmp_path / "rep"), "--user", "mia"]) == 0
    out = capsys.readouterr().out
    assert "leading models: A" in out  # 3 models: the top half rounded down is A alone
    assert "Tab. 13: 0 lead + 1 other coded step runs; C.5: 1 moved + 0 beyond coded pair runs" in out
    assert "not coded yet: 2 step, 4 pair runs" in out
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == [
        "c5.csv",
        "coded_runs.csv",
        "failures.json",
        "failures.md",
        "failures.png",
        "failures.svg",
        "table13.csv",
    ]


def test_scoring_report_includes_the_coded_set(tmp_path, capsys):
    """`reviewer score ... --failures SET`: the report gets the failure coding section (Tab. 13 with the one
    coded step run, data, for model B or C: 0 lead + 1 other; the figure), for a maintainer only."""
    from html.parser import HTMLParser

    bank, runs, path, db = _sampled_set(tmp_path)
    assert main(["--db", db, "failures", "code", str(path), "--run", "s002", "--code", "data", "--user", "eve"]) == 0
    score = ["--db", db, "score", str(bank), str(runs), "--bootstrap", "20", "--failures", str(path)]
    capsys.readouterr()
    assert main([*score, "--out", str(tmp_path / "no"), "--user", "eve"]) == 2
    assert "only maintainer" in capsys.readouterr().err and not (tmp_path / "no").exists()
    assert main([*score, "--out", str(tmp_path / "rep"), "--user", "mia"]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Failure coding (" in md and "Table 13. First wrong step of 0 failed runs of the leading models" in md
    assert "and 1 of the others" in md and (tmp_path / "rep" / "figures" / "failures.png").stat().st_size > 5000

    class Imgs(HTMLParser):
        alts: list = []

        def handle_starttag(self, tag, attrs):
            if tag == "img":
                self.alts.append(dict(attrs)["alt"])

    p = Imgs()
    p.feed((tmp_path / "rep" / "report.html").read_text())
    assert p.alts[-1] == "failures"
