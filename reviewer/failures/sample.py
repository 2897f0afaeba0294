"""Sampling the runs to code (seed 001 Sec. B.8 and C.5) into a coding set: one JSON file (failure_set.schema.json).

Steps part: the wrong runs with the record on computable and recognition questions, leaving out unwarranted
abstentions ('insufficient evidence' where the reference is not) and harness errors (no analysis to read); per
model N drawn with the seed, at most one per model and question. Pairs part: on instrument pairs, the wrong
altered runs in cases that moved and every altered run in cases beyond both (harness errors left out and counted).
The pools are counted in the set.

Each model's draw uses its own seeded generator (seed and model name), so adding a model's runs leaves the other
models' draws as they were.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reviewer.errors import ScoringError

SET_FORMAT = 1
PAIR_FIELDS = ("satellite", "variable", "alteration", "factor", "from", "to", "description")
RUN_FIELDS = ("confidence", "method", "caveats", "tool_calls", "minutes", "image_views", "messages")


def run_paths(
    sources: Sequence[str | Path], passes: int | None, bank_sha256: str | None = None
) -> tuple[list[Path], int]:
    """The run files and k: run files as given, or a scoring report folder's scores.json (its run files and k; the
    report must be of the bank given)."""
    paths = [Path(s) for s in sources]
    if len(paths) == 1 and paths[0].is_dir():
        scores_path = paths[0] / "scores.json"
        if not scores_path.is_file():
            raise ScoringError("is a folder without scores.json: give run files or a scoring report", path=paths[0])
        scores = json.loads(scores_path.read_text(encoding="utf-8"))
        if bank_sha256 is not None and scores["bank"]["sha256"] != bank_sha256:
            raise ScoringError(
                f"this scoring report is of bank {scores['bank']['name']} {scores['bank']['version']} "
                f"({scores['bank']['sha256']}), not of the bank given ({bank_sha256})",
                path=scores_path,
            )
        files = [Path(f) for f in scores["runs"]["files"]]
        missing = [f for f in files if not f.is_file()]
        if missing:
            raise ScoringError("a run file of this scoring report is gone", path=missing[0])
        return files, passes or int(scores["passes"])
    return paths, passes or 3


def _pass_k_order(scored: dict[str, Any]) -> list[dict[str, Any]]:
    """Models by overall pass^k, best first (ties by name), as the scoring report orders them."""
    rows = [{"model": m, "pass3": b["record"]["pass3"]} for m, b in scored["models"].items()]
    return sorted(rows, key=lambda r: (-(r["pass3"] or 0.0), r["model"]))


def _entry(run: dict[str, Any], rid: str, part: str, conclusion: str) -> dict[str, Any]:
    answer = run.get("answer")
    e = {
        "id": rid,
        "part": part,
        "model": run["model"],
        "question": run["question"],
        "condition": run["condition"],
        "pair": run.get("pair"),
        "pass": run["pass"],
        "answer": answer,
        "conclusion": answer.get(conclusion) if isinstance(answer, dict) else None,
        "right": bool(run["_right"]),
        "abstained": bool(run["_abstained"]),
    }
    e.update({k: run.get(k) for k in RUN_FIELDS})
    e["source"] = run.get("_source")
    return e


def draw(pool: list[dict[str, Any]], per_model: int, seed: int) -> list[dict[str, Any]]:
    """Per model, its pool shuffled by its own seeded generator, then walked: a run is taken unless the model has
    one on that question already, until `per_model` are taken."""
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in pool:
        by_model[r["model"]].append(r)
    out = []
    for model in sorted(by_model):
        runs = sorted(by_model[model], key=lambda r: (r["question"], r["pass"]))
        random.Random(f"failures:{seed}:{model}").shuffle(runs)
        seen: set[str] = set()
        taken = []
        for r in runs:
            if r["question"] not in seen:
                seen.add(r["question"])
                taken.append(r)
                if len(taken) == per_model:
                    break
        out.extend(sorted(taken, key=lambda r: (r["question"], r["pass"])))
    return out


def _question_block(q: dict[str, Any]) -> dict[str, Any]:
    keys = ("text", "class", "task", "site", "period", "fields", "conclusion", "reference", "reference_range")
    block = {k: q.get(k) for k in keys} | {"sensors": q.get("sensors", [])}
    if q.get("evidence") is not None:  # the question's own evidence view, for the coding dock's viewer
        block["evidence"] = q["evidence"]
    return block


def _step_pool(bank: Any, runset: Any) -> tuple[list[dict[str, Any]], int, int]:
    """The wrong runs with the record on computable and recognition questions, with the counts of the unwarranted
    abstentions and harness errors left out."""
    from reviewer.scoring.judge import Judge
    from reviewer.scoring.metrics import SCORED_CLASSES

    ref_insufficient = {q["id"]: Judge(q).reference_insufficient for q in bank.questions}
    pool, abstentions, errors = [], 0, 0
    for r in runset.runs:
        if r["condition"] != "record" or r["_right"] or bank.question(r["question"])["class"] not in SCORED_CLASSES:
            continue
        if r.get("error") is not None:
            errors += 1
        elif r["_abstained"] and not ref_insufficient[r["question"]]:
            abstentions += 1
        else:
            pool.append(r)
    return pool, abstentions, errors


def _pair_part(runset: Any, scored: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[int, str], dict[str, int]]:
    """The altered runs to code on instrument pairs (the wrong ones in cases that moved, all in cases beyond both),
    the outcome of each (by id of the run) and the counts: cases moved and beyond, harness errors left out."""
    altered: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in runset.runs:
        if r["condition"] == "altered":
            altered[(r["model"], r["pair"])].append(r)
    pair_runs, counts = [], {"moved": 0, "beyond": 0, "errors": 0}
    outcome_of = {}
    for model in sorted(scored["models"]):
        block = (scored["models"][model].get("pairs") or {}).get("instrument") or {}
        for pid, case in sorted((block.get("by_pair") or {}).items()):
            outcome = case["outcome"]
            if outcome not in ("moved", "beyond"):
                continue
            counts[outcome] += 1
            runs = sorted(altered[(model, pid)], key=lambda r: r["pass"])
            for r in runs if outcome == "beyond" else [r for r in runs if not r["_right"]]:
                if r.get("error") is not None:
                    counts["errors"] += 1  # a harness error left no report to read
                    continue
                outcome_of[id(r)] = outcome
                pair_runs.append(r)
    return pair_runs, outcome_of, counts


def _other_passes(run: dict[str, Any], same: list[dict[str, Any]], conclusion: str) -> list[dict[str, Any]]:
    """The same model's other passes on the question (same condition and pair), by pass."""
    return [
        {
            "pass": o["pass"],
            "conclusion": (o.get("answer") or {}).get(conclusion) if isinstance(o.get("answer"), dict) else None,
            "right": bool(o["_right"]),
            "confidence": o.get("confidence"),
            "method": o.get("method"),
            "caveats": o.get("caveats"),
        }
        for o in sorted(same, key=lambda x: x["pass"])
        if o["pass"] != run["pass"]
    ]


