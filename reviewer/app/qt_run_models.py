"""The Scoring dock's "Run models...": pick a bank, models, conditions, sandbox and record folders; each model runs
as `reviewer run ... --progress-json` in a process of its own (the CLI's own job, as the Drafts action runs
`reviewer draft`), one after the other, with progress and Cancel; then the Scoring dock scores the runs files and
shows the report. No run logic lives here: argv is built by `run_argv` and everything else is reviewer.runs.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qtpy.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.job_model import JobModel, JobTexts
from reviewer.app.qt_jobs import JobBar, ProcessJob, cancel_job
from reviewer.app.qt_rows import hrow

CONDITIONS = ("record", "closed_book", "altered", "placebo")
SANDBOXES = ("docker", "k8s", "local")
LOCAL_WARNING = "local: model-written code runs on this machine as you. For small trials with models you trust."


@dataclass
class RunRequest:
    """What the dialog asks for: one `reviewer run` per model, each into OUT/<model>."""

    bank: str
    models: list[str]
    out: str
    conditions: list[str] = field(default_factory=lambda: list(CONDITIONS))
    passes: int = 3
    sandbox: str = "docker"
    sites: list[str] = field(default_factory=list)
    altered: list[str] = field(default_factory=list)
    db: str | None = None

    def runs_dir(self, model: str) -> Path:
        return Path(self.out) / re.sub(r"[^A-Za-z0-9_.-]+", "_", model)

    def report_dir(self) -> Path:
        return Path(self.out) / "report"

    def folder_problem(self) -> str | None:
        """Why OUT cannot be written (None when it can): the one rule for output folders (reviewer.fileio), OUT
        holding only the runs' folders (these models', earlier runs) and the report."""
        from reviewer.errors import OutputError
        from reviewer.fileio import check_output_folder

        mine = {self.runs_dir(m).name for m in self.models} | {self.report_dir().name}
        try:  # a folder holding run.json (reviewer.runs.run.MARKER; that module loads Inspect) is an earlier run
            check_output_folder(self.out, ours=lambda e: e.name in mine or (e / "run.json").is_file())
        except OutputError as exc:
            return str(exc)
        return None


def run_argv(req: RunRequest, model: str) -> list[str]:
    """The command line of one model's run (this Python, the CLI module, --progress-json)."""
    argv = [sys.executable, "-m", "reviewer.cli"]
    if req.db:
        argv += ["--db", req.db]
    argv += ["run", req.bank, "--model", model, "--out", str(req.runs_dir(model))]
    argv += ["--conditions", ",".join(req.conditions), "--passes", str(req.passes), "--sandbox", req.sandbox]
    for d in req.sites:
        argv += ["--site", d]
    for d in req.altered:
        argv += ["--altered", d]
    return [*argv, "--progress-json"]


