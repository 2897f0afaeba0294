"""Snow-covered days per winter on a small snow-variant demo site (MOD10A1 daily NDSI snow cover).

Expected answers come from the site's truth.json changes.snow; the generator never reads it.
"""

from __future__ import annotations

import numpy as np
import pytest

from reviewer.bank.io import validate_bank

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _snow_qs(snow_demo):
    return [q for q in snow_demo["bank"].questions if q["provenance"]["template"] == "compare.snow_days"]


def test_snow_questions_recover_the_planted_decline(snow_demo):
    assert validate_bank(snow_demo["out"]) == []
    snow = snow_demo["truth"]["changes"]["snow"]
    assert snow["mod10a1_winters"]
    days = {int(w): v for w, v in snow["snow_days_by_winter"].items()}
    qs = _snow_qs(snow_demo)
    assert len(qs) == 2
    for q in qs:
        params = q["provenance"]["params"]
        a = range(params["a1"], params["a2"] + 1)
        b = range(params["b1"], params["b2"] + 1)
        assert set(a) | set(b) <= set(snow["mod10a1_winters"])
        assert params["a"] in q["text"] and params["b"] in q["text"]
        full = float(np.mean([days[w] for w in b]) - np.mean([days[w] for w in a]))
        expected = "more" if full > 3 else "fewer" if full < -3 else "about the same"
        assert q["reference"]["direction"] == expected
        # the question counts 1 December - 31 March: a season longer than the window is cut on one or both
        # sides, so the change seen in the window lies between half and all of the full-season change
        lo, hi = q["reference_range"]["change"]
        assert lo - 1 <= max(full, full / 2) and hi + 1 >= min(full, full / 2)
        assert q["reference"]["days_before"] <= 121 and q["reference"]["days_after"] <= 121
        assert q["sensors"] == ["MODIS Terra"] and q["multi_sensor"] is False
        methods = q["provenance"]["methods"]["direction"]
        assert set(methods) == {
            f"modis_terra:ndsi>={t}:{how}" for t in (40, 50) for how in ("gap_filled", "observed_share")
        }


def test_no_snow_questions_without_snow_products(demo):
    assert not [q for q in demo["bank"].questions if q["provenance"]["template"] == "compare.snow_days"]
