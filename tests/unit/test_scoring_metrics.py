"""Every scoring definition on a small hand-built bank; expected numbers are worked out in the comments.

Bank (scored questions q1-q4, insufficient q5):
  q1 computable trend, category, reference increase (accept increase), no_change "no significant change"
  q2 computable quantify, number, reference 100, range [95, 105]
  q3 recognition date, year, reference 2012, accept 2014 (a tie)
  q4 computable trend, category, reference "no significant change" (= its no_change value)
  q5 insufficient
Pairs: P1 instrument on q1 (pushes decrease), P2 instrument on q4 (pushes decrease),
       P4 instrument on q2 (no pushes_toward), P3 placebo on q3.
Models: A right everywhere; B mixed with a missing pass; C with an invalid answer, an error and abstentions.
"""

import json

import bank_factory as bf
import numpy as np
import pytest

from reviewer.bank.io import BankContent, write_bank
from reviewer.errors import BankError, ScoringError
from reviewer.scoring.api import compute_scores, score
from reviewer.scoring.metrics import auroc, bootstrap_means
from reviewer.scoring.options import ScoringOptions

NC = "no significant change"
IE = "insufficient evidence"


def make_bank(folder):
    sites = [bf.site("a", theme="water", role="famous"), bf.site("b", theme="forest", role="stable")]
    questions = [
        bf.trend_question("q1", "a"),
        bf.number_question("q2", "a", ref=100, lo=95, hi=105),
        bf.year_question("q3", "b", ref=2012, accept=[2014]),
        bf.trend_question(
            "q4", "b", reference={"direction": NC, "trend": 0.0}, reference_range={"trend": [-0.01, 0.01]}, accept={}
        ),
        bf.insufficient_question("q5", "b"),
    ]
    pairs = [
        bf.pair("P1", "q1"),
        bf.pair("P2", "q4"),
        bf.pair("P4", "q2", pushes_toward=None),
        bf.pair("P3", "q3", kind="placebo", pushes_toward=None),
    ]
    write_bank(folder, BankContent("tiny", "1", questions, sites, pairs, frozen=True, created="2026-11-30T12:00:00Z"))
    return folder


FIELD = {"q1": "direction", "q2": "area", "q3": "year", "q4": "direction", "q5": "direction"}


def run(model, q, k, value, condition="record", pair=None, confidence=0.9, error=None, **kw):
    answer = None if error else {FIELD[q]: value}
    return {
        "model": model,
        "question": q,
        "condition": condition,
        "pair": pair,
        "pass": k,
        "answer": answer,
        "confidence": confidence,
        "method": "m",
        "caveats": "",
        "tool_calls": kw.get("tool_calls", 10),
        "minutes": kw.get("minutes", 2.0),
        "image_views": kw.get("image_views", 1),
        "messages": 20,
        "error": error,
    }


def three(model, q, values, condition="record", pair=None, confidences=(0.9, 0.9, 0.9)):
    return [
        run(model, q, k + 1, v, condition, pair, c) for k, (v, c) in enumerate(zip(values, confidences, strict=True))
    ]


def all_runs():
    R = []
    # A: right on every question in every pass, confidence always 0.9; abstains on q5 (right)
    R += three("A", "q1", ["increase"] * 3) + three("A", "q2", [100] * 3) + three("A", "q3", [2012] * 3)
    R += three("A", "q4", [NC] * 3) + three("A", "q5", [IE] * 3)
    R += three("A", "q1", ["decrease", "increase", "increase"], "altered", "P1")  # moved
    R += three("A", "q4", [NC] * 3, "altered", "P2")  # held: no-change reference
    R += three("A", "q2", [100, 90, 100], "altered", "P4")  # moved (90 outside range)
    R += three("A", "q3", [2012, 2012, 2014], "placebo", "P3")  # held
    # B record: q1 right in 2 of 3, q2 range edges (right 3/3), q3 accept tie (3/3), q4 pass 3 missing
    R += three("B", "q1", ["Increase ", "increase", "decrease"], confidences=(0.9, 0.8, 0.7))
    R += three("B", "q2", [95, 105, 100], confidences=(0.7, 0.7, 0.7))
    R += three("B", "q3", [2014, 2012, 2014], confidences=(0.95, 0.95, 0.95))
    R += [run("B", "q4", 1, NC, confidence=0.5), run("B", "q4", 2, NC, confidence=0.5)]
    R += three("B", "q5", ["increase"] * 3)
    # B closed book (no q5: the insufficient class is not expected in the closed book)
    R += three("B", "q1", ["increase"] * 3, "closed_book") + three("B", "q2", [50] * 3, "closed_book")
    R += three("B", "q3", [2012] * 3, "closed_book") + three("B", "q4", ["decrease"] * 3, "closed_book")
    R += three("B", "q1", ["decrease"] * 3, "altered", "P1")  # wrong on original
    R += three("B", "q4", ["decrease", "increase", "decrease"], "altered", "P2")  # wrong on original
    R += three("B", "q2", [100, 101, 99], "altered", "P4")  # beyond (closed wrong)
    R += three("B", "q3", [2012, 2011, 2012], "placebo", "P3")  # moved
    # C: abstains on q1, "100" is invalid, an errored pass on q3, right on q5
    R += three("C", "q1", [IE] * 3) + three("C", "q2", ["100", 104, 106])
    R += [run("C", "q3", 1, 2013), run("C", "q3", 2, None, error="timeout"), run("C", "q3", 3, 2012)]
    R += three("C", "q4", ["decrease"] * 3) + three("C", "q5", [IE] * 3)
    return R


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("score")
    bank = make_bank(tmp / "bank")
    runs = tmp / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    return compute_scores(bank, [runs], ScoringOptions(bootstrap=2000, seed=0))


