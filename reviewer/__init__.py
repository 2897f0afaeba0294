"""EarthRecord Reviewer: build, review, freeze and score a land-change question bank."""

from pathlib import Path

__version__ = "0.1.0"

#: The name of the tool's per-user folders (platformdirs: data, config, cache).
APP_NAME = "earthrecord-reviewer"

#: The source checkout this package sits in, when it sits in one (schemas/, db/, assets/ are its top-level
#: folders, DESIGN.md section 3); None for an installed wheel.
_ROOT = Path(__file__).resolve().parent.parent
_CHECKOUT: Path | None = _ROOT if (_ROOT / "pyproject.toml").is_file() else None


def _resource_dir(name: str) -> Path:
    """The folder of the tool's data called `name` (schemas, db, assets): the checkout's own top-level folder
    when running from one (an editable install, PYTHONPATH), else the package data an installed wheel ships as
    reviewer._<name> (setup.py), found through importlib.resources."""
    if _CHECKOUT is not None and (_CHECKOUT / name).is_dir():
        return _CHECKOUT / name
    from importlib.resources import files

    found = files(f"{__name__}._{name}")
    if not isinstance(found, Path):  # a data package has no __init__.py: the folder its entries are in
        entry = next(iter(found.iterdir()), None)
        found = entry.parent if isinstance(entry, Path) else found
    if not isinstance(found, Path) or not found.is_dir():
        raise ImportError(f"reviewer: package data {name}/ missing ({found}): a broken or zipped install")
    return found


#: JSON Schemas (2020-12) of every file read or written
SCHEMAS_DIR = _resource_dir("schemas")
#: the review store's SQL migrations (migrations/NNNN_*.sql)
DB_DIR = _resource_dir("db")
#: rules, codebooks and prompt templates kept as data (review/, drafting/, failures/)
ASSETS_DIR = _resource_dir("assets")
