"""Scoring panel: pick a bank, run files and an output folder, score in the background, show the results.

No scoring logic lives here: the worker thread calls reviewer.scoring.api.score, the same function as
`reviewer score`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from qtpy.QtCore import QEvent, Qt, Signal
from qtpy.QtGui import QPixmap
from qtpy.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.job_model import JobModel, JobTexts
from reviewer.app.qt_jobs import JobBar, ThreadJob, cancel_job
from reviewer.app.qt_rows import hrow
from reviewer.app.qt_style import compact
from reviewer.scoring import BOOTSTRAP_RESAMPLES

logger = logging.getLogger(__name__)


class ScoringPanel(QWidget):
    """Dockable widget that launches a scoring run and shows its tables and the pass^k figure."""

    finished = Signal(object)  # scores dict, or None when cancelled or failed

    def __init__(self, viewer: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.viewer = viewer
        self.worker: ThreadJob | None = None
        self.job = JobModel(JobTexts(starting="Scoring…", cancelled="Cancelled; nothing new was shown."))
        self.scores: dict[str, Any] | None = None
        self.run_files: list[str] = []

        self.bank_edit = QLineEdit()
        self.bank_edit.setPlaceholderText("bank folder with manifest.json")
        bank_btn = QPushButton("Bank…")
        bank_btn.clicked.connect(self._pick_bank)
        self.runs_label = QLabel("no run files")
        runs_btn = QPushButton("Run files…")
        runs_btn.clicked.connect(self._pick_runs)
        models_btn = QPushButton("Run models…")  # reviewer run through Inspect, then scored here (qt_run_models)
        models_btn.clicked.connect(self.open_run_models)
        self.out_edit = QLineEdit()
        self.out_edit.setPlaceholderText("report folder")
        out_btn = QPushButton("Output…")
        out_btn.clicked.connect(self._pick_out)
        self.passes_spin = QSpinBox()
        self.passes_spin.setRange(1, 20)
        self.passes_spin.setValue(3)
        self.bootstrap_spin = QSpinBox()
        self.bootstrap_spin.setRange(0, 1_000_000)
        self.bootstrap_spin.setSingleStep(1000)
        self.bootstrap_spin.setValue(BOOTSTRAP_RESAMPLES)
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(0, 2**31 - 1)
        self.draft_check = QCheckBox("score a draft (bank not frozen)")

        for spin, widest in ((self.passes_spin, "20"), (self.bootstrap_spin, "100000"), (self.seed_spin, "99999")):
            compact(spin, widest)
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)  # a narrow dock puts the labels above their fields
        form.addRow("Bank", hrow(self.bank_edit, bank_btn))
        form.addRow("Runs", hrow(self.runs_label, runs_btn, models_btn))
        form.addRow("Report", hrow(self.out_edit, out_btn))
        form.addRow("Passes / resamples / seed", hrow(self.passes_spin, self.bootstrap_spin, self.seed_spin))
        form.addRow("", self.draft_check)

        self.bar_row = JobBar(self.job, wrap_paths=True)
        self.run_button, self.cancel_button = self.bar_row.run_button, self.bar_row.cancel_button
        self.progress, self.message = self.bar_row.progress, self.bar_row.message
        self.run_button.clicked.connect(self._on_run_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)

        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.pairs_table = QTableWidget(0, 0)
        self.pairs_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for table in (self.table, self.pairs_table):
            table.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
        self.figure = QLabel("")
        # the figure scrolls in its tab: as a bare label its 700 px pixmap widened the dock and the window
        self.figure_area = QScrollArea()
        self.figure_area.setWidget(self.figure)
        self.figure_area.setWidgetResizable(True)
        self.figure_area.setMinimumHeight(200)
        self.figure_area.installEventFilter(self)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.table, "Models")
        self.tabs.addTab(self.pairs_table, "Pairs")
        self.tabs.addTab(self.figure_area, "pass^k")

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.bar_row)
        layout.addWidget(self.tabs, stretch=1)

    # ------------------------------------------------------------------ pickers

    def set_inputs(self, bank: str | Path, runs: list[str | Path], out: str | Path) -> None:
        """Fill the pickers programmatically (tests, drag and drop, the main window)."""
        self.bank_edit.setText(str(bank))
        self.run_files = [str(r) for r in runs]
        self.runs_label.setText(", ".join(Path(r).name for r in self.run_files) or "no run files")
        self.out_edit.setText(str(out))

    def open_run_models(self) -> Any:
        from reviewer.app.qt_run_models import RunModelsDialog

        self.run_models = RunModelsDialog(self, self)
        self.run_models.show()
        return self.run_models

    def _pick_bank(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Bank folder")
        if folder:
            self.bank_edit.setText(folder)

    def _pick_runs(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(self, "Run files", "", "JSON Lines (*.jsonl);;All files (*)")
        if files:
            self.set_inputs(self.bank_edit.text(), files, self.out_edit.text())

    def _pick_out(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Report folder")
        if folder:
            self.out_edit.setText(folder)

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        return self.job.running

    def _on_run_clicked(self) -> None:
        if self.running:
            return
        bank, out = self.bank_edit.text().strip(), self.out_edit.text().strip()
        if not bank or not self.run_files or not out:
            self.job.say("Pick a bank folder, at least one run file and a report folder.", error=True)
            return
        from reviewer.scoring.options import ScoringOptions

        kwargs = {
            "bank_dir": bank,
            "run_paths": list(self.run_files),
            "out_dir": out,
            "options": ScoringOptions(
                passes=self.passes_spin.value(),
                bootstrap=self.bootstrap_spin.value(),
                seed=self.seed_spin.value(),
                draft=self.draft_check.isChecked(),
            ),
        }
        from reviewer.scoring.api import score  # scipy and the metrics load when a score runs, not at launch

        self.worker = ThreadJob(score, kwargs, "scoring", self)
        self.worker.progressed.connect(self._on_progress)
        self.worker.succeeded.connect(self._on_succeeded)
        self.worker.failed.connect(self._on_failed)
        self.worker.cancelled.connect(self._on_cancelled)
        # `finished` is announced only once the thread has returned, so nothing can delete a running thread
        self.worker.finished.connect(self._on_thread_finished)
        self._outcome = None
        self.job.begin()
        self.worker.start()

    def _on_cancel_clicked(self) -> None:
        if self.worker is not None:
            cancel_job(self.job, self.worker)

    def _on_progress(self, fraction: float, message: str) -> None:
        self.job.report_fraction(fraction, message)

    def _on_failed(self, message: str) -> None:
        self.job.fail(message)

    def _on_cancelled(self) -> None:
        self.job.cancelled()

    def _on_thread_finished(self) -> None:
        self.finished.emit(self._outcome)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        """Closing the panel cancels a running score and waits for its thread."""
        if self.worker is not None:
            self.worker.stop()
        super().closeEvent(event)

    def _on_succeeded(self, scores: dict[str, Any]) -> None:
        self.scores = scores
        pr = scores["problems"]
        self.job.finish(
            f"Scored {len(scores['models'])} models on {scores['bank']['name']} {scores['bank']['version']}: "
            f"{len(pr['missing_passes'])} missing passes, {len(pr['invalid_answers'])} invalid answers, "
            f"{len(pr['errors'])} harness errors (counted wrong). Report: {self.out_edit.text()}"
        )
        self._fill_tables(scores)
        png = Path(self.out_edit.text()) / "figures" / "pass3.png"
        self._figure_pixmap = QPixmap(str(png))
        self._show_figure()
        self._outcome = scores

    def _show_figure(self) -> None:
        """The pass^k figure as wide as its tab (at most 700 px, never wider than the PNG)."""
        pixmap = getattr(self, "_figure_pixmap", None)
        if pixmap is None or pixmap.isNull():
            return
        room = self.figure_area.width() - self.figure_area.verticalScrollBar().sizeHint().width() - 4
        width = max(200, min(700, pixmap.width(), room))
        self.figure.setPixmap(pixmap.scaledToWidth(width, Qt.SmoothTransformation))

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.figure_area and event.type() in (QEvent.Resize, QEvent.Show):
            self._show_figure()  # the tab's width is known once it is shown
        return super().eventFilter(obj, event)

    def _fill_tables(self, scores: dict[str, Any]) -> None:
        k = scores["passes"]
        header = [
            "Model",
            f"pass^{k}",
            "95% interval",
            "One run",
            "Computable",
            "Recognition",
            "Insufficient",
            "AUROC",
            "Moved",
            "Held",
            "Beyond",
        ]
        rows = []
        labels = {"majority_class": "Majority class", "always_no_change": "Always no change"}
        for name, m in [*scores["models"].items(), *((labels.get(b, b), v) for b, v in scores["baselines"].items())]:
            r = m["record"]
            ci = r["pass3_ci"]
            ins = (m.get("pairs") or {}).get("instrument") or {}
            rows.append(
                [
                    name,
                    _f(r["pass3"]),
                    f"{ci[0]:.1f}–{ci[1]:.1f}" if ci else "–",
                    _f(r["one_run"]),
                    _f(r["by_class"].get("computable", {}).get("pass3")),
                    _f(r["by_class"].get("recognition", {}).get("pass3")),
                    _f(m.get("insufficient", {}).get("pass3")),
                    _f((m.get("confidence") or {}).get("auroc"), 2),
                    _frac(ins.get("moved"), ins.get("right")),
                    str(ins.get("held", "–")),
                    str(ins.get("beyond", "–")),
                ]
            )
        _fill(self.table, header, rows)
        prow = [
            [
                pid,
                p["kind"],
                f"{p['satellite']} {p['variable']}",
                str(p["right"]),
                str(p["moved"]),
                str(p["held"]),
                str(p["beyond"]) if p["kind"] == "instrument" else "–",
            ]
            for pid, p in scores["pairs"].items()
        ]
        _fill(self.pairs_table, ["Pair", "Kind", "Altered", "Right", "Moved", "Held", "Beyond"], prow)


def _f(v: float | None, digits: int = 1) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _frac(a: int | None, b: int | None) -> str:
    return "–" if a is None or b is None else f"{a}/{b}"


def _fill(table: QTableWidget, header: list[str], rows: list[list[str]]) -> None:
    table.clear()
    table.setColumnCount(len(header))
    table.setHorizontalHeaderLabels(header)
    table.setRowCount(len(rows))
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            table.setItem(i, j, QTableWidgetItem(cell))
    table.resizeColumnsToContents()
