"""Inspect's logs -> RUNS_DIR/runs.jsonl (schemas/run.schema.json) and RUNS_DIR/summary.json.

Every expected (question, condition, pair, pass) gets exactly one run: a sample that ended in a harness error (a
sandbox crash, an API error after Inspect's retries), hit a limit, never submitted a valid answer, or never ran
because its task stopped becomes a run with `error` set, so the scorer counts it wrong and lists it; never a gap.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from reviewer.bank.io import dumps_line
from reviewer.fileio import atomic_write
from reviewer.runs.config import cost_usd
from reviewer.runs.tasks import Unit
from reviewer.runs.tools import IMAGE_VIEWS, SUBMISSION
from reviewer.schemas import problems

RUNS_FILE = "runs.jsonl"
SUMMARY_FILE = "summary.json"


def _latest_logs(log_dir: Path) -> dict[str, Any]:
    """The newest log of each task (by its name) in the folder, read whole."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    newest: dict[str, Any] = {}
    for info in list_eval_logs(str(log_dir), recursive=False):
        header = read_eval_log(info, header_only=True)
        name = header.eval.task
        if name not in newest or header.eval.created > newest[name].eval.created:
            newest[name] = header
    return {name: read_eval_log(h.location) for name, h in newest.items()}


def _error_of(sample: Any) -> str | None:
    if sample.error is not None:
        first = (sample.error.message or "error").strip().splitlines()[0]
        return f"harness error: {first[:400]}"
    if sample.limit is not None:
        return f"{sample.limit.type} limit of {sample.limit.limit:g} reached before a valid answer"
    if (sample.store or {}).get(SUBMISSION) is None:
        return "no valid answer submitted"
    return None


def _tool_calls(sample: Any) -> int:
    return sum(len(m.tool_calls or []) for m in sample.messages if m.role == "assistant")


def run_record(model: str, unit: Unit, k: int, sample: Any | None, missing_reason: str) -> dict[str, Any]:
    """One line of runs.jsonl from one (sample, epoch) of a log (None: it never ran)."""
    run: dict[str, Any] = {
        "model": model,
        "question": unit.question["id"],
        "condition": unit.condition,
        "pair": unit.pair,
        "pass": k,
        "answer": None,
    }
    if sample is None:
        run["error"] = missing_reason
        return run
    sub = (sample.store or {}).get(SUBMISSION)
    error = _error_of(sample)
    if sub is not None and error is None:
        run.update(answer=sub["answer"], confidence=sub["confidence"], method=sub["method"], caveats=sub["caveats"])
    seconds = sample.working_time if sample.working_time is not None else sample.total_time
    run.update(
        tool_calls=_tool_calls(sample),
        minutes=round(max(seconds or 0.0, 0.0) / 60, 4),
        image_views=int((sample.store or {}).get(IMAGE_VIEWS, 0)),
        messages=len(sample.messages),
        error=error,
    )
    return run


def collect(
    log_dir: Path, model: str, plan: dict[str, list[Unit]], passes: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The runs of every planned unit and pass, and the summary (runs, errors, tokens, cost per condition)."""
    logs = _latest_logs(log_dir)
    runs: list[dict[str, Any]] = []
    summary: dict[str, Any] = {"model": model, "conditions": {}}
    for condition, units in plan.items():
        log = logs.get(f"earthrecord_{condition}")
        samples = {(s.id, s.epoch): s for s in (log.samples or [])} if log is not None else {}
        why = "not run: the task stopped before this sample"
        if log is not None and log.error is not None:
            why = f"not run: the task stopped ({log.error.message.strip().splitlines()[0]})"
        for unit in units:
            for k in range(1, passes + 1):
                runs.append(run_record(model, unit, k, samples.get((unit.sample_id, k)), why))
        usage: dict[str, int] = defaultdict(int)
        if log is not None and log.stats is not None:
            for use in log.stats.model_usage.values():
                for key in ("input_tokens", "output_tokens", "input_tokens_cache_write", "input_tokens_cache_read"):
                    usage[key] += int(getattr(use, key) or 0)
        mine = [r for r in runs if r["condition"] == condition]
        summary["conditions"][condition] = {
            "runs": len(mine),
            "answered": sum(1 for r in mine if r["error"] is None),
            "errors": sum(1 for r in mine if r["error"] is not None),
            "tokens": dict(usage),
            "cost_usd": cost_usd(model, usage),
            "log": None if log is None else Path(log.location).name,
            "status": None if log is None else log.status,
        }
    # what ended the runs that erred, commonest first: "errors 22" alone sent the user to read runs.jsonl (a whole
    # offline run of mockllm/model ended in one ConnectionError, tiktoken's encoding not downloadable)
    kinds = Counter(r["error"] for r in runs if r["error"] is not None)
    summary["errors"] = [{"error": e, "runs": n} for e, n in kinds.most_common(3)]
    summary["error_kinds"] = len(kinds)
    costs = [c["cost_usd"] for c in summary["conditions"].values()]
    summary["cost_usd"] = None if any(c is None for c in costs) else round(sum(costs), 6)
    return runs, summary


def write_runs(out_dir: Path, runs: list[dict[str, Any]]) -> Path:
    """RUNS_DIR/runs.jsonl, every line checked against run.schema.json first, written whole or not at all."""
    lines = []
    for i, run in enumerate(runs, start=1):
        found = problems(run, "run")
        if found:
            field, message = found[0]
            from reviewer.errors import SchemaError

            raise SchemaError(message, path=out_dir / RUNS_FILE, line=i, field=field)
        lines.append(dumps_line(run, "run"))
    path = out_dir / RUNS_FILE
    atomic_write(path, ("\n".join(lines) + "\n").encode("utf-8"))
    return path
