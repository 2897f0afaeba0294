"""Generation on sites larger than its memory budget (issue 31): the Landsat pass reads each year's scenes a
block of rows at a time into the spill store, so what it holds follows its budget, not the site's size, and the
series is the same as a pass with room for whole scenes."""

from __future__ import annotations

import gc
import os
import tracemalloc
import warnings

import numpy as np
import psutil
import pytest

from tests.sites import make_site

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(scope="module")
def wide_site(tmp_path_factory):
    """192 x 192 px, 2000, 4 Landsat scenes (frames of 147 KB float32)."""
    return make_site(
        tmp_path_factory.mktemp("blocks") / "site", "landsat_small", size=192, start=2000, end=2000, scenes_per_year=4
    )


def _series(site, free: int, *, traced: bool = False):
    """build_series with `free` bytes of budget beyond what the process holds now; (series, traced peak)."""
    from reviewer.bank.series import build_series, cached_index

    index = cached_index(site)
    # what the pass before left as cyclic garbage freed now: collected later, inside the pass before its budget is
    # read, it lowered the process's RSS (by 5.5 MB once in a full run) and so raised the free memory the pass saw
    # (blocks of 4.3 MB where 3 MB was given)
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if traced:
            tracemalloc.start()
        try:
            series = build_series(index, parts={"landsat"}, memory=psutil.Process().memory_info().rss + free)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return series, peak


def roomy_and_tight(site: str, out: str) -> None:
    """(Run in a process of its own by the test below.) The series with room for whole scenes, then with 3 MB
    free, traced by tracemalloc: both series' frames, the traced peak and the pass's block budget in `out`."""
    roomy, _ = _series(site, 2 * 1024**3)
    tight, peak = _series(site, 3_000_000, traced=True)
    arrays = {"peak": np.array(peak), "blocks": np.array(tight.block_bytes)}
    for tag, series in (("roomy", roomy), ("tight", tight)):
        arrays[f"{tag}.scenes_read"] = np.array(series.scenes_read)
        arrays[f"{tag}.on_disk"] = np.array(series.store.on_disk)
        arrays[f"{tag}.nbr_dates"] = np.array([d.isoformat() for d in series.nbr_dates])
        for name in series.composites:
            for y in series.years:
                arrays[f"{tag}.comp.{name}.{y}"] = np.asarray(series.comp(name, y))
        for t in range(len(series.nbr_dates)):
            arrays[f"{tag}.nbr.{t}"] = np.asarray(series.nbr_frame(t))
    np.savez(out, **arrays)


def test_a_site_larger_than_the_budget_is_read_in_blocks_within_it_and_gives_the_same_series(wide_site, tmp_path):
    """3 MB free: a half (1.5 MB) for the pass's blocks, a quarter for frames kept in memory, a twentieth for the
    read-back cache. A whole scene's read holds ~20 frames (2.9 MB), and 2 threads read side by side.

    Traced in a process of its own: tracemalloc counts every allocation of the process, and in a long test run
    the interpreter's table of interned strings (~1.9 MB there) is rebuilt now and then, by whichever thread
    adds a string; rebuilt inside the traced pass (a path parsed in a reading thread), it put the peak at
    3.4 MB where the pass's own was 1.4-1.6 MB."""
    import subprocess
    import sys
    from pathlib import Path

    out, root = tmp_path / "series.npz", Path(__file__).resolve().parents[2]
    code = "import sys; from tests.unit.test_generate_blocks import roomy_and_tight as f; f(*sys.argv[1:])"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", code, str(wide_site), str(out)], capture_output=True, text=True,
                         env=env, cwd=root, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    got = np.load(out)
    assert int(got["blocks"]) <= 1_500_000, "the pass had at most 3 MB free (a half of it for blocks)"
    assert int(got["roomy.scenes_read"]) == int(got["tight.scenes_read"]) > 0
    peak = int(got["peak"])
    assert peak < 3_000_000, f"traced peak {peak / 1e6:.1f} MB over the 3 MB budget"
    assert int(got["tight.on_disk"]) > 0 and int(got["roomy.on_disk"]) == 0
    frames = sorted(k for k in got.files if k.startswith(("roomy.comp.", "roomy.nbr")))  # and the NBR dates
    assert [k.replace("roomy.", "tight.", 1) for k in frames] == sorted(
        k for k in got.files if k.startswith(("tight.comp.", "tight.nbr"))
    )
    assert any(".comp." in k for k in frames) and any(".nbr." in k for k in frames)
    for k in frames:
        np.testing.assert_array_equal(got[k], got[k.replace("roomy.", "tight.", 1)], err_msg=k)


