"""The Scoring panel runs a score in the background, shows tables and the figure, cancels, and reports errors."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_scoring_metrics import all_runs, make_bank  # noqa: E402

from reviewer.app.scoring_panel import ScoringPanel  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture
def inputs(tmp_path):
    bank = make_bank(tmp_path / "bank")
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    return bank, runs, tmp_path / "report"


def test_panel_scores_in_the_background_and_shows_results(qtbot, inputs, tmp_path):
    bank, runs, out = inputs
    panel = ScoringPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 650)
    panel.show()
    panel.set_inputs(bank, [runs], out)
    panel.bootstrap_spin.setValue(500)
    with qtbot.waitSignal(panel.finished, timeout=60000) as blocker:
        panel._on_run_clicked()
        assert panel.running and not panel.run_button.isEnabled() and panel.cancel_button.isEnabled()
    assert blocker.args[0] is not None
    assert panel.progress.value() == 1000
    assert panel.table.rowCount() == 5  # A, B, C and two baselines
    assert panel.table.item(0, 0).text() == "A" and panel.table.item(0, 1).text() == "100.0"
    assert panel.table.item(1, 1).text() == "50.0"
    assert panel.pairs_table.rowCount() == 4
    panel.tabs.setCurrentIndex(2)
    assert not panel.figure.pixmap().isNull()
    assert "Scored 3 models" in panel.message.text() and (out / "report.html").exists()
    panel.tabs.setCurrentIndex(0)
    shot = Path(tmp_path) / "scoring_panel.png"
    panel.grab().save(str(shot))
    assert shot.stat().st_size > 0


def test_panel_cancel(qtbot, inputs):
    bank, runs, out = inputs
    panel = ScoringPanel()
    qtbot.addWidget(panel)
    panel.set_inputs(bank, [runs], out)
    panel.bootstrap_spin.setValue(1_000_000)  # long enough to cancel mid-bootstrap
    with qtbot.waitSignal(panel.finished, timeout=60000) as blocker:
        panel._on_run_clicked()
        qtbot.waitUntil(lambda: panel.progress.value() > 150, timeout=30000)
        panel._on_cancel_clicked()
    assert blocker.args[0] is None
    assert panel.message.text().startswith("Cancelled") and panel.run_button.isEnabled()
    assert not (out / "scores.json").exists()


def test_panel_shows_an_error_once_without_traceback(qtbot, inputs):
    bank, runs, out = inputs
    (bank / "sites.jsonl").write_text((bank / "sites.jsonl").read_text().replace("Site a", "Site X"))
    panel = ScoringPanel()
    qtbot.addWidget(panel)
    panel.set_inputs(bank, [runs], out)
    with qtbot.waitSignal(panel.finished, timeout=30000):
        panel._on_run_clicked()
    text = panel.message.text()
    assert "sha256 does not match" in text and "Traceback" not in text and "sites.jsonl" in text
    assert panel.table.rowCount() == 0


def test_panel_asks_for_missing_inputs(qtbot):
    panel = ScoringPanel()
    qtbot.addWidget(panel)
    panel._on_run_clicked()
    assert panel.worker is None and "Pick a bank folder" in panel.message.text()


def test_panel_refuses_a_report_folder_holding_someone_elses_file(qtbot, inputs):
    """The one rule for output folders (reviewer.fileio) in the panel: a notes.txt in the chosen report folder is
    named in one line, kept, and no report is written beside it; the panel's own earlier report is written over."""
    from PySide6.QtCore import Qt

    bank, runs, out = inputs
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    panel = ScoringPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.set_inputs(bank, [runs], out)
    with qtbot.waitSignal(panel.finished, timeout=30000) as blocker:
        qtbot.mouseClick(panel.run_button, Qt.LeftButton)
    text = panel.message.text().replace("\u200b", "")  # the panel lets a long path break after each '/'
    assert blocker.args[0] is None and "Traceback" not in text and "\n" not in text
    assert str(out) in text and "holds other files (notes.txt)" in text and "nothing was written" in text
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"] and (out / "notes.txt").read_text() == "mine"
    (out / "notes.txt").unlink()
    for _ in range(2):  # into a new folder, then over its own report
        with qtbot.waitSignal(panel.finished, timeout=60000) as blocker:
            qtbot.mouseClick(panel.run_button, Qt.LeftButton)
        assert blocker.args[0] is not None and "Scored 3 models" in panel.message.text()
    assert (out / "report.html").is_file()
