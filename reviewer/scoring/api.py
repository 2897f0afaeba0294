"""`score()`: one scoring run of a frozen bank, shared by the CLI and the app's Scoring panel.

Order matters for the user: the output folder, the bank's hashes and every run line are checked before
anything is written, so a refused run leaves the output folder untouched; the report is written into a
temporary folder beside it and renamed into place, so a full disk or a cancel leaves no partial report.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from reviewer import __version__
from reviewer.bank.io import load_bank
from reviewer.errors import Cancelled, ScoringError
from reviewer.fileio import atomic_write, check_output_folder, output_folder
from reviewer.scoring.metrics import compute
from reviewer.scoring.options import ScoringOptions
from reviewer.scoring.regression import difficulty_regression, regression_frame
from reviewer.scoring.runs import load_runs

logger = logging.getLogger(__name__)

#: What `score` writes into its folder (scores.json; the report's pages, tables and figures): a folder holding
#: anything else is refused (reviewer.fileio: the one rule for output folders).
REPORT_ENTRIES = frozenset({"scores.json", "report.md", "report.html", "tables", "figures"})

Progress = Callable[[float, str], None]


def _clean(obj: Any) -> Any:
    """JSON-safe copy: NaN/inf become null, numpy scalars plain Python, private keys dropped."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items() if not str(k).startswith("_")}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, str | bytes):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _order_models(models: dict[str, Any]) -> dict[str, Any]:
    """Models sorted by overall pass^k, best first (ties by name)."""
    return dict(sorted(models.items(), key=lambda kv: (-(kv[1]["record"]["pass3"] or 0.0), kv[0])))


def compute_scores(
    bank_dir: str | Path,
    run_paths: Sequence[str | Path],
    options: ScoringOptions | None = None,
    *,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Every number of the evaluation as the scores.json dict, with `options` (reviewer.scoring.options; the
    defaults when None); writes nothing.

    `options.subset` (reviewer.scoring.subset.SUBSETS) scores only the questions the review settled that way.
    A bank that is not frozen is refused unless `options.draft` (its scores are not comparable with others).
    `options.rescore_from` names the bank the runs were made on: they are scored on this one without a rerun
    when every question they answer kept its text and fields (reviewer.scoring.rescore).
    """
    opts = options or ScoringOptions()
    passes, bootstrap, seed, lenient, models = opts.passes, opts.bootstrap, opts.seed, opts.lenient, opts.models
    draft, rescore_from, subset = opts.draft, opts.rescore_from, opts.subset

    def report(fraction: float, message: str) -> None:
        if cancel is not None and cancel():
            raise Cancelled("scoring cancelled")
        if progress is not None:
            progress(fraction, message)

    if not run_paths:
        raise ScoringError("no run files given")
    report(0.0, "checking the bank")
    bank = load_bank(bank_dir, verify_hashes=True)
    if not bank.frozen:
        if not draft:
            raise ScoringError(
                f"bank {bank.name} version {bank.version} is not frozen: freeze it (`reviewer freeze`) or score it "
                "as a draft (--draft)",
                path=bank_dir,
            )
        logger.warning("bank %s %s is not frozen; scored as a draft", bank.name, bank.version)
    report(0.05, "reading runs")
    rescored = None
    if rescore_from is not None:
        from reviewer.scoring.rescore import load_rescored

        runset, rescored = load_rescored(
            run_paths, bank, rescore_from, passes=passes, lenient=lenient, models=models, cancel=cancel
        )
    else:
        runset = load_runs(run_paths, bank, passes=passes, lenient=lenient, models=models, cancel=cancel)
    subset_info = None
    if subset is not None:
        from reviewer.scoring.subset import restrict_runs, subset_bank

        bank, subset_info = subset_bank(bank, subset)
        runset = restrict_runs(runset, bank)
    report(0.15, "judging and counting")
    scored = compute(
        bank,
        runset,
        bootstrap=bootstrap,
        seed=seed,
        cancel=cancel,
        progress=(lambda f, msg: report(0.15 + 0.65 * f, msg)) if progress or cancel else None,
    )
    report(0.8, "difficulty regression")
    regression = difficulty_regression(regression_frame(scored))
    scores = {
        "bank": {
            "name": bank.name,
            "version": bank.version,
            "sha256": bank.sha256,
            "frozen": bank.frozen,
            "draft": not bank.frozen,
            "files": bank.manifest["files"],
        },
        "passes": passes,
        # every pass3 key (pass3, pass3_ci, closed_pass3, ...) holds pass^k for this k; k = 3 is the contract
        "pass_k": passes,
        "bootstrap": {"resamples": bootstrap, "seed": seed, "method": "percentile", "level": 0.95, "unit": "question"},
        "models": _order_models(scored["models"]),
        "baselines": scored["baselines"],
        "regression": regression,
        "pairs": scored["pairs"],
        # every pair of models on the same questions, with the bootstrap's shared resamples (metrics.paired_comparisons)
        "paired": scored["paired"],
        "questions": scored["questions"],
        "runs": {
            "files": [str(p) for p in run_paths],
            "scored": len(runset.runs),
            "bad_lines": len(runset.bad_lines),
            "lenient": lenient,
        },
        "problems": {
            "missing_passes": runset.missing_passes,
            "invalid_answers": runset.invalid_answers,
            "errors": runset.errors,
            "bad_lines": [
                {"path": p.path, "line": p.line, "field": p.field, "message": p.message} for p in runset.bad_lines
            ],
        },
        "scorer": {"name": "earthrecord-reviewer", "version": __version__},
    }
    if rescored is not None:
        scores["rescored"] = rescored
    if subset_info is not None:
        scores["subset"] = subset_info
    return _clean(scores)


def score(
    bank_dir: str | Path,
    run_paths: Sequence[str | Path],
    out_dir: str | Path,
    options: ScoringOptions | None = None,
    *,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    report: bool = True,
    sections: Sequence[Any] = (),
) -> dict[str, Any]:
    """Score runs on a bank and write REPORT_DIR/scores.json, tables, report.md/html and figures.

    `sections`: further report sections (reviewer.scoring.report.Section, e.g. the failure coding of these
    runs) appended to the report.

    progress(fraction, message) is called along the way; cancel() returning True raises Cancelled. The
    folder is written whole or not at all (reviewer.fileio.output_folder).
    """
    check_output_folder(out_dir, ours=REPORT_ENTRIES)  # before the work: a folder holding others' files is refused
    scores = compute_scores(bank_dir, run_paths, options, progress=progress, cancel=cancel)
    out = Path(out_dir)
    if progress:
        progress(0.85, "writing scores.json")
    with output_folder(out, last=["scores.json"], ours=REPORT_ENTRIES) as tmp:
        if report:
            from reviewer.scoring.report import write_report

            if cancel is not None and cancel():
                raise Cancelled("scoring cancelled")
            if progress:
                progress(0.9, "writing the report")
            write_report(scores, tmp, sections=sections)
        data = json.dumps(scores, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        atomic_write(tmp / "scores.json", data.encode("utf-8"))
    if progress:
        progress(1.0, "done")
    logger.info(
        "scored %d models on %s %s into %s",
        len(scores["models"]),
        scores["bank"]["name"],
        scores["bank"]["version"],
        out,
    )
    return scores
