"""What pyproject.toml cannot say: schemas/, db/ and assets/ stay top-level folders of the repository
(DESIGN.md section 3) and ship inside the wheel as the data packages reviewer._schemas, reviewer._db and
reviewer._assets (every subfolder its own package, no __init__.py needed), which reviewer/__init__.py finds
through importlib.resources when it is not running from a checkout. Everything else is in pyproject.toml.
"""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
#: data package -> top-level folder it ships
DATA = {"reviewer._schemas": "schemas", "reviewer._db": "db", "reviewer._assets": "assets"}


def data_packages() -> dict[str, str]:
    """Each data folder and its subfolders as package name -> folder (relative, as setuptools wants it)."""
    out = {}
    for package, folder in DATA.items():
        root = HERE / folder
        for sub in sorted(p for p in [root, *root.rglob("*")] if p.is_dir() and p.name != "__pycache__"):
            parts = sub.relative_to(root).parts
            out[".".join([package, *parts])] = Path(folder, *parts).as_posix()
    return out


data = data_packages()
setup(
    packages=[
        *find_packages(include=["reviewer", "reviewer.*"]),
        *find_packages("plugins", include=["reviewer_napari", "reviewer_napari.*"]),
        *data,
    ],
    package_dir={"reviewer_napari": "plugins/reviewer_napari", **data},
)
