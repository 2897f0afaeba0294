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

import datetime as dt
import json
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import rasterio
from scipy import stats

from reviewer.errors import BankError
from reviewer.record.catalog import catalog
from reviewer.record.scan import Scene, open_index, site_files
from reviewer.record.stack import read_bands
from reviewer.record.decode import Grid

logger = logging.getLogger(__name__)

#: satellite names of the pair schema -> catalog platform names
PLATFORMS = {"terra": "terra", "aqua": "aqua", "landsat4": "landsat4", "landsat5": "landsat5",
             "landsat7": "landsat7", "landsat8": "landsat8", "landsat9": "landsat9", "snpp": "snpp",
             "viirs": "snpp", "sentinel2": "sentinel2"}
REFLECTANCE = ("blue", "green", "red", "nir", "swir1", "swir2", "coastal", "nir_broad", "rededge1", "rededge2",
               "rededge3")


@dataclass
class AlterResult:
    out_dir: str
    pair: dict[str, Any]
    altered_files: list[str] = field(default_factory=list)
    removed_scenes: list[str] = field(default_factory=list)
    method_check: dict[str, Any] | None = None
    detect_check: dict[str, Any] | None = None

    @property
    def kept(self) -> bool | None:
        if self.pair["kind"] == "placebo":
            return True
        if self.method_check is None or self.detect_check is None:
            return None
        return bool(self.method_check.get("changed")) and bool(self.detect_check.get("detectable"))

    def summary(self) -> dict[str, Any]:
        return {"out_dir": self.out_dir, "pair": self.pair, "altered_files": len(self.altered_files),
                "removed_scenes": len(self.removed_scenes), "method_check": self.method_check,
                "detect_check": self.detect_check, "kept": self.kept}


def _date(text: str | None, end: bool = False) -> dt.date | None:
    if not text:
        return None
    text = str(text)
    if len(text) == 4:
        return dt.date(int(text), 12, 31) if end else dt.date(int(text), 1, 1)
    return dt.date.fromisoformat(text)


def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        try:
            os.symlink(src.resolve(), dst)
        except OSError:
            shutil.copy2(src, dst)


def _scale_file(src: Path, dst: Path, spec, factor: float) -> None:
    """Rewrite one band with physical values multiplied by `factor`; fill and out-of-range DNs kept as they are."""
    with rasterio.open(src) as ds:
        profile = ds.profile
        raw = ds.read(1)
    keep = np.zeros(raw.shape, bool)
    if spec.fill is not None:
        keep |= raw == spec.fill
    if spec.saturated is not None:
        keep |= raw == spec.saturated
    if spec.valid is not None:
        keep |= (raw < spec.valid[0]) | (raw > spec.valid[1])
    phys = raw.astype(np.float64) * spec.scale + spec.offset
    new = (phys * factor - spec.offset) / spec.scale
    if np.issubdtype(raw.dtype, np.integer):
        info = np.iinfo(raw.dtype)
        lo, hi = (spec.valid if spec.valid is not None else (info.min, info.max))
        new = np.clip(np.rint(new), lo, hi)
    out = np.where(keep, raw, new).astype(raw.dtype)
    dst.parent.mkdir(parents=True, exist_ok=True)
    with rasterio.open(dst, "w", **profile) as ds:
        ds.write(out, 1)


def _bands_for(scene: Scene, variable: str) -> list[str]:
    product = scene.product_spec
    if variable in ("sr", "reflectance"):
        names = [n for n in REFLECTANCE if product.band_by_name(n) is not None]
    elif variable == "water":
        names = ["green"] if product.band_by_name("green") is not None else []
    else:
        names = [variable] if product.band_by_name(variable) is not None else []
    return [product.band_by_name(n).token for n in names if product.band_by_name(n).token in scene.files]


