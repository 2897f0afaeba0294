"""`reviewer draft BANK`: AI-drafted visual interpretations of a bank's items, each stored as a new item version.

A progress bar on stderr, one line per item that was not drafted, a summary; Ctrl-C cancels (drafts finished so
far are kept; run again to resume). Exit status 0 when every chosen item is drafted or skipped, 1 when some reply
did not validate or an item failed, 2 when the job stopped (no key, key refused, offline) or on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any

from reviewer.console import echo
from reviewer.errors import DraftingError


def _http_client() -> Any:
    """The HTTP client the SDK uses (None: its own); tests put a mock transport here."""
    return None


def _bar(done: int, total: int, message: str) -> None:
    width = 30
    filled = int(width * done / total) if total else width
    text = f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {message[:60]:<60}"
    sys.stderr.write(text)
    sys.stderr.flush()


def _sites(values: list[str] | None) -> dict[str, str]:
    """--site DIR (repeatable): the folder of a site record, by the id in its site.json."""
    from reviewer.record.site import load_site

    out = {}
    for folder in values or []:
        out[load_site(folder).id] = folder
    return out


def _run(args: argparse.Namespace) -> int:
    from reviewer.drafting.config import make_client
    from reviewer.drafting.run import draft_bank, draft_bank_batch
    from reviewer.store import Store

    if args.second_opinion and args.batch:
        raise DraftingError("--second-opinion works through the Messages API, not --batch")
    folders = _sites(args.site)
    client = make_client(http_client=_http_client())  # no key: one error line, before anything is read
    cancel = threading.Event()
    progress = None if args.json or args.no_progress else _bar
    common = dict(
        user=args.user,
        which=args.items,
        model=args.model,
        redraft=args.redraft,
        site_folders=folders,
        progress=progress,
        cancel=cancel,
    )
    with Store(args.db) if args.db else Store() as store:
        try:
            if args.batch:
                summary = draft_bank_batch(store, args.bank, client, poll_s=args.poll, **common)
            else:
                summary = draft_bank(
                    store, args.bank, client, concurrency=args.concurrency, second_opinion=args.second_opinion, **common
                )
        except KeyboardInterrupt:
            if progress:
                sys.stderr.write("\n")
            echo("cancelled: the drafts finished so far are stored; run the same command again to resume", err=True)
            return 130
    if progress:
        sys.stderr.write("\n")
    doc = summary.to_json()
    if args.json:
        echo(json.dumps(doc, ensure_ascii=False, indent=2))
    else:
        for o in summary.outcomes:
            if o.status not in ("drafted", "skipped") or args.verbose_items:
                echo(f"{o.key}: {o.status}" + (f" ({o.message})" if o.message else ""))
        batch = f" through batch {doc['batch_id']}" if doc["batch_id"] else ""
        echo(
            f"{args.bank}: drafted {doc['drafted']}{batch}, skipped {doc['skipped']}, invalid {doc['invalid']}, "
            f"failed {doc['failed']}, not done {doc['not_done']}; estimated cost ${doc['cost_usd']:.4f} "
            f"in {doc['seconds']:.1f} s" + ("; cancelled, run again to resume" if doc["cancelled"] else "")
        )
    if summary.stopped:
        raise DraftingError(summary.stopped)
    return 1 if doc["invalid"] or doc["failed"] else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `draft` verb."""
    p = subparsers.add_parser(
        "draft",
        help="AI-drafted visual interpretations of a bank's items (anthropic SDK), stored as new item versions",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("bank", metavar="BANK", help="the bank's name in the review store")
    p.add_argument(
        "--items", nargs="+", metavar="visual|all|ID", help="visual-reference items (default), all items, or item ids"
    )
    p.add_argument("--model", help="model name (default: assets/drafting/settings.json)")
    p.add_argument("--concurrency", type=int, metavar="N", help="requests in flight (default: settings)")
    p.add_argument("--batch", action="store_true", help="through the Message Batches API (half price; polls)")
    p.add_argument("--poll", type=float, metavar="S", help="seconds between batch polls (default: settings)")
    p.add_argument("--redraft", action="store_true", help="draft items that have a draft again (a new version)")
    p.add_argument(
        "--second-opinion",
        action="store_true",
        help="a draft for any item (e.g. a computed reference in doubt), kept beside it in its log, not as a version",
    )
    p.add_argument("--site", action="append", metavar="DIR", help="a site record folder (default: the store's scans)")
    p.add_argument("--user", help="the maintainer (default: REVIEWER_USER)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--verbose-items", action="store_true", help="one line for every item, drafted ones too")
    p.set_defaults(func=_run)
