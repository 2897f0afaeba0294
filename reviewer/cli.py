"""`reviewer <verb>`: the headless twin of the GUI. Each package registers its own verbs.

Every verb calls the same Python API the GUI calls; errors derived from ReviewerError are printed as one
clear line (no traceback) and give exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from reviewer.errors import ReviewerError

logger = logging.getLogger(__name__)

#: Modules that define `register(subparsers)`; a module that is missing is skipped.
VERB_MODULES = (
    "reviewer.record.cli",
    "reviewer.bank.cli",
    "reviewer.bank.gen_cli",
    "reviewer.scoring.cli",
    "reviewer.review.cli",
    "reviewer.app.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reviewer", description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="review store (SQLite file); default: user data directory")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    subparsers = parser.add_subparsers(dest="verb", metavar="VERB")
    for name in VERB_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        return int(args.func(args) or 0)
    except ReviewerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
