"""Core series helpers (no Qt): trajectories, coverage, chips choice, year stepping, overlay codes, CSV."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from reviewer.errors import ReviewerError
from reviewer.record.series import (
    clearest_per_year,
    coverage,
    decimal_year,
    first_of_year,
    polygon_region,
    quality_codes,
    step_year,
    trajectory,
)
from tests.sites import make_site

D = dt.date


def test_step_year_and_first_of_year():
    dates = [D(2000, 3, 1), D(2000, 9, 1), D(2002, 1, 5), D(2002, 6, 1), D(2005, 7, 1)]
    assert step_year(dates, 0, +1) == 2
    assert step_year(dates, 1, +1) == 2
    assert step_year(dates, 3, +1) == 4
    assert step_year(dates, 4, +1) == 4
    assert step_year(dates, 4, -1) == 2
    assert step_year(dates, 3, -1) == 0
    assert step_year(dates, 0, -1) == 0
    assert first_of_year(dates, 2002) == 2
    assert first_of_year(dates, 2003) in (3, 4)
    assert first_of_year([], 2000) is None


def test_decimal_year_and_polygon():
    assert decimal_year(D(2001, 1, 1)) == 2001.0
    assert 2001.49 < decimal_year(D(2001, 7, 1)) < 2001.51
    region = polygon_region(np.array([[0, 0], [0, 9], [9, 9], [9, 0]]), (20, 20))
    assert region.shape == (20, 20) and 60 <= region.sum() <= 100
    with pytest.raises(ReviewerError):
        polygon_region(np.array([[0, 0], [1, 1]]), (20, 20))


@pytest.fixture(scope="module")
def small_stack(tmp_path_factory):
    from reviewer.record.scan import open_index
    from reviewer.record.stack import SceneCache, open_stack

    site = make_site(tmp_path_factory.mktemp("s") / "site", "landsat_small")
    index = open_index(site)
    return index, open_stack(index, composite="truecolor", cache=SceneCache())


def test_trajectory_pixel_region_and_csv(small_stack, tmp_path):
    index, stack = small_stack
    s = trajectory(stack, "ndvi", pixel=(5, 5))
    assert len(s) == len(stack) and s.indices == list(range(len(stack)))
    clear = np.array(s.values)[~np.array(s.masked)]
    assert np.isfinite(clear).all() and (clear > -1).all() and (clear < 1).all()
    r = trajectory(stack, "red", region=np.ones(stack.grid.shape, bool))
    assert max(r.n_pixels) > 100 and all(np.isfinite(v) or m for v, m in zip(r.spread, r.masked, strict=True))
    out = s.to_csv(tmp_path / "t.csv")
    lines = out.read_text().splitlines()
    assert lines[0].startswith("# ndvi at pixel") and lines[1].startswith("date,sensor,scene_id")
    assert len(lines) == len(s) + 2
    with pytest.raises(ReviewerError):
        trajectory(stack, "ndvi", pixel=(999, 0))
    with pytest.raises(ReviewerError):
        trajectory(stack, "ndvi")
    hidden = trajectory(stack, "ndvi", pixel=(5, 5), include_masked=False)
    assert not any(hidden.masked)


def test_a_region_says_its_pixel_count_with_its_thousands_grouped(small_stack):
    """The trajectory's caption names the region by its pixel count: a whole Landsat scene's read "region of
    58761931 pixels"; grouped, the 32 x 32 px site's whole grid is "region of 1,024 pixels"."""
    _, stack = small_stack
    whole = trajectory(stack, "red", region=np.ones(stack.grid.shape, bool))
    assert whole.where == "region of 1,024 pixels"
    corner = np.zeros(stack.grid.shape, bool)
    corner[:3, :3] = True
    assert trajectory(stack, "red", region=corner).where == "region of 9 pixels"


