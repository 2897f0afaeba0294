"""Scan a site folder into a scene index: recognise files by product ID, group bands into scenes,
measure valid and clear fractions from the quality layer, and report every file that cannot be used.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import json
import logging
import os
import stat
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reviewer.errors import Cancelled, RecordError, ReviewerError, SiteError
from reviewer.fileio import file_kind, shown
from reviewer.record.archive import Member, is_tar, list_tar
from reviewer.record.catalog import Product, catalog
from reviewer.record.check import check_file, check_path, check_quality_band
from reviewer.record.decode import Grid, quality_nodata, radiometric_offset, scene_fractions
from reviewer.record.forked import copies_for, forked_map
from reviewer.record.hdf import SEP as LAYER_SEP
from reviewer.record.hdf import check_layers, container_format, fork_guard, grid_of, hdf4_granule
from reviewer.record.reader_errors import reader_errors, what_is_wrong
from reviewer.record.site import Site, load_site, unplaced_site

logger = logging.getLogger(__name__)


Progress = Callable[[float, str], None]
#: scenes measured per worker task (a cancel is seen between batches: a few hundred ms at most)
SCAN_BATCH = 16
#: HDF4 granules handed at a time to a forked copy of the scan (see _measure_granules)
GRANULE_CHUNK = 32


@dataclass
class Scene:
    """One acquisition of one product: its bands, date and how much of the site it shows clearly."""

    scene_id: str
    product: str
    sensor: str
    label: str
    platform: str
    date: dt.date
    tier: str | None
    location: str | None
    files: dict[str, str]
    files_root: str
    valid_fraction: float | None = None
    clear_fraction: float | None = None
    cloud_fraction: float | None = None
    record: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def year(self) -> int:
        return self.date.year

    @property
    def key(self) -> str:
        return f"{self.product}:{self.scene_id}"

    @property
    def product_spec(self) -> Product:
        return catalog().products[self.product]

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["date"] = self.date.isoformat()
        doc.pop("files_root")
        return doc


@dataclass(frozen=True)
class ScanProblem:
    path: str
    reason: str


@dataclass
class SceneIndex:
    """The site's scenes in date order, plus the files that could not be used and why."""

    site: Site
    scenes: list[Scene]
    problems: list[ScanProblem]
    from_store: bool = False

    @property
    def unused_copies(self) -> list[ScanProblem]:
        """Files not used because another copy of the same band was chosen (not problems)."""
        return [ScanProblem(c["path"], c["reason"]) for s in self.scenes for c in s.extra.get("unused_copies", ())]

    def record_scenes(self) -> list[Scene]:
        return [s for s in self.scenes if s.record]

    @property
    def short_scenes(self) -> list[tuple[Scene, list[str]]]:
        """Scenes without a band that other scenes of their product here have (a download cut short, most often),
        each with the missing bands' files ('SR_B5 (nir)'). They are used for what needs none of those bands, so
        nothing else would say so until a composite or index is missing on that one date."""
        present: dict[str, set[str]] = defaultdict(set)
        for s in self.scenes:
            present[s.product] |= s.files.keys()
        short = []
        for s in self.scenes:
            bands = s.product_spec.bands
            missing = [t for t in bands if t in present[s.product] and t not in s.files]  # the catalogue's order
            if missing:
                short.append((s, [f"{t} ({bands[t].name})" for t in missing]))
        return short

    def summary(self) -> dict[str, Any]:
        per_year: dict[str, Counter] = defaultdict(Counter)
        spans: dict[str, list[str]] = {}
        for s in self.scenes:
            per_year[str(s.year)][s.label] += 1
            span = spans.setdefault(s.label, [s.date.isoformat(), s.date.isoformat()])
            span[0] = min(span[0], s.date.isoformat())
            span[1] = max(span[1], s.date.isoformat())
        return {
            "site": self.site.id,
            "scenes": len(self.scenes),
            "problems": len(self.problems),
            "scenes_per_year": {y: dict(c) for y, c in sorted(per_year.items())},
            "sensor_spans": {k: {"first": v[0], "last": v[1]} for k, v in sorted(spans.items())},
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "scenes": [s.to_json() for s in self.scenes],
            "problems": [asdict(p) for p in self.problems],
            "unused_copies": [asdict(p) for p in self.unused_copies],
            "short_scenes": [
                {"scene": s.scene_id, "date": s.date.isoformat(), "missing": m} for s, m in self.short_scenes
            ],
            "summary": self.summary(),
        }


