"""Shared fixtures: the real raster fixtures in ../shared/data/real (read in place, never copied into the repo)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REAL = Path(os.environ.get("EARTHRECORD_REAL_DATA", REPO.parent / "shared" / "data" / "real"))


@pytest.fixture(scope="session")
def real_dir() -> Path:
    if not REAL.is_dir():
        pytest.skip(f"real fixtures not found at {REAL}")
    return REAL


def write_site_json(site_dir: Path, **doc) -> Path:
    base = {"id": "t1", "name": "test site", "kind": "core", "theme": "forest", "role": "obscure"}
    base.update(doc)
    site_dir.mkdir(parents=True, exist_ok=True)
    (site_dir / "site.json").write_text(json.dumps(base))
    return site_dir
