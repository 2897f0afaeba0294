"""The package installs like any other: a wheel in a fresh virtual environment, outside the source tree.

The wheel is built from a copy of the source (pyproject, setup.py, README, reviewer/, plugins/ and the
top-level schemas/, db/, assets/, which it ships as the data packages reviewer._schemas etc.) and installed with
`pip install --no-deps` into a new venv in a temporary folder. Installing every dependency again (napari,
PySide6, rasterio...) would take minutes, so the new venv reads them from the venv running this test: a
.pth file names that venv's site-packages (derived from sys.executable, whatever venv it is). That folder
holds only an editable finder for reviewer, which a .pth line does not run, so `reviewer` resolves to the
installed wheel; the test checks that it does. PYTHONPATH is cleared and the working folder is the
temporary one, so nothing can reach the source tree. Then a user's first session through the installed
console script: --version, demo-site, scan, and review verbs on a store the installed migrations create,
with a bank checked against the installed schemas and decided by the installed workflow rules.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import bank_factory as bf
import pytest

import reviewer
from reviewer.bank.io import BankContent, write_bank

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(600)


def _run(cmd: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{cmd}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str], Path]:
    """(the new venv's bin folder, an environment without the source tree, a scratch folder)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("reviewer", "plugins"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("schemas", "db", "assets"):  # the top-level data folders the wheel ships as reviewer._<name>
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(HOME=str(tmp / "home"), XDG_DATA_HOME=str(tmp / "data"), XDG_CACHE_HOME=str(tmp / "cache"))
    env.update(XDG_CONFIG_HOME=str(tmp / "config"), REVIEWER_USER="")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"), str(src)], env=env, cwd=tmp)
    (wheel,) = (tmp / "dist").glob("earthrecord_reviewer-*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env=env, cwd=tmp)
    bin_dir = venv / "bin"
    new_python = bin_dir / "python"
    purelib = _run(
        [str(new_python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], env=env, cwd=tmp
    ).stdout.strip()
    # the dependencies: the site-packages of the venv running this test (not a hard-coded path)
    shared = sysconfig.get_path("purelib")
    Path(purelib, "_shared_dependencies.pth").write_text(shared + "\n", encoding="utf-8")
    _run([*pip, "--python", str(new_python), "install", "--no-deps", "--no-index", str(wheel)], env=env, cwd=tmp)
    return bin_dir, env, tmp


def test_the_wheel_holds_the_package_data(installed):
    bin_dir, env, tmp = installed
    probe = (
        "import reviewer, json; from reviewer.schemas import validator; "
        "print(json.dumps([reviewer.__file__, str(reviewer.SCHEMAS_DIR), str(reviewer.DB_DIR), "
        "str(reviewer.ASSETS_DIR), validator('question').schema['$schema']]))"
    )
    out = _run([str(bin_dir / "python"), "-c", probe], env=env, cwd=tmp).stdout
    import json

    where, schemas, db, assets, dialect = json.loads(out)
    venv = str(tmp / "venv")
    # the installed copy, not the source tree this test runs from
    assert where.startswith(venv) and not where.startswith(str(ROOT)), where
    # the package data of the wheel (reviewer/_schemas, ...), found through importlib.resources
    installed = Path(where).parent
    assert (schemas, db, assets) == tuple(str(installed / f"_{n}") for n in ("schemas", "db", "assets"))
    assert dialect == "https://json-schema.org/draft/2020-12/schema"
    for name in ("schemas", "db", "assets"):
        src = {p.relative_to(ROOT / name) for p in (ROOT / name).rglob("*.*")}
        shipped = {p.relative_to(installed / f"_{name}") for p in (installed / f"_{name}").rglob("*.*")}
        assert src and src <= shipped, f"missing from the wheel: {sorted(map(str, src - shipped))}"
    # and every package of the source tree (a new one is found without being listed)
    for init in (ROOT / "reviewer").rglob("__init__.py"):
        assert (installed / init.parent.relative_to(ROOT / "reviewer") / "__init__.py").is_file(), init


def test_a_first_session_with_the_installed_console_script(installed, tmp_path):
    bin_dir, env, tmp = installed
    exe = str(bin_dir / "reviewer")

    def reviewer_(*argv: str) -> str:
        return _run([exe, *argv], env=env, cwd=tmp_path).stdout

    assert reviewer_("--version").strip() == f"reviewer (EarthRecord Reviewer) {reviewer.__version__}"
    site = tmp_path / "site"
    small = ["--size", "32", "--start", "2019", "--end", "2020", "--scenes-per-year", "2"]
    assert "wrote the demo site" in reviewer_("demo-site", *small, str(site))
    db = str(tmp_path / "review.sqlite")
    scanned = reviewer_("--db", db, "scan", str(site))
    assert "OLI" in scanned and "MODIS Terra" in scanned and "VIIRS" in scanned, scanned
    # review verbs: the store made by the installed migrations, the bank checked by the installed schemas
    bank = write_bank(
        tmp_path / "bank",
        BankContent(
            "rb",
            "1",
            [bf.trend_question("q000"), bf.trend_question("q001")],
            [bf.site()],
            [],
            created="2026-11-30T12:00:00Z",
        ),
    )
    assert bank["counts"]["questions"] == 2
    reviewer_("--db", db, "users", "add", "mia", "--role", "maintainer")
    reviewer_("--db", db, "users", "add", "ann", "--role", "annotator", "--user", "mia")
    assert "2 questions" in reviewer_("--db", db, "bank", "import", str(tmp_path / "bank"), "--user", "mia")
    reviewer_("--db", db, "review", "assign", "rb", "--annotators", "ann", "--k", "1", "--user", "mia")
    reviewer_("--db", db, "review", "decide", "q000", "--accept", "--bank", "rb", "--user", "ann")
    status = reviewer_("--db", db, "review", "status", "rb", "--user", "mia")
    ann = next(line.split() for line in status.splitlines() if line.startswith("ann "))
    assert ann[1:3] == ["1", "2"], status  # done 1 of 2 assigned
    assert "consensus_accepted 1, in_review 1" in status, status  # one annotator per item: one accept decides
