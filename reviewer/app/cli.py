"""`reviewer gui [SITE_DIR] [--demo]`: the stack viewer (the same as `python main.py`)."""

from __future__ import annotations

import argparse


def cmd_gui(args: argparse.Namespace) -> int:
    from reviewer.app.main_window import launch

    return launch(args.site_dir, demo=args.demo, db=getattr(args, "db", None))


def register(subparsers) -> None:
    p = subparsers.add_parser("gui", help="open the stack viewer (napari)", description=__doc__.splitlines()[0])
    p.add_argument("site_dir", nargs="?", help="site folder to open")
    p.add_argument("--demo", action="store_true", help="open the demo site (generated once into the user cache)")
    p.set_defaults(func=cmd_gui)
