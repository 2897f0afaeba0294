"""What the user sees as a site opens or an item comes up (issue 10; issue 27's one pipeline): the canvas keeps its
width while the first site opens (it loses the date slider's row); the docks never show an item the reviewer
already left, whose evidence lands late (its result is dropped by its token), and what they show is the item's own
evidence view; napari's status bar says the value of the item shown under the pointer.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.gui.conftest import wait_frame
from tests.gui.test_review_dock import BANK, press, store_path, wait_evidence, window  # noqa: F401 - fixtures

pytestmark = pytest.mark.gui


def test_first_open_keeps_the_canvas_width(reviewer_app, demo_site, qtbot):
    """From the start-up window to the first site shown, the canvas keeps its size: the date slider is the app's
    own strip under the canvas, there from the start (napari's dims slider came with the site in a row of its own,
    and the canvas lost up to 40 px of height, a re-layout and a paint); the slider counts the site's dates, and the
    image shows at the site's pixel size."""
    app, s = reviewer_app, reviewer_app.session
    canvas = app.viewer.window._qt_viewer.canvas
    qtbot.wait(200)
    before = tuple(canvas.native.size().toTuple())
    app.open_site(demo_site)
    wait_frame(app, qtbot)
    qtbot.waitUntil(lambda: app.settled, timeout=30000)
    qtbot.wait(100)
    after = tuple(canvas.native.size().toTuple())
    assert after == before, (before, after)
    slider = app.date_slider
    assert slider.isVisible() and slider.slider.isEnabled() and slider.slider.maximum() == len(s.stack) - 1
    assert slider.count.text() == f"1 / {len(s.stack)}"
    res = s.index.site.resolution
    assert tuple(s.image_layer.scale) == (res, res) and s.image_layer.opacity == 1.0


@pytest.fixture
def review_window(window):  # noqa: F811 - the fixture imported above
    """ann's review window (test_review_dock's window fixture)."""
    return window("ann", "annotator")


def test_two_quick_items_draw_only_the_last_items_docks(review_window, qtbot):
    """N pressed twice before the event loop runs, the first of the two prepared ahead: it is shown whole in its
    key's turn; the second's evidence is prepared in the worker and lands later. What the docks draw last is the
    item the reviewer stopped on (a result for the item passed over is never drawn there late, over it), with its
    evidence view (pair dates, period, stretch)."""
    app = review_window
    panel, loader, st = app.review.annotator, app.review.loader, app.state
    wait_evidence(app, qtbot, timeout=60000)
    keys = [r["item"] for r in panel.shown_rows]
    first = panel.view["item"]
    second, third = keys[keys.index(first) + 1], keys[keys.index(first) + 2]
    qtbot.waitUntil(lambda: loader.ready(second), timeout=60000)  # shown in its key's turn (the third later)
    assert not loader.ready(third)
    drawn = []
    show_chips = app.chips.show_chips

    def recorded(*args, **kwargs):
        drawn.append(loader.key)
        return show_chips(*args, **kwargs)

    app.chips.show_chips = recorded
    assert app.review.key("N") and panel.view["item"] == second
    qtbot.waitUntil(lambda: loader.model.item == second, timeout=10000)
    passed_over = loader.model.token  # the request for the item passed over
    assert app.review.key("N") and panel.view["item"] == third
    wait_evidence(app, qtbot, timeout=60000)
    assert drawn[-1] == third and set(drawn[:-1]) <= {second}, drawn
    # the item passed over's evidence landing now, with its request's token: dropped, the docks stay on the third
    loader.prepared_ready.emit((passed_over, second, loader._prepared[second], None))
    qtbot.wait(200)
    assert drawn[-1] == third and loader.key == third and loader.model.status == "shown", drawn
    view = loader.view
    assert loader.key == third and view is not None
    from reviewer.app.review_evidence import evidence_view, view_years

    assert view.to_json() == evidence_view(panel.view["question"]).to_json()
    assert st.composite == view.composite and st.stretch == view.stretch
    assert st.period == view_years(view)
    if len(view.panels) >= 2:
        assert st.pair == (view.panels[0], view.panels[-1])


