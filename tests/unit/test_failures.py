"""Failure-step coding (issue 13): codebooks, sampling, coding and the coder's view. Expected values by hand.

Bank: q1 computable trend (reference increase), q2 computable quantify (100, range [95, 105]), q3 recognition date
(2012, accept 2014), q4 insufficient. P1: an instrument pair on q1.
Runs (3 passes each, with the record):
  A  right everywhere (pass^3 100 on q1-q3); altered P1 decrease, decrease, increase -> moved, 2 wrong runs
  B  q1 decrease, decrease, increase (2 wrong); q2 50, insufficient evidence (unwarranted abstention), 100 (1 wrong);
     q3 2010 x3 (3 wrong); q4 increase x3 (wrong, but q4 is insufficient: not in the pool); P1 wrong on original
  C  right on q1 and q3; q2 pass 1 a harness error, then 100, 100 (pass^3 2/3); altered P1 right x3, no closed
     book -> beyond both, 3 runs
Pools: wrong runs 6 (all B), 1 unwarranted abstention, 1 harness error; 1 moved case (2 runs), 1 beyond (3 runs).
Order by pass^3: A 100, C 66.7, B 0.
"""

from __future__ import annotations

import json

import bank_factory as bf
import pytest

from reviewer.bank.io import BankContent, write_bank
from reviewer.cli import main
from reviewer.errors import ReviewError, SchemaError, ScoringError, StoreError
from reviewer.failures import codebook as CB
from reviewer.failures.coding import code_run, history, run_view, view_text
from reviewer.failures.sample import build_set, draw, load_set
from reviewer.review import api
from reviewer.store import Store

IE = "insufficient evidence"
FIELD = {"q1": "direction", "q2": "area", "q3": "year", "q4": "direction"}
B_Q2_METHOD = (
    "Counted forest pixels of the MODIS MCD12Q1 500 m land-cover map. Summed the area; no calibration was applied."
)
B_Q2_CAVEATS = "Landsat scenes were cloudy in 2005; sensor differences may matter."


def make_bank(folder):
    sites = [bf.site("a", theme="water"), bf.site("b", theme="forest", role="stable")]
    questions = [
        bf.trend_question("q1", "a"),
        bf.number_question("q2", "a", ref=100, lo=95, hi=105),
        bf.year_question("q3", "b", ref=2012, accept=[2014]),
        bf.insufficient_question("q4", "b"),
    ]
    write_bank(
        folder,
        BankContent("tiny", "1", questions, sites, [bf.pair("P1", "q1")], frozen=True, created="2026-11-30T12:00:00Z"),
    )
    return folder


def run(model, q, k, value, condition="record", pair=None, error=None, method=None, caveats=None):
    return {
        "model": model,
        "question": q,
        "condition": condition,
        "pair": pair,
        "pass": k,
        "answer": None if error else {FIELD[q]: value},
        "confidence": 0.8,
        "method": method or f"{model} method on {q} pass {k}.",
        "caveats": caveats or "",
        "tool_calls": 10 + k,
        "minutes": 2.5,
        "image_views": k - 1,
        "messages": 20,
        "error": error,
    }


def three(model, q, values, condition="record", pair=None):
    return [run(model, q, k, v, condition, pair) for k, v in enumerate(values, 1)]


def all_runs():
    R = three("A", "q1", ["increase"] * 3) + three("A", "q2", [100] * 3) + three("A", "q3", [2012] * 3)
    R += three("A", "q4", [IE] * 3) + three("A", "q1", ["decrease", "decrease", "increase"], "altered", "P1")
    R += three("B", "q1", ["decrease", "decrease", "increase"])
    R += [
        run("B", "q2", 1, 50, method=B_Q2_METHOD, caveats=B_Q2_CAVEATS),
        run("B", "q2", 2, IE),
        run("B", "q2", 3, 100),
    ]
    R += three("B", "q3", [2010] * 3) + three("B", "q4", ["increase"] * 3)
    R += three("B", "q1", ["decrease"] * 3, "altered", "P1")
    R += three("C", "q1", ["increase"] * 3) + [run("C", "q2", 1, None, error="timeout")]
    R += [run("C", "q2", 2, 100), run("C", "q2", 3, 100)] + three("C", "q3", [2012] * 3) + three("C", "q4", [IE] * 3)
    R += three("C", "q1", ["increase"] * 3, "altered", "P1")
    return R


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("failures")
    bank = make_bank(tmp / "bank")
    runs = tmp / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    return bank, runs


