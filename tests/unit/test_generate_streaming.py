"""Generation within a memory budget (issue 17): the series frames that do not fit go to files and the questions
stay byte for byte what the all-in-memory run writes; the per-pixel trends and the burn pass give what the
rules say whatever the blocks and whichever methods share the pass."""

from __future__ import annotations

import datetime as dt
import json
import warnings

import numpy as np
import pytest

from tests.sites import make_site

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    """32 x 32 px, 2000-2004, 3 Landsat scenes a year."""
    return make_site(tmp_path_factory.mktemp("stream") / "site", "landsat_small")


def _gen(site, out, **kw):
    from reviewer.bank.generate import generate
    from reviewer.bank.options import GenerationOptions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return generate(site, out, GenerationOptions(seed=3, **kw))


def test_a_budget_too_small_for_the_series_sends_frames_to_files_and_changes_no_byte(small_site, tmp_path):
    whole = _gen(small_site, tmp_path / "memory")
    # 32 x 32 float32 frames are 4 KB; 11 composites x 5 years alone are 220 KB: a 60 KB budget keeps 20 KB
    tight = _gen(small_site, tmp_path / "tight", memory=60_000)
    assert whole.spilled == 0 and tight.spilled > 200_000
    for name in ("questions.jsonl", "dropped.jsonl"):
        assert (tmp_path / "memory" / name).read_bytes() == (tmp_path / "tight" / name).read_bytes()
    assert whole.questions == tight.questions > 0
    # the summary and the report state the peak the run used against its budget
    assert "peak memory" in tight.summary() and "of 0.1 MB budget" in tight.summary()
    rep = json.loads((tmp_path / "tight" / "generation_report.json").read_text())
    assert rep["memory_budget_bytes"] == 60_000 and rep["peak_memory_bytes"] > 10_000_000


def test_frame_store_gives_back_exact_values_from_memory_and_files(tmp_path):
    from reviewer.bank.spill import FrameStore

    rng = np.random.default_rng(0)
    frames = [rng.normal(size=(6, 5)).astype(np.float32) for _ in range(4)]
    frames[2][1, 1] = np.nan
    store = FrameStore(2 * frames[0].nbytes, cache_bytes=0, folder=tmp_path)
    for i, f in enumerate(frames):
        store.put(i, f.copy())
    assert store.in_ram == 2 * frames[0].nbytes and store.on_disk == 2 * frames[0].nbytes
    for i, f in enumerate(frames):
        np.testing.assert_array_equal(store.get(i), f)
        np.testing.assert_array_equal(store.rows(i, 2, 4), f[2:4])
    with pytest.raises(ValueError):
        store.get(3)[0, 0] = 1.0  # handed out read-only: a rule cannot change the series behind another's back
    folder = next(tmp_path.iterdir())
    store.close()
    assert not folder.exists()


def test_pixel_trends_in_blocks_equal_one_block():
    from reviewer.bank.methods import pixel_trends

    rng = np.random.default_rng(1)
    years = list(range(2000, 2012))
    cube = rng.normal(size=(12, 300)) + 0.05 * np.arange(12)[:, None]
    cube[rng.random(cube.shape) < 0.1] = np.nan
    one = pixel_trends(years, cube)
    blocks = pixel_trends(years, cube, scratch=20_000)  # about 8 pixels a block
    for k in one:
        np.testing.assert_array_equal(one[k], blocks[k])


def _series_with_nbr(dates, values):
    from reviewer.bank.series import SeriesConfig, SiteSeries

    s = SiteSeries("t", (1, 1), 0.0009, np.ones((1, 1), bool), [2001, 2002], SeriesConfig())
    for t, v in enumerate(values):
        s.store.put(("nbr", t), np.array([[v]], np.float16))
    s.nbr_dates = list(dates)
    return s


def test_one_burn_pass_serves_the_all_season_and_the_growing_season_methods():
    """NBR 0.6 in July 2001, -0.4 in February 2002 and August 2002. All scenes: the fall is from July to
    February, dated at its midpoint (late October 2001). Growing season only (May-September): February is not
    seen, the fall is from July 2001 to August 2002, midpoint late January 2002."""
    from reviewer.bank.generate import burn_events, burn_events_many

    dates = [dt.date(2001, 7, 1), dt.date(2002, 2, 1), dt.date(2002, 8, 1)]
    s = _series_with_nbr(dates, [0.6, -0.4, -0.4])
    (all_year, all_drop), (gs_year, _) = burn_events_many(s, [(0.44, -0.2, False), (0.44, -0.2, True)])
    assert all_year[0, 0] == 2001 and gs_year[0, 0] == 2002
    assert all_drop[0, 0] == pytest.approx(1.0, abs=2e-3)
    # asked alone (another template), the map is the one the shared pass made
    assert burn_events(s, 0.44, -0.2, True)[0] is gs_year
    # a drop to NBR -0.1 is not charred enough for post_nbr -0.2
    s2 = _series_with_nbr(dates, [0.6, -0.1, -0.1])
    assert burn_events(s2, 0.44, -0.2)[0][0, 0] == 0


def test_the_pass_reads_only_a_few_frames_ahead_of_the_one_it_takes():
    """Reading 40 scenes with 2 threads, 4 ahead: when the k-th result is taken, no more than k + 1 + 4 scenes
    have been started (pool.map started all 40 at once, and their frames waited in memory)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from reviewer.bank.series import ahead_map

    started = []
    lock = threading.Lock()

    def read(i):
        with lock:
            started.append(i)
        return i * 10

    with ThreadPoolExecutor(max_workers=2) as pool:
        taken = []
        for k, v in enumerate(ahead_map(pool, read, list(range(40)), ahead=4)):
            with lock:
                assert len(started) <= k + 1 + 4
            taken.append(v)
    assert taken == [i * 10 for i in range(40)]  # in order, every one
