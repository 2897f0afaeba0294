"""`reviewer generate` and `reviewer alter`: candidate questions and instrument/placebo pairs from a site record."""
# ruff: noqa: T201

from __future__ import annotations

import argparse

from reviewer.argtypes import integer, open_fraction, positive_float
from reviewer.bank.model import TASKS
from reviewer.console import echo


def _generate(args: argparse.Namespace) -> int:
    from reviewer.bank.generate import generate

    store = None
    if args.store:
        from reviewer.store import Store

        store = Store(args.db)
    try:
        report = generate(
            args.site_dir,
            args.out,
            tasks=args.tasks or None,
            seed=args.seed,
            store=store,
            balance=args.balance,
            progress=(lambda f, m: echo(f"{f:5.0%} {m}", err=True)) if args.verbose else None,
        )
    finally:
        if store is not None:
            store.close()
    echo(report.summary())
    from reviewer.bank.cli import balance_summary

    for line in balance_summary(args.out):
        echo(line)
    echo(f"candidates in {args.out} (dropped candidates with reasons in {args.out}/dropped.jsonl)")
    return 0


def _alter(args: argparse.Namespace) -> int:
    from reviewer.bank.alter import REPORT, alter_record

    result = alter_record(
        args.site_dir,
        args.out,
        satellite=args.satellite,
        variable=args.variable,
        scale=args.scale,
        replace_with=args.replace_with,
        date_from=args.date_from,
        date_to=args.date_to,
        drop_clear=args.drop_clear,
        seed=args.seed,
        question=args.question,
        bank=args.bank,
        dry_run=args.dry_run,
    )
    for line in result.lines():
        echo(line)
    if args.dry_run and result.bank:
        echo("dry run: nothing added to the bank")
    echo(f"report: {args.out}/{REPORT}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("generate", help="generate candidate questions of a site (templates x reference methods)")
    p.add_argument("site_dir")
    p.add_argument("--tasks", nargs="+", choices=TASKS, help="only these tasks (default: all ten)")
    p.add_argument("--seed", type=integer(0), default=0, help="seed of phrasing choice and option order")
    p.add_argument("--out", required=True, help="candidates folder (a bank folder plus dropped.jsonl)")
    p.add_argument("--store", action="store_true", help="also import the candidates into the review store")
    p.add_argument(
        "--balance",
        type=positive_float,
        metavar="RATIO",
        help="keep no conclusion of a template more than RATIO times as often as the next (e.g. 1.5; surplus "
        "drawn with the seed, listed in dropped.jsonl); default: keep every candidate",
    )
    p.set_defaults(func=_generate)

    p = subparsers.add_parser("alter", help="write an altered copy of a record (instrument or placebo pair)")
    p.add_argument("site_dir")
    p.add_argument("--out", required=True)
    p.add_argument("--satellite", help="terra, aqua, landsat5, landsat7, landsat8, landsat9, snpp, sentinel2")
    p.add_argument("--variable", default="sr", help="ndvi, sr (all reflectance bands), snow, ...")
    p.add_argument(
        "--scale", type=positive_float, help="multiply the variable's physical values by this factor (finite, > 0)"
    )
    p.add_argument("--replace-with", dest="replace_with", help="satellite whose scenes replace the altered ones")
    p.add_argument("--from", dest="date_from", help="first altered date (YYYY or YYYY-MM-DD)")
    p.add_argument("--to", dest="date_to", help="last altered date (YYYY or YYYY-MM-DD)")
    p.add_argument(
        "--drop-clear", dest="drop_clear", type=open_fraction, help="placebo: drop this fraction of clear scenes"
    )
    p.add_argument("--seed", type=integer(0), default=0)
    p.add_argument(
        "--question",
        help="question id the pair is for (default: every bank question whose reference "
        "methods rely on the altered satellite)",
    )
    p.add_argument(
        "--bank", help="candidates folder: its questions are checked and kept pairs added to its pairs.jsonl"
    )
    p.add_argument(
        "--dry-run",
        dest="dry_run",
        action="store_true",
        help="run the checks and write the report, but add nothing to the bank",
    )
    p.set_defaults(func=_alter)
