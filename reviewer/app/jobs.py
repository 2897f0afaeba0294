"""Background work for the viewer: prefetch of neighbouring dates into the shared scene cache, and a
small helper to run a function in a napari thread worker with progress, cancel and central errors.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from qtpy.QtCore import QObject, Signal

logger = logging.getLogger(__name__)


class Prefetcher:
    """Reads the dates around the shown one (further ahead in the stepping direction) into the cache.

    Each new position makes older requests stale: a stale request is dropped before it reads.
    """

    def __init__(self, *, workers: int = 2, ahead: int = 6, behind: int = 2) -> None:
        self.ahead = ahead
        self.behind = behind
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prefetch")
        self._generation = 0
        self._lock = threading.Lock()
        self.enabled = True

    def schedule(self, read: Callable[[int], Any], i: int, n: int, direction: int = 1) -> None:
        """Queue reads of i+direction .. i+direction*ahead, then the ones behind."""
        if not self.enabled or n <= 0:
            return
        with self._lock:
            self._generation += 1
            gen = self._generation
        direction = 1 if direction >= 0 else -1
        order = [i + direction * k for k in range(1, self.ahead + 1)] + [
            i - direction * k for k in range(1, self.behind + 1)
        ]
        for j in order:
            if 0 <= j < n:
                self._pool.submit(self._run, gen, read, j)

    def _run(self, gen: int, read: Callable[[int], Any], j: int) -> None:
        if gen != self._generation:
            return
        try:
            read(j)
        except Exception:  # noqa: BLE001 - a pool's future nobody reads would swallow any error silently: logged here,
            # and the date's own read on the UI thread reports it when the date is shown
            logger.debug("prefetch of %d failed", j, exc_info=True)

    def cancel(self) -> None:
        with self._lock:
            self._generation += 1

    def shutdown(self) -> None:
        self.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)


class Progress(QObject):
    """A thread-safe progress channel: core code calls it as `progress(fraction, message)`."""

    changed = Signal(float, str)

    def __call__(self, fraction: float, message: str) -> None:
        self.changed.emit(float(fraction), str(message))


def run_in_thread(
    func: Callable[..., Any],
    *args: Any,
    on_done: Callable[[Any], None] | None = None,
    on_error: Callable[[BaseException], None] | None = None,
    **kwargs: Any,
):
    """Start `func(*args, **kwargs)` in a thread worker (superqt's, which napari.qt.threading wraps);
    results and errors come back on the UI thread. Errors without a handler are logged, never raised."""
    from superqt.utils import create_worker

    connect = {"errored": on_error or (lambda exc: logger.error("background job failed: %s", exc))}
    if on_done is not None:
        connect["returned"] = on_done
    worker = create_worker(func, *args, _start_thread=False, _connect=connect, **kwargs)
    worker.start()
    return worker


def alive(obj) -> bool:
    """False once the Qt object behind a Python wrapper was deleted (a late worker result is dropped)."""
    try:
        from shiboken6 import isValid
    except ImportError:  # another binding: assume alive
        return True
    return bool(isValid(obj))


def on_screen(widget) -> bool:
    """The widget is shown and some of it is on screen: a dock behind another dock's tab counts as visible to Qt
    (moved off the window, never hidden), so a plot drawn there on every change was work nobody saw."""
    return bool(widget.isVisible()) and not widget.visibleRegion().isEmpty()


def when_settled(func: Callable[[], Any], delay_ms: int, parent: QObject | None = None) -> Callable[..., None]:
    """A handler that calls `func` once events stop arriving for `delay_ms` (stepping through dates
    fires one event per step; a plot cursor or caption need only follow where the user stops)."""
    from qtpy.QtCore import QTimer

    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(delay_ms)
    timer.timeout.connect(func)

    def handler(*_: Any) -> None:
        timer.start()

    handler.timer = timer  # keep the timer alive with the handler
    return handler
