"""`reviewer <verb>`: the headless twin of the GUI. Each package registers its own verbs.

Every verb calls the same Python API the GUI calls. Every error is printed as one `error:` line naming
the file, line or field (no traceback) and gives exit status 2: a ReviewerError, an OSError ('disk full:
PATH', 'permission denied: PATH'), input nested too deeply, a bad argument. An unexpected exception (a
bug) is one line too; `-v` prints its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from reviewer import __version__
from reviewer.errors import ReviewerError

logger = logging.getLogger(__name__)

#: Modules that define `register(subparsers)`; a module that is missing is skipped.
VERB_MODULES = (
    "reviewer.record.cli",
    "reviewer.review.bank_cli",
    "reviewer.review.gen_cli",
    "reviewer.failures.score_cli",
    "reviewer.review.cli",
    "reviewer.review.audit_cli",
    "reviewer.drafting.cli",
    "reviewer.runs.cli",
    "reviewer.failures.cli",
    "reviewer.app.cli",
)

#: The module that registers each verb, so that `reviewer VERB ...` imports and builds only that verb's
#: parser (a verb starts in a fraction of the time of building all of them). A verb missing here still
#: works (every module is registered then); test_cli_imports checks this table against each register().
VERBS = {
    **dict.fromkeys(("scan", "site", "render", "demo", "demo-site"), "reviewer.record.cli"),
    **dict.fromkeys(("verify", "bank"), "reviewer.review.bank_cli"),
    **dict.fromkeys(("generate", "alter"), "reviewer.review.gen_cli"),
    "score": "reviewer.failures.score_cli",
    **dict.fromkeys(("users", "freeze", "review", "package"), "reviewer.review.cli"),
    "audit": "reviewer.review.audit_cli",
    "draft": "reviewer.drafting.cli",
    "run": "reviewer.runs.cli",
    "failures": "reviewer.failures.cli",
    "gui": "reviewer.app.cli",
}


class _Parser(argparse.ArgumentParser):
    """An argument error is one line on stderr with exit status 2 (argparse prints the usage first)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"error: {self.prog}: {' '.join(message.splitlines())} (see {self.prog} --help)\n")


def _one_line(text: str) -> str:
    return " ".join(str(text).split("\n")).replace("\r", " ")


def _report(exc: BaseException, verbose: bool) -> int:
    """The one `error:` line for an exception that reached main; the traceback only with -v for a bug."""
    from reviewer.fileio import os_error_text

    if isinstance(exc, ReviewerError):
        text = str(exc)
    else:
        if verbose:
            traceback.print_exception(exc, file=sys.stderr)
        if isinstance(exc, OSError):
            text = os_error_text(exc)
        elif isinstance(exc, RecursionError):
            text = "input nested too deeply to read (recursion limit reached)"
        elif isinstance(exc, MemoryError):
            text = "out of memory"
        elif isinstance(exc, UnicodeError):
            text = f"text is not valid UTF-8 ({exc})"
        else:
            hint = "" if verbose else "; run with -v for the traceback"
            text = f"internal error ({type(exc).__name__}: {exc}){hint}"
    print(f"error: {_one_line(text)}", file=sys.stderr)
    return 2


def _global_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--version", action="version", version=f"reviewer (EarthRecord Reviewer) {__version__}")
    parser.add_argument("--db", help="review store (SQLite file); default: user data directory")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log debug messages (and GDAL's), show a bug's traceback"
    )
    return parser


def verb_of(argv: Sequence[str]) -> str | None:
    """The verb asked for: the first word that is neither a global option nor --db's value (a verb's own
    options, e.g. `review decide --version N`, come after it and are not looked at), or None."""
    words = iter(argv)
    for word in words:
        if word == "--db":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The parser of every verb, or with `verb` (one in VERBS) of that verb only."""
    parser = _global_options(_Parser(prog="reviewer", description=__doc__.splitlines()[0]))
    subparsers = parser.add_subparsers(dest="verb", metavar="VERB")
    for name in (VERBS[verb],) if verb in VERBS else VERB_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(subparsers)
    _db_after_verb(parser)
    return parser


def _db_after_verb(parser: argparse.ArgumentParser) -> None:
    """`--db PATH` after the verb too (`reviewer review status BANK --db store.sqlite`, as the README says every verb
    takes it: refused there as an unrecognised argument before). Each verb's parser takes it without a default, so
    the one before the verb still counts when it is not given again."""
    for action in parser._actions:  # noqa: SLF001 - argparse has no public walk of its subparsers
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in set(action.choices.values()):
                if not any("--db" in a.option_strings for a in sub._actions):  # noqa: SLF001
                    sub.add_argument("--db", default=argparse.SUPPRESS, help="review store (SQLite file)")
                _db_after_verb(sub)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the run is, so that it ends as Ctrl-C does."""


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """A closed terminal, `kill` or a batch system's time limit (SIGTERM) stops a run the way Ctrl-C does: its
    finally blocks and exit handlers run, so a generation's spill folder (gigabytes on a whole scene) and any
    temporary file are removed instead of left behind. The previous handler is put back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(verb_of(argv))
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    # GDAL/PROJ messages reach logging through rasterio's logger; the tool names the real cause itself
    logging.getLogger("rasterio").setLevel(logging.DEBUG if args.verbose else logging.CRITICAL)
    # numpy's RuntimeWarnings (an all-NaN median of a cloudy pixel...) and other library warnings go to
    # logging too, shown with -v only: never source lines on a user's terminal
    logging.captureWarnings(True)
    logging.getLogger("py.warnings").setLevel(logging.DEBUG if args.verbose else logging.CRITICAL)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        with _terminate_as_interrupt():
            return int(args.func(args) or 0)
    except BrokenPipeError:
        return 0
    except Terminated:
        print("terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place that turns any error into one line
        return _report(exc, args.verbose)


if __name__ == "__main__":
    sys.exit(main())