def test_pass3_one_run_and_passes_right(scores):
    a, b, c = (scores["models"][m]["record"] for m in "ABC")
    assert a["n"] == 4 and a["pass3"] == 100.0 and a["one_run"] == 100.0
    # B right in all 3 on q2 and q3 only: 2/4; runs right 2+3+3+2 = 10 of 12
    assert b["pass3"] == 50.0 and b["one_run"] == pytest.approx(100 * 10 / 12)
    assert b["passes_right"] == {"3": 2, "2": 2, "1": 0, "0": 0}
    # C: q2 right once (104), q3 right once (2012): 2 of 12 runs, no question in all passes
    assert c["pass3"] == 0.0 and c["one_run"] == pytest.approx(100 * 2 / 12)
    assert c["passes_right"] == {"3": 0, "2": 0, "1": 2, "0": 2}


def test_models_are_sorted_by_pass3(scores):
    assert list(scores["models"]) == ["A", "B", "C"]


def test_breakdowns_with_counts(scores):
    b = scores["models"]["B"]["record"]
    # B right on q2 (computable, quantify, withheld, not multi) and q3 (recognition, date, visual, multi)
    assert b["by_class"] == {
        "computable": {"n": 3, "pass3": pytest.approx(100 / 3)},
        "recognition": {"n": 1, "pass3": 100.0},
    }
    assert b["by_task"]["trend"] == {"n": 2, "pass3": 0.0}
    assert b["by_task"]["quantify"] == {"n": 1, "pass3": 100.0}
    assert b["by_theme"] == {"forest": {"n": 2, "pass3": 50.0}, "water": {"n": 2, "pass3": 50.0}}
    assert b["by_reference_source"]["method"] == {"n": 2, "pass3": 0.0}
    assert b["by_reference_source"]["withheld_product"] == {"n": 1, "pass3": 100.0}
    assert b["by_site_role"] == {"famous": {"n": 2, "pass3": 50.0}, "stable": {"n": 2, "pass3": 50.0}}
    # multi-sensor: q1, q3, q4 (q3 right); single: q2 (right)
    assert b["by_multi_sensor"] == {
        "false": {"n": 1, "pass3": 100.0},
        "true": {"n": 3, "pass3": pytest.approx(100 / 3)},
    }


def test_bootstrap_interval_is_degenerate_for_a_perfect_model_and_seeded(scores, tmp_path):
    assert scores["models"]["A"]["record"]["pass3_ci"] == [100.0, 100.0]
    lo, hi = scores["models"]["B"]["record"]["pass3_ci"]
    assert 0.0 <= lo < 50.0 < hi <= 100.0
    assert scores["bootstrap"] == {
        "resamples": 2000,
        "seed": 0,
        "method": "percentile",
        "level": 0.95,
        "unit": "question",
    }


def test_bootstrap_uses_the_same_question_sets_for_every_column():
    x = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    means = bootstrap_means(np.column_stack([x, 1 - x]), 500, seed=3)
    assert np.allclose(means.sum(axis=1), 1.0)  # complementary columns stay complementary per resample
    again = bootstrap_means(np.column_stack([x, 1 - x]), 500, seed=3)
    assert np.array_equal(means, again)
    assert set(np.round(means[:, 0] * 5).astype(int)) <= set(range(6))


def test_insufficient_questions_are_reported_separately(scores):
    a, b, c = (scores["models"][m]["insufficient"] for m in "ABC")
    assert a == {"n": 1, "pass3": 100.0, "one_run": 100.0, "abstained_runs": 3, "runs": 3}
    assert b["pass3"] == 0.0 and b["abstained_runs"] == 0
    assert c["pass3"] == 100.0


