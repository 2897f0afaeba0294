"""An item's evidence in the viewer: its site opened in the background, its composite and stored stretch,
its period shaded, its dates side by side in the pair view, the chip strip over the period, its region drawn
and the trajectory over that region. The view itself comes from the core (`reviewer.bank.evidence`).

`EvidenceLoader.load` never blocks on disk: the site opens in the session's worker, the pair and chips read
in theirs. `prefetch` warms the scene cache with what the next item will show (or indexes its site).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import numpy as np
from qtpy.QtCore import QObject, Signal

from reviewer.app.jobs import run_in_thread
from reviewer.errors import ReviewerError

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


def view_years(view) -> tuple[int, int] | None:
    """The years the view spans: first to last of its dates and periods."""
    years = [int(d[:4]) for d in view.dates] + [y for p in view.periods for y in p]
    return (min(years), max(years)) if years else None


class EvidenceLoader(QObject):
    """Shows items' evidence views in the reviewer window (`app`: ReviewerApp)."""

    #: (item key, problem or "") once the view was applied (the pair and chips may still be reading)
    applied = Signal(str, str)

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
        self.closed = False  # set when the window closes: late timers do nothing
        self._pending: tuple[str, Any, str] | None = None  # waiting for its site to open
        self._indexes: dict[str, Any] = {}  # site folder -> SceneIndex opened ahead of time
        self._prefetch_cancel = threading.Event()
        self.session.site_opened.connect(self._on_site_opened)

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
        try:
            view = evidence_view(question)
        except ReviewerError as exc:
            return self._fail(key, f"no evidence view: {exc}")
        self.view = view
        folder = self.site_dir(question.get("site"))
        if folder is None:
            return self._fail(key, f"site {question.get('site')!r} is not in this store (scan its folder once)")
        if not Path(folder).is_dir():
            return self._fail(key, f"site folder {folder} is missing")
        self.sensors = tuple(question.get("sensors") or ())
        index = self.session.index
        if index is not None and Path(index.site.dir).resolve() == Path(folder).resolve():
            self._apply(key, view)
            return ""
        self._pending = (key, view, folder)
        ready = self._indexes.pop(str(Path(folder).resolve()), None)
        if ready is not None:
            self.session.show_index(ready)  # indexed ahead of time: no disk on the UI thread
        else:
            self.session.open_site(folder)
        return ""

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

    def _apply(self, key: str, view) -> None:
        """Composite and stored stretch, period shading and chip years, the pair, the region and trajectory,
        with one stack rebuild and one trajectory read (the UI thread's share of an item change)."""
        s, st, app = self.session, self.session.state, self.app
        self._errors_at = len(s.reporter.messages)
        years = view_years(view)
        st.locked = False
        labels = {sc.label for sc in s.index.record_scenes()}
        sensors = tuple(x for x in self.sensors if x in labels)
        sensors = () if set(sensors) == labels else sensors
        try:
            mask, ring = region_mask(view.region, s.index.site)
        except (ReviewerError, ValueError) as exc:
            s.reporter.error(exc, context="evidence region")
            mask = ring = None
        if mask is not None:
            app.trajectory.set_region(mask, view.index)  # read once, by the stack rebuild below
        old_stack, old_years, old_sensors = s.stack, st.chip_years, st.sensors
        with st.events.chip_years.blocker(), st.events.sensors.blocker():
            st.chip_years = years
            st.sensors = sensors
        self._sync_sensor_checks()
        s._stretches[view.composite] = view.stretch  # noqa: SLF001 - the switch shows the item's stretch at once
        if st.composite != view.composite:
            st.composite = view.composite  # rebuilds the stack (chips, pair, trajectory)
        elif sensors != old_sensors:
            s.rebuild_stack()
        st.stretch = view.stretch  # a no-op when the composite switch already set it
        if s.stack is old_stack:
            app.trajectory.recompute()
            if years != old_years:
                app.chips.refresh()
        elif not app.chips.isVisible():
            app.chips.refresh()  # read now, so the strip is there when its tab is raised
        st.locked = True  # the item's stretch stays while the reviewer looks around
        st.period = years
        panels = view.panels
        if len(panels) >= 2:
            app.pair.rgbs = []  # not shown until this item's pair is drawn
            app.pair._on_show_pair(panels[0], panels[-1])  # noqa: SLF001 - the pair view's own entry
        else:
            st.pair = None
        if view.dates:
            s.jump_to_date(_date(view.dates[-1]))
        elif view.periods:
            s.jump_to_year(view.periods[-1][0])
        if ring is not None:
            self._draw_region(ring)
        self.applied.emit(key, "")

    def _sync_sensor_checks(self) -> None:
        """The Stack dock's sensor boxes show the item's sensors (the dock has no model listener for them)."""
        controls = self.app.controls
        chosen = set(self.session.state.sensors)
        controls._updating = True  # noqa: SLF001 - no public setter on the Stack dock
        try:
            for label, box in controls.sensor_checks.items():
                box.setChecked(not chosen or label in chosen)
        finally:
            controls._updating = False  # noqa: SLF001

    def _draw_region(self, ring: np.ndarray) -> None:
        """The region on the canvas (kept when the next item has the same region: redrawing costs ~0.1 s)."""
        s = self.session
        layer = s.region_shapes_layer()
        if not (len(layer.data) == 1 and np.array_equal(np.asarray(layer.data[0])[:, -2:], ring)):
            layer.data = [ring]
            layer.shape_type = ["polygon"]
        if s.image_layer is not None and s.viewer.layers.selection.active is not s.image_layer:
            s.viewer.layers.selection.active = s.image_layer

    # ------------------------------------------------------------------ shown, prefetch

    def shown(self, *, trajectory: bool = True) -> bool:
        """The current item's evidence is fully on screen: canvas, pair, chips and (unless told) trajectory."""
        app, s = self.app, self.session
        if self.key != self.wanted:
            return False
        if self.problem:
            return True
        if self._pending is not None or self.view is None or app._busy or s.glyphs.pending or not s.frame_shown():
            return False
        if trajectory and app.trajectory.busy:
            return False
        if s.state.pair is not None and (app.pair._worker is not None or len(app.pair.rgbs) != 2):
            failed = any(t.startswith("pair view") for _lvl, t in s.reporter.messages[self._errors_at :])
            if not failed or app.pair._worker is not None:  # a pair that cannot be read is shown as its message
                return False
        return not app.chips.busy and app.chips.laid_out

    def prefetch(self, question: dict[str, Any] | None) -> None:
        """Read what the next item will show into the scene cache (same site) or index its site (another)."""
        self._prefetch_cancel.set()
        if self.closed or not self.prefetch_enabled or question is None:
            return
        try:
            view = evidence_view(question)
        except ReviewerError:
            return
        folder = self.site_dir(question.get("site"))
        if folder is None or not Path(folder).is_dir():
            return
        cancel = self._prefetch_cancel = threading.Event()
        index = self.session.index
        if index is not None and Path(index.site.dir).resolve() == Path(folder).resolve():
            run_in_thread(_warm, index, view, self.session.cache, cancel)
            return
        key = str(Path(folder).resolve())
        if key in self._indexes:
            return
        db = self.session.db

        def work():
            from reviewer.record.scan import open_index
            from reviewer.store import Store

            with Store(db) as store:
                ix = open_index(folder, store)
            ix.site.boundary_geometries()
            return ix

        run_in_thread(work, on_done=lambda ix: self._indexes.__setitem__(key, ix))


def _date(text: str):
    import datetime as dt

    return dt.date.fromisoformat(text)


def _warm(index, view, cache, cancel: threading.Event) -> None:
    """Worker: read the scenes the view's panels and chips use, so showing them reads from memory."""
    from reviewer.record.render import resolve_panel
    from reviewer.record.series import clearest_per_year
    from reviewer.record.stack import open_stack

    stack = open_stack(index, composite=view.composite, cache=cache)
    if not len(stack):
        return
    for panel in view.panels:
        if cancel.is_set():
            return
        try:
            resolve_panel(stack, panel, view.composite, method="clearest")
        except ReviewerError:
            pass
    years = view_years(view)
    for year, i in clearest_per_year(stack).items():
        if cancel.is_set():
            return
        if years is None or years[0] <= year <= years[1]:
            try:
                stack.read(i, view.composite)
            except ReviewerError:
                pass