def test_a_season_without_scenes_writes_no_frames_of_nan(wide_site):
    from reviewer.bank.series import SeriesConfig, build_series, cached_index

    # no growing season: the year's scenes (TM and ETM+: harmonized and raw composites differ) feed only the three
    # water composites; the four growing-season composites and the yearly NDVI maximum and NBR minimum are NaN
    cfg = SeriesConfig(growing_months=())
    index = cached_index(wide_site)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        series = build_series(index, parts={"landsat"}, config=cfg, memory=psutil.Process().memory_info().rss + 3e6)
    frame = 192 * 192 * 4
    for name in ("ndvi_h", "ndvi_r", "nbr_h", "ndbi_h", "ndvimax_h", "nbrmin_h"):
        got = series.comp(name, 2000)
        assert got.shape == (192, 192) and np.isnan(got).all(), name
    assert np.isfinite(series.comp("mndwi_h", 2000)).any()
    # held or written: each scene's NBR frame (float16) and the 3 water composites, no frame of NaN (before: 4 water
    # composites, the unread harmonized NDWI too, and 7 frames of NaN)
    assert len(series.nbr_dates) == 7
    assert series.store.in_ram + series.store.on_disk == 7 * frame // 2 + 3 * frame


def test_a_frame_of_one_value_takes_no_budget_and_no_file(tmp_path):
    from reviewer.bank.spill import FrameStore

    store = FrameStore(1000, cache_bytes=0, folder=tmp_path)
    store.fill("nan", (7591, 7741), np.float32, np.nan)  # a whole scene's frame: 235 MB if it were an array
    store.put("kept", np.ones((10, 10), np.float32))
    assert (store.in_ram, store.on_disk) == (400, 0)
    rows = store.rows("nan", 100, 356)
    assert rows.shape == (256, 7741) and np.isnan(rows).all() and not rows.flags.writeable
    store.rename("nan", "renamed")
    store.drop("renamed")
    assert (store.in_ram, store.on_disk, len(store)) == (400, 0, 1)


def test_block_rows_follow_the_budget_and_whole_tile_rows():
    from reviewer.bank.series import KEPT_BYTES_PX, READ_BYTES_PX, block_rows

    # a whole Landsat scene's row (7,741 px): 3 scenes in flight and a year of 4 scenes cost
    # 7,741 x (3 x 100 + 4 x 40) = 3.56 MB a row; 500 MB is 140 rows
    assert (READ_BYTES_PX, KEPT_BYTES_PX) == (100, 40)
    assert block_rows(4, (7591, 7741), 500 * 10**6, 3) == 140
    # room for 2.3 tile rows of 256: two whole tile rows, each tile decompressed once
    assert block_rows(4, (7591, 7741), int(3.5609e6 * 600), 3) == 512
    assert block_rows(4, (100, 7741), 10**12, 3) == 100  # the whole site in one block
    assert block_rows(4, (7591, 7741), 0, 3) == 8  # at least 8 rows: each block opens its files again


