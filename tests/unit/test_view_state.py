"""The viewer's state rules without a window (glue tests its viewer states this way).

`ViewState` (reviewer/app/state.py) is a Qt-free evented model. The rules that act on it live in
`StackSession` (reviewer/app/session.py), a QObject: its module imports qtpy, but a QObject needs no
QApplication, and napari's `ViewerModel` is the viewer without its Qt window. So these tests build a
session on a `ViewerModel`, with no QApplication, no window and no display (no Xvfb, no
QT_QPA_PLATFORM). Qt prints "QObject::startTimer: ... event dispatcher" warnings here: the caption and
glyph timers have no event loop to run in, which these rules do not need.

Rules only reachable through a widget or a Qt worker are not tested here (see the GUI tests):
the percentile stretch computed in a superqt worker (`stretch_from_percentiles` when unlocked), the
"high must be above low" check of the stretch spin boxes (qt_controls), the trajectory period ordering
(qt_trajectory), the pair method and chip-month handling (qt_pair, qt_chips).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from reviewer.app.state import ViewState
from reviewer.record.stretch import Stretch

ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def site_index(tmp_path_factory):
    """A 32 x 32 px demo site 2010-2020 (TM, ETM+, OLI, Sentinel-2 MSI, MODIS, VIIRS) and its index."""
    from reviewer.record.scan import open_index
    from reviewer.record.synthetic import make_demo_site
    from reviewer.store import Store

    base = tmp_path_factory.mktemp("view-state")
    site = make_demo_site(
        base / "site", seed=0, size=32, start=2010, end=2020, scenes_per_year=2, thermal=False, extras=False, mtl=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Store(base / "store.sqlite") as store:
            index = open_index(site, store)
    return index


@pytest.fixture
def no_qapplication():
    """Fails the test if it created a QApplication (only checked when none existed before it)."""
    from qtpy.QtCore import QCoreApplication

    before = QCoreApplication.instance()
    yield
    if before is None:
        assert QCoreApplication.instance() is None, "a state test created a Qt application"


@pytest.fixture
def session(no_qapplication):
    """A StackSession on napari's Qt-free ViewerModel, no site open."""
    from napari.components import ViewerModel

    from reviewer.app.session import StackSession

    s = StackSession(ViewerModel(), prefetch=False)
    yield s
    s.close()
    gc.unfreeze()  # show_index freezes the objects of an opened site (the app's start-up); undo it here


@pytest.fixture
def opened(session, site_index):
    session.show_index(site_index)
    assert session.stack is not None and len(session.stack) > 0
    return session


def infos(s) -> list[str]:
    return [text for level, text in s.reporter.messages if level == "info"]


def errors(s) -> list[str]:
    return [text for level, text in s.reporter.messages if level == "error"]


# ----------------------------------------------------------------------------- the model itself


