"""`score --subset`: score on the questions the review settled one way, read from the frozen bank's qc.json.

unanimous, adjudicated, corrected: qc.json items.*.settled (corrected includes drafted-then-corrected: an
interpretation a reviewer had to fix); high-agreement: stage-1 agreement at least `subsets.high_agreement_min` of
assets/review/quality.json. Scoring a subset equals scoring a bank holding only those questions (and their pairs),
with the runs on the other questions left out (not bad lines).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from reviewer.bank.io import QC, Bank
from reviewer.errors import ScoringError

SUBSETS = ("unanimous", "adjudicated", "corrected", "high-agreement")


def _high_agreement_min() -> float:
    from reviewer import ASSETS_DIR, schemas

    doc = schemas.load(ASSETS_DIR / "review" / "quality.json", "quality")
    return float(doc["subsets"]["high_agreement_min"])


def members(qc: dict[str, Any], name: str) -> set[str]:
    """The question ids of a subset, from qc.json's per-item provenance."""
    items = qc["items"]
    if name == "high-agreement":
        least = _high_agreement_min()
        return {
            q for q, p in items.items() if p["stage1"]["agreement"] is not None and p["stage1"]["agreement"] >= least
        }
    wanted = {"corrected": ("corrected", "drafted-then-corrected")}.get(name, (name,))
    return {q for q, p in items.items() if p["settled"] in wanted}


def subset_bank(bank: Bank, name: str) -> tuple[Bank, dict[str, Any]]:
    """The bank holding only the subset's questions and their pairs, and what the report says of it."""
    if name not in SUBSETS:
        raise ScoringError(f"--subset must be one of {', '.join(SUBSETS)}, not {name!r}")
    path = bank.path / QC
    try:
        qc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScoringError(
            "--subset needs the review's qc.json beside the manifest (a frozen bank)", path=path
        ) from None
    if "items" not in qc:
        raise ScoringError(
            "qc.json has no per-item provenance (frozen before it was recorded): freeze the bank again for --subset",
            path=path,
        )
    keep = members(qc, name)
    questions = [q for q in bank.questions if q["id"] in keep]
    if not questions:
        raise ScoringError(f"subset {name} holds no question of bank {bank.name} {bank.version}", path=path)
    pairs = [p for p in bank.pairs if p["question"] in keep]
    info = {"name": name, "questions": len(questions), "of": len(bank.questions)}
    return replace(bank, questions=questions, pairs=pairs, _by_id={}), info


def restrict_runs(runset: Any, bank: Bank) -> Any:
    """The runs on the subset bank's questions only, with the problems the smaller bank would list."""
    from reviewer.scoring.runs import RunSet, _missing

    keep = {q["id"] for q in bank.questions}
    runs = [r for r in runset.runs if r["question"] in keep]
    return RunSet(
        runs=runs,
        passes=runset.passes,
        bad_lines=runset.bad_lines,
        missing_passes=_missing(runs, bank, runset.passes),
        invalid_answers=[p for p in runset.invalid_answers if p["question"] in keep],
        errors=[p for p in runset.errors if p["question"] in keep],
    )
