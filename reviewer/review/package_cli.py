"""`reviewer package export | import`: review packages for annotators on other machines.

The annotator works a package with the review verbs: `reviewer review next|decide|undo|queue|status ... --package
FILE`. The package's signing key is never printed (its key id is).
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from reviewer.console import echo, run_verb


def _store(args: argparse.Namespace) -> Any:
    from reviewer.store import Store

    return Store(getattr(args, "db", None), create=False)  # a package is made of a team store, never of a new one


def _export(args: argparse.Namespace) -> int:
    from reviewer.review.packages import export_package

    def call(store: Any) -> dict[str, Any]:
        return export_package(
            store,
            args.bank,
            annotator=args.annotator,
            out=args.out,
            user=args.user,
            with_record=args.with_record,
            progress=(lambda f, m: echo(f"{f:5.0%} {m}", err=True)) if args.verbose else None,
        )

    def say(out: dict[str, Any]) -> list[str]:
        lines = [
            f"wrote {out['file']}: {out['items']} open item(s) of {out['bank']} for {out['annotator']}, "
            f"{out['sites']} site record(s) (package {out['package']}, key {out['key_id']})"
        ]
        if out["record_files"]:
            lines.append(
                f"with the record: {out['record_files']} file(s), {out['record_bytes'] / 1e6:.1f} MB, "
                "clipped to the sites"
            )
        where = f"--package {shlex.quote(out['file'])} --user {out['annotator']}"
        return [*lines, f"to work it: reviewer review next {out['bank']} {where}"]

    return run_verb(lambda: _store(args), call, as_json=args.json, say=say)


def _import(args: argparse.Namespace) -> int:
    from reviewer.review.packages import import_package

    def say(out: dict[str, Any]) -> list[str]:
        new = out["merged"] + out["retracted"] + len(out["conflicts"])
        head = f"package {out['package']} ({out['file']}) from {out['annotator']}, bank {out['bank']}: "
        earlier = out["earlier_conflicts"]
        if not new and earlier:  # read before, not all imported: "were imported before" and a refusal contradicted
            n = out["decisions"]
            lines = [
                head + f"nothing new: all {n} decision(s) were read by an earlier import ({n - earlier} merged, "
                f"{earlier} refused as conflicts)"
            ]
        elif not new:
            lines = [head + f"nothing new (all {out['decisions']} decision(s) were imported before)"]
        else:
            lines = [
                head + f"merged {out['merged']} decision(s) and {out['retracted']} undo(s), "
                f"{len(out['conflicts'])} conflict(s), {out['already']} imported before"
            ]
        for c in out["conflicts"]:
            lines.append(f"conflict: {c['item']} v{c['version']} ({c['verdict']}): {c['reason']}; not merged")
        if earlier and new:
            lines.append(f"{out['earlier_conflicts']} decision(s) were refused as conflicts by an earlier import")
        if out["confidence_unsigned"]:
            lines.append(
                f"{out['confidence_unsigned']} decision(s) merged without their confidence: the package was made by an "
                "earlier version whose signatures do not cover it"
            )
        return lines

    return run_verb(
        lambda: _store(args), lambda store: import_package(store, args.file, user=args.user), as_json=args.json, say=say
    )


def unpack_for_review(file: str, user: str | None) -> tuple[str, str]:
    """Unpack the record a package carries (once, scanned into the package): (bank, user to work as)."""
    from reviewer.review.packages import open_package, package_record, unpack_record

    with open_package(file) as package:
        folders = unpack_record(package, file)
        record = package_record(package)
    for folder in folders:
        echo(f"site record: {folder}", err=True)
    return record.bank, user or record.annotator


def open_headless(args: argparse.Namespace) -> int:
    """Headless: unpack the record and say how to work the package (the app layer opens the review dock)."""
    bank, user = unpack_for_review(args.file, args.user)
    echo(f"ready: reviewer review next {bank} --package {shlex.quote(str(args.file))} --user {user}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `package` verbs."""
    package = subparsers.add_parser(
        "package", help="review packages: an annotator's open items for another machine, decisions merged back"
    )
    sub = package.add_subparsers(dest="package_verb", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser("export", help="maintainer: write one annotator's open items of a bank as one package file")
    p.add_argument("bank")
    p.add_argument("--annotator", required=True, help="whose assigned, still-open items go into the package")
    p.add_argument("--out", required=True, metavar="FILE", help="the package file to write (must not exist)")
    p.add_argument("--user", help="the maintainer (default: REVIEWER_USER)")
    p.add_argument(
        "--with-record",
        action="store_true",
        help="carry the needed scenes' files, clipped to the site, so the package is self-contained",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="show the clipping's progress")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_export)
    p = sub.add_parser("open", help="annotator: unpack a package's record (once) and open the review dock on it")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--user", help="who is working (default: the package's annotator)")
    p.add_argument("--no-gui", action="store_true", help="only unpack and scan the record; print the next command")
    p.set_defaults(func=open_headless)
    package.open_parser = p  # reviewer.app.cli makes it open the review dock (the core does not import Qt)
    p = sub.add_parser("import", help="maintainer: merge a package's decisions (idempotent; conflicts are listed)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--user", help="the maintainer (default: REVIEWER_USER)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_import)
