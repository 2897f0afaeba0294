"""The pilot-run audit (EarthRecord Sec. 2.4): rules as data, each firing on a case built for it and not on
a near miss; the maintainer's send-back and removal in the review store (roles, one event each, one
transaction); a freeze afterwards listing the removal in qc.json; rescoring on the corrected bank refused
when a text changed and accepted when only a reference did. Expected values are worked out in comments.
"""

import copy
import json

import bank_factory as bf
import pytest
from test_freeze import _adjudicate_all, _reviewed
from test_review_workflow import BANK
from test_scoring_metrics import all_runs, make_bank

from reviewer import schemas
from reviewer.bank.io import BankContent, load_bank, write_bank
from reviewer.cli import main
from reviewer.errors import ReviewError, SchemaError, ScoringError
from reviewer.review import api
from reviewer.review.audit import RULES_PATH, audit, audit_rules, load_audit, parse_rules
from reviewer.review.freeze import freeze
from reviewer.scoring.api import compute_scores
from reviewer.scoring.options import ScoringOptions
from reviewer.scoring.rescore import question_hash

IE = "insufficient evidence"


def _runs_file(path, runs):
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return path


def _pilot(qid, field, values, model="pilot", **answer):
    """One run per value, passes 1..n, condition record."""
    return [
        {"model": model, "question": qid, "condition": "record", "pass": k, "answer": {field: v, **answer}}
        for k, v in enumerate(values, start=1)
    ]


def _rules(doc, qid):
    return next((q["rules"] for q in doc["questions"] if q["id"] == qid), [])


def _evidence(doc, qid, rule):
    return [e for q in doc["questions"] if q["id"] == qid for e in q["evidence"] if e["rule"] == rule]


# ----------------------------------------------------------------------------- a hand-built pilot bank

DIR_OPTS = ["down", "about the same", "up"]


def water_area(qid, ends, directions=None, start=100.0):
    """quantify.water_area: relative change per method = 100 (end - start) / start, threshold +-10%."""
    methods = {f"m{i}": e for i, e in enumerate(ends, start=1)}
    return {
        "id": qid,
        "site": "a",
        "class": "computable",
        "task": "quantify",
        "period": {"start": "2002-01-01", "end": "2008-12-31"},
        "text": "How many km2 of open water were there in 2002 and in 2008, and did it go down, about the same or "
        "up (about the same means within +-10% of the 2002 area)?",
        "fields": [
            {"name": "area_start", "type": "number", "unit": "km2"},
            {"name": "area_end", "type": "number", "unit": "km2"},
            {"name": "direction", "type": "category", "options": DIR_OPTS},
        ],
        "conclusion": "direction",
        "reference": {"area_start": start, "area_end": sorted(ends)[1], "direction": "up"},
        "reference_range": {"area_start": [start * 0.95, start * 1.05], "area_end": [100.0, 130.0]},
        "no_change": "about the same",
        "reference_source": "method",
        "sensors": ["TM", "ETM+"],
        "multi_sensor": True,
        "provenance": {
            "generator": "test",
            "template": "quantify.water_area",
            "phrasing": 0,
            "seed": 0,
            "methods": {
                "area_start": {m: start for m in methods},
                "area_end": methods,
                "direction": directions or {m: "up" for m in methods},
            },
            "thresholds": {"same_within_pct": 10, "near_margin_pct": 5, "min_obs_year": 2},
            "params": {"y1": 2002, "y2": 2008},
        },
    }


