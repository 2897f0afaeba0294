"""An item's evidence in the viewer: its site opened in the background, its composite and stored stretch,
its period shaded, its dates side by side in the pair view, the chip strip over the period, its region drawn
and the trajectory over that region. The view itself comes from the core (`reviewer.bank.evidence`).

`EvidenceLoader.load` never blocks on disk: the site opens in the session's worker; the item's stack, the
date it opens on, the pair's panels and the chip strip are prepared in the evidence worker and its trajectory
in the series worker. `prefetch` prepares the next item the same way (or indexes its site), so showing it is
setting arrays on the docks, with one canvas slice.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from qtpy.QtCore import QObject, QTimer, Signal

from reviewer.app.jobs import next_turn, run_in_thread, settle_layouts
from reviewer.app.review_model import EvidenceFocus, evidence_focus
from reviewer.errors import Cancelled, ReviewerError

logger = logging.getLogger(__name__)


def evidence_view(question: dict[str, Any]):
    """The question's EvidenceView (its own, or the default the core gives an older question)."""
    from reviewer.bank.evidence import evidence_for

    return evidence_for(question)


def region_mask(region, site) -> tuple[np.ndarray, np.ndarray]:
    """(mask on the site grid, polygon ring in (row, col)) of an evidence Region."""
    from reviewer.bank.series import quadrant_masks
    from reviewer.record.series import polygon_region

    h, w = site.shape
    if region.kind == "polygon":
        inv = ~site.transform
        ring = np.array([(inv * (x, y))[::-1] for x, y in region.coordinates], float)  # (row, col)
        return polygon_region(ring, (h, w)), ring
    if region.kind == "quadrant":
        name = {"NW": "north-west", "NE": "north-east", "SW": "south-west", "SE": "south-east"}[region.quadrant]
        r0, c0 = (0, 0) if name == "north-west" else (0, w / 2) if name == "north-east" else (h / 2, 0)
        if name == "south-east":
            r0, c0 = h / 2, w / 2
        ring = np.array([(r0, c0), (r0, c0 + w / 2), (r0 + h / 2, c0 + w / 2), (r0 + h / 2, c0)], float)
        return quadrant_masks((h, w))[name], ring
    ring = np.array([(0, 0), (0, w), (h, w), (h, 0)], float)
    return np.ones((h, w), bool), ring


def sensor_filter(labels: frozenset[str], sensors) -> tuple[str, ...]:
    """The sensors of `sensors` the site's record has (`labels`: its record's sensors), in their order; () when that
    is all of them (no filter)."""
    kept = tuple(x for x in sensors if x in labels)
    return () if set(kept) == labels else kept


class ViewMemo:
    """What the loader works out again and again from the same inputs, kept for the window's life (bounded): each
    question's evidence view (its schema check, ~3 ms, ran for every upcoming item at every item change) and each
    site index's record sensors (a pass over ~1,000 scenes)."""

    VIEWS = 512
    INDEXES = 8

    def __init__(self) -> None:
        self._views: OrderedDict[str, Any] = OrderedDict()  # the question's JSON -> its EvidenceView (frozen)
        self._labels: OrderedDict[int, tuple[Any, frozenset[str]]] = OrderedDict()  # id(index) -> (index, sensors)

    def view(self, question: dict[str, Any]):
        """The question's EvidenceView (raises ReviewerError as `evidence_view` does)."""
        key = json.dumps(question, sort_keys=True, default=str)
        view = self._views.get(key)
        if view is None:
            view = self._views[key] = evidence_view(question)
            while len(self._views) > self.VIEWS:
                self._views.popitem(last=False)
        return view

    def labels(self, index) -> frozenset[str]:
        """The sensors of the index's record."""
        kept = self._labels.get(id(index))
        if kept is None or kept[0] is not index:  # (an id reused by another index after the first was dropped)
            kept = self._labels[id(index)] = (index, frozenset(sc.label for sc in index.record_scenes()))
            while len(self._labels) > self.INDEXES:
                self._labels.popitem(last=False)
        return kept[1]


def view_years(view) -> tuple[int, int] | None:
    """The years the view spans: first to last of its dates and periods."""
    years = [int(d[:4]) for d in view.dates] + [y for p in view.periods for y in p]
    return (min(years), max(years)) if years else None