@pytest.fixture(scope="module")
def coding_set(inputs, tmp_path_factory):
    bank, runs = inputs
    out = tmp_path_factory.mktemp("set") / "set.json"
    assert (
        main(["failures", "sample", str(runs), str(bank), "--per-model", "12", "--seed", "3", "--out", str(out)]) == 0
    )
    return load_set(out)


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "review.sqlite") as s:
        api.add_user(s, "mia", "maintainer")
        api.add_user(s, "eve", "expert", by="mia")
        api.add_user(s, "max", "expert", by="mia")
        api.add_user(s, "ann", "annotator", by="mia")
        yield s


# ----------------------------------------------------------------------------- codebooks


def test_codebooks_hold_the_papers_codes_with_definitions_and_examples():
    cb = CB.codebook()
    step, sensor = cb.schemes["step"], cb.schemes["sensor"]
    assert step.names == ("data", "time_sampling", "question", "analysis", "close_call", "unfinished", "other")
    assert sensor.names == ("attributes", "reports_break", "separate", "generic", "nothing")
    assert [c.key for c in step.codes] == list("1234567")
    assert "winter as December to February" in step.codes[2].definition
    assert all(len(c.example) > 40 for c in (*step.codes, *sensor.codes))
    assert "outside the burned area" in sensor.real_event_rule
    assert (cb.coders, cb.precoders, cb.llm_viewers) == (("expert",), ("maintainer",), ("maintainer",))


def test_a_broken_codebook_is_refused_on_load(monkeypatch, tmp_path):
    doc = json.loads((CB.FAILURES_DIR / "codebook.json").read_text())
    doc["schemes"]["step"]["codes"][1]["key"] = "1"  # two codes on key 1
    (tmp_path / "codebook.json").write_text(json.dumps(doc))
    (tmp_path / "keywords.json").write_text((CB.FAILURES_DIR / "keywords.json").read_text())
    monkeypatch.setattr(CB, "FAILURES_DIR", tmp_path)
    CB.codebook.cache_clear()
    try:
        with pytest.raises(SchemaError, match="key '1' is used twice"):
            CB.codebook()
        del doc["schemes"]["sensor"]["codes"][0]["definition"]
        (tmp_path / "codebook.json").write_text(json.dumps(doc))
        with pytest.raises(SchemaError, match="definition"):
            CB.codebook()
    finally:
        CB.codebook.cache_clear()


def test_keyword_passes_mark_candidate_statements():
    marked = CB.mark("ETM+ and OLI-2 stepped down in 2012. The TMAX series was fine.\nNo problems; all good")
    assert [m["text"] for m in marked] == [
        "ETM+ and OLI-2 stepped down in 2012.",
        "The TMAX series was fine.",
        "No problems;",
        "all good",
    ]
    assert marked[0]["passes"] == {"sensors": ["ETM+", "OLI-2"], "break": ["stepped"]}
    assert [m["candidate"] for m in marked] == [True, False, False, False]  # TM inside TMAX is no sensor


# ----------------------------------------------------------------------------- sampling


def test_pools_are_counted(coding_set):
    assert coding_set["pools"] == {
        "wrong_runs": 6,
        "wrong_runs_by_model": {"B": 6},
        "unwarranted_abstentions": 1,
        "harness_errors": 1,
        "sampled": 3,
        "moved_cases": 1,
        "moved_wrong_runs": 2,
        "beyond_cases": 1,
        "beyond_runs": 3,
        "pair_harness_errors": 0,
    }
    assert [(m["model"], round(m["pass3"], 1)) for m in coding_set["models"]] == [("A", 100.0), ("C", 66.7), ("B", 0.0)]


def test_sample_takes_one_run_per_model_and_question_never_an_abstention(coding_set):
    steps = [r for r in coding_set["runs"] if r["part"] == "steps"]
    assert [(r["id"], r["model"], r["question"]) for r in steps] == [
        ("s001", "B", "q1"),
        ("s002", "B", "q2"),
        ("s003", "B", "q3"),
    ]
    assert steps[0]["pass"] in (1, 2) and steps[1]["pass"] == 1  # q2 pass 2 abstained, pass 3 is right
    assert not any(r["right"] or r["abstained"] for r in steps)


def test_pair_part_holds_moved_wrong_runs_and_every_beyond_run(coding_set):
    pairs = [
        (r["id"], r["model"], r["pass"], r["outcome"], r["right"]) for r in coding_set["runs"] if r["part"] == "pairs"
    ]
    assert pairs == [
        ("p001", "A", 1, "moved", False),
        ("p002", "A", 2, "moved", False),
        ("p003", "C", 1, "beyond", True),
        ("p004", "C", 2, "beyond", True),
        ("p005", "C", 3, "beyond", True),
    ]


