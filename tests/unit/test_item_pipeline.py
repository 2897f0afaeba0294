"""The item pipeline's state without a display (reviewer/app/item_pipeline.py): a result is applied only while its
token is current, a new item or plan makes every earlier result stale, and the model says loading / shown /
failed (with the reason) and a save's outcome. Nothing here imports Qt or napari."""

from __future__ import annotations

import subprocess
import sys
import threading

from reviewer.app.item_pipeline import FAILED, LOADING, NOT_SAVED, SAVED, SHOWN, ItemEvidence, PendingSave, PrefetchPlan


def test_a_result_for_an_item_left_is_dropped():
    """N pressed twice quickly: the first item's evidence lands after the second was asked for; it is not shown, and
    the second item's result is."""
    ev = ItemEvidence()
    first = ev.begin("q1")
    second = ev.begin("q2")
    assert ev.status == LOADING and ev.item == "q2"
    assert not ev.shown(first) and ev.status == LOADING  # stale: nothing changes
    assert not ev.failed(first, "site missing") and ev.reason == ""
    assert ev.shown(second) and ev.status == SHOWN


def test_going_back_to_an_item_makes_its_old_request_stale():
    """N then P back to the same item: the request made before leaving it is not the current one any more (its
    result could carry the filters of the stack as it was then)."""
    ev = ItemEvidence()
    old = ev.begin("q1")
    ev.begin("q2")
    again = ev.begin("q1")
    assert old.item == again.item and old != again
    assert not ev.current(old) and ev.current(again)


def test_a_failure_says_why_and_is_announced():
    ev = ItemEvidence()
    seen = []
    ev.events.status.connect(seen.append)
    token = ev.begin("q7")
    assert ev.failed(token, "site folder /data/x is missing")
    assert (ev.status, ev.reason) == (FAILED, "site folder /data/x is missing")
    assert seen == [LOADING, FAILED]
    ev.begin("q8")  # the next item starts clean
    assert ev.reason == "" and ev.status == LOADING


def test_a_new_plan_cancels_the_old_one_for_a_worker_thread():
    """A prefetch worker asks `live(token)` before each step: once the reviewer moved on (a new plan) or the dock
    said none (cancel), it stops; the plan names the items it prepares."""
    plan = PrefetchPlan()
    first = plan.replace(["q2", "q3"])
    assert plan.live(first) and plan.wants("q3") and not plan.wants("q4")
    seen = []
    t = threading.Thread(target=lambda: seen.append(plan.live(first)))
    second = plan.replace(["q3", "q4"])
    t.start()
    t.join()
    assert seen == [False] and plan.live(second) and plan.items == ("q3", "q4")
    plan.cancel()
    assert not plan.live(second) and not plan.wants("q3") and not plan.live(None)


def test_a_save_has_an_outcome():
    save = PendingSave()
    save.start("q1", "accept")
    assert save.outcome is None and (save.item, save.verdict) == ("q1", "accept")
    save.not_saved("NOT saved: accept q1: the item changed")
    assert save.outcome == NOT_SAVED and "changed" in save.message
    save.start("q1", "accept")
    assert save.outcome is None and save.message == ""
    save.saved("saved: accept on q1 (decision 3)")
    assert save.outcome == SAVED


def test_the_pipeline_state_imports_no_qt_or_napari():
    code = (
        "import sys; import reviewer.app.item_pipeline, reviewer.app.evidence_prep; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('qtpy', 'PySide6', 'PyQt5', 'napari', 'vispy')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_canvas_reads_a_full_size_scene_at_display_size():
    """A full Landsat scene (7,741 x 7,591 px at 30 m) is read for the canvas at 1,600 px across, same extent (each
    pixel read covers 4.84 site pixels: 145 m), so a date holds ~7 M float32 values, not ~176 M; a 64 px site is
    read as it is."""
    from affine import Affine

    from reviewer.app.evidence_prep import VIEW_PX, shown_stack
    from reviewer.record.grid import Grid
    from reviewer.record.stack import Stack

    full = Stack(None, [], Grid("EPSG:32618", Affine(30.0, 0, 399885.0, 0, -30.0, 800415.0), (7591, 7741)), None)
    shown = shown_stack(full)
    assert VIEW_PX == 1600 and shown.grid.shape == (round(7591 * 1600 / 7741), 1600) == (1569, 1600)
    assert abs(shown.grid.transform.a - 30.0 * 7741 / 1600) < 1e-9  # 145.1 m
    assert shown.grid.transform.c == 399885.0 and shown.grid.transform.f == 800415.0  # the same corner
    small = Stack(None, [], Grid("EPSG:32618", Affine(30.0, 0, 0.0, 0, -30.0, 0.0), (64, 64)), None)
    assert shown_stack(small) is small
