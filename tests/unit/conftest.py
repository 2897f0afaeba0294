"""Session fixtures shared by the generation and pair tests: small synthetic demo sites and their candidate banks
(built once per test session; tests that change a bank work on a copy)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from tests.sites import drop_ndvi_composites, make_site


def make_core_site(path: Path) -> Path:
    """A 64 x 64 px core demo site, 1996-2020, 6 Landsat scenes a year, no MODIS/S2/thermal/MTL."""
    make_site(path, "core")
    return path


def make_snow_site(path: Path) -> Path:
    """A 32 x 32 px snow-variant demo site, 2014-2020: MOD10A1 daily snow cover for winters 2016-2020, one
    Landsat scene a year; the MODIS/VIIRS NDVI composites the generator also writes are removed (the snow
    tests do not use them, and indexing them would cost more than the rest)."""
    make_site(path, "snow")
    return drop_ndvi_composites(path)


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """The core demo site, its truth and its candidate bank (all tasks, seed 5)."""
    from reviewer.bank.generate import generate
    from reviewer.bank.io import load_bank
    from reviewer.bank.options import GenerationOptions

    site = make_core_site(tmp_path_factory.mktemp("gen") / "site")
    out = site.parent / "candidates"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = generate(site, out, GenerationOptions(seed=5))
    truth = json.loads((site / "truth.json").read_text())
    bank = load_bank(out)
    masks = dict(np.load(site / "truth_masks.npz"))
    return {"site": site, "out": out, "report": report, "truth": truth, "bank": bank, "masks": masks}


@pytest.fixture(scope="session")
def snow_demo(tmp_path_factory):
    """The snow demo site, its truth and its candidate bank (compare task only)."""
    from reviewer.bank.generate import generate
    from reviewer.bank.io import load_bank
    from reviewer.bank.options import GenerationOptions

    site = make_snow_site(tmp_path_factory.mktemp("snow") / "site")
    out = site.parent / "candidates"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = generate(site, out, GenerationOptions(tasks=("compare",), seed=1))
    truth = json.loads((site / "truth.json").read_text())
    return {"site": site, "out": out, "report": report, "truth": truth, "bank": load_bank(out)}


@pytest.fixture
def bank_copy(tmp_path):
    """copy(bank_dir) -> a writable copy of a session bank folder."""

    def copy(folder: Path) -> Path:
        dst = tmp_path / f"bank-{Path(folder).parent.name}"
        shutil.copytree(folder, dst)
        return dst

    return copy
