"""Paired comparisons of models on the same questions, and `score --subset` on the questions the review settled one
way. The tiny bank and runs of test_scoring_metrics: on the scored questions q1-q4, A is right in all 3 passes on
each, B on q2 and q3, C on none."""

import json

import numpy as np
import pytest
from test_scoring_metrics import all_runs, make_bank

from reviewer.bank.io import BankContent, load_bank, write_bank
from reviewer.cli import main
from reviewer.scoring.api import compute_scores
from reviewer.scoring.metrics import bootstrap_means, paired_comparisons
from reviewer.scoring.options import ScoringOptions


def test_paired_bootstrap_matches_a_hand_computed_one():
    # 6 questions, pass^k per question of three models
    x = np.array(
        [[1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 0, 0], [1, 1, 0], [0, 0, 1]],
        dtype=float,
    )
    resamples, seed = 500, 11
    means = bootstrap_means(x, resamples, seed)
    out = {(p["a"], p["b"]): p for p in paired_comparisons(x, means, ["A", "B", "C"])}
    # by hand: the same question draws for every model, one resample at a time
    draws = np.random.default_rng(seed).integers(0, 6, size=(resamples, 6))
    for (a, b), p in out.items():
        i, j = "ABC".index(a), "ABC".index(b)
        diffs = [x[row, i].mean() - x[row, j].mean() for row in draws]
        assert p["ci"] == pytest.approx(list(np.percentile(diffs, [2.5, 97.5]) * 100))
    ab, ac, bc = out[("A", "B")], out[("A", "C")], out[("B", "C")]
    # A right on 4, B on 3, C on 2 of 6; A only vs B only: q2 q4 / q3; A only vs C only: q1 q2 q4 q5 / q3 q6
    assert ab["difference"] == pytest.approx(100 / 6) and (ab["a_only"], ab["b_only"]) == (2, 1)
    assert ac["difference"] == pytest.approx(200 / 6) and (ac["a_only"], ac["b_only"]) == (4, 2)
    assert (bc["a_only"], bc["b_only"], bc["both"], bc["neither"]) == (2, 1, 1, 2)
    # McNemar exact on (2, 1): two-sided binomial p = 2 * P(X <= 1 | n=3, 1/2) = 2 * 4/8 = 1
    assert ab["mcnemar_p"] == pytest.approx(1.0)


def test_scores_hold_every_pair_of_models(tmp_path):
    bank = make_bank(tmp_path / "bank")
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    scores = compute_scores(bank, [runs], ScoringOptions(bootstrap=1000, seed=0))
    got = {(p["a"], p["b"]): p for p in scores["paired"]}
    assert set(got) == {("A", "B"), ("A", "C"), ("B", "C")}
    # A 4/4, B 2/4 (q2, q3), C 0/4 -> differences 50, 100, 50 points; discordant counts 2/0, 4/0, 2/0
    assert [got[k]["difference"] for k in sorted(got)] == [50.0, 100.0, 50.0]
    assert [(got[k]["a_only"], got[k]["b_only"]) for k in sorted(got)] == [(2, 0), (4, 0), (2, 0)]
    # McNemar exact: (2, 0) -> 2 * (1/2)^2 = 0.5; (4, 0) -> 2 * (1/2)^4 = 0.125
    assert got[("A", "B")]["mcnemar_p"] == pytest.approx(0.5) and got[("A", "C")]["mcnemar_p"] == pytest.approx(0.125)
    assert got[("A", "C")]["ci"] == [100.0, 100.0]  # C right on none, A on all, in every resample


def _qc(ids):
    """A qc.json for the tiny bank: q1 and q2 unanimous, q3 corrected, q4 adjudicated (a split), q5 unanimous."""
    settled = {"q1": "unanimous", "q2": "unanimous", "q3": "corrected", "q4": "adjudicated", "q5": "unanimous"}
    agreement = {"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 0.0, "q5": 1.0}
    return {
        "bank": "tiny",
        "version": "1",
        "counts": {"items": 5, "in_bank": 5, "stage1": {}, "outcomes": {}},
        "agreement": {"overall": {}, "per_reason": {}},
        "adjudicated_by": {},
        "routing": {"k": 2, "seed": 0, "audit_share": 0, "adjudicate_share": 1, "rest_rule": "open", "gold_share": 0},
        "removed": [],
        "gold": [],
        "events": {"count": 0, "last_hash": "sha256:" + "0" * 64},
        "items": {
            q: {
                "settled": settled[q],
                "stage1": {"decisions": 2, "accepts": 2, "agreement": agreement[q]},
                "posterior_acceptable": 0.9,
                "confidence": {},
                "people": 2,
            }
            for q in ids
        },
    }


def _without(d):
    return {k: v for k, v in d.items() if k not in ("bank", "subset", "runs", "problems")}


@pytest.mark.parametrize(
    ("subset", "kept"), [("unanimous", {"q1", "q2", "q5"}), ("high-agreement", {"q1", "q2", "q3", "q5"})]
)
def test_a_subset_scores_as_a_bank_holding_only_those_questions(tmp_path, capsys, subset, kept):
    full = load_bank(make_bank(tmp_path / "made"))
    qc = _qc([q["id"] for q in full.questions])
    frozen = {"frozen": True, "created": "2026-11-30T12:00:00Z"}
    write_bank(tmp_path / "bank", BankContent("tiny", "1", full.questions, full.sites, full.pairs, qc=qc, **frozen))
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    only = [q for q in full.questions if q["id"] in kept]
    pairs = [p for p in full.pairs if p["question"] in kept]
    write_bank(tmp_path / "only", BankContent("tiny", "1", only, full.sites, pairs, **frozen))
    fewer = tmp_path / "fewer.jsonl"
    fewer.write_text("".join(json.dumps(r) + "\n" for r in all_runs() if r["question"] in kept))
    argv = ["--bootstrap", "500", "--no-report"]
    assert (
        main(["score", str(tmp_path / "bank"), str(runs), "--subset", subset, "--out", str(tmp_path / "s"), *argv]) == 0
    )
    assert f"(subset {subset}: {len(kept)} of 5 questions)" in capsys.readouterr().out
    assert main(["score", str(tmp_path / "only"), str(fewer), "--out", str(tmp_path / "o"), *argv]) == 0
    sub = json.loads((tmp_path / "s" / "scores.json").read_text())
    ref = json.loads((tmp_path / "o" / "scores.json").read_text())
    assert sub["subset"] == {"name": subset, "questions": len(kept), "of": 5}
    assert _without(sub) == _without(ref)
    assert sub["problems"]["missing_passes"] == ref["problems"]["missing_passes"]


def test_subset_needs_per_item_provenance(tmp_path, capsys):
    bank = make_bank(tmp_path / "bank")  # no qc.json
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    assert main(["score", str(bank), str(runs), "--subset", "unanimous", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "qc.json" in err and not (tmp_path / "r").exists()
