"""Altered copies of a record (instrument and placebo pairs), their checks and their pair records, on the small
demo sites of conftest.py (shared with the generation tests)."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest
import rasterio

from reviewer.bank.alter import REPORT, Alteration, alter_record
from reviewer.bank.io import load_bank, validate_bank
from reviewer.errors import BankError, ReviewerError
from reviewer.schemas import problems

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def _alter_record(site, out, **kw):
    """alter_record with the Alteration's fields and the other options as keywords, as the tests write them."""
    fields = {f.name for f in dataclasses.fields(Alteration)}
    change = Alteration(**{k: v for k, v in kw.items() if k in fields})
    return alter_record(site, out, change, **{k: v for k, v in kw.items() if k not in fields})


def _alter(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _alter_record(*args, **kw)


def _question(bank, template):
    return next(q for q in bank.questions if q["provenance"]["template"] == template and q["class"] != "insufficient")


def test_scale_against_the_bank_keeps_pairs_that_pass_both_checks(demo, bank_copy, tmp_path, capsys):
    site, bank = demo["site"], bank_copy(demo["out"])
    r = _alter(site, tmp_path / "a", satellite="landsat8", variable="nir", scale=0.6, date_from="2013", bank=bank)
    # only Landsat 8 NIR files from 2013 on are rewritten, by the DN arithmetic worked by hand
    assert r.altered_files and all("LC08" in f and f.endswith("SR_B5.TIF") for f in r.altered_files)
    assert all(f[17:21] >= "2013" for f in (p.split("/")[-1] for p in r.altered_files))
    with rasterio.open(site / r.altered_files[0]) as a, rasterio.open(tmp_path / "a" / r.altered_files[0]) as b:
        ra, rb = a.read(1).astype(float), b.read(1).astype(float)
    ok = (ra >= 7273) & (ra <= 43636)
    expected = np.clip(np.rint(((ra * 2.75e-5 - 0.2) * 0.6 + 0.2) / 2.75e-5), 7273, 43636)
    assert np.array_equal(rb[ok], expected[ok])
    assert np.array_equal(rb[ra == 0], ra[ra == 0])  # fill kept
    unchanged = [f for f in _files(site) if f not in r.altered_files and not f.startswith("truth")]
    assert set(unchanged) <= set(_files(tmp_path / "a"))
    assert (site / unchanged[0]).read_bytes() == (tmp_path / "a" / unchanged[0]).read_bytes()
    assert not (tmp_path / "a" / "truth.json").exists()

    # questions chosen by the checks: Landsat-method questions whose period reaches 2013; insufficient never
    assert r.detect_check["detectable"] is True
    assert r.kept and r.rejected
    questions = {q["id"]: q for q in demo["bank"].questions}
    for item in r.kept + r.rejected:
        q = questions[item["pair"]["question"]]
        assert q["class"] != "insufficient" and q["period"]["end"] >= "2013"
        assert item["pair"]["id"] == q["id"] + "-p1"
        assert problems(item["pair"], "pair") == []
    for k in r.kept:
        assert k["method_check"]["changed"] and k["method_check"]["changed_methods"]
    for rej in r.rejected:
        assert rej["failed"] == ["method"] and not rej["method_check"]["changed"]
    # kept pairs are in the bank (hashes and counts rewritten), and in the report with the rejected ones
    b = load_bank(bank)
    assert validate_bank(bank) == []
    assert [p["id"] for p in b.pairs] == [p["id"] for p in r.pairs] and r.added_to_bank == len(r.pairs)
    report = json.loads((tmp_path / "a" / REPORT).read_text())
    assert len(report["kept"]) == len(r.kept) and report["rejected"][0]["failed"] == ["method"]
    assert not (tmp_path / "a" / "pair.json").exists()

    # a second pair for a question that has one gets the next id; replace removes the satellite's scenes
    qid = r.pairs[0]["question"]
    r2 = _alter(
        site,
        tmp_path / "r",
        satellite="landsat8",
        replace_with="landsat7",
        date_from="2013",
        date_to="2017",
        bank=bank,
        question=qid,
    )
    (item,) = r2.kept + r2.rejected
    assert item["pair"]["id"] == qid + "-p2" and item["pair"]["alteration"] == "replace"
    assert item["pair"]["replacement"] == "landsat7" and problems(item["pair"], "pair") == []
    left = _files(tmp_path / "r")
    assert r2.removed_scenes and not any(s in f for s in r2.removed_scenes for f in left)
    assert validate_bank(bank) == []
    assert len(load_bank(bank).pairs) == len(r.pairs) + len(r2.kept)


def test_placebo_is_seeded_and_checked_for_a_stable_conclusion(demo, tmp_path):
    site = demo["site"]
    q = _question(demo["bank"], "quantify.water_area")
    p1 = _alter(site, tmp_path / "p1", drop_clear=0.05, seed=3, question=q["id"])
    p2 = _alter(site, tmp_path / "p2", drop_clear=0.05, seed=3, question=q["id"])
    assert p1.removed_scenes and p1.removed_scenes == p2.removed_scenes  # seeded
    (pair,) = p1.pairs  # no bank: no check, kept
    assert pair["kind"] == "placebo" and pair["fraction"] == 0.05 and pair["question"] == q["id"]
    assert problems(pair, "pair") == []
    assert json.loads((tmp_path / "p1" / REPORT).read_text())["kept"][0]["pair"] == pair
    before = (demo["out"] / "pairs.jsonl").read_bytes()
    p3 = _alter(site, tmp_path / "p3", drop_clear=0.05, seed=3, question=q["id"], bank=demo["out"], dry_run=True)
    (item,) = p3.kept + p3.rejected
    mc = item["method_check"]
    assert mc["placebo"] is True and mc["stable"] == (mc["altered_conclusion"] == q["reference"]["direction"])
    assert (item in p3.kept) == mc["stable"]
    assert (demo["out"] / "pairs.jsonl").read_bytes() == before and p3.added_to_bank == 0  # dry run


def test_snow_pair_reports_the_method_and_detect_checks(snow_demo, bank_copy, tmp_path):
    bank = bank_copy(snow_demo["out"])
    # Terra NDSI halved in the first MOD10A1 winter: the >= 50 methods lose its snow, so the later winters have
    # more snow days by them; no Aqua (MYD10A1) record to compare with, so the alteration is not detectable
    r = _alter(
        snow_demo["site"],
        tmp_path / "s",
        satellite="terra",
        variable="snow",
        scale=0.5,
        date_from="2015-12-01",
        date_to="2016-03-31",
        bank=bank,
    )
    assert r.altered_files and all("MOD10A1.A2015" in f or "MOD10A1.A2016" in f for f in r.altered_files)
    assert not r.kept and len(r.rejected) == 2
    assert r.detect_check["detectable"] is False and "concurrent" in r.detect_check["reason"]
    for item in r.rejected:
        mc = item["method_check"]
        assert item["failed"] == ["detect"] and mc["changed"]
        fifty = [m for m in mc["methods"]["original"] if ":ndsi>=50:" in m]
        assert fifty and all(mc["changed_methods"][m] == ["fewer", "more"] for m in fifty)
        assert item["pair"]["pushes_toward"] is not None
    assert load_bank(bank).pairs == []


def test_refusals_write_nothing(demo, bank_copy, tmp_path):
    site = demo["site"]
    with pytest.raises(ReviewerError, match="--bank"):
        _alter_record(site, tmp_path / "x", satellite="landsat8", variable="nir", scale=0.8)
    with pytest.raises(BankError, match="needs --bank"):
        _alter_record(site, tmp_path / "x", satellite="landsat8", variable="nir", scale=0.8, question="q-1")
    with pytest.raises(BankError, match="no question"):
        _alter_record(
            site, tmp_path / "x", satellite="landsat8", variable="nir", scale=0.8, question="nosuch", bank=demo["out"]
        )
    frozen = bank_copy(demo["out"])
    manifest = json.loads((frozen / "manifest.json").read_text())
    (frozen / "manifest.json").write_text(json.dumps(manifest | {"frozen": True}))
    with pytest.raises(BankError, match="frozen"):
        _alter_record(site, tmp_path / "x", satellite="landsat8", variable="nir", scale=0.8, bank=frozen)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"satellite": "landsat8"}, "exactly one"),
        ({"scale": 0.8}, "--satellite"),
        ({"satellite": "nosuch", "scale": 0.8}, "unknown satellite"),
        ({"drop_clear": 1.5}, "fraction"),
        ({"satellite": "terra", "variable": "ndvi", "scale": 0.8}, "no ndvi files"),
    ],
)
def test_bad_requests(demo, tmp_path, kwargs, message):
    with pytest.raises(BankError, match=message):
        _alter_record(
            demo["site"], tmp_path / "x", question=demo["bank"].questions[0]["id"], bank=demo["out"], **kwargs
        )


