"""mypy passes on the core packages with the configuration in pyproject.toml ([tool.mypy]: its strictness, and
the modules whose errors predate the check).

The cache is kept between runs (pytest's cache folder when there is one): a cold check of the core takes about
25 s of CPU (a minute and more of wall time on a busy two-CPU machine), a warm one 2-3 s.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(600)


def _mypy(cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(cache), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=580,
    )


@pytest.fixture
def cache(request, tmp_path) -> Path:
    store = getattr(request.config, "cache", None)
    return store.mkdir("mypy") if store is not None else tmp_path / "mypy"


def test_mypy_passes_on_the_core(cache):
    result = _mypy(cache)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout


def test_mypy_sees_a_type_error_in_a_clean_module(cache, tmp_path):
    """The check bites: a wrong return type in a module not on the override list fails it."""
    scratch = tmp_path / "reviewer"
    scratch.mkdir()
    (scratch / "__init__.py").write_text("")
    (scratch / "argtypes_typo.py").write_text('def count() -> int:\n    return "three"\n')
    result = _mypy(cache, str(scratch / "argtypes_typo.py"))
    assert result.returncode != 0
    assert "Incompatible return value type" in result.stdout, result.stdout
