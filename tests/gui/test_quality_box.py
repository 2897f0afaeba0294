"""The maintainer's annotator-quality table and plot (reviewer.app.qt_quality) under Xvfb, on a small store of
known decisions: Compute by the keyboard, the figures of the core in the table, sorting by a column, the plot.
Screenshots go to /tmp/reviewer-gui-shots (REVIEWER_SHOTS)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from qtpy.QtCore import QPoint, Qt

pytestmark = pytest.mark.gui

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))


def _store(tmp_path: Path) -> Path:
    """10 items, ann / bob / cat on each: ann and bob always agree, cat flags 4 items they accepted."""
    from test_review_workflow import _store as make

    store = make(tmp_path, n=10, annotators=("ann", "bob", "cat"))
    from reviewer.review import api

    api.assign(store, "rb", annotators=["ann", "bob", "cat"], k=3, seed=1, user="mia")
    for i in range(10):
        qid = f"q{i:03d}"
        bad = i in (0, 1)
        for user in ("ann", "bob", "cat"):
            flag = bad if user != "cat" else (bad or i in (2, 3, 4, 5))
            api.decide(store, qid, api.Decision("flag" if flag else "accept", reasons=["wrong_reference"] if flag else None, seconds=5.0 + i), user=user)  # fmt: skip
    store.close()
    return tmp_path / "review.sqlite"


def test_quality_table_and_plot(qtbot, tmp_path, shots, monkeypatch):
    import dataclasses

    import reviewer.review.quality as quality
    from reviewer.app.qt_quality import QualityBox

    box = QualityBox(_store(tmp_path), "mia")
    qtbot.addWidget(box)
    box.resize(900, 520)
    box.show()
    box.set_bank("rb")
    box.compute.setFocus()
    qtbot.keyClick(box.compute, Qt.Key_Space)
    qtbot.waitUntil(lambda: box.report is not None, timeout=120000)
    t = box.table
    names = [t.item(r, 0).text() for r in range(t.rowCount())]
    assert sorted(names) == ["ann", "bob", "cat"]
    rel = {t.item(r, 0).text(): float(t.item(r, 2).text()) for r in range(t.rowCount())}
    assert rel["cat"] < rel["ann"] and rel["cat"] < rel["bob"]  # the one who disagrees is the least reliable
    # median seconds, in the gold-and-pace table, as `reviewer review status` says them: each annotator took 5 + i s
    # on item i, the median of 5..14 s is 9.5 s (it read "9.500", and 95 s "95.000": a thousand separator to many)
    assert [box.pace.item(r, 3).text() for r in range(3)] == ["9.5"] * 3
    head = t.horizontalHeader()

    def headers() -> list[str]:
        return [t.horizontalHeaderItem(j).text() for j in range(t.columnCount())]

    def click_header(j: int) -> None:
        x = head.sectionViewportPosition(j) + head.sectionSize(j) // 2
        qtbot.mouseClick(head.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, head.height() // 2))

    click_header(2)  # a click on the reliability header: lowest first, said by the arrow after its header
    assert t.item(0, 0).text() == "cat"
    assert headers() == ["annotator", "done", "reliab. \u25b2", "sens.", "spec.", "outcome"]
    click_header(2)  # again: highest first
    assert t.item(2, 0).text() == "cat"
    assert headers()[2] == "reliab. \u25bc"
    assert head.sectionSize(2) >= head.sectionSizeHint(2)  # the header with its arrow whole
    assert "3 annotators" in box.message.text()
    assert len(box.plot.listDataItems()) == 3  # one point per annotator
    # under the table, the line the CLI prints on whether the fit converged (these 10 items settle within 100 steps)
    assert box.fit_note.text().startswith("dawid_skene: converged (the last of its 100 EM steps"), box.fit_note.text()
    qtbot.wait(200)
    box.grab().save(str(shots / "30_quality_box.png"))
    # a fit cut at 2 steps has not converged: the box says so, as the CLI does
    two = dataclasses.replace(quality.quality_settings(), ds_iterations=2)
    monkeypatch.setattr(quality, "quality_settings", lambda: two)
    box.report = None
    qtbot.keyClick(box.compute, Qt.Key_Space)
    qtbot.waitUntil(lambda: box.report is not None, timeout=120000)
    assert box.fit_note.text().startswith("dawid_skene: stopped at its 2-step limit before converging")
    assert "may still move" in box.fit_note.text()
    box.resize(1366, 768)
    qtbot.wait(200)
    box.grab().save(str(shots / "30_quality_box_not_converged_1366x768.png"))


def test_the_tables_fit_the_dock_before_compute(qtbot, tmp_path):
    """Before Compute, at the width the review dock gives the box at 1366 x 768 (415 px), the two tables show their
    headers whole with no sideways scroll bar, as they do once filled (empty, each column kept Qt's default 100 px:
    six columns of 600 px behind a scroll bar, "median s" cut at the edge, under a maintainer's first look)."""
    from reviewer.app.qt_quality import QualityBox

    box = QualityBox(_store(tmp_path), "mia")
    qtbot.addWidget(box)
    box.resize(415, 700)
    box.show()
    box.set_bank("rb")
    qtbot.wait(100)
    for table in (box.table, box.pace):
        assert table.rowCount() == 0
        assert not table.horizontalScrollBar().isVisible(), [table.columnWidth(j) for j in range(table.columnCount())]
        head = table.horizontalHeader()
        assert all(head.sectionSize(j) >= head.sectionSizeHint(j) for j in range(table.columnCount()))
