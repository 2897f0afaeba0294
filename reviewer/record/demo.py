"""The embedded demo site: generated once into the user cache directory, then reused."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import platformdirs

logger = logging.getLogger(__name__)


def demo_site_dir() -> Path:
    """REVIEWER_DEMO_DIR, else the user cache directory."""
    env = os.environ.get("REVIEWER_DEMO_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir("earthrecord-reviewer")) / "demo-site"


def ensure_demo_site(progress: Callable[[float, str], None] | None = None, **kwargs) -> Path:
    """The cached demo site; written (atomically, via a temporary folder) when missing or incomplete."""
    from reviewer.record.synthetic import make_demo_site

    target = demo_site_dir()
    if (target / "truth.json").is_file() and (target / "site.json").is_file():
        return target
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    logger.info("generating the demo site into %s", target)
    make_demo_site(tmp, progress=progress, **kwargs)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target
