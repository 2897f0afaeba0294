"""The bank's answer balance (from the bank alone) and generation's balancing of conclusions."""

from __future__ import annotations

import json

from test_scoring_metrics import make_bank

from reviewer.bank.balance import balance_questions
from reviewer.bank.io import load_bank
from reviewer.cli import main
from reviewer.scoring.metrics import answer_balance


def _q(i: int, template: str, value, field_type: str = "category", klass: str = "computable") -> dict:
    return {
        "id": f"s-{i}",
        "class": klass,
        "conclusion": "direction",
        "fields": [{"name": "direction", "type": field_type}],
        "reference": {"direction": value},
        "period": {"start": "2000-01-01", "end": "2010-12-31"},
        "provenance": {"template": template, "params": {"n": i}},
    }


def test_balancing_caps_each_answer_at_ratio_times_the_next():
    """trend: 6 increase, 2 decrease, 1 no change; ratio 1.5 -> cap ceil(1.5 x 2) = 3: three increases
    go. detect: 4 yes only -> nothing to balance against, all kept. Numbers are never balanced."""
    qs = [_q(i, "trend.t", "increase") for i in range(6)]
    qs += [_q(6, "trend.t", "decrease"), _q(7, "trend.t", "decrease"), _q(8, "trend.t", "no significant change")]
    qs += [_q(10 + i, "detect.d", "yes") for i in range(4)]
    qs += [_q(20 + i, "quantify.q", 5.0 + i, field_type="number") for i in range(5)]
    kept, dropped = balance_questions(qs, max_ratio=1.5, seed=3)
    values = [q["reference"]["direction"] for q in kept if q["provenance"]["template"] == "trend.t"]
    assert sorted(values) == ["decrease", "decrease", "increase", "increase", "increase", "no significant change"]
    assert len(dropped) == 3 and all(d["template"] == "trend.t" for d in dropped)
    assert "kept 3" in dropped[0]["reason"] and "'increase'" in dropped[0]["reason"]
    assert sum(q["provenance"]["template"] == "detect.d" for q in kept) == 4
    assert sum(q["provenance"]["template"] == "quantify.q" for q in kept) == 5
    again, _ = balance_questions(qs, max_ratio=1.5, seed=3)
    assert [q["id"] for q in again] == [q["id"] for q in kept]  # the same seed keeps the same questions


def test_answer_balance_matches_the_baselines_of_a_scoring_run(tmp_path):
    """The tiny bank of the scoring tests: its report shows majority class 75.0 and always no change 25.0
    on the 4 scored questions (test_scoring_report); the bank alone must give the same."""
    bank = make_bank(tmp_path / "bank")
    balance = answer_balance(load_bank(bank))
    assert balance["scored"] == 4
    assert balance["baselines"] == {"majority_class": 75.0, "always_no_change": 25.0}
    assert sum(sum(c.values()) for c in balance["by_task"].values()) == 4


def test_bank_validate_stats_prints_the_balance(tmp_path, capsys):
    bank = make_bank(tmp_path / "bank")
    assert main(["bank", "validate", str(bank), "--stats"]) == 0
    out = capsys.readouterr().out
    assert "answer balance:" in out and "majority class 75.0 pass^k" in out and "always no change 25.0" in out


def test_generate_balance_drops_surplus_with_the_reason(demo, tmp_path):
    out = tmp_path / "balanced"
    assert main(["generate", str(demo["site"]), "--out", str(out), "--seed", "5", "--balance", "1.0"]) == 0
    kept = load_bank(out).questions
    dropped = [json.loads(line) for line in (out / "dropped.jsonl").read_text().splitlines()]
    balanced = [d for d in dropped if d["reason"].startswith("balance:")]
    assert len(kept) + len(balanced) == len(demo["bank"].questions)
    counts: dict[str, dict[str, int]] = {}
    for q in kept:
        field = next(f for f in q["fields"] if f["name"] == q["conclusion"])
        if field["type"] == "category" and q["class"] != "insufficient":
            tally = counts.setdefault(q["provenance"]["template"], {})
            tally[str(q["reference"][q["conclusion"]])] = tally.get(str(q["reference"][q["conclusion"]]), 0) + 1
    for tally in counts.values():  # ratio 1: no answer more often than the next most common one
        top = sorted(tally.values(), reverse=True)
        assert len(top) == 1 or top[0] <= top[1]


def test_majority_class_groups_by_the_option_set_not_its_shuffled_order(tmp_path):
    """Three trend questions, two answering increase and one decrease, their options in three different
    (shuffled) orders: the majority answer is increase for all three, so the baseline is right on 2 of 3
    (66.7). Grouped by option order, each question was its own group and the baseline 'right' on all 3."""
    import bank_factory as bf

    from reviewer.bank.io import BankContent, write_bank

    orders = [
        ["increase", "decrease", "no significant change"],
        ["decrease", "no significant change", "increase"],
        ["no significant change", "increase", "decrease"],
    ]
    refs = ["increase", "increase", "decrease"]
    questions = []
    for i, (opts, ref) in enumerate(zip(orders, refs, strict=True)):
        q = bf.trend_question(f"q{i}", "a", reference={"direction": ref, "trend": 0.1}, accept={})
        q["fields"][0]["options"] = opts
        q["reference_range"] = {"trend": [0.05, 0.15]}
        questions.append(q)
    folder = tmp_path / "bank"
    write_bank(
        folder, BankContent("shuffled", "1", questions, [bf.site("a")], [], frozen=True, created="2026-12-01T00:00:00Z")
    )
    balance = answer_balance(load_bank(folder))
    assert balance["baselines"]["majority_class"] == 66.7
    assert balance["by_task"] == {"trend": {"increase": 2, "decrease": 1}}
