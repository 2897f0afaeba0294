"""The synthetic demo site's folder: its settings (DemoSettings) and make_demo_site, which writes every product."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import multiprocessing as mp
import os
import shutil
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reviewer.errors import OutputError
from reviewer.record.forked import fork_is_safe
from reviewer.record.synthetic.coarse import VI_PRODUCTS, _coarse, _snow_winters
from reviewer.record.synthetic.common import MODIS_250, MODIS_500, RES, SITE_EPSG, WORLDCOVER, Progress, _rng, _write
from reviewer.record.synthetic.landsat import _landsat_plan
from reviewer.record.synthetic.model import DemoSiteModel, build_model
from reviewer.record.synthetic.products import _climate, _lonlat, _tile_names, _write_era5
from reviewer.record.synthetic.sentinel2 import _s2_plan
from reviewer.record.synthetic.truth import _truth
from reviewer.record.synthetic.workers import _WORKER, _init_worker, _run_task

logger = logging.getLogger("reviewer.record.synthetic")

# --------------------------------------------------------------------------------------------------------------
# The site folder
# --------------------------------------------------------------------------------------------------------------
_OUR_DIRS = ("landsat", "sentinel2", "modis", "viirs", "era5", "landcover", "reference")
_OUR_FILES = ("site.json", "boundary.geojson", "truth.json", "truth_masks.npz")


def _prepare(out: Path) -> None:
    if out.exists():
        if not out.is_dir():
            raise OutputError("exists and is not a folder", path=out)
        entries = list(out.iterdir())
        ours = (out / "truth.json").is_file() and all(
            e.name in _OUR_DIRS + _OUR_FILES or e.name.startswith(".") for e in entries
        )
        if entries and not ours:
            raise OutputError("is not empty and is not a demo site: refusing to overwrite it", path=out)
        for name in _OUR_DIRS:
            if (out / name).is_dir():
                shutil.rmtree(out / name)
        for name in _OUR_FILES:
            (out / name).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)


def _boundary(model: DemoSiteModel) -> dict[str, Any]:
    w, s, e, n = model.grid.bounds
    inset = 3 * RES
    w, s, e, n = w + inset, s + inset, e - inset, n - inset
    k = 8
    xs = [w + (e - w) * i / k for i in range(k)] + [e] * k + [e - (e - w) * i / k for i in range(k)] + [w] * k
    ys = [n] * k + [n - (n - s) * i / k for i in range(k)] + [s] * k + [s + (n - s) * i / k for i in range(k)]
    lon, lat = _lonlat(model, xs, ys)
    ring = [[round(a, 7), round(b, 7)] for a, b in zip(lon, lat, strict=True)]
    ring.append(ring[0])
    return {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"name": "demo site boundary"},
                "geometry": {"type": "Polygon", "coordinates": [ring]},
            }
        ],
    }


def _workers(requested: int | None, cost: float) -> int:
    if requested is not None:
        return max(1, int(requested))
    if cost < 2.0e7:  # small sites: process start-up costs more than it saves
        return 1
    return max(1, min(os.cpu_count() or 1, 4))


@dataclass(frozen=True)
class DemoSettings:
    """The settings of a demo site: the same settings give byte-identical files (whatever `workers` is).

    `landsat_only=True` (or extras=False with modis=sentinel2=False) writes only the Landsat scenes, site.json
    and truth; `thermal=False` skips the ST bands; `mtl=False` the MTL files; `workers` (None: chosen from the
    work) only sets how many processes write."""

    seed: int = 0
    size: int = 200
    start: int = 1984
    end: int = 2024
    scenes_per_year: int = 6
    variant: str = "core"
    modis: bool = True
    sentinel2: bool = True
    landsat_only: bool = False
    thermal: bool = True
    era5: bool = True
    landcover: bool = True
    reference: bool = True
    extras: bool = True
    mtl: bool = True
    workers: int | None = None

    def resolved(self) -> DemoSettings:
        """The settings with what landsat_only and extras=False imply switched off, and at least one scene a year."""
        s = self
        if s.landsat_only:
            s = dataclasses.replace(s, modis=False, sentinel2=False, extras=False)
        if not s.extras:
            s = dataclasses.replace(s, era5=False, landcover=False, reference=False)
        return dataclasses.replace(s, scenes_per_year=max(1, int(s.scenes_per_year)))

    @property
    def site_id(self) -> str:
        return f"demo-{self.variant}-seed{self.seed}"


def make_demo_site(
    out_dir: str | Path,
    settings: DemoSettings | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> Path:
    """Write a synthetic demo site (raw record + truth.json) to out_dir and return its path.

    Landsat C2 L2 scenes (scenes_per_year per active satellite), Sentinel-2 L2A from 2019 (sentinel2), MODIS and
    VIIRS NDVI composites (modis; plus MOD10A1 daily snow for variant "snow"), ERA5-Land monthly, ESA WorldCover
    2021 and the withheld Hansen loss year under reference/. `settings` (default DemoSettings()) with any of
    its fields given as keywords on top: make_demo_site(out, seed=3, size=48) (an unknown keyword is a
    TypeError). Deterministic for a seed: the same settings give byte-identical files, whatever `workers` is.
    """
    t_start = dt.datetime.now()
    out = Path(out_dir)
    s = dataclasses.replace(settings or DemoSettings(), **overrides).resolved()
    report = progress or (lambda f, m: None)
    report(0.0, "building the surface model")
    model = build_model(seed=s.seed, size=s.size, start=s.start, end=s.end, variant=s.variant)
    _prepare(out)
    plan = _landsat_plan(model, s.scenes_per_year, s.seed)
    s2_plan = _s2_plan(model, s.scenes_per_year, _rng(s.seed, 11)) if s.sentinel2 and s.end >= 2019 else []
    tasks, opts = _demo_tasks(model, s, plan, s2_plan)
    for d in ("landsat",) + (("sentinel2",) if s2_plan else ()) + (("modis", "viirs") if s.modis else ()):
        (out / d).mkdir(parents=True, exist_ok=True)
    cost = len(plan) * s.size * s.size * (12 if s.thermal else 10) + len(tasks) * 2e4
    nworkers = _workers(s.workers, cost)
    logger.info(
        "demo site %s: %d Landsat scenes, %d S2 products, %d other tasks, %d worker(s)",
        out,
        len(plan),
        len(s2_plan),
        len(tasks) - len(plan) - len(s2_plan),
        nworkers,
    )
    report(0.02, f"writing {len(plan)} Landsat scenes")
    results = _run_tasks(tasks, {"model": model, "root": out, "opts": opts}, nworkers, report)

    report(0.93, "writing climate, land cover and references")
    clim = _climate(model)
    files = _write_products(model, clim, out, s, results, len(plan), len(s2_plan))
    _write_site_doc(model, out, s)

    report(0.95, "writing truth.json")
    params = {
        "seed": s.seed,
        "size": s.size,
        "start": s.start,
        "end": s.end,
        "scenes_per_year": s.scenes_per_year,
        "variant": s.variant,
        "site_id": s.site_id,
    }
    landsat_info = sorted(results["landsat"], key=lambda r: (r["date"], r["id"]))
    s2_info = sorted(results["s2"], key=lambda r: (r["date"], r["id"]))
    doc, masks = _truth(model, clim, params, landsat_info, s2_info, files)
    from reviewer.schemas import validate

    validate(doc, "truth")
    buf = out / "truth_masks.npz"
    with open(buf, "wb") as fh:  # uncompressed savez, keys in fixed order: byte-identical for a seed
        np.savez(fh, **{k: masks[k] for k in sorted(masks)})
    (out / "truth.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    report(1.0, "demo site ready")
    logger.info("demo site %s written in %.1f s", out, (dt.datetime.now() - t_start).total_seconds())
    return out


def _demo_tasks(
    model: DemoSiteModel, s: DemoSettings, plan: list[Any], s2_plan: list[Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The writing tasks (Landsat scenes, S2 products, MODIS/VIIRS years, MOD10A1 winters) in a fixed order,
    and the options every worker shares (the coarse grids computed once)."""
    opts: dict[str, Any] = {"thermal": s.thermal, "mtl": s.mtl}
    tasks: list[dict[str, Any]] = [{"kind": "landsat", "spec": p} for p in plan]
    tasks += [{"kind": "s2", "spec": p} for p in s2_plan]
    if s.modis:
        opts["coarse250"] = _coarse(model, MODIS_250)
        opts["coarse500"] = _coarse(model, MODIS_500)
        for prod, (first, *_rest) in VI_PRODUCTS.items():
            for y in range(max(s.start, first.year), s.end + 1):
                tasks.append({"kind": "vi", "product": prod, "year": y})
        if s.variant == "snow" and s.extras:
            tasks += [{"kind": "mod10", "winter": w} for w in _snow_winters(model)]
    return tasks, opts