def _walk(site_dir: Path) -> tuple[list[Path], list[ScanProblem]]:
    """Every regular file of the record (hidden names skipped) in a fixed order, and what was not taken
    (`_walk_names`)."""
    names, skipped = _walk_names(site_dir)
    return [Path(name) for name in names], skipped


def _walk_names(site_dir: Path) -> tuple[list[str], list[ScanProblem]]:
    """Every regular file of the record (hidden names skipped) in a fixed order, as path strings, and what was not
    taken. (Strings: the signature a site opens with needs no Path of its ~5,000 files, whose making cost the
    launch's open worker ~50 ms in the app's large heap, mostly in garbage collections.)

    Links are followed, but never into a folder already walked or into a folder that holds the site (same
    st_dev/st_ino of the real folder), so links to '.' or '..' cannot make the walk loop. Only regular
    files are listed: a FIFO, socket or device is skipped with a reason, as are dangling links and names
    that are not valid UTF-8."""
    root = Path(site_dir)
    files: list[str] = []
    skipped: list[ScanProblem] = []
    prefix = len(str(root).rstrip(os.sep)) + 1

    def rel(p: str) -> str:
        return shown(p[prefix:]) or "."

    try:
        st = os.stat(root)
    except OSError as exc:
        return [], [ScanProblem(".", f"unreadable folder ({exc.strerror})")]
    seen = {(st.st_dev, st.st_ino)}
    real_root = os.path.realpath(root)
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(ScanProblem(rel(folder), f"unreadable folder ({exc.strerror})"))
            continue
        subfolders = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                entry.name.encode("utf-8")
            except UnicodeEncodeError:
                skipped.append(ScanProblem(rel(entry.path), "file name is not valid UTF-8"))
                continue
            try:  # a plain regular file, as the listing's d_type says: no stat needed (most of a record)
                plain = not entry.is_symlink() and entry.is_file(follow_symlinks=False)
            except OSError:
                plain = False
            if plain:
                files.append(entry.path)
                continue
            try:
                est = os.stat(entry.path)  # follows links
            except FileNotFoundError:
                skipped.append(ScanProblem(rel(entry.path), "dangling link (its target does not exist)"))
                continue
            except OSError as exc:
                reason = "link loop" if exc.errno == errno.ELOOP else f"unreadable ({exc.strerror})"
                skipped.append(ScanProblem(rel(entry.path), reason))
                continue
            if stat.S_ISDIR(est.st_mode):
                key = (est.st_dev, est.st_ino)
                if key in seen:
                    skipped.append(ScanProblem(rel(entry.path), "link to a folder already scanned (not followed)"))
                    continue
                target = os.path.realpath(entry.path)
                if real_root == target or real_root.startswith(target.rstrip(os.sep) + os.sep):
                    skipped.append(ScanProblem(rel(entry.path), "link to a folder that holds the site (not followed)"))
                    continue
                seen.add(key)
                subfolders.append(entry.path)
            elif stat.S_ISREG(est.st_mode):
                files.append(entry.path)
            else:
                skipped.append(ScanProblem(rel(entry.path), f"not a regular file ({file_kind(est.st_mode)})"))
        stack.extend(reversed(subfolders))
    return files, skipped


def site_files(site_dir: Path) -> list[Path]:
    """The regular files of a site record (see _walk; what it skips is reported by scan_site)."""
    return _walk(site_dir)[0]


def signature(site_dir: Path, files: list[Path] | None = None) -> str:
    """Changes whenever any file of the record is added, removed, resized or touched. (Names cut from the path
    strings rather than by pathlib's relative_to: a site opens with this check, ~5,000 files on the demo site.)"""
    h = hashlib.sha1()
    root = str(site_dir).rstrip(os.sep) + os.sep
    for path in files if files is not None else _walk_names(site_dir)[0]:
        name = str(path)
        rel = name[len(root) :] if name.startswith(root) else str(Path(name).relative_to(site_dir))
        st = os.stat(name)
        h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


#: bundle members by their index path ("bundle.tar/member"): the bundle's real path and the member
Members = dict[str, tuple[Path, Member]]


