"""References a reviewer can trust (issue 28): generation on a sparse record (2 scenes a year, cloudy years)
finishes without NaN or numpy noise, and every template copes with a record whose pixels are all missing.

The sparse site is the one the issue reports the crash on: 64 px, seed 1, 2012-2021, 2 scenes a year."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from reviewer.bank.model import INSUFFICIENT


@pytest.fixture(scope="session")
def sparse(tmp_path_factory):
    """A sparse demo site (seed 1) and its candidate bank, generated with every warning turned into an error."""
    from reviewer.bank.generate import generate
    from reviewer.bank.io import load_bank
    from reviewer.record.synthetic import make_demo_site

    site = make_demo_site(
        tmp_path_factory.mktemp("sparse") / "site", seed=1, size=64, start=2012, end=2021, scenes_per_year=2
    )
    out = site.parent / "candidates"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        report = generate(site, out, seed=0)
    return {"site": site, "out": out, "report": report, "bank": load_bank(out)}


def test_sparse_record_generates_a_bank_without_nan(sparse):
    assert sparse["bank"].questions
    for f in sorted(sparse["out"].iterdir()):
        if f.suffix in (".json", ".jsonl"):
            text = f.read_text()
            assert "NaN" not in text and "Infinity" not in text, f.name
            for line in text.splitlines() if f.suffix == ".jsonl" else [text]:
                json.loads(line, parse_constant=lambda c, name=f.name: pytest.fail(f"{name} holds {c}"))


def _all_missing(series):
    """The series with every pixel value of every year, scene and coarse product missing (an all-cloud record)."""
    series.composites = {
        name: np.full((len(series.years), *series.shape), np.nan, np.float32) for name in list(series.composites)
    }
    for t in range(len(series.nbr_dates)):
        series.store.put(("nbr", t), np.full(series.shape, np.nan, np.float16))
    for d in series.coarse.values():
        d["gs"] = np.full_like(np.asarray(d["gs"], np.float32), np.nan)
    series.crop_ndvi = {k: [(day, float("nan")) for day, _ in v] for k, v in series.crop_ndvi.items()}
    series.derived.clear()
    return series


def test_every_template_copes_with_an_all_missing_record(sparse):
    """No template raises, warns or writes a non-finite value when every pixel is missing; none states a
    definite answer from imagery it did not have (a withheld product's own value is still a reference)."""
    from reviewer.bank import generate as G
    from reviewer.bank.series import build_series, cached_index

    series = _all_missing(build_series(cached_index(sparse["site"])))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n, name in enumerate(G.templates()):
            for c in G.run_compute(series, name):
                q, reason = G.finish(c, "s", n, 0, {"min_agreement": 0.75})
                if q is None:
                    assert reason, name
                    continue
                assert G.nonfinite_paths(q) == [], name
                definite = q["class"] != "insufficient" and "reference_pending" not in q["provenance"]
                assert not definite or q["reference_source"] == "withheld_product", (name, q["reference"])
                if q["class"] == "insufficient":
                    assert q["reference"][q["conclusion"]] == INSUFFICIENT
