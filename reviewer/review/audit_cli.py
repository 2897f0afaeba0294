"""`reviewer audit BANK_DIR RUNS.jsonl ...` and `reviewer audit apply AUDIT.json ...`: the pilot-run audit.

The first lists the questions whose references look unstable after a pilot model's runs (rules in
assets/review/audit_rules.json) and, with --out, writes DIR/audit.json; the second is the
maintainer's action on it in the review store (send back to adjudication, or remove). Both call
reviewer.review.audit; roles are enforced there.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from reviewer.argtypes import integer
from reviewer.console import echo, run_verb

USAGE = (
    "reviewer audit BANK_DIR RUNS.jsonl [RUNS.jsonl ...] [--out DIR] [--json] [--passes N] [--lenient] [--rules FILE]\n"
    "       reviewer audit apply AUDIT.json [--bank BANK] [--send-back ID[,ID]] [--remove ID[,ID]] "
    "[--rationale TEXT] [--json] --user MAINTAINER"
)
_CHECK_ONLY = ("out", "lenient", "rules")
_APPLY_ONLY = ("store_bank", "send_back", "remove", "rationale")


def _usage_error(message: str) -> Any:
    from reviewer.errors import ReviewerError

    return ReviewerError(f"reviewer audit: {message} (see reviewer audit --help)")


def _check(args: argparse.Namespace) -> int:
    from reviewer.fileio import check_output_folder
    from reviewer.review.audit import AUDIT_FILE, audit, load_rules, table_lines, write_audit

    given = [f"--{k.replace('_', '-').replace('store-', '')}" for k in _APPLY_ONLY if getattr(args, k)]
    if given:
        raise _usage_error(f"{', '.join(given)} go with `reviewer audit apply AUDIT.json`")
    if not args.runs:
        raise _usage_error("give the bank folder and at least one RUNS.jsonl")
    if args.out:
        check_output_folder(args.out, ours={AUDIT_FILE})  # before any work (a folder of others' files too)
    rules = load_rules(args.rules) if args.rules else None
    doc = audit(args.target, args.runs, passes=args.passes, lenient=args.lenient, rules=rules)
    if args.out:
        path = write_audit(doc, args.out)
    if args.json:
        echo(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        echo("\n".join(table_lines(doc)))
    if args.out:
        echo(f"audit written to {path}", err=args.json)
    return 0


def _apply(args: argparse.Namespace) -> int:
    from reviewer.review.audit import apply_audit
    from reviewer.store import Store

    given = [f"--{k}" for k in _CHECK_ONLY if getattr(args, k)]
    if given:
        raise _usage_error(f"{', '.join(given)} go with `reviewer audit BANK_DIR RUNS.jsonl`")
    if len(args.runs) != 1:
        raise _usage_error("`audit apply` takes one AUDIT.json")

    def call(store: Store) -> dict[str, Any]:
        return apply_audit(
            store,
            args.runs[0],
            user=args.user,
            send_back=args.send_back,
            remove=args.remove,
            bank=args.store_bank,
            rationale=args.rationale,
        )

    def say(out: dict[str, Any]) -> list[str]:
        lines = [
            f"{r['item']}: {r['from']} -> flagged (pilot_audit; {r['retracted']} adjudication(s) retracted)"
            for r in out["sent_back"]
        ]
        lines += [
            f"{r['item']}: {r['from']} -> rejected (unstable_reference, decision {r['decision']})"
            for r in out["removed"]
        ]
        return [*lines, f"{len(out['sent_back'])} sent back, {len(out['removed'])} removed in {out['bank']}"]

    return run_verb(lambda: Store(getattr(args, "db", None), create=False), call, as_json=args.json, say=say)


def _run(args: argparse.Namespace) -> int:
    return _apply(args) if args.target == "apply" else _check(args)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `audit` verb (and its `apply` form)."""
    p = subparsers.add_parser(
        "audit",
        help="pilot-run audit: list questions whose references look unstable; `audit apply` acts on it",
        usage=USAGE,
        description="Audit a bank with a pilot model's runs by the rules of assets/review/audit_rules.json, "
        "or (`reviewer audit apply AUDIT.json`) send audited items back to adjudication or remove them. "
        "A bank folder literally named 'apply' is given as ./apply.",
    )
    p.add_argument("target", metavar="BANK_DIR | apply", help="the bank folder the runs answer, or `apply`")
    p.add_argument("runs", metavar="RUNS.jsonl | AUDIT.json", nargs="*", help="run files; with apply: audit.json")
    g = p.add_argument_group("audit")
    g.add_argument("--out", metavar="DIR", help="write DIR/audit.json (schemas/audit.schema.json)")
    g.add_argument("--passes", type=integer(1, 100), default=3, help="passes per question (default 3)")
    g.add_argument("--lenient", action="store_true", help="skip bad run lines and audit the valid rest")
    g.add_argument("--rules", metavar="FILE", help="other audit rules (schemas/audit_rules.schema.json)")
    g = p.add_argument_group("apply (maintainer)")
    g.add_argument(
        "--bank", dest="store_bank", metavar="BANK", help="the bank in the review store (default: the audit's)"
    )
    g.add_argument("--send-back", metavar="ID[,ID]", action="append", help="back to expert adjudication (flagged)")
    g.add_argument("--remove", metavar="ID[,ID]", action="append", help="reject: unstable_reference")
    g.add_argument("--rationale", metavar="TEXT", help="a comment recorded with each action")
    g.add_argument("--user", help="the maintainer (default: REVIEWER_USER)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_run)