def _expand_bundles(site_dir: Path, files: list[Path]) -> tuple[list[Path], Members, list[ScanProblem]]:
    """Tar bundles are replaced by their members (read in place later through /vsitar/)."""
    out: list[Path] = []
    members: Members = {}
    problems: list[ScanProblem] = []
    prefix = len(str(site_dir).rstrip(os.sep)) + 1
    for path in files:
        if not is_tar(path.name):
            out.append(path)
            continue
        listed, problem = list_tar(path)
        if problem:
            problems.append(ScanProblem(str(path)[prefix:], problem))
        for m in listed:
            virtual = path / m.name
            members[str(virtual)[prefix:]] = (path, m)
            out.append(virtual)
    return out, members, problems


def _site_own(site: Site) -> set[str]:
    """The site's own files named by site.json (its boundary), which are not part of the record."""
    boundary = site.doc.get("boundary") if site.doc else None
    return {os.path.normpath(boundary)} if boundary else set()


def _stac_scenes(site_dir: Path, files: list[Path]) -> tuple[dict, set[Path], list[ScanProblem]]:
    """Scenes described by STAC items (Element84/AWS COG layout) and the files the items claim."""
    from reviewer.record.stac import looks_like_item, read_item

    items = [f for f in files if f.suffix.lower() == ".json" and looks_like_item(f)]
    if not items:
        return {}, set(), []
    local = set(files)
    prefix = len(str(site_dir).rstrip(os.sep)) + 1
    scenes: dict[tuple[str, str], Scene] = {}
    claimed: set[Path] = set()
    problems: list[ScanProblem] = []
    for path in items:
        got = read_item(path, local)
        claimed.add(path)
        if isinstance(got, str):
            problems.append(ScanProblem(str(path)[prefix:], got))
            continue
        claimed.update(got.claimed)
        p = got.product
        scenes[(p.id, got.scene_id)] = Scene(
            scene_id=got.scene_id,
            product=p.id,
            sensor=p.sensor,
            label=p.label,
            platform=got.platform,
            date=got.date,
            tier=None,
            location=got.tile,
            files={t: str(f)[prefix:] for t, f in got.bands.items()},
            files_root=str(site_dir),
            record=p.record,
            extra=dict(got.extra),
        )
    return scenes, claimed, problems


def _group(
    site_dir: Path, files: list[Path], own: set[str] = frozenset()
) -> tuple[dict[tuple[str, str], Scene], list[ScanProblem]]:
    """Scenes from STAC items and from the files the catalog recognises by name; every other file is
    listed with the reason."""
    cat = catalog()
    scenes, claimed, problems = _stac_scenes(site_dir, files)
    prefix = len(str(site_dir).rstrip(os.sep)) + 1  # files are under site_dir: a slice is their relative path
    for path in files:
        if claimed and path in claimed:  # (hashing a Path cost a tenth of the grouping)
            continue
        rel = str(path)[prefix:]
        name = rel.rpartition(os.sep)[2]  # path.name, five times per file, cost another tenth
        if rel in own or cat.companion(name):
            continue
        reason = cat.reject_reason(name)
        if reason:
            problems.append(ScanProblem(rel, reason))
            continue
        box = cat.match_container(name)
        if box is not None:
            scene = _scene_for(scenes, box.product, box.scene_id, box.date, None, box.location, site_dir)
            for token, layer in box.layers.items():
                scene.files[token] = f"{rel}{LAYER_SEP}{layer}"
            scene.extra["grid"] = box.grid
            continue
        m = cat.match(name) or cat.match_alias(name)
        if m is None and container_format(name) in ("netcdf", "grib"):
            found = _netcdf(scenes, path, rel, site_dir)
            if found is not True:
                problems.append(ScanProblem(rel, found))
            continue
        if m is None:
            kind = cat.kind_of(name)
            what = "file" if kind == "file" else f"{kind} file"
            problems.append(ScanProblem(rel, f"unknown name: no product in the catalog matches this {what}'s name"))
            continue
        scene = _scene_for(scenes, m.product, m.scene_id, m.date, m.tier, m.location, site_dir)
        _add_copy(scene, m.band, rel, m.resolution_m)
    return scenes, problems


def _netcdf(scenes: dict, path: Path, rel: str, site_dir: Path) -> bool | str:
    """Months of a content-recognised netCDF or GRIB file (ERA5-Land from the CDS) as scenes; or why not."""
    from reviewer.record.grib import grib_scenes
    from reviewer.record.netcdf import nc_scenes

    grib = container_format(path.name) == "grib"
    what = "GRIB" if grib else "netCDF"
    if not path.is_file():
        return f"a {what} file inside a bundle is not read in place (its reader needs a file): unpack it"
    try:
        found = (grib_scenes if grib else nc_scenes)(path, catalog().products.values())
    except reader_errors() as exc:  # GDAL's netCDF / ecCodes errors of a damaged file
        return f"cannot read this {what} file: {what_is_wrong(exc)}"
    if not found:
        return f"{what} file whose variables no product in the catalog has"
    for product, scene_id, date, layers in found:
        scene = _scene_for(scenes, product, scene_id, date, None, None, site_dir)
        for token, layer in layers.items():
            scene.files[token] = f"{rel}{LAYER_SEP}{layer}"
    return True


