"""The failure-coding dock under Xvfb (issue 13), on a coding set sampled from runs on the GUI demo site's bank.

Bank: three questions of the demo candidate bank (q7 a water trend, reference increase; q29 a change detection,
reference no; q18 a comparison of two periods, reference more) and an instrument pair P1 on q7.
Runs, 3 passes each with the record: model A right everywhere, its altered P1 runs decrease, decrease, increase
(moved: 2 wrong runs p001, p002); model B wrong on every question (q7 decrease, q29 yes, q18 less), its altered
P1 runs right. Sampled with --per-model 12: B's three questions, one run each (s001..s003, by question).
An expert codes with the keyboard only; the check mode shows no LLM code; a failed save says NOT saved.
Screenshots go to /tmp/reviewer-gui-shots (REVIEWER_SHOTS).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from qtpy.QtCore import Qt
from qtpy.QtWidgets import QApplication, QLabel

pytestmark = pytest.mark.gui

Q7, Q29, Q18 = "demo-core-seed0-7", "demo-core-seed0-29", "demo-core-seed0-18"
LLM_QUOTE = "LLM-ONLY QUOTE: the Terra offset was read as land change"
LLM_MODEL = "precoder-model-x"
B_METHOD = (
    "Computed the annual mean MNDWI from Landsat TM and OLI scenes. Fitted a Sen slope. "
    "The series shows a drop after 2012 which we read as drying."
)


def _runs() -> list[dict]:
    def run(model, q, k, value, condition="record", pair=None, method=None, caveats=""):
        field = {Q7: "direction", Q29: "changed", Q18: "direction"}[q]
        return {
            "model": model, "question": q, "condition": condition, "pair": pair, "pass": k,
            "answer": {field: value}, "confidence": 0.7, "method": method or f"{model} on {q} pass {k}.",
            "caveats": caveats, "tool_calls": 20 + k, "minutes": 4.5, "image_views": k, "messages": 30, "error": None,
        }  # fmt: skip

    out = []
    for k in (1, 2, 3):
        out += [run("A", Q7, k, "increase"), run("A", Q29, k, "no"), run("A", Q18, k, "more")]
        out.append(run("A", Q7, k, "decrease" if k < 3 else "increase", "altered", "P1"))
        out.append(run("B", Q7, k, "decrease", method=B_METHOD, caveats="Sensor calibration may differ."))
        out += [run("B", Q29, k, "yes"), run("B", Q18, k, "less"), run("B", Q7, k, "increase", "altered", "P1")]
    return out


@pytest.fixture(scope="module")
def set_path(demo_bank, tmp_path_factory) -> Path:
    """The coding set, sampled with the CLI from the runs above."""
    from reviewer.bank.io import BankContent, write_bank
    from reviewer.cli import main
    from tests.unit import bank_factory as bf

    tmp = tmp_path_factory.mktemp("failures-dock")
    lines = (demo_bank / "questions.jsonl").read_text().splitlines()
    questions = [q for q in map(json.loads, lines) if q["id"] in (Q7, Q29, Q18)]
    sites = [json.loads(s) for s in (demo_bank / "sites.jsonl").read_text().splitlines()]
    write_bank(
        tmp / "bank",
        BankContent("dock", "1", questions, sites, [bf.pair("P1", Q7)], frozen=True, created="2026-12-01T00:00:00Z"),
    )
    (tmp / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _runs()))
    out = tmp / "set.json"
    argv = ["failures", "sample", str(tmp / "runs.jsonl"), str(tmp / "bank"), "--seed", "2", "--out", str(out)]
    assert main(argv) == 0
    return out


@pytest.fixture
def store_path(tmp_path, demo_db, demo_site) -> Path:
    """The demo site's index, users mia (maintainer), eve (expert), ann (annotator)."""
    from reviewer.review import api
    from reviewer.store import Store

    path = tmp_path / "review.sqlite"
    shutil.copy(demo_db, path)
    with Store(path) as store:
        store.db.execute("DELETE FROM sites WHERE site_dir != ?", [str(demo_site)])
        api.add_user(store, "mia", "maintainer")
        api.add_user(store, "eve", "expert", by="mia")
        api.add_user(store, "ann", "annotator", by="mia")
    return path


@pytest.fixture
def window(make_napari_viewer, store_path, set_path, tmp_path, qtbot):
    """start(user, role) -> a reviewer window on the temp store with the coding dock of that user."""
    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.qt_failures import close_failures_dock, install_failures_dock
    from reviewer.app.recent import RecentSites

    made = []

    def start(user: str, role: str):
        viewer = make_napari_viewer(show=True)
        app = ReviewerApp(viewer, db=store_path, recent=RecentSites(tmp_path / "recent.json"), scoring=False)
        made.append(app)
        install_failures_dock(app, set_path, user, role, prefetch=False)
        qwin = viewer.window._qt_window
        qwin.activateWindow()
        qtbot.waitUntil(qwin.isActiveWindow, timeout=5000)
        return app

    yield start
    for app in made:
        close_failures_dock(app)
        app.close()


