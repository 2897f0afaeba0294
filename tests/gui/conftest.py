"""GUI fixtures: one small demo site per session (cached in pytest's cache dir between runs), its stored
index, and a reviewer window on napari's make_napari_viewer. Run under Xvfb:

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/pytest tests/gui
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

from tests.sites import make_site

SHOTS = Path(os.environ.get("REVIEWER_SHOTS", "/tmp/reviewer-gui-shots"))


def _cache_dir(request) -> Path:
    cache = getattr(request.config, "cache", None)
    name = f"reviewer-demo-64-{_inputs_key()}"  # a site or bank made by older code is never reused
    if cache is not None:
        return Path(cache.mkdir(name))
    return request.getfixturevalue("tmp_path_factory").mktemp(name)


def _inputs_key() -> str:
    """What the cached demo site and bank depend on: the generator version, the templates and generation code."""
    import hashlib

    import reviewer.bank.generate as gen
    from reviewer.bank.templates import TEMPLATES_PATH
    from reviewer.record.synthetic import GENERATOR_VERSION

    h = hashlib.sha256(GENERATOR_VERSION.encode())
    here = Path(gen.__file__)
    for path in (here, TEMPLATES_PATH, here.with_name("templates.py"), here.with_name("evidence.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


@pytest.fixture(scope="session")
def demo_site(request) -> Path:
    """A small synthetic site (Landsat TM/ETM+/OLI, Sentinel-2, MODIS, VIIRS), generated once and reused."""
    out = _cache_dir(request) / "site"
    if not (out / "truth.json").is_file():
        make_site(out, "gui")
    return out


@pytest.fixture(scope="session")
def demo_db(request, demo_site) -> Path:
    """A store that holds the demo site's index (scanned once per session)."""
    from reviewer.record.scan import open_index
    from reviewer.store import Store

    db = _cache_dir(request) / "store.sqlite"
    with Store(db) as store:
        open_index(demo_site, store)
    return db


@pytest.fixture
def shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


@pytest.fixture
def reviewer_app(make_napari_viewer, demo_db, tmp_path, qtbot):
    """A reviewer window on a fresh viewer (no site open yet)."""
    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    viewer = make_napari_viewer(show=True)
    app = ReviewerApp(viewer, db=demo_db, recent=RecentSites(tmp_path / "recent.json"), scoring=False)
    yield app
    app.close()


@pytest.fixture
def opened(reviewer_app, demo_site, qtbot):
    """The reviewer window with the demo site open and its first frame drawn."""
    app = reviewer_app
    app.open_site(demo_site)
    qtbot.waitUntil(lambda: app.session.stack is not None and len(app.session.stack) > 0, timeout=60000)
    wait_frame(app, qtbot)
    return app


def wait_frame(app, qtbot, timeout: int = 20000) -> None:
    """Wait until the shown date's frame has been read (off the UI thread) and drawn."""
    s = app.session

    def drawn() -> bool:
        return s.frame_shown() and s.image_layer.data.date == s.state.current

    qtbot.waitUntil(drawn, timeout=timeout)


@pytest.fixture(scope="session")
def demo_bank(request, demo_site) -> Path:
    """The candidate bank `reviewer generate` makes of the GUI demo site (seed 5), generated once and cached."""
    from reviewer.bank.generate import generate
    from reviewer.bank.options import GenerationOptions

    out = _cache_dir(request) / "candidates-seed5"
    if not (out / "manifest.json").is_file():
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            generate(demo_site, tmp, GenerationOptions(seed=5))
        tmp.rename(out)
    return out
