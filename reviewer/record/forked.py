"""Items of a scan measured by forked copies of the process (a standard process pool) as well as by the
process itself, and the rule for when a process may fork at all.

The HDF4 library is serialized and pyhdf holds the GIL while it reads, so a scan of a thousand MODIS
granules used one CPU however many threads it had. A copy made by fork() starts in milliseconds with
everything the scan had set up (the catalog, the site grid, the scenes found, the caches warmed by the
first granule) and measures its share on another CPU: the job is in a module global when the pool forks,
so only chunk bounds go down and results come back.

Items are handed out in chunks, never more than AHEAD chunks a copy outstanding, while this process
measures chunks from the other end of the list, and at the end takes back the chunks the copies have
queued but not begun: a copy slowed by a busy CPU costs at most the chunk it is on. A chunk a copy fails
on, or every chunk of a pool whose copy died, is measured here. A cancel (raised by `tick`) hands out no
more chunks and leaves without waiting: the copies end after the chunks they hold (a few ms each).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import sys
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import AbstractContextManager, nullcontext
from typing import Any

logger = logging.getLogger(__name__)

#: below this many items a fork (a few ms for a large process, and its copy-on-write faults) saves nothing
MIN_ITEMS = 128
#: chunks handed to a copy before it has sent back the first of them
AHEAD = 2
#: modules whose presence means a GUI toolkit (its threads and their locks) lives in this process
GUI_MODULES = ("PySide6.QtCore", "PyQt5.QtCore", "PyQt6.QtCore")

#: the job of the map in progress, inherited by the copies at the fork (nothing of it is pickled)
_JOB: Callable[[int], Any] | None = None


def fork_is_safe() -> bool:
    """Whether a process pool may fork this process. Fork is cheapest, but not under a GUI or other
    threads: a forked child could inherit a lock another thread holds, and wait on it forever."""
    gui = any(m in sys.modules for m in GUI_MODULES)
    return not gui and other_threads() == 0 and "fork" in mp.get_all_start_methods()


def other_threads() -> int:
    """Threads alive besides this one (a library's idle pool counts: its lock could be held at the fork)."""
    return threading.active_count() - 1


def copies_for(n_items: int, processes: int) -> int:
    """How many forked copies to use for `n_items` items with `processes` processes in all (this one
    included): none where fork is unsafe (not Linux: unsafe on macOS; a GUI; other threads), for few
    items, or without a second CPU."""
    if sys.platform != "linux" or n_items < MIN_ITEMS or processes < 2 or not fork_is_safe():
        return 0
    return max(0, min(processes, len(os.sched_getaffinity(0))) - 1)


def forked_map(
    job: Callable[[int], Any],
    n_items: int,
    *,
    copies: int,
    chunk: int,
    tick: Callable[[int], None],
    guard: Callable[[], AbstractContextManager] = nullcontext,
) -> list:
    """[job(i) for i in range(n_items)], shared between this process and `copies` forked copies of it.

    tick(k) is called in this process after each k items (and with 0 while it waits: a Cancelled it
    raises ends the map); guard() is held while forking (e.g. no library file open, no other thread
    inside that library). A job's results must pickle."""
    global _JOB
    results: list = [None] * n_items
    todo = deque(range(s, min(s + chunk, n_items)) for s in range(0, n_items, chunk))
    away: dict[Future, range] = {}  # chunks handed to the copies and not yet back, in the order handed
    taken: list[Future] = []  # chunks taken back from the copies (their answers dropped)
    back: deque[range] = deque()  # chunks a copy failed on, or held when it died: measured here
    _JOB = job
    pool = ProcessPoolExecutor(copies, mp_context=mp.get_context("fork")) if copies else None
    try:
        open_ = _fork(pool, todo, away, guard)
        while todo or away or back:
            open_ = _collect(away, results, back, tick) and open_ and _hand_out(pool, todo, away, AHEAD * copies)
            items = back.pop() if back else _next_here(todo, away, copies, taken)
            if items is not None:
                for i in items:
                    results[i] = job(i)
                tick(len(items))
            elif away:
                wait(away, timeout=0.1, return_when=FIRST_COMPLETED)
                tick(0)
    finally:
        _JOB = None
        if pool is not None:  # (wait only for idle copies; busy ones end after the chunks they hold)
            pool.shutdown(wait=not away and all(f.done() for f in taken), cancel_futures=True)
    return results


def _fork(pool: ProcessPoolExecutor | None, todo: deque, away: dict, guard) -> bool:
    """Fork the pool's copies (its first submit does: all of them, before any thread of the pool starts)
    under guard(); False when there is no pool or no process to spare, the map then done here alone."""
    if pool is None or not todo:
        return False
    before = set(mp.active_children())
    try:
        with guard():
            return _hand_out(pool, todo, away, 1)
    except OSError as exc:  # EAGAIN, ENOMEM: the copies forked before the failure are stopped
        logger.info("measuring without a forked copy: %s", exc)
        for p in set(mp.active_children()) - before:
            p.kill()
            p.join()
        return False


def _hand_out(pool: ProcessPoolExecutor, todo: deque, away: dict, limit: int) -> bool:
    """Chunks from the head of the list to the copies, up to `limit` outstanding; False if the pool is
    broken (a copy died: the chunks it held come back through _collect)."""
    try:
        while todo and len(away) < limit:
            away[pool.submit(_run_chunk, todo[0].start, todo[0].stop)] = todo[0]
            todo.popleft()
    except BrokenProcessPool:
        return False
    return True


def _run_chunk(start: int, stop: int) -> list:
    """In a copy: the results of items start..stop-1, by the job inherited at the fork; None if the job
    fails on one (this process measures the chunk, its error raised here in full)."""
    try:
        return [_JOB(i) for i in range(start, stop)]
    except Exception:  # noqa: BLE001 - any failure of the job in the copy: the parent runs the chunk itself and raises it
        return None


def _collect(away: dict, results: list, back: deque, tick: Callable[[int], None]) -> bool:
    """The results of the chunks the copies have sent back; a chunk a copy failed on goes `back` (to be
    measured here). False once the pool is broken (a copy died): every chunk it held goes back."""
    alive = True
    for fut in [f for f in away if f.done()]:
        items = away.pop(fut)
        try:
            got = fut.result()
        except BrokenProcessPool:
            alive, got = False, None
        if got is None:
            back.append(items)
            continue
        results[items.start : items.stop] = got
        tick(len(items))
    return alive


def _next_here(todo: deque, away: dict, copies: int, taken: list) -> range | None:
    """The chunk this process measures next: from the other end of the list than the copies'; once the
    list is empty, the newest chunk handed out beyond the `copies` oldest (those the copies are on)."""
    if todo:
        return todo.pop() if away else todo.popleft()
    queued = list(away)[copies:]
    if not queued:
        return None
    taken.append(queued[-1])
    return away.pop(queued[-1])