def test_a_large_region_read_in_blocks_of_rows_gives_the_same_series(small_stack, monkeypatch):
    """A whole-site region of a whole Landsat scene read each scene's 58.8 M px window at once (3.5-3.9 GB in the
    app); above BLOCK_PX it is read a block of rows at a time and the blocks pooled: the same means, spreads and
    counts as one read (here blocks of 3 rows of the 32 x 32 px site)."""
    from reviewer.record import series
    from reviewer.record.series import _pooled

    # values 1, 1 | 3, 3: mean 2, population standard deviation 1 (each block's own spread 0)
    assert _pooled([(1.0, 0.0, 2), (3.0, 0.0, 2), (float("nan"), float("nan"), 0)]) == (2.0, 1.0, 4)
    # values 0, 2 | 4: mean 2, variance (4 + 0 + 4) / 3
    mean, spread, n = _pooled([(1.0, 1.0, 2), (4.0, 0.0, 1)])
    assert (mean, n) == (2.0, 3) and spread == pytest.approx(np.sqrt(8 / 3))
    _, stack = small_stack
    region = np.zeros(stack.grid.shape, bool)
    region[2:29, 1:30] = True
    region[10, :] = False  # a row with nothing of the region
    whole = {name: trajectory(stack, name, region=region) for name in ("red", "ndvi")}
    monkeypatch.setattr(series, "BLOCK_PX", 100)  # 3 rows of 32 px a block
    for name, one in whole.items():
        blocks = trajectory(stack, name, region=region)
        assert blocks.indices == one.indices and blocks.n_pixels == one.n_pixels and blocks.masked == one.masked
        np.testing.assert_allclose(blocks.values, one.values, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(blocks.spread, one.spread, rtol=1e-4, atol=1e-6)


def test_coverage_and_clearest(small_stack):
    index, stack = small_stack
    cov = coverage(index)
    assert cov.years == list(range(2000, 2005))
    assert sum(cov.clear) + sum(cov.cloudy) == len(index.record_scenes())
    assert cov.slc_off == D(2003, 5, 31)
    assert "ETM+" in cov.sensors
    best = clearest_per_year(stack)
    assert sorted(best) == list(range(2000, 2005))
    for year, i in best.items():
        same = [s for s in stack.scenes if s.year == year]
        assert stack.scenes[i].clear_fraction == max(s.clear_fraction for s in same)
    summer = clearest_per_year(stack, months={6, 7, 8})
    assert all(stack.scenes[i].date.month in (6, 7, 8) for i in summer.values())


def test_quality_codes(small_stack):
    _, stack = small_stack
    codes = [quality_codes(stack, i) for i in range(len(stack))]
    assert all(c.dtype == np.uint8 and c.shape == stack.grid.shape for c in codes)
    assert any((c > 0).any() for c in codes)
    assert set(np.unique(np.concatenate([c.ravel() for c in codes]))) <= {0, 1, 2, 3, 4}


def test_coverage_bars_count_landsat_unless_sensors_are_chosen():
    """1984: five TM scenes, three of them cloudy, and twelve MODIS composites (always 'clear'): the bars
    show 2 clear / 3 cloudy, as an annotator looking for a clear Landsat date would count them."""
    from types import SimpleNamespace

    def scene(label, month, clear):
        return SimpleNamespace(label=label, date=D(1984, month, 1), year=1984, clear_fraction=clear, product_spec=None)

    scenes = [scene("TM", m, c) for m, c in ((3, 0.2), (5, 0.9), (7, 0.1), (8, 0.95), (10, 0.3))]
    scenes += [scene("MODIS Terra", m, None) for m in range(1, 13)]
    cov = coverage(scenes)
    assert (cov.clear, cov.cloudy, cov.counted) == ([2], [3], ["TM"])
    assert set(cov.sensors) == {"TM", "MODIS Terra"}  # the timeline still shows every sensor
    chosen = coverage(scenes, sensors=("MODIS Terra",))
    assert (chosen.clear, chosen.cloudy, chosen.counted) == ([12], [0], ["MODIS Terra"])


@pytest.fixture(scope="module")
def modis_index(tmp_path_factory):
    """64 x 64 px, 2012-2013: Landsat GeoTIFFs and MODIS MOD13Q1/MYD13Q1 as HDF4 granules."""
    from reviewer.record.scan import open_index

    site = make_site(tmp_path_factory.mktemp("m") / "site", "gui", start=2012, end=2013)
    return open_index(site)


@pytest.mark.parametrize("sensors", [("MODIS Terra", "MODIS Aqua"), ("TM", "ETM+", "OLI")])
def test_a_trajectory_is_what_each_date_shows_at_the_pixel_or_region(modis_index, sensors):
    """The trajectory reads only the window of each file under the pixel or the region; each value must be
    the one the viewer shows on that date at that pixel (the whole site read), masked dates included (then
    the value read with only fill masked), and a region's mean and spread those of its clear pixels."""
    from reviewer.record.stack import SceneCache, open_stack

    stack = open_stack(modis_index, sensors=sensors, cache=SceneCache())
    assert len(stack) >= 5
    pixel = (37, 21)
    t = trajectory(stack, "ndvi", pixel=pixel)
    assert t.indices == list(range(len(stack)))
    for i, value, masked in zip(t.indices, t.values, t.masked, strict=True):
        shown = stack.read(i, "ndvi", mask=("fill",) if masked else None)[0][pixel]
        assert value == shown or (np.isnan(value) and np.isnan(shown)), stack.scenes[i].scene_id
    region = np.zeros(stack.grid.shape, bool)
    region[10:30, 40:60] = True
    r = trajectory(stack, "red", region=region)
    for i, value, spread, masked in zip(r.indices, r.values, r.spread, r.masked, strict=True):
        whole = stack.read(i, "truecolor", mask=("fill",) if masked else None)[0][region]
        clear = whole[np.isfinite(whole)]
        assert value == pytest.approx(float(clear.mean()), rel=1e-6) and spread == pytest.approx(
            float(clear.std()), rel=1e-5, abs=1e-9
        )