def _scene_for(scenes: dict, product: Product, scene_id: str, date, tier, location, site_dir: Path) -> Scene:
    key = (product.id, scene_id)
    scene = scenes.get(key)
    if scene is None:
        scene = scenes[key] = Scene(
            scene_id=scene_id,
            product=product.id,
            sensor=product.sensor,
            label=product.label,
            platform=product.platform,
            date=date,
            tier=tier,
            location=location,
            files={},
            files_root=str(site_dir),
            record=product.record,
        )
    return scene


def _add_copy(scene: Scene, band: str, rel: str, res: float | None) -> None:
    """Put a band file in the scene; of several copies (SAFE R10m/R20m/R60m) the band's native resolution
    wins, else the finest; the other copies are noted in scene.extra['unused_copies'] with the reason."""
    prev = scene.files.get(band)
    sizes = scene.extra.setdefault("resolution_m", {}) if res is not None else scene.extra.get("resolution_m", {})
    if prev is None:
        scene.files[band] = rel
        if res is not None:
            sizes[band] = res
        return
    native = scene.product_spec.raw.get("native_resolution_m", {}).get(band)
    old_res = sizes.get(band)

    def rank(r):
        return (r != native, r if r is not None else float("inf"))

    keep, drop, drop_res = (rel, prev, old_res) if rank(res) < rank(old_res) else (prev, rel, res)
    kept_res = res if keep == rel else old_res
    scene.files[band] = keep
    if kept_res is not None:
        sizes[band] = kept_res
    why = "its native resolution" if kept_res == native else "the finest copy present"
    reason = (
        f"another copy of {band}{f' at {drop_res:g} m' if drop_res else ''}: "
        f"the {f'{kept_res:g} m ' if kept_res else ''}copy is used ({why})"
    )
    scene.extra.setdefault("unused_copies", []).append({"path": drop, "reason": reason})


def _measure(
    scene: Scene, site: Site, grid: Grid | None, inside, members: Members | None = None, fractions: bool = True
) -> tuple[Scene | None, list[ScanProblem]]:
    """Check every file of the scene (header and the byte ranges it promises) and read its quality layer
    (a worker thread per scene); a damaged file is reported and left out, the rest of the scene goes on.
    Without `fractions` (site init), a scene with a quality layer is kept or left out on its checks alone;
    one without is still read, as its pixels are what can refuse it (already-scaled values)."""
    granule = _granule_of(scene)
    if granule is not None:
        return _measure_granule(scene, site, grid, inside, *granule)
    problems = []
    quality = scene.product_spec.quality
    qa = None  # the quality layer on the grid when its check could decode it (check_quality_band)
    layered: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for band, rel in list(scene.files.items()):
        if LAYER_SEP in rel:
            file, layer = rel.split(LAYER_SEP, 1)
            layered[file].append((band, layer))
            continue
        bundle, member = members.get(rel, (None, None)) if members else (None, None)
        path = os.path.join(site.dir, rel)  # (a str: pathlib cost twice the check of a small band)
        if member is not None:
            bad = check_file(path, member, bundle)
        elif quality is not None and band == quality.band and fractions:
            bad, qa = check_quality_band(path, grid, quality_nodata(quality))
        else:
            bad = check_path(path)[0]
        if bad:
            _drop(scene, band, rel, bad, problems)
    for file, layers in layered.items():
        problems.extend(_check_container(scene, site, file, layers))
    if not scene.files or (problems and any(b not in scene.files for b in scene.product_spec.required)):
        return None, problems  # a bad quality layer is the one reason given, not also 'missing band'
    if not fractions and quality is not None:
        unusable = _unusable(scene)
        return (None, [*problems, unusable]) if unusable else (scene, problems)
    result = _measure_files(scene, site, grid, inside, qa)
    if isinstance(result, ScanProblem):
        return None, [*problems, result]
    return result, problems


