"""Reference methods on hand-made inputs; expected values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reviewer.bank import methods as M


def test_ols_exact_line():
    tr = M.ols_trend([2000, 2001, 2002, 2003], [1.0, 3.0, 5.0, 7.0])
    assert tr.slope == pytest.approx(2.0)
    assert tr.p < 1e-6 and tr.direction() == "increase"


def test_theil_sen_is_median_of_pairwise_slopes():
    # pairwise slopes of (0,0),(1,1),(2,10),(3,3): 1, 5, 1, 9, 1, -7 -> median 1
    tr = M.theil_sen_trend([0, 1, 2, 3], [0.0, 1.0, 10.0, 3.0])
    assert tr.slope == pytest.approx(1.0)


def test_mann_kendall_by_hand():
    # strictly increasing n=5: S = 10, var = 5*4*15/18 = 16.667, Z = 9/4.0825 = 2.2045, p = 0.0275
    s, z, p = M.mann_kendall([1, 2, 3, 4, 5])
    assert s == 10
    assert z == pytest.approx(9 / math.sqrt(50 / 3), rel=1e-6)
    assert p == pytest.approx(0.0275, abs=5e-4)


def test_mann_kendall_ties_reduce_variance():
    # [1,1,2,2]: S = 4; ties two groups of 2: var = (4*3*13 - 2*(2*1*9))/18 = (156-36)/18 = 6.667
    s, z, _ = M.mann_kendall([1, 1, 2, 2])
    assert s == 4
    assert z == pytest.approx(3 / math.sqrt(120 / 18))


def test_flat_series_is_no_change():
    assert M.ols_trend([1, 2, 3, 4], [2, 2, 2, 2]).direction() == "no significant change"
    assert M.theil_sen_trend([1, 2, 3, 4], [2, 2, 2, 2]).direction() == "no significant change"


def test_pixel_trends_match_scalar_methods():
    years = np.arange(2000, 2012)
    rng = np.random.default_rng(0)
    cube = np.stack(
        [0.01 * (years - 2000) + rng.normal(0, 0.002, len(years)), np.tile([0.01, -0.01], len(years) // 2)], axis=1
    )
    cube[3, 1] = np.nan
    r = M.pixel_trends(years, cube, min_obs=5)
    assert r["ols_slope"][0] == pytest.approx(M.ols_trend(years, cube[:, 0]).slope, rel=1e-6)
    assert r["sen_slope"][0] == pytest.approx(M.theil_sen_trend(years, cube[:, 0]).slope, rel=1e-6)
    assert r["mk_p"][0] < 0.05 and r["n"][1] == 11
    assert M.share_significant(r["ols_slope"], r["ols_p"], 1) == 50.0


def test_otsu_separates_two_modes_and_area():
    img = np.array([[-0.5, -0.5, 0.6], [-0.4, 0.7, 0.6]])
    t = M.otsu_threshold(img)
    assert -0.4 < t < 0.6
    # 3 of 6 pixels above the threshold, pixel 0.0009 km2 -> 0.0027 km2
    assert M.area_above(img, t, 0.0009) == pytest.approx(0.0027)
    # invalid pixels: the area scales up from the valid ones
    img2 = img.copy()
    img2[0, 0] = np.nan
    assert M.area_above(img2, t, 0.0009) == pytest.approx(3 / 5 * 6 * 0.0009)
    assert math.isnan(M.area_above(img2, t, 0.0009, min_valid=0.9))


def test_dnbr_and_largest_year():
    assert M.dnbr(np.array([0.5]), np.array([-0.4]))[0] == pytest.approx(0.9)
    assert M.largest_year([2001, 2002, 2003], [1.0, 5.0, 2.0]) == 2002
    assert M.smallest_year([2001, 2002, 2003], [1.0, 5.0, 0.5]) == 2003
    assert M.largest_year([2001], [float("nan")]) is None


def test_recovery_years_by_hand():
    years = list(range(2000, 2010))
    # baseline 0.7 (2001-2003), fall in 2004 to 0.2, back 0.45, 0.6, 0.66, 0.7 ...
    v = [0.7, 0.7, 0.7, 0.7, 0.2, 0.45, 0.6, 0.66, 0.7, 0.7]
    # 90%: target = 0.2 + 0.9 * 0.5 = 0.65 -> first reached 2007 -> 3 years
    assert M.recovery_years(years, v, 2004, fraction=0.9) == 3.0
    # 50%: target 0.45 -> 2005 -> 1 year
    assert M.recovery_years(years, v, 2004, fraction=0.5) == 1.0
    assert M.recovery_years(years, [0.7] * 4 + [0.2] * 6, 2004) is None


def test_peak_month_methods():
    doy = np.arange(1, 366, 8)
    v = np.exp(-0.5 * ((doy - 227) / 20.0) ** 2)  # peak 15 August
    months = [(np.datetime64("2001-01-01") + int(d) - 1).astype(object).month for d in doy]
    assert M.peak_month_climatology(months, v) == 8
    assert M.peak_month_harmonic(doy, v, harmonics=3) == 8


def test_snow_days_gap_filling():
    ndsi = np.array([[80.0], [np.nan], [60.0], [0.0], [np.nan]])
    assert M.snow_days(ndsi, 10)[0] == 2  # gaps count as snow-free
    assert M.snow_days(ndsi, 10, gap_fill=True)[0] == 3  # the first gap takes the snow before it


def test_combine_numeric_and_votes():
    ref, (lo, hi) = M.combine_numeric({"a": 1.0, "b": 1.2, "c": 0.9})
    assert ref == 1.0 and lo == 0.9 and hi == 1.2
    ref, (lo, hi) = M.combine_numeric({"a": 10.0, "b": 10.1})
    assert lo <= 10.05 * 0.95 + 1e-9 and hi >= 10.05 * 1.05 - 1e-9
    ref, (lo, hi) = M.combine_numeric({"a": 0.0}, abs_floor=1.0)
    assert (lo, hi) == (-1.0, 1.0)
    assert M.combine_votes({"a": 2001, "b": 2001, "c": 2001, "d": 2002}) == (2001, 0.75)
    assert M.combine_votes({"a": 2001, "b": 2001, "c": 2002}) == (None, pytest.approx(2 / 3))
    assert M.near(0.11, 0.10, 0.05) and not M.near(0.3, 0.10, 0.05)
    assert M.three_way(12, 10, ("up", "down", "same")) == "up"
    assert M.three_way(-3, 10, ("up", "down", "same")) == "same"


def test_snow_days_observed_share_and_thresholds():
    nan = np.nan
    # one pixel, 6 days: NDSI 60, cloud, 45, cloud, 0, 70 -> observed 4, >= 40: 3, >= 50: 2
    ndsi = np.array([[60.0], [nan], [45.0], [nan], [0.0], [70.0]])
    assert M.snow_days_observed_share(ndsi, 40)[0] == pytest.approx(3 / 4 * 6)
    assert M.snow_days_observed_share(ndsi, 50)[0] == pytest.approx(2 / 4 * 6)
    assert np.isnan(M.snow_days_observed_share(np.full((3, 1), nan), 40)[0])  # never observed
    # gap filled: the gaps take the day before (60 -> snow, 45 -> snow at 40, not at 50)
    assert M.snow_days(ndsi, 40, gap_fill=True)[0] == 5
    assert M.snow_days(ndsi, 50, gap_fill=True)[0] == 3


def test_winter_snow_days_weighted_site_mean():
    import datetime as dt

    from reviewer.bank.generate import winter_cube, winter_snow_days
    from reviewer.bank.series import SeriesConfig, SiteSeries

    days = [dt.date(2015, 12, 1) + dt.timedelta(days=i) for i in range(122)]  # to 31 March 2016 (leap year)
    # two product pixels: the first snow-covered for the first 100 days, the second never observed (water)
    ndsi = np.zeros((len(days), 2), np.float32)
    ndsi[:100, 0] = 80
    ndsi[:, 1] = np.nan
    ndsi[10:20, 0] = np.nan  # ten cloudy days inside the snow season
    s = SiteSeries("t", (2, 2), 0.01, np.ones((2, 2), bool), [2016], SeriesConfig())
    s.snow["MODIS Terra"] = {"dates": days, "ndsi": ndsi, "weights": np.array([3.0, 1.0], np.float32)}
    cube = winter_cube(s, "MODIS Terra", 2016, 0.9)
    assert cube.shape == (122, 2)
    assert winter_snow_days(cube, s.snow["MODIS Terra"]["weights"], 40, "gap_filled") == 100
    assert winter_snow_days(cube, s.snow["MODIS Terra"]["weights"], 40, "observed_share") == pytest.approx(
        90 / 112 * 122
    )
    assert winter_cube(s, "MODIS Terra", 2017, 0.9) is None  # no files that winter
    s.snow["MODIS Terra"]["dates"] = days[:100]
    s.snow["MODIS Terra"]["ndsi"] = ndsi[:100]
    assert winter_cube(s, "MODIS Terra", 2016, 0.9) is None  # 100 of 122 days is below 90% coverage


def test_recovery_years_dated_by_hand():
    import datetime as dt

    # growing-season scenes; fire between the 2004-07-01 and 2004-09-01 scenes (fall dated 2004-08-01)
    dates, vals = [], []
    for y in range(2001, 2010):
        for m in (6, 7, 9):
            d = dt.date(y, m, 1)
            age = (d - dt.date(2004, 8, 1)).days / 365.25
            dates.append(d)
            vals.append(0.0 if age < 0 else -0.6 * max(0.0, 1 - age / 4))
    r = M.recovery_years_dated(dates, vals, 2004, fraction=0.9)
    assert 3.6 <= r <= 3.9  # first scene at >= 90% recovered: 2008-06-01
    assert M.recovery_years_dated(dates, vals, 2004, fraction=0.9, calendar=True) == 4.0
    assert M.recovery_years_dated(dates[:15], vals[:15], 2004) is None
