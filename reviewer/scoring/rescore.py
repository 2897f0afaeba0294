"""Rescoring without rerunning (EarthRecord Sec. 2.4): a pilot's runs on bank V scored on the corrected
bank V+1, allowed only when every question the runs answer kept its text and fields.

Each question is compared by the sha256 of its `text` and `fields` as canonical JSON (keys sorted, the
fields in their order, options in their shown order): what the model was asked and how it could answer.
A changed reference, range or accept list is what rescoring is for; a changed text or field refuses the
rescore and names the questions to rerun. Runs on questions removed in V+1 are dropped and listed; runs
naming a pair that changed or went missing refuse it too.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from reviewer.bank.io import Bank, canonical, dumps_line, load_bank
from reviewer.errors import ScoringError
from reviewer.scoring.runs import RunSet, load_runs, read_runs

logger = logging.getLogger(__name__)

#: at most this many ids are named in the one error line
MAX_NAMED = 50


def question_hash(q: dict[str, Any]) -> str:
    """'sha256:<hex>' of a question's text and fields (canonical JSON)."""
    doc = {"text": q["text"], "fields": canonical(q, "question")["fields"]}
    text = json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _named(ids: list[str]) -> str:
    more = f" and {len(ids) - MAX_NAMED} more" if len(ids) > MAX_NAMED else ""
    return ", ".join(ids[:MAX_NAMED]) + more


def compare_banks(old: Bank, new: Bank, questions: Collection[str], pairs: Collection[str] = ()) -> dict[str, Any]:
    """How the questions (and pairs) a run set names differ between two banks."""
    changed, removed, reference_changed = [], [], []
    for qid in sorted(questions):
        if not new.has("questions", qid):
            removed.append(qid)
            continue
        a, b = old.question(qid), new.question(qid)
        if question_hash(a) != question_hash(b):
            changed.append(qid)
        elif dumps_line(a, "question") != dumps_line(b, "question"):
            reference_changed.append(qid)
    changed_pairs = []
    for pid in sorted(pairs):
        p = old.pair(pid)
        if p["question"] in removed:
            continue
        if not new.has("pairs", pid) or dumps_line(new.pair(pid), "pair") != dumps_line(p, "pair"):
            changed_pairs.append(pid)
    return {
        "questions": len(questions),
        "changed": changed,
        "changed_pairs": changed_pairs,
        "removed": removed,
        "other_fields_changed": reference_changed,
    }


def load_rescored(
    run_paths: Sequence[str | Path],
    bank: Bank,
    old_dir: str | Path,
    *,
    passes: int = 3,
    lenient: bool = False,
    models: Collection[str] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> tuple[RunSet, dict[str, Any]]:
    """The runs made on the bank in `old_dir`, judged on `bank`, and what the rescore rests on.

    Raises ScoringError (one line naming how many and which) when a question the runs answer changed its
    text or fields, or a pair they name changed.
    """
    old = load_bank(old_dir, verify_hashes=True)
    runs, bad = read_runs(run_paths, old, passes=passes, models=models, cancel=cancel)
    if bad and not lenient:
        first = bad[0]
        raise ScoringError(
            f"{first.message} (on the bank the runs were made on, {old.name} {old.version}; "
            f"{len(bad)} bad line(s); --lenient scores the valid rest)",
            path=first.path,
            line=first.line,
            field=first.field,
        )
    diff = compare_banks(old, bank, {r["question"] for r in runs}, {r["pair"] for r in runs if r.get("pair")})
    if diff["changed"]:
        n = len(diff["changed"])
        raise ScoringError(
            f"cannot rescore: {n} question(s) the runs answer changed text or fields between {old.name} "
            f"{old.version} and {bank.name} {bank.version}: {_named(diff['changed'])} (rerun them)"
        )
    if diff["changed_pairs"]:
        n = len(diff["changed_pairs"])
        raise ScoringError(
            f"cannot rescore: {n} pair(s) the runs name changed or are missing in {bank.name} {bank.version}: "
            f"{_named(diff['changed_pairs'])} (rerun them)"
        )
    dropped = {r["_source"] for r in runs if r["question"] in set(diff["removed"])}
    runset = load_runs(run_paths, bank, passes=passes, lenient=True, models=models, cancel=cancel)
    # lines that only name a question removed in the new bank are not bad lines here: they are dropped
    runset.bad_lines = [p for p in runset.bad_lines if f"{p.path}:{p.line}" not in dropped]
    info = {
        "from": {"name": old.name, "version": old.version, "sha256": old.sha256, "path": str(old_dir)},
        "hash": "sha256 of each question's text and fields (canonical JSON)",
        "questions_checked": diff["questions"],
        "unchanged_text_and_fields": diff["questions"] - len(diff["removed"]),
        "reference_or_other_changed": diff["other_fields_changed"],
        "removed_questions": diff["removed"],
        "runs_dropped": len(dropped),
    }
    logger.info(
        "rescoring runs of %s %s on %s %s: %d questions unchanged, %d removed (%d runs dropped)",
        old.name,
        old.version,
        bank.name,
        bank.version,
        info["unchanged_text_and_fields"],
        len(diff["removed"]),
        len(dropped),
    )
    return runset, info