def tree_change(qid, change, changed, share=5):
    """detect.tree_cover_change: |change| per method against the stated share (params.share)."""
    return {
        "id": qid,
        "site": "a",
        "class": "computable",
        "task": "detect",
        "period": {"start": "2001-01-01", "end": "2020-12-31"},
        "text": f"Did tree cover change by more than {share}% of the site's area between 2001 and 2020? "
        "Answer yes or no and give the change in percent of the site.",
        "fields": [
            {"name": "changed", "type": "category", "options": ["no", "yes"]},
            {"name": "change", "type": "number", "unit": "%"},
        ],
        "conclusion": "changed",
        "reference": {"changed": "yes", "change": sorted(change.values())[1]},
        "reference_range": {"change": [-30.0, 30.0]},
        "no_change": "no",
        "reference_source": "method",
        "sensors": ["TM", "ETM+", "OLI"],
        "multi_sensor": True,
        "provenance": {
            "generator": "test",
            "template": "detect.tree_cover_change",
            "phrasing": 0,
            "seed": 0,
            "methods": {"change": change, "changed": changed},
            "thresholds": {"choices_pct": [1, 2, 3, 5, 10, 20], "near_ratio": 0.3, "abs_floor_pct": 0.5},
            "params": {"y1": 2001, "y2": 2020, "share": share},
        },
    }


def water_trend(qid, p_values, **over):
    """trend.water_trend: per-method p-values (provenance.p_values) against alpha 0.05, on a log10 scale."""
    q = bf.trend_question(qid, "a", **over)
    q["provenance"] = {
        "generator": "test",
        "template": "trend.water_trend",
        "phrasing": 0,
        "seed": 0,
        "methods": {"direction": {m: "increase" for m in p_values}, "slope": {m: 0.28 for m in p_values}},
        "thresholds": {"alpha": 0.05, "near_p_low": 0.02, "near_p_high": 0.12, "min_year_coverage": 0.7},
        "p_values": p_values,
    }
    return q


def pilot_bank(folder):
    questions = [
        bf.trend_question("w1", "a"),  # agreeing_wrong: decrease x3
        bf.trend_question("w2", "a"),  # near miss: decrease, decrease, increase
        bf.trend_question("w3", "a"),  # near miss: decrease, decrease, no significant change (flips instead)
        bf.number_question("n1", "a", ref=100, lo=95, hi=105),  # near_range: 106, 107.5 within 25% of width 10
        bf.number_question("n2", "a", ref=100, lo=95, hi=105),  # near miss: one near (106), one at 0.3 (108)
        bf.year_question("f1", "b", ref=2012, accept=[2014]),  # flip: 2012, 2013, 2012
        bf.year_question("f2", "b", ref=2012, accept=[2014]),  # near miss: 2012, 2014, 2012 (a tie, both right)
        bf.trend_question("f3", "a"),  # near miss: "Increase ", "increase", "INCREASE"
        # threshold: relative changes 12, 14, 16 (spread 4, reach 2) come down to 10 = the +-10% threshold
        water_area("s1", [112.0, 114.0, 116.0]),
        # near miss: 13, 14, 15 (spread 2, reach 1) stop at 12
        water_area("s2", [113.0, 114.0, 115.0]),
        # split: one of three methods says "no"; and |change| 4..7 straddles the 5% share
        tree_change("s3", {"m1": 6.0, "m2": 7.0, "m3": 4.0}, {"m1": "yes", "m2": "yes", "m3": "no"}),
        # near miss: all "yes", |change| 8..10 (reach 1) stops at 7 > 5
        tree_change("s4", {"m1": 8.0, "m2": 9.0, "m3": 10.0}, {"m1": "yes", "m2": "yes", "m3": "yes"}),
        # log10 p: -3 .. -1.52 (spread 1.48, reach 0.74) reaches log10 0.05 = -1.30
        water_trend("s5", {"ols": 0.001, "theil_sen": 0.03}),
        # near miss: -6 .. -4 (reach 1) stops at -3
        water_trend("s6", {"ols": 1e-6, "theil_sen": 1e-4}),
        # abstain_few_scenes: 2001-2005 at site c; i1 records 1 clear observation in 2003
        bf.trend_question("a1", "c", period={"start": "2001-01-01", "end": "2005-12-31"}),
        # near miss: 2006-2009 has no year with <= 2 clear observations (2010 has 1, outside the period)
        bf.trend_question("a2", "c", period={"start": "2006-01-01", "end": "2009-12-31"}),
        # no count in the bank for site a: only the sensors; ETM+ alone is thin
        bf.trend_question("a3", "a", sensors=["ETM+"], multi_sensor=False),
        # near miss: the same without thin sensors (TM, ETM+, OLI)
        bf.trend_question("a4", "a"),
        bf.insufficient_question(
            "i1",
            "c",
            provenance={
                "generator": "test",
                "template": "trend.water_trend",
                "phrasing": 0,
                "seed": 0,
                "methods": {},
                "observations": {"clear_observations_per_year": {"2003": 1, "2010": 1, "2007": 5}},
            },
        ),
    ]
    sites = [bf.site("a"), bf.site("b", theme="forest"), bf.site("c", theme="water", role="obscure")]
    write_bank(folder, BankContent("pilot", "1", questions, sites, [], frozen=False, created="2026-11-30T12:00:00Z"))
    return folder