def test_the_next_items_prefetch_starts_once_the_item_shown_is_painted(review_window, qtbot):
    """Issue 27, no chains of timers: the next item's evidence starts being prepared at the canvas's first frame
    after the item shown is applied (it waited a fixed 250 ms timer before, re-armed while an item came up), so
    it never competes with the item's own paint and is never later than that paint."""
    app = review_window
    panel, loader = app.review.annotator, app.review.loader
    wait_evidence(app, qtbot, timeout=60000, trajectory=False)
    canvas = app.viewer.window._qt_viewer.canvas.native
    keys = [r["item"] for r in panel.shown_rows]
    at_frame: list[tuple[str | None, tuple[str, ...]]] = []

    def on_applied(key: str, _problem: str) -> None:
        def frame() -> None:  # (connected after the dock's own handler: called after it)
            canvas.frameSwapped.disconnect(frame)
            at_frame.append((key, loader.plan.items))

        canvas.frameSwapped.connect(frame)

    loader.applied.connect(on_applied)
    assert app.review.key("N")
    shown = panel.view["item"]
    qtbot.waitUntil(lambda: bool(at_frame), timeout=60000)
    loader.applied.disconnect(on_applied)
    key, plan = at_frame[0]
    assert key == shown and plan[:1] == (keys[keys.index(shown) + 1],), at_frame


def test_status_bar_gives_the_value_of_the_item_shown(review_window, qtbot):
    """napari's status bar gives the image value under the pointer; when the next item shows another date under a
    pointer that stays put, it gives that date's value, worked out in the item's own turn (napari's status thread
    answered after the window's paint, which then painted the window a second time)."""
    app = review_window
    s, viewer = app.session, app.viewer
    wait_evidence(app, qtbot, timeout=60000)
    res = s.index.site.resolution
    row, col = 10, 20
    viewer.mouse_over_canvas = True
    viewer.cursor.position = (row * res, col * res)  # the pointer over pixel (10, 20)
    for _ in range(2):
        press(qtbot, app, "N")
        wait_evidence(app, qtbot, timeout=60000, trajectory=False)
        rgb = np.asarray(s.image_layer.data)[row, col]  # napari's value: the RGB of the date shown there
        value = f"[{', '.join(str(int(v)) for v in rgb)}]"
        assert isinstance(viewer.status, dict) and viewer.status["value"] == value, (viewer.status, value)
        assert s.image_layer.data.date == s.state.current


