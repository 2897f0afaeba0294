"""`reviewer score BANK_DIR RUNS.jsonl ... --out REPORT_DIR`: score agent runs on a frozen bank.

The verb joins scoring and failures (`--failures` adds a coded failure set's section to the report), so it
lives in failures, above both; the scoring it calls is reviewer.scoring.api.
"""
# ruff: noqa: T201

from __future__ import annotations

import argparse

from reviewer.argtypes import integer
from reviewer.console import echo
from reviewer.scoring import BOOTSTRAP_RESAMPLES


def _summary(scores: dict) -> list[str]:
    k = scores["passes"]
    sub = scores.get("subset")
    on = f" (subset {sub['name']}: {sub['questions']} of {sub['of']} questions)" if sub else ""
    lines = [
        f"bank {scores['bank']['name']} {scores['bank']['version']}{on}: {scores['questions']['scored']} "
        f"computable and recognition questions, {len(scores['models'])} models, {scores['runs']['scored']} runs"
    ]
    width = max([len(m) for m in scores["models"]] + [16])
    lines.append(f"{'model':<{width}}  pass^{k}  95% interval      one run")
    rows = list(scores["models"].items()) + [(n, b) for n, b in scores["baselines"].items()]
    for name, m in rows:
        r = m["record"]
        ci = r["pass3_ci"]
        ci_txt = f"[{ci[0]:5.1f}, {ci[1]:5.1f}]" if ci else "–"
        p3 = "–" if r["pass3"] is None else f"{r['pass3']:6.1f}"
        one = "–" if r["one_run"] is None else f"{r['one_run']:6.1f}"
        lines.append(f"{name:<{width}}  {p3}  {ci_txt:<16}  {one}")
    reg = scores["regression"]
    if not reg.get("estimable"):
        lines.append(f"difficulty regression not estimable: {reg.get('reason')}")
    pr = scores["problems"]
    lines.append(
        f"missing passes {len(pr['missing_passes'])}, invalid answers {len(pr['invalid_answers'])}, "
        f"harness errors {len(pr['errors'])}, bad lines skipped {len(pr['bad_lines'])} (all counted wrong)"
    )
    lines.extend(_fewer_passes(pr["missing_passes"], k, scores["runs"]["scored"]))
    return lines


def _fewer_passes(missing: list[dict], k: int, scored: int) -> list[str]:
    """Runs made with fewer passes than k (`reviewer run --passes 1`, scored with the default 3): every one of the
    `scored` runs is of passes 1..m and every question misses exactly the passes after m; they were all counted
    wrong, with no word of --passes."""
    if not missing:
        return []
    lacking = {r["pass"] for r in missing}
    m = min(lacking) - 1
    units = {(r["model"], r["question"], r["condition"], r["pair"]) for r in missing}
    if m < 1 or lacking != set(range(m + 1, k + 1)) or len(missing) != len(units) * (k - m) or scored != len(units) * m:
        return []
    have = "pass 1" if m == 1 else f"passes 1-{m}"
    lack = f"pass {k} is" if m + 1 == k else f"passes {m + 1}-{k} are"
    return [f"every run here is of {have} and {lack} all missing: scored as pass^{m} they need --passes {m}"]


def _failure_sections(args: argparse.Namespace) -> list:
    """The coded failure set given with --failures, as a report section (read before scoring starts)."""
    if not args.failures:
        return []
    import os

    from reviewer.failures.report import report_section
    from reviewer.failures.sample import load_set
    from reviewer.store import Store

    doc = load_set(args.failures)
    with Store(getattr(args, "db", None)) as store:  # no --db: the default store
        return [report_section(store, doc, user=args.user or os.environ.get("REVIEWER_USER"))]


def _score(args: argparse.Namespace) -> int:
    from contextlib import nullcontext

    from reviewer.progress import StderrProgress
    from reviewer.scoring.api import score
    from reviewer.scoring.options import ScoringOptions

    sections = _failure_sections(args)
    bar = StderrProgress("score") if args.progress else nullcontext()
    with bar:
        options = ScoringOptions(
            passes=args.passes,
            bootstrap=args.bootstrap,
            seed=args.seed,
            lenient=args.lenient,
            models=args.models.split(",") if args.models else None,
            draft=args.draft,
            rescore_from=args.rescore_from,
            subset=args.subset,
        )
        scores = score(
            args.bank,
            args.runs,
            args.out,
            options,
            progress=bar.update if isinstance(bar, StderrProgress) else None,
            report=not args.no_report,
            sections=sections,
        )
    for problem in scores["problems"]["bad_lines"]:
        where = f"{problem['path']}:{problem['line']}" if problem["line"] else problem["path"]
        echo(f"skipped {where}: {problem['field'] + ': ' if problem['field'] else ''}{problem['message']}", err=True)
    if "rescored" in scores:
        r = scores["rescored"]
        echo(
            f"rescored runs made on {r['from']['name']} {r['from']['version']}: {r['unchanged_text_and_fields']} "
            f"question(s) with unchanged text and fields, {len(r['removed_questions'])} removed "
            f"({r['runs_dropped']} runs dropped)",
            err=True,
        )
    echo("\n".join(_summary(scores)))
    echo(f"report written to {args.out}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `score` verb."""
    p = subparsers.add_parser("score", help="score agent runs on a frozen bank and write the report")
    p.add_argument("bank", metavar="BANK_DIR")
    p.add_argument("runs", metavar="RUNS.jsonl", nargs="+")
    p.add_argument("--out", required=True, metavar="REPORT_DIR")
    p.add_argument("--passes", type=integer(1, 100), default=3, help="passes per question (k of pass^k, default 3)")
    p.add_argument(
        "--bootstrap",
        type=integer(0),
        default=BOOTSTRAP_RESAMPLES,
        help=f"bootstrap resamples (default {BOOTSTRAP_RESAMPLES})",
    )
    p.add_argument("--seed", type=integer(0), default=0, help="bootstrap seed (default 0)")
    p.add_argument("--lenient", action="store_true", help="skip bad run lines (listed) and score the valid rest")
    p.add_argument("--models", help="comma-separated list of known models; runs of other models are bad lines")
    p.add_argument("--no-report", action="store_true", help="write scores.json only")
    p.add_argument("--draft", action="store_true", help="score a bank that is not frozen (marked draft in scores.json)")
    p.add_argument(
        "--rescore-from",
        metavar="OLD_BANK_DIR",
        help="the runs were made on OLD_BANK_DIR: score them on BANK_DIR without a rerun, refused unless every "
        "question they answer has the same text and fields (runs on removed questions are dropped)",
    )
    p.add_argument(
        "--failures",
        metavar="SET",
        help="a failure-coding set of these runs (reviewer failures): its Tab. 13 and "
        "C.5 counts join the report (maintainer: --user)",
    )
    p.add_argument(
        "--subset",
        choices=["unanimous", "adjudicated", "corrected", "high-agreement"],
        help="score only the questions the review settled that way (the frozen bank's qc.json); the report says "
        "which subset and its size",
    )
    p.add_argument("--user", help="with --failures: the maintainer (default: REVIEWER_USER)")
    p.add_argument("--progress", action="store_true", help="show progress on stderr")
    p.set_defaults(func=_score)
