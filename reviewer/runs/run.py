"""`run_bank()`: one model on a bank through Inspect's eval_set, then the runs file and the summary.

Order matters for the user: the bank (frozen, its hashes), the record folders, the out folder and the key are
checked before anything runs. The out folder holds run.json (what was asked), Inspect's logs in logs/ (`inspect view
RUNS_DIR/logs`), the sandbox configurations, runs.jsonl and summary.json. A second run into the same folder
continues: Inspect's eval_set reuses every finished sample of the logs there and runs only the rest.
"""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reviewer import __version__
from reviewer.bank.io import Bank, load_bank
from reviewer.fileio import atomic_write, check_output_folder
from reviewer.runs.agent import Limits, make_task
from reviewer.runs.collect import RUNS_FILE, SUMMARY_FILE, collect, write_runs
from reviewer.runs.config import RunError, provide_key, settings
from reviewer.runs.sandbox import SANDBOXES, check_available
from reviewer.runs.tasks import CONDITIONS, Records, Unit, units

logger = logging.getLogger(__name__)

MARKER = "run.json"
LOGS = "logs"
#: What `reviewer run --out DIR` writes into DIR (the sandboxes' copies under sandbox/): a folder holding anything
#: else is refused (reviewer.fileio: the one rule for output folders); one holding these continues its run
RUN_ENTRIES = frozenset({MARKER, LOGS, RUNS_FILE, SUMMARY_FILE, "sandbox"})


@dataclass
class RunOptions:
    """What `reviewer run` was asked (also written to RUNS_DIR/run.json, so a resume checks it is the same run)."""

    bank: str
    model: str
    out: str
    conditions: list[str] = field(default_factory=lambda: ["record", "closed_book", "altered", "placebo"])
    passes: int = 3
    sandbox: str = "docker"
    max_samples: int | None = None
    limit_minutes: float = 60.0
    limit_messages: int = 300
    draft: bool = False
    sites: list[str] = field(default_factory=list)
    altered: list[str] = field(default_factory=list)
    records_root: str | None = None
    retry_attempts: int = 3
    display: str | None = None

    @classmethod
    def with_defaults(cls, **kw: Any) -> RunOptions:
        s = settings()
        kw.setdefault("passes", s["passes"])
        kw.setdefault("limit_minutes", s["limit_minutes"])
        kw.setdefault("limit_messages", s["limit_messages"])
        return cls(**kw)


def open_bank(folder: str | Path, *, draft: bool) -> Bank:
    """The bank, its hashes verified (load_bank refuses any mismatch); one that is not frozen only with --draft."""
    bank = load_bank(folder, verify_hashes=True)
    if not bank.frozen and not draft:
        raise RunError(
            f"bank {bank.name} version {bank.version} is not frozen: freeze it (`reviewer freeze`), or run on it as "
            "a draft (--draft, e.g. to screen candidates in the closed book)",
            path=folder,
        )
    return bank


def _check_out(opts: RunOptions, bank: Bank) -> Path:
    """The out folder: new, empty, or holding this same run (same bank bytes, model, passes, sandbox) and nothing
    else."""
    out = check_output_folder(opts.out, ours=RUN_ENTRIES)
    marker = out / MARKER
    if out.is_dir() and any(out.iterdir()):
        if not marker.is_file():
            raise RunError("holds files that are not a run of `reviewer run`; give an empty or new folder", path=out)
        before = json.loads(marker.read_text(encoding="utf-8"))
        asked = (
            ("bank_sha256", bank.sha256),
            ("model", opts.model),
            ("passes", opts.passes),
            ("conditions", sorted(opts.conditions)),
        )
        for key, now in asked:
            if before.get(key) != now:
                raise RunError(
                    f"holds a run whose {key.replace('_', ' ')} is {before.get(key)!r}, not {now!r}; give another "
                    "folder (a second run into the same folder continues the same run)",
                    path=out,
                )
    return out