def test_an_errored_altered_run_is_left_out_of_the_pair_part_and_counted(inputs, tmp_path):
    bank, _ = inputs
    runs = [r for r in all_runs() if (r["model"], r["condition"], r["pass"]) != ("A", "altered", 1)]
    runs.append(run("A", "q1", 1, None, "altered", "P1", error="timeout"))  # still moved: not right in all 3
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    doc = build_set([path], bank, seed=3)
    assert (doc["pools"]["moved_wrong_runs"], doc["pools"]["pair_harness_errors"]) == (1, 1)
    assert [(r["id"], r["model"], r["pass"]) for r in doc["runs"] if r["part"] == "pairs"][0] == ("p001", "A", 2)


def test_sampling_is_seeded_and_stable(inputs):
    bank, runs = inputs
    keys = lambda doc: [(r["model"], r["question"], r["pass"]) for r in doc["runs"]]  # noqa: E731
    a = build_set([runs], bank, per_model=2, seed=7)
    assert (
        keys(a) == keys(build_set([runs], bank, per_model=2, seed=7))
        and a["id"] == build_set([runs], bank, per_model=2, seed=7)["id"]
    )
    draws = {tuple(keys(build_set([runs], bank, per_model=2, seed=s))[:2]) for s in range(8)}
    assert len(draws) > 1  # the seed changes the draw
    for picked in draws:
        assert len({q for _, q, _ in picked}) == 2  # at most one per model and question


def test_draw_per_model_is_independent_of_other_models():
    pool = [{"model": m, "question": f"q{i}", "pass": 1} for m in ("X", "Y") for i in range(10)]
    alone = draw([r for r in pool if r["model"] == "X"], 3, seed=1)
    together = [r for r in draw(pool, 3, seed=1) if r["model"] == "X"]
    assert alone == together and len(alone) == 3


def test_a_scoring_report_folder_names_its_runs(inputs, tmp_path):
    from reviewer.scoring.api import score
    from reviewer.scoring.options import ScoringOptions

    bank, runs = inputs
    score(bank, [runs], tmp_path / "report", ScoringOptions(bootstrap=0), report=False)
    doc = build_set([tmp_path / "report"], bank, per_model=12, seed=3)
    assert doc["pools"]["wrong_runs"] == 6 and doc["runs_files"] == [str(runs)]
    scores = json.loads((tmp_path / "report" / "scores.json").read_text())
    scores["bank"]["sha256"] = "sha256:" + "0" * 64
    (tmp_path / "report" / "scores.json").write_text(json.dumps(scores))
    with pytest.raises(ScoringError, match="not of the bank given"):
        build_set([tmp_path / "report"], bank, per_model=12, seed=3)


