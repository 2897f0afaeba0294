"""`reviewer generate` and `reviewer alter`: candidate questions and instrument/placebo pairs from a site record.

In review, above bank and scoring: `generate --store` imports the candidates into the review store and every
run prints the answer balance (scoring).
"""
# ruff: noqa: T201

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from reviewer.argtypes import integer, open_fraction, positive_float
from reviewer.bank.model import TASKS
from reviewer.bank.options import SENSOR_BREAK_MODES, GenerationOptions
from reviewer.console import echo


def memory_size(text: str) -> int:
    """argparse type: bytes of a size like 2GB, 1.5G, 500MB or 800000000 (1 GB = 1024**3 bytes)."""
    t = str(text).strip().upper().replace(" ", "").removesuffix("IB").removesuffix("B")
    units = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
    mult = units.get(t[-1:], 1) if t else 1
    try:
        value = float(t[:-1] if t[-1:] in units else t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a memory size: {text!r} (e.g. 2GB, 500MB)") from None
    if not 0 < value < float("inf") or value * mult < 1024**2:
        raise argparse.ArgumentTypeError(f"needs a memory size of at least 1MB, got {text!r}")
    return int(value * mult)


def generation_options(args: argparse.Namespace) -> GenerationOptions:
    """The options of `reviewer generate`'s command line."""
    return GenerationOptions(
        tasks=tuple(args.tasks or ()),
        seed=args.seed,
        balance=args.balance,
        memory=args.memory,
        sensor_break=args.sensor_break,
    )


def _generate(args: argparse.Namespace) -> int:
    from reviewer.bank.generate import generate

    if len(args.site_dir) > 1 or args.scheduler or args.workers is not None:
        return _generate_many(args)
    if args.split != "auto":
        from reviewer.errors import BankError

        raise BankError("--split is for a run on a cluster: give --workers N or --scheduler ADDRESS", field="split")
    from reviewer.progress import StderrProgress

    with StderrProgress(f"generate {Path(args.site_dir[0]).name}", lines_when_redirected=args.verbose) as bar:
        report = generate(args.site_dir[0], args.out, generation_options(args), progress=bar.update)
    if args.store:
        from reviewer.review.banks import import_bank
        from reviewer.store import Store

        with Store(args.db) as store:
            import_bank(store, args.out)
    echo(report.summary())
    from reviewer.review.bank_cli import balance_summary

    for line in balance_summary(args.out):
        echo(line)
    echo(f"candidates in {args.out} (dropped candidates with reasons in {args.out}/dropped.jsonl)")
    return 0


def _generate_many(args: argparse.Namespace) -> int:
    """Several sites (or one on a cluster) as dask tasks: OUT/<site>/ each, a progress bar per site and overall
    on stderr; Ctrl-C cancels (finished sites stay, a second run resumes); exit 1 when a site failed."""
    from reviewer.bank.many import generate_many, site_names
    from reviewer.errors import BankError

    if args.store:
        raise BankError("--store imports one site's candidates; with several sites, import each folder", field="store")
    names = site_names(args.site_dir)
    with _site_bars(names) as bars:
        report = generate_many(
            args.site_dir,
            args.out,
            generation_options(args),
            scheduler=args.scheduler,
            workers=args.workers,
            progress=bars.update,
            split=args.split,
        )
    for line in report.lines():
        echo(line)
    return 1 if report.count("failed") else 0


def _site_bars(names: list[str]) -> Any:
    """rich bars per site on a terminal; with stderr redirected, the overall progress as a plain line now and then
    (reviewer.progress)."""
    if sys.stderr.isatty():
        return _Bars(names)
    from reviewer.progress import StderrProgress

    return _PlainBars(StderrProgress("all sites"), len(names))


class _Bars:
    """rich progress bars on stderr: one per site and one overall."""

    def __init__(self, names: list[str]) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description:<24}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[msg]}"),
            console=self.console,
            transient=False,
        )
        self.overall = self.progress.add_task("all sites", total=len(names), msg="")
        self.tasks = {n: self.progress.add_task(n[:24], total=1.0, msg="") for n in names}
        self.names = names

    def __enter__(self) -> _Bars:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def update(self, fractions: dict[str, float], message: str) -> None:
        for n, f in fractions.items():
            if n in self.tasks:
                self.progress.update(self.tasks[n], completed=f)
        for part in message.split("; "):
            n, _, msg = part.partition(": ")
            if n in self.tasks:
                self.progress.update(self.tasks[n], msg=msg[:60])
        self.progress.update(self.overall, completed=sum(fractions.values()))


class _PlainBars:
    """_Bars' face over plain lines: the share of sites done."""

    def __init__(self, lines: Any, n_sites: int) -> None:
        self.lines, self.n_sites = lines, max(n_sites, 1)

    def __enter__(self) -> _PlainBars:
        self.lines.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.lines.__exit__(*exc)

    def update(self, fractions: dict[str, float], message: str) -> None:
        self.lines.update(sum(fractions.values()) / self.n_sites, message)


