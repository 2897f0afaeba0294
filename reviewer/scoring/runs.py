"""Run records: read, check against the bank, judge, and list what is missing, invalid or errored.

Bad lines (broken JSON, schema failures such as NaN or out-of-range confidences, unknown questions,
pairs or models, duplicates) stop a scoring run unless `lenient`; missing passes, invalid answers and
harness errors are scored as wrong and listed.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer import schemas
from reviewer.bank.io import KEY_ORDER, Bank, Problem, parse_line
from reviewer.errors import SchemaError, ScoringError
from reviewer.scoring.judge import Judge

logger = logging.getLogger(__name__)

CONDITIONS = ("record", "closed_book", "altered", "placebo")
PAIR_KIND = {"altered": "instrument", "placebo": "placebo"}


@dataclass
class RunSet:
    """Judged runs plus everything a report must list about the input."""

    runs: list[dict[str, Any]]
    passes: int
    bad_lines: list[Problem] = field(default_factory=list)
    missing_passes: list[dict[str, Any]] = field(default_factory=list)
    invalid_answers: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return sorted({r["model"] for r in self.runs})


_ALLOWED = frozenset(KEY_ORDER["run"])  # the run record fields, in the order the bank writes them
_REQUIRED = ("model", "question", "condition", "pass", "answer")


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _answer_value(v: Any) -> bool:
    return v is None or _num(v) or isinstance(v, str) or (isinstance(v, list) and all(_int(x) for x in v))


def fast_valid(run: Any) -> bool:
    """True only for lines that certainly match run.schema.json (checked without jsonschema, ~50x faster).

    Lines it does not accept go through jsonschema, which gives the exact message; so this may be
    stricter than the schema, never looser.
    """
    if not isinstance(run, dict) or not _ALLOWED.issuperset(run) or not all(k in run for k in _REQUIRED):
        return False
    g = run.get
    answer = run["answer"]
    return (
        isinstance(run["model"], str)
        and run["model"].strip() != ""
        and isinstance(run["question"], str)
        and run["question"] != ""
        and run["condition"] in CONDITIONS
        and (g("pair") is None or isinstance(g("pair"), str))
        and _int(run["pass"])
        and run["pass"] >= 1
        and (answer is None or (isinstance(answer, dict) and all(_answer_value(v) for v in answer.values())))
        and (g("confidence") is None or (_num(g("confidence")) and 0 <= g("confidence") <= 1))
        and all(g(k) is None or isinstance(g(k), str) for k in ("method", "caveats", "error"))
        and all(g(k) is None or (_int(g(k)) and g(k) >= 0) for k in ("tool_calls", "image_views", "messages"))
        and (g("minutes") is None or (_num(g("minutes")) and g("minutes") >= 0))
    )


def _key(run: dict[str, Any]) -> tuple:
    return (run["model"], run["question"], run["condition"], run.get("pair"), run["pass"])


def _line_problems(
    run: dict[str, Any], bank: Bank, passes: int, models: Collection[str] | None
) -> list[tuple[str, str]]:
    """Rules a run line must meet beyond its schema."""
    out = []
    if models is not None and run["model"] not in models:
        out.append(("model", f"unknown model {run['model']!r}"))
    if not bank.has("questions", run["question"]):
        out.append(("question", f"unknown question {run['question']!r}"))
    if run["pass"] > passes:
        out.append(("pass", f"pass {run['pass']} is above --passes {passes}"))
    pid = run.get("pair")
    if run["condition"] in PAIR_KIND:
        if pid is None:
            out.append(("pair", f"a {run['condition']} run must name its pair"))
        elif not bank.has("pairs", pid):
            out.append(("pair", f"unknown pair {pid!r}"))
        else:
            p = bank.pair(pid)
            if p["kind"] != PAIR_KIND[run["condition"]]:
                out.append(("pair", f"pair {pid!r} is a {p['kind']} pair, not for a {run['condition']} run"))
            if p["question"] != run["question"]:
                out.append(("pair", f"pair {pid!r} belongs to question {p['question']!r}, not {run['question']!r}"))
    elif pid is not None:
        out.append(("pair", f"a {run['condition']} run names no pair"))
    return out


def read_runs(
    paths: Sequence[str | Path],
    bank: Bank,
    *,
    passes: int = 3,
    models: Collection[str] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """Every good run line of every file, and every bad line as a Problem (file, line, field)."""
    validator = schemas.validator("run")
    runs: list[dict[str, Any]] = []
    bad: list[Problem] = []
    seen: dict[tuple, str] = {}
    for path in paths:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:  # (errno's words had been the message: "[Errno 2] No such file or directory")
            bad.append(Problem(str(path), None, None, "no such file"))
            continue
        except IsADirectoryError:
            bad.append(Problem(str(path), None, None, "a folder, not a runs file (its runs.jsonl?)"))
            continue
        except OSError as exc:
            bad.append(Problem(str(path), None, None, f"cannot read: {exc.strerror or exc}"))
            continue
        except UnicodeDecodeError:
            bad.append(Problem(str(path), None, None, "cannot read: not UTF-8 text"))
            continue
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for lineno, raw in enumerate(lines, start=1):
            if cancel is not None and lineno % 2000 == 0 and cancel():
                from reviewer.errors import Cancelled

                raise Cancelled("scoring cancelled")
            if not raw.strip():
                bad.append(Problem(str(path), lineno, None, "blank line"))
                continue
            try:
                run = parse_line(raw, path=path, line=lineno)
            except SchemaError as exc:
                bad.append(Problem(str(path), lineno, None, exc.message))
                continue
            if not fast_valid(run) and not validator.is_valid(run):
                bad.extend(Problem(str(path), lineno, f, m) for f, m in schemas.problems(run, "run"))
                continue
            run["pass"] = int(run["pass"])  # the schema's integer admits 2.0
            found = _line_problems(run, bank, passes, models)
            if found:
                bad.extend(Problem(str(path), lineno, f, m) for f, m in found)
                continue
            key = _key(run)
            if key in seen:
                bad.append(
                    Problem(
                        str(path),
                        lineno,
                        None,
                        f"duplicate run (model, question, condition, pair, pass) = {key}, first at {seen[key]}",
                    )
                )
                continue
            seen[key] = f"{path}:{lineno}"
            run["_source"] = f"{path}:{lineno}"
            runs.append(run)
    return runs, bad


def load_runs(
    paths: Sequence[str | Path],
    bank: Bank,
    *,
    passes: int = 3,
    lenient: bool = False,
    models: Collection[str] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> RunSet:
    """Read, check and judge runs; raises ScoringError on bad lines unless `lenient`."""
    if passes < 1:
        raise ScoringError("--passes must be at least 1")
    runs, bad = read_runs(paths, bank, passes=passes, models=models, cancel=cancel)
    if bad and not lenient:
        first = bad[0]
        more = (
            f" ({len(bad)} bad lines in all; --lenient scores the valid rest)"
            if len(bad) > 1
            else " (--lenient scores the valid rest)"
        )
        if first.line is None and len(bad) == 1:  # a whole file: the rest is the other files, if any
            more = " (--lenient scores the other files)" if len(paths) > 1 else ""
        raise ScoringError(first.message + more, path=first.path, line=first.line, field=first.field)
    if not runs:
        raise ScoringError("no valid runs to score", path=str(paths[0]) if paths else None)
    judges = {q["id"]: Judge(q) for q in bank.questions}
    result = RunSet(runs=runs, passes=passes, bad_lines=bad)
    for run in runs:
        verdict = judges[run["question"]](run.get("answer"))
        errored = run.get("error") is not None
        run["_right"] = verdict.right and not errored
        run["_abstained"] = verdict.abstained and not errored
        run["_valid"] = verdict.valid
        where = {k: run.get(k) for k in ("model", "question", "condition", "pair", "pass")}
        if errored:
            result.errors.append(where | {"error": run["error"], "source": run["_source"]})
        elif not verdict.valid:
            result.invalid_answers.append(where | {"reason": verdict.reason, "source": run["_source"]})
    result.missing_passes = _missing(runs, bank, passes)
    logger.info(
        "%d runs judged: %d missing passes, %d invalid answers, %d errors, %d bad lines",
        len(runs),
        len(result.missing_passes),
        len(result.invalid_answers),
        len(result.errors),
        len(bad),
    )
    return result


def _missing(runs: list[dict[str, Any]], bank: Bank, passes: int) -> list[dict[str, Any]]:
    """Expected (model, question, condition, pair, pass) without a run.

    Expected: every question with the record; in the closed book, every question of a class the model
    has closed-book runs in; every pair of a kind the model has altered or placebo runs for.
    """
    have = {_key(r) for r in runs}
    classes: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in runs:
        classes[(r["model"], r["condition"])].add(bank.question(r["question"])["class"])
    out = []
    for model in sorted({r["model"] for r in runs}):
        expected: list[tuple[str, str, str | None]] = [(q["id"], "record", None) for q in bank.questions]
        closed = classes.get((model, "closed_book"), set())
        expected += [(q["id"], "closed_book", None) for q in bank.questions if q["class"] in closed]
        for condition, kind in PAIR_KIND.items():
            if (model, condition) in classes:
                expected += [(p["question"], condition, p["id"]) for p in bank.pairs if p["kind"] == kind]
        for qid, condition, pid in expected:
            for k in range(1, passes + 1):
                if (model, qid, condition, pid, k) not in have:
                    out.append({"model": model, "question": qid, "condition": condition, "pair": pid, "pass": k})
    return out
