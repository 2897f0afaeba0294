"""CLI verbs of the raw record: scan, render, demo-site."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from pathlib import Path

from reviewer.argtypes import integer
from reviewer.console import echo
from reviewer.errors import ReviewerError


def _store(args: argparse.Namespace, *, create: bool = True):
    """The store of --db (or the default one); scan and render store the index there, making it if need be."""
    from reviewer.store import Store

    return Store(getattr(args, "db", None), create=create)


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:5.1f}"


def _not_skipped(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("skipped ")


@contextlib.contextmanager
def _skips_listed_by_the_verb():
    """The scan's "skipped <file>" warnings held back: `scan` lists every file not used itself, `render` counts
    them in a note, and a folder of nothing usable says why in its one error line."""
    scan_log = logging.getLogger("reviewer.record.scan")
    scan_log.addFilter(_not_skipped)
    try:
        yield
    finally:
        scan_log.removeFilter(_not_skipped)


def cmd_scan(args: argparse.Namespace) -> int:
    from reviewer.record.scan import open_index

    with _skips_listed_by_the_verb(), _store(args) as store:
        index = open_index(args.site_dir, store, rescan=args.rescan, allow_no_site=True)
    if args.json:
        json.dump(index.to_json(), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    echo(f"{'date':10}  {'sensor':11}  {'tier':4}  {'loc':8}  {'valid%':>6}  {'clear%':>6}  {'cloud%':>6}  scene")
    for s in index.scenes:
        if s.extra.get("outside_site"):
            fractions = f"{'outside the site':>22}"
        else:
            fractions = f"{_pct(s.valid_fraction):>6}  {_pct(s.clear_fraction):>6}  {_pct(s.cloud_fraction):>6}"
        echo(
            f"{s.date.isoformat():10}  {s.label:11}  {s.tier or '-':4}  {(s.location or '-'):8}  {fractions}  "
            f"{s.scene_id}{'' if s.record else '  (withheld reference)'}"
        )
    summary = index.summary()
    n_out = sum(1 for s in index.scenes if s.extra.get("outside_site"))
    echo(
        f"\n{summary['scenes']} scenes of {index.site.name} ({index.site.id})"
        + (f", {n_out} of them outside the site" if n_out else "")
        + ("  [from the stored index]" if index.from_store else "")
    )
    for label, span in summary["sensor_spans"].items():
        n = sum(c.get(label, 0) for c in summary["scenes_per_year"].values())
        echo(f"  {label:11} {n:5} scenes  {span['first']} .. {span['last']}")
    if index.problems:
        echo(f"\n{len(index.problems)} file(s) not used:")
        for p in index.problems:
            echo(f"  {p.path}: {p.reason}")
    copies = index.unused_copies
    if copies:
        echo(f"\n{len(copies)} other cop{'y' if len(copies) == 1 else 'ies'} of bands not used:")
        for p in copies:
            echo(f"  {p.path}: {p.reason}")
    short = index.short_scenes
    if short:
        echo(f"\n{len(short)} scene(s) without a band the product's other scenes here have (used for what needs none):")
        for s, missing in short:
            echo(f"  {s.date.isoformat()}  {s.label}  {s.scene_id}: no {', '.join(missing)}")
    outside = [s for s in index.scenes if s.extra.get("outside_site")]
    if outside:
        echo(f"\n{len(outside)} scene(s) outside the site (not used): their footprints miss the site's box")
    if not index.site.placed:
        from reviewer.record.site import NO_SITE_HINT

        _echo_places(args.site_dir, index)
        echo(
            "\nno site.json: valid/clear fractions are over each scene's own extent, not a site grid; "
            + NO_SITE_HINT.format(dir=args.site_dir)
        )
    return 0


def _echo_places(site_dir: str, index) -> None:
    """A folder without site.json whose scenes cover places that do not overlap: each group (of the scenes
    listed above, by their sensors) and its box."""
    from reviewer.record.siteinit import footprints, place_groups

    label = {s.scene_id: s.label for s in index.scenes}
    prints = footprints(site_dir, index)[0]  # the scenes listed above, not the files the scan left out
    groups = place_groups(prints)
    if len(groups) < 2:
        return
    echo(f"\nthese scenes cover {len(groups)} places that do not overlap (a site is one place):")
    for members, (w, s, e, n) in groups:
        sensors = ", ".join(sorted({label[f.scene_id] for f in members}))
        echo(f"  {len(members):3} scene(s) [{sensors}] at lon {w:.3f}..{e:.3f}, lat {s:.3f}..{n:.3f}")
    echo(f"  make a site of one of them with: reviewer site init {site_dir} --bbox W S E N")


#: files not used that `site init` names one by one (the rest are counted; `reviewer scan` lists them all)
UNUSED_SHOWN = 5


def cmd_site_init(args: argparse.Namespace) -> int:
    from reviewer.record.siteinit import init_site

    with _skips_listed_by_the_verb():
        path, account, unused = init_site(
            args.site_dir,
            force=args.force,
            bbox_lonlat=tuple(args.bbox) if args.bbox else None,
            name=args.name,
            theme=args.theme,
            role=args.role,
            index=_stored_unplaced_index(args),
        )
    echo(f"wrote {path}: {account}")
    if unused:
        echo(f"{len(unused)} file(s) of the folder not used (the scan leaves them out):")
        for p in unused[:UNUSED_SHOWN]:
            echo(f"  {p.path}: {p.reason}")
        if len(unused) > UNUSED_SHOWN:
            echo(f"  and {len(unused) - UNUSED_SHOWN} more (reviewer scan {args.site_dir} lists them all)")
    echo(f"next: reviewer scan {args.site_dir}")
    return 0


def _stored_unplaced_index(args: argparse.Namespace):
    """The index a `reviewer scan` of the folder without site.json stored, when no file changed since (site
    init then reads no pixel again); else None and site init scans the folder itself."""
    from reviewer.record.scan import load_index, signature
    from reviewer.record.site import unplaced_site

    folder = Path(args.site_dir)
    if not folder.is_dir() or (folder / "site.json").exists():
        return None
    try:
        site = unplaced_site(folder)
        with _store(args, create=False) as store:  # only a look: no store made for it
            return load_index(store.db, site, signature(site.dir))
    except (ReviewerError, OSError):
        return None


def cmd_render(args: argparse.Namespace) -> int:
    from reviewer.fileio import read_bounded
    from reviewer.record.datespec import parse_date_spec
    from reviewer.record.render import check_png, default_composite, render_dates
    from reviewer.record.scan import open_index
    from reviewer.record.stretch import STRETCH_EXAMPLE, Stretch

    check_png(args.out)  # before any work: another extension, a folder or a read-only place is refused
    for date in args.date:  # a mistyped date is named before the folder is scanned or a band is found missing
        parse_date_spec(date)
    stretch = None
    if args.stretch:
        text = args.stretch
        if not text.lstrip().startswith("{"):  # a file holding the stretch JSON
            try:
                text = read_bounded(text, 1 << 20).decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                why = f"no file {text!r}" if isinstance(exc, FileNotFoundError) else f"{text!r}: not readable text"
                raise ReviewerError(
                    f"--stretch is neither stretch JSON nor a readable file ({why}); {STRETCH_EXAMPLE}", field="stretch"
                ) from exc
        stretch = Stretch.from_json(text)
    with _skips_listed_by_the_verb(), _store(args) as store:
        index = open_index(args.site_dir, store)
    composite = args.composite or default_composite(index)
    if composite != "truecolor" and not args.composite:
        echo(
            f"note: this site's products have no true-colour bands; rendering {composite} (--composite to choose)",
            err=True,
        )
    result = render_dates(
        index,
        args.date,
        composite,
        args.out,
        stretch=stretch,
        method=args.composite_method,
        sensors=args.sensor,
        percentiles=args.percentiles,
        width=args.width,
    )
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        echo(f"wrote {result['out']}: " + " | ".join(p["label"] for p in result["panels"]), err=True)
        for line in result.get("warnings", []):
            echo(f"note: {line}", err=True)
        if index.problems:
            echo(
                f"note: {len(index.problems)} file(s) of the folder not used (reviewer scan {args.site_dir} lists them)",
                err=True,
            )
    return 0


def cmd_demo_site(args: argparse.Namespace) -> int:
    from reviewer.record.synthetic import make_demo_site

    kwargs = {"seed": args.seed, "size": args.size, "start": args.start, "end": args.end, "variant": args.variant}
    if args.scenes_per_year is not None:
        kwargs["scenes_per_year"] = args.scenes_per_year
    out = make_demo_site(args.out_dir, **kwargs)
    echo(f"wrote the demo site to {out}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from reviewer.record.demo import ensure_demo_site
    from reviewer.record.render import render_dates
    from reviewer.record.scan import open_index

    if args.render:
        from reviewer.record.render import check_png

        check_png(args.render)
    site_dir = ensure_demo_site()
    echo(site_dir)  # only the path on stdout, so `$(reviewer demo)` is the site folder
    if args.render:
        import json as _json

        truth = _json.loads((site_dir / "truth.json").read_text())
        first, last = _pair_years(truth)
        with _store(args) as store:
            index = open_index(site_dir, store)
        result = render_dates(index, [str(first), str(last)], args.composite, args.render)
        echo(f"wrote {result['out']}: " + " | ".join(p["label"] for p in result["panels"]), err=True)
    return 0


def _pair_years(truth: dict) -> tuple[int, int]:
    """A before/after pair that shows the planted lake growth (truth.json changes.lake)."""
    lake = truth.get("changes", {}).get("lake", {})
    years = sorted(int(y) for y in lake.get("area_km2_by_year", {}))
    if not years:
        raise ReviewerError("truth.json has no lake series to pick a pair from", field="changes.lake")
    return years[0] + 1, years[-1]


def _composite_names() -> list[str]:
    """The composite names of reviewer/record/composites.json, the catalogue `stretch.composite_names()` reads.

    Read here without importing reviewer.record.stretch, which imports numpy: building the parser (and so
    `reviewer --help` and every light verb) must not pay for it.
    """
    return list(json.loads(Path(__file__).with_name("composites.json").read_text(encoding="utf-8")))


def _finite(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"needs a finite number, got {text!r}")
    return value


def _site_enum(key: str) -> list[str]:
    """theme/role choices from schemas/site.schema.json (read as text: no jsonschema at parser build)."""
    from reviewer import SCHEMAS_DIR

    schema = SCHEMAS_DIR / "site.schema.json"
    return list(json.loads(schema.read_text(encoding="utf-8"))["properties"][key]["enum"])


def register(sub: argparse._SubParsersAction) -> None:
    names = _composite_names()
    p = sub.add_parser("scan", help="index a site's raw record (scenes, dates, clear fractions)")
    p.add_argument("site_dir")
    p.add_argument("--json", action="store_true", help="print the scene list and summary as JSON")
    p.add_argument("--rescan", action="store_true", help="ignore the stored index")
    p.set_defaults(func=cmd_scan)

    p = sub.add_parser("site", help="make a site of a folder of downloads")
    site_sub = p.add_subparsers(dest="site_verb", required=True)
    q = site_sub.add_parser("init", help="write site.json from the scenes' common footprint (or --bbox)")
    q.add_argument("site_dir")
    q.add_argument("--bbox", nargs=4, type=_finite, metavar=("W", "S", "E", "N"), help="lon/lat box instead")
    q.add_argument("--name")
    q.add_argument("--theme", default="region", choices=_site_enum("theme"))
    q.add_argument("--role", default="region", choices=_site_enum("role"))
    q.add_argument("--force", action="store_true", help="replace an existing site.json")
    q.set_defaults(func=cmd_site_init)

    p = sub.add_parser("render", help="render dates side by side with one stretch")
    p.add_argument("site_dir")
    p.add_argument(
        "--date",
        action="append",
        required=True,
        help="YYYY-MM-DD, YYYY-MM (a month: a monthly product's scene, else its clearest), YYYY or YYYY-YYYY; "
        "repeat for a pair or strip",
    )
    p.add_argument(
        "--composite", choices=names,
        help="default: truecolor, or the first the site can show when its products have no visible bands (LST, ERA5)",
    )  # fmt: skip
    p.add_argument(
        "--composite-method", default="clearest", choices=["clearest", "median"], help="for a year or period"
    )
    p.add_argument("--stretch", help="stretch JSON (text or file) to reproduce a render")
    p.add_argument(
        "--percentiles", action="store_true", help="stretch from whole-stack percentiles instead of the fixed default"
    )
    p.add_argument("--sensor", action="append", help="only these sensors (TM, ETM+, OLI, OLI-2, MSI ...)")
    p.add_argument("--out", required=True, help="the PNG to write (its name ends in .png)")
    p.add_argument(
        "--width", type=integer(1, 100000), default=None,
        help="pixels across each panel; each band is read at that size (default: the panel's width, ~350 px)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the stretch and scenes used")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("demo", help="generate the cached demo site once and print its folder")
    p.add_argument("--render", metavar="PNG", help="also render a before/after pair of the planted changes")
    p.add_argument("--composite", default="truecolor", choices=names)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("demo-site", help="write the synthetic demo site (real file formats, planted changes)")
    p.add_argument("out_dir")
    p.add_argument("--seed", type=integer(0), default=0)
    p.add_argument("--size", type=integer(32, 20000), default=200, help="pixels a side (32 or more)")
    p.add_argument("--start", type=integer(1972, 2100), default=1984)
    p.add_argument("--end", type=integer(1972, 2100), default=2024)
    p.add_argument("--scenes-per-year", type=integer(1, 366), default=None)
    p.add_argument("--variant", default="core", choices=["core", "snow"])
    p.set_defaults(func=cmd_demo_site)
