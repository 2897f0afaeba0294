"""`reviewer gui [SITE_DIR] [--demo] [--user NAME]`: the stack viewer (the same as `python main.py`)."""

from __future__ import annotations

import argparse


def cmd_gui(args: argparse.Namespace) -> int:
    from reviewer.app.main_window import launch

    return launch(args.site_dir, demo=args.demo, db=getattr(args, "db", None), user=getattr(args, "user", None))


def open_package_in_app(file: str, user: str | None, *, screenshot: str | None = None) -> int:
    """A review package in the app (`reviewer package open FILE`, `python main.py FILE`): its record unpacked
    and scanned into it, then the review dock of its annotator (or `user`) on it."""
    from reviewer.app.main_window import launch
    from reviewer.review.package_cli import unpack_for_review

    _bank, user = unpack_for_review(file, user)
    return launch(None, db=file, screenshot=screenshot, user=user)


def cmd_package_open(args: argparse.Namespace) -> int:
    """`reviewer package open FILE`: unpack the package's record, then the review dock on the package."""
    from reviewer.review.package_cli import open_headless

    if args.no_gui:
        return open_headless(args)
    return open_package_in_app(args.file, args.user)


def register(subparsers) -> None:
    p = subparsers.add_parser("gui", help="open the stack viewer (napari)", description=__doc__.splitlines()[0])
    p.add_argument("site_dir", nargs="?", help="site folder to open")
    p.add_argument("--demo", action="store_true", help="open the demo site (generated once into the user cache)")
    p.add_argument("--user", help="who is working (a profile of the store; default: REVIEWER_USER, else asked)")
    p.set_defaults(func=cmd_gui)
    package = subparsers.choices.get("package")
    if package is not None and hasattr(package, "open_parser"):
        package.open_parser.set_defaults(func=cmd_package_open)