def press(qtbot, app, *keys: str) -> None:
    """Real key presses on the window's focus widget (the canvas, or the note field after C)."""
    names = {"Return": Qt.Key_Return}
    for k in keys:
        target = app.viewer.window._qt_window.focusWidget() or app.viewer.window._qt_viewer.canvas.native
        qtbot.keyClick(target, names.get(k) or getattr(Qt, f"Key_{k}"))


def codes(store_path: Path, kind: str = "expert") -> list[tuple]:
    con = sqlite3.connect(store_path)
    rows = con.execute(
        "SELECT id, run, scheme, code, coder, note, replaces FROM failure_codes WHERE kind = ? ORDER BY id", [kind]
    ).fetchall()
    con.close()
    return rows


def events(store_path: Path, action: str) -> list[tuple]:
    con = sqlite3.connect(store_path)
    rows = con.execute("SELECT user, before, after, detail FROM events WHERE action = ? ORDER BY id", [action])
    out = [(u, b, a, json.loads(d)) for u, b, a, d in rows.fetchall()]
    con.close()
    return out


def dock_text(dock) -> str:
    """Everything the dock shows in words: the run, the list, the code rows and their hover texts, the labels."""
    labels = [w.text() + " " + w.toolTip() for w in dock.findChildren(QLabel)]
    items = [dock.list.item(i).text() for i in range(dock.list.count())]
    return "\n".join([dock.text.toPlainText(), *labels, *items])