def _run_tasks(
    tasks: list[dict[str, Any]], state: dict[str, Any], nworkers: int, report: Progress
) -> dict[str, list[dict[str, Any]]]:
    """Run the writing tasks in this process or in a process pool; each task's info by kind, in finishing
    order (the caller sorts what it keeps)."""
    results: dict[str, list[dict[str, Any]]] = {"landsat": [], "s2": [], "vi": [], "mod10": []}
    total = len(tasks)
    done = 0

    def finished(kind: str, info: dict[str, Any]) -> None:
        nonlocal done
        results[kind].append(info)
        done += 1
        if done % 10 == 0 or done == total:
            report(0.02 + 0.9 * done / total, f"{done}/{total} products written")

    if nworkers == 1 or total < 2:
        _init_worker(state)
        try:
            for task in tasks:
                finished(*_run_task(task))
        finally:
            _WORKER.clear()
        return results
    method = "fork" if fork_is_safe() else "spawn"
    ctx = mp.get_context(method)
    if method == "fork":
        _init_worker(state)  # inherited by the forked workers: nothing to pickle
        pool = ProcessPoolExecutor(nworkers, mp_context=ctx)
    else:
        pool = ProcessPoolExecutor(nworkers, mp_context=ctx, initializer=_init_worker, initargs=(state,))
    try:
        with pool:
            futures = [pool.submit(_run_task, t) for t in tasks]
            for fut in as_completed(futures):
                finished(*fut.result())
    finally:
        _WORKER.clear()
    return results


