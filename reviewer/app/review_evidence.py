"""An item's evidence in the viewer: its site, its composite and stored stretch, its period shaded, its dates side
by side in the pair view, the chip strip over the period, its region drawn and the trajectory over that region.
The view itself comes from the core (`reviewer.bank.evidence`).

One pipeline: `EvidenceLoader.load` starts a request named by a token (`ItemEvidence.begin`); the evidence worker
prepares everything the item needs as plain data (`evidence_prep.prepare_item`: the site indexed when it is not
open, the stack, the date it opens on, the pair's panels, the chips, the region); back on the UI thread `_apply`
sets it all in one turn, and a result whose token is no longer current is dropped. `prefetch` prepares the next
item the same way under the `PrefetchPlan`'s token, so showing it is setting arrays; its series is read by
`ItemSeries`.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from qtpy.QtCore import QCoreApplication, QEvent, QObject, Signal

from reviewer.app.evidence_prep import (  # noqa: F401 - re-exported: the docks' and tests' names for them
    ItemRequest,
    Prepared,
    ViewMemo,
    evidence_view,
    item_stack,
    prepare_item,
    region_mask,
    sensor_filter,
    view_years,
)
from reviewer.app.item_pipeline import FAILED, SHOWN, ItemEvidence, PrefetchPlan, Token
from reviewer.app.review_model import evidence_focus
from reviewer.app.review_series import ItemSeries
from reviewer.errors import ReviewerError

logger = logging.getLogger(__name__)

PREPARED_KEPT = 4  # items' prepared evidence kept (the next two, and the two shown last: P goes back at once)


class EvidenceLoader(QObject):
    """Shows items' evidence views in the reviewer window (`app`: ReviewerApp)."""

    #: (item key, problem or "") once the view was applied (the pair and chips may still be reading)
    applied = Signal(str, str)
    prepared_ready = Signal(object)  # (token, key, Prepared or None, error or None) from the evidence worker

    def __init__(self, app, store, *, prefetch: bool = True) -> None:
        super().__init__()
        self.app = app
        self.session = app.session
        self.store = store
        self.prefetch_enabled = prefetch
        self.model = ItemEvidence()  # the item shown and its evidence: loading / shown / failed
        self.plan = PrefetchPlan()  # the items prepared ahead
        self.key: str | None = None
        self.wanted: str | None = None  # the item on screen (its evidence may load on the next event-loop turn)
        self.view = None
        self.problem = ""
        self.sensors: tuple[str, ...] = ()  # the sensors the question spans: the stack shows those
        self._closed = False  # set when the window closes: late results do nothing
        self._indexes: dict[str, Any] = {}  # site folder -> SceneIndex opened by the worker (ahead of time)
        #: site id -> its folder, and folder -> its resolved path: asked for the item shown and every item prefetched
        #: (~8 per item change), each a store query or a few file-system calls on the UI thread
        self._folders: dict[str, str] = {}
        self._resolved: dict[str, str] = {}
        self.memo = ViewMemo()
        self._prepared: dict[str, Prepared] = {}  # item key -> its evidence prepared in the worker
        self._current: ItemRequest | None = None  # the request of the item shown
        self.series = ItemSeries(app.trajectory, self._harmonized, self.session.cache)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evidence")  # (its own single thread)
        self.prepared_ready.connect(self._on_prepared)

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
        """The folder of a bank's site: the scanned folder the store knows, else the demo site for the demo bank.
        Asked once per site while its folder stays (a folder moved or deleted meanwhile is asked for again)."""
        if not site_id:
            return None
        kept = self._folders.get(site_id)
        if kept is not None and Path(kept).is_dir():
            return kept
        found = self._find_site_dir(site_id)
        if found is not None:
            self._folders[site_id] = found
        return found

    def _find_site_dir(self, site_id: str) -> str | None:
        import json

        from reviewer.record.demo import demo_site_dir
        from reviewer.review.api import site_folder

        found = site_folder(self.store, site_id)
        if found:
            return found
        demo = demo_site_dir()
        try:
            if json.loads((demo / "site.json").read_text(encoding="utf-8")).get("id") == site_id:
                return str(demo)
        except (OSError, ValueError):
            pass
        return None

    def _resolve(self, folder) -> str:
        """A site folder's resolved path (kept: the same few folders are resolved for every item)."""
        key = str(folder)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = str(Path(folder).resolve())
        return found

    def _index_for(self, folder: str):
        """The folder's site index when it is open or was opened by the worker, else None (the worker opens it)."""
        site_key = self._resolve(folder)
        index = self.session.index
        if index is not None and self._resolve(index.site.dir) == site_key:
            return index
        return self._indexes.get(site_key)

    # ------------------------------------------------------------------ loading

    def load(self, key: str, question: dict[str, Any]) -> str:
        """Show the item's evidence; returns '' or the problem shown instead (missing site, bad view)."""
        if self.closed:
            return ""
        token = self.model.begin(key)
        self.key, self.problem = key, ""
        try:
            view = self.memo.view(question)
        except ReviewerError as exc:
            return self._fail(token, f"no evidence view: {exc}")
        self.view = view
        folder = self.site_dir(question.get("site"))
        if folder is None:
            return self._fail(token, f"site {question.get('site')!r} is not in this store (scan its folder once)")
        if not Path(folder).is_dir():
            return self._fail(token, f"site folder {folder} is missing")
        self.sensors = tuple(question.get("sensors") or ())
        req = self._current = self._request(key, question, view, folder, token)
        ready = self._prepared.get(key)
        if ready is not None and self._fits(ready, req):
            self._apply(token, ready)  # prepared ahead: shown in this turn
        else:
            self._submit(req)
        return ""

    def _request(self, key: str, question: dict[str, Any], view, folder: str, token: Token) -> ItemRequest:
        """What the worker needs for this item: on the site shown with the stack's filters, on another site with
        none (the filters a site opens with)."""
        index, st = self._index_for(folder), self.session.state
        sensors = tuple(question.get("sensors") or ())
        want = None
        if index is not None:
            kept = sensor_filter(self.memo.labels(index), sensors)
            if index is self.session.index:
                want = (kept, st.years, tuple(st.months), st.max_cloud, st.pair_method, tuple(st.chip_months))
            else:
                want = (kept, None, (), 1.0, st.pair_method, tuple(st.chip_months))
        focus = evidence_focus(question, view)
        db = self.session.db
        opens_with = (sensors, st.pair_method, tuple(st.chip_months))
        return ItemRequest(key, view, want, focus, index, folder, db, token, opens_with)

    def _fits(self, p: Prepared, req: ItemRequest) -> bool:
        """What was prepared is what this request would prepare (same site index, same filters)."""
        if req.index is None:
            return False
        return p.index is req.index and p.view == req.view and (req.want is None or p.filters == req.want)

    def _submit(self, req: ItemRequest) -> None:
        """Prepare the item in the evidence worker; the result comes back through `prepared_ready` with its token.
        A request whose token is stale when the worker reaches it is not prepared."""
        render, cache = self.session.render_frame, self.session.cache

        def job() -> None:
            if not self._live(req):
                return
            try:
                p = prepare_item(req, render, cache)
            except Exception as exc:  # noqa: BLE001 - shown on the UI thread
                logger.debug("evidence of %s not prepared", req.key, exc_info=True)
                self._emit((req.token, req.key, None, exc))
                return
            self._emit((req.token, req.key, p, None))

        self._pool.submit(job)

    def _live(self, req: ItemRequest) -> bool:
        """Any thread: the request is still wanted: the item shown (still loading), or in the current prefetch plan,
        or a prefetch of the item that has become the one shown meanwhile."""
        if self._closed:
            return False
        loading = self.model.loading and self.model.item == req.key
        return loading or self.plan.live(req.token) or self.model.current(req.token)

    def _emit(self, payload) -> None:
        try:
            self.prepared_ready.emit(payload)
        except RuntimeError:  # the window closed meanwhile
            pass

    def _harmonized(self) -> bool:
        return bool(getattr(self.session.state, "trajectory_harmonized", False))

    def _on_prepared(self, payload) -> None:
        """UI thread: keep what the worker prepared (a prefetch, or an item passed over: P brings it back at once);
        show it only if its token is the item shown's, or it prepared the item now shown (a prefetch overtaken by
        the key); else drop it."""
        token, key, p, exc = payload
        if self.closed:
            return
        if p is not None:
            self._keep(p)
        if not (self.model.loading and self.model.item == key):
            return  # stale: the item shown is another one, or it is already shown
        if self.model.current(token):
            if exc is not None:
                self._fail(token, f"evidence not read: {exc}")
            else:
                self._apply(token, p)
        elif p is not None and self._adopts(p):
            self._apply(self.model.token, p)  # a prefetch of this very item, landed first

    def _adopts(self, p: Prepared) -> bool:
        """A prefetch result is what the item shown asked for (its site not open when it asked: any index of it)."""
        req = self._current
        if req is None or req.key != p.key:
            return False
        if req.index is None:
            return p.view == req.view and self._resolve(p.index.site.dir) == self._resolve(req.folder)
        return self._fits(p, req)

    def _keep(self, p: Prepared) -> None:
        self._prepared.pop(p.key, None)
        self._prepared[p.key] = p
        while len(self._prepared) > PREPARED_KEPT:
            self._prepared.pop(next(iter(self._prepared)))
        site_key = self._resolve(p.index.site.dir)
        if self._index_for(site_key) is None:
            self._indexes[site_key] = p.index
        if self.plan.wants(p.key) and p.mask is not None:
            self.series.start(p)  # an upcoming item's series, read ahead

    def _fail(self, token: Token, text: str) -> str:
        if self.model.failed(token, text):
            self.problem = text
            self.applied.emit(token.item, text)
        return text

    # ------------------------------------------------------------------ applying, in one turn

    def _apply(self, token: Token, p: Prepared) -> None:
        """The UI thread's share of an item change, all of it in this turn: the site when it changes (its boundary,
        the docks take it), the view state, the stack at its date (one canvas slice), the region, the Stack dock,
        the pair, the chips, the period and the trajectory; then the item counts as shown."""
        s, st, view = self.session, self.session.state, p.view
        with st.events.locked.blocker():  # (the Stack dock shows the lock with the item's stack)
            st.locked = False
        if p.index is not s.index:
            self._set_state(p)
            s.show_index(p.index, stack=(p.stack, p.current))
            self.series.coming()  # (the Trajectory dock takes the site without drawing it empty)
            s.announce(p.index)  # the docks follow the site
        s.keep_stretch(view.composite, view.stretch)  # the composite's stretch is the item's
        self._set_state(p)
        if s.stack is not p.stack:
            s.show_stack(p.stack, p.current, announce=False)
        with st.events.locked.blocker():
            st.locked = True  # the item's stretch stays while the reviewer looks around
        s.canvas.show_item_region(p.region)
        app = self.app
        app.controls.show_sensors(st.sensors)  # the Stack dock's sensor boxes (it has no model listener for them)
        app.controls.show_stack(p.stack)  # the Stack dock's count and stretch line
        if p.pair is not None:
            app.pair.show_panels(*p.pair, p.panels, p.pair_error, p.pair_rgb, view.stretch)
        app.chips.show_chips(p.chips, p.chip_rgb, st.stretch)
        app.chips.info.setText(f"{len(p.chips)} years, one stretch ({st.stretch.source})")
        if st.period != p.years:
            st.period = p.years
        self.series.show(p)
        self.model.shown(token)
        self.applied.emit(p.key, "")
        s.update_status_bar()
        # the layouts all this asked for done now, before the item's first window paint: a layout Qt asks for while
        # doing another (a label's new text -> its bar -> the window; a dock's rows -> the dock) queues behind the
        # paint already asked for, so napari's status bar, the date slider and the docks a site change re-lays out were
        # painted with the old geometry and again with the new (a second window paint: its compose and those widgets)
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        # and the paints of the widgets this turn showed (the Stack dock's stretch rows an RGB composite brings): a
        # widget shown asks for its paint in a queued event of its own, which came after a window paint already due
        # when the item is applied as Qt works through its queue (a key or the worker's result delivered there), and
        # those widgets were painted in that paint and again in another (~5 ms: a two-site queue's p95)
        QCoreApplication.sendPostedEvents(None, QEvent.Type.UpdateLater)

    def _set_state(self, p: Prepared) -> None:
        """The view state says what the prepared item shows, without the handlers that would re-read it. A field that
        already holds the value is not written (each write of napari's evented model costs its comparison machinery);
        the stretch is written unless it is the very object (a frame rendered ahead is kept by the stretch's id)."""
        st, ev, view = self.session.state, self.session.state.events, p.view
        with ev.chip_years.blocker(), ev.sensors.blocker(), ev.composite.blocker(), ev.stretch.blocker():
            with ev.pair.blocker():
                if st.chip_years != p.years:
                    st.chip_years = p.years
                if st.sensors != p.filters[0]:
                    st.sensors = p.filters[0]
                if st.composite != view.composite:
                    st.composite = view.composite
                if st.stretch is not view.stretch:
                    st.stretch = view.stretch
                if st.pair != p.pair:
                    st.pair = p.pair

    # ------------------------------------------------------------------ shown, ready

    def changing(self) -> bool:
        """The item shown is still coming up (its evidence being prepared)."""
        return self.model.loading

    def ready(self, key: str, *, trajectory: bool = False) -> bool:
        """The item's evidence is prepared for its site (showing it only sets arrays); with `trajectory`, its series
        is read too (or it has no region to read one over)."""
        p = self._prepared.get(key)
        if self._closed or p is None or (trajectory and not self.series.has(p)):
            return False
        return p.index is self.session.index or any(p.index is ix for ix in self._indexes.values())

    def series_read(self, key: str) -> bool:
        """The item's series was read ahead (or while it was shown) and is kept: its trajectory draws at once."""
        return self.series.read(key)

    def shown(self, *, trajectory: bool = True) -> bool:
        """The current item's evidence is fully on screen: canvas, pair, chips and (unless told) trajectory."""
        app, s = self.app, self.session
        if self.key != self.wanted or self.model.item != self.key:
            return False
        if self.model.status == FAILED:
            return True
        if self.model.status != SHOWN or s.opening or not s.frame_shown():
            return False
        if trajectory and app.trajectory.busy:
            return False
        if s.state.pair is not None and (app.pair.busy or len(app.pair.rgbs) != 2):
            if not app.pair.error or app.pair.busy:  # a pair that cannot be read is shown as its message
                return False
        return not app.chips.busy and app.chips.laid_out

    # ------------------------------------------------------------------ prefetch

    def prefetch(self, question: dict[str, Any] | None, key: str | None = None, *, then=(), later=()) -> None:
        """Prepare what the next item will show (its site indexed when it is another one, its stack, frame, pair,
        chips and series), so showing it only sets arrays; `then`: the (question, key) of the items after it,
        nearest first, whose series are read ahead (a MODIS series reads for seconds: it has the time of two items
        to be read in); `later`: the questions after those, whose series grids are read into the cube when the
        series worker has nothing else to do. None (the review dock says so as it shows an item): the plan is
        cancelled, its queued work is not done."""
        items = [(question, key), *then] if question is not None and self.prefetch_enabled and not self.closed else []
        keys = [k for _q, k in items if k is not None]
        if not keys:
            self.plan.cancel()
            if question is not None or not self.prefetch_enabled:
                self.series.stop_but(set())
            return
        token = self.plan.replace(keys)
        self.series.stop_but(set(keys))
        for n, (q, k) in enumerate(items):
            self._prefetch_one(q, k, token, full=n == 0)  # the next item whole; those after, their series only
        folders = [(q, self.site_dir(q.get("site"))) for q in later]  # (the store's, asked on this thread)
        self.series.warm(lambda: [self._warm_stack(q, folder) for q, folder in folders])

    def _prefetch_one(self, question: dict[str, Any], key: str | None, token: Token, *, full: bool) -> None:
        try:
            view = self.memo.view(question)
        except ReviewerError:
            return
        folder = self.site_dir(question.get("site"))
        if key is None or folder is None or not Path(folder).is_dir():
            return
        req = self._request(key, question, view, folder, token)
        done = self._prepared.get(key)
        if done is not None and self._fits(done, req):
            self.series.start(done)  # (kept if read or being read, else started again)
        elif full:
            self._submit(req)  # its series starts once it is prepared (`_keep`)
        elif req.index is not None:  # only its series (its frame, pair and chips once it is the next item)
            self._series_only(req)

    def _series_only(self, req: ItemRequest) -> None:
        """Read an upcoming item's series ahead from its stack and region alone, both made in the series worker (its
        region's mask and its stack's filtered scenes cost the UI thread ~2 ms per item change); the read starts
        back on the UI thread if the item is still upcoming then."""
        index, view, want, cache = req.index, req.view, req.want, self.session.cache

        def make() -> Prepared | None:
            try:
                mask, _ring = region_mask(view.region, index.site)
            except (ReviewerError, ValueError):
                return None
            stack = item_stack(index, view, want, cache)
            return Prepared(req.key, view, index, want, stack, 0, None, None, None, "", [], {}, mask)

        self.series.start_made(make, lambda p: not self.closed and self.plan.wants(p.key))

    def _warm_stack(self, question: dict[str, Any], folder: str | None) -> tuple | None:
        """(site index, index name, sensors) of a question whose site (in `folder`) is open or was opened by the
        worker. Any thread: the series worker plans its warming with it."""
        try:
            view = self.memo.view(question)
        except ReviewerError:
            return None
        if view.index is None or view.region is None or folder is None:
            return None
        index = self._index_for(folder)
        if index is None:  # (a site not opened yet: its items' series are read once it is)
            return None
        return index, view.index, sensor_filter(self.memo.labels(index), sorted(question.get("sensors") or ()))

    def close(self) -> None:
        """Stop the evidence workers (the window closes)."""
        self._closed = True
        self.plan.cancel()
        self.series.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