def test_an_expert_codes_runs_with_the_keyboard_and_each_code_is_a_row_with_its_event(window, qtbot, set_path,
                                                                                      store_path, shots):  # fmt: skip
    doc = json.loads(set_path.read_text())
    steps = {r["id"]: r for r in doc["runs"] if r["part"] == "steps"}
    assert sorted(steps) == ["s001", "s002", "s003"]  # B's three questions, one run each
    assert [steps[s]["question"] for s in sorted(steps)] == [Q18, Q29, Q7]  # in question order
    app = window("eve", "expert")
    dock = app.failures
    assert dock.view["run"] == "s001" and dock.progress.text() == "0 of 3 coded by you"
    # the step codebook's keys, in its order, with the definition beside each and the example on hover
    rows = [dock.code_labels[c].text() for c in dock.code_labels]
    assert list(dock.code_labels) == ["data", "time_sampling", "question", "analysis", "close_call", "unfinished",
                                      "other"]  # fmt: skip
    assert rows[2].startswith("<b>3</b> Question") and "winter as December to February" in rows[2]
    assert "example:" in dock.code_labels["question"].toolTip()

    press(qtbot, app, "1")  # s001: data, then the next run to code
    # the saved line in the codebook's words, as the code list says them (it had said the code, "data")
    assert dock.saved.text() == "saved: Data on s001" and dock.view["run"] == "s002"
    press(qtbot, app, "C")
    assert dock.note.hasFocus()
    qtbot.keyClicks(dock.note, "cause read from the colour alone")  # digits or N typed here stay text
    press(qtbot, app, "Return")
    assert not dock.note.hasFocus() and dock.note.text() == "cause read from the colour alone"
    press(qtbot, app, "C")  # Esc leaves the note for the canvas too, the note kept
    qtbot.keyClick(dock.note, Qt.Key_Escape)
    canvas = app.viewer.window._qt_viewer.canvas.native
    assert canvas.hasFocus() and dock.note.text() == "cause read from the colour alone"
    qtbot.keyClick(canvas, Qt.Key_Tab)  # Tab from the canvas: the coding dock first (its mode)
    assert QApplication.focusWidget() is dock.mode_combo
    canvas.setFocus()
    press(qtbot, app, "4")  # s002: analysis with the note
    assert dock.saved.text() == "saved: Analysis on s002" and dock.note.text() == ""
    assert dock.view["run"] == "s003"
    # s003 is B's q7 run: its method summary's candidate statements are marked (sensor names, 'drop', calibration)
    text = dock.text.toHtml()
    assert "Landsat" in dock.text.toPlainText() and "&gt;&gt; " in text
    plain = dock.text.toPlainText()
    assert ">> The series shows a drop after 2012 which we read as drying." in plain
    assert ">> Sensor calibration may differ." in plain and ">> Fitted a Sen slope." not in plain
    assert 'pass 2: "decrease" (wrong), confidence 0.7' in plain  # the same model's other passes
    assert "work: 2" in plain and "tool calls, 4.5 minutes" in plain
    press(qtbot, app, "P", "P", "3")  # back to s001, corrected to 'question'
    assert dock.saved.text() == "saved: Question (was Data) on s001"
    assert dock.view["run"] == "s003" and dock.progress.text() == "2 of 3 coded by you"
    # the run list says each code in the codebook's words too (it had said "✓ question", "✓ analysis")
    assert [dock.list.item(i).text().split("   ")[0] for i in range(dock.list.count())] == [
        "✓ Question",
        "✓ Analysis",
        "·",
    ]
    press(qtbot, app, "9")  # no code on 9: nothing saved
    qtbot.waitUntil(lambda: dock.loader.shown(trajectory=False), timeout=60000)
    assert "evidence of demo-core-seed0-7 in the viewer" in dock.evidence_label.text()
    dock.show_run("s001")  # another question's run: q7's evidence is still on screen while q18's is asked for
    assert dock.evidence_label.text() == "evidence: opening demo-core-seed0 ..."  # it had said "evidence of ...-7"
    dock.show_run("s003")
    assert dock.evidence_label.text() == "evidence of demo-core-seed0-7 in the viewer"
    q7 = doc["questions"][Q7]
    assert app.state.composite == q7["evidence"]["composite"] == "mndwi"  # the question's own evidence view
    app.viewer.window.screenshot(str(shots / "failures_dock_steps.png"), canvas_only=False)

    dock.mode_combo.setCurrentIndex(dock.mode_combo.findData("pairs"))
    assert dock.view["run"] == "p001" and dock.view["scheme"] == "sensor"
    assert list(dock.code_labels) == ["attributes", "reports_break", "separate", "generic", "nothing"]
    shown = [w.text() for w in dock.codes_box.findChildren(QLabel) if w.isVisible()]
    assert [t.split("</b>")[0] for t in shown] == [f"<b>{k}" for k in "12345"]  # the step codes are gone
    assert shown[0].startswith("<b>1</b> Attributes to instrument")
    assert "outside the burned area" in dock.rule.text() and dock.rule.isVisible()
    assert "altered: terra ndvi scale x0.8 from 2018-01-01" in dock.text.toPlainText()  # bank_factory's P1
    assert "pair P1 (moved)" in dock.text.toPlainText()
    app.viewer.window.screenshot(str(shots / "failures_dock_pairs.png"), canvas_only=False)
    press(qtbot, app, "7")  # the sensor scheme has keys 1-5 only
    press(qtbot, app, "5")
    assert dock.saved.text() == "saved: Says nothing on p001" and dock.view["run"] == "p002"

    rows = codes(store_path)
    assert [(r[1], r[2], r[3], r[4], r[5]) for r in rows] == [
        ("s001", "step", "data", "eve", None),
        ("s002", "step", "analysis", "eve", "cause read from the colour alone"),
        ("s001", "step", "question", "eve", None),
        ("p001", "sensor", "nothing", "eve", None),
    ]
    assert rows[2][6] == rows[0][0] and rows[0][6] is None  # the correction names the code it replaces
    ev = events(store_path, "failure_code")
    assert [(u, b, a, d["run"], d["code_id"]) for u, b, a, d in ev] == [
        ("eve", None, "data", "s001", rows[0][0]),
        ("eve", None, "analysis", "s002", rows[1][0]),
        ("eve", "data", "question", "s001", rows[2][0]),
        ("eve", None, "nothing", "p001", rows[3][0]),
    ]


def test_f1_lists_the_coders_keys_as_the_other_roles_keys(window, qtbot, shots):
    """A coder pressing F1 on the canvas reads the coding dock's keys (the code keys, C for a note, N / P) in
    their own table, as the annotator and the expert read theirs; it listed only the review dock's keys, which do
    nothing in the coder's window (and all three tables made the dialog 797 px tall on a 768 px screen)."""
    app = window("eve", "expert")
    canvas = app.viewer.window._qt_viewer.canvas.native
    canvas.setFocus()
    qtbot.keyClick(canvas, Qt.Key_F1)
    dialog = app._help
    qtbot.waitUntil(dialog.isVisible, timeout=5000)
    text = dialog.label.text()
    coding = text.split("<h4>Failures dock, coding</h4>")[1].split("</table>")[0]
    assert "<b>1-7 / 1-5</b>" in coding and "steps / pairs (saved at once, then the next run to code)" in coding
    assert "<b>C</b>" in coding and "type a note (Enter or Esc: back to the keys" in coding
    assert "<b>N / P</b></td><td>&nbsp;&nbsp;next / previous run" in coding
    assert "Review dock" not in text and "quality overlay on / off" in text  # the window's keys, not the reviewer's
    assert "<b>P (Shift+P while reviewing / coding)</b>" in text  # P is the previous run here: the pair on Shift+P
    qtbot.wait(100)
    dialog.grab().save(str(shots / "keys_dialog_coder.png"))
    assert dialog.height() < 768 - 100  # inside a 768 px screen with its title bar and the panel's room
    dialog.reject()