def test_read_blocks_end_on_the_files_tile_rows_so_each_tile_is_decompressed_once():
    from reviewer.bank.series import row_blocks

    def tiles_read(blocks, th, first):  # tile rows each block touches, counted over the blocks
        return sum(len(range((r0 - first) // th, (r1 - 1 - first) // th + 1)) for r0, r1 in blocks)

    # the default budget on the whole 7,591-row scene left room for 220 rows: 35 blocks of 220 rows decompress
    # the 30 tile rows of 256 of each file 64 times (35 blocks, and 29 tile rows cut by a block's end); blocks of
    # one tile row (16% more rows) decompress each tile row once
    unaligned = row_blocks(7591, 220, None)
    assert (len(unaligned), tiles_read(unaligned, 256, 0)) == (35, 64)
    aligned = row_blocks(7591, 220, (256, 0))
    assert aligned[:2] == [(0, 256), (256, 512)] and aligned[-1] == (7424, 7591)
    assert tiles_read(aligned, 256, 0) == 30
    # a site starting 10 rows into a file's tile row: the first block ends where the file's next tile row starts
    shifted = row_blocks(7591, 600, (256, 246))
    assert shifted[:3] == [(0, 246), (246, 758), (758, 1270)] and tiles_read(shifted, 256, 246) == 30
    # under three quarters of a tile row: equal parts of each tile row, none straddling two (3 reads a tile)
    parts = row_blocks(1024, 100, (256, 0))
    assert parts[:4] == [(0, 85), (85, 170), (170, 256), (256, 341)] and tiles_read(parts, 256, 0) == 12
    assert tiles_read(row_blocks(1024, 100, None), 256, 0) == 14
    assert row_blocks(100, 220, (256, 0)) == [(0, 100)]  # the whole site in one block


def test_the_tile_rows_of_a_site_are_found_from_its_files(wide_site):
    from affine import Affine

    from reviewer.bank.series import cached_index, tile_rows
    from reviewer.record.decode import Grid

    index = cached_index(wide_site)
    grid = Grid.of_site(index.site)
    scene = next(s for s in index.scenes if s.record)
    # the demo site's 192 px wide GeoTIFFs are in strips of 21 rows (GDAL's 8 KB strips of 384-byte rows)
    assert tile_rows(scene, grid) == (21, 0)
    t = grid.transform
    lower = Grid(grid.crs, Affine(t.a, t.b, t.c, t.d, t.e, t.f + 10 * t.e), grid.shape)  # 10 rows further down
    assert tile_rows(scene, lower) == (21, 11)  # site row 11 is file row 21
    off = Grid(grid.crs, Affine(t.a, t.b, t.c, t.d, t.e, t.f + 0.5 * t.e), grid.shape)  # half a pixel off
    assert tile_rows(scene, off) is None


@pytest.mark.parametrize("t", [1, 2, 3, 4, 5, 12, 13])
def test_the_median_of_a_few_frames_is_numpys_nanmedian(t):
    from reviewer.bank.series import nanmedian0

    rng = np.random.default_rng(t)
    frames = [rng.standard_normal((40, 50)).astype(np.float32) for _ in range(t)]
    for f in frames:
        f[rng.random(f.shape) < 0.4] = np.nan
    for f in frames:
        f[0] = np.nan  # a row without any value: NaN
    frames[0][1] = 0.5  # a row with one value in the first frame only
    for f in frames[1:]:
        f[1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.nanmedian(np.stack(frames), axis=0)
    got = nanmedian0(frames)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(got[0]).all() and (got[1] == 0.5).all()


# ----------------------------------------------------------------------------- the templates, block by block


@pytest.fixture(scope="module")
def decade(tmp_path_factory):
    """The series of a 128 x 128 px site, 2000-2009, 2 Landsat scenes a year (frames of 64 KB float32), all of it
    in memory: what a template allocates is its own work, not frames read back from files."""
    from reviewer.bank.series import build_series, cached_index

    site = make_site(
        tmp_path_factory.mktemp("decade") / "site", "landsat_small", size=128, start=2000, end=2009, scenes_per_year=2
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_series(cached_index(site), parts={"landsat"})


#: template -> what its traced peak may be, in whole float32 frames of the site. Before they worked block by
#: block, each held whole frames (the median over years, the loss years, the lowest NBR, the built-up masks of
#: each threshold pair: 6-12 frames traced) and ndvi_share the (years, H, W) cube and its float64 copies (326).
#: ndvi_share's bound is looser: numpy's masked median (Theil-Sen) leaves garbage until the cycle collector runs
BLOCK_TEMPLATES = {
    "compare.builtup_quadrant": 1,
    "attribute.loss_cause": 1,
    "quantify.forest_loss_product": 1,
    "detect.tree_cover_change": 1,
    "regional_statistics.ndvi_share": 5,
}


def _run(series, name: str, rows_bytes: int):
    from reviewer.bank.generate import run_compute

    series.rows_bytes = rows_bytes
    tracemalloc.start()
    try:
        out = run_compute(series, name)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return [(c.params, c.methods, c.drop, c.insufficient, c.extra) for c in out], peak


@pytest.mark.parametrize("name", sorted(BLOCK_TEMPLATES))
def test_the_templates_work_a_block_of_rows_at_a_time_with_the_same_results(decade, name):
    frame = 128 * 128 * 4
    whole, _ = _run(decade, name, 1 << 30)  # one block: the whole site
    rows, peak = _run(decade, name, 8 * 1024)  # a row or two of each frame a block
    assert rows == whole
    assert peak < BLOCK_TEMPLATES[name] * frame, f"{name}: traced peak {peak / frame:.1f} frames"


def test_blocks_of_files_on_another_crs_count_their_lookup():
    """A 2204 px wide site, 840 MB of blocks, 3 reads in flight, 1 scene: 2204 x (3 x 100 + 40) B a row on the
    site's CRS gives 1120 rows (1024, whole tile rows); files of another CRS add 140 B a pixel per read for their
    lookup, 2204 x (3 x 240 + 40) B a row: 501 rows, 256."""
    from reviewer.bank.series import block_rows

    assert block_rows(1, (2280, 2204), 840_000_000, 3) == 1024
    assert block_rows(1, (2280, 2204), 840_000_000, 3, lookup=True) == 256
    # under a tile row: the rows the budget holds, 300 MB / (2204 x 760 B) = 179
    assert block_rows(1, (2280, 2204), 300_000_000, 3, lookup=True) == 179