def alter_record(
    site_dir: str | Path,
    out_dir: str | Path,
    *,
    satellite: str | None = None,
    variable: str = "sr",
    scale: float | None = None,
    replace_with: str | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
    drop_clear: float | None = None,
    seed: int = 0,
    question: str | None = None,
    bank: str | Path | None = None,
    clear_threshold: float = 0.5,
    pair_id: str | None = None,
) -> AlterResult:
    """Write the altered copy, its pair record (pair.json in the copy) and, with a bank question, both checks."""
    site_dir = Path(site_dir).resolve()
    out = Path(out_dir)
    modes = [scale is not None, replace_with is not None, drop_clear is not None]
    if sum(modes) != 1:
        raise BankError("give exactly one of --scale, --replace-with or --drop-clear")
    if (scale is not None or replace_with is not None) and not satellite:
        raise BankError("--satellite is needed to scale or replace a satellite's data")
    if satellite and satellite not in PLATFORMS:
        raise BankError(f"unknown satellite {satellite!r}; known: {sorted(PLATFORMS)}")
    if scale is not None and scale <= 0:
        raise BankError("--scale must be above 0")
    if drop_clear is not None and not 0 < drop_clear < 1:
        raise BankError("--drop-clear must be a fraction between 0 and 1")
    if out.exists() and any(out.iterdir()):
        raise BankError("output folder is not empty", path=out)
    lo, hi = _date(date_from), _date(date_to, end=True)
    index = open_index(site_dir)
    platform = PLATFORMS.get(satellite or "", None)

    def in_window(s: Scene) -> bool:
        return (lo is None or s.date >= lo) and (hi is None or s.date <= hi)

    targets = [s for s in index.scenes if (platform is None or s.platform == platform) and in_window(s)]
    altered: dict[str, Any] = {}  # relative path -> band spec (scale) or None (remove)
    removed: list[str] = []
    if scale is not None:
        for s in targets:
            tokens = _bands_for(s, variable)
            for t in tokens:
                altered[s.files[t]] = s.product_spec.bands[t]
        if not altered:
            raise BankError(f"no {variable} files of {satellite} in the window")
        alteration, kind = "scale", "instrument"
    elif replace_with is not None:
        if replace_with not in PLATFORMS:
            raise BankError(f"unknown satellite {replace_with!r}")
        if not any(s.platform == PLATFORMS[replace_with] and in_window(s) for s in index.scenes):
            raise BankError(f"{replace_with} has no scenes in the window to stand in for {satellite}")
        for s in targets:
            removed.append(s.scene_id)
            for rel in s.files.values():
                altered[rel] = None
        alteration, kind = "replace", "instrument"
    else:
        optical = [s for s in targets if s.clear_fraction is not None and s.clear_fraction >= clear_threshold
                   and any(b in ("red", "nir") for b in (sp.name for sp in s.product_spec.bands.values()))]
        rng = np.random.default_rng(seed)
        n = max(1, int(round(drop_clear * len(optical))))
        for i in sorted(rng.choice(len(optical), size=min(n, len(optical)), replace=False)):
            s = optical[int(i)]
            removed.append(s.scene_id)
            for rel in s.files.values():
                altered[rel] = None
        alteration, kind = "drop_scenes", "placebo"
    # scene side files (MTL, metadata) of removed scenes go too
    removed_prefixes = tuple(removed)
    out.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for path in site_files(site_dir):
        rel = str(path.relative_to(site_dir))
        if rel in altered:
            if altered[rel] is None:
                continue
            _scale_file(path, out / rel, altered[rel], scale)
            written.append(rel)
        elif removed_prefixes and path.name.startswith(removed_prefixes):
            continue
        elif path.name in ("truth.json", "truth_masks.npz"):
            continue  # an altered record carries no truth about itself
        else:
            _link(path, out / rel)
    pair = {
        "id": pair_id or f"{index.site.id}-{kind}-{satellite or 'all'}-{alteration}",
        "question": question or "",
        "kind": kind, "satellite": satellite or "all", "variable": variable if kind == "instrument" else "scenes",
        "alteration": alteration, "factor": scale, "from": lo.isoformat() if lo else None,
        "to": hi.isoformat() if hi else None, "fraction": drop_clear, "seed": seed if kind == "placebo" else None,
        "replacement": replace_with, "pushes_toward": None,
        "description": _describe(kind, alteration, satellite, variable, scale, replace_with, lo, hi, drop_clear,
                                 len(written), len(removed)),
    }
    result = AlterResult(str(out), pair, written, removed)
    if question and bank:
        result.method_check = method_check(site_dir, out, bank, question, satellite)
        if result.method_check.get("altered_conclusion") is not None:
            pair["pushes_toward"] = result.method_check["altered_conclusion"]
    if kind == "instrument":
        result.detect_check = detect_check(site_dir, out, satellite, lo, hi)
    (out / "pair.json").write_text(json.dumps({**result.summary(), "pair": pair}, indent=1, default=str) + "\n",
                                   encoding="utf-8")
    return result


