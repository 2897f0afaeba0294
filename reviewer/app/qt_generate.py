"""Generate panel (maintainer view): candidate questions for many sites, a progress bar per site and overall.

No generation logic lives here: the worker thread calls reviewer.bank.many.generate_many, the same function as
`reviewer generate SITE [SITE ...] --out DIR [--scheduler ADDRESS | --workers N] --memory SIZE`. Cancel stops
the running sites at their next scene; a second Run resumes (finished sites are not recomputed).

Mount it in a napari window with `viewer.window.add_dock_widget(GeneratePanel(), name="Generate")`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from qtpy.QtCore import Signal
from qtpy.QtWidgets import (
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHeaderView,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.job_model import JobModel, JobTexts
from reviewer.app.qt_jobs import JobBar, ThreadJob, cancel_job
from reviewer.app.qt_rows import hrow

logger = logging.getLogger(__name__)


class GeneratePanel(QWidget):
    """Sites, an output folder and where to run (local workers or a dask scheduler); Run, Cancel; one row per
    site with its progress bar and outcome, and an overall bar."""

    finished = Signal(object)  # ManyReport, or None when the run failed as a whole

    def __init__(
        self, sites: list[str | Path] | None = None, out_dir: str | Path | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.worker: ThreadJob | None = None
        self.job = JobModel(JobTexts(cancelling="Cancelling: running sites stop at their next scene…"))
        self.report: Any = None
        self.sites: list[str] = []
        self._rows: dict[str, int] = {}

        self.out_edit = QLineEdit(str(out_dir) if out_dir else "")
        self.out_edit.setPlaceholderText("folder of the banks (one folder per site)")
        out_btn = QPushButton("Output…")
        out_btn.clicked.connect(self._pick_out)
        add_btn = QPushButton("Add sites…")
        add_btn.clicked.connect(self._pick_site)
        clear_btn = QPushButton("Clear")
        clear_btn.clicked.connect(lambda: self.set_sites([]))
        self.workers_spin = QSpinBox()
        self.workers_spin.setRange(0, 64)
        self.workers_spin.setValue(2)
        self.workers_spin.setToolTip("local dask worker processes (0: one site after another in the app)")
        self.scheduler_edit = QLineEdit()
        self.scheduler_edit.setPlaceholderText("dask scheduler address (optional, e.g. tcp://host:8786)")
        self.memory_spin = QDoubleSpinBox()
        self.memory_spin.setRange(0.1, 1024.0)
        self.memory_spin.setDecimals(1)
        self.memory_spin.setValue(2.0)
        self.memory_spin.setSuffix(" GB")
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(0, 2**31 - 1)

        form = QFormLayout()
        form.addRow("Sites", hrow(add_btn, clear_btn))
        form.addRow("Output", hrow(self.out_edit, out_btn))
        form.addRow("Workers / scheduler", hrow(self.workers_spin, self.scheduler_edit))
        form.addRow("Memory per site / seed", hrow(self.memory_spin, self.seed_spin))

        self.table = QTableWidget(0, 3)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
        self.table.setHorizontalHeaderLabels(["Site", "Progress", "Outcome"])
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.bar_row = JobBar(self.job, progress_format="all sites %p%")
        self.run_button, self.cancel_button = self.bar_row.run_button, self.bar_row.cancel_button
        self.overall, self.message = self.bar_row.progress, self.bar_row.message
        self.run_button.clicked.connect(self._on_run_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.table)
        layout.addWidget(self.bar_row)
        self.set_sites(sites or [])

    # ------------------------------------------------------------------ inputs

    def set_sites(self, sites: list[str | Path]) -> None:
        """The site folders to generate, one table row each (a site's output folder is its folder's name)."""
        self.sites = [str(s) for s in sites]
        self.table.setRowCount(0)
        self._rows = {}
        for s in self.sites:
            r = self.table.rowCount()
            self.table.insertRow(r)
            name = Path(s).name
            self.table.setItem(r, 0, QTableWidgetItem(name))
            bar = QProgressBar()
            bar.setRange(0, 1000)
            self.table.setCellWidget(r, 1, bar)
            self.table.setItem(r, 2, QTableWidgetItem(""))
            self._rows[name] = r
        self.job.set_ready(bool(self.sites))

    def bar(self, name: str) -> QProgressBar:
        return self.table.cellWidget(self._rows[name], 1)

    def outcome(self, name: str) -> str:
        return self.table.item(self._rows[name], 2).text()

    def _pick_site(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Site folder")
        if folder:
            self.set_sites([*self.sites, folder])

    def _pick_out(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Output folder")
        if folder:
            self.out_edit.setText(folder)

    # ------------------------------------------------------------------ run

    @property
    def running(self) -> bool:
        return self.job.running

    def _on_run_clicked(self) -> None:
        if self.running:
            return
        if not self.sites or not self.out_edit.text().strip():
            self.job.say("Add sites and choose an output folder first.", error=True)
            return
        from reviewer.bank.options import GenerationOptions

        kwargs = {
            "site_dirs": list(self.sites),
            "out_dir": self.out_edit.text().strip(),
            "scheduler": self.scheduler_edit.text().strip() or None,
            "workers": None if self.scheduler_edit.text().strip() else self.workers_spin.value(),
            "options": GenerationOptions(memory=int(self.memory_spin.value() * 1024**3), seed=self.seed_spin.value()),
        }
        from reviewer.bank.many import generate_many

        self.set_sites(self.sites)  # fresh bars
        self.job.begin()
        self.worker = ThreadJob(generate_many, kwargs, "generation", self)
        self.worker.progressed.connect(self._on_progress)
        self.worker.succeeded.connect(self._on_done)
        self.worker.failed.connect(self._on_failed)
        self.worker.start()

    def _on_cancel_clicked(self) -> None:
        if self.worker is not None:
            cancel_job(self.job, self.worker)

    def _on_progress(self, fractions: dict[str, float], message: str) -> None:
        for name, f in fractions.items():
            if name in self._rows:
                self.bar(name).setValue(int(round(1000 * f)))
        overall = sum(fractions.values()) / len(fractions) if fractions else self.job.done / self.job.total
        self.job.report_fraction(overall, message)

    def _on_done(self, report: Any) -> None:
        self.report = report
        for s in report.sites:
            if s.name not in self._rows:
                continue
            text = {"done": "done", "skipped": "finished before", "cancelled": "cancelled"}.get(s.status, "")
            if s.status == "failed":
                text = f"failed: {s.error}"
            elif s.status == "done" and s.peak_memory:
                text = f"done, peak {s.peak_memory / 1024**3:.2f} GB"
            self.table.item(self._rows[s.name], 2).setText(text)
            if s.status in ("done", "skipped"):
                self.bar(s.name).setValue(1000)
            else:  # a failed or cancelled site's bar says so instead of showing a full bar
                self.bar(s.name).setFormat(s.status)
        complete = sum(1 for s in report.sites if s.status in ("done", "skipped"))
        self.job.finish(report.lines()[-1], done=round(1000 * complete / max(1, len(report.sites))), total=1000)
        self.finished.emit(report)

    def _on_failed(self, text: str) -> None:
        self.job.fail(text)
        self.finished.emit(None)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        """Closing the panel stops the running sites at their next scene and waits for the thread."""
        if self.worker is not None:
            self.worker.stop()
        super().closeEvent(event)
