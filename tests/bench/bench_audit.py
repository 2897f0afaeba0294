"""Calibration of the pilot-run audit's thresholds (assets/review/audit_rules.json) on a seeded pilot run.

Run: .venv/bin/python tests/bench/bench_audit.py [--seed 1] [--planted 11]

No real pilot run is at hand (the paper's first model's runs are not public), so this builds one whose truth is
known: the seed-001-scale synthetic bank (238 questions, tests/bench/synthetic.py), its best model's three passes
in the record (skill 0.93 less a per-question difficulty, as the scoring bench draws them), answering the bank's
references. Then `--planted` references are made unstable *after* the runs were drawn, as a reference method
that is off would make them, half of each kind the rules look for:
  - a category reference replaced by another option (the model keeps answering the true value);
  - a number range moved off-centre so the true value lies just below its lower edge, at 5 to 50% of the
    range's width (a range too tight or shifted by a method's bias).
For every rule and a sweep of its main parameter it prints how many planted questions it flags (recall) next
to how many of the other questions it flags (the false-flag share a maintainer would have to read), and the
same for the whole audit. This is what the defaults in audit_rules.json were checked against; the time of one
audit is printed next to a baseline measured in the same run (loading and judging the runs alone).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from reviewer.bank.io import BankContent, load_bank, write_bank  # noqa: E402
from reviewer.review.audit import audit, audit_rules, parse_rules  # noqa: E402
from reviewer.scoring.runs import load_runs  # noqa: E402
from tests.bench.synthetic import DIRECTION, MODELS, make_bank, make_runs  # noqa: E402

PILOT = MODELS[0]
#: where a planted number range's lower edge sits above the true value, as a share of the range's width
SHARES = (0.05, 0.1, 0.2, 0.3, 0.5)
#: the parameter each rule's sweep varies, and the values tried (the default is among them)
SWEEPS = {
    "agreeing_wrong": ("min_passes", (2, 3)),
    "near_range": ("share_of_width", (0.1, 0.25, 0.5)),
    "flipping_conclusion": ("min_values", (2, 3)),
}


def plant(questions: list[dict], n: int, seed: int) -> dict[str, str]:
    """Make n references unstable in place; returns {question id: what was planted}."""
    rng = np.random.default_rng(seed)
    cats = [q for q in questions if q["class"] == "computable" and q["fields"][0]["type"] == "category"]
    nums = [q for q in questions if q["class"] == "computable" and q["fields"][0]["type"] == "number"]
    planted: dict[str, str] = {}
    for q in rng.permutation(np.array(cats, dtype=object))[: n - n // 2]:
        truth = q["reference"][q["conclusion"]]
        q["reference"][q["conclusion"]] = [o for o in DIRECTION if o != truth][int(rng.integers(0, 2))]
        planted[q["id"]] = "category replaced"
    for j, q in enumerate(rng.permutation(np.array(nums, dtype=object))[: n // 2]):
        truth = q["reference"]["value"]
        width = truth * 0.2
        low = truth + SHARES[j % len(SHARES)] * width
        q["reference_range"] = {"value": [round(low, 3), round(low + width, 3)]}
        q["reference"]["value"] = round(low + width / 2, 2)
        planted[q["id"]] = f"range {SHARES[j % len(SHARES)]:.2f} of its width above the truth"
    return planted


def build(folder: Path, seed: int, n: int) -> tuple[Path, Path, dict[str, str]]:
    """The pilot's runs on the true bank, then the bank with planted references (what the audit reads)."""
    truth = make_bank(folder / "truth", seed=seed)
    all_runs = folder / "all_runs.jsonl"
    make_runs(truth, all_runs, seed=seed + 1)
    pilot = folder / "pilot.jsonl"
    with all_runs.open() as src, pilot.open("w") as dst:
        for line in src:
            r = json.loads(line)
            if r["model"] == PILOT and r["condition"] == "record":
                dst.write(line)
    bank = load_bank(folder / "truth")
    questions = copy.deepcopy(list(bank.questions))
    planted = plant(questions, n, seed)
    write_bank(
        folder / "bank", BankContent("pilot", "1", questions, bank.sites, bank.pairs, created="2026-11-30T12:00:00Z")
    )
    return folder / "bank", pilot, planted


def with_parameter(rules, rule_id: str, name: str, value):
    """The rule set with one rule alone, one parameter changed."""
    doc = {
        "audit_rules_version": rules.version,
        "conditions": list(rules.conditions),
        "rules": [
            {"id": r.id, "kind": r.kind, "description": r.description, "parameters": {**r.parameters, name: value}}
            for r in rules.rules
            if r.id == rule_id
        ],
    }
    return parse_rules(doc)


def row(label: str, flagged: set[str], planted: dict[str, str], total: int) -> str:
    hit = len(flagged & planted.keys())
    false = len(flagged - planted.keys())
    others = total - len(planted)
    return f"  {label:<40} planted {hit:>2}/{len(planted):<3} others {false:>3}/{others} ({false / others:6.1%})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--planted", type=int, default=11)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bank_dir, pilot, planted = build(Path(tmp), args.seed, args.planted)
        rules = audit_rules()
        t0 = time.perf_counter()
        bank = load_bank(bank_dir, verify_hashes=True)
        load_runs([pilot], bank, passes=3)
        baseline = time.perf_counter() - t0
        t0 = time.perf_counter()
        doc = audit(bank_dir, [pilot])
        took = time.perf_counter() - t0
        total = doc["counts"]["questions"]
        print(f"pilot: {PILOT}, {doc['runs']['used']} runs on {total} questions, {len(planted)} planted:")
        for qid, what in sorted(planted.items()):
            print(f"  {qid:<8} {what}")
        print(f"the audit with the defaults (rules {rules.version}, sha256 {rules.sha256[:12]}):")
        print(row("all rules", {q["id"] for q in doc["questions"]}, planted, total))
        for r in rules.rules:
            print(row(r.id, {q["id"] for q in doc["questions"] if r.id in q["rules"]}, planted, total))
        print("sweeps (one rule alone, * the default):")
        for rule_id, (name, values) in SWEEPS.items():
            default = next(r for r in rules.rules if r.id == rule_id).parameters[name]
            for value in values:
                one = audit(bank_dir, [pilot], rules=with_parameter(rules, rule_id, name, value))
                mark = "*" if value == default else " "
                print(row(f"{rule_id} {name}={value}{mark}", {q["id"] for q in one["questions"]}, planted, total))
        print(
            f"one audit: {took:.2f} s; loading and judging the runs alone {baseline:.2f} s; ratio {took / baseline:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
