"""Shared fixtures: the real raster fixtures in ../shared/data/real (read in place, never copied into the repo)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REAL = Path(os.environ.get("EARTHRECORD_REAL_DATA", REPO.parent / "shared" / "data" / "real"))

#: the per-user folders (recent sites, settings, caches) of everything the tests run, never the user's own
XDG_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")


def pytest_configure(config) -> None:
    """Point the XDG folders (platformdirs reads them for the app's recent sites and caches; napari for its
    settings) at a temporary folder before any test imports the app: a test run never writes into the user's
    own ~/.config or ~/.cache (a pytest folder's site once showed up in a user's recent sites)."""
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="reviewer-tests-home-"))
    for name in XDG_VARS:
        os.environ[name] = str(home / name.lower())
    os.environ.pop("REVIEWER_RECENT_FILE", None)
    config.reviewer_test_home = home


@pytest.fixture(autouse=True)
def _logging_levels_of_the_test_only():
    """Loggers' levels a test sets (main.py's `main` puts the tool's logger at INFO, as on a user's terminal) end
    with it: left at INFO, every later test formatted the tool's INFO lines through napari's test LogRecord, which
    turns the arguments into text ('%d format: a real number is required, not str' in a percentile stretch)."""
    import logging

    names = ["reviewer", *[n for n in logging.root.manager.loggerDict if n.startswith("reviewer.")]]
    levels = {n: logging.getLogger(n).level for n in names}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


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


def pytest_unconfigure(config) -> None:
    import shutil

    home = getattr(config, "reviewer_test_home", None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)