def test_a_prepared_item_is_stretched_off_the_ui_thread(review_window, qtbot, monkeypatch):
    """The next item prepared ahead has its canvas date, pair panels and chips read and stretched to RGB in the
    evidence worker: showing it stretches nothing on the UI thread (one 1,600 px date or pair panel is ~40 ms of the
    UI thread's CPU), and the canvas shows the date through the item's stretch."""
    import threading

    from reviewer.record.stretch import Stretch

    app = review_window
    panel, loader, s = app.review.annotator, app.review.loader, app.session
    wait_evidence(app, qtbot, timeout=60000)
    keys = [r["item"] for r in panel.shown_rows]
    upcoming = keys[keys.index(panel.view["item"]) + 1]
    qtbot.waitUntil(lambda: loader.ready(upcoming), timeout=60000)
    on_ui_thread = []
    apply = Stretch.apply

    def recorded(self, channels, *args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            on_ui_thread.append(channels.shape)
        return apply(self, channels, *args, **kwargs)

    monkeypatch.setattr(Stretch, "apply", recorded)
    assert app.review.key("N") and panel.view["item"] == upcoming
    wait_evidence(app, qtbot, timeout=60000, trajectory=False)
    assert on_ui_thread == []
    monkeypatch.undo()
    shown = np.asarray(s.image_layer.data)
    channels = s.frames.read_frame(s.stack, s.state.composite, s.state.current)  # (from the scene cache)
    assert np.array_equal(shown, loader.view.stretch.apply(channels))


def test_another_region_relinks_no_shader_program(review_window, qtbot, monkeypatch):
    """The next item, prepared ahead, with another region than the item before: its key's turn and paint link no
    shader program (the date caption is a Qt label: as napari's text overlay, its box was resized for each caption
    and vispy relinked the box's mesh program), and the canvas draws the item's region as the pixels its trajectory
    averages. Under software GL
    (llvmpipe) a link compiles the program on the UI thread; drawn as a Shapes polygon, each new region rebuilt
    napari's two meshes and relinked two more programs (~20 ms of the UI thread's CPU)."""
    import threading

    from vispy.gloo import Program

    app = review_window
    panel, loader, s = app.review.annotator, app.review.loader, app.session
    wait_evidence(app, qtbot, timeout=60000)
    for _ in range(6):  # on to an item whose next item has another region
        keys = [r["item"] for r in panel.shown_rows]
        upcoming = keys[keys.index(panel.view["item"]) + 1]
        qtbot.waitUntil(lambda upcoming=upcoming: loader.ready(upcoming), timeout=60000)
        nxt = loader._prepared[upcoming]
        if nxt.region is not None and not np.array_equal(nxt.region, s.canvas.item_region_layer.data):
            break
        assert app.review.key("N")
        wait_evidence(app, qtbot, timeout=60000, trajectory=False)
    else:
        pytest.fail("no two items in a row with different regions in the demo bank")
    qtbot.wait(200)  # the item before painted
    linked = []
    set_shaders = Program.set_shaders

    def recorded(self, *args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            linked.append(type(self).__name__)
        return set_shaders(self, *args, **kwargs)

    monkeypatch.setattr(Program, "set_shaders", recorded)
    assert app.review.key("N") and panel.view["item"] == upcoming
    wait_evidence(app, qtbot, timeout=60000, trajectory=False)
    qtbot.wait(200)  # ... and its paint
    monkeypatch.undo()
    assert linked == []
    drawn = np.asarray(s.canvas.item_region_layer.data)
    assert ((drawn > 0) == nxt.mask).all()


def test_an_item_with_another_number_of_dates_renders_only_its_own_date(review_window, qtbot, monkeypatch):
    """The next item, prepared ahead, whose stack has another number of dates than the one shown (napari's data
    setter: it slices the new array at the old step, clamped to the new length, before the item's date is set): the
    UI thread renders only the item's own date and asks the frame reader for no other date. Before, the slice at the
    old step rendered that date on the UI thread (a 1,600 px stretch is ~40 ms) or had the frame reader read it while
    the item was painted, and nobody saw it."""
    import threading

    from reviewer.app.session_frames import FrameSource

    app = review_window
    panel, loader, s = app.review.annotator, app.review.loader, app.session
    wait_evidence(app, qtbot, timeout=60000)
    for _ in range(12):  # on to an item whose next item has another number of dates, shown at another index
        keys = [r["item"] for r in panel.shown_rows]
        upcoming = keys[keys.index(panel.view["item"]) + 1]
        qtbot.waitUntil(lambda upcoming=upcoming: loader.ready(upcoming), timeout=60000)
        nxt = loader._prepared[upcoming]
        old_step = min(s.state.current, len(nxt.stack) - 1)
        if len(nxt.stack) != len(s.stack) and nxt.current != old_step:
            break
        assert app.review.key("N")
        wait_evidence(app, qtbot, timeout=60000, trajectory=False)
    else:
        pytest.fail("no two items in a row with stacks of different lengths in the demo bank")
    rendered, asked = [], []
    render, request = FrameSource.render, FrameSource._request

    def rendered_on_ui(self, stack, composite, stretch, i):
        if threading.current_thread() is threading.main_thread():
            rendered.append(i)
        return render(self, stack, composite, stretch, i)

    def asked_for(self, key, read):
        asked.append(key)
        return request(self, key, read)

    monkeypatch.setattr(FrameSource, "render", rendered_on_ui)
    monkeypatch.setattr(FrameSource, "_request", asked_for)
    assert app.review.key("N") and panel.view["item"] == upcoming
    wait_evidence(app, qtbot, timeout=60000, trajectory=False)
    monkeypatch.undo()
    assert s.state.current == nxt.current and len(s.stack) == len(nxt.stack)
    assert set(rendered) == {nxt.current} and asked == [], (rendered, asked, old_step)
    shown = np.asarray(s.image_layer.data)
    channels = s.frames.read_frame(s.stack, s.state.composite, s.state.current)
    assert np.array_equal(shown, loader.view.stretch.apply(channels))  # the item's date, not the grey frame


def test_the_question_keeps_its_width_from_item_to_item(review_window, qtbot):
    """The question's text keeps its width from item to item: it is never re-wrapped 13 px narrower or wider
    because the view's scroll bar came or went with the question's length (issue 27)."""
    app = review_window
    panel = app.review.annotator
    wait_evidence(app, qtbot, timeout=60000)
    widths, scrolls = set(), set()
    for _ in range(6):
        assert app.review.key("N")
        wait_evidence(app, qtbot, timeout=60000, trajectory=False)
        bar = panel.focus.verticalScrollBar()
        widths.add(panel.focus.viewport().width())
        scrolls.add(bar.maximum() > 0)
    assert scrolls == {True, False}, scrolls  # (a long question and a short one were shown)
    assert len(widths) == 1, widths


def test_the_status_bar_is_laid_out_before_the_items_paint(review_window, qtbot):
    """An item prepared ahead has its new status line (napari's value under a still pointer: another date, another
    value, another width) laid out before the window paints the item: napari's status bar is never resized after
    that paint. Before, its label was resized after it (a layout Qt asks for while doing another queues behind the
    paint already asked for) and the window painted a second time."""
    from qtpy.QtCore import QEvent, QObject
    from qtpy.QtWidgets import QApplication

    from reviewer.app.qt_window import main_window

    app = review_window
    s, viewer, panel, loader = app.session, app.viewer, app.review.annotator, app.review.loader
    qwin = main_window(viewer)
    bar = qwin.statusBar()
    wait_evidence(app, qtbot, timeout=60000)
    res = s.index.site.resolution
    viewer.mouse_over_canvas = True
    viewer.cursor.position = (float(s.state.current), 10 * res, 20 * res)  # the pointer still over pixel (10, 20)
    seen: list[list[str]] = []  # per item: the window's paints ("paint") and the status bar's resizes after one

    class Filter(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
            if not seen or not obj.isWidgetType():
                return False
            if event.type() == QEvent.Type.UpdateRequest and obj is qwin:
                seen[-1].append("paint")
            elif event.type() == QEvent.Type.Resize and "paint" in seen[-1] and bar.isAncestorOf(obj):
                seen[-1].append(f"resized {type(obj).__name__} {obj.objectName()}")
            return False

    watch = Filter()
    qapp = QApplication.instance()
    qapp.installEventFilter(watch)
    lengths = set()
    try:
        for _ in range(8):
            keys = [r["item"] for r in panel.shown_rows]
            upcoming = keys[keys.index(panel.view["item"]) + 1]
            qtbot.waitUntil(lambda upcoming=upcoming: loader.ready(upcoming), timeout=60000)  # shown in its turn
            seen.append([])
            assert app.review.key("N")
            wait_evidence(app, qtbot, timeout=60000, trajectory=False)
            qtbot.wait(100)  # its paint and what follows it
            lengths.add(len(viewer.status["value"]))  # (napari's status: a dict, its "value" the RGB shown there)
    finally:
        qapp.removeEventFilter(watch)
    assert len(lengths) > 1, lengths  # (values of different widths were shown: "[7, 9, 12]", "[143, 99, 120]")
    assert all(item.count("paint") >= 1 for item in seen), seen
    assert [r for item in seen for r in item if r != "paint"] == [], seen


def test_stretch_rows_an_item_shows_are_painted_once(review_window, qtbot):
    """An item whose composite has three channels after one with one (NDVI -> SWIR2/NIR/red), shown while Qt works
    through its queue (its key, or its evidence landing from the worker, delivered as a queued event) with a paint of
    the window already due: the Stack dock's two stretch rows that appear are painted in one window paint, not
    again in another. A widget shown asks for its own paint (Qt's UpdateLater) in a queued event of its own, which
    came after the window's due paint: the rows were painted in it and again in a second window paint (~5 ms of the
    UI thread: on a two-site queue, the other site's items with such a composite were its p95)."""
    import time

    from qtpy.QtCore import QEvent, QObject, Qt, Signal
    from qtpy.QtWidgets import QApplication

    from reviewer.app.qt_window import main_window
    from reviewer.app.review_evidence import evidence_view

    app = review_window
    panel, loader, qwin = app.review.annotator, app.review.loader, main_window(app.viewer)
    wait_evidence(app, qtbot, timeout=60000, trajectory=False)
    channels = lambda row: len(evidence_view(row["question"]).stretch.channels)  # noqa: E731
    rows = panel.shown_rows
    at = next((k for k in range(len(rows) - 1) if channels(rows[k]) == 1 and channels(rows[k + 1]) == 3), None)
    assert at is not None, "no one-channel item before a three-channel one in ann's queue"
    while panel.view["item"] != rows[at]["item"]:
        assert app.review.key("N")
        wait_evidence(app, qtbot, timeout=60000, trajectory=False)
    upcoming = rows[at + 1]["item"]
    qtbot.waitUntil(lambda: loader.ready(upcoming), timeout=60000)  # (shown in its key's turn)
    qtbot.wait(300)  # the item's paints done
    appearing = [w for row in app.controls.stretch_rows[1:] for w in row[1:]]  # rows 2 and 3: low, high, gamma
    assert not any(w.isVisible() for w in appearing)
    paints: list[int] = []  # the window paint (its number) in which each of those boxes was painted
    window_paints = [0]

    class Filter(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
            if event.type() == QEvent.Type.UpdateRequest and obj is qwin:
                window_paints[0] += 1
            elif event.type() == QEvent.Type.Paint and obj in appearing:
                paints.append(window_paints[0])
            return False

    class Queued(QObject):
        key = Signal()

    queued = Queued()
    queued.key.connect(lambda: app.review.key("N"), Qt.QueuedConnection)
    watch = Filter()
    qapp = QApplication.instance()
    qapp.installEventFilter(watch)
    try:
        app.review.update()  # a paint of the window asked for
        queued.key.emit()  # N, queued
        time.sleep(0.1)  # the UI thread busy meanwhile: the paint is due when Qt delivers the key
        QApplication.processEvents()
        assert panel.view["item"] == upcoming
        wait_evidence(app, qtbot, timeout=60000, trajectory=False)
        qtbot.wait(300)  # the item's paints and what follows them
    finally:
        qapp.removeEventFilter(watch)
    assert all(w.isVisible() for w in appearing)
    assert len(paints) == len(appearing) and len(set(paints)) == 1, paints  # each painted once, in one paint