def _describe(kind, alteration, satellite, variable, scale, replace_with, lo, hi, frac, n_files, n_removed) -> str:
    when = f"from {lo.isoformat() if lo else 'the start'}" + (f" to {hi.isoformat()}" if hi else "")
    if alteration == "scale":
        return f"{satellite} {variable} scaled by {scale} {when} ({n_files} files rewritten)"
    if alteration == "replace":
        return f"{satellite} scenes {when} removed so {replace_with} stands in ({n_removed} scenes)"
    return f"placebo: {frac:.0%} of clear scenes removed at random ({n_removed} scenes)"


# ----------------------------------------------------------------------------- checks


def _relies_on(method: str, satellite: str | None) -> bool:
    name = method.lower()
    if satellite in ("terra",):
        return "terra" in name
    if satellite in ("aqua",):
        return "aqua" in name
    if satellite in ("snpp", "viirs"):
        return "viirs" in name
    return not any(k in name for k in ("terra", "aqua", "viirs"))  # Landsat-based methods


def method_check(site_dir: Path, altered_dir: Path, bank: str | Path, question: str, satellite: str | None
                 ) -> dict[str, Any]:
    """Recompute the question's template on both records and list the methods whose conclusion changes."""
    import warnings

    from reviewer.bank import generate as G
    from reviewer.bank.io import load_bank
    from reviewer.bank.series import build_series

    b = load_bank(bank)
    if not b.has("questions", question):
        raise BankError(f"no question {question!r} in the bank", path=bank)
    q = b.question(question)
    name = q["provenance"]["template"]
    concl = q["conclusion"]
    period = (int(q["period"]["start"][:4]), int(q["period"]["end"][:4]))
    out: dict[str, Any] = {"question": question, "template": name, "conclusion": concl}
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for label, folder in (("original", site_dir), ("altered", altered_dir)):
            series = build_series(open_index(folder))
            cands = [c for c in G.COMPUTE[G.templates()[name]["compute"]](series, name)
                     if c.period == period and all(str(v) in q["text"] for k, v in c.params.items()
                                                   if k in ("region", "sense", "y1", "y2"))]
            results[label] = cands[0].methods.get(concl, {}) if cands else {}
    orig, alt = results["original"], results["altered"]
    rng = (q.get("reference_range") or {}).get(concl)
    if rng is not None:  # a number conclusion changes when it leaves the reference range
        changed = {m: [orig.get(m), alt.get(m)] for m in orig
                   if alt.get(m) is not None and not rng[0] <= alt[m] <= rng[1]}
    else:
        changed = {m: [orig.get(m), alt.get(m)] for m in orig if alt.get(m) != orig.get(m)}
    relevant = {m: v for m, v in changed.items() if _relies_on(m, satellite)}
    out["methods"] = {"original": orig, "altered": alt}
    out["changed_methods"] = relevant
    out["changed"] = bool(relevant)
    if alt:
        from reviewer.bank.methods import combine_votes

        vals = [v for v in alt.values() if isinstance(v, str | int)]
        out["altered_conclusion"] = combine_votes({i: v for i, v in enumerate(vals)}, min_share=0.0)[0] if vals else None
    return out


