"""`reviewer failures ...`: sample wrong runs, code the first wrong step and the sensor reports, report.

Every verb calls reviewer.failures, the same functions a coding dock calls. Only the standard library is imported
here, so building the parser stays light.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from reviewer.argtypes import integer
from reviewer.console import echo, run_verb


def _store(args: argparse.Namespace) -> Any:
    from reviewer.store import Store

    return Store(getattr(args, "db", None), create=False)  # coding needs the store's users: never a new store


def _sample(args: argparse.Namespace) -> int:
    from reviewer.failures.sample import build_set, write_set

    doc = build_set(args.runs, args.bank, per_model=args.per_model, seed=args.seed, lenient=args.lenient)
    write_set(doc, args.out)
    p = doc["pools"]
    echo(
        f"wrong runs on computable and recognition questions with the record: {p['wrong_runs']} "
        f"(left out: {p['unwarranted_abstentions']} unwarranted abstentions, {p['harness_errors']} harness errors)"
    )
    for model, n in p["wrong_runs_by_model"].items():
        took = sum(1 for r in doc["runs"] if r["part"] == "steps" and r["model"] == model)
        echo(f"  {model}: {n} wrong runs, {took} sampled")
    echo(
        f"instrument pairs: {p['moved_wrong_runs']} wrong runs in {p['moved_cases']} cases that moved, "
        f"{p['beyond_runs']} runs in {p['beyond_cases']} cases beyond both"
        + (f" (left out: {p['pair_harness_errors']} harness errors)" if p["pair_harness_errors"] else "")
    )
    echo(
        f"coding set {doc['id']}: {p['sampled']} step runs + {p['moved_wrong_runs'] + p['beyond_runs']} pair runs "
        f"written to {args.out}"
    )
    return 0


def _code(args: argparse.Namespace) -> int:
    from reviewer.failures.coding import code_run
    from reviewer.failures.sample import load_set

    doc = load_set(args.set)
    return run_verb(
        lambda: _store(args),
        lambda store: code_run(store, doc, args.run, args.code, user=args.user, note=args.note),
        say=lambda row: f"saved {row['run']}: {row['code']}" + (f" (was {row['replaces']})" if row["replaces"] else ""),
    )


def _show(args: argparse.Namespace) -> int:
    from reviewer.failures.coding import run_view, view_text
    from reviewer.failures.sample import load_set

    doc = load_set(args.set)
    import os

    from reviewer.review.ledger import USER_ENV

    user = args.user or os.environ.get(USER_ENV)
    if user:
        with _store(args) as store:
            view = run_view(doc, args.run, store=store, user=user)
    else:
        view = run_view(doc, args.run)
    echo(json.dumps(view, ensure_ascii=False, indent=2) if args.json else view_text(view))
    return 0


def _list(args: argparse.Namespace) -> int:
    from reviewer.failures.coding import queue
    from reviewer.failures.sample import load_set
    from reviewer.review.ledger import user_name

    doc = load_set(args.set)
    with _store(args) as store:
        rows = queue(store, doc, user_name(args.user), part=args.part)
    for r in rows:
        if not (args.todo and r["my_code"]):
            echo(f"{r['run']}  {r['model']}  {r['question']}  {r['my_code'] or 'to code'}")
    done = sum(1 for r in rows if r["my_code"])
    echo(f"{done} of {len(rows)} coded by you", err=True)
    return 0


def _precode(args: argparse.Namespace) -> int:
    from reviewer.drafting.config import make_client
    from reviewer.failures.precode import precode_set
    from reviewer.failures.sample import load_set

    doc = load_set(args.set)
    with _store(args) as store:
        from reviewer.failures.codebook import codebook
        from reviewer.failures.coding import require_role

        require_role(store, args.user, codebook().precoders, "pre-code failure steps")  # before the key is asked for
        summary = precode_set(
            store, doc, make_client(), user=args.user, model=args.model, concurrency=args.concurrency, redo=args.redo
        )
    for o in summary["runs"]:
        if o["status"] in ("invalid", "failed"):
            echo(f"{o['run']}: {o['status']}: {o['message']}", err=True)
    echo(
        f"{summary['set']} pre-coded by {summary['model']}: {summary['precoded']} coded, {summary['skipped']} "
        f"skipped (coded already), {summary['invalid']} invalid replies, {summary['failed']} failed, "
        f"{summary['not_done']} not done"
    )
    if summary["stopped"]:
        echo(f"stopped: {summary['stopped']}", err=True)
        return 2
    return 0


def _check(args: argparse.Namespace) -> int:
    from reviewer.failures.check import draw_check
    from reviewer.failures.sample import load_set

    doc = load_set(args.set)
    with _store(args) as store:
        if args.draw:
            rows = draw_check(
                store, doc, args.part, seed=args.seed, user=args.user, uncertain=args.uncertain, per_code=args.per_code
            )
            n_unsure = sum(r["reason"] == "uncertain" for r in rows)
            echo(
                f"check sample of the {args.part} part: {len(rows)} runs ({n_unsure} marked uncertain by the LLM, "
                f"{len(rows) - n_unsure} by code from the rest)"
            )
            return 0
        from reviewer.failures.check import check_queue
        from reviewer.review.ledger import user_name

        for r in check_queue(store, doc, user_name(args.user), args.part):  # the dock's check mode lists the same
            echo(f"{r['run']}  {'coded ' + r['my_code'] if r['my_code'] else 'to code'}")
    return 0


def _agreement(args: argparse.Namespace) -> int:
    from reviewer.failures.check import agreement
    from reviewer.failures.sample import load_set

    doc = load_set(args.set)

    def say(a: dict[str, Any]) -> list[str]:
        pct = "–" if a["percent"] is None else f"{a['percent']:.1f}%"
        kappa = f"{a['kappa']:.3f}" if a["kappa"] is not None else f"– ({a['kappa_note']})"
        width = max(len(c) for c in a["codes"])
        lines = [
            f"{a['part']}: LLM and experts agree on {a['agree']} of {a['checked']} checked runs ({pct}); "
            f"Cohen's kappa {kappa}; {len(a['not_coded_yet'])} check runs not coded yet",
            f"{'LLM/expert':<{width}}  " + " ".join(f"{c[:6]:>6}" for c in a["codes"]),
        ]
        for code, row in zip(a["codes"], a["table"], strict=True):
            lines.append(f"{code:<{width}}  " + " ".join(f"{v:>6}" for v in row))
        for d in a["disagreements"]:
            lines.append(
                f"disagree {d['run']} ({d['model']}): LLM {d['llm']}, {d['coder']} {d['expert']}"
                + (f"; quote: {d['quote']}" if d["quote"] else "")
                + (f"; note: {d['note']}" if d["note"] else "")
            )
        return lines

    return run_verb(
        lambda: _store(args), lambda store: agreement(store, doc, args.part, user=args.user), as_json=args.json, say=say
    )


def _report(args: argparse.Namespace) -> int:
    from reviewer.failures.report import write_report
    from reviewer.failures.sample import load_set

    doc = load_set(args.set)

    def say(r: dict[str, Any]) -> list[str]:
        n13, n5 = r["table13_totals"], r["c5_totals"]
        return [
            f"leading models: {', '.join(r['leading']) or '(none)'}",
            f"Tab. 13: {n13['lead']} lead + {n13['other']} other coded step runs; C.5: {n5['moved']} moved + "
            f"{n5['beyond']} beyond coded pair runs; not coded yet: {r['not_coded']['steps']} step, "
            f"{r['not_coded']['pairs']} pair runs",
            f"report written to {args.out}",
        ]

    return run_verb(
        lambda: _store(args),
        lambda store: write_report(store, doc, args.out, user=args.user, split=args.leading),
        say=say,
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `failures` verb and its subcommands."""
    top = subparsers.add_parser("failures", help="failure-step coding of sampled wrong runs (seed 001 Tab. 13, C.5)")
    sub = top.add_subparsers(dest="failures_verb", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("sample", help="draw the coding set from a scoring run's runs")
    p.add_argument("runs", metavar="RUNS_OR_SCORES", nargs="+", help="run files (JSONL), or a scoring report folder")
    p.add_argument("bank", metavar="BANK")
    p.add_argument("--per-model", type=integer(1), default=12, help="wrong runs drawn per model (default 12)")
    p.add_argument("--seed", type=integer(0), default=0, help="the draw's seed (default 0)")
    p.add_argument("--lenient", action="store_true", help="skip bad run lines as `reviewer score --lenient` does")
    p.add_argument("--out", required=True, metavar="SET", help="the coding set file to write (JSON)")
    p.set_defaults(func=_sample)

    p = sub.add_parser("code", help="code one run (saved at once; a second code is a correction)")
    p.add_argument("set", metavar="SET")
    p.add_argument("--run", required=True, metavar="ID", help="the run's id in the set (s001..., p001...)")
    p.add_argument("--code", required=True, help="a code of the run's scheme, or its key")
    p.add_argument("--note", help="a note kept with the code")
    p.add_argument("--user", help="the expert coding (default: REVIEWER_USER)")
    p.set_defaults(func=_code)

    p = sub.add_parser("show", help="what the coder reads for one run (never the LLM's code)")
    p.add_argument("set", metavar="SET")
    p.add_argument("--run", required=True, metavar="ID")
    p.add_argument("--user", help="show this user's own code in force too (default: REVIEWER_USER, if set)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_show)

    p = sub.add_parser("list", help="the set's runs with your code in force (or 'to code')")
    p.add_argument("set", metavar="SET")
    p.add_argument("--part", choices=["steps", "pairs"])
    p.add_argument("--todo", action="store_true", help="only the runs you have not coded")
    p.add_argument("--user", help="who is working (default: REVIEWER_USER)")
    p.set_defaults(func=_list)

    p = sub.add_parser("precode", help="LLM pre-coding of every run (code, quote, uncertain flag; resumable)")
    p.add_argument("set", metavar="SET")
    p.add_argument("--model", help="the model (default: assets/drafting/settings.json)")
    p.add_argument("--concurrency", type=integer(1, 64), help="requests in flight (default: the drafting settings)")
    p.add_argument("--redo", action="store_true", help="pre-code runs that have an LLM code already (a new row)")
    p.add_argument("--user", help="the maintainer (default: REVIEWER_USER)")
    p.set_defaults(func=_precode)

    p = sub.add_parser("check", help="draw the expert check sample (--draw), or list it for an expert (blind)")
    p.add_argument("set", metavar="SET")
    p.add_argument("--part", choices=["steps", "pairs"], default="steps")
    p.add_argument("--draw", action="store_true", help="draw and keep the sample (maintainer)")
    p.add_argument("--seed", type=integer(0), default=0)
    p.add_argument("--uncertain", type=integer(0), help="draw this many of the uncertain runs (default: all)")
    p.add_argument("--per-code", type=integer(0), default=2, help="runs per code from the rest (default 2)")
    p.add_argument("--user", help="who is working (default: REVIEWER_USER)")
    p.set_defaults(func=_check)

    p = sub.add_parser("agreement", help="LLM vs expert on the check sample: percent, Cohen's kappa, disagreements")
    p.add_argument("set", metavar="SET")
    p.add_argument("--part", choices=["steps", "pairs"], default="steps")
    p.add_argument("--json", action="store_true")
    p.add_argument("--user", help="the maintainer (default: REVIEWER_USER)")
    p.set_defaults(func=_agreement)

    p = sub.add_parser("report", help="Tab. 13, the C.5 counts, a CSV of every coded run and the figure")
    p.add_argument("set", metavar="SET")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument(
        "--leading",
        help="the leading models: a number (the top N by pass^k) or comma-separated names (default: the top half)",
    )
    p.add_argument("--user", help="the maintainer (default: REVIEWER_USER)")
    p.set_defaults(func=_report)
