"""What the CLI prints is usable in a shell: results on stdout, messages on stderr, no library warnings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _reviewer(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "reviewer.cli", *args], capture_output=True, text=True, timeout=300, env=env
    )


def test_demo_prints_only_the_site_path(demo, tmp_path):
    """`cd "$(reviewer demo)"` must land in the demo site: stdout is the path and nothing else."""
    env = {**os.environ, "REVIEWER_DEMO_DIR": str(demo["site"]), "XDG_DATA_HOME": str(tmp_path)}
    done = _reviewer("demo", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{demo['site']}\n"
    assert (Path(done.stdout.strip()) / "site.json").is_file()


def test_demo_render_message_goes_to_stderr(demo, tmp_path):
    env = {**os.environ, "REVIEWER_DEMO_DIR": str(demo["site"]), "XDG_DATA_HOME": str(tmp_path)}
    png = tmp_path / "pair.png"
    done = _reviewer("demo", "--render", str(png), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{demo['site']}\n"
    assert f"wrote {png}" in done.stderr and png.stat().st_size > 0
