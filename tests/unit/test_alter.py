"""Altered copies of a record (instrument and placebo pairs) and their checks, on a small demo site."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import rasterio

from reviewer.bank.alter import alter_record
from reviewer.errors import BankError
from reviewer.schemas import problems

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from tests.unit.test_generate_demo import _make_site

    return _make_site(tmp_path_factory.mktemp("alter") / "site")


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_scale_rewrites_only_the_satellites_band(site, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = alter_record(site, tmp_path / "a", satellite="landsat8", variable="nir", scale=0.8, date_from="2016")
    assert r.altered_files and all("LC08" in f and f.endswith("SR_B5.TIF") for f in r.altered_files)
    assert all(f[9:13] >= "2016" for f in (p.split("/")[-1] for p in r.altered_files))
    orig = site / r.altered_files[0]
    new = tmp_path / "a" / r.altered_files[0]
    with rasterio.open(orig) as a, rasterio.open(new) as b:
        ra, rb = a.read(1).astype(float), b.read(1).astype(float)
    ok = (ra >= 7273) & (ra <= 43636)
    # physical = DN * 2.75e-5 - 0.2, scaled by 0.8, back to DN: worked by hand for each pixel
    expected = np.clip(np.rint(((ra * 2.75e-5 - 0.2) * 0.8 + 0.2) / 2.75e-5), 7273, 43636)
    assert np.array_equal(rb[ok], expected[ok])
    assert np.array_equal(rb[ra == 0], ra[ra == 0])  # fill kept
    # everything else is the same file (link or copy), truth is not carried over
    unchanged = [f for f in _files(site) if f not in r.altered_files and not f.startswith("truth")]
    assert set(unchanged) <= set(_files(tmp_path / "a"))
    assert (site / unchanged[0]).read_bytes() == (tmp_path / "a" / unchanged[0]).read_bytes()
    assert not (tmp_path / "a" / "truth.json").exists()
    pair = r.pair | {"question": "q-1"}
    assert problems(pair, "pair") == []
    assert r.detect_check is not None and "detectable" in r.detect_check


def test_replace_and_placebo(site, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = alter_record(site, tmp_path / "r", satellite="landsat8", replace_with="landsat7", date_from="2013",
                         date_to="2017")
        p1 = alter_record(site, tmp_path / "p1", drop_clear=0.05, seed=3)
        p2 = alter_record(site, tmp_path / "p2", drop_clear=0.05, seed=3)
    left = _files(tmp_path / "r")
    assert r.removed_scenes and not any(s in f for s in r.removed_scenes for f in left)
    assert r.pair["alteration"] == "replace" and r.pair["replacement"] == "landsat7"
    assert p1.pair["kind"] == "placebo" and p1.removed_scenes == p2.removed_scenes  # seeded
    assert p1.kept is True
    assert json.loads((tmp_path / "p1" / "pair.json").read_text())["pair"]["fraction"] == 0.05


def test_method_check_reports_changed_methods(site, tmp_path):
    from reviewer.bank.generate import generate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        generate(site, tmp_path / "bank", tasks=["quantify"])
        q = next(json.loads(line) for line in (tmp_path / "bank" / "questions.jsonl").read_text().splitlines()
                 if '"quantify.water_area"' in line and '"computable"' in line)
        # water scaled up strongly on every Landsat 8 scene: the water methods' areas change
        r = alter_record(site, tmp_path / "w", satellite="landsat8", variable="water", scale=1.5,
                         date_from="2013", question=q["id"], bank=tmp_path / "bank")
    mc = r.method_check
    assert mc["template"] == "quantify.water_area" and set(mc["methods"]["original"])
    assert isinstance(mc["changed"], bool)


@pytest.mark.parametrize("kwargs, message", [
    ({"satellite": "landsat8"}, "exactly one"),
    ({"scale": 0.8}, "--satellite"),
    ({"satellite": "nosuch", "scale": 0.8}, "unknown satellite"),
    ({"drop_clear": 1.5}, "fraction"),
    ({"satellite": "terra", "variable": "ndvi", "scale": 0.8}, "no ndvi files"),
])
def test_bad_requests(site, tmp_path, kwargs, message):
    with pytest.raises(BankError, match=message):
        alter_record(site, tmp_path / "x", **kwargs)
