"""The embedded demo site: generated once into the user cache directory, then reused."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import platformdirs

from reviewer import APP_NAME
from reviewer.record.synthetic_version import GENERATOR_VERSION

logger = logging.getLogger(__name__)


def demo_site_dir() -> Path:
    """REVIEWER_DEMO_DIR, else the user cache directory."""
    env = os.environ.get("REVIEWER_DEMO_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir(APP_NAME)) / "demo-site"


def ensure_demo_site(progress: Callable[[float, str], None] | None = None, **kwargs) -> Path:
    """The cached demo site; written (atomically, via a temporary folder) when missing or incomplete."""
    from reviewer.record.synthetic import make_demo_site

    target = demo_site_dir()
    if _complete(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # a unique temporary folder: two processes generating at once never write into each other's
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        logger.info("generating the demo site into %s", target)
        make_demo_site(tmp, progress=progress, **kwargs)
        os.chmod(tmp, 0o755)
        if not _complete(target):
            shutil.rmtree(target, ignore_errors=True)
            try:
                os.rename(tmp, target)
            except OSError:
                if not _complete(target):  # another process finished first: keep its copy
                    raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def cached_demo_site() -> Path | None:
    """The demo site if the cache already holds it whole (a few ms: one small JSON read), else None."""
    target = demo_site_dir()
    return target if _complete(target) else None


def _complete(folder: Path) -> bool:
    """Both files written last are there, by the generator version this code writes (an older demo in the
    cache is made again, so the demo never shows what a since-fixed generator got wrong)."""
    import json

    if not ((folder / "truth.json").is_file() and (folder / "site.json").is_file()):
        return False
    try:
        truth = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return truth.get("generator", {}).get("version") == GENERATOR_VERSION