def test_the_check_mode_is_blind_to_the_llm_codes(window, qtbot, set_path, store_path, shots):
    from reviewer.errors import ReviewError
    from reviewer.failures.check import check_view, draw_check
    from reviewer.failures.coding import FailureCode, insert_code
    from reviewer.failures.sample import load_set
    from reviewer.store import Store

    doc = load_set(set_path)
    with Store(store_path) as store:
        for r in doc["runs"]:
            code = "analysis" if r["part"] == "steps" else "reports_break"
            entry = FailureCode(code, "llm", LLM_MODEL, quote=LLM_QUOTE, uncertain=r["id"] == "s002")
            insert_code(store, doc["id"], r, entry, event_user="mia")
        drawn = draw_check(store, doc, "steps", seed=1, user="mia", per_code=1)
        with pytest.raises(ReviewError, match="not in the check sample"):
            outside = next(r["id"] for r in doc["runs"] if r["part"] == "steps" and r["id"] not in
                           {d["run"] for d in drawn})  # fmt: skip
            check_view(store, doc, outside, user="eve")
    # s002 (uncertain) and one per LLM code from the rest (all 'analysis'): 2 runs
    assert len(drawn) == 2 and "s002" in [d["run"] for d in drawn]
    app = window("eve", "expert")
    dock = app.failures
    dock.mode_combo.setCurrentIndex(dock.mode_combo.findData("check-steps"))
    assert [r["run"] for r in dock.rows] == [d["run"] for d in drawn]
    assert dock.progress.text() == "0 of 2 coded by you"
    for run in [d["run"] for d in drawn]:
        dock.show_run(run)
        shown = dock_text(dock)
        assert LLM_QUOTE not in shown and LLM_MODEL not in shown and "uncertain" not in shown
        assert "LLM" not in shown and "llm" not in json.dumps(dock.view)
    app.viewer.window.screenshot(str(shots / "failures_dock_check.png"), canvas_only=False)
    dock.show_run(drawn[0]["run"])
    press(qtbot, app, "5")
    assert dock.saved.text() == f"saved: Close call on {drawn[0]['run']}"
    assert dock.view["run"] == drawn[1]["run"]
    assert [(r[1], r[3]) for r in codes(store_path)] == [(drawn[0]["run"], "close_call")]


def test_a_save_that_fails_says_not_saved_and_keeps_the_run_and_note(window, qtbot, store_path, monkeypatch):
    monkeypatch.setenv("REVIEWER_DEMO_DIR", str(store_path.parent / "no-demo-site"))
    con = sqlite3.connect(store_path)
    con.execute("DELETE FROM sites")  # the site is not in this store: the evidence says so
    con.commit()
    con.close()
    app = window("ann", "annotator")  # an annotator may not code failure steps
    dock = app.failures
    press(qtbot, app, "2")
    assert dock.saved.text().startswith("NOT saved: 2 on s001: user ann is annotator: only expert may code")
    assert dock.view["run"] == "s001" and codes(store_path) == []
    assert "site 'demo-core-seed0' is not in this store" in dock.evidence_label.text()

    app2 = window("eve", "expert")
    con = sqlite3.connect(store_path)  # the store refuses the write (as a full disk would)
    con.execute("CREATE TRIGGER full BEFORE INSERT ON failure_codes BEGIN SELECT RAISE(ABORT, 'disk is full'); END")
    con.commit()
    con.close()
    dock2 = app2.failures
    dock2.note.setText("kept after a failed save")
    press(qtbot, app2, "1")
    assert dock2.saved.text().startswith("NOT saved: 1 on s001:") and "disk is full" in dock2.saved.text()
    assert dock2.view["run"] == "s001" and dock2.note.text() == "kept after a failed save"
    assert codes(store_path) == [] and events(store_path, "failure_code") == []


def test_main_py_refuses_a_bad_set_before_a_window_opens(tmp_path, capsys):
    import main as launcher

    bad = tmp_path / "set.json"
    bad.write_text('{"format": 1}')
    assert launcher.main(["--failures", str(bad), "--db", str(tmp_path / "db.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "set.json" in err and err.count("\n") == 1