def test_sample_cli_reports_the_pools(inputs, tmp_path, capsys):
    bank, runs = inputs
    assert main(["failures", "sample", str(runs), str(bank), "--seed", "1", "--out", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "wrong runs on computable and recognition questions with the record: 6" in out
    assert "1 unwarranted abstentions, 1 harness errors" in out
    assert "2 wrong runs in 1 cases that moved, 3 runs in 1 cases beyond both" in out
    assert "B: 6 wrong runs, 3 sampled" in out


def test_a_damaged_set_is_named(tmp_path, capsys):
    bad = tmp_path / "set.json"
    bad.write_text('{"format": 1}')
    assert main(["failures", "show", str(bad), "--run", "s001"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "set.json" in err and err.count("\n") == 1
    bad.write_text('{"runs": [}')  # a hand edit: a value wanted where "}" (column 11) is
    assert main(["failures", "show", str(bad), "--run", "s001"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {bad}: not a coding set: not valid JSON: line 1, column 11\n"


def test_a_set_checked_once_is_not_checked_again_but_a_changed_one_is(coding_set, tmp_path, monkeypatch):
    import reviewer.schemas

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "set.json"
    path.write_text(json.dumps(coding_set))
    assert load_set(path)["id"] == coding_set["id"]  # checked, and remembered
    checks = []
    real = reviewer.schemas.validate
    monkeypatch.setattr(reviewer.schemas, "validate", lambda *a, **k: checks.append(a[1]) or real(*a, **k))
    assert load_set(path)["id"] == coding_set["id"]
    assert checks == []  # the same bytes: no second check (the cost of a scripted `failures code` loop)
    damaged = dict(coding_set, runs=[{**coding_set["runs"][0], "part": "nowhere"}])
    path.write_text(json.dumps(damaged))
    with pytest.raises(SchemaError) as err:
        load_set(path)
    assert checks == ["failure_set"] and err.value.field == "runs.0.part"
    with pytest.raises(SchemaError):
        load_set(path)  # a file that failed is never remembered as checked


def test_failures_code_in_a_loop_does_not_import_jsonschema(coding_set, tmp_path):
    """The second call on the same set and codebook reads the remembered checks (subprocesses, real CLI)."""
    import os
    import subprocess
    import sys

    path = tmp_path / "set.json"
    path.write_text(json.dumps(coding_set))
    db = tmp_path / "db.sqlite"
    with Store(db) as s:
        api.add_user(s, "mia", "maintainer")
        api.add_user(s, "eve", "expert", by="mia")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    probe = (
        "import sys; from reviewer.cli import main; rc = main(sys.argv[1:]); "
        "print('jsonschema' in sys.modules, rc, file=sys.stderr)"
    )
    argv = ["--db", str(db), "failures", "code", str(path), "--run", "s001", "--code", "1", "--user", "eve"]
    first = subprocess.run([sys.executable, "-c", probe, *argv], env=env, capture_output=True, text=True)
    again = subprocess.run([sys.executable, "-c", probe, *argv], env=env, capture_output=True, text=True)
    assert first.stderr.split()[-2:] == ["True", "0"]  # checked on the first call
    assert again.stderr.split()[-2:] == ["False", "0"]
    assert "saved s001: data (was data)" in again.stdout
    with Store(db) as s:
        assert [r["code"] for r in history(s, coding_set["id"], "s001")] == ["data", "data"]


# ----------------------------------------------------------------------------- coding


def test_code_saved_with_event_and_a_correction_is_a_new_row(store, coding_set):
    first = code_run(store, coding_set, "s002", "data", user="eve", note="500 m map")
    second = code_run(store, coding_set, "s002", "4", user="eve")  # key 4 picks analysis
    assert (first["code"], first["replaces"]) == ("data", None)
    assert (second["code"], second["replaces"]) == ("analysis", "data")
    rows = history(store, coding_set["id"], "s002")
    assert [(r["code"], r["coder"], r["note"], r["replaces"]) for r in rows] == [
        ("data", "eve", "500 m map", None),
        ("analysis", "eve", None, rows[0]["id"]),
    ]
    events = list(
        store.db.query("SELECT user, action, before, after, detail FROM events WHERE action = 'failure_code'")
    )
    assert [(e["user"], e["before"], e["after"]) for e in events] == [
        ("eve", None, "data"),
        ("eve", "data", "analysis"),
    ]
    assert json.loads(events[1]["detail"])["run"] == "s002"
    with pytest.raises(StoreError, match="append-only"):
        with store.transaction() as db:
            db.execute("UPDATE failure_codes SET code = 'other'")


def test_roles_and_codes_are_enforced(store, coding_set):
    with pytest.raises(ReviewError, match="ann is annotator: only expert may code"):
        code_run(store, coding_set, "s001", "data", user="ann")
    with pytest.raises(ReviewError, match="'attributes' is not a step code"):
        code_run(store, coding_set, "s001", "attributes", user="eve")
    code_run(store, coding_set, "p001", "nothing", user="eve")  # pair runs take sensor codes
    with pytest.raises(ReviewError, match="no run 's999'"):
        code_run(store, coding_set, "s999", "data", user="eve")
    assert store.db.execute("SELECT count(*) FROM failure_codes").fetchone()[0] == 1


def test_view_has_question_answer_marked_report_other_passes_and_work(store, coding_set):
    v = run_view(coding_set, "s002")
    assert v["question"] == {
        "id": "q2",
        "text": "How many km2 of forest were lost?",
        "conclusion": "area",
        "reference": 100,
        "range": [95, 105],
        "period": {"start": "2001-01-01", "end": "2020-12-31"},
        "other_fields": {},
    }
    assert run_view(coding_set, "s001")["question"]["other_fields"] == {
        "trend": {"reference": 0.28, "range": [0.25, 0.31]}
    }
    assert (v["model"], v["pass"], v["answer"], v["right"], v["confidence"]) == ("B", 1, 50, False, 0.8)
    assert v["answer_fields"] == {}
    assert [(s["text"], s["passes"]) for s in v["method"]] == [
        ("Counted forest pixels of the MODIS MCD12Q1 500 m land-cover map.", {"sensors": ["MODIS"]}),
        ("Summed the area;", {}),
        ("no calibration was applied.", {"break": ["calibration"]}),
    ]
    assert [s["candidate"] for s in v["caveats"]] == [True, True]
    assert v["other_passes"] == [
        {"pass": 2, "conclusion": IE, "right": False, "confidence": 0.8},
        {"pass": 3, "conclusion": 100, "right": True, "confidence": 0.8},
    ]
    assert v["work"] == {"tool_calls": 11, "minutes": 2.5, "image_views": 0}
    assert [c["key"] for c in v["codes"]] == list("1234567") and v["rule"] is None
    code_run(store, coding_set, "s002", "data", user="eve")
    assert run_view(coding_set, "s002", store=store, user="eve")["my_code"] == {"code": "data", "note": None}
    assert run_view(coding_set, "s002", store=store, user="max")["my_code"] is None
    assert v["alteration"] is None  # a step run: no pair


def test_a_pair_runs_view_says_what_the_pair_altered(coding_set):
    """bank_factory's pair P1: Terra NDVI scaled by 0.8 from 2018 (the coder reads the report against it)."""
    v = run_view(coding_set, "p001")
    assert v["alteration"] == {
        "satellite": "terra", "variable": "ndvi", "alteration": "scale", "factor": 0.8, "from": "2018-01-01",
        "to": None, "description": "Terra NDVI scaled down 20% from 2018",
    }  # fmt: skip
    assert "altered: terra ndvi scale x0.8 from 2018-01-01 (Terra NDVI scaled down 20% from 2018)" in view_text(v)
    older = {k: v for k, v in coding_set.items() if k != "pairs"}  # a set sampled before pairs were kept
    assert run_view(older, "p001")["alteration"] is None


def test_code_and_show_cli(store, coding_set, tmp_path, capsys):
    path = tmp_path / "set.json"
    path.write_text(json.dumps(coding_set))
    db = str(store.path)
    assert main(["--db", db, "failures", "code", str(path), "--run", "p003", "--code", "1", "--user", "eve"]) == 0
    assert main(["--db", db, "failures", "code", str(path), "--run", "p003", "--code", "generic", "--user", "eve"]) == 0
    assert capsys.readouterr().out.splitlines() == ["saved p003: attributes", "saved p003: generic (was attributes)"]
    assert main(["--db", db, "failures", "show", str(path), "--run", "s002", "--user", "eve"]) == 0
    out = capsys.readouterr().out
    assert (
        "reference area: 100 (range 95 to 105)" in out
        and "  >> no calibration was applied.   [break: calibration]" in out
    )
    assert "other pass 3: 100 (right)" in out and "work: 11 tool calls, 2.5 minutes, 0 images viewed" in out
    assert main(["--db", db, "failures", "code", str(path), "--run", "s001", "--code", "data", "--user", "ann"]) == 2
    assert capsys.readouterr().err.startswith("error: user ann is annotator")


def test_list_shows_the_coders_progress(store, coding_set, tmp_path, capsys):
    path = tmp_path / "set.json"
    path.write_text(json.dumps(coding_set))
    code_run(store, coding_set, "s002", "data", user="eve")
    code_run(store, coding_set, "s003", "other", user="max")  # another expert's code is not eve's
    db = str(store.path)
    assert main(["--db", db, "failures", "list", str(path), "--part", "steps", "--user", "eve"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["s001  B  q1  to code", "s002  B  q2  data", "s003  B  q3  to code"]
    assert captured.err == "1 of 3 coded by you\n"
    assert main(["--db", db, "failures", "list", str(path), "--todo", "--user", "eve"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == [
        "s001", "s003", "p001", "p002", "p003", "p004", "p005"]  # fmt: skip


def test_an_unknown_run_names_the_sets_runs_or_says_it_holds_none(store, coding_set):
    """Coding an empty set (every wrong run a harness error, none sampled) said "no run 's001' in coding set ...
    (ids s001... and p001...)", naming ids the set does not have. Now: the set's first and last ids, or none."""
    steps = [e["id"] for e in coding_set["runs"] if e["id"].startswith("s")]
    pairs = [e["id"] for e in coding_set["runs"] if e["id"].startswith("p")]
    with pytest.raises(ReviewError, match=rf"\(its runs: s001..{steps[-1]}; p001..{pairs[-1]}\)$"):
        code_run(store, coding_set, "s999", "data", user="eve")
    empty = {**coding_set, "runs": []}
    with pytest.raises(ReviewError, match=rf"no run 's001': coding set {coding_set['id']} holds no runs$"):
        code_run(store, empty, "s001", "data", user="eve")
