"""`reviewer bank validate|import|export`: bank folders on the command line.

A verb lives in the lowest layer holding all it joins: import and export go through the review store
(reviewer.review.banks) and `--stats` through scoring, so these verbs sit in review, above bank and scoring.
"""
# ruff: noqa: T201

from __future__ import annotations

import argparse
import os
from typing import Any

from reviewer.console import echo, run_verb


def _problems(folder: str, ok: str, what: str) -> int:
    """Print every problem of a bank folder (exit 2) or the OK line."""
    from reviewer.bank.io import validate_bank

    found = validate_bank(folder)
    for problem in found:
        echo(problem)
    if found:
        echo(f"error: {len(found)} {what} in {folder}", err=True)
        return 2
    echo(ok)
    return 0


def _validate(args: argparse.Namespace) -> int:
    code = _problems(args.dir, f"{args.dir}: bank is valid", "problem(s)")
    if code == 0 and args.stats:
        for line in balance_summary(args.dir):
            echo(line)
    return code


def balance_summary(folder: str | os.PathLike) -> list[str]:
    """The answer balance of a bank folder (shares of each conclusion per task, the baselines' pass^k)."""
    from reviewer.bank.io import load_bank
    from reviewer.scoring.metrics import answer_balance, balance_lines

    return ["answer balance:", *balance_lines(answer_balance(load_bank(os.fspath(folder))))]


def _import(args: argparse.Namespace) -> int:
    from reviewer.review.banks import import_bank, question_count
    from reviewer.store import Store

    def call(store: Store) -> tuple[str, str, int]:
        name, version = import_bank(store, args.dir, user=args.user or os.environ.get("REVIEWER_USER"))
        return name, version, question_count(store, name, version)

    return run_verb(
        lambda: Store(args.db), call, say=lambda out: f"imported bank {out[0]} {out[1]}: {out[2]} questions"
    )


def _export(args: argparse.Namespace) -> int:
    from reviewer.review.banks import export_bank
    from reviewer.store import Store

    def say(manifest: dict[str, Any]) -> str:
        counts = manifest["counts"]
        return (
            f"exported bank {manifest['name']} {manifest['version']} to {args.dir}: "
            f"{counts['questions']} questions, {counts['sites']} sites, {counts['pairs']} pairs"
            f"{' (frozen)' if manifest['frozen'] else ''}"
        )

    return run_verb(
        lambda: Store(args.db, create=False),
        lambda store: export_bank(
            store, args.name, args.dir, version=args.version, frozen=True if args.frozen else None
        ),
        say=say,
    )


def _verify(args: argparse.Namespace) -> int:
    return _problems(args.dir, f"OK {args.dir}", "mismatch(es)")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `bank` verb with its validate, import and export subcommands."""
    p = subparsers.add_parser("verify", help="check a bank folder's hashes and schemas: OK or every mismatch")
    p.add_argument("dir")
    p.set_defaults(func=_verify)
    bank = subparsers.add_parser("bank", help="check, import and export question banks")
    sub = bank.add_subparsers(dest="bank_verb", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser("validate", help="check every line, the hashes and the cross references of a bank folder")
    p.add_argument("dir")
    p.add_argument(
        "--stats", action="store_true", help="also print the answer balance: conclusions per task, baselines' pass^k"
    )
    p.set_defaults(func=_validate)
    p = sub.add_parser("import", help="load a bank folder into the review store")
    p.add_argument("dir")
    p.add_argument("--user", help="the maintainer importing it (recorded in the audit; default: REVIEWER_USER)")
    p.set_defaults(func=_import)
    p = sub.add_parser("export", help="write a stored bank as a folder")
    p.add_argument("name")
    p.add_argument("dir")
    p.add_argument("--version", help="stored version to export (default: the most recently imported)")
    p.add_argument("--frozen", action="store_true", help="write the bank frozen")
    p.set_defaults(func=_export)
