"""Launch EarthRecord Reviewer: python main.py [SITE_DIR | PACKAGE | --demo | --failures SET] [--db PATH] [--user NAME]."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="main.py", description=__doc__.splitlines()[0])
    parser.add_argument("site_dir", nargs="?", help="site folder to open, or a review package file to work")
    parser.add_argument("--demo", action="store_true", help="open the demo site (generated once into the user cache)")
    parser.add_argument("--db", help="review store (SQLite file); default: user data directory")
    parser.add_argument("--user", help="who is working (a profile of the store; default: REVIEWER_USER, else asked)")
    parser.add_argument(
        "--failures", metavar="SET", help="open the failure-coding dock on a coding set (reviewer failures sample)"
    )
    parser.add_argument("--screenshot", metavar="PNG", help="save the window once the site is shown, then quit")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    args = parser.parse_args(argv)
    # the tool's own progress lines; other libraries' (PyOpenGL's "No OpenGL_accelerate module loaded", ...) with -v only
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("reviewer").setLevel(logging.DEBUG if args.verbose else logging.INFO)
    # the record's per-scene facts ("10436 values of red outside the valid range were masked", a line per scene read)
    # with -v only, as the CLI shows them
    logging.getLogger("reviewer.record").setLevel(logging.DEBUG if args.verbose else logging.WARNING)
    from reviewer.errors import ReviewerError
    from reviewer.fileio import os_error_text

    try:
        return _open(args)
    except (ReviewerError, OSError) as exc:  # a bad set or package, a site that cannot open under --screenshot
        print(f"error: {exc if isinstance(exc, ReviewerError) else os_error_text(exc)}", file=sys.stderr)  # noqa: T201
        return 2


def _open(args: argparse.Namespace) -> int:
    """The window on what was asked: a failure-coding set, a review package, a site or the demo."""
    if args.failures:  # the coding dock on a set; the question's evidence opens its site
        from reviewer.app.qt_failures import launch_failures

        return launch_failures(args.failures, db=args.db, user=args.user, screenshot=args.screenshot)
    if args.site_dir and Path(args.site_dir).is_file():  # a review package: its record unpacked, the dock on it
        from reviewer.app.cli import open_package_in_app

        return open_package_in_app(args.site_dir, args.user, screenshot=args.screenshot)
    from reviewer.app.main_window import launch

    return launch(args.site_dir, demo=args.demo, db=args.db, screenshot=args.screenshot, user=args.user)


if __name__ == "__main__":
    sys.exit(main())