def _entries(
    steps: list[dict[str, Any]],
    pair_runs: list[dict[str, Any]],
    outcome_of: dict[int, str],
    runset: Any,
    conclusion: dict[str, str],
) -> list[dict[str, Any]]:
    """The set's runs: s001... for the steps part, p001... for the pairs part, each with its other passes."""
    same: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in runset.runs:
        same[(r["model"], r["question"], r["condition"], r.get("pair"))].append(r)
    entries = []
    for n, r in enumerate(steps, 1):
        entries.append(_entry(r, f"s{n:03d}", "steps", conclusion[r["question"]]))
    for n, r in enumerate(pair_runs, 1):
        entries.append(_entry(r, f"p{n:03d}", "pairs", conclusion[r["question"]]) | {"outcome": outcome_of[id(r)]})
    for e, r in zip(entries, [*steps, *pair_runs], strict=True):
        key = (r["model"], r["question"], r["condition"], r.get("pair"))
        e["other_passes"] = _other_passes(r, same[key], conclusion[r["question"]])
    return entries


def build_set(
    sources: Sequence[str | Path],
    bank_dir: str | Path,
    *,
    per_model: int = 12,
    seed: int = 0,
    passes: int | None = None,
    lenient: bool = False,
) -> dict[str, Any]:
    """The coding set as a dict (see the module text); writes nothing."""
    from reviewer.bank.io import load_bank
    from reviewer.scoring.metrics import compute
    from reviewer.scoring.runs import load_runs

    if per_model < 1:
        raise ScoringError("--per-model must be at least 1")
    bank = load_bank(bank_dir, verify_hashes=True)
    paths, k = run_paths(sources, passes, bank.sha256)
    runset = load_runs(paths, bank, passes=k, lenient=lenient)
    scored = compute(bank, runset, bootstrap=0, seed=0)
    conclusion = {q["id"]: q["conclusion"] for q in bank.questions}
    pool, abstentions, errors = _step_pool(bank, runset)
    steps = draw(pool, per_model, seed)
    pair_runs, outcome_of, cases = _pair_part(runset, scored)
    entries = _entries(steps, pair_runs, outcome_of, runset, conclusion)
    by_model = defaultdict(int)
    for r in pool:
        by_model[r["model"]] += 1
    pools = {
        "wrong_runs": len(pool),
        "wrong_runs_by_model": dict(sorted(by_model.items())),
        "unwarranted_abstentions": abstentions,
        "harness_errors": errors,
        "sampled": len(steps),
        "moved_cases": cases["moved"],
        "moved_wrong_runs": sum(1 for r in pair_runs if outcome_of[id(r)] == "moved"),
        "beyond_cases": cases["beyond"],
        "beyond_runs": sum(1 for r in pair_runs if outcome_of[id(r)] == "beyond"),
        "pair_harness_errors": cases["errors"],
    }
    keys = [[e["model"], e["question"], e["condition"], e["pair"], e["pass"]] for e in entries]
    ident = hashlib.sha256(json.dumps([bank.sha256, seed, per_model, keys]).encode()).hexdigest()[:12]
    qids = sorted({e["question"] for e in entries})
    pids = sorted({e["pair"] for e in entries if e["part"] == "pairs"})
    doc = {
        "format": SET_FORMAT,
        "id": f"fs-{ident}",
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "bank": {"name": bank.name, "version": bank.version, "sha256": bank.sha256},
        "runs_files": [str(p) for p in paths],
        "passes": k,
        "seed": seed,
        "per_model": per_model,
        "models": _pass_k_order(scored),
        "pools": pools,
        "questions": {qid: _question_block(bank.question(qid)) for qid in qids},
        "runs": entries,
    }
    if pids:  # what was altered on each pair, for the coder of the sensor reports
        doc["pairs"] = {pid: {k: bank.pair(pid).get(k) for k in PAIR_FIELDS} for pid in pids}
    return doc