class EvidenceLoader(QObject):
    """Shows items' evidence views in the reviewer window (`app`: ReviewerApp)."""

    #: (item key, problem or "") once the view was applied (the pair and chips may still be reading)
    applied = Signal(str, str)
    prepared_ready = Signal(object)  # (key, Prepared or None, error or None) from the evidence worker
    #: (key, series key, Trajectory or None, error or None, the read's cancel event) from the series worker
    series_ready = Signal(object)
    series_wanted = Signal(object)  # (key, Prepared): a prefetched item's series to read next
    series_partial = Signal(object)  # (key, series key, Trajectory so far, scenes read, of) from the series worker

    def __init__(self, app, store, *, prefetch: bool = True) -> None:
        super().__init__()
        self.app = app
        self.session = app.session
        self.store = store
        self.prefetch_enabled = prefetch
        self.key: str | None = None
        self.wanted: str | None = None  # the item on screen (its evidence may load on the next event-loop turn)
        self.view = None
        self.problem = ""
        self.sensors: tuple[str, ...] = ()  # the sensors the question spans: the stack shows those
        self._errors_at = 0
        self._closed = False  # set when the window closes: late timers and results do nothing
        self._pending: tuple[str, Any, str] | None = None  # waiting for its site to open
        self._finishing: str | None = None  # the item whose site change ends in a later event-loop turn
        self._indexes: dict[str, Any] = {}  # site folder -> SceneIndex opened ahead of time
        self.memo = ViewMemo()
        self._focus: dict[str, EvidenceFocus] = {}  # item -> the dates its evidence opens on (review_model)
        self._prefetch_cancel = threading.Event()
        self._prepared: dict[str, Prepared] = {}  # item key -> its evidence prepared in the worker
        self._preparing: str | None = None  # the item shown whose evidence the worker is preparing now
        self._series: dict[tuple, Any] = {}  # series key -> Trajectory read (the trajectories of recent items)
        self._series_cancel: dict[tuple, threading.Event] = {}  # series being read
        self._series_item: dict[tuple, str] = {}  # series being read -> the item it was started for
        self._item_series: dict[str, tuple] = {}  # item -> the series key last asked for it
        self._series_wanted: tuple | None = None  # the series the item shown waits for
        self._traj_cancel: threading.Event | None = None
        self._shown_prepared: Prepared | None = None
        self._upcoming: list[str] = []  # the items prefetched, nearest first (the next one, the one after)
        self._indexing: dict[str, list] = {}  # site folder -> what waits for its index being opened ahead
        # prefetch work runs while this is set: the UI thread clears it as an item starts coming up and sets it once
        # the item is on screen and its paint had its time (`_hold_prefetch`); workers only wait on it
        self._quiet = threading.Event()
        self._quiet.set()
        self._quiet_timer = QTimer(self)
        self._quiet_timer.setSingleShot(True)
        self._quiet_timer.timeout.connect(self._release_prefetch)
        self._warm_stop = threading.Event()  # set: the series cube's warming for later items stops
        self._warm: list[tuple] = []  # (site index, index name, sensors) whose series grids to read ahead
        # own single threads (not Qt's global pool of two, which a long MODIS series would hold)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evidence")
        self._traj_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evidence-series")
        self.prepared_ready.connect(self._on_prepared)
        self.series_ready.connect(self._on_series)
        self.series_partial.connect(self._on_series_partial)
        self.series_wanted.connect(self._start_series)
        self.session.site_opened.connect(self._on_site_opened)

    @property
    def closed(self) -> bool:
        return self._closed

    @closed.setter
    def closed(self, value: bool) -> None:
        """Closing (the window sets it) also stops the evidence workers."""
        self._closed = bool(value)
        if value:
            self.close()

    # ------------------------------------------------------------------ which folder holds a site

    def site_dir(self, site_id: str | None) -> str | None:
        """The folder of a bank's site: the scanned folder the store knows, else the demo site for the demo bank."""
        from reviewer.review.api import site_folder

        if not site_id:
            return None
        found = site_folder(self.store, site_id)
        if found:
            return found
        from reviewer.record.demo import demo_site_dir

        demo = demo_site_dir()
        try:
            import json

            if json.loads((demo / "site.json").read_text(encoding="utf-8")).get("id") == site_id:
                return str(demo)
        except (OSError, ValueError):
            pass
        return None

    # ------------------------------------------------------------------ loading

    def load(self, key: str, question: dict[str, Any]) -> str:
        """Show the item's evidence; returns '' or the problem shown instead (missing site, bad view)."""
        if self.closed:
            return ""
        self.key, self.problem = key, ""
        self._hold_prefetch(QUIET_S)  # prefetch work gives way while this item comes up
        try:
            view = self.memo.view(question)
        except ReviewerError as exc:
            return self._fail(key, f"no evidence view: {exc}")
        self.view = view
        self._focus[key] = evidence_focus(question, view)
        folder = self.site_dir(question.get("site"))
        if folder is None:
            return self._fail(key, f"site {question.get('site')!r} is not in this store (scan its folder once)")
        if not Path(folder).is_dir():
            return self._fail(key, f"site folder {folder} is missing")
        self.sensors = tuple(question.get("sensors") or ())
        index = self.session.index
        if index is not None and Path(index.site.dir).resolve() == Path(folder).resolve():
            self._apply(key, view, same_site=True)
            return ""
        self._pending = (key, view, folder)
        site_key = str(Path(folder).resolve())
        ready = self._indexes.pop(site_key, None)
        prepared = self._prepared.get(key)
        if ready is not None and prepared is not None and prepared.index is ready:
            self._pending = None  # the site indexed and the item prepared ahead: one stack shown, no disk
            self._finishing = key
            self._open_prepared_later(key, site_key, ready, prepared)
        elif ready is not None:
            self.session.show_index(ready, in_turns=True)  # indexed ahead of time: no disk on the UI thread
        else:
            self.session.open_site(folder)
        return ""

    def _open_prepared_later(self, key: str, site_key: str, index, prepared: Prepared) -> None:
        """Another site's index and the item's evidence, prepared ahead, shown from the next event-loop turn on: the
        key's turn shows the question (what the reviewer reads first) and is painted, and the new site's stack,
        which napari takes with a new number of dates (~30-50 ms here), has a turn of its own (the two and their paint
        held the UI ~120 ms)."""

        def open_site() -> None:
            if self.closed or self.key != key:  # another item came first: the index stays ready for its site
                self._indexes.setdefault(site_key, index)
                if self._finishing == key:
                    self._finishing = None
                return
            self._set_state(prepared)
            self.session.show_index(index, stack=(prepared.stack, prepared.current))
            self._finish_site(key, index, prepared)

        next_turn(open_site)

    def _finish_site(self, key: str, index, prepared: Prepared) -> None:
        """The rest of a site change in three more event-loop turns, each painted before the next (each well under
        100 ms, where one turn held the UI 0.3-1.8 s): the site's boundary, the docks take the site, then the item's
        pair, chips, trajectory and region."""
        self._finishing = key

        def docks() -> None:
            if not self.closed and self.session.index is index:
                self.session.announce(index)  # also when another item came meanwhile: the docks follow the site
            if not self.closed and self.key == key and self.session.index is index:
                next_turn(evidence)
            else:
                self._finishing = None

        def evidence() -> None:
            self._finishing = None
            if not self.closed and self.key == key and self.session.index is index:
                self._show_prepared(prepared)

        # the site's boundary draws in the first of these turns (StackSession._boundary_later): the docks' site next
        # (the two in one turn held the UI ~100-120 ms with its paint)
        next_turn(lambda: next_turn(docks))

    def _fail(self, key: str, text: str) -> str:
        self.problem = text
        self._pending = None
        self.applied.emit(key, text)
        return text

    def _on_site_opened(self, index) -> None:
        if self._pending is None:
            return
        key, view, folder = self._pending
        self._pending = None
        if key == self.key:
            self._apply(key, view)

    def _apply(self, key: str, view, *, same_site: bool = False) -> None:
        """Show the item's evidence: from what `prefetch` prepared when it is there and still fits the stack's
        filters, else prepared now in the evidence worker (the same steps, only later). On the `same_site` as the item
        before, prepared ahead, all of it in this turn (see `_show_prepared`)."""
        s = self.session
        want = self._wanted_for(view)
        ready = self._prepared.get(key)
        if ready is not None and ready.index is s.index and ready.filters == want:
            self._show_prepared(ready, one_turn=same_site)
            return
        self._preparing = key
        self._submit_prepare(key, view, want, trajectory=False)

    def ready(self, key: str, *, trajectory: bool = False) -> bool:
        """The item's evidence is prepared for the site shown (showing it only sets arrays); with `trajectory`,
        its series is read too (or it has no region to read one over)."""
        p = self._prepared.get(key)
        if self._closed or p is None:
            return False
        if trajectory and p.mask is not None and p.series_key(self._harmonized()) not in self._series:
            return False
        return p.index is self.session.index or any(p.index is ix for ix in self._indexes.values())

    def _wanted_for(self, view, index=None) -> tuple:
        """(sensors, years, months, max_cloud, pair method, chip months): what the prepared stack and docks
        depend on; for another site's `index`, the filters it opens with (none)."""
        st = self.session.state
        sensors = sensor_filter(self.memo.labels(index or self.session.index), self.sensors)
        if index is not None:
            return (sensors, None, (), 1.0, st.pair_method, tuple(st.chip_months))
        return (sensors, st.years, tuple(st.months), st.max_cloud, st.pair_method, tuple(st.chip_months))

    def _submit_prepare(self, key: str, view, want: tuple, *, trajectory: bool, index=None) -> None:
        """Prepare an item's evidence in the evidence worker (on the site shown, or `index`); with
        `trajectory`, its series after it (prefetch)."""
        index = index or self.session.index
        read = self.session.read_frame  # marks the frame as read for the canvas
        cancel = self._prefetch_cancel
        focus = self._focus.get(key) or EvidenceFocus(None, None)

        def job() -> None:
            if trajectory:
                self._wait_quiet(cancel)  # (the item shown, when it is prepared now, is queued behind: not held up)
                if cancel.is_set():
                    return
            try:
                ready = prepare_evidence(key, index, view, want, read, focus)
            except Exception as exc:  # noqa: BLE001 - shown on the UI thread
                logger.debug("evidence of %s not prepared", key, exc_info=True)
                self._emit(self.prepared_ready, (key, None, exc))
                return
            self._emit(self.prepared_ready, (key, ready, None))
            if trajectory and ready.mask is not None:
                self._emit(self.series_wanted, (key, ready))

        self._pool.submit(job)

    def _start_series(self, payload) -> None:
        """UI thread: start reading an item's series unless it is cached or already being read."""
        key, ready = payload
        if self.closed:
            return
        skey = ready.series_key(self._harmonized())
        self._item_series.pop(key, None)
        self._item_series[key] = skey
        while len(self._item_series) > SERIES_KEPT:
            self._item_series.pop(next(iter(self._item_series)))
        reading = self._series_cancel.get(skey)
        if skey in self._series or (reading is not None and not reading.is_set()):
            return  # (a read cancelled but not yet ended is started again: the cube keeps the scenes it read)
        cancel = self._series_cancel[skey] = threading.Event()
        self._series_item[skey] = key
        self._warm_stop.set()  # a cube warming ahead gives way: queued again behind this series
        harmonized = self._harmonized()
        cube = self.app.trajectory.cube

        def stop() -> bool:  # asked before each scene: a prefetched series waits while an item is shown
            if skey != self._series_wanted:
                self._wait_quiet(cancel)
            return cancel.is_set()

        def job() -> None:
            if cancel.is_set():
                self._emit(self.series_ready, (key, skey, None, None, cancel))
                return

            def partial(so_far, done: int, total: int) -> None:
                self._emit(self.series_partial, (key, skey, so_far, done, total))

            try:
                series = item_trajectory(ready, harmonized, stop, partial=partial, cube=cube)
            except Cancelled:  # another item came first: not an error (read again if it is still wanted)
                self._emit(self.series_ready, (key, skey, None, None, cancel))
                return
            except Exception as exc:  # noqa: BLE001 - a failed trajectory is said when the item is shown
                self._emit(self.series_ready, (key, skey, None, exc, cancel))
                return
            self._emit(self.series_ready, (key, skey, series, None, cancel))

        self._traj_pool.submit(job)
        if self._warm:
            self._queue_warm()

    def _hold_prefetch(self, seconds: float) -> None:
        """UI thread: prefetch work waits at least `seconds` from now (prefetch readers holding the GIL and the CPUs
        made the key's turn and its paint slower), and for as long as the item shown is still coming up."""
        self._quiet.clear()
        if not self._quiet_timer.isActive() or self._quiet_timer.remainingTime() < seconds * 1000:
            self._quiet_timer.start(int(seconds * 1000))

    def _release_prefetch(self) -> None:
        """UI thread: the hold is over unless the item shown is still coming up (another site's item takes a few
        turns): then it is checked again a little later."""
        if self.changing():
            self._quiet_timer.start(int(QUIET_PAINT_S * 1000))
        else:
            self._quiet.set()

    def _wait_quiet(self, cancel: threading.Event | None = None) -> None:
        """Worker: wait until the UI thread lets prefetch work run (`_quiet`), unless cancelled or closed. The wanted
        item's own reads never wait."""
        while not self._closed and not (cancel is not None and cancel.is_set()):
            if self._quiet.wait(0.05):
                return

    def _emit(self, signal, payload) -> None:
        try:
            signal.emit(payload)
        except RuntimeError:  # the window closed meanwhile
            pass

    def _harmonized(self) -> bool:
        return bool(getattr(self.session.state, "trajectory_harmonized", False))

    def _on_prepared(self, payload) -> None:
        key, ready, exc = payload
        if self.closed:
            return
        if ready is not None:
            self._prepared[key] = ready
            while len(self._prepared) > 4:
                self._prepared.pop(next(iter(self._prepared)))
        if key != self._preparing or key != self.key:
            return
        self._preparing = None
        if exc is not None:
            self._fail(key, f"evidence not read: {exc}")
            return
        if ready.index is self.session.index:
            self._show_prepared(ready)

    def _on_series(self, payload) -> None:
        key, skey, series, exc, cancel = payload
        if self._series_cancel.get(skey) is cancel:  # (not a newer read of the same series)
            self._series_cancel.pop(skey)
            self._series_item.pop(skey, None)
        if self.closed:
            return
        if series is not None:
            self._series[skey] = series
            while len(self._series) > SERIES_KEPT:
                self._series.pop(next(iter(self._series)))
        mine = self._traj_cancel
        if self._series_wanted != skey or mine is None or mine.is_set():
            return  # not the item shown, or the user asked the plot for something else since
        self._series_wanted = None
        traj = self.app.trajectory
        if exc is not None:
            traj.series_failed(exc)
        elif series is not None:
            traj.show_series(series, self._harmonized())
        elif self._shown_prepared is not None:  # cancelled while it was still wanted: read it again (still busy)
            self._series_wanted = skey
            self._start_series((self._shown_prepared.key, self._shown_prepared))

    def _on_series_partial(self, payload) -> None:
        """The scenes read so far of the series the item shown waits for (a MODIS series reads for seconds): drawn
        as they come, the plot busy until the rest lands."""
        _key, skey, so_far, done, total = payload
        mine = self._traj_cancel
        if self.closed or self._series_wanted != skey or mine is None or mine.is_set():
            return
        self.app.trajectory.show_series(so_far, self._harmonized(), partial=f"(reading: {done} of {total} scenes)")

    def _show_prepared(self, p: Prepared, *, one_turn: bool = False) -> None:
        """The UI thread's share of an item change: set what the worker prepared (stack, frame, pair, chips,
        trajectory) with one canvas slice, one stack hand-over to the docks and no re-reading. With `one_turn` (the
        next item on the same site, prepared ahead) all of it in this turn, painted once: each paint of the window
        costs 15-35 ms here (Xvfb, software GL), and the item is on screen only once all of it is. Else (a site
        changed in this item change: its turns are long) in two event-loop turns, each painted before the next: the
        canvas (date and region) now, the docks (Stack, Pair, Chips, the trajectory and its period) next. The item
        counts as shown once the docks' turn ran (`_finishing`)."""
        s, st, view = self.session, self.session.state, p.view
        self._errors_at = len(s.reporter.messages)
        with st.events.locked.blocker():  # (the Stack dock shows the lock with the item's stack, in `_show_docks`)
            st.locked = False
        s.keep_stretch(view.composite, view.stretch)  # the composite's stretch is the item's
        self._set_state(p)
        if s.stack is not p.stack:
            s.show_stack(p.stack, p.current, announce=False)
        with st.events.locked.blocker():
            st.locked = True  # the item's stretch stays while the reviewer looks around
        if p.ring is not None:
            self._draw_region(p.ring)
        self._turn = turn = object()  # a later item's change drops this one's remaining turns
        if one_turn:
            self._show_docks(p)
            return
        self._finishing = p.key
        self._after_paint(turn, p, self._show_docks)

    def _after_paint(self, turn, p: Prepared, step) -> None:
        """`step(p)` in a later event-loop turn, unless another item's change began meanwhile or the dock moved on to
        another item (whose evidence loads in a later turn still)."""

        def run() -> None:
            if self.closed or self._turn is not turn or self.key != p.key or self.wanted not in (None, p.key):
                if self._finishing == p.key and self._turn is turn:
                    self._finishing = None
                return
            step(p)

        next_turn(run)

    def _show_docks(self, p: Prepared) -> None:
        """The docks' share: the Stack dock (sensor boxes, count, stretch line), the pair, the chip strip, the period
        shaded and the trajectory drawn; the item is shown. (A turn of its own for the trajectory cost one more paint
        of the window, ~20 ms here.)"""
        app, st = self.app, self.session.state
        self._sync_sensor_checks()
        app.controls.show_stack(p.stack)  # the Stack dock's count and stretch line
        show_pair(app.pair, p)
        show_chips(app.chips, p, st.stretch)
        st.period = p.years
        self._show_trajectory(p)
        if self._finishing == p.key:
            self._finishing = None
            self._hold_prefetch(QUIET_PAINT_S)  # its paint still to come
        self.applied.emit(p.key, "")
        self.session.read_neighbours_later()  # (not while the item's turns ran: the readers slowed their paints)
        self.session.update_status_bar()
        settle_layouts()

    def _set_state(self, p: Prepared) -> None:
        """The view state says what the prepared item shows, without the handlers that would re-read it."""
        st, ev, view = self.session.state, self.session.state.events, p.view
        with ev.chip_years.blocker(), ev.sensors.blocker(), ev.composite.blocker(), ev.stretch.blocker():
            with ev.pair.blocker():
                st.chip_years = p.years
                st.sensors = p.filters[0]
                st.composite = view.composite
                st.stretch = view.stretch
                st.pair = p.pair

    def _show_trajectory(self, p: Prepared) -> None:
        """The cached series when prefetch read it, else read now in the trajectory worker (no progress bar:
        its synchronous repaints held the UI ~70 ms each)."""
        traj = self.app.trajectory
        if p.mask is None:  # no region: the last item's series must not stay, and the plot says why
            traj.no_series("this question names no region to plot: click a pixel on the canvas for its trajectory")
            return
        traj.set_region(p.mask, item_series_name(p.view))
        skey = p.series_key(self._harmonized())
        series = self._series.get(skey)
        reading = "" if series is not None else f"reading {p.view.index} over the region ({len(p.stack)} scenes)..."
        self._traj_cancel = traj.expect_series(reading)  # (a series read ahead: drawn now, its caption laid out once)
        self._shown_prepared = p
        if series is not None:
            self._series_wanted = None
            traj.show_series(series, self._harmonized())
            return
        self._series_wanted = skey
        self._start_series((p.key, p))

    def _sync_sensor_checks(self) -> None:
        """The Stack dock's sensor boxes show the item's sensors (the dock has no model listener for them)."""
        self.app.controls.show_sensors(self.session.state.sensors)

    def _draw_region(self, ring: np.ndarray) -> None:
        """The region on the canvas through napari's public data setter (kept when the next item has the same
        region; one rebuild of the layer when it changes, where the private in-place edit had none)."""
        s = self.session
        layer = s.region_shapes_layer()
        ring = np.asarray(ring, float)
        same = len(layer.data) == 1 and layer.shape_type == ["polygon"]
        if same and not np.array_equal(np.asarray(layer.data[0])[:, -2:], ring):
            layer.data = [ring]  # one polygon for another: its type and colours are kept (one rebuild)
        elif not same:
            if len(layer.data):
                layer.data = []
            layer.add(ring, shape_type="polygon")
        if s.image_layer is not None and s.viewer.layers.selection.active is not s.image_layer:
            s.viewer.layers.selection.active = s.image_layer

    # ------------------------------------------------------------------ shown, prefetch

    def changing(self) -> bool:
        """The item shown is still coming up: its site opening, its evidence being prepared, or its later turns to
        run (what an item left meanwhile still had to do does not count)."""
        key = self.key
        if key is None:
            return False
        return (self._pending is not None and self._pending[0] == key) or key in (self._preparing, self._finishing)

    def shown(self, *, trajectory: bool = True) -> bool:
        """The current item's evidence is fully on screen: canvas, pair, chips and (unless told) trajectory."""
        app, s = self.app, self.session
        if self.key != self.wanted:
            return False
        if self.problem:
            return True
        if self._pending is not None or self._preparing is not None or self._finishing is not None or self.view is None:
            return False
        if app._busy or not s.frame_shown():
            return False
        if trajectory and app.trajectory.busy:
            return False
        if s.state.pair is not None and (app.pair.busy or len(app.pair.rgbs) != 2):
            failed = any(t.startswith("pair view") for _lvl, t in s.reporter.messages[self._errors_at :])
            if not failed or app.pair.busy:  # a pair that cannot be read is shown as its message
                return False
        return not app.chips.busy and app.chips.laid_out

    def prefetch(self, question: dict[str, Any] | None, key: str | None = None, *, then=(), later=()) -> None:
        """Prepare what the next item will show (same site: its stack, frame, pair, chips and trajectory, so
        showing it only sets arrays; another site: index the site, then the same once it is open); `then`: the
        (question, key) of the items after it, nearest first, prepared after it the same way (a MODIS series
        reads for seconds: it has the time of two items to be read in). None (the review dock says so as it shows
        an item, then names the upcoming ones once it is on screen): the prefetch work pauses meanwhile. `later`:
        the questions after those, whose series grids are read into the cube when the series worker has nothing
        else to do (a MODIS record's cold read outlasts two items: it starts well before it is wanted)."""
        self._prefetch_cancel.set()
        self._upcoming = []
        if question is None:
            self._hold_prefetch(QUIET_S)
            return  # (the series being read are kept or stopped once the upcoming items are known)
        items = [(question, key), *then] if self.prefetch_enabled and not self.closed else []
        self._stop_series_but({k for _q, k in items if k is not None})
        if not items:
            return
        self._prefetch_cancel = threading.Event()
        self._upcoming = [k for _q, k in items if k is not None]
        for n, (q, k) in enumerate(items):
            self._prefetch_one(q, k, full=n == 0)  # the next item whole; those after, their series only
        self._warm_later(later)

    def _warm_later(self, questions) -> None:
        """The cube's warming for these questions' stacks and indices (each distinct one once), queued behind the
        series asked for; a series asked for later goes before it (what it read stays in the cube)."""
        cube = self.app.trajectory.cube
        wanted = (self._warm_stack(q) for q in questions) if cube is not None else ()
        distinct = {(id(w[0]), *w[1:]): w for w in wanted if w is not None}  # (a SceneIndex does not hash)
        self._warm = list(distinct.values())
        self._queue_warm()

    def _queue_warm(self) -> None:
        """(Re)queue the warming at the end of the series worker's queue; the warming queued before stops."""
        self._warm_stop.set()
        stop = self._warm_stop = threading.Event()
        cube = self.app.trajectory.cube
        for index, name, sensors in self._warm:
            self._traj_pool.submit(self._warm_job, cube, index, name, sensors, stop)

    def _warm_stack(self, question: dict[str, Any]) -> tuple | None:
        """(site index, index name, sensors) of a question whose site is open, or was opened ahead or for an item
        prepared, else None."""
        try:
            view = self.memo.view(question)
        except ReviewerError:
            return None
        folder = self.site_dir(question.get("site"))
        if view.index is None or view.region is None or folder is None:
            return None
        site_key = str(Path(folder).resolve())
        known = [self.session.index, *self._indexes.values(), *(p.index for p in self._prepared.values())]
        index = next((ix for ix in known if ix is not None and str(Path(ix.site.dir).resolve()) == site_key), None)
        if index is None:  # (a site not opened yet: its items' series are read once it is)
            return None
        return index, view.index, sensor_filter(self.memo.labels(index), sorted(question.get("sensors") or ()))

    def _warm_job(self, cube, index, name: str, sensors: tuple, stop: threading.Event) -> None:
        """Series worker: the scenes of the stack the question will show read into the cube."""
        from reviewer.record.series import warm_cube
        from reviewer.record.stack import open_stack

        if stop.is_set() or self._closed:
            return

        def stopped() -> bool:
            self._wait_quiet(stop)
            return stop.is_set() or self._closed

        try:
            stack = open_stack(index, sensors=sensors or None, cache=self.session.cache)
            stack = dataclasses.replace(stack, harmonized=True) if self._harmonized() else stack
            warm_cube(cube, stack, name, stopped)
        except Cancelled:
            pass
        except Exception:  # noqa: BLE001 - the item's own trajectory says what fails
            logger.debug("series cube of %s not warmed", name, exc_info=True)

    def _stop_series_but(self, keep: set) -> None:
        """Stop the series being read for items no longer upcoming (the one on screen is never stopped); a series
        still upcoming goes on where it was (a large site's, read window by window, would start again)."""
        wanted = self._series_wanted
        for skey, cancel in self._series_cancel.items():
            if skey != wanted and self._series_item.get(skey) not in keep:
                cancel.set()  # (the scenes it read stay in the trajectory plot's cube)

    def _prefetch_one(self, question: dict[str, Any], key: str | None, *, full: bool = True) -> None:
        try:
            view = self.memo.view(question)
        except ReviewerError:
            return
        folder = self.site_dir(question.get("site"))
        if folder is None or not Path(folder).is_dir():
            return
        index = self.session.index
        if index is not None and Path(index.site.dir).resolve() == Path(folder).resolve():
            self._prefetch_item(key, question, view, None, full=full)
            return
        site_key = str(Path(folder).resolve())
        if site_key in self._indexes:
            self._prefetch_item(key, question, view, self._indexes[site_key], full=full)
            return

        def then(ix) -> None:
            if not self.closed and key in self._upcoming:
                self._prefetch_item(key, question, view, ix, full=full)

        waiting = self._indexing.get(site_key)
        if waiting is not None:  # being opened for an item before it
            waiting.append(then)
            return
        self._indexing[site_key] = [then]
        db, cancel = self.session.db, self._prefetch_cancel

        def indexed(ix) -> None:
            self._indexes[site_key] = ix
            for f in self._indexing.pop(site_key, []):
                f(ix)

        def failed(exc) -> None:  # said when the item is shown (its site opened then)
            logger.debug("site %s not indexed ahead: %s", folder, exc)
            self._indexing.pop(site_key, None)

        def work():
            from reviewer.record.scan import open_index
            from reviewer.store import Store

            self._wait_quiet(cancel)  # (indexing a site walks its scenes in Python: the GIL, through the item's paints)
            with Store(db) as store:
                ix = open_index(folder, store)
            ix.site.boundary_geometries()
            return ix

        run_in_thread(work, on_done=indexed, on_error=failed)

    def _prefetch_item(self, key: str | None, question: dict[str, Any], view, index, *, full: bool = True) -> None:
        """Prepare an upcoming item on the site shown (`index` None) or on another site's index opened ahead; not
        `full`: only its series (its frame, pair and chips are prepared once it is the next item: preparing two
        items' whole evidence at once held the CPUs and the GIL through the key turn of the one shown)."""
        if key is None:
            return
        done = self._prepared.get(key)
        if done is not None and done.index is (index or self.session.index):
            if done.mask is not None:  # (its series kept if read or being read, else started again)
                self._start_series((key, done))
            return
        self._focus[key] = evidence_focus(question, view)
        sensors, self.sensors = self.sensors, tuple(question.get("sensors") or ())
        try:
            want = self._wanted_for(view, index)
        finally:
            self.sensors = sensors
        if full:
            self._submit_prepare(key, view, want, trajectory=True, index=index)
        else:
            self._series_only(key, view, want, index or self.session.index)

    def _series_only(self, key: str, view, want: tuple, index) -> None:
        """Read an upcoming item's series ahead from its stack and region alone (no file read on this thread)."""
        try:
            mask, ring = region_mask(view.region, index.site)
        except (ReviewerError, ValueError):
            return
        stack = item_stack(index, view, want, self.session.cache)
        self._start_series((key, Prepared(key, view, index, want, stack, 0, None, None, None, "", [], {}, mask, ring)))

    def series_read(self, key: str) -> bool:
        """The item's series was read ahead (or while it was shown) and is kept: its trajectory draws at once."""
        skey = self._item_series.get(key)
        return skey is not None and skey in self._series

    def close(self) -> None:
        """Stop the evidence workers (the window closes)."""
        self._closed = True
        self._prefetch_cancel.set()
        for cancel in self._series_cancel.values():
            cancel.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._traj_pool.shutdown(wait=False, cancel_futures=True)