class RunModelsDialog(QDialog):
    """Runs the models one after the other; when all ended, hands the runs files to the Scoring dock."""

    def __init__(self, panel: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Run models")
        self.panel = panel
        self.request: RunRequest | None = None
        self.queue: list[str] = []
        self.job: ProcessJob | None = None
        self.model = JobModel(
            JobTexts(
                cancelling="cancelling: finished runs are kept, Start again continues them (Cancel again stops at once)",
                forcing="stopping at once: the runs in flight are lost",
            ),
            can_force=True,
        )
        self.finished_runs: list[str] = []
        self.problems: list[str] = []

        self.bank_edit = QLineEdit(panel.bank_edit.text() if panel is not None else "")
        self.bank_edit.setPlaceholderText("frozen bank folder")
        bank_btn = QPushButton("Bank…")
        bank_btn.clicked.connect(lambda: self._pick_dir(self.bank_edit, "Bank folder"))
        self.models_edit = QLineEdit()
        self.models_edit.setPlaceholderText("anthropic/claude-sonnet-4-6, openai/gpt-...")
        self.condition_boxes = {c: QCheckBox(c.replace("_", " ")) for c in CONDITIONS}
        for box in self.condition_boxes.values():
            box.setChecked(True)
        self.sandbox_combo = QComboBox()
        self.sandbox_combo.addItems(list(SANDBOXES))
        self.sandbox_combo.currentTextChanged.connect(self._on_sandbox)
        self.sandbox_note = QLabel("")
        self.sandbox_note.setWordWrap(True)
        self.passes_spin = QSpinBox()
        self.passes_spin.setRange(1, 20)
        self.passes_spin.setValue(3)
        self.sites: list[str] = []
        self.sites_label = QLabel("record folders: the store's scans")
        sites_btn = QPushButton("Site folders…")
        sites_btn.clicked.connect(self._pick_site)
        self.out_edit = QLineEdit()
        self.out_edit.setPlaceholderText("folder for the runs (one subfolder per model) and the report")
        out_btn = QPushButton("Output…")
        out_btn.clicked.connect(lambda: self._pick_dir(self.out_edit, "Runs folder"))

        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)
        form.addRow("Bank", hrow(self.bank_edit, bank_btn))
        form.addRow("Models", self.models_edit)
        form.addRow("Conditions", hrow(*self.condition_boxes.values()))
        form.addRow("Sandbox / passes", hrow(self.sandbox_combo, self.passes_spin))
        form.addRow("", self.sandbox_note)
        form.addRow("Records", hrow(self.sites_label, sites_btn))
        form.addRow("Output", hrow(self.out_edit, out_btn))

        self.bar_row = JobBar(self.model, run_text="Start", progress_format="%v / %m runs")
        self.start_button, self.cancel_button = self.bar_row.run_button, self.bar_row.cancel_button
        self.progress, self.message = self.bar_row.progress, self.bar_row.message
        self.start_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.bar_row)
        self.model.changed.connect(self._fit_height)  # (after the bar's own handler: its line is set by then)
        self._on_sandbox(self.sandbox_combo.currentText())

    def _fit_height(self) -> None:
        """Taller when what the dialog says needs it: a refusal's three lines under Start had squeezed the sandbox
        note's two lines into one row's height, cut at their top and bottom (a wrapped label's height depends on its
        width, which a dialog's minimum size does not follow)."""
        needed = self.layout().totalHeightForWidth(self.width())
        if needed > self.height():
            self.resize(self.width(), needed)

    # ------------------------------------------------------------------ inputs

    def _pick_dir(self, edit: QLineEdit, title: str) -> None:
        folder = QFileDialog.getExistingDirectory(self, title)
        if folder:
            edit.setText(folder)

    def _pick_site(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "A site record folder")
        if folder:
            self.set_sites([*self.sites, folder])

    def set_sites(self, folders: list[str]) -> None:
        self.sites = list(folders)
        self.sites_label.setText(", ".join(Path(f).name for f in self.sites) or "record folders: the store's scans")

    def _on_sandbox(self, name: str) -> None:
        notes = {
            "docker": "docker: the image of assets/runs/sandbox/Dockerfile, no network, 4 CPUs and 24 GB per run.",
            "k8s": "k8s: inspect-k8s-sandbox with assets/runs/sandbox/values.yaml.",
            "local": LOCAL_WARNING,
        }
        self.sandbox_note.setText(notes[name])

    def read_request(self) -> RunRequest | None:
        models = [m.strip() for m in self.models_edit.text().split(",") if m.strip()]
        conditions = [c for c, box in self.condition_boxes.items() if box.isChecked()]
        bank, out = self.bank_edit.text().strip(), self.out_edit.text().strip()
        missing = [
            n
            for n, v in (("a bank", bank), ("a model", models), ("a condition", conditions), ("an output folder", out))
            if not v
        ]
        if missing:
            self._say("Give " + ", ".join(missing) + ".", error=True)
            return None
        db = getattr(getattr(self.panel, "store", None), "path", None)
        return RunRequest(
            bank, models, out, conditions, self.passes_spin.value(), self.sandbox_combo.currentText(), self.sites,
            db=str(db) if db else None,
        )  # fmt: skip

    # ------------------------------------------------------------------ running

    def start(self) -> bool:
        if self.model.running:
            return False
        req = self.read_request()
        if req is None:
            return False
        problem = req.folder_problem()
        if problem:
            self._say(problem, error=True)
            return False
        self.request, self.queue, self.finished_runs, self.problems = req, list(req.models), [], []
        self.model.begin()
        self._next()
        return True

    def _next(self) -> None:
        req = self.request
        if not self.queue:
            self._all_ended()
            return
        model = self.queue.pop(0)
        self.current = model
        self.job = ProcessJob(run_argv(req, model), self)
        self.job.step.connect(self._on_step)
        self.job.ended.connect(self._on_ended)
        self.model.report(0, self.model.total, f"{model}: starting (Inspect logs in {req.runs_dir(model) / 'logs'})")
        self.job.start()

    def cancel(self) -> None:
        if self.job is None or not self.job.running():
            return
        self.queue.clear()
        cancel_job(self.model, self.job)

    def _on_step(self, done: int, total: int, message: str) -> None:
        self.model.report(done, total, f"{self.current}: {message}")

    def _on_ended(self, summary: Any, error: str) -> None:
        model = self.current
        if summary is not None and not summary.get("cancelled"):
            self.finished_runs.append(summary["runs_file"])
            c = summary["conditions"]
            errs = sum(v["errors"] for v in c.values())
            cost = "" if summary.get("cost_usd") is None else f", about ${summary['cost_usd']:.2f}"
            self._say(f"{model}: {sum(v['runs'] for v in c.values())} runs, {errs} with errors{cost}")
        else:
            self.problems.append(f"{model}: {error or 'cancelled'}")
            self.queue.clear()
        self._next()

    def _all_ended(self) -> None:
        req = self.request
        if self.problems or not self.finished_runs:
            self.model.fail("; ".join(self.problems) or "nothing ran")
            return
        self.model.finish(
            f"{len(self.finished_runs)} model(s) ran; scoring into {req.report_dir()}", done=self.model.done
        )
        if self.panel is not None:
            self.panel.set_inputs(req.bank, self.finished_runs, req.report_dir())
            self.panel.passes_spin.setValue(req.passes)
            self.panel._on_run_clicked()

    def _say(self, text: str, *, error: bool = False) -> None:
        self.model.say(text, error=error)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        if self.job is not None:
            self.queue.clear()
            self.job.kill()  # finished runs are on disk; a second Start continues
        super().closeEvent(event)
