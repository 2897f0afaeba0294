"""The scoring report as a reader sees it: rendered by headless Chromium, nothing runs off the page."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
from PIL import Image
from test_scoring_metrics import all_runs, make_bank

from reviewer.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is installed by `make test` (SYS_PKGS)")
def test_report_renders_within_a_laptop_width(tmp_path):
    bank = make_bank(tmp_path / "bank")
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    out = tmp_path / "out"
    assert main(["score", str(bank), str(runs), "--out", str(out), "--bootstrap", "20"]) == 0
    png = tmp_path / "report.png"
    width = 1280
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--window-size={width},3000",
         f"--screenshot={png}", (out / "report.html").as_uri()],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    page = np.asarray(Image.open(png).convert("L"))
    assert page.shape[1] == width
    ink = np.flatnonzero((page < 200).any(axis=0))
    assert ink.size, "the page rendered blank"
    # the body has a 2em margin on both sides: text or figures touching the right edge ran off the page
    assert ink.max() < width - 16, ink.max()
    assert ink.min() >= 16
