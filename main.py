"""Launch EarthRecord Reviewer: python main.py [SITE_DIR | --demo] [--db PATH] [--user NAME]."""

from __future__ import annotations

import argparse
import logging
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="main.py", description=__doc__.splitlines()[0])
    parser.add_argument("site_dir", nargs="?", help="site folder to open")
    parser.add_argument("--demo", action="store_true", help="open the demo site (generated once into the user cache)")
    parser.add_argument("--db", help="review store (SQLite file); default: user data directory")
    parser.add_argument("--user", help="who is working (a profile of the store; default: REVIEWER_USER, else asked)")
    parser.add_argument("--screenshot", metavar="PNG", help="save the window once the site is shown, then quit")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    from reviewer.app.main_window import launch

    return launch(args.site_dir, demo=args.demo, db=args.db, screenshot=args.screenshot, user=args.user)


if __name__ == "__main__":
    sys.exit(main())