def _measure_batch(batch: list[Scene], site: Site, grid: Grid | None, inside, members: Members, fractions=True):
    """_measure of each scene, in one GDAL environment (see decode.gdal_env)."""
    import rasterio

    with rasterio.Env():
        return [_measure(s, site, grid, inside, members, fractions) for s in batch]


def _drop(scene: Scene, band: str, rel: str, reason: str, problems: list[ScanProblem]) -> None:
    problems.append(ScanProblem(rel, reason))
    del scene.files[band]
    scene.extra.setdefault("damaged", {})[band] = {"path": rel, "reason": reason}


def _granule_of(scene: Scene) -> tuple[str, list[tuple[str, str]]] | None:
    """(file, [(band, layer)]) when every band of the scene is a layer of one HDF4 granule, else None."""
    file, layers = None, []
    for band, rel in scene.files.items():
        name, sep, layer = rel.partition(LAYER_SEP)
        if not sep or (file is not None and name != file):
            return None
        file = name
        layers.append((band, layer))
    if file is None or container_format(file) != "hdf4":
        return None
    return file, layers


def _measure_granule(
    scene: Scene, site: Site, grid: Grid | None, inside, file: str, layers: list[tuple[str, str]]
) -> tuple[Scene | None, list[ScanProblem]]:
    """_measure of a scene that is one HDF4 granule (MODIS as LP DAAC distributes it), with one open of
    the file for its check and one handle for its grid, layers and quality read (hdf.hdf4_granule): a
    granule's fixed costs, not its pixels, are most of a MODIS scan. Same problems as _check_container."""
    path = os.path.join(site.dir, file)
    bad, mtime = check_path(path, "hdf4")
    qa = None
    if bad:
        found = {"": bad}
    else:
        quality = scene.product_spec.quality
        by_band = dict(layers)
        try:
            found, qa = hdf4_granule(
                path,
                mtime,
                list(by_band.values()),
                tile=scene.location if scene.location and scene.location.startswith("h") else None,
                quality=by_band.get(quality.band) if quality else None,
                grid=grid,
                nodata=quality_nodata(quality) if quality else None,
            )
        except RecordError:  # its pixels cannot be read: reported by _measure_files as from any reader
            found = {}
    problems = _leave_out(scene, file, layers, found)
    if not scene.files or (problems and any(b not in scene.files for b in scene.product_spec.required)):
        return None, problems
    result = _measure_files(scene, site, grid, inside, qa)
    if isinstance(result, ScanProblem):
        return None, [*problems, result]
    return result, problems


def _measure_granules(scenes: list[Scene], granules: list, site: Site, grid, inside, processes: int, tick) -> list:
    """_measure_granule of each scene, shared with forked copies of this process when there are many
    (forked.forked_map: the HDF4 library reads one granule at a time per process, holding the GIL).
    The first granule of each product and tile is measured here first: its grid's site-grid lookup and
    its product's quality classes are then made, so a copy works from them (no GDAL or PROJ call)."""
    out: list = [None] * len(scenes)
    firsts: dict[tuple[str, str | None], int] = {}
    for k, scene in enumerate(scenes):
        firsts.setdefault((scene.product, scene.location), k)
    for k in firsts.values():
        out[k] = _measure_granule(scenes[k], site, grid, inside, *granules[k])
        tick(1)
    rest = [k for k in range(len(scenes)) if out[k] is None]

    def job(j: int):
        k = rest[j]
        return _measure_granule(scenes[k], site, grid, inside, *granules[k])

    copies = copies_for(len(rest), processes)
    for k, result in zip(
        rest, forked_map(job, len(rest), copies=copies, chunk=GRANULE_CHUNK, tick=tick, guard=fork_guard), strict=True
    ):
        out[k] = result
    return out


def _check_container(scene: Scene, site: Site, file: str, layers: list[tuple[str, str]]) -> list[ScanProblem]:
    """One HDF/netCDF file of the scene: signature, grid (and the tile it names), each layer readable."""
    path = os.path.join(site.dir, file)
    bad = check_file(path)
    found = {"": bad} if bad else check_layers(path, [layer for _, layer in layers])
    if not found and scene.location and scene.location.startswith("h"):
        tile = grid_of(path).tile
        if tile and tile != scene.location:
            found = {"": f"its name says tile {scene.location} but its StructMetadata grid is tile {tile}"}
    return _leave_out(scene, file, layers, found)