def pilot_runs():
    R = []
    R += _pilot("w1", "direction", ["decrease"] * 3)
    R += _pilot("w2", "direction", ["decrease", "decrease", "increase"])
    R += _pilot("w3", "direction", ["decrease", "decrease", "no significant change"])
    R += _pilot("n1", "area", [106, 107.5, 100])
    R += _pilot("n2", "area", [106, 108, 100])
    R += _pilot("f1", "year", [2012, 2013, 2012])
    R += _pilot("f2", "year", [2012, 2014, 2012])
    R += _pilot("f3", "direction", ["Increase ", "increase", "INCREASE"])
    for qid in ("s1", "s2"):
        R += _pilot(qid, "direction", ["up"] * 3)
    for qid in ("s3", "s4"):
        R += _pilot(qid, "changed", ["yes"] * 3)
    for qid in ("s5", "s6"):
        R += _pilot(qid, "direction", ["increase"] * 3)
    for qid in ("a1", "a2", "a3", "a4"):
        R += _pilot(qid, "direction", [IE, IE, "increase"])
    R += _pilot("i1", "direction", [IE] * 3)  # right: the reference is insufficient evidence
    return R


@pytest.fixture(scope="module")
def pilot(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pilot")
    bank = pilot_bank(tmp / "bank")
    runs = _runs_file(tmp / "runs.jsonl", pilot_runs())
    return {"bank": bank, "runs": runs, "doc": audit(bank, [runs]), "tmp": tmp}


def test_the_rules_are_data_validated_on_load():
    rules = audit_rules()
    assert [r.id for r in rules.rules] == [
        "agreeing_wrong",
        "near_range",
        "flipping_conclusion",
        "method_spread",
        "abstain_few_scenes",
        "closed_book_right",
    ]
    assert all(r.description and r.parameters for r in rules.rules)
    doc = json.loads(RULES_PATH.read_text())
    bad = copy.deepcopy(doc)
    bad["rules"][1]["parameters"]["share_of_width"] = "a quarter"
    with pytest.raises(SchemaError, match="rules.1.parameters.share_of_width"):
        parse_rules(bad)
    bad = copy.deepcopy(doc)
    bad["rules"][0]["kind"] = "gut_feeling"
    with pytest.raises(SchemaError):
        parse_rules(bad)
    bad = copy.deepcopy(doc)
    bad["rules"][2]["id"] = "agreeing_wrong"
    with pytest.raises(SchemaError, match="duplicate rule id"):
        parse_rules(bad)


def test_agreeing_wrong_fires_on_one_other_answer_only(pilot):
    doc = pilot["doc"]
    assert "agreeing_wrong" in _rules(doc, "w1")
    (e,) = _evidence(doc, "w1", "agreeing_wrong")
    assert e["model"] == "pilot" and e["details"]["answer"] == "decrease" and e["details"]["passes"] == 3
    assert 'all 3 passes answered "decrease" (reference "increase")' in e["summary"]
    assert "agreeing_wrong" not in _rules(doc, "w2")  # one pass right
    assert "agreeing_wrong" not in _rules(doc, "w3")  # wrong, but two answers
    assert "agreeing_wrong" not in _rules(doc, "a1")  # abstentions are the scene rule's


def test_near_range_fires_on_answers_just_outside(pilot):
    doc = pilot["doc"]
    (e,) = _evidence(doc, "n1", "near_range")
    # 106 is 0.1 and 107.5 is 0.25 of the width 10 beyond 105: both within 25%
    assert [n["value"] for n in e["details"]["near"]] == [106, 107.5]
    assert [n["beyond_share_of_width"] for n in e["details"]["near"]] == [0.1, 0.25]
    assert "near_range" not in _rules(doc, "n2")  # 108 is 0.3 beyond: only one near answer, two needed


def test_flipping_conclusion_fires_on_a_change_between_passes(pilot):
    doc = pilot["doc"]
    (e,) = _evidence(doc, "f1", "flipping_conclusion")
    assert [a["answer"] for a in e["details"]["answers"]] == [2012, 2013, 2012] and e["details"]["distinct"] == 2
    assert "flipping_conclusion" in _rules(doc, "w3")
    assert "flipping_conclusion" in _rules(doc, "n1")  # above, above, inside the range
    assert "flipping_conclusion" not in _rules(doc, "f2")  # 2012 and 2014 are both accepted: one conclusion
    assert "flipping_conclusion" not in _rules(doc, "f3")  # the same value in other case and spacing
    assert "flipping_conclusion" not in _rules(doc, "w1")


def test_method_spread_reaches_the_stated_threshold_or_splits(pilot):
    doc = pilot["doc"]
    (e,) = _evidence(doc, "s1", "method_spread")
    d = e["details"]
    assert d["check"] == "threshold" and d["threshold"] == 10 and d["threshold_from"] == "thresholds.same_within_pct"
    assert d["values"] == {"m1": 12.0, "m2": 14.0, "m3": 16.0} and d["gap"] == 2.0 and d["threshold_in_text"]
    assert "method_spread" not in _rules(doc, "s2")
    checks = {e["details"]["check"]: e["details"] for e in _evidence(doc, "s3", "method_spread")}
    assert checks["split"]["dissent"] == {"m3": "no"} and checks["split"]["agreement"] == 0.6667
    assert checks["threshold"]["threshold_from"] == "params.share" and checks["threshold"]["gap"] == 0.0
    assert "method_spread" not in _rules(doc, "s4")
    (e,) = _evidence(doc, "s5", "method_spread")
    assert e["details"]["scale"] == "log" and e["details"]["threshold"] == 0.05
    assert "method_spread" not in _rules(doc, "s6")
    # the tiny factory questions carry no decision values: nothing to judge
    assert not _evidence(doc, "w1", "method_spread")


def test_abstention_on_few_clear_scenes(pilot):
    doc = pilot["doc"]
    (e,) = _evidence(doc, "a1", "abstain_few_scenes")
    assert e["details"]["few_years"] == {"2003": {"clear": 1, "from": "i1 provenance.observations"}}
    assert e["details"]["passes"] == [1, 2]
    assert "abstain_few_scenes" not in _rules(doc, "a2")  # 2007 has 5; 2010 is outside 2006-2009
    (e,) = _evidence(doc, "a3", "abstain_few_scenes")
    assert e["details"]["thin_sensors"] and e["details"]["few_years"] == {}
    assert "no clear-scene count" in e["details"]["note"]
    assert "abstain_few_scenes" not in _rules(doc, "a4")
    assert "i1" not in [q["id"] for q in doc["questions"]]  # abstaining on an insufficient question is right
    row = next(r for r in doc["rules"]["rules"] if r["id"] == "abstain_few_scenes")
    assert row["applicable"] == 4 and row["flagged"] == 2
    assert row["note"] == "abstentions without a clear-scene count in the bank: 2"


def test_flagged_exactly_the_built_cases(pilot):
    doc = pilot["doc"]
    assert {q["id"]: q["rules"] for q in doc["questions"]} == {
        "w1": ["agreeing_wrong"],
        "w2": ["flipping_conclusion"],
        "w3": ["flipping_conclusion"],
        "n1": ["near_range", "flipping_conclusion"],
        "n2": ["flipping_conclusion"],
        "f1": ["flipping_conclusion"],
        "s1": ["method_spread"],
        "s3": ["method_spread"],
        "s5": ["method_spread"],
        "a1": ["flipping_conclusion", "abstain_few_scenes"],
        "a2": ["flipping_conclusion"],
        "a3": ["flipping_conclusion", "abstain_few_scenes"],
        "a4": ["flipping_conclusion"],
    }
    assert doc["counts"] == {"questions": 19, "answered": 19, "flagged": 13}
    assert schemas.problems(doc, "audit") == []


def test_the_scoring_fixture_worked_by_hand(tmp_path):
    """make_bank/all_runs of the scoring tests: A is right everywhere; B flips on q1, is wrong on q5 in all
    three passes on one answer; C flips on q2 (104 inside, 106 above) and q3 (2013 then 2012), is wrong on
    q4 on one answer and abstains on q1 (no scene count for it in the bank). B's closed book: q1 increase and q3
    2012 in all three passes, both the reference (screened: closed_book_right); q2 50 and q4 decrease are wrong."""
    bank = make_bank(tmp_path / "bank")
    doc = audit(bank, [_runs_file(tmp_path / "runs.jsonl", all_runs())])
    assert {q["id"]: q["rules"] for q in doc["questions"]} == {
        "q1": ["flipping_conclusion", "closed_book_right"],
        "q2": ["flipping_conclusion"],
        "q3": ["flipping_conclusion", "closed_book_right"],
        "q4": ["agreeing_wrong"],
        "q5": ["agreeing_wrong"],
    }
    assert [e["model"] for e in _evidence(doc, "q5", "agreeing_wrong")] == ["B"]
    assert [e["details"]["answers"] for e in _evidence(doc, "q3", "closed_book_right")] == [[2012, 2012, 2012]]
    assert [e["model"] for e in _evidence(doc, "q2", "flipping_conclusion")] == ["C"]
    # the 44 record runs and B's 12 closed-book runs (read by the closed-book screening only)
    assert doc["runs"]["used"] == 44 + 12 and doc["runs"]["models"] == ["A", "B", "C"]


def test_cli_table_json_and_audit_json(pilot, capsys):
    out = pilot["tmp"] / "audit-out"
    assert main(["audit", str(pilot["bank"]), str(pilot["runs"]), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split() == ["question", "rules", "evidence"]
    assert any(line.startswith("n1 ") and "near_range, flipping_conclusion" in line for line in text.splitlines())
    assert "13 of 19 questions flagged" in text
    assert sorted(p.name for p in out.iterdir()) == ["audit.json"]  # nothing else left behind
    assert load_audit(out / "audit.json") == pilot["doc"]
    assert main(["audit", str(pilot["bank"]), str(pilot["runs"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == pilot["doc"]
    # stricter rules from a file: one near answer is enough
    doc = json.loads(RULES_PATH.read_text())
    doc["rules"][1]["parameters"]["min_runs"] = 1
    rules = pilot["tmp"] / "rules.json"
    rules.write_text(json.dumps(doc))
    assert main(["audit", str(pilot["bank"]), str(pilot["runs"]), "--rules", str(rules), "--json"]) == 0
    assert "near_range" in _rules(json.loads(capsys.readouterr().out), "n2")
    # bad input: one error line, exit 2
    assert main(["audit", str(pilot["bank"])]) == 2
    assert main(["audit", str(pilot["bank"]), str(pilot["runs"]), "--remove", "w1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and all(line.startswith("error: ") for line in err.splitlines())


# ----------------------------------------------------------------------------- acting on the audit


def _frozen_v1(tmp_path):
    """The reviewed store of test_freeze frozen as version 1 (q000 consensus, q002 corrected, q003 accepted;
    q001 rejected by eve), and a pilot run on it: q000 wrong on one answer, q003 flipping, q002's side
    field trend just above its range [0.25, 0.31]."""
    store = _reviewed(tmp_path)
    _adjudicate_all(store)
    freeze(store, BANK, version="1", out=tmp_path / "v1", user="mia")
    runs = _pilot("q000", "direction", ["decrease"] * 3)
    runs += _pilot("q003", "direction", ["increase", "decrease", "increase"])
    runs += [
        {**r, "answer": {**r["answer"], "trend": t}}
        for r, t in zip(_pilot("q002", "direction", ["increase"] * 3), (0.32, 0.315, 0.3), strict=True)
    ]
    runs_path = _runs_file(tmp_path / "pilot.jsonl", runs)
    assert main(["audit", str(tmp_path / "v1"), str(runs_path), "--out", str(tmp_path / "audit")]) == 0
    return store, runs_path, tmp_path / "audit" / "audit.json"


def _counts(store):
    return tuple(store.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("events", "decisions"))


def _state(store, qid):
    return store.db.execute("SELECT state FROM items WHERE qid = ?", [qid]).fetchone()[0]


def test_apply_sends_back_and_removes_with_one_event_each_then_freeze_lists_the_removal(tmp_path, capsys):
    store, runs, audit_path = _frozen_v1(tmp_path)
    doc = load_audit(audit_path)
    assert {q["id"]: q["rules"] for q in doc["questions"]} == {
        "q000": ["agreeing_wrong"],
        "q002": ["near_range"],
        "q003": ["flipping_conclusion"],
    }
    db = str(tmp_path / "review.sqlite")
    before = _counts(store)
    # roles are the core's: an annotator or an expert is refused and nothing is written
    for who in ("ann", "eve"):
        argv = ["--db", db, "audit", "apply", str(audit_path), "--send-back", "q003", "--remove", "q000"]
        assert main([*argv, "--user", who]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: ") and "is for maintainer" in err
        with pytest.raises(ReviewError, match=f"user {who} is"):
            api.apply_audit(store, doc, user=who, remove=["q000"])
    # an id the audit does not flag, an item changed since the audit: refused, nothing written
    with pytest.raises(ReviewError, match="1 id\\(s\\) the audit does not flag: q001"):
        api.apply_audit(store, doc, user="mia", remove=["q000", "q001"])
    stale = copy.deepcopy(doc)
    stale["questions"][1]["sha256"] = "sha256:" + "0" * 64
    with pytest.raises(ReviewError, match="rb/q002 changed since the audit"):
        api.apply_audit(store, stale, user="mia", send_back=["q003"], remove=["q002"])
    assert _counts(store) == before
    assert {_state(store, q) for q in ("q000", "q002", "q003")} == {"frozen"}

    argv = ["--db", db, "audit", "apply", str(audit_path), "--send-back", "q003", "--remove", "q000", "--user", "mia"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "rb/q003: frozen -> flagged" in out and "rb/q000: frozen -> rejected" in out
    assert _state(store, "q003") == "flagged" and _state(store, "q000") == "rejected"
    events = store.db.execute(
        "SELECT action, before, after, detail FROM events WHERE id > ? ORDER BY id", [before[0]]
    ).fetchall()
    assert [(a, b, c) for a, b, c, _ in events] == [
        ("audit_send_back", "frozen", "flagged"),
        ("audit_remove", "frozen", "rejected"),
    ]  # one event each
    back, gone = (json.loads(e[3]) for e in events)
    assert back["reason"] == "pilot audit" and back["reasons"] == ["pilot_audit"]
    assert back["rules"] == ["flipping_conclusion"] and len(back["retracted"]) == 1  # eve's accept no longer stands
    assert gone["reasons"] == ["unstable_reference"] and gone["rules"] == ["agreeing_wrong"]
    reject = store.db.execute(
        "SELECT user, stage, verdict, reasons FROM decisions WHERE id = ?", [gone["decision"]]
    ).fetchone()
    assert reject == ("mia", 2, "reject", '["unstable_reference"]')
    assert api.verify_chain(store)[0] == before[0] + 2

    # the sent-back item waits for an expert, first in the queue whatever the sample, and no rule decides it
    api.set_rule(store, BANK, user="mia", adjudicate_share=0.01, rest_rule="reject")
    assert [(r["id"], r["kind"]) for r in api.queue(store, BANK, user="eve")][:1] == [("q003", "pilot audit")]
    assert api.apply_rule(store, BANK, user="mia")["applied"] == 0 and _state(store, "q003") == "flagged"
    # no freeze until it is adjudicated again
    with pytest.raises(ReviewError, match="rb/q003 \\(flagged\\)"):
        freeze(store, BANK, version="2", out=tmp_path / "v2", user="mia")
    api.adjudicate(
        store, "q003", api.Decision("accept", rationale="the pilot flipped; the reference holds"), user="eve"
    )
    freeze(store, BANK, version="2", out=tmp_path / "v2", user="mia")
    qc = json.loads((tmp_path / "v2" / "qc.json").read_text())
    assert {r["id"]: (r["by"], r["reasons"], r["outcome"]) for r in qc["removed"]} == {
        "q000": ("mia", ["unstable_reference"], "rejected"),
        "q001": ("eve", ["wrong_reference"], "rejected"),
    }
    assert "pilot audit: unstable reference (agreeing_wrong)" in next(
        r["rationale"] for r in qc["removed"] if r["id"] == "q000"
    )
    assert [q["id"] for q in load_bank(tmp_path / "v2").questions] == ["q002", "q003"]

    # the pilot is rescored on version 2 without a rerun: q000's runs are dropped, the rest unchanged
    scores = compute_scores(tmp_path / "v2", [runs], ScoringOptions(bootstrap=0, rescore_from=tmp_path / "v1"))
    r = scores["rescored"]
    assert r["removed_questions"] == ["q000"] and r["runs_dropped"] == 3 and r["unchanged_text_and_fields"] == 2
    assert scores["problems"]["bad_lines"] == [] and scores["models"]["pilot"]["record"]["n"] == 2
    with pytest.raises(ScoringError, match="unknown question 'q000'"):
        compute_scores(
            tmp_path / "v2", [runs], ScoringOptions(bootstrap=0)
        )  # without --rescore-from: the old runs do not fit


def _write_v2(tmp_path, name, change):
    v1 = load_bank(tmp_path / "v1")
    questions = copy.deepcopy(v1.questions)
    change({q["id"]: q for q in questions})
    write_bank(
        tmp_path / name,
        BankContent(v1.name, "2", questions, v1.sites, v1.pairs, frozen=True, created="2026-12-01T00:00:00Z"),
    )
    return tmp_path / name


def test_rescoring_refused_when_a_text_changed_accepted_when_only_a_reference_did(tmp_path, capsys):
    _, runs, _ = _frozen_v1(tmp_path)

    def reword(qs):
        qs["q002"]["text"] = "Did the open-water area change significantly? Report the trend."
        qs["q003"]["fields"][0]["options"] = ["decrease", "increase", "no significant change"]  # order shown

    def new_reference(qs):
        qs["q003"]["reference"]["direction"] = "decrease"
        qs["q003"]["accept"]["direction"] = ["decrease"]
        qs["q002"]["reference_range"]["trend"] = [0.25, 0.33]

    changed = _write_v2(tmp_path, "v2-text", reword)
    argv = ["score", str(changed), str(runs), "--rescore-from", str(tmp_path / "v1"), "--bootstrap", "0"]
    assert main([*argv, "--no-report", "--out", str(tmp_path / "r1")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: cannot rescore: 2 question(s)")
    assert "q002, q003 (rerun them)" in err and not (tmp_path / "r1").exists()

    fixed = _write_v2(tmp_path, "v2-ref", new_reference)
    argv = ["score", str(fixed), str(runs), "--rescore-from", str(tmp_path / "v1"), "--bootstrap", "0"]
    assert main([*argv, "--no-report", "--out", str(tmp_path / "r2")]) == 0
    assert "rescored runs made on rb 1: 3 question(s) with unchanged text and fields" in capsys.readouterr().err
    scores = json.loads((tmp_path / "r2" / "scores.json").read_text())
    assert scores["rescored"]["reference_or_other_changed"] == ["q002", "q003"]
    assert scores["rescored"]["removed_questions"] == [] and scores["rescored"]["from"]["version"] == "1"
    # judged on the new references: q003 decrease now right once (pass 2), q000 wrong, q002 right 3 times
    pilot = scores["models"]["pilot"]["record"]
    assert pilot["passes_right"] == {"3": 1, "2": 0, "1": 1, "0": 1}
    v1 = load_bank(tmp_path / "v1")
    assert all(question_hash(q) == question_hash(load_bank(fixed).question(q["id"])) for q in v1.questions)
