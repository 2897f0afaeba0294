"""The Generate panel runs generation over several sites in the background with a bar per site and overall,
reports a failed site beside the finished ones, resumes without recomputing, and cancels."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reviewer.app.qt_generate import GeneratePanel
from tests.sites import make_site

pytestmark = [pytest.mark.gui, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

SHOTS = Path(os.environ.get("REVIEWER_SHOTS", "/tmp/reviewer-gui-shots"))


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    root = tmp_path_factory.mktemp("gen-panel")
    return [make_site(root / f"site-{i}", "landsat_small", seed=i) for i in range(2)]


def test_panel_generates_sites_with_a_bar_each_and_resumes(qtbot, sites, tmp_path):
    missing = tmp_path / "no-such-site"
    panel = GeneratePanel([*sites, missing], tmp_path / "banks")
    qtbot.addWidget(panel)
    panel.resize(760, 420)
    panel.show()
    panel.workers_spin.setValue(0)  # in the app's process: no cluster start-up in a GUI test
    seen = []
    panel.worker = None
    with qtbot.waitSignal(panel.finished, timeout=120000) as blocker:
        panel._on_run_clicked()
        assert panel.running and not panel.run_button.isEnabled() and panel.cancel_button.isEnabled()
        panel.worker.progressed.connect(lambda f, m: seen.append(dict(f)))
    report = blocker.args[0]
    assert [s.status for s in report.sites] == ["done", "done", "failed"]
    assert any(0 < f.get("site-0", 0) < 1 for f in seen)  # the site's bar moved while it ran
    for s in sites:
        assert panel.bar(s.name).value() == 1000 and panel.outcome(s.name).startswith("done, peak")
        assert (tmp_path / "banks" / s.name / "questions.jsonl").is_file()
    assert panel.outcome("no-such-site").startswith("failed:") and "not a folder" in panel.outcome("no-such-site")
    assert panel.bar("no-such-site").text() == "failed"
    assert panel.overall.value() == 667  # two of three sites complete
    assert "2 generated" in panel.message.text() and "1 failed" in panel.message.text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    panel.grab().save(str(SHOTS / "generate_panel.png"))
    with qtbot.waitSignal(panel.finished, timeout=60000) as again:
        panel._on_run_clicked()
    assert [s.status for s in again.args[0].sites] == ["skipped", "skipped", "failed"]
    assert panel.outcome("site-0") == "finished before" and panel.bar("site-0").value() == 1000


def test_panel_cancel_leaves_no_half_written_site(qtbot, sites, tmp_path):
    panel = GeneratePanel(sites, tmp_path / "banks")
    qtbot.addWidget(panel)
    panel.workers_spin.setValue(0)
    with qtbot.waitSignal(panel.finished, timeout=60000) as blocker:
        panel._on_run_clicked()
        panel._on_cancel_clicked()
    statuses = [s.status for s in blocker.args[0].sites]
    assert statuses[-1] == "cancelled" and set(statuses) <= {"done", "cancelled"}
    assert panel.outcome("site-1") == "cancelled" and panel.run_button.isEnabled()
    written = {p.name for p in (tmp_path / "banks").iterdir()}
    assert written == {s.name for s, st in zip(sites, statuses, strict=True) if st == "done"}


def test_the_reviewer_menu_mounts_the_generate_dock_on_the_open_site(opened, qtbot):
    """Reviewer > Generate questions… docks the panel in the window with the open site listed, once."""
    app = opened
    assert app.generate_action.isVisible()
    app.generate_action.trigger()
    panel = app.generate_panel
    assert "Generate" in app.docks and app.docks["Generate"].isVisible()
    assert panel.sites == [str(app.session.index.site.dir)]
    app.generate_action.trigger()  # a second time raises the same dock
    assert app.generate_panel is panel


def test_panel_refuses_a_banks_folder_holding_someone_elses_file(qtbot, tmp_path):
    """The one rule for output folders (reviewer.fileio): the banks' folder may hold the sites' folders and nothing
    else; a notes.txt there is named in one line before any site runs, kept, and no site folder is made."""
    from qtpy.QtCore import Qt

    out = tmp_path / "banks"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    panel = GeneratePanel([tmp_path / "site-a", tmp_path / "site-b"], out)  # never read: refused before
    qtbot.addWidget(panel)
    panel.show()
    panel.workers_spin.setValue(0)
    with qtbot.waitSignal(panel.finished, timeout=30000):
        qtbot.mouseClick(panel.run_button, Qt.LeftButton)
    text = panel.message.text().replace("\u200b", "")
    assert "holds other files (notes.txt)" in text and str(out) in text and "Traceback" not in text
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"] and panel.run_button.isEnabled()
