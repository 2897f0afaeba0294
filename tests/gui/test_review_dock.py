"""The review dock under Xvfb, on the demo bank (generated once from the GUI demo site, cached): two
annotators review with the keyboard only (accept, flag with reasons, undo, correct, skip), checked against
the store; each item's evidence (composite, stored stretch, period, pair dates, chips, region) is what its
evidence view says; an expert adjudicates a split item; the maintainer sees the core's agreement figures.
Screenshots of each mode go to /tmp/reviewer-gui-shots (REVIEWER_SHOTS).
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest
from qtpy.QtCore import Qt

pytestmark = pytest.mark.gui

BANK = "demo-core-seed0-generated"


@pytest.fixture(scope="session")
def demo_bank(request, demo_site) -> Path:
    """The candidate bank `reviewer generate` makes of the GUI demo site (seed 5), generated once and cached."""
    from reviewer.bank.generate import generate

    out = Path(request.config.cache.mkdir("reviewer-demo-64")) / "candidates-seed5"
    if not (out / "manifest.json").is_file():
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            generate(demo_site, tmp, seed=5)
        tmp.rename(out)
    return out


def make_store(path: Path, demo_db: Path, bank: Path, *, k: int = 2, seed: int = 11) -> Path:
    """A store with the demo site's index, users mia (maintainer), ann and bob (annotators), eve (expert),
    the demo bank imported and assigned to ann and bob with k = 2."""
    from reviewer.bank.store import import_bank
    from reviewer.review import api
    from reviewer.store import Store

    shutil.copy(demo_db, path)
    with Store(path) as store:
        api.add_user(store, "mia", "maintainer")
        for name, role in (("ann", "annotator"), ("bob", "annotator"), ("eve", "expert")):
            api.add_user(store, name, role, by="mia")
        import_bank(store, bank, user="mia")
        api.assign(store, BANK, annotators=["ann", "bob"], k=k, seed=seed, user="mia")
    return path


@pytest.fixture
def store_path(tmp_path, demo_db, demo_bank) -> Path:
    return make_store(tmp_path / "review.sqlite", demo_db, demo_bank)


@pytest.fixture
def window(make_napari_viewer, store_path, tmp_path, qtbot):
    """start(user) -> a reviewer window on the temp store with the review dock of that user."""
    from reviewer.app.demo import RecentSites
    from reviewer.app.main_window import ReviewerApp

    made = []

    def start(user: str, role: str):
        viewer = make_napari_viewer(show=True)
        app = ReviewerApp(viewer, db=store_path, recent=RecentSites(tmp_path / "recent.json"), scoring=False)
        made.append(app)
        app.start_review(user, role)
        qwin = viewer.window._qt_window
        qwin.activateWindow()
        qtbot.waitUntil(qwin.isActiveWindow, timeout=5000)
        return app

    yield start
    for app in made:
        app.close()


def press(qtbot, app, *keys: str) -> None:
    """Real key presses on the window's focus widget (the canvas, unless a dialog has it)."""
    names = {"Space": Qt.Key_Space, "Backspace": Qt.Key_Backspace, "Return": Qt.Key_Return}
    target = app.viewer.window._qt_viewer.canvas.native
    for k in keys:
        qtbot.keyClick(target, names.get(k) or getattr(Qt, f"Key_{k}"))


def wait_evidence(app, qtbot, timeout: int = 30000) -> None:
    qtbot.waitUntil(app.review.loader.shown, timeout=timeout)


def stored(store_path: Path, user: str) -> dict[str, tuple[str, list[str]]]:
    """qid -> (verdict, reasons) of the user's effective stage-1 decisions, read straight from the store."""
    import sqlite3

    con = sqlite3.connect(store_path)
    rows = con.execute(
        "SELECT i.qid, d.verdict, d.reasons FROM decisions d JOIN items i ON i.id = d.item WHERE d.user = ? "
        "AND d.stage = 1 AND d.verdict != 'retract' AND NOT EXISTS (SELECT 1 FROM decisions r WHERE r.retracts = d.id) "
        "ORDER BY d.id",
        [user],
    ).fetchall()
    con.close()
    return {q: (v, json.loads(r)) for q, v, r in rows}


def test_annotator_reviews_with_the_keyboard(window, store_path, qtbot, shots):
    app = window("ann", "annotator")
    dock = app.review
    panel = dock.annotator
    assert dock.expert is None and dock.maintainer is None and dock.tabs.count() == 1  # annotator mode only
    assert "ann (annotator)" in app.viewer.title
    order = [r["id"] for r in panel.rows]
    n = len(order)
    assert n == 25 and panel.view["id"] == order[0]  # opens on the first undecided item in her order
    wait_evidence(app, qtbot)
    app.viewer.screenshot(str(shots / "10_review_annotator.png"), canvas_only=False, flash=False)
    press(qtbot, app, "A")  # accept
    assert "saved: accept" in panel.saved.text() and panel.view["id"] == order[1]
    press(qtbot, app, "2")  # flag: wrong reference at once
    press(qtbot, app, "F", "1", "3", "Return")  # flag with two reasons
    assert panel.view["id"] == order[3]
    press(qtbot, app, "Backspace")  # undo the last: back on order[2]
    assert panel.view["id"] == order[2] and "took back flag" in panel.saved.text()
    press(qtbot, app, "F", "1", "Return")
    press(qtbot, app, "Space")  # skip order[3]
    assert panel.view["id"] == order[4]
    press(qtbot, app, "C")
    panel.dialog.edit.setText("shoreline hidden by cloud")
    panel.dialog.accept()
    press(qtbot, app, "E")
    form = panel.dialog
    form.text.setPlainText(panel.view["question"]["text"] + " Answer for the whole site.")
    form.why.setText("say the region")
    assert "text:" in form.diff.text()
    form._on_save()
    assert panel.view["id"] == order[5] and "saved: flag" in panel.saved.text()
    assert panel.progress.value() == 4  # accept, flag, flag, flag-with-correction (the skip is not done)
    want = {
        order[0]: ("accept", []),
        order[1]: ("flag", ["wrong_reference"]),
        order[2]: ("flag", ["ambiguous_evidence"]),
        order[3]: ("skip", []),
        order[4]: ("flag", ["wrong_reference"]),
    }
    assert stored(store_path, "ann") == want
    import sqlite3

    con = sqlite3.connect(store_path)
    comment, correction, view = con.execute(
        "SELECT d.comment, d.correction, d.view FROM decisions d JOIN items i ON i.id = d.item "
        "WHERE i.qid = ? AND d.user = 'ann'",
        [order[4]],
    ).fetchone()
    con.close()
    assert comment == "shoreline hidden by cloud"
    assert json.loads(correction) == {
        "text": panel.rows[4]["question"]["text"] + " Answer for the whole site.",
        "reason": "say the region",
    }
    assert json.loads(view)["composite"]  # the evidence view the decision rests on is on record