def _leave_out(scene: Scene, file: str, layers: list[tuple[str, str]], found: dict[str, str]) -> list[ScanProblem]:
    """The problems of a container's layers (found: reason by layer, '' for the whole file), each one's
    band left out of the scene."""
    out: list[ScanProblem] = []
    if "" in found:  # the whole file: one problem, every band of it left out
        out.append(ScanProblem(file, found[""]))
        for band, _layer in layers:
            scene.files.pop(band, None)
            scene.extra.setdefault("damaged", {})[band] = {"path": file, "reason": found[""]}
        return out
    for band, layer in layers:
        if layer in found:
            _drop(scene, band, f"{file}{LAYER_SEP}{layer}", found[layer], out)
    return out


def _measure_files(scene: Scene, site: Site, grid: Grid, inside, qa=None) -> Scene | ScanProblem:
    """The scene's fractions from its quality layer (`qa`: read already, on `grid`), or why it has none."""
    product = scene.product_spec
    unusable = _unusable(scene)
    if unusable:
        return unusable
    physical = [t for t, s in product.bands.items() if s.kind in ("physical", "classes") and t in scene.files]
    if product.raw.get("radiometric_offset") and "offset_source" not in scene.extra:  # a STAC item set it
        token = physical[0]
        try:
            extra = radiometric_offset(product, token, scene.date, Path(site.dir) / scene.files[token], stop=site.dir)
        except RecordError as exc:  # its metadata file is damaged: the scene's reflectance is not known
            rel = os.path.relpath(exc.path, site.dir) if exc.path and os.path.isabs(exc.path) else exc.path
            return ScanProblem(rel or scene.scene_id, f"{exc.message}; scene {scene.scene_id} is left out")
        if "platform" in extra:
            scene.platform = extra.pop("platform")
        scene.extra.update(extra)
    try:
        fractions = scene_fractions(scene, product, grid, inside, qa)
    except RecordError as exc:
        rel = exc.path and os.path.relpath(exc.path, site.dir) if exc.path and os.path.isabs(exc.path) else exc.path
        return ScanProblem(rel or scene.scene_id, exc.message)
    if site.placed and fractions["valid_fraction"] == 0.0 and _outside(scene, site, physical[0]):
        scene.extra["outside_site"] = True  # not "cloud 100%": the scene does not reach the site
        fractions["cloud_fraction"] = None
    if "snow_fraction" in fractions:
        scene.extra["snow_fraction"] = fractions["snow_fraction"]
    scene.valid_fraction = fractions["valid_fraction"]
    scene.clear_fraction = fractions["clear_fraction"]
    scene.cloud_fraction = fractions["cloud_fraction"]
    return scene


def _unusable(scene: Scene) -> ScanProblem | None:
    """Why the scene's files cannot make a scene (its quality layer or every data band absent), else None."""
    product = scene.product_spec
    missing = [b for b in product.required if b not in scene.files]
    if missing:
        where = next(iter(scene.files.values()))
        return ScanProblem(
            where,
            f"missing band: scene {scene.scene_id} has no {', '.join(missing)} (quality layer); its bands cannot be masked",
        )
    if not any(s.kind in ("physical", "classes") and t in scene.files for t, s in product.bands.items()):
        where = next(iter(scene.files.values()))
        return ScanProblem(where, f"missing band: scene {scene.scene_id} has only quality layers")
    return None


def _outside(scene: Scene, site: Site, token: str) -> bool:
    """Whether a scene's footprint (its band file's extent) misses the site's box altogether."""
    from rasterio.warp import transform_bounds

    from reviewer.record.decode import file_geometry

    try:
        crs, t, (rows, cols) = file_geometry(Path(site.dir) / scene.files[token])
        xs, ys = (t.c, t.c + cols * t.a), (t.f, t.f + rows * t.e)
        w, s, e, n = transform_bounds(crs, site.crs, min(xs), min(ys), max(xs), max(ys), densify_pts=21)
    except reader_errors(ReviewerError):  # no footprint to compare: say nothing rather than guess
        return False
    sw, ss, se, sn = site.bbox
    return not (w < se and sw < e and s < sn and ss < n)


