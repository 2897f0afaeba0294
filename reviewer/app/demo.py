"""The demo site and the list of recently opened sites (both in the user's directories)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import platformdirs

from reviewer.errors import ReviewerError

logger = logging.getLogger(__name__)

APP_NAME = "earthrecord-reviewer"


def demo_site_dir() -> Path:
    """Where the demo site lives: REVIEWER_DEMO_DIR, else the user cache directory."""
    env = os.environ.get("REVIEWER_DEMO_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir(APP_NAME)) / "demo-site"


def ensure_demo_site(progress=None, **kwargs) -> Path:
    """Generate the demo site once (regenerated when its truth.json is missing) and return its folder."""
    out = demo_site_dir()
    if (out / "truth.json").is_file() and (out / "site.json").is_file():
        return out
    try:
        from reviewer.record.synthetic import make_demo_site
    except ImportError as exc:
        raise ReviewerError("the demo site generator (reviewer.record.synthetic) is not available") from exc
    if progress is not None:
        progress(0.0, "generating the demo site (once)")
        kwargs.setdefault("progress", progress)
    logger.info("generating the demo site in %s", out)
    return Path(make_demo_site(out, **kwargs))


class RecentSites:
    """Most recently opened site folders, newest first, kept in a small JSON file."""

    def __init__(self, path: str | Path | None = None, limit: int = 8) -> None:
        env = os.environ.get("REVIEWER_RECENT_FILE")
        self.path = Path(path or env or Path(platformdirs.user_config_dir(APP_NAME)) / "recent_sites.json")
        self.limit = limit

    def load(self) -> list[str]:
        try:
            items = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [str(p) for p in items if isinstance(p, str)][: self.limit]

    def add(self, site_dir: str | Path) -> list[str]:
        site_dir = str(Path(site_dir).resolve())
        items = [site_dir] + [p for p in self.load() if p != site_dir]
        items = items[: self.limit]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(items, indent=1), encoding="utf-8")
        except OSError as exc:
            logger.warning("cannot save recent sites: %s", exc)
        return items
