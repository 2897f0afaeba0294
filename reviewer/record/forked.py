"""Items of a scan measured by forked copies of the process as well as by the process itself.

The HDF4 library is serialized and pyhdf holds the GIL while it reads, so a scan of a thousand MODIS
granules used one CPU however many threads it had. A copy made by fork() starts in milliseconds with
everything the scan had set up (the catalog, the site grid, the scenes found, the caches warmed by the
first granule) and measures its share on another CPU; it sends back only the results.

Items are handed out in chunks, a copy never more than AHEAD chunks ahead of what it has sent back, while
this process measures chunks from the other end of the list, and at the end takes back the chunks a copy
has queued but not begun: a copy slowed by a busy CPU costs at most the chunk it is on. A copy that fails is replaced by this process doing its chunks; a cancel (raised by `tick`)
or any error kills the copies at once. Linux only: fork() is unsafe on macOS and absent on Windows.
"""

from __future__ import annotations

import logging
import os
import pickle
import select
import signal
import struct
import sys
import warnings
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

logger = logging.getLogger(__name__)

#: below this many items a fork (a few ms for a large process, and its copy-on-write faults) saves nothing
MIN_ITEMS = 128
#: chunks handed to a copy before it has sent back the first of them
AHEAD = 2
_RANGE = struct.Struct("<II")  # a chunk handed to a copy: items start..stop-1
_SIZE = struct.Struct("<Q")  # the length of a chunk's pickled results
_STOP = (0xFFFFFFFF, 0xFFFFFFFF)


def copies_for(n_items: int, processes: int) -> int:
    """How many forked copies to use for `n_items` items with `processes` processes in all (this one
    included): none on a platform without a safe fork, for few items, or without a second CPU."""
    if sys.platform != "linux" or n_items < MIN_ITEMS or processes < 2:
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
    raises stops the copies); guard() is held while forking (e.g. a library lock, so no other thread is
    inside that library in the copy). A job's results must pickle."""
    results: list = [None] * n_items
    todo = deque(range(s, min(s + chunk, n_items)) for s in range(0, n_items, chunk))
    helpers: list[_Copy] = []
    try:
        for _ in range(copies):
            try:
                helpers.append(_Copy(job, guard, [fd for h in helpers for fd in (h.down, h.up)]))
            except OSError as exc:
                logger.info("measuring without a forked copy: %s", exc)
                break
        while todo or any(h.given for h in helpers):
            for h in helpers:
                while h.alive and not h.stale and len(h.given) < AHEAD and todo:  # (stale answers come first)
                    h.give(todo.popleft())
            done = [h for h in helpers if h.given and h.ready(0)]
            for h in done:
                _collect(h, results, todo, tick)
            if done:
                continue
            items = _next_here(todo, helpers)
            if items is not None:
                for i in items:
                    results[i] = job(i)
                tick(len(items))
            else:
                _wait(helpers, 0.1)
                tick(0)
    finally:
        for h in helpers:
            h.close()
    return results


def _next_here(todo: deque, helpers: list[_Copy]) -> range | None:
    """The chunk this process measures next: from the other end of the list than the copies' (in order
    when alone); once the list is empty, a chunk a copy has queued but not begun (taken back: its answer
    for it is dropped), so no one waits on a copy slowed by a busy CPU for more than the chunk it is on."""
    if todo:
        return todo.pop() if helpers else todo.popleft()
    for h in helpers:
        if len(h.given) > 1:
            h.stale += 1
            return h.given.pop()
    return None


def _collect(h: _Copy, results: list, todo: deque, tick: Callable[[int], None]) -> None:
    """A copy's results for its oldest chunk; if it died instead, its chunks go back to the list."""
    items = h.given[0]
    got = h.take()
    if got is None:
        todo.extendleft(reversed(h.given))
        h.given.clear()
        return
    h.given.popleft()
    for i, result in zip(items, got, strict=True):  # (the chunks taken back come after every given one)
        results[i] = result
    tick(len(items))


def _wait(helpers: list[_Copy], timeout: float) -> None:
    busy = [h.up for h in helpers if h.given]
    if busy:
        select.select(busy, [], [], timeout)


class _Copy:
    """One forked copy: chunks go down one pipe, their pickled results come up another."""

    def __init__(self, job: Callable[[int], Any], guard: Callable[[], AbstractContextManager], others: list[int]):
        """Fork the copy; `others`: this process's ends of the other copies' pipes, which the copy closes."""
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        try:
            with guard(), warnings.catch_warnings():
                # (Python 3.12 warns of fork() in a process with threads: the copy runs only `job`, and the
                # guard keeps the one library it uses out of every other thread's hands while it forks)
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except OSError:  # no process to spare (EAGAIN, ENOMEM): forked_map goes on without this copy
            for fd in (down_r, down_w, up_r, up_w):
                os.close(fd)
            raise
        if pid == 0:
            for fd in (down_w, up_r, *others):
                os.close(fd)
            _serve(job, down_r, up_w)  # never returns
        os.close(down_r)
        os.close(up_w)
        self.pid, self.down, self.up = pid, down_w, up_r
        self.given: deque[range] = deque()
        self.stale = 0  # chunks taken back after they were handed down (their answers come last)
        self.alive = True

    def give(self, items: range) -> None:
        try:
            os.write(self.down, _RANGE.pack(items.start, items.stop))
        except OSError:  # it has gone: its chunks are taken back when its pipe ends
            self.alive = False
            return
        self.given.append(items)

    def ready(self, timeout: float) -> bool:
        return bool(select.select([self.up], [], [], timeout)[0])

    def take(self) -> list | None:
        """The results of the oldest chunk given, or None when the copy ended without them."""
        head = _read_exact(self.up, _SIZE.size)
        data = _read_exact(self.up, _SIZE.unpack(head)[0]) if len(head) == _SIZE.size else b""
        if not data:
            self.alive = False
            return None
        return pickle.loads(data)

    def close(self) -> None:
        """Stop the copy: at once (SIGKILL) when it still has work, else by telling it to end."""
        try:
            if self.given or self.stale or not self.alive:
                os.kill(self.pid, signal.SIGKILL)
            else:
                os.write(self.down, _RANGE.pack(*_STOP))
        except OSError:
            pass
        os.close(self.down)
        os.close(self.up)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:  # reaped already (SIGCHLD ignored by the application)
            pass


def _serve(job: Callable[[int], Any], down: int, up: int) -> None:
    """The copy's whole life: measure each chunk handed down and send its results up, until told to stop
    or the pipe ends; then leave at once (os._exit: no atexit handler or finalizer of the parent's runs)."""
    code = 0
    try:
        while True:
            head = _read_exact(down, _RANGE.size)
            if len(head) < _RANGE.size or _RANGE.unpack(head) == _STOP:
                break
            start, stop = _RANGE.unpack(head)
            data = pickle.dumps([job(i) for i in range(start, stop)], protocol=pickle.HIGHEST_PROTOCOL)
            _write_all(up, _SIZE.pack(len(data)) + data)
    except BaseException:  # noqa: BLE001 - the parent does this chunk itself when the pipe ends
        code = 1
    os._exit(code)


def _read_exact(fd: int, n: int) -> bytes:
    parts, got = [], 0
    while got < n:
        part = os.read(fd, n - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