def test_cli_alter_prints_kept_and_rejected(snow_demo, bank_copy, tmp_path, capsys):
    from reviewer.cli import main

    bank = bank_copy(snow_demo["out"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = main(
            [
                "alter",
                str(snow_demo["site"]),
                "--satellite",
                "terra",
                "--variable",
                "snow",
                "--scale",
                "0.5",
                "--from",
                "2015-12-01",
                "--to",
                "2016-03-31",
                "--bank",
                str(bank),
                "--dry-run",
                "--out",
                str(tmp_path / "c"),
            ]
        )
    out = capsys.readouterr().out
    assert rc == 0 and "rejected" in out and "failed detect check" in out and "dry run" in out
    assert (tmp_path / "c" / REPORT).is_file()


def test_only_questions_whose_methods_read_the_altered_variable_are_checked(snow_demo, demo):
    import datetime as dt

    from reviewer.bank.alter import _concerns

    (snow_q, *_) = snow_demo["bank"].questions
    water_q = _question(demo["bank"], "quantify.water_area")
    start = dt.date(2010, 1, 1)
    assert _concerns(snow_q, "instrument", "terra", start, None, [], "snow")
    assert not _concerns(snow_q, "instrument", "terra", start, None, [], "ndvi")
    assert not _concerns(snow_q, "instrument", "aqua", start, None, [], "snow")  # Terra-only methods
    assert not _concerns(snow_q, "instrument", "terra", dt.date(2021, 1, 1), None, [], "snow")  # after the period
    assert _concerns(water_q, "instrument", "landsat8", dt.date(2013, 1, 1), None, [], "sr") == (
        "OLI" in water_q["sensors"] and water_q["period"]["end"] >= "2013"
    )
    assert not _concerns(water_q, "instrument", "landsat8", None, None, [], "snow")
    assert not _concerns(water_q, "instrument", "terra", None, None, [], "ndvi")