def write_set(doc: dict[str, Any], out: str | Path) -> Path:
    """Check the set against its schema and write it atomically."""
    from reviewer.fileio import atomic_write, check_output_file
    from reviewer.schemas import validate

    path = check_output_file(out)
    validate(doc, "failure_set")
    atomic_write(path, (json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8"))
    return path


def load_set(path: str | Path) -> dict[str, Any]:
    """A coding set, checked against its schema (a hand-edited or damaged file is named with its field)."""
    from reviewer.fileio import json_problem, loads_strict
    from reviewer.schemas import validate_once

    path = Path(path)
    try:
        raw = path.read_bytes()
        doc = loads_strict(raw.decode("utf-8"))
    except ValueError as exc:  # malformed JSON or UTF-8
        from reviewer.errors import SchemaError

        raise SchemaError(f"not a coding set: {json_problem(exc)}", path=path) from exc
    validate_once(doc, raw, "failure_set", path=path)  # a set checked before is not checked again (0.3 s a call)
    return doc


def run_of(doc: dict[str, Any], rid: str) -> dict[str, Any]:
    """One run of the set by its id (s001..., p001...)."""
    for e in doc["runs"]:
        if e["id"] == rid:
            return e
    from reviewer.errors import ReviewError

    ids = [e["id"] for e in doc["runs"]]
    if not ids:  # (it had named "ids s001... and p001..." for a set that holds none: no wrong runs were sampled)
        raise ReviewError(f"no run {rid!r}: coding set {doc['id']} holds no runs", field="run")
    steps, pairs = [i for i in ids if i.startswith("s")], [i for i in ids if i.startswith("p")]
    have = "; ".join(f"{k[0]}..{k[-1]}" for k in (steps, pairs) if k)
    raise ReviewError(f"no run {rid!r} in coding set {doc['id']} (its runs: {have})", field="run")
