"""A scan's HDF4 granules shared with forked copies of the process (reviewer.record.forked, a standard
process pool forked with the job inherited): every result comes back in its place, a copy that dies has its
chunks done by the scan itself, a cancel returns at once and the copy ends after the chunks it holds, no
copy is forked under a GUI or with another thread alive, and a MODIS scan gives the same fractions and
problems with copies as without.

pytest-qt loads Qt's core module into the test process (no application, no Qt thread): the tests of the
pool's mechanics set that marker of a GUI aside (`no_gui`); the rule's own test puts it back.

Expected values by hand: granule i of the 150-day MOD10A1 site has i % 10 cloud pixels (code 250) out of
its 16 x 16 cells, all others valid snow cover, so cloud_fraction = (i % 10) / 256 and clear_fraction =
1 - (i % 10) / 256; one granule is cut 500 bytes short and one is named h09v05 on an h08v05 grid."""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import os
import sys
import threading
import time
import types

import numpy as np
import pytest

from reviewer.errors import Cancelled
from reviewer.record import forked
from reviewer.record.forked import MIN_ITEMS, copies_for, fork_is_safe, forked_map
from reviewer.record.hdf import forget
from reviewer.record.scan import scan_site
from tests.conftest import write_site_json
from tests.formats import SINU, TILE_M, tile_corner, write_modis_hdf4

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forked copies are made on Linux only")
TWO_CPUS = len(os.sched_getaffinity(0)) > 1 if sys.platform == "linux" else False


@pytest.fixture(autouse=True)
def own_threads(monkeypatch):
    """Only the threads a test starts count as other threads: earlier tests of the suite leave library
    threads alive (an idle dask or executor pool), which would rule every fork out here."""
    before = set(threading.enumerate())
    monkeypatch.setattr(forked, "other_threads", lambda: len(set(threading.enumerate()) - before))


def _threads_started() -> int:
    return forked.other_threads()


@pytest.fixture
def no_gui(monkeypatch):
    """The Qt module pytest-qt loaded set aside as a marker of a GUI (see the module docstring)."""
    monkeypatch.setattr(forked, "GUI_MODULES", ())


@pytest.fixture
def forks(monkeypatch, no_gui):
    """The pids of the copies forked during the test (the real os.fork, counted)."""
    pids: list[int] = []
    real = os.fork

    def fork():
        pid = real()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return pids