def scan_site(
    site_dir: str | Path,
    *,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    workers: int = 2,
    allow_no_site: bool = False,
) -> SceneIndex:
    """Build the scene index by reading every scene's quality layer once (threads: GDAL releases the GIL).

    With `allow_no_site`, a folder without site.json is indexed too, each scene on its own extent."""
    site = _site_or_unplaced(site_dir, allow_no_site)
    index, n_files = scan_record(site, progress=progress, cancel=cancel, workers=workers)
    if not site.placed and not index.scenes:
        raise SiteError(
            f"no site.json, and none of its {n_files} file(s) is a scene of the record{why_none(index.problems)}: "
            "this folder is not a site record",
            path=site.dir,
        )
    if not index.scenes and not index.problems:
        index.problems.append(ScanProblem(".", "empty record: no raster files found in the site folder"))
    return index


def scan_record(
    site: Site,
    *,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    workers: int = 2,
    fractions: bool = True,
) -> tuple[SceneIndex, int]:
    """scan_site's index of `site` (an unplaced one too, even with no scene: `site init --bbox` of a folder
    before its downloads) and how many files its folder holds. Without `fractions`, the scenes and the files
    left out as a scan finds them, without reading quality layers (site init: a header check per file, where
    measuring 20 whole Landsat scenes took 16 s); the scenes' fractions are then None."""
    files, skipped = _walk(site.dir)
    files, members, bundle_problems = _expand_bundles(site.dir, files)
    grouped, problems = _group(site.dir, files, _site_own(site))
    problems = skipped + bundle_problems + problems
    grid = Grid.of_site(site) if site.placed else None
    if grid is not None:  # each scene's quality layer is read onto the whole site grid
        from reviewer.record.decode import check_read_fits

        # (a lookup onto a grid not aligned with a file's checks its own size: _pixel_map)
        check_read_fits(grid, 0, site=f"site {site.id}", cell_m=site.cell_m, width_hint=False, lookup=False)
    inside = site.boundary_mask if site.placed else None
    todo = list(grouped.values())
    results = _measure_all(todo, site, grid, inside, members, workers, progress, cancel, fractions)
    scenes: list[Scene] = []
    for scene, found in results:  # in the order the scenes were found, however they were measured
        problems.extend(found)
        if scene is not None:
            scenes.append(scene)
    scenes.sort(key=lambda s: (s.date, s.product, s.scene_id))
    for p in problems:
        logger.warning("skipped %s: %s", p.path, p.reason)
    return SceneIndex(site=site, scenes=scenes, problems=problems), len(files)


def why_none(problems: list[ScanProblem], shown: int = 3) -> str:
    """Why files were not used, for an error that no scene was found: up to `shown` reasons with their counts,
    the files of the record first (' (missing band: scene ... has no QA_PIXEL ...; 1 file(s): unknown
    name: ...)'), since a stray notes file is rarely why a folder of downloads has no scene; the rest counted."""
    if not problems:
        return ""
    counts = Counter(p.reason for p in problems)
    reasons = sorted(counts, key=lambda r: (r.startswith("unknown name:"), -counts[r]))
    # a scene's reason names its scene (one problem for all its files): no "1 file(s)" before it
    said = "; ".join(
        r if r.startswith("missing band: scene ") else f"{counts[r]} file(s): {r}" for r in reasons[:shown]
    )
    rest = sum(counts[r] for r in reasons[shown:])
    more = f"; {rest} more for {len(reasons) - shown} other reason(s)" if rest else ""
    return f" ({said}{more})"


def _measure_all(
    todo, site, grid, inside, members, workers, progress, cancel, fractions=True
) -> list[tuple[Scene | None, list]]:
    """_measure of every scene. Scenes read through GDAL go to the worker threads in batches (a future per
    scene cost as much as a MODIS granule's whole check); HDF4 granules are measured here meanwhile, one
    after another: the HDF4 library is serialized by a lock and holds the GIL, so a second thread only
    made them wait on each other (0.54 s vs 0.43 s for 1,000 granules)."""
    total = max(len(todo), 1)
    results: list = [None] * len(todo)
    granules = [_granule_of(s) for s in todo]
    here = [i for i, g in enumerate(granules) if g is not None]
    away = [i for i, g in enumerate(granules) if g is None]
    batches = [away[k : k + SCAN_BATCH] for k in range(0, len(away), SCAN_BATCH)]
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        if cancel is not None and cancel():
            raise Cancelled("scan cancelled")
        for _ in range(n):
            done += 1
            if progress is not None and (done % 20 == 1 or done == total):
                progress(done / total, f"indexed {done} of {total} scenes")

    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            futures = [
                pool.submit(_measure_batch, [todo[i] for i in b], site, grid, inside, members, fractions)
                for b in batches
            ]
            measured = _measure_granules(
                [todo[i] for i in here], [granules[i] for i in here], site, grid, inside, workers, tick
            )
            for i, result in zip(here, measured, strict=True):
                results[i] = result
            for b, future in zip(batches, futures, strict=True):
                for i, result in zip(b, future.result(), strict=True):
                    results[i] = result
                tick(len(b))
        except Cancelled:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return results