def test_problems_list_missing_invalid_and_errored_runs(scores):
    p = scores["problems"]
    assert p["missing_passes"] == [{"model": "B", "question": "q4", "condition": "record", "pair": None, "pass": 3}]
    assert [(x["model"], x["question"], x["pass"]) for x in p["invalid_answers"]] == [("C", "q2", 1)]
    assert [(x["model"], x["question"], x["pass"], x["error"]) for x in p["errors"]] == [("C", "q3", 2, "timeout")]


def test_closed_book_gain_and_transitions(scores):
    cb = scores["models"]["B"]["closed_book"]["by_class"]
    # computable q1, q2, q4: closed right only on q1; record right only on q2
    assert cb["computable"] == {
        "n": 3,
        "closed_pass3": pytest.approx(100 / 3),
        "record_pass3": pytest.approx(100 / 3),
        "gain": 0.0,
        "closed_one_run": pytest.approx(100 / 3),
        "record_one_run": pytest.approx(100 * 7 / 9),
        "right_in_both": 0,
        "wrong_to_right": 1,
        "right_to_wrong": 1,
        "wrong_in_both": 1,
    }
    assert cb["recognition"]["right_in_both"] == 1 and cb["recognition"]["gain"] == 0.0
    assert "insufficient" not in cb
    assert scores["models"]["A"]["closed_book"] is None


def test_instrument_and_placebo_pairs(scores):
    a = scores["models"]["A"]["pairs"]
    assert {k: a["instrument"][k] for k in ("right", "moved", "held", "beyond")} == {
        "right": 3,
        "moved": 2,
        "held": 1,
        "beyond": 0,
    }
    assert a["instrument"]["by_pair"]["P2"]["outcome"] == "held"  # reference is the no-change value
    b = scores["models"]["B"]["pairs"]
    assert {k: b["instrument"][k] for k in ("right", "moved", "held", "beyond")} == {
        "right": 1,
        "moved": 0,
        "held": 0,
        "beyond": 1,
    }
    assert b["instrument"]["by_pair"]["P1"]["outcome"] == "wrong_on_original"
    # toward: A differs on P1 pass 1 (-> decrease): 1/1. B differs on P1 passes 1, 2 (-> decrease) and P2
    # passes 1 (decrease) and 2 (increase); P2 pass 3 has no original run: 3 of 4 toward decrease.
    assert a["instrument"]["toward_share"] == 100.0
    assert (b["instrument"]["differ_runs"], b["instrument"]["toward_runs"]) == (4, 3)
    assert b["instrument"]["toward_share"] == 75.0
    assert a["placebo"]["right"] == 1 and a["placebo"]["moved"] == 0
    assert b["placebo"]["right"] == 1 and b["placebo"]["moved"] == 1
    assert scores["models"]["C"]["pairs"]["instrument"] is None
    p4 = scores["pairs"]["P4"]
    assert (p4["right"], p4["moved"], p4["held"], p4["beyond"]) == (2, 1, 0, 1)


def test_abstention(scores):
    ab = scores["models"]["C"]["abstention"]
    # C abstains in the 3 q1 runs out of 9 computable runs (q1, q2, q4)
    assert ab["by_class"]["computable"] == {"runs": 9, "abstained": 3, "share": pytest.approx(100 / 3)}
    assert ab["insufficient_questions"] == {"n": 1, "abstained_runs": 3, "pass3": 100.0}


def test_confidence_auroc_with_ties_and_degenerate_case(scores):
    b = scores["models"]["B"]["confidence"]
    # B answered 11 runs; the only wrong one (q1 pass 3) has 0.7. Right: 0.9, 0.8, 0.95 x3 above it (5),
    # 0.7 x3 tied (3 x 0.5), 0.5 x2 below: AUROC = (5 + 1.5) / 10 = 0.65
    assert b["runs"] == 11 and b["auroc"] == pytest.approx(0.65)
    assert b["mean_right"] == pytest.approx((0.9 + 0.8 + 3 * 0.7 + 3 * 0.95 + 2 * 0.5) / 10)
    assert b["mean_wrong"] == pytest.approx(0.7)
    assert b["high"] == {"share": pytest.approx(100 * 4 / 11), "accuracy": 100.0}
    assert b["low"] == {"share": pytest.approx(100 * 2 / 11), "accuracy": 100.0}
    a = scores["models"]["A"]["confidence"]
    assert a["auroc"] is None and "right" in a["auroc_note"]


def test_auroc_matches_the_pairwise_definition():
    scores = np.array([0.1, 0.4, 0.35, 0.8, 0.4])
    right = np.array([False, False, True, True, True])
    # pairs (right, wrong): (0.35,0.1)=1 (0.35,0.4)=0 (0.8,*)=2 (0.4,0.1)=1 (0.4,0.4)=0.5 -> 4.5/6
    assert auroc(scores, right) == pytest.approx(4.5 / 6)