SERIES_KEPT = 32  # trajectories of recent items kept (a MODIS series takes seconds to read)
QUIET_S = 0.3  # how long prefetch work waits once an item is being shown: its key's turn and paint
QUIET_PAINT_S = 0.1  # ... and after the last of a site change's turns, for that turn's paint


@dataclass
class Prepared:
    """An item's evidence made ready off the UI thread: showing it is setting these on the docks."""

    key: str
    view: Any  # EvidenceView
    index: Any  # the SceneIndex it was made on
    filters: tuple  # see EvidenceLoader._wanted_for
    stack: Any
    current: int
    years: tuple[int, int] | None
    pair: tuple[str, str] | None
    panels: list | None  # the pair's two Panels
    pair_error: str
    chips: list  # (year, i, label, channels) as the chip strip keeps them
    chip_rgb: dict
    mask: np.ndarray | None
    ring: np.ndarray | None

    def series_key(self, harmonized: bool) -> tuple:
        scenes = tuple((sc.files_root, sc.key) for sc in self.stack.scenes)
        return (scenes, self.view.index, self.mask.tobytes(), harmonized)


def item_stack(index, view, want: tuple, cache):
    """The item's stack with its filters (`want`: EvidenceLoader._wanted_for): what its evidence shows and its
    series reads, so a series read ahead from it is the one the item shows."""
    from reviewer.record.stack import open_stack

    sensors, years, months, max_cloud, _pair_method, _chip_months = want
    return open_stack(
        index,
        composite=view.composite,
        sensors=sensors or None,
        years=years,
        months=months or None,
        max_cloud=max_cloud if max_cloud < 1.0 else None,
        cache=cache,
    )


