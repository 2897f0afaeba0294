"""EarthRecord Reviewer: build, review, freeze and score a land-change question bank."""

from pathlib import Path

__version__ = "0.1.0"

#: The name of the tool's per-user folders (platformdirs: data, config, cache).
APP_NAME = "earthrecord-reviewer"

#: The project root (schemas/, db/, assets/ live beside the package).
ROOT = Path(__file__).resolve().parent.parent
SCHEMAS_DIR = ROOT / "schemas"
DB_DIR = ROOT / "db"
ASSETS_DIR = ROOT / "assets"
