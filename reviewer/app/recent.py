"""The list of recently opened sites (the demo site itself is reviewer.record.demo)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import platformdirs

from reviewer import APP_NAME

logger = logging.getLogger(__name__)


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