def _site_or_unplaced(site_dir: str | Path, allow_no_site: bool) -> Site:
    if allow_no_site and not (Path(site_dir) / "site.json").exists():
        return unplaced_site(site_dir)
    return load_site(site_dir)


# ----------------------------------------------------------------------------- persistence in the store


def save_index(store, index: SceneIndex, sig: str) -> None:
    """Replace the stored index of this site in one write transaction (waits for other writers)."""
    site_dir = str(index.site.dir)
    with store.transaction() as db:
        db.execute("DELETE FROM scenes WHERE site_dir = ?", [site_dir])
        db.execute("DELETE FROM scan_problems WHERE site_dir = ?", [site_dir])
        db["sites"].upsert(
            {
                "site_dir": site_dir,
                "site_id": index.site.id,
                "name": index.site.name,
                "signature": sig,
                "scanned_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "site_json": json.dumps(index.site.doc),
            },
            pk="site_dir",
        )
        db["scenes"].insert_all(
            (
                {
                    "site_dir": site_dir,
                    "scene_id": s.scene_id,
                    "product": s.product,
                    "sensor": s.sensor,
                    "label": s.label,
                    "platform": s.platform,
                    "date": s.date.isoformat(),
                    "tier": s.tier,
                    "location": s.location,
                    "bands": json.dumps(s.files),
                    "valid_fraction": s.valid_fraction,
                    "clear_fraction": s.clear_fraction,
                    "cloud_fraction": s.cloud_fraction,
                    "record": int(s.record),
                    "extra": json.dumps(s.extra),
                }
                for s in index.scenes
            ),
            batch_size=500,
        )
        db["scan_problems"].insert_all(
            ({"site_dir": site_dir, "path": p.path, "reason": p.reason} for p in index.problems), batch_size=500
        )


def load_index(db, site: Site, sig: str) -> SceneIndex | None:
    """The stored index when the record has not changed since it was scanned (`db`: anything with sqlite-utils'
    `query`, the Store itself included)."""
    site_dir = str(site.dir)
    rows = list(db.query("SELECT signature FROM sites WHERE site_dir = ?", [site_dir]))
    if not rows or rows[0]["signature"] != sig:
        return None
    scenes = [
        Scene(
            scene_id=r["scene_id"],
            product=r["product"],
            sensor=r["sensor"],
            label=r["label"],
            platform=r["platform"],
            date=dt.date.fromisoformat(r["date"]),
            tier=r["tier"],
            location=r["location"],
            files=json.loads(r["bands"]),
            files_root=site_dir,
            valid_fraction=r["valid_fraction"],
            clear_fraction=r["clear_fraction"],
            cloud_fraction=r["cloud_fraction"],
            record=bool(r["record"]),
            extra=json.loads(r["extra"] or "{}"),
        )
        for r in db.query("SELECT * FROM scenes WHERE site_dir = ? ORDER BY date, product, scene_id", [site_dir])
    ]
    problems = [
        ScanProblem(r["path"], r["reason"])
        for r in db.query("SELECT path, reason FROM scan_problems WHERE site_dir = ?", [site_dir])
    ]
    return SceneIndex(site=site, scenes=scenes, problems=problems, from_store=True)


def open_index(
    site_dir: str | Path,
    store=None,
    *,
    rescan: bool = False,
    progress: Progress | None = None,
    cancel: Callable[[], bool] | None = None,
    allow_no_site: bool = False,
) -> SceneIndex:
    """Open a site: from the stored index when nothing changed on disk, else scan (and store) it."""
    site = _site_or_unplaced(site_dir, allow_no_site)
    sig = signature(site.dir)
    if store is not None and not rescan:
        try:
            index = load_index(store, site, sig)  # the store's own `query`: no sqlite-utils to open a stored index
        except ReviewerError:
            index = None
        if index is not None:
            logger.info("opened %s from the stored index (%d scenes)", site.id, len(index.scenes))
            return index
    index = scan_site(site.dir, progress=progress, cancel=cancel, allow_no_site=allow_no_site)
    if store is not None:
        save_index(store, index, sig)
    return index
