"""The layering contract (.importlinter) holds, covers every package, and bites.

import-linter builds the import graph of `reviewer` and `reviewer_napari` (imports inside functions
included) and checks six contracts: the core never imports Qt/napari/vispy/pyqtgraph, nor reviewer.app
or the plugin; the plugin sits on reviewer.app, which sits on the core; inside the core each package uses
only those before it in the data flow (record -> bank -> scoring -> review -> drafting -> runs -> failures);
no package has a cycle among its modules; only reviewer.record imports rasterio/GDAL/fiona. No display is
needed: nothing here imports Qt.
"""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".importlinter"

# The core named by the layering rules (DESIGN: the app and the plugin sit on top of these).
CORE = {
    "reviewer.record",
    "reviewer.bank",
    "reviewer.review",
    "reviewer.drafting",
    "reviewer.runs",
    "reviewer.scoring",
    "reviewer.failures",
    "reviewer.store",
    "reviewer.errors",
    "reviewer.schemas",
    "reviewer.fileio",
    "reviewer.console",
    "reviewer.progress",
    "reviewer.argtypes",
    "reviewer.imports",
}
ON_TOP = {"reviewer.app", "reviewer.cli"}
# The data flow (DESIGN.md), top first as import-linter lists layers.
DATA_FLOW = [
    "reviewer.cli",
    "reviewer.failures",
    "reviewer.runs",
    "reviewer.drafting",
    "reviewer.review",
    "reviewer.scoring",
    "reviewer.bank",
    "reviewer.record",
    "reviewer.store",
    "reviewer.schemas : reviewer.fileio : reviewer.console : reviewer.progress : reviewer.argtypes : reviewer.imports",
    "reviewer.errors",
]  # reviewer.cli only dispatches (importlib) to each package's verbs


def lint_imports(root: Path, *args: str) -> subprocess.CompletedProcess:
    """Run lint-imports on the tree at `root` (its reviewer/ and plugins/ shadow any installed copy)."""
    exe = Path(sys.executable).with_name("lint-imports")
    assert exe.is_file(), "import-linter is not installed: pip install -e '.[test]'"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "plugins"), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    return subprocess.run(
        [str(exe), "--no-cache", "--no-logo", str(root / ".importlinter"), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def contracts() -> dict[str, configparser.SectionProxy]:
    cfg = configparser.ConfigParser()
    cfg.read(CONFIG, encoding="utf-8")
    prefix = "importlinter:contract:"
    return {name[len(prefix) :]: cfg[name] for name in cfg.sections() if name.startswith(prefix)}


def names(section: configparser.SectionProxy, key: str) -> set[str]:
    return {line.strip() for line in section[key].splitlines() if line.strip()}


def top_level_modules() -> set[str]:
    """reviewer.<x> for every package and module directly under reviewer/ (not __init__)."""
    out = set()
    for p in (ROOT / "reviewer").iterdir():
        if p.is_dir() and (p / "__init__.py").is_file():
            out.add(f"reviewer.{p.name}")
        elif p.suffix == ".py" and p.stem != "__init__":
            out.add(f"reviewer.{p.stem}")
    return out


def test_the_layering_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 kept, 0 broken" in result.stdout, result.stdout


def test_every_reviewer_package_is_under_a_contract():
    c = contracts()
    assert set(c) == {"core-no-gui", "core-not-app", "gui-on-top", "data-flow", "no-cycles", "raster-io-in-record"}
    # a new package or top-level module must be placed: in the core, or on top with the app
    assert top_level_modules() == CORE | ON_TOP, "place the new module in .importlinter and in CORE or ON_TOP here"
    assert names(c["core-no-gui"], "source_modules") == CORE
    assert names(c["core-not-app"], "source_modules") == CORE
    assert names(c["core-not-app"], "forbidden_modules") == {"reviewer.app", "reviewer_napari"}
    assert {"qtpy", "PySide6", "PyQt5", "PyQt6", "napari", "vispy", "pyqtgraph"} <= names(
        c["core-no-gui"], "forbidden_modules"
    )
    layers = [line.strip() for line in c["gui-on-top"]["layers"].splitlines() if line.strip()]
    assert layers[:2] == ["reviewer_napari", "reviewer.app"]
    assert {m.strip() for m in layers[2].split(":")} == CORE
    assert [line.strip() for line in c["data-flow"]["layers"].splitlines() if line.strip()] == DATA_FLOW
    flow = {m.strip("() ") for layer in DATA_FLOW for m in layer.split(":")}
    assert flow - {"reviewer.cli"} == CORE
    assert c["no-cycles"]["type"] == "acyclic_siblings" and names(c["no-cycles"], "ancestors") == {"reviewer"}
    # every module but reviewer.record may not import raster I/O itself
    assert names(c["raster-io-in-record"], "source_modules") == (CORE | ON_TOP | {"reviewer_napari"}) - {
        "reviewer.record"
    }
    assert {"rasterio", "osgeo", "fiona"} <= names(c["raster-io-in-record"], "forbidden_modules")


def _scratch_tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "reviewer", root / "reviewer", ignore=ignore)
    shutil.copytree(ROOT / "plugins", root / "plugins", ignore=ignore)
    shutil.copy2(CONFIG, root / ".importlinter")
    return root


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        # an import inside a function counts as much as one at the top
        ("reviewer/store.py", "def _scratch():\n    import qtpy  # noqa\n", "core-no-gui"),
        ("reviewer/scoring/metrics.py", "from reviewer.app import state  # noqa\n", "core-not-app"),
        ("reviewer/bank/io.py", "def _scratch():\n    import rasterio  # noqa\n", "raster-io-in-record"),
        # against the data flow: scoring reading a failure set, the record reading a bank
        ("reviewer/scoring/metrics.py", "def _scratch():\n    import reviewer.failures.report  # noqa\n", "data-flow"),
        ("reviewer/record/tiff.py", "def _scratch():\n    from reviewer.bank import io  # noqa\n", "data-flow"),
        # a cycle inside a package: the shared grid module importing a reader that imports it
        ("reviewer/record/grid.py", "def _scratch():\n    from reviewer.record import hdf  # noqa\n", "no-cycles"),
    ],
    ids=[
        "qtpy-inside-a-function",
        "app-from-scoring",
        "rasterio-outside-record",
        "failures-from-scoring",
        "bank-from-record",
        "cycle-in-record",
    ],
)
def test_a_broken_rule_fails_the_contract(tmp_path, module, line, contract):
    """The contracts bite: one forbidden import in a scratch copy of the tree breaks the named contract."""
    root = _scratch_tree(tmp_path)
    path = root / module
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + line, encoding="utf-8")
    result = lint_imports(root, "--contract", contract)
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout, result.stdout
    dotted = module.removesuffix(".py").replace("/", ".")
    if contract == "no-cycles":  # named as the package and the import that closes the circle
        package, _, name = dotted.rpartition(".")
        assert f"No cycles are allowed in {package}." in result.stdout, result.stdout
        assert f"- .{name} -> " in result.stdout, result.stdout
    else:
        assert dotted in result.stdout, result.stdout