def test_view_state_module_imports_no_qt():
    code = (
        "import sys, reviewer.app.state, reviewer.app.caption\n"
        "qt = {'qtpy', 'PySide6', 'PySide2', 'PyQt5', 'PyQt6', 'shiboken6', 'superqt'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & qt))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_view_state_defaults():
    st = ViewState()
    assert st.site_dir is None
    assert (st.sensors, st.years, st.months, st.max_cloud) == ((), None, (), 1.0)  # no filter: every date
    assert st.composite == "truecolor" and st.stretch == Stretch.default("truecolor")
    assert st.stretch.source == "fixed default"
    assert st.locked is False and st.current == 0 and st.overlay is False
    assert st.pair is None and st.pair_method == "clearest" and st.series == "ndvi" and st.show_masked is True


def test_view_state_emits_one_event_per_real_change():
    st = ViewState()
    seen = []
    st.events.years.connect(lambda e: seen.append(e.value))
    st.years = (2000, 2005)
    st.years = (2000, 2005)  # the same value again: no event
    st.years = None
    assert seen == [(2000, 2005), None]
    blocked = []
    st.events.current.connect(lambda e: blocked.append(e.value))
    with st.events.current.blocker():
        st.current = 7
    assert blocked == [] and st.current == 7


# ----------------------------------------------------------------------------- a session without a window


def test_session_needs_no_qapplication(session):
    assert session.index is None and session.stack is None and session.current_scene is None
    assert session.status_text() == "no site open"
    assert session.describe() == {
        "site": None,
        "scenes": 0,
        "current": 0,
        "composite": "truecolor",
        "stretch": Stretch.default("truecolor").to_json(),
    }


def test_opening_a_site_resets_the_filters_and_shows_every_true_colour_date(session, site_index):
    st = session.state
    st.sensors, st.years, st.months, st.max_cloud, st.current = ("TM",), (2012, 2013), (6,), 0.1, 3
    session.show_index(site_index)
    assert (st.sensors, st.years, st.months, st.max_cloud, st.current) == ((), None, (), 1.0, 0)
    assert st.site_dir == str(site_index.site.dir)
    usable = [s for s in site_index.record_scenes() if s.label in {"TM", "ETM+", "OLI", "MSI"}]
    assert len(session.stack) == len(usable)  # MODIS and VIIRS have no true-colour bands
    assert {s.label for s in session.stack.scenes} == {"TM", "ETM+", "OLI", "MSI"}
    assert session.stack.dates == sorted(session.stack.dates)
    assert session.image_layer is not None and session.image_layer in session.viewer.layers
    # the layer shows one date (2-D, no napari dims axis); the date slider counts the stack's dates
    assert session.image_layer.ndim == 2 and session.viewer.dims.ndim == 2
    assert session.dates.position.text == f"1 / {len(usable)}"
    status = session.status_text()
    first = session.stack.scenes[0]
    assert first.date.isoformat() in status and first.scene_id in status and "tier" in status


# ----------------------------------------------------------------------------- the stretch lock


def test_a_locked_stretch_refuses_every_edit(opened):
    s, st = opened, opened.state
    edited = st.stretch.with_channel(0, high=0.2)
    assert s.set_stretch(edited) is True and st.stretch == edited and st.stretch.source == "manual"
    s.toggle_lock()
    assert st.locked is True
    assert s.set_stretch(edited.with_channel(0, high=0.25)) is False
    assert s.reset_stretch() is False
    assert s.stretch_from_percentiles() is None  # refused before any worker starts
    assert st.stretch == edited  # nothing changed while locked
    assert "the stretch is locked (press S to unlock)" in infos(s)
    s.toggle_lock()
    assert st.locked is False
    assert s.reset_stretch() is True and st.stretch == Stretch.default("truecolor")


def test_a_stretch_for_another_composite_is_refused(opened):
    from reviewer.errors import ReviewerError

    with pytest.raises(ReviewerError, match="for swir, not truecolor"):
        opened.set_stretch(Stretch.default("swir"))
    assert opened.state.stretch == Stretch.default("truecolor")


def test_the_stretch_never_changes_when_the_filters_change(opened, monkeypatch):
    """A percentile stretch is not re-derived behind the user's back when a filter changes (the picture had
    turned orange while the label still named the old percentiles): it stays, and the session says it was
    computed over other dates, until the user recomputes it."""
    s, st = opened, opened.state
    calls = []
    monkeypatch.setattr(s, "stretch_from_percentiles", lambda: calls.append(st.sensors))
    pooled = dataclasses.replace(Stretch.default("truecolor"), source="percentiles 2-98 of pooled clear pixels")
    s.stretches._percentile_dates = tuple(s.stack.dates)  # as the percentile worker records it
    st.stretch = pooled
    assert not s.stretch_is_stale()
    st.sensors = ("OLI",)
    assert calls == [] and st.stretch == pooled and s.stretch_is_stale()
    st.sensors = ()  # back to the dates it came from
    assert st.stretch == pooled and not s.stretch_is_stale()
    st.stretch = Stretch.default("truecolor")
    st.sensors = ("OLI",)  # a fixed stretch is never stale
    assert calls == [] and st.stretch == Stretch.default("truecolor") and not s.stretch_is_stale()


# ----------------------------------------------------------------------------- filters


def test_filters_choose_the_dates(opened):
    s, st = opened, opened.state
    total = len(s.stack)
    st.sensors = ("TM",)
    assert len(s.stack) and all(sc.label == "TM" for sc in s.stack.scenes)
    assert s.dates.position.count == len(s.stack) < total  # the slider's dates
    st.sensors = ("OLI", "ETM+")
    assert {sc.label for sc in s.stack.scenes} == {"OLI", "ETM+"}
    st.years = (2013, 2016)
    assert len(s.stack) and all(2013 <= d.year <= 2016 for d in s.stack.dates)
    st.months = (6, 7, 8)
    assert all(d.month in (6, 7, 8) for d in s.stack.dates)
    st.max_cloud = 0.2
    assert all((sc.cloud_fraction or 0.0) <= 0.2 for sc in s.stack.scenes)
    st.sensors, st.years, st.months, st.max_cloud = (), None, (), 1.0
    assert len(s.stack) == total


def test_filters_that_match_nothing_empty_the_canvas(opened):
    s, st = opened, opened.state
    total = len(s.stack)
    st.years = (1990, 1995)
    assert len(s.stack) == 0 and s.image_layer is None and s.current_scene is None
    assert "no scene matches the filters with True colour bands" in infos(s)
    assert s.status_text() == "no scene matches the filters"
    s.jump_to_index(3)  # navigation on an empty stack does nothing
    assert st.current == 0
    st.years = None
    assert len(s.stack) == total and s.image_layer is not None


def test_a_filter_keeps_the_shown_date_or_the_nearest_one(opened):
    s, st = opened, opened.state
    oli = [i for i, sc in enumerate(s.stack.scenes) if sc.label == "OLI"]
    s.jump_to_index(oli[len(oli) // 2])
    shown = s.current_scene
    st.sensors = ("OLI", "MSI")  # the shown date is still in the stack: it stays shown
    assert s.current_scene == shown
    st.sensors = ("TM",)  # it is not: the nearest TM date is shown
    gaps = [abs((sc.date - shown.date).days) for sc in s.stack.scenes]
    assert abs((s.current_scene.date - shown.date).days) == min(gaps)
    assert st.current == gaps.index(min(gaps))


# ----------------------------------------------------------------------------- composites


def test_switching_the_composite_keeps_the_date_and_its_own_stretch(opened):
    s, st = opened, opened.state
    s.jump_to_index(len(s.stack) // 2)
    shown = s.current_scene
    st.composite = "swir"
    assert s.current_scene == shown
    assert st.stretch == Stretch.default("swir")
    st.composite = "ndvi"  # the index composites add MODIS and VIIRS dates; the shown one stays
    assert s.current_scene == shown and st.stretch == Stretch.default("ndvi")
    assert {"MODIS Terra", "VIIRS"} <= {sc.label for sc in s.stack.scenes}
    # each composite keeps the stretch last set for it
    st.composite = "truecolor"
    edited = st.stretch.with_channel(1, low=0.02, high=0.25)
    assert s.set_stretch(edited)
    st.composite = "swir"
    assert st.stretch == Stretch.default("swir")
    st.composite = "truecolor"
    assert st.stretch == edited
    assert s.current_scene == shown


def test_switching_from_a_date_the_composite_lacks_shows_the_nearest(opened):
    s, st = opened, opened.state
    st.composite = "ndvi"
    modis = [i for i, sc in enumerate(s.stack.scenes) if sc.label.startswith("MODIS")]
    s.jump_to_index(modis[len(modis) // 2])
    shown = s.current_scene
    st.composite = "truecolor"  # no MODIS scene has true-colour bands
    assert s.current_scene.label in {"TM", "ETM+", "OLI", "MSI"}
    gaps = [abs((sc.date - shown.date).days) for sc in s.stack.scenes]
    assert abs((s.current_scene.date - shown.date).days) == min(gaps)


def test_an_unknown_composite_is_reported_not_shown(opened):
    s, st = opened, opened.state
    before = (len(s.stack), st.stretch)
    st.composite = "infrared-ish"
    assert any("unknown composite 'infrared-ish'" in text for text in errors(s))
    assert (len(s.stack), st.stretch) == before


# ----------------------------------------------------------------------------- navigation


def test_navigation_clamps_and_finds_the_nearest_date(opened):
    s, st = opened, opened.state
    last = len(s.stack) - 1
    s.jump_to_index(-5)
    assert st.current == 0
    s.jump_to_index(10**6)
    assert st.current == last
    s._on_next_date()  # at the end already
    assert st.current == last
    s._on_prev_date()
    assert st.current == last - 1
    target = s.stack.dates[5] + dt.timedelta(days=1)
    s.jump_to_date(target)
    gaps = [abs((d - target).days) for d in s.stack.dates]
    assert st.current == gaps.index(min(gaps))
    # the slider and the canvas follow the model: the slider's place counts from 1, the layer renders that date
    assert s.dates.position.text == f"{gaps.index(min(gaps)) + 1} / {last + 1}"
    assert s.image_layer.data.date == st.current


def test_year_steps_and_jumps(opened):
    s, st = opened, opened.state
    s.jump_to_index(0)
    year = s.current_scene.year
    s._on_next_year()
    assert s.current_scene.year == year + 1
    assert st.current == s.stack.dates.index(next(d for d in s.stack.dates if d.year == year + 1))  # its first date
    s._on_prev_year()
    assert s.current_scene.year == year and st.current == 0
    s.jump_to_year(2015)
    assert s.current_scene.year == 2015
    s.jump_to_year(1990)  # a year without a scene: the date nearest its 1 July
    assert st.current == 0


def test_a_canvas_position_becomes_a_grid_pixel(opened):
    s = opened
    res = float(s.index.site.resolution)
    h, w = s.index.site.shape
    assert s.world_to_pixel((0.0, 5 * res, 7 * res)) == (5, 7)
    assert s.world_to_pixel((0.0, 5.4 * res, 6.6 * res)) == (5, 7)  # rounded to the nearest pixel centre
    assert s.world_to_pixel((0.0, -res, 0.0)) is None
    assert s.world_to_pixel((0.0, h * res, 0.0)) is None
    assert s.world_to_pixel((0.0, 0.0, w * res)) is None


# ----------------------------------------------------------------------------- the date caption


def test_the_caption_model_says_a_date_no_scene_or_nothing():
    from reviewer.app.caption import DateCaption

    caption, seen = DateCaption(), []
    caption.events.text.connect(seen.append)
    assert caption.text == "" and not caption.shown
    caption.show_date("2016-05-15 OLI", "True colour")
    assert caption.text == "2016-05-15 OLI   True colour" and caption.shown
    caption.show_date("2016-05-15 OLI", "True colour")  # the same words again: no event, nothing redrawn
    caption.show_date("2016-05-31 ETM+", "NDVI", all_masked=True)
    assert caption.text == "2016-05-31 ETM+   NDVI - every pixel masked"
    caption.no_scene("Demo forest")
    assert caption.text == "Demo forest: no scene matches the filters"
    caption.clear()
    assert not caption.shown
    assert seen == [
        "2016-05-15 OLI   True colour",
        "2016-05-31 ETM+   NDVI - every pixel masked",
        "Demo forest: no scene matches the filters",
        "",
    ]


def test_the_caption_says_nothing_before_a_site_and_leaves_naparis_text_overlay_alone(session):
    """No site shown (the app at start-up, a site still opening): no caption. The session never writes napari's
    canvas text overlay (each new text there relinked a shader program; in plain napari it is the user's)."""
    assert session.caption.text == "" and not session.caption.shown
    session.dress_canvas()
    overlay = session.viewer.canvas.overlays.text
    assert overlay.text == "" and not overlay.visible


def test_the_caption_names_the_shown_date_in_the_turn_it_changes(opened):
    """The caption follows each step at once (it waited for stepping to pause, blank meanwhile), names the composite
    shown, says when the filters leave no date, and comes back with the date when they leave some again."""
    s, st = opened, opened.state
    overlay = s.viewer.canvas.overlays.text

    def said(i: int, composite: str) -> str:
        scene = s.stack.scenes[i]
        return f"{scene.date.isoformat()} {scene.label}   {composite}"

    assert s.caption.text == said(0, "True colour")
    for by in (1, 1, 1, -1):
        s.dates.step(by)
        assert s.caption.text == said(st.current, "True colour")  # in this turn, no timer
    assert st.current == 2
    s.jump_to_year(2015)
    assert s.caption.text.startswith(f"{s.current_scene.date.isoformat()} ") and s.current_scene.date.year == 2015
    st.composite = "swir"
    assert s.caption.text == said(st.current, "SWIR2 / NIR / red")
    st.years = (1990, 1995)
    assert s.caption.text == f"{s.index.site.name}: no scene matches the filters"
    st.years = None
    assert s.caption.text == said(st.current, "SWIR2 / NIR / red")
    assert overlay.text == "" and not overlay.visible  # napari's text overlay never written


def test_the_date_is_no_napari_axis_the_slider_and_caption_name_it(opened):
    """The date is the session's own (`state.current`): stepping, a year, another composite or a stack with fewer
    dates never touch napari's dims (each dims change sliced every layer; issue 27), and the slider's model says the
    date and its place as napari's slider counted, "3 / 43"."""
    s, st = opened, opened.state
    n = len(s.stack)
    s.jump_to_index(0)
    dims_events = []
    s.viewer.dims.events.connect(lambda e: dims_events.append(e.type))
    for change in (
        lambda: s.dates.step(1),
        lambda: s.dates.step(1),
        lambda: s.jump_to_year(2015),
        lambda: setattr(st, "composite", "swir"),
        lambda: setattr(st, "sensors", ("TM",)),  # another stack, with fewer dates
        lambda: setattr(st, "sensors", ()),
    ):
        change()
        scene = s.current_scene
        assert s.caption.text.startswith(f"{scene.date.isoformat()} {scene.label}   ")
        assert s.dates.position.date == f"{scene.date.isoformat()} {scene.label}"
        assert s.dates.position.text == f"{st.current + 1} / {len(s.stack)}"
        assert s.image_layer.data.date == st.current and s.image_layer.data.frames.shape[0] == len(s.stack)
    assert s.viewer.dims.ndim == 2 and dims_events == []  # no dims round per step or stack
    s.jump_to_index(0)
    s.dates.step(1)
    s.dates.step(1)
    assert s.dates.position.text == f"3 / {n}"


def test_the_caption_says_when_every_pixel_of_the_date_is_masked(opened):
    """Known once the date's frame is rendered: the frame read (by the frame reader, here in this thread) and
    handed back, the layer re-sliced, the caption says so."""
    s = opened
    stack, i = s.stack, s.state.current
    assert s.caption.text.endswith("True colour")
    real_read = stack.read
    stack.read = lambda j, comp, mask=None: np.full_like(real_read(j, comp), np.nan)
    try:
        s.frames.read_frame(stack, s.state.composite, i)
        s._on_frame_read(
            s.frames.frame_key(stack, s.state.composite, i), None
        )  # (what the frame reader's signal calls)
    finally:
        stack.read = real_read
    assert (id(stack), i) in s.all_masked
    scene = stack.scenes[i]
    assert s.caption.text == f"{scene.date.isoformat()} {scene.label}   True colour - every pixel masked"
