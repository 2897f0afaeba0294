"""Review items' trajectories: the series of the item shown read in the series worker and drawn in the trajectory
dock, the series of upcoming items read ahead (a MODIS record reads for seconds) and kept, and the series cube
warmed for the items after those. Stale reads stop through their cancel events; nothing here waits on the UI."""

from __future__ import annotations

import dataclasses
import logging
import threading
from concurrent.futures import ThreadPoolExecutor

from qtpy.QtCore import QObject, Signal

from reviewer.app.evidence_prep import Prepared, item_series_name, item_trajectory
from reviewer.errors import Cancelled

logger = logging.getLogger(__name__)

SERIES_KEPT = 32  # trajectories of recent items kept (a MODIS series takes seconds to read)


class ItemSeries(QObject):
    """Reads items' series in its own thread (not Qt's global pool of two, which a long MODIS series would hold)
    and draws the shown item's in `trajectory` (the QtTrajectory dock)."""

    #: (key, series key, Trajectory or None, error or None, the read's cancel event) from the series worker
    series_ready = Signal(object)
    series_partial = Signal(object)  # (key, series key, Trajectory so far, scenes read, of) from the series worker
    made = Signal(object)  # (Prepared, still wanted?) an upcoming item's stack and region, made in the series worker

    def __init__(self, trajectory, harmonized, cache) -> None:
        super().__init__()
        self.trajectory = trajectory
        self.cache = cache  # the session's scene cache
        self.harmonized = harmonized  # () -> bool: the view state's trajectory_harmonized
        self.closed = False
        self._series: dict[tuple, object] = {}  # series key -> Trajectory read (the trajectories of recent items)
        self._cancel: dict[tuple, threading.Event] = {}  # series being read
        self._item_of: dict[tuple, str] = {}  # series being read -> the item it was started for
        self._item_series: dict[str, tuple] = {}  # item -> the series key last asked for it
        self._wanted: tuple | None = None  # the series the item shown waits for
        self._plot_cancel: threading.Event | None = None  # set once the plot was asked for something else
        self._shown: Prepared | None = None
        self._warm_stop = threading.Event()  # set: the series cube's warming for later items stops
        #: () -> the (site index, index name, sensors) whose series grids to read ahead, worked out in the series worker
        self._warm_plan = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evidence-series")
        self.series_ready.connect(self._on_series)
        self.series_partial.connect(self._on_partial)
        self.made.connect(self._on_made)

    def read(self, key: str) -> bool:
        """The item's series was read ahead (or while it was shown) and is kept: its trajectory draws at once."""
        skey = self._item_series.get(key)
        return skey is not None and skey in self._series

    def has(self, p: Prepared) -> bool:
        return p.mask is None or p.series_key(self.harmonized()) in self._series

    def coming(self) -> None:
        """An item's series is drawn in this turn (`show`, on a site change): until then the trajectory plot expects
        it, so it takes the new site without drawing its empty plot first (one draw per site change, not two)."""
        self.trajectory.expect_series()

    def show(self, p: Prepared) -> None:
        """The item's trajectory: the series kept when it was read ahead, else read now (no progress bar: its
        synchronous repaints held the UI ~70 ms each)."""
        traj = self.trajectory
        if p.mask is None:  # no region: the last item's series must not stay, and the plot says why
            self._wanted = None
            traj.no_series("this question names no region to plot: click a pixel on the canvas for its trajectory")
            return
        traj.set_region(p.mask, item_series_name(p.view))
        skey = p.series_key(self.harmonized())
        series = self._series.get(skey)
        reading = (
            ""
            if series is not None
            else f"reading {item_series_name(p.view)} over the region ({len(p.stack)} scenes)..."
        )
        self._plot_cancel = traj.expect_series(reading)
        self._shown = p
        if series is not None:
            self._wanted = None
            traj.show_series(series, self.harmonized())
            return
        self._wanted = skey
        self.start(p)

    def start(self, p: Prepared) -> None:
        """Start reading an item's series unless it is kept or already being read."""
        if self.closed or p.mask is None:
            return
        key, harmonized = p.key, self.harmonized()
        skey = p.series_key(harmonized)
        self._item_series.pop(key, None)
        self._item_series[key] = skey
        while len(self._item_series) > SERIES_KEPT:
            self._item_series.pop(next(iter(self._item_series)))
        reading = self._cancel.get(skey)
        if skey in self._series or (reading is not None and not reading.is_set()):
            return  # (a read cancelled but not yet ended is started again: the cube keeps the scenes it read)
        cancel = self._cancel[skey] = threading.Event()
        self._item_of[skey] = key
        self._warm_stop.set()  # a cube warming ahead gives way: queued again behind this series
        cube = self.trajectory.cube

        def job() -> None:
            if cancel.is_set():
                self._emit(self.series_ready, (key, skey, None, None, cancel))
                return

            def partial(so_far, done: int, total: int) -> None:
                self._emit(self.series_partial, (key, skey, so_far, done, total))

            try:
                series = item_trajectory(p, harmonized, cancel.is_set, partial=partial, cube=cube)
            except Cancelled:  # another item came first: not an error (read again if it is still wanted)
                self._emit(self.series_ready, (key, skey, None, None, cancel))
                return
            except Exception as exc:  # noqa: BLE001 - a failed trajectory is said when the item is shown
                self._emit(self.series_ready, (key, skey, None, exc, cancel))
                return
            self._emit(self.series_ready, (key, skey, series, None, cancel))

        self._pool.submit(job)
        if self._warm_plan is not None:
            self._queue_warm()

    def start_made(self, make, wanted) -> None:
        """Start reading an upcoming item's series once the series worker has made what it reads (`make()`: a Prepared
        with its stack and region, or None), if `wanted(prepared)` still holds back on the UI thread."""

        def job() -> None:
            if self.closed:
                return
            try:
                p = make()
            except Exception:  # noqa: BLE001 - the item's own trajectory says what fails when it is shown
                logger.debug("series of an upcoming item not planned", exc_info=True)
                return
            if p is not None:
                self._emit(self.made, (p, wanted))

        self._pool.submit(job)

    def _on_made(self, payload) -> None:
        p, wanted = payload
        if not self.closed and wanted(p):
            self.start(p)

    def stop_but(self, keep: set) -> None:
        """Stop the series being read for items no longer upcoming (the one on screen is never stopped); a series
        still upcoming goes on where it was (a large site's, read window by window, would start again)."""
        for skey, cancel in self._cancel.items():
            if skey != self._wanted and self._item_of.get(skey) not in keep:
                cancel.set()  # (the scenes it read stay in the trajectory plot's cube)

    def _on_series(self, payload) -> None:
        key, skey, series, exc, cancel = payload
        if self._cancel.get(skey) is cancel:  # (not a newer read of the same series)
            self._cancel.pop(skey)
            self._item_of.pop(skey, None)
        if self.closed:
            return
        if series is not None:
            self._series[skey] = series
            while len(self._series) > SERIES_KEPT:
                self._series.pop(next(iter(self._series)))
        mine = self._plot_cancel
        if self._wanted != skey or mine is None or mine.is_set():
            return  # not the item shown, or the user asked the plot for something else since
        self._wanted = None
        if exc is not None:
            self.trajectory.series_failed(exc)
        elif series is not None:
            self.trajectory.show_series(series, self.harmonized())
        elif self._shown is not None:  # cancelled while it was still wanted: read it again (still busy)
            self._wanted = skey
            self.start(self._shown)

    def _on_partial(self, payload) -> None:
        """The scenes read so far of the series the item shown waits for (a MODIS series reads for seconds): drawn
        as they come, the plot busy until the rest lands."""
        _key, skey, so_far, done, total = payload
        mine = self._plot_cancel
        if self.closed or self._wanted != skey or mine is None or mine.is_set():
            return
        self.trajectory.show_series(so_far, self.harmonized(), partial=f"(reading: {done} of {total} scenes)")

    # ------------------------------------------------------------------ the cube, warmed for later items

    def warm(self, plan) -> None:
        """The cube's warming for later items, queued behind the series asked for: `plan()` gives their (site index,
        index name, sensors), each distinct one warmed once. The plan is worked out in the series worker (each new
        question's evidence view is checked against its schema, ~1 ms of the UI thread per item change); a series
        asked for later goes before the warming (what it read stays in the cube)."""
        self._warm_plan = plan
        self._queue_warm()

    def _queue_warm(self) -> None:
        """(Re)queue the warming at the end of the series worker's queue; the warming queued before stops."""
        self._warm_stop.set()
        stop = self._warm_stop = threading.Event()
        if self._warm_plan is not None:
            self._pool.submit(self._warm_job, self._warm_plan, stop)

    def _warm_job(self, plan, stop: threading.Event) -> None:
        """Series worker: the scenes of the stacks the later questions will show read into the cube."""
        from reviewer.record.series import warm_cube
        from reviewer.record.stack import open_stack

        cube = self.trajectory.cube
        if stop.is_set() or self.closed or cube is None:
            return
        try:
            stacks = plan()
        except Exception:  # noqa: BLE001 - each item's own trajectory says what fails
            logger.debug("series cube's warming not planned", exc_info=True)
            return
        distinct = {(id(w[0]), *w[1:]): w for w in stacks if w is not None}  # (a SceneIndex does not hash)
        for index, name, sensors in distinct.values():
            if stop.is_set() or self.closed:
                return
            try:
                stack = open_stack(index, sensors=sensors or None, cache=self.cache)
                stack = dataclasses.replace(stack, harmonized=True) if self.harmonized() else stack
                warm_cube(cube, stack, name, lambda: stop.is_set() or self.closed)
            except Cancelled:
                return
            except Exception:  # noqa: BLE001 - the item's own trajectory says what fails
                logger.debug("series cube of %s not warmed", name, exc_info=True)

    def _emit(self, signal, payload) -> None:
        try:
            signal.emit(payload)
        except RuntimeError:  # the window closed meanwhile
            pass

    def close(self) -> None:
        self.closed = True
        self._warm_stop.set()
        for cancel in self._cancel.values():
            cancel.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
