"""The Scoring dock's "Run models...": a model run as `reviewer run` in a process of its own (Inspect's anthropic
provider against a local stand-in of the Messages API, local sandbox), progress while it runs, then the runs scored
by the dock; screenshots at 1600x1000 and 1366x768 in progress and done."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from runs_agents import KEY, MessagesStandIn, honest_steps, make_bank  # noqa: E402

pytestmark = pytest.mark.gui

SIZES = ((1600, 1000), (1366, 768))


def _shoot(window, dialog, shots: Path, name: str) -> None:
    from qtpy.QtWidgets import QApplication

    for w, h in SIZES:
        window.resize(w, h)
        window.move(0, 0)
        dialog.move(40, 60)  # over the viewer, beside the Scoring dock
        QApplication.processEvents()
        QApplication.primaryScreen().grabWindow(0, 0, 0, w, h).save(str(shots / f"run_models_{name}_{w}x{h}.png"))


def test_run_models_runs_in_its_own_process_then_scores(qtbot, tmp_path, shots, monkeypatch):
    from qtpy.QtCore import Qt
    from qtpy.QtWidgets import QDockWidget, QLabel, QMainWindow

    from reviewer.app.scoring_panel import ScoringPanel
    from reviewer.record.site import load_site
    from tests.sites import make_site

    site = make_site(tmp_path / "site", "landsat_small")
    bank = make_bank(tmp_path / "bank", load_site(site).id)
    window = QMainWindow()
    window.setCentralWidget(QLabel("viewer"))
    panel = ScoringPanel()
    dock = QDockWidget("Scoring")
    dock.setWidget(panel)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    qtbot.addWidget(window)
    window.show()
    panel.bank_edit.setText(str(bank))
    dialog = panel.open_run_models()
    assert dialog.bank_edit.text() == str(bank)  # taken from the dock
    dialog.models_edit.setText("anthropic/claude-sonnet-4-6")
    for c in ("altered", "placebo"):
        dialog.condition_boxes[c].setChecked(False)
    dialog.sandbox_combo.setCurrentText("local")
    assert "runs on this machine as you" in dialog.sandbox_note.text()
    dialog.passes_spin.setValue(1)
    dialog.set_sites([str(site)])
    dialog.out_edit.setText(str(tmp_path / "runs"))
    stand_in = MessagesStandIn(lambda q, closed: honest_steps(q, closed, render="shell"))
    stand_in.hold_second = True
    with stand_in.serve() as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        assert dialog.start()
        assert not dialog.start_button.isEnabled() and dialog.cancel_button.isEnabled()
        qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=90000)  # the first sample ended
        assert "anthropic/claude-sonnet-4-6: " in dialog.message.text()
        _shoot(window, dialog, shots, "in_progress")
        stand_in.release.set()
        with qtbot.waitSignal(panel.finished, timeout=120000):
            pass
    assert dialog.progress.value() == dialog.progress.maximum() == 4  # 2 questions x (record, closed book)
    runs = tmp_path / "runs" / "anthropic_claude-sonnet-4-6" / "runs.jsonl"
    assert panel.run_files == [str(runs)] and (tmp_path / "runs" / "report" / "scores.json").exists()
    assert panel.table.item(0, 0).text() == "anthropic/claude-sonnet-4-6"
    assert panel.table.item(0, 1).text() == "100.0"  # both questions right with the record
    _shoot(window, dialog, shots, "done")


def test_run_models_refuses_an_output_folder_holding_someone_elses_file(qtbot, tmp_path):
    """The one rule for output folders (reviewer.fileio): OUT may hold the runs' folders and the report, nothing
    else; a notes.txt there is named in the dialog's message and no run starts (nothing is created)."""
    from reviewer.app.scoring_panel import ScoringPanel

    panel = ScoringPanel()
    qtbot.addWidget(panel)
    dialog = panel.open_run_models()
    dialog.bank_edit.setText(str(tmp_path / "bank"))
    dialog.models_edit.setText("anthropic/claude-sonnet-4-6")
    out = tmp_path / "runs"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "report").mkdir()  # its own earlier report: not someone else's
    dialog.out_edit.setText(str(out))
    assert not dialog.start()
    text = dialog.message.text().replace("\u200b", "")
    assert "holds other files (notes.txt)" in text and str(out) in text and dialog.start_button.isEnabled()
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "report"]
    # the refusal's lines under Start take room of their own: every wrapped line keeps its height (the sandbox
    # note's two lines had been squeezed into one row's height, cut at their top and bottom)
    labels = (dialog.sandbox_note, dialog.message)
    qtbot.waitUntil(lambda: all(lb.height() >= lb.heightForWidth(lb.width()) > 0 for lb in labels), timeout=3000)
