"""EarthRecord Reviewer: build, review, freeze and score a land-change question bank."""

from importlib.resources import files
from pathlib import Path

__version__ = "0.1.0"

#: The name of the tool's per-user folders (platformdirs: data, config, cache).
APP_NAME = "earthrecord-reviewer"


def _resource_dir(name: str) -> Path:
    """A folder of the package's data (reviewer/resources/<name>), found through importlib.resources so that
    a wheel or pipx install finds it as the source tree does; the tool needs it as files on disk."""
    found = files(__name__).joinpath("resources", name)
    if not isinstance(found, Path) or not found.is_dir():
        raise ImportError(f"reviewer: package data {name}/ missing from {found} (a broken or zipped install)")
    return found


#: JSON Schemas (2020-12) of every file read or written
SCHEMAS_DIR = _resource_dir("schemas")
#: the review store's SQL migrations (migrations/NNNN_*.sql)
DB_DIR = _resource_dir("db")
#: rules, codebooks and prompt templates kept as data (review/, drafting/, failures/)
ASSETS_DIR = _resource_dir("assets")