def prepare_evidence(key: str, index, view, want: tuple, read, focus: EvidenceFocus | None = None) -> Prepared:
    """Worker: the item's stack with its filters, the date it opens on read (`focus`: the dates the question turns
    on), the pair's panels resolved and stretched, the chip strip over its period read and stretched, its region's
    mask and ring."""
    focus = focus or EvidenceFocus(None, None)
    from reviewer.app.qt_chips import CHIP_PX, NODATA_RGB
    from reviewer.record.render import resolve_panel
    from reviewer.record.series import clearest_per_year

    _sensors, _years, _months, _cloud, pair_method, chip_months = want
    comp, stretch = view.composite, view.stretch
    stack = item_stack(index, view, want, read.__self__.cache)
    years = view_years(view)
    try:
        mask, ring = region_mask(view.region, index.site)
    except (ReviewerError, ValueError):
        mask = ring = None
    out = Prepared(key, view, index, want, stack, 0, years, None, None, "", [], {}, mask, ring)
    if not len(stack):
        return out
    best = clearest_per_year(stack)
    if view.dates:
        out.current = stack.nearest(_date(view.dates[-1]))
    elif focus.year is not None:
        y = focus.year
        out.current = best.get(y, stack.nearest(_date(f"{int(y):04d}-07-01")))
    try:
        stretch.apply(read(stack, comp, out.current))  # read for the canvas; the colour map made once
    except ReviewerError:
        pass  # the canvas says so when it shows the date
    # the pair is always the item's: its view's two panels, else the years the question turns on
    pair = (view.panels[0], view.panels[-1]) if len(view.panels) >= 2 else focus.pair
    if pair is not None:
        out.pair = pair
        try:
            out.panels = [resolve_panel(stack, p, comp, method=pair_method) for p in out.pair]
        except ReviewerError as exc:
            out.pair_error = str(exc)
    picks = clearest_per_year(stack, months=set(chip_months) if chip_months else None)
    if years is not None:
        picks = {y: i for y, i in picks.items() if years[0] <= y <= years[1]}
    step = max(1, int(np.ceil(max(stack.grid.shape) / (2 * CHIP_PX))))
    for year, i in picks.items():
        sc = stack.scenes[i]
        try:
            ch = stack.read(i, comp)[:, ::step, ::step]
        except ReviewerError as exc:
            logger.warning("chip %d: %s", year, exc)
            ch = np.full((len(stretch.channels), *stack.grid.shape), np.nan, np.float32)[:, ::step, ::step]
        out.chips.append((year, i, f"{sc.date.isoformat()} {sc.label}", ch))
        if ch.shape[0] == len(stretch.channels):
            out.chip_rgb[year] = stretch.apply(ch, nodata_rgb=NODATA_RGB)
    return out