def _alter(args: argparse.Namespace) -> int:
    from reviewer.bank.alter import REPORT, Alteration, alter_record

    alteration = Alteration(
        satellite=args.satellite,
        variable=args.variable,
        scale=args.scale,
        replace_with=args.replace_with,
        date_from=args.date_from,
        date_to=args.date_to,
        drop_clear=args.drop_clear,
        seed=args.seed,
    )
    result = alter_record(
        args.site_dir,
        args.out,
        alteration,
        question=args.question,
        bank=args.bank,
        dry_run=args.dry_run,
        memory=args.memory,
    )
    for line in result.lines():
        echo(line)
    if args.dry_run and result.bank:
        echo("dry run: nothing added to the bank")
    echo(f"report: {args.out}/{REPORT}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    from reviewer.bank.many import SPLIT_ABOVE

    p = subparsers.add_parser("generate", help="generate candidate questions of a site (templates x reference methods)")
    p.add_argument("site_dir", nargs="+", help="site folder(s); with several, OUT/<site folder name>/ each")
    p.add_argument("--tasks", nargs="+", choices=TASKS, help="only these tasks (default: all ten)")
    p.add_argument("--seed", type=integer(0), default=0, help="seed of phrasing choice and option order")
    p.add_argument(
        "--out",
        required=True,
        help="candidates folder (a bank folder plus dropped.jsonl); with several sites, the folder of their folders",
    )
    p.add_argument(
        "--memory",
        type=memory_size,
        metavar="SIZE",
        help="memory budget per site, e.g. 2GB (default), 500MB: series frames beyond it go to temporary files",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--scheduler", metavar="ADDRESS", help="run the sites on this running dask scheduler (tcp://host:8786)"
    )
    where.add_argument(
        "--workers",
        type=integer(0),
        metavar="N",
        help="run the sites on a local dask cluster of N worker processes (default 2 with several sites; "
        "0: one after another in this process)",
    )
    p.add_argument(
        "--split",
        choices=("auto", "always", "never"),
        default="auto",
        help="on a cluster, also run a site's years and per-pixel trend blocks as tasks: auto (a site of "
        f"{SPLIT_ABOVE:g} Landsat scene-megapixels or more, or every site when there are fewer sites than workers), "
        "always, never",
    )
    p.add_argument("--store", action="store_true", help="also import the candidates into the review store")
    p.add_argument(
        "--balance",
        type=positive_float,
        metavar="RATIO",
        help="keep no conclusion of a template more than RATIO times as often as the next (e.g. 1.5; surplus "
        "drawn with the seed, listed in dropped.jsonl); default: keep every candidate",
    )
    p.add_argument(
        "--sensor-break",
        dest="sensor_break",
        choices=SENSOR_BREAK_MODES,
        help="an item whose change lies within the offset between the sensors it spans (TM/ETM+/OLI/MSI, measured "
        "at its region in the years both flew): mark it for an expert, drop it, or skip the check (default: "
        "templates.json sensor_break.on_break, mark)",
    )
    p.set_defaults(func=_generate)

    p = subparsers.add_parser("alter", help="write an altered copy of a record (instrument or placebo pair)")
    p.add_argument("site_dir")
    p.add_argument("--out", required=True)
    p.add_argument("--satellite", help="terra, aqua, landsat5, landsat7, landsat8, landsat9, snpp, sentinel2")
    p.add_argument("--variable", default="sr", help="ndvi, sr (all reflectance bands), snow, ...")
    p.add_argument(
        "--scale", type=positive_float, help="multiply the variable's physical values by this factor (finite, > 0)"
    )
    p.add_argument("--replace-with", dest="replace_with", help="satellite whose scenes replace the altered ones")
    p.add_argument("--from", dest="date_from", help="first altered date (YYYY or YYYY-MM-DD)")
    p.add_argument("--to", dest="date_to", help="last altered date (YYYY or YYYY-MM-DD)")
    p.add_argument(
        "--drop-clear", dest="drop_clear", type=open_fraction, help="placebo: drop this fraction of clear scenes"
    )
    p.add_argument("--seed", type=integer(0), default=0)
    p.add_argument(
        "--memory",
        type=memory_size,
        metavar="SIZE",
        help="memory budget of each record's series in the method checks, e.g. 2GB (default)",
    )
    p.add_argument(
        "--question",
        help="question id the pair is for (default: every bank question whose reference "
        "methods rely on the altered satellite)",
    )
    p.add_argument(
        "--bank", help="candidates folder: its questions are checked and kept pairs added to its pairs.jsonl"
    )
    p.add_argument(
        "--dry-run",
        dest="dry_run",
        action="store_true",
        help="run the checks and write the report, but add nothing to the bank",
    )
    p.set_defaults(func=_alter)
