"""Worker plumbing of the synthetic demo site: the state each worker process holds and the task dispatch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewer.record.synthetic.coarse import _render_mod10_winter, _render_vi_year
from reviewer.record.synthetic.landsat import _render_landsat
from reviewer.record.synthetic.model import DemoSiteModel
from reviewer.record.synthetic.sentinel2 import _render_s2

# --------------------------------------------------------------------------------------------------------------
# Worker plumbing
# --------------------------------------------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _init_worker(state: dict[str, Any]) -> None:
    _WORKER.clear()
    _WORKER.update(state)


def _run_task(task: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    model: DemoSiteModel = _WORKER["model"]
    root: Path = _WORKER["root"]
    opts = _WORKER["opts"]
    kind = task["kind"]
    if kind == "landsat":
        return kind, _render_landsat(model, task["spec"], root / "landsat", opts)
    if kind == "s2":
        return kind, _render_s2(model, task["spec"], root / "sentinel2", opts)
    if kind == "vi":
        return kind, _render_vi_year(model, task, root, opts)
    if kind == "mod10":
        return kind, _render_mod10_winter(model, task, root, opts)
    raise ValueError(kind)