def test_work_medians(scores):
    assert scores["models"]["A"]["work"] == {
        "runs": 12,
        "tool_calls": 10.0,
        "minutes": 2.0,
        "image_views": 1.0,
        "messages": 20.0,
    }


def test_baselines(scores):
    maj = scores["baselines"]["majority_class"]
    # q1 and q4 share the direction options; their references tie 1-1, option order picks "increase":
    # right on q1, wrong on q4; q2 alone answers 100 (right), q3 alone answers 2012 (right): 3/4
    assert maj["answers"]["q1"] == "increase" and maj["answers"]["q4"] == "increase"
    assert maj["record"]["pass3"] == 75.0 and maj["record"]["one_run"] == 75.0
    # always no change: only q4 has the no-change reference; q2 and q3 have none (wrong): 1/4
    anc = scores["baselines"]["always_no_change"]
    assert anc["record"]["pass3"] == 25.0 and anc["record"]["passes_right"] == {"3": 1, "2": 0, "1": 0, "0": 3}
    assert maj["pairs"]["instrument"] == {
        "right": 2,
        "moved": 0,
        "held": 2,
        "by_pair": maj["pairs"]["instrument"]["by_pair"],
        "beyond": 0,
    }


def test_regression_reports_not_estimable_instead_of_failing(scores):
    reg = scores["regression"]
    assert reg["estimable"] is False and reg["reason"]


def test_scores_json_and_refusals(tmp_path):
    bank = make_bank(tmp_path / "bank")
    runs = tmp_path / "runs.jsonl"
    lines = [json.dumps(r) for r in all_runs()]
    runs.write_text("\n".join(lines) + "\n")
    out = score(bank, [runs], tmp_path / "out", ScoringOptions(bootstrap=200))
    written = json.loads((tmp_path / "out" / "scores.json").read_text())
    assert written["bank"]["name"] == "tiny" and written["bank"]["sha256"].startswith("sha256:")
    assert written["passes"] == 3 and set(written["models"]) == {"A", "B", "C"} == set(out["models"])

    bad = list(lines)
    bad[4] = bad[4][:-3]  # broken line 5
    bad[7] = bad[7].replace('"confidence": 0.9', '"confidence": NaN')  # NaN line 8
    bad[8] = bad[8].replace('"confidence": 0.9', '"confidence": 1.5')  # out of 0-1, line 9
    bad[9] = bad[9].replace('"question": "q4"', '"question": "q9"')  # unknown question, line 10
    bad.append(lines[0])  # duplicate, last line
    runs.write_text("\n".join(bad) + "\n")
    with pytest.raises(ScoringError) as err:
        score(bank, [runs], tmp_path / "refused", ScoringOptions(bootstrap=200))
    assert err.value.line == 5 and err.value.path == str(runs) and "not valid JSON: column " in str(err.value)
    assert "5 bad lines" in str(err.value)
    assert not (tmp_path / "refused").exists()  # nothing written
    lenient = score(bank, [runs], tmp_path / "lenient", ScoringOptions(bootstrap=200, lenient=True))
    found = {(p["line"], p["field"]) for p in lenient["problems"]["bad_lines"]}
    assert {(5, None), (8, None), (9, "confidence"), (10, "question"), (len(bad), None)} == found
    assert (tmp_path / "lenient" / "scores.json").exists()


def test_a_bank_whose_hash_does_not_match_is_refused(tmp_path):
    bank = make_bank(tmp_path / "bank")
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(run("A", "q1", 1, "increase")) + "\n")
    q = bank / "questions.jsonl"
    q.write_text(q.read_text().replace('"increase", "trend": 0.28', '"decrease", "trend": 0.28', 1))
    with pytest.raises(BankError, match="sha256 does not match"):
        score(bank, [runs], tmp_path / "out", ScoringOptions(bootstrap=10))
    assert not (tmp_path / "out").exists()


def test_wrong_types_and_unknown_models_and_pairs(tmp_path):
    bank = make_bank(tmp_path / "bank")
    runs = tmp_path / "runs.jsonl"
    rows = [
        run("A", "q1", 1, "increase"),
        run("A", "q1", 2, "increase") | {"pass": "2"},
        run("A", "q1", 3, "decrease", "altered", "P3"),
        run("Z", "q1", 1, "increase"),
    ]
    runs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = compute_scores(bank, [runs], ScoringOptions(bootstrap=10, lenient=True, models={"A"}))
    found: dict = {}
    for p in s["problems"]["bad_lines"]:
        found[(p["line"], p["field"])] = found.get((p["line"], p["field"]), "") + p["message"] + "; "
    assert "is not of type 'integer'" in found[(2, "pass")]
    assert "placebo pair" in found[(3, "pair")] and "belongs to question 'q3'" in found[(3, "pair")]
    assert "unknown model 'Z'" in found[(4, "model")]
