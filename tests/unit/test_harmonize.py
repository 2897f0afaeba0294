"""The trajectory's harmonise toggle reads TM/ETM+ through reviewer.record.stack.harmonize: OLI = slope x
ETM+ + intercept with Roy et al. (2016) Table 2 OLS coefficients (raw_record_facts.md 2.1), in reflectance
units, applied to TM too; OLI, OLI-2 and MSI pass through. Expected values worked by hand from that table."""

from __future__ import annotations

import numpy as np
import pytest

from reviewer.record.stack import harmonization, harmonize, normalized_difference

# Roy et al. 2016 Table 2, OLS, as printed in /work/shared/reference/raw_record_facts.md section 2.1
PAPER_OLS = {
    "blue": (0.8474, 0.0003),
    "green": (0.8483, 0.0088),
    "red": (0.9047, 0.0061),
    "nir": (0.8462, 0.0412),
    "swir1": (0.8937, 0.0254),
    "swir2": (0.9071, 0.0172),
}


def test_the_catalogue_holds_the_papers_ols_coefficients_for_tm_and_etm():
    h = harmonization()
    assert {b: tuple(v) for b, v in h["bands"].items()} == PAPER_OLS
    assert set(h["applies_to"]) == {"TM", "ETM+"} and "Roy et al. 2016" in h["source"]


@pytest.mark.parametrize(
    ("band", "etm", "oli"),
    [
        ("red", 0.05, 0.051335),  # 0.9047 x 0.05 + 0.0061 = 0.045235 + 0.0061
        ("nir", 0.30, 0.29506),  # 0.8462 x 0.30 + 0.0412 = 0.25386 + 0.0412
        ("swir1", 0.20, 0.20414),  # 0.8937 x 0.20 + 0.0254 = 0.17874 + 0.0254
        ("swir2", 0.10, 0.10791),  # 0.9071 x 0.10 + 0.0172 = 0.09071 + 0.0172
        ("blue", 0.04, 0.034196),  # 0.8474 x 0.04 + 0.0003 = 0.033896 + 0.0003
        ("green", 0.06, 0.059698),  # 0.8483 x 0.06 + 0.0088 = 0.050898 + 0.0088
    ],
)
@pytest.mark.parametrize("sensor", ["TM", "ETM+"])
def test_tm_and_etm_reflectance_goes_to_the_oli_scale(band, etm, oli, sensor):
    out = harmonize(np.array([etm], np.float32), band, sensor)
    assert out[0] == pytest.approx(oli, abs=1e-6)


@pytest.mark.parametrize("sensor", ["OLI", "OLI-2", "MSI"])
def test_other_sensors_pass_through(sensor):
    values = np.array([0.05, 0.3], np.float32)
    assert np.array_equal(harmonize(values, "red", sensor), values)


def test_ndvi_of_harmonised_bands():
    """Vegetation: red 0.05, NIR 0.30 -> NDVI 0.25 / 0.35 = 0.7143 as recorded; harmonised red 0.051335,
    NIR 0.29506 -> 0.243725 / 0.346395 = 0.7036. Water: red 0.03, NIR 0.01 -> -0.5 as recorded; harmonised
    red 0.033241, NIR 0.049662 -> 0.016421 / 0.082903 = 0.1981 (the 0.0412 NIR intercept dominates)."""
    red = np.array([0.05, 0.03], np.float32)
    nir = np.array([0.30, 0.01], np.float32)
    raw = normalized_difference(nir, red)
    assert raw == pytest.approx([0.714286, -0.5], abs=1e-5)
    harm = normalized_difference(harmonize(nir, "nir", "ETM+"), harmonize(red, "red", "ETM+"))
    assert harm == pytest.approx([0.703604, 0.198075], abs=1e-5)