def _ended(pid: int, within: float = 3.0) -> bool:
    """Whether the copy has ended and been waited for, and the pool's threads with it, within `within` s
    (so the next scan of this process may fork again)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            if _threads_started() == 0:
                return True
        time.sleep(0.01)
    return False


def test_every_result_comes_back_in_its_place_some_from_the_copy(forks):
    here = os.getpid()
    got = forked_map(lambda i: (i * i, os.getpid()), 300, copies=1, chunk=7, tick=lambda k: None)
    assert [v for v, _ in got] == [i * i for i in range(300)]
    (copy,) = forks
    assert {pid for _, pid in got} == {here, copy}, "the copy measured a chunk it was handed"
    assert _ended(copy), "the copy ended and was waited for"


def test_ticks_count_every_item_once(forks):
    counted = []
    forked_map(lambda i: i, 100, copies=1, chunk=9, tick=counted.append)
    assert sum(counted) == 100
    assert len(forks) == 1


def test_a_copy_that_dies_has_its_chunks_done_here(forks):
    here = os.getpid()

    def job(i):
        if os.getpid() != here:
            os._exit(3)  # the copy crashes on its first item
        return i + 1

    assert forked_map(job, 50, copies=1, chunk=4, tick=lambda k: None) == list(range(1, 51))
    assert _ended(forks[0])


def test_a_chunk_the_copy_fails_on_is_measured_here(forks):
    here = os.getpid()

    def job(i):
        if os.getpid() != here and i == 0:
            raise ValueError("only the copy fails on item 0")
        return 10 * i

    assert forked_map(job, 30, copies=1, chunk=5, tick=lambda k: None) == [10 * i for i in range(30)]
    assert _ended(forks[0])


def test_cancel_returns_at_once_and_the_copy_ends_after_its_chunks(forks):
    """The copy takes 0.5 s an item, chunks of one: the cancel does not wait for it, and the copy ends
    after the AHEAD (2) chunks it holds, 1 s, not after the 40 items (20 s) it would measure if chunks
    were still handed out."""
    here = os.getpid()

    def job(i):
        time.sleep(0.5 if os.getpid() != here else 0.01)
        return i

    def tick(k):
        if k:
            raise Cancelled("scan cancelled")

    t0 = time.perf_counter()
    with pytest.raises(Cancelled):
        forked_map(job, 40, copies=1, chunk=1, tick=tick)
    assert time.perf_counter() - t0 < 0.4, "the copy's item was not waited for"
    assert _ended(forks[0], within=2.5), "the copy was handed nothing more and ended"


def test_no_copy_for_few_items_or_one_process(no_gui):
    assert copies_for(MIN_ITEMS - 1, 2) == 0
    assert copies_for(10_000, 1) == 0


def test_no_copy_with_another_thread_alive(no_gui):
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not fork_is_safe()
        assert copies_for(10_000, 2) == 0
    finally:
        stop.set()
        other.join()
    assert fork_is_safe(), "the thread was the only reason"
    assert copies_for(10_000, 2) == (1 if TWO_CPUS else 0)


def test_no_copy_under_a_gui(monkeypatch):
    qt = sys.modules.get("PySide6.QtCore") or types.ModuleType("PySide6.QtCore")
    monkeypatch.setitem(sys.modules, "PySide6.QtCore", qt)
    assert _threads_started() == 0, "no other thread: the GUI alone rules the fork out"
    assert not fork_is_safe()
    assert copies_for(10_000, 2) == 0


# ----------------------------------------------------------------------------- a MODIS scan with copies

N, DAYS, CUT, WRONG_TILE = 16, 150, 70, 100


def _snow_site(root):
    ulx, uly = tile_corner(8, 5)
    site = write_site_json(root, bbox=[ulx, uly - TILE_M, ulx + TILE_M, uly], crs=SINU, shape=[N, N])
    for i in range(DAYS):
        d = dt.date(2021, 1, 1) + dt.timedelta(days=i)
        snow = np.full((N, N), 40, np.uint8)
        snow.flat[: i % 10] = 250  # cloud
        tile = "h09v05" if i == WRONG_TILE else "h08v05"
        path = site / f"MOD10A1.A{d.year}{d.timetuple().tm_yday:03d}.{tile}.061.2021{i:03d}000000.hdf"
        write_modis_hdf4(
            path,
            "MOD_Grid_Snow_500m",
            8,
            5,
            {
                "NDSI_Snow_Cover": (snow, {"_FillValue": 255}),
                "NDSI_Snow_Cover_Basic_QA": (np.zeros((N, N), np.uint8), {}),
                "NDSI_Snow_Cover_Algorithm_Flags_QA": (np.zeros((N, N), np.uint8), {}),
            },
        )
        if i == CUT:
            path.write_bytes(path.read_bytes()[:-500])
    return site


@pytest.mark.parametrize("workers, thread", [(1, False), (2, False), (2, True)])
def test_modis_scan_same_with_and_without_copies(tmp_path, forks, workers, thread):
    site = _snow_site(tmp_path / "s")
    forget()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    if thread:  # another thread alive: the scan measures in one process
        other.start()
    try:
        index = scan_site(site, workers=workers)
    finally:
        stop.set()
        if thread:
            other.join()
    by_day = {(s.date - dt.date(2021, 1, 1)).days: s for s in index.scenes}
    assert sorted(by_day) == [i for i in range(DAYS) if i not in (CUT, WRONG_TILE)]
    for i, scene in by_day.items():
        assert scene.cloud_fraction == pytest.approx((i % 10) / N**2)
        assert scene.clear_fraction == pytest.approx(1 - (i % 10) / N**2)
    reasons = sorted(p.reason for p in index.problems)
    assert len(reasons) == 2
    assert "h09v05" in reasons[0] and "h08v05" in reasons[0]
    assert reasons[1].startswith("truncated: the file has")
    if workers == 2 and not thread and TWO_CPUS:
        assert len(forks) == 1 and _ended(forks[0]), "one copy shared the granules, and ended"
    else:
        assert forks == []


def test_a_slow_copy_is_waited_on_for_its_current_chunk_only(forks):
    """The copy takes 0.6 s an item; this process, alone fast, takes back the chunk the copy has queued
    but not begun, so the whole map waits for one of the copy's items, not two (>= 1.2 s)."""
    here = os.getpid()

    def job(i):
        time.sleep(0.6 if os.getpid() != here else 0.001)
        return -i

    t0 = time.perf_counter()
    got = forked_map(job, 8, copies=1, chunk=1, tick=lambda k: None)
    assert got == [-i for i in range(8)]
    assert time.perf_counter() - t0 < 1.1
    assert _ended(forks[0], within=1.5), "the copy ended after the chunk taken back"


def test_no_process_to_spare_means_measuring_alone(monkeypatch, no_gui):
    def fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", fork)
    counted = []
    assert forked_map(lambda i: 2 * i, 20, copies=1, chunk=3, tick=counted.append) == list(range(0, 40, 2))
    assert sum(counted) == 20
    assert mp.active_children() == [] and _threads_started() == 0, "no copy and no pool thread left"