def plan(opts: RunOptions, bank: Bank, store: Any = None) -> dict[str, list[Unit]]:
    bad = [c for c in opts.conditions if c not in CONDITIONS]
    if bad:
        raise RunError(f"unknown condition {bad[0]!r} (one of {', '.join(CONDITIONS)})", field="conditions")
    if opts.sandbox not in SANDBOXES:
        raise RunError(f"unknown sandbox {opts.sandbox!r} (one of {', '.join(SANDBOXES)})", field="sandbox")
    records = Records.from_folders(opts.sites, opts.altered, store, bank)
    out = {}
    for condition in opts.conditions:
        found = units(bank, condition, records)
        if found:
            out[condition] = found
        else:
            logger.warning("the bank has no samples for the %s condition; skipped", condition)
    if not out:
        raise RunError("nothing to run: the bank has no questions or pairs for the conditions asked")
    return out


def _display(opts: RunOptions) -> str:
    if opts.display:
        return opts.display
    return "rich" if sys.stdout.isatty() else "plain"


def run_bank(opts: RunOptions, *, model: Any = None, store: Any = None, progress: Any = None) -> dict[str, Any]:
    """Run the model on the bank (Inspect eval_set into RUNS_DIR/logs), then write runs.jsonl and summary.json.

    `model` is an Inspect Model to use instead of the name (tests: mockllm with scripted outputs); `progress` is
    called as progress(done, total, message) once before the start and after every finished sample.
    """
    from inspect_ai import eval_set

    from reviewer.runs import progress as hook

    bank = open_bank(opts.bank, draft=opts.draft)
    work = _check_out(opts, bank)
    planned = plan(opts, bank, store)
    check_available(opts.sandbox)
    if model is None:
        provide_key(opts.model)
    limits = Limits(opts.passes, opts.limit_minutes, opts.limit_messages)
    root = Path(opts.records_root) if opts.records_root else None
    work.mkdir(parents=True, exist_ok=True)
    marker = {
        "tool": f"earthrecord-reviewer {__version__}",
        "bank": str(Path(opts.bank).resolve()),
        "bank_name": bank.name,
        "bank_version": bank.version,
        "bank_sha256": bank.sha256,
        "options": asdict(opts),
    } | {"model": opts.model, "passes": opts.passes, "conditions": sorted(opts.conditions)}
    atomic_write(work / MARKER, (json.dumps(marker, indent=1) + "\n").encode("utf-8"))
    tasks = [
        make_task(bank, c, u, sandbox_kind=opts.sandbox, limits=limits, work=work, records_root=root)
        for c, u in planned.items()
    ]
    total = sum(len(u) for u in planned.values()) * opts.passes
    done = [0]
    if progress is not None:
        progress(0, total, f"starting {len(tasks)} task(s): {', '.join(planned)}")

        def one(condition: str, sample: str, k: int) -> None:
            done[0] += 1
            progress(done[0], total, f"{condition} {sample} pass {k}")

        hook.follow(one)
    cancelled = False
    stopped = None
    try:
        eval_set(
            tasks,
            log_dir=str(work / LOGS),
            model=model if model is not None else opts.model,
            max_samples=opts.max_samples,
            max_sandboxes=opts.max_samples,
            retry_attempts=opts.retry_attempts,
            retry_wait=5,
            fail_on_error=False,
            log_buffer=1,  # every finished sample is on disk at once: a killed run loses no finished work
            display=_display(opts),
            log_level="warning",
        )
    except KeyboardInterrupt:
        cancelled = True  # the runs finished so far are kept (written below); a second run continues
    except Exception as exc:  # noqa: BLE001 - whatever stopped Inspect, the runs made so far are written below
        stopped = f"{type(exc).__name__}: {exc}".splitlines()[0]
        logger.warning("Inspect stopped: %s", stopped)
    finally:
        hook.follow(None)
    runs, summary = collect(work / LOGS, opts.model, planned, opts.passes)
    summary["cancelled"] = cancelled
    summary["stopped"] = stopped
    summary["bank"] = {"name": bank.name, "version": bank.version, "sha256": bank.sha256, "frozen": bank.frozen}
    write_runs(work, runs)
    atomic_write(work / SUMMARY_FILE, (json.dumps(summary, indent=1) + "\n").encode("utf-8"))
    summary["runs_file"] = str(work / RUNS_FILE)
    return summary
