"""A trajectory reads each date's files once (masked dates included), and a series cube kept by the caller makes
every later region or pixel of the same site and index a mean over grids already read: no file opened again."""

from __future__ import annotations

import numpy as np
import pytest

from reviewer.record import series
from reviewer.record import stack as stack_module
from reviewer.record.series import CUBE_BYTES_PER_PIXEL, series_cube, trajectory
from tests.sites import make_site


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """64 x 64 px, 2012-2013: Landsat GeoTIFFs and MODIS MOD13Q1/MYD13Q1 HDF4 granules."""
    from reviewer.record.scan import open_index
    from reviewer.record.stack import SceneCache, open_stack

    site = make_site(tmp_path_factory.mktemp("cube") / "site", "gui", start=2012, end=2013)
    return open_stack(open_index(site), cache=SceneCache())


@pytest.fixture
def reads(monkeypatch):
    """The scenes whose files the trajectory opens, in order (one entry per read of a scene)."""
    seen: list[str] = []
    real = stack_module.read_scene  # (every read of a scene's files for a series goes through stack.py)

    def counting(scene, *args, **kwargs):
        seen.append(scene.scene_id)
        return real(scene, *args, **kwargs)

    monkeypatch.setattr(stack_module, "read_scene", counting)
    return seen


def _masked_pixel(stack) -> tuple[int, int]:
    """A pixel that the quality mask hides on at least one date (else the one-read test proves nothing)."""
    for pixel in ((37, 21), (10, 10), (50, 50), (5, 60), (32, 32)):
        if any(trajectory(stack, "ndvi", pixel=pixel).masked):
            return pixel
    pytest.skip("no masked date at the probed pixels of this demo site")


def test_a_masked_date_is_read_once_not_twice(stack, reads):
    """A cloudy date's hollow point (the value with only fill masked) comes from the same read as its clear test:
    one read of each date's files, however many dates the mask hides."""
    pixel = _masked_pixel(stack)
    reads.clear()
    t = trajectory(stack, "ndvi", pixel=pixel)
    assert any(t.masked)
    assert len(reads) == len(stack) and len(set(reads)) == len(stack)


def test_the_second_region_of_a_site_opens_no_file(stack, reads):
    """With a cube, the first region's series reads each date once; another region and a pixel of the same site
    and index read nothing and give exactly what reading their own windows gives; another index reads its dates again."""
    cube = series_cube()
    north = np.zeros(stack.grid.shape, bool)
    north[2:20, 5:40] = True
    south = np.zeros(stack.grid.shape, bool)
    south[40:62, 30:60] = True
    first = trajectory(stack, "ndvi", region=north, cube=cube)
    assert len(reads) == len(stack)
    reads.clear()
    second = trajectory(stack, "ndvi", region=south, cube=cube)
    at_pixel = trajectory(stack, "ndvi", pixel=(45, 33), cube=cube)
    assert reads == []
    assert first.to_rows() == trajectory(stack, "ndvi", region=north).to_rows()
    assert second.to_rows() == trajectory(stack, "ndvi", region=south).to_rows()
    assert at_pixel.to_rows() == trajectory(stack, "ndvi", pixel=(45, 33)).to_rows()
    reads.clear()
    trajectory(stack, "nbr", region=south, cube=cube)  # (MODIS has no SWIR: the Landsat dates only)
    assert sorted(reads) == sorted(s.scene_id for s in stack.scenes if s.scene_id.startswith("L"))


def test_a_stack_too_large_for_the_cube_reads_windows(stack, reads):
    """A cube one scene short of the stack's whole series is not used: each series reads its windows again (a
    large site never fills the cache with grids that would evict one another)."""
    rows, cols = stack.grid.shape
    cube = series_cube(CUBE_BYTES_PER_PIXEL * rows * cols * (len(stack) - 1))
    region = np.zeros(stack.grid.shape, bool)
    region[10:20, 10:20] = True
    trajectory(stack, "ndvi", region=region, cube=cube)
    trajectory(stack, "ndvi", region=region, cube=cube)
    assert len(reads) == 2 * len(stack) and cube.nbytes == 0


def test_a_warmed_cube_serves_the_queue_s_later_trajectories(stack, reads):
    """Warming reads each date once (all of them hold NDVI); a later region's trajectory then opens no file, a second
    warming reads nothing more, and a cube too small for the stack is not warmed at all."""
    cube = series_cube()
    assert series.warm_cube(cube, stack, "ndvi") == len(stack) == len(reads)
    reads.clear()
    region = np.zeros(stack.grid.shape, bool)
    region[30:50, 0:25] = True
    assert (
        trajectory(stack, "ndvi", region=region, cube=cube).to_rows()
        == trajectory(stack, "ndvi", region=region).to_rows()
    )
    assert len(reads) == len(stack)  # (only the uncached trajectory above read)
    assert series.warm_cube(cube, stack, "ndvi") == 0
    rows, cols = stack.grid.shape
    small = series_cube(CUBE_BYTES_PER_PIXEL * rows * cols * (len(stack) - 1))
    reads.clear()
    assert series.warm_cube(small, stack, "ndvi") == 0 and reads == []