FIRST_SCENES = 100  # a longer series is read in parts (100, 200, 400, ... scenes), each part drawn as it lands


def item_trajectory(p: Prepared, harmonized: bool, stop, partial=None, cube=None):
    """Worker: the item's index over its region through its stack (`stop()` asked before each scene: True
    cancels); with `partial(series so far, scenes read, of)`, a long stack (a MODIS record: seconds) is read in growing parts in date order, reporting each; through
    `cube` (series.series_cube) when the whole stack's series fits it: once its scenes are there (an earlier item
    of the site, or a read cancelled half-way), no file is opened and no part is reported."""
    import dataclasses

    from reviewer.record.series import cube_fits, cube_holds, trajectory

    stack = dataclasses.replace(p.stack, harmonized=harmonized) if harmonized else p.stack
    n = len(stack)
    cube = cube if cube_fits(cube, stack) else None  # decided on the whole stack, not on each part
    if partial is None or n <= FIRST_SCENES or cube_holds(cube, stack, p.view.index):
        return trajectory(stack, p.view.index, region=p.mask, cancel=stop, cube=cube)
    out, start, size = None, 0, FIRST_SCENES
    while start < n:
        part = trajectory(
            dataclasses.replace(stack, scenes=stack.scenes[start : start + size]),
            p.view.index,
            region=p.mask,
            cancel=stop,
            cube=cube,
        )
        part.indices = [i + start for i in part.indices]  # indices into the whole stack
        out = part if out is None else joined(out, part)
        start, size = start + size, 2 * size
        if start < n:
            partial(dataclasses.replace(out, **{f: list(getattr(out, f)) for f in SERIES_LISTS}), start, n)
    return out


SERIES_LISTS = ("indices", "dates", "sensors", "scene_ids", "values", "spread", "masked", "n_pixels")


def joined(a, b):
    """Series a followed by series b (of the same index and region)."""
    for f in SERIES_LISTS:
        getattr(a, f).extend(getattr(b, f))
    return a


def item_series_name(view) -> str | None:
    """What the trajectory plots for an item: its view's index, else the index its composite shows (an NBR image
    came with the NDVI trajectory left from the item before), else what the plot has."""
    from reviewer.record.series import series_names

    if view.index:
        return view.index
    return view.composite if view.composite in series_names() else None


def show_pair(pair, p: Prepared) -> None:
    """The pair dock shows the prepared panels (or why they could not be read)."""
    if p.pair is not None:
        pair.show_panels(*p.pair, p.panels, p.pair_error)


def show_chips(chips, p: Prepared, stretch) -> None:
    """The chip strip shows the prepared chips in this turn (QtChipStrip.show_chips)."""
    chips.show_chips(p.chips, p.chip_rgb, stretch)
    chips.info.setText(f"{len(p.chips)} years, one stretch ({stretch.source})")


def _date(text: str):
    import datetime as dt

    return dt.date.fromisoformat(text)
