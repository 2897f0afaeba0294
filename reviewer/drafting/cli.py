"""`reviewer draft BANK`: AI-drafted visual interpretations of a bank's items, each stored as a new item version.

A progress bar on stderr, one line per item that was not drafted, a summary; Ctrl-C cancels (drafts finished so
far are kept; run again to resume). Exit status 0 when every chosen item is drafted or skipped, 1 when some reply
did not validate or an item failed, 2 when the job stopped (no key, key refused, offline) or on bad input.

With --progress-json (how the app's Drafts action runs this same job in a process of its own, so the renders never
hold the UI's interpreter): one JSON object a line on stdout, {"progress": {"done", "total", "message"}} for each
item and {"summary": {...}} at the end; a line `cancel` on stdin (or SIGTERM) cancels as Ctrl-C does; the process
lowers its own CPU priority (the UI that started it comes first).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from reviewer.console import echo
from reviewer.errors import DraftingError


def _http_client() -> Any:
    """The HTTP client the SDK uses (None: its own); tests put a mock transport here."""
    return None


def _json_line(doc: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _json_progress(done: int, total: int, message: str) -> None:
    _json_line({"progress": {"done": done, "total": total, "message": message}})


def _listen_for_cancel(cancel: threading.Event) -> None:
    """--progress-json: a `cancel` line on stdin or SIGTERM sets the job's cancel event (the drafts in flight
    finish and are stored, nothing more is sent: the next run resumes). End of stdin is not a cancel."""

    def read() -> None:
        for line in sys.stdin:
            if line.strip() == "cancel":
                cancel.set()
                return

    threading.Thread(target=read, name="draft-cancel", daemon=True).start()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: cancel.set())


def _yield_cpu() -> None:
    """--progress-json (the app's job): a lower CPU priority, so the renders never take the CPU from the UI that
    started them (where the OS has priorities; elsewhere nothing changes)."""
    import os

    try:
        os.nice(10)
    except (AttributeError, OSError):
        pass


def command(
    bank: str, *, db: str, user: str, which: Sequence[str], concurrency: int, python: str | None = None
) -> list[str]:
    """The command line of this verb as the app runs it in a process of its own (--progress-json)."""
    exe = python or sys.executable
    return [exe, "-m", "reviewer.cli", "--db", str(db), "draft", bank, "--user", user, "--items", *which,
            "--concurrency", str(concurrency), "--progress-json"]  # fmt: skip


def _sites(values: list[str] | None) -> dict[str, str]:
    """--site DIR (repeatable): the folder of a site record, by the id in its site.json."""
    from reviewer.record.site import load_site

    out = {}
    for folder in values or []:
        out[load_site(folder).id] = folder
    return out


def _run(args: argparse.Namespace) -> int:
    from reviewer.drafting.config import make_client
    from reviewer.drafting.options import DraftOptions
    from reviewer.drafting.run import draft_bank, draft_bank_batch
    from reviewer.store import Store

    options = DraftOptions(
        which=tuple(args.items or ()),
        model=args.model,
        concurrency=args.concurrency,
        redraft=args.redraft,
        second_opinion=args.second_opinion,
        site_folders=_sites(args.site),
        poll_s=args.poll,
    )
    if args.batch:
        options.check_batch()
    client = make_client(http_client=_http_client())  # no key: one error line, before anything is read
    cancel = threading.Event()
    from contextlib import nullcontext

    from reviewer.progress import StderrProgress

    bar = nullcontext() if args.json or args.no_progress or args.progress_json else StderrProgress("drafts")
    progress = bar.count if isinstance(bar, StderrProgress) else None
    if args.progress_json:
        progress = _json_progress
        _listen_for_cancel(cancel)
        _yield_cpu()
    with Store(args.db, create=False) as store, bar:  # drafts need an imported bank: never a new store
        try:
            job = draft_bank_batch if args.batch else draft_bank
            summary = job(store, args.bank, client, options, user=args.user, progress=progress, cancel=cancel)
        except KeyboardInterrupt:
            bar.__exit__(None, None, None)
            echo("cancelled: the drafts finished so far are stored; run the same command again to resume", err=True)
            return 130
    doc = summary.to_json()
    if args.progress_json:
        _json_line({"summary": doc})
    elif args.json:
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
        "--items",
        nargs="+",
        metavar="visual|all|rejected|ID",
        help="visual-reference items (default), all items, the items whose draft was rejected for a redraft "
        "(reviewer review draft KEY --reject REASON), or item ids",
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
    p.add_argument(
        "--progress-json",
        action="store_true",
        help="JSON lines on stdout (progress, then the summary); a 'cancel' line on stdin cancels (the app uses this)",
    )
    p.add_argument("--verbose-items", action="store_true", help="one line for every item, drafted ones too")
    p.set_defaults(func=_run)