def _scene_ndvi(scene: Scene, grid: Grid) -> float | None:
    product = scene.product_spec
    try:
        if product.band_by_name("ndvi") is not None:
            v = read_bands(scene, ["ndvi"], grid, cache=None)[0]
        elif product.band_by_name("red") is not None and product.band_by_name("nir") is not None:
            rn = read_bands(scene, ["red", "nir"], grid, harmonized=True, cache=None)
            with np.errstate(all="ignore"):
                v = (rn[1] - rn[0]) / (rn[1] + rn[0])
        else:
            return None
    except Exception as exc:  # noqa: BLE001 - an unreadable scene just does not count
        logger.debug("skipped %s: %s", scene.scene_id, exc)
        return None
    return float(np.nanmedian(v)) if np.isfinite(v).mean() > 0.3 else None


def detect_check(site_dir: Path, altered_dir: Path, satellite: str | None, lo: dt.date | None, hi: dt.date | None,
                 months: tuple[int, ...] = (5, 6, 7, 8, 9)) -> dict[str, Any]:
    """Is the alteration visible against a concurrent satellite? Per-year growing-season NDVI difference
    (altered satellite minus concurrent satellites) before versus during the window, Welch t-test p < 0.05."""
    index = open_index(altered_dir)
    grid = Grid.of_site(index.site)
    platform = PLATFORMS.get(satellite or "")
    family = {s.product_spec.family for s in index.scenes if s.platform == platform}
    is_landsat = any(f.startswith("landsat") for f in family)

    def concurrent(s: Scene) -> bool:
        if s.platform == platform or s.tier == "T2":
            return False
        if is_landsat:
            return s.product_spec.family in ("landsat_c2l2", "sentinel2_l2a")
        return s.product_spec.family in ("modis_vi", "viirs_vi")

    per: dict[str, dict[int, list[float]]] = {"altered": {}, "concurrent": {}}
    for s in index.scenes:
        if s.date.month not in months or (s.clear_fraction or 0) < 0.3 or s.tier == "T2":
            continue
        key = "altered" if s.platform == platform else "concurrent" if concurrent(s) else None
        if key is None:
            continue
        v = _scene_ndvi(s, grid)
        if v is not None:
            per[key].setdefault(s.year, []).append(v)
    years = sorted(set(per["altered"]) & set(per["concurrent"]))
    diff = {y: float(np.median(per["altered"][y]) - np.median(per["concurrent"][y])) for y in years}
    inside = [d for y, d in diff.items() if (lo is None or y >= lo.year) and (hi is None or y <= hi.year)]
    before = [d for y, d in diff.items() if lo is not None and y < lo.year]
    out: dict[str, Any] = {"satellite": satellite, "years_compared": len(years), "during": len(inside),
                           "before": len(before)}
    if len(inside) >= 2 and len(before) >= 2:
        t = stats.ttest_ind(inside, before, equal_var=False)
        out.update({"mean_difference_before": round(float(np.mean(before)), 4),
                    "mean_difference_during": round(float(np.mean(inside)), 4), "p": float(t.pvalue),
                    "detectable": bool(t.pvalue < 0.05)})
    elif len(inside) >= 3:
        # no overlap before the window: the harmonized difference should be about 0 for an unaltered sensor
        t = stats.ttest_1samp(inside, 0.0)
        out.update({"mean_difference_during": round(float(np.mean(inside)), 4), "p": float(t.pvalue),
                    "test": "one-sample t-test of the during-window difference against 0",
                    "detectable": bool(t.pvalue < 0.05)})
    else:
        out.update({"detectable": False, "reason": "too few years with both satellites before and during the window"})
    return out
