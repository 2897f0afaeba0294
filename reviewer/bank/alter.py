"""Instrument and placebo pairs (EarthRecord Sec. 2.5): an altered copy of a record while nothing changes on the
ground, its pair record, and the two checks a kept pair must pass.

* scale: one satellite's values of one variable from a date on are multiplied by a factor;
* replace: one satellite's scenes in a window are removed, so another satellite's scenes stand in for them;
* drop_scenes (placebo): a seeded random fraction of clear scenes is removed.

Only the affected files differ: every other file of the copy is a hard link (or a symbolic link, or a
copy when neither is possible). The checks: (1) the alteration changes the conclusion of at least one
reference method that relies on the altered satellite; (2) it is detectable by comparing the altered
satellite with a concurrent one (Welch t-test of their per-year NDVI difference before and during the
alteration). Truth is never read.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import math
import os
import shutil
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from reviewer.bank import candidates
from reviewer.bank.io import KEY_ORDER
from reviewer.bank.series import COARSE, LANDSAT
from reviewer.errors import BankError, RecordError
from reviewer.fileio import atomic_write, check_output_folder, other_entries, other_entries_error, output_folder
from reviewer.record.catalog import catalog
from reviewer.record.decode import Grid
from reviewer.record.hdf import is_layer
from reviewer.record.hdf import split as split_layer
from reviewer.record.scan import Scene, SceneIndex, open_index, site_files
from reviewer.record.site import load_site
from reviewer.record.stack import normalized_difference, read_bands
from reviewer.record.write import write_scaled_band, write_scaled_layers

logger = logging.getLogger(__name__)


@cache
def satellites() -> dict[str, str]:
    """Satellite names a pair can give -> catalog platform: the platforms of the record's products that carry
    their own quality layer (ERA5-Land and WorldCover are no satellite's scenes), and the catalog's aliases."""
    rows = catalog().products.values()
    out = {p.platform: p.platform for p in rows if p.record and p.quality is not None}
    out.update({alias: platform for alias, platform in catalog().platform_aliases.items() if platform in out})
    return dict(sorted(out.items()))


def _platform_labels(platform: str | None) -> set[str]:
    """The sensor labels of a platform's products (products.json rows)."""
    return {p.label for p in catalog().products.values() if platform and p.platform == platform}


REFLECTANCE = (
    "blue",
    "green",
    "red",
    "nir",
    "swir1",
    "swir2",
    "coastal",
    "nir_broad",
    "rededge1",
    "rededge2",
    "rededge3",
)

REPORT = "alter_report.json"


@dataclass
class AlterResult:
    """The altered copy and, per bank question considered, a pair that was kept or rejected (with why)."""

    out_dir: str
    alteration: dict[str, Any]
    altered_files: list[str] = field(default_factory=list)
    removed_scenes: list[str] = field(default_factory=list)
    detect_check: dict[str, Any] | None = None
    kept: list[dict[str, Any]] = field(default_factory=list)  # {"pair", "method_check"}
    rejected: list[dict[str, Any]] = field(default_factory=list)  # {"pair", "failed", "method_check"}
    bank: str | None = None
    added_to_bank: int = 0
    note: str | None = None

    @property
    def pairs(self) -> list[dict[str, Any]]:
        """The kept pair records (each valid against pair.schema.json)."""
        return [k["pair"] for k in self.kept]

    def summary(self) -> dict[str, Any]:
        return {
            "out_dir": self.out_dir,
            "alteration": self.alteration,
            "altered_files": len(self.altered_files),
            "removed_scenes": len(self.removed_scenes),
            "detect_check": self.detect_check,
            "kept": self.kept,
            "rejected": self.rejected,
            "bank": self.bank,
            "added_to_bank": self.added_to_bank,
            "note": self.note,
        }

    def lines(self) -> list[str]:
        """Human-readable report: one line per kept or rejected pair."""
        out = [f"altered copy in {self.out_dir}: {self.alteration['description']}"]
        if self.detect_check is not None:
            d = self.detect_check
            out.append(
                f"detect check ({self.alteration['satellite']} vs concurrent satellites): "
                f"{'detectable' if d.get('detectable') else 'not detectable'}"
                + (f", p = {d['p']:.3g}" if "p" in d else f" ({d.get('reason', '')})")
            )
        for k in self.kept:
            out.append(
                f"kept     {k['pair']['id']} (question {k['pair']['question']}): {_changed_text(k['method_check'])}"
            )
        for r in self.rejected:
            out.append(
                f"rejected {r['pair']['id']} (question {r['pair']['question']}): failed "
                f"{' and '.join(r['failed'])} check; {_changed_text(r['method_check'])}"
            )
        if self.note:
            out.append(self.note)
        if self.bank:
            out.append(f"{self.added_to_bank} pair(s) added to {self.bank}/pairs.jsonl")
        return out


def _changed_text(mc: dict[str, Any] | None) -> str:
    if not mc:
        return "no method check"
    if mc.get("error"):
        return mc["error"]
    if mc.get("placebo"):
        return "reference conclusion holds" if mc.get("stable") else "reference conclusion changes"
    ch = mc.get("changed_methods") or {}
    return (
        f"{len(ch)} method(s) relying on the satellite change their conclusion ({', '.join(sorted(ch))})"
        if ch
        else "no method relying on the satellite changes its conclusion"
    )


def _date(text: str | None, end: bool = False) -> dt.date | None:
    if not text:
        return None
    text = str(text)
    try:
        if len(text) == 4:
            return dt.date(int(text), 12, 31) if end else dt.date(int(text), 1, 1)
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise BankError(f"not a date: {text!r} (use YYYY or YYYY-MM-DD)", field="to" if end else "from") from exc


def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        try:
            os.symlink(src.resolve(), dst)
        except OSError:
            shutil.copy2(src, dst)


def _bands_for(scene: Scene, variable: str) -> list[str]:
    product = scene.product_spec
    if variable in ("sr", "reflectance"):
        names = [n for n in REFLECTANCE if product.band_by_name(n) is not None]
    elif variable == "water":
        names = ["green"] if product.band_by_name("green") is not None else []
    else:
        names = [variable] if product.band_by_name(variable) is not None else []
    return [product.band_by_name(n).token for n in names if product.band_by_name(n).token in scene.files]


@dataclass(frozen=True)
class Alteration:
    """What to change in a record (`reviewer alter`'s options): exactly one of `scale` (a satellite's
    `variable` multiplied, an instrument pair), `replace_with` (a satellite's scenes removed so another
    stands in) or `drop_clear` (a share of the clear scenes removed at random, a placebo pair), between
    `date_from` and `date_to` (YYYY or YYYY-MM-DD, inclusive)."""

    satellite: str | None = None
    variable: str = "sr"
    scale: float | None = None
    replace_with: str | None = None
    date_from: str | None = None
    date_to: str | None = None
    drop_clear: float | None = None
    seed: int = 0
    #: the clear fraction above which a scene counts as clear (placebo)
    clear_threshold: float = 0.5

    @cached_property
    def lo(self) -> dt.date | None:
        return _date(self.date_from)

    @cached_property
    def hi(self) -> dt.date | None:
        return _date(self.date_to, end=True)

    @property
    def placebo(self) -> bool:
        return self.drop_clear is not None

    def in_window(self, s: Scene) -> bool:
        return (self.lo is None or s.date >= self.lo) and (self.hi is None or s.date <= self.hi)


def alter_record(
    site_dir: str | Path,
    out_dir: str | Path,
    a: Alteration,
    *,
    bank: str | Path | None = None,
    question: str | None = None,
    pair_id: str | None = None,
    dry_run: bool = False,
    cache: OriginalsCache | None = None,
    memory: int | None = None,
) -> AlterResult:
    """Write the copy of the record altered as `a` says, check it against bank questions and keep the pairs
    that pass.

    With `bank` and no `question`, every bank question whose reference methods rely on the altered
    satellite (placebo: whose period holds a removed scene) is checked; with `question`, only that one.
    Kept pairs are added to the bank's pairs.jsonl (not with `dry_run`); kept and rejected pairs, with the
    check that failed, go to alter_report.json in the altered folder. `cache` keeps the original record's
    index and series between calls (default: the process-wide ORIGINALS). `memory` is the budget (bytes,
    default 2 GB) each record's series stays under, as in generation (reviewer.bank.series.build_series); the
    detectability check reduces each scene as it reads it.
    """
    site_dir = Path(site_dir).resolve()
    out = Path(out_dir)
    _refuse_bad_request(a, bank, question)
    b = _open_bank(bank, question, dry_run)
    check_output_folder(out)
    # stricter than the rule for other outputs: an altered copy goes into a new or empty folder only (a second
    # alteration into an earlier one would mix two copies and add pairs twice)
    others = other_entries(out, ())
    if others:
        raise other_entries_error(out, others, advice="an altered copy goes into a new or empty folder")
    satellite, variable, scale = a.satellite, a.variable, a.scale
    cache = ORIGINALS if cache is None else cache
    index = cache.index(site_dir)
    altered, removed, alteration, kind = _plan(index, a)
    # scene side files (MTL, metadata) of removed scenes go too
    removed_prefixes = tuple(s.scene_id for s in removed)
    # the altered copy is built in a temporary folder beside --out and renamed into place at the end, so a
    # failure (a full disk, a failed check) leaves no half-written copy
    with output_folder(out) as work:
        written = _write_copy(site_dir, work, altered, removed_prefixes, scale)
        base = _pair_base(a, kind, alteration, len(written), len(removed))
        result = AlterResult(str(out), base, written, list(removed_prefixes), bank=str(bank) if bank else None)
        altered_index = _altered_index(index, work, set(removed_prefixes), set(written))
        if kind == "instrument":
            result.detect_check = detect_check(
                site_dir, work, satellite, a.lo, a.hi, variable=variable, index=altered_index
            )
        qids = _questions_to_check(b, question, kind, a, removed, result)
        checker = None
        if b is not None and qids:
            checker = _Checker(
                site_dir,
                work,
                satellite,
                indices={"original": index, "altered": altered_index},
                cache=cache,
                memory=memory,
            )
            checker.parts = _parts_of([b.question(qid) for qid in qids])
        taken = {p["id"] for p in b.pairs} if b is not None else set()
        for qid in qids:
            mc = checker.check(b.question(qid), placebo=a.placebo) if checker is not None else None
            pid = pair_id if pair_id and len(qids) == 1 else _next_id(qid, taken)
            taken.add(pid)
            _judge_pair(result, pid, qid, mc, a.placebo)
        adding = b is not None and bool(result.pairs) and not dry_run
        if adding:
            result.added_to_bank = len(result.pairs)
        atomic_write(work / REPORT, (json.dumps(result.summary(), indent=1, default=str) + "\n").encode("utf-8"))
    # the pairs go into the bank only once the altered copy they point at is in place
    if adding:
        from reviewer.bank.io import add_pairs

        add_pairs(bank, result.pairs)
    return result


def _refuse_bad_request(a: Alteration, bank: str | Path | None, question: str | None) -> None:
    """Refuse, before anything is read or written, a request that names no single alteration or no question."""
    satellite, scale, replace_with, drop_clear = a.satellite, a.scale, a.replace_with, a.drop_clear
    _ = (a.lo, a.hi)  # a date that is not one is refused here, before anything is read or written
    modes = [scale is not None, replace_with is not None, drop_clear is not None]
    if sum(modes) != 1:
        raise BankError("give exactly one of --scale, --replace-with or --drop-clear")
    if (scale is not None or replace_with is not None) and not satellite:
        raise BankError("--satellite is needed to scale or replace a satellite's data")
    if satellite and satellite not in satellites():
        raise BankError(f"unknown satellite {satellite!r}; known: {sorted(satellites())}")
    if scale is not None and not (math.isfinite(scale) and scale > 0):
        raise BankError(f"--scale must be a finite number above 0, got {scale!r}", field="scale")
    if drop_clear is not None and not 0 < drop_clear < 1:
        raise BankError("--drop-clear must be a fraction between 0 and 1")
    if replace_with is not None and replace_with not in satellites():
        raise BankError(f"unknown satellite {replace_with!r}")
    if bank is None and question is None:
        raise BankError(
            "give --bank CANDIDATES_DIR (the bank whose questions the pair is checked against and "
            "added to) or --question QUESTION_ID: a pair record must name its question"
        )
    if bank is None and drop_clear is None:
        raise BankError(
            f"--question {question} needs --bank CANDIDATES_DIR: an instrument pair is kept only "
            "after the method check against the bank question"
        )


def _open_bank(bank: str | Path | None, question: str | None, dry_run: bool) -> Any:
    """The bank the pairs are checked against and added to (None without --bank); a frozen one only to check."""
    if bank is None:
        return None
    from reviewer.bank.io import load_bank

    b = load_bank(bank)
    if question is not None and not b.has("questions", question):
        raise BankError(f"no question {question!r} in the bank", path=bank)
    if b.frozen and not dry_run:
        raise BankError(
            "holds a frozen bank, which is immutable; pairs cannot be added (use --dry-run to check without adding)",
            path=bank,
        )
    return b


def _plan(index: SceneIndex, a: Alteration) -> tuple[dict[str, Any], list[Scene], str, str]:
    """The files to rewrite (relative path -> band spec to scale, or None to remove), the removed scenes, the
    alteration and the pair kind."""
    platform = satellites().get(a.satellite or "", None)
    targets = [s for s in index.scenes if (platform is None or s.platform == platform) and a.in_window(s)]
    altered: dict[str, Any] = {}
    removed: list[Scene] = []
    if a.scale is not None:
        for s in targets:
            for t in _bands_for(s, a.variable):
                altered[s.files[t]] = s.product_spec.bands[t]
        if not altered:
            raise BankError(f"no {a.variable} files of {a.satellite} in the window")
        return altered, removed, "scale", "instrument"
    if a.replace_with is not None:
        if not any(s.platform == satellites()[a.replace_with] and a.in_window(s) for s in index.scenes):
            raise BankError(f"{a.replace_with} has no scenes in the window to stand in for {a.satellite}")
        removed = list(targets)
    else:
        optical = [
            s
            for s in targets
            if s.clear_fraction is not None
            and s.clear_fraction >= a.clear_threshold
            and any(b in ("red", "nir") for b in (sp.name for sp in s.product_spec.bands.values()))
        ]
        rng = np.random.default_rng(a.seed)
        n = max(1, int(round(a.drop_clear * len(optical))))
        removed = [optical[int(i)] for i in sorted(rng.choice(len(optical), size=min(n, len(optical)), replace=False))]
    for s in removed:
        for rel in s.files.values():
            altered[rel] = None
    alteration, kind = ("replace", "instrument") if a.replace_with is not None else ("drop_scenes", "placebo")
    return altered, removed, alteration, kind


def _granule_layers(altered: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The altered layers of multi-layer granules (`file::layer` keys, MODIS HDF4 / VIIRS HDF5), by file."""
    out: dict[str, dict[str, Any]] = {}
    for key, spec in altered.items():
        if is_layer(key):
            file, layer = split_layer(key)
            out.setdefault(file, {})[layer] = spec
    return out


def _write_copy(
    site_dir: Path, work: Path, altered: dict[str, Any], removed_prefixes: tuple[str, ...], scale: float | None
) -> list[str]:
    """The altered copy in `work`: scaled bands rewritten, removed scenes and truth left out, the rest linked.
    Returns the rewritten files (relative paths)."""
    written: list[str] = []
    granules = _granule_layers(altered)
    for path in site_files(site_dir):
        rel = str(path.relative_to(site_dir))
        if rel in altered:
            if altered[rel] is None:
                continue
            write_scaled_band(path, work / rel, altered[rel], scale)
            written.append(rel)
        elif rel in granules:
            layers = granules[rel]
            if None in layers.values():
                continue  # a removed scene's granule
            write_scaled_layers(path, work / rel, layers, scale)
            written.append(rel)
        elif removed_prefixes and path.name.startswith(removed_prefixes):
            continue
        elif path.name in ("truth.json", "truth_masks.npz"):
            continue  # an altered record carries no truth about itself
        else:
            _link(path, work / rel)
    return written


def _pair_base(a: Alteration, kind: str, alteration: str, n_written: int, n_removed: int) -> dict[str, Any]:
    """The fields every pair of this alteration shares."""
    return {
        "kind": kind,
        "satellite": a.satellite or "all",
        "variable": a.variable if kind == "instrument" else "scenes",
        "alteration": alteration,
        "factor": a.scale,
        "from": a.lo.isoformat() if a.lo else None,
        "to": a.hi.isoformat() if a.hi else None,
        "fraction": a.drop_clear,
        "seed": a.seed if kind == "placebo" else None,
        "replacement": a.replace_with,
        "description": _describe(a, kind, alteration, n_written, n_removed),
    }


def _questions_to_check(
    b: Any, question: str | None, kind: str, a: Alteration, removed: list[Scene], result: AlterResult
) -> list[str]:
    """The named question, or every bank question the alteration could concern (a note in result when none)."""
    if question is not None:
        return [question]
    qids = [q["id"] for q in b.questions if _concerns(q, kind, a.satellite, a.lo, a.hi, removed, a.variable)]
    if not qids:
        result.note = (
            f"no question of the bank relies on {a.satellite} in the altered window"
            if kind == "instrument"
            else "no question of the bank has a removed scene in its period"
        )
    return qids


def _judge_pair(result: AlterResult, pid: str, qid: str, mc: dict[str, Any] | None, placebo: bool) -> None:
    """The pair record of one question, kept or rejected (with the checks it failed)."""
    from reviewer.bank.io import record_problems

    pair = {"id": pid, "question": qid, **result.alteration, "pushes_toward": None}
    if mc and not placebo and mc.get("changed") and mc.get("altered_conclusion") is not None:
        pair["pushes_toward"] = mc["altered_conclusion"]
    pair = {k: pair[k] for k in KEY_ORDER["pair"]}
    failed = []
    if placebo:
        if mc is not None and not mc.get("stable", False):
            failed.append("placebo (the reference conclusion changes)")
    else:
        if not (mc or {}).get("changed"):
            failed.append("method")
        if not (result.detect_check or {}).get("detectable"):
            failed.append("detect")
    found = record_problems(pair, "pair")
    if found:  # never written: report it as rejected
        failed.append(f"schema ({found[0][0]}: {found[0][1]})")
    (result.rejected if failed else result.kept).append(
        {"pair": pair, "method_check": mc, **({"failed": failed} if failed else {})}
    )


class OriginalsCache:
    """Per original record (and its scanned index): the scene index and the series built from it, so
    successive alterations of one record in a session scan and read it once.

    Its lifetime is the object's: alter_record and method_check take one (`cache=`), and use the process-wide
    ORIGINALS when given none; clear() forgets everything. An entry is dropped when the record's files change
    (reviewer.bank.series.cached_index gives a new index) and at most `size` records are kept."""

    def __init__(self, size: int = 2) -> None:
        self.size = size
        self._entries: dict[tuple[str, int], dict[str, Any]] = {}

    def _entry(self, site_dir: Path) -> dict[str, Any]:
        from reviewer.bank.series import cached_index

        index = cached_index(site_dir)
        key = (str(site_dir), id(index))
        if key not in self._entries:
            for old in [k for k in self._entries if k[0] == key[0]]:
                del self._entries[old]
            while len(self._entries) >= self.size:
                del self._entries[next(iter(self._entries))]
            self._entries[key] = {"index": index, "series": {}}
        return self._entries[key]

    def index(self, site_dir: Path) -> SceneIndex:
        """The original record's scene index (scanned once while its files are unchanged)."""
        return self._entry(site_dir)["index"]

    def series(self, site_dir: Path) -> dict[frozenset[str], Any]:
        """The original record's series, by the build_series parts they were built with (filled by callers)."""
        return self._entry(site_dir)["series"]

    def clear(self) -> None:
        self._entries.clear()


#: the process-wide cache alter_record uses when given none
ORIGINALS = OriginalsCache()


def _altered_index(index: SceneIndex, out: Path, removed: set[str], rewritten: set[str]) -> SceneIndex:
    """The altered copy's index without a rescan: the original's scenes less the removed ones, re-rooted.
    Scaling rewrites value bands only, so each scene's clear fraction (from its quality layer) holds; when
    a rewritten file is a quality layer the copy is scanned."""
    site = load_site(out)
    scenes = []
    for s in index.scenes:
        if s.scene_id in removed:
            continue
        q = s.product_spec.quality
        if q is not None and s.files.get(q.band) in rewritten and not _codes_outside_valid(s, q):
            return open_index(out)
        scenes.append(dataclasses.replace(s, files_root=str(site.dir), extra=dict(s.extra)))
    return SceneIndex(site=site, scenes=scenes, problems=list(index.problems))


def _codes_outside_valid(scene: Scene, q) -> bool:
    """True when a scaled quality band keeps its flags: a classes layer whose flag codes all lie outside the
    valid value range (MOD10A1 NDSI 0-100, codes 200-255), which write_scaled_band leaves as they are."""
    spec = scene.product_spec.bands.get(q.band)
    if q.kind != "classes" or spec is None or spec.valid is None:
        return False
    lo, hi = spec.valid
    return all(not lo <= code <= hi for codes in q.flags.values() for code in codes)


def _parts_of(questions: list[dict[str, Any]]) -> frozenset[str]:
    return candidates.series_parts(sorted({q["provenance"]["template"] for q in questions}))


def _next_id(qid: str, taken: set[str]) -> str:
    n = 1
    while f"{qid}-p{n}" in taken:
        n += 1
    return f"{qid}-p{n}"


def _concerns(
    q: dict[str, Any],
    kind: str,
    satellite: str | None,
    lo: dt.date | None,
    hi: dt.date | None,
    removed: list[Scene],
    variable: str = "sr",
) -> bool:
    """Could the alteration change this question's reference? Insufficient-evidence questions never count."""
    if q["class"] == "insufficient" or q.get("reference_source") == "observations":
        return False
    prov = q.get("provenance") or {}
    name = prov.get("template")
    if not candidates.recomputable(name):
        return False
    p_lo, p_hi = dt.date.fromisoformat(q["period"]["start"]), dt.date.fromisoformat(q["period"]["end"])
    if kind == "placebo":
        return any(p_lo <= s.date <= p_hi and (s.label in q["sensors"] or s.label in COARSE) for s in removed)
    if (lo is not None and p_hi < lo) or (hi is not None and p_lo > hi):
        return False
    if (variable == "snow") != candidates.reads_snow(name):
        return False  # snow methods read only the snow product; the others never read it
    methods = [m for d in (prov.get("methods") or {}).values() if isinstance(d, dict) for m in d]
    if not any(_relies_on(m, satellite) for m in methods):
        return False
    # questions list the Landsat sensors their period spans: one that does not list the satellite's is not its
    listed = _platform_labels(satellites().get(satellite or "")) & set(LANDSAT)
    return not listed or bool(listed & set(q["sensors"]))


def _describe(a: Alteration, kind: str, alteration: str, n_files: int, n_removed: int) -> str:
    satellite, variable, scale, replace_with, lo, hi, frac = (
        a.satellite,
        a.variable,
        a.scale,
        a.replace_with,
        a.lo,
        a.hi,
        a.drop_clear,
    )
    when = f"from {lo.isoformat() if lo else 'the start'}" + (f" to {hi.isoformat()}" if hi else "")
    if alteration == "scale":
        return f"{satellite} {variable} scaled by {scale} {when} ({n_files} files rewritten)"
    if alteration == "replace":
        return f"{satellite} scenes {when} removed so {replace_with} stands in ({n_removed} scenes)"
    return f"placebo: {frac:.0%} of clear scenes removed at random ({n_removed} scenes)"


# ----------------------------------------------------------------------------- checks


def _series_platforms(method: str) -> set[str]:
    """The platforms of the coarse series a reference method reads. generate names a method on a MODIS/VIIRS
    series by the series' sensor label (label.lower() with '_' for ' ', then ':...'); those labels and their
    platforms are the products.json rows'. Empty for a method on the Landsat record."""
    series = method.split(":", 1)[0].lower()
    rows = catalog().products.values()
    return {p.platform for p in rows if p.label in COARSE and p.label.lower().replace(" ", "_") == series}


def _relies_on(method: str, satellite: str | None) -> bool:
    platform = satellites().get(satellite or "")
    read = _series_platforms(method)
    if read:
        return platform in read
    coarse = {p.platform for p in catalog().products.values() if p.label in COARSE}
    return platform not in coarse  # a method on the Landsat record relies on every satellite but the coarse ones


class _Checker:
    """Recomputes question templates on the original and the altered record: each record's series is built
    once (the original's is kept in memory across alterations), each template's candidates computed once."""

    def __init__(
        self,
        site_dir: Path,
        altered_dir: Path,
        satellite: str | None,
        indices: dict[str, SceneIndex] | None = None,
        parts: frozenset[str] | None = None,
        cache: OriginalsCache | None = None,
        memory: int | None = None,
    ) -> None:
        self.folders = {"original": Path(site_dir), "altered": Path(altered_dir)}
        self.satellite = satellite
        self.indices = dict(indices or {})
        self.parts = parts
        self.cache = ORIGINALS if cache is None else cache
        self.memory = memory
        self._series: dict[str, Any] = {}
        self._cands: dict[tuple[str, str], list] = {}

    def series(self, label: str):
        from reviewer.bank.series import PARTS, build_series

        parts = self.parts or PARTS
        if label not in self._series:
            cache = self.cache.series(self.folders["original"]) if label == "original" else {}
            if parts not in cache:
                index = self.indices.get(label) or open_index(self.folders[label])
                cache[parts] = build_series(index, parts=parts, memory=self.memory)
            self._series[label] = cache[parts]
        return self._series[label]

    def candidates(self, label: str, name: str) -> list:
        import warnings

        if (label, name) not in self._cands:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._cands[(label, name)] = candidates.compute(self.series(label), name)
        return self._cands[(label, name)]

    def check(self, q: dict[str, Any], placebo: bool = False) -> dict[str, Any]:
        return method_check_question(self, q, self.satellite, placebo=placebo)


def _match(cands: list, q: dict[str, Any]):
    period = (int(q["period"]["start"][:4]), int(q["period"]["end"][:4]))
    params = (q.get("provenance") or {}).get("params")
    for c in cands:
        if c.period != period:
            continue
        if params is not None:
            if json.dumps(candidates.candidate_params(c), sort_keys=True) == json.dumps(params, sort_keys=True):
                return c
        elif all(str(v) in q["text"] for k, v in c.params.items() if k in ("region", "sense", "y1", "y2")):
            return c  # banks written before provenance.params
    return None


def method_check_question(
    checker: _Checker, q: dict[str, Any], satellite: str | None, *, placebo: bool = False
) -> dict[str, Any]:
    """Per method, the conclusion on the original and the altered record. Instrument pairs: which methods
    relying on the altered satellite change their conclusion (a number conclusion changes when it leaves the
    reference range). Placebo: whether the combined conclusion still equals the reference."""
    from reviewer.bank.methods import combine_numeric, combine_votes

    name = q["provenance"]["template"]
    concl = q["conclusion"]
    out: dict[str, Any] = {
        "question": q["id"],
        "template": name,
        "conclusion": concl,
        "reference": q["reference"].get(concl),
    }
    results = {}
    for label in ("original", "altered"):
        c = _match(checker.candidates(label, name), q)
        results[label] = c.methods.get(concl, {}) if c is not None else {}
    orig, alt = results["original"], results["altered"]
    out["methods"] = {"original": orig, "altered": alt}
    if not orig:
        out.update(
            {
                "changed": False,
                "stable": False,
                "altered_conclusion": None,
                "error": "the question's candidate was not found again on the original record",
            }
        )
        return out
    rng = (q.get("reference_range") or {}).get(concl)
    if rng is not None:  # a number conclusion changes when it leaves the reference range
        changed = {m: [orig.get(m), alt.get(m)] for m in orig if alt.get(m) is None or not rng[0] <= alt[m] <= rng[1]}
        comb = combine_numeric(alt) if alt else None
        altered_conclusion = round(comb[0], 4) if comb else None
        stable = altered_conclusion is not None and rng[0] <= altered_conclusion <= rng[1]
    else:
        changed = {m: [orig.get(m), alt.get(m)] for m in orig if alt.get(m) != orig.get(m)}
        vals = {m: v for m, v in alt.items() if isinstance(v, str | int | list)}
        altered_conclusion = combine_votes(vals, min_share=0.0)[0] if vals else None
        stable = altered_conclusion == out["reference"]
    relevant = {m: v for m, v in changed.items() if placebo or _relies_on(m, satellite)}
    out["changed_methods"] = relevant
    out["changed"] = bool(relevant)
    out["altered_conclusion"] = altered_conclusion
    out["stable"] = bool(stable)
    if placebo:
        out["placebo"] = True
    return out


def method_check(
    site_dir: Path,
    altered_dir: Path,
    bank: str | Path,
    question: str,
    satellite: str | None,
    cache: OriginalsCache | None = None,
) -> dict[str, Any]:
    """The method check of one bank question (see method_check_question)."""
    from reviewer.bank.io import load_bank

    b = load_bank(bank)
    if not b.has("questions", question):
        raise BankError(f"no question {question!r} in the bank", path=bank)
    q = b.question(question)
    checker = _Checker(Path(site_dir).resolve(), altered_dir, satellite, parts=_parts_of([q]), cache=cache)
    return method_check_question(checker, q, satellite)


def _scene_ndvi(scene: Scene, grid: Grid) -> float | None:
    product = scene.product_spec
    try:
        if product.band_by_name("ndvi") is not None:
            v = read_bands(scene, ["ndvi"], grid, cache=None)[0]
        elif product.band_by_name("red") is not None and product.band_by_name("nir") is not None:
            nir, red = read_bands(scene, ["nir", "red"], grid, harmonized=True, cache=None)
            v = normalized_difference(nir, red)
        else:
            return None
    except (RecordError, OSError, ValueError) as exc:  # an unreadable or unfitting scene just does not count
        logger.debug("skipped %s: %s", scene.scene_id, exc)
        return None
    return float(np.nanmedian(v)) if np.isfinite(v).mean() > 0.3 else None


def _scene_snow(scene: Scene, grid: Grid) -> float | None:
    """Site mean NDSI snow cover (0-100) over valid pixels of a MOD10A1/MYD10A1 day, None when mostly gaps."""
    try:
        v = read_bands(scene, ["snow"], grid, cache=None)[0]
    except RecordError as exc:  # an unreadable day just does not count
        logger.debug("skipped %s: %s", scene.scene_id, exc)
        return None
    return float(np.nanmean(v)) if np.isfinite(v).mean() > 0.5 else None


def detect_check(
    site_dir: Path,
    altered_dir: Path,
    satellite: str | None,
    lo: dt.date | None,
    hi: dt.date | None,
    months: tuple[int, ...] = (5, 6, 7, 8, 9),
    variable: str | None = None,
    index: SceneIndex | None = None,
) -> dict[str, Any]:
    """Is the alteration visible against a concurrent satellite? Per-year difference (altered satellite minus
    concurrent satellites) of growing-season NDVI (variable snow: winter NDSI snow cover of MOD10A1 against
    MYD10A1) before versus during the window, Welch t-test p < 0.05."""
    index = index or open_index(altered_dir)
    grid = Grid.of_site(index.site)
    platform = satellites().get(satellite or "")
    snow = variable == "snow"
    family = {s.product_spec.family for s in index.scenes if s.platform == platform}
    is_landsat = any(f.startswith("landsat") for f in family)
    if snow:
        months = (12, 1, 2, 3)
        wanted = ("modis_snow",)
    elif is_landsat:
        wanted = ("landsat_c2l2", "sentinel2_l2a")
    else:
        wanted = ("modis_vi", "modis_vi_modistsp", "viirs_vi")

    def usable(s: Scene) -> bool:
        if s.product_spec.family not in wanted or s.date.month not in months or s.tier == "T2":
            return False
        return snow or (s.clear_fraction or 0) >= 0.3

    per: dict[str, dict[int, list[float]]] = {"altered": {}, "concurrent": {}}
    usable_scenes = [s for s in index.scenes if usable(s)]
    if not any(s.platform != platform for s in usable_scenes):
        usable_scenes = []  # nothing to compare with: read nothing
    for s in usable_scenes:
        if not usable(s):
            continue
        key = "altered" if s.platform == platform else "concurrent"
        v = _scene_snow(s, grid) if snow else _scene_ndvi(s, grid)
        if v is not None:
            per[key].setdefault(s.year + (snow and s.date.month == 12), []).append(v)
    years = sorted(set(per["altered"]) & set(per["concurrent"]))
    diff = {y: float(np.median(per["altered"][y]) - np.median(per["concurrent"][y])) for y in years}
    inside = [d for y, d in diff.items() if (lo is None or y >= lo.year) and (hi is None or y <= hi.year)]
    before = [d for y, d in diff.items() if lo is not None and y < lo.year]
    out: dict[str, Any] = {
        "satellite": satellite,
        "variable": "snow" if snow else "ndvi",
        "years_compared": len(years),
        "during": len(inside),
        "before": len(before),
    }
    if not per["concurrent"]:
        out.update({"detectable": False, "reason": f"no concurrent satellite in the record ({', '.join(wanted)})"})
    elif len(inside) >= 2 and len(before) >= 2:
        t = stats.ttest_ind(inside, before, equal_var=False)
        out.update(
            {
                "mean_difference_before": round(float(np.mean(before)), 4),
                "mean_difference_during": round(float(np.mean(inside)), 4),
                "p": float(t.pvalue),
                "detectable": bool(t.pvalue < 0.05),
            }
        )
    elif len(inside) >= 3:
        # no overlap before the window: the harmonized difference should be about 0 for an unaltered sensor
        t = stats.ttest_1samp(inside, 0.0)
        out.update(
            {
                "mean_difference_during": round(float(np.mean(inside)), 4),
                "p": float(t.pvalue),
                "test": "one-sample t-test of the during-window difference against 0",
                "detectable": bool(t.pvalue < 0.05),
            }
        )
    else:
        out.update({"detectable": False, "reason": "too few years with both satellites before and during the window"})
    return out