def _write_products(
    model: DemoSiteModel,
    clim: dict[str, Any],
    out: Path,
    s: DemoSettings,
    results: dict[str, list[dict[str, Any]]],
    n_landsat: int,
    n_s2: int,
) -> dict[str, Any]:
    """ERA5-Land, WorldCover and the withheld Hansen loss year (as the settings ask), and truth's files section."""
    files: dict[str, Any] = {
        "landsat_scenes": n_landsat,
        "sentinel2_products": n_s2,
        "modis_vi_composites": sum(r["composites"] for r in results["vi"] if r["product"] != "VNP13A1"),
        "viirs_vi_composites": sum(r["composites"] for r in results["vi"] if r["product"] == "VNP13A1"),
        "mod10a1": sum(r["days"] for r in results["mod10"]),
        "era5": 0,
        "landcover": None,
        "reference": None,
    }
    if s.era5:
        files["era5"] = _write_era5(model, clim, out)
    wc_tile, hansen_tile = _tile_names(model)
    if s.landcover:
        (out / "landcover").mkdir(exist_ok=True)
        wc = WORLDCOVER[model.classes(dt.date(2021, 7, 1))]
        name = f"landcover/ESA_WorldCover_10m_2021_v200_{wc_tile}_Map.tif"
        _write(out / name, wc, model.grid.crs, model.grid.transform, 0)
        files["landcover"] = name
    if s.reference:
        (out / "reference").mkdir(exist_ok=True)
        loss = np.zeros(model.grid.shape, np.uint8)
        cy = model.ev.clear_date.year
        if 2001 <= cy <= 2024:
            loss[model.clear_mask] = cy - 2000
        name = f"reference/Hansen_GFC-2024-v1.12_lossyear_{hansen_tile}.tif"
        _write(out / name, loss, model.grid.crs, model.grid.transform, None)
        files["reference"] = name
    return files


def _write_site_doc(model: DemoSiteModel, out: Path, s: DemoSettings) -> None:
    """site.json (validated against its schema) and boundary.geojson."""
    site_doc = {
        "id": s.site_id,
        "name": f"Synthetic demo site ({s.variant}, seed {s.seed})",
        "kind": "core",
        "theme": "snow" if s.variant == "snow" else "water",
        "role": "famous",
        "bbox": [float(v) for v in model.grid.bounds],
        "crs": f"EPSG:{SITE_EPSG}",
        "boundary": "boundary.geojson",
        "resolution": RES,
        "shape": [s.size, s.size],
    }
    try:
        from reviewer.schemas import validate

        validate(site_doc, "site")
    except FileNotFoundError:  # pragma: no cover - schema not present
        pass
    (out / "boundary.geojson").write_text(json.dumps(_boundary(model), indent=1) + "\n", encoding="utf-8")
    (out / "site.json").write_text(json.dumps(site_doc, indent=2) + "\n", encoding="utf-8")
