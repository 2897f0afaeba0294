"""The app's background jobs, one way: a job runs either in a thread of the app (`ThreadJob`: a core function with
`progress` and `cancel` arguments, as `generate_many` and `score` take) or as the CLI's own verb in a process of its
own (`ProcessJob`: `reviewer draft|run ... --progress-json`); a `JobBar` (Run, Cancel, a progress bar and a message
line) draws a `JobModel` (reviewer.app.job_model, the rules without Qt). The Generate, Scoring and Run-models panels
and the Drafts action use these instead of wiring their own workers, buttons and error lines.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from qtpy.QtCore import QObject, QProcess, QThread, Signal
from qtpy.QtWidgets import QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from reviewer.app.job_model import CancelRequest, JobModel
from reviewer.app.jobs import alive
from reviewer.app.qt_rows import hrow
from reviewer.app.qt_style import set_style
from reviewer.errors import Cancelled, ReviewerError

logger = logging.getLogger(__name__)

ERROR_STYLE = "color: #b00020;"


class ThreadJob(QThread):
    """`func(**kwargs, progress=..., cancel=...)` off the UI thread. Its signals arrive on the UI thread:
    `progressed(payload, message)` as the function reports it, then exactly one of `succeeded(result)`,
    `failed(one line)` or `cancelled()` (the function raised reviewer.errors.Cancelled)."""

    progressed = Signal(object, str)
    succeeded = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, func: Callable[..., Any], kwargs: dict[str, Any], what: str, parent: QObject | None = None):
        super().__init__(parent)
        self.func, self.kwargs, self.what = func, kwargs, what
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    def run(self) -> None:  # noqa: D401 - Qt entry point
        try:
            result = self.func(
                **self.kwargs, progress=lambda p, m: self.progressed.emit(p, m), cancel=self._cancel.is_set
            )
        except Cancelled:
            self.cancelled.emit()
        except ReviewerError as exc:  # the core's own message names the file or field
            self.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - the thread's last frame: whatever the core or a library raises
            # (numpy, rasterio, dask, a full disk) must end the job as one line in its panel, not leave it "running"
            logger.exception("%s failed", self.what)
            self.failed.emit(f"{self.what} failed: {exc}")
        else:
            self.succeeded.emit(result)

    def stop(self, wait_ms: int = 30000) -> None:
        """Cancel and wait for the thread (a panel being closed): no signal outlives its receiver."""
        if self.isRunning():
            self.cancel()
            self.wait(wait_ms)


class ProcessJob(QObject):
    """A CLI verb with `--progress-json` (the CLI's own job) in a process of its own: its renders or model calls hold
    that process's interpreter, never the UI's. Its JSON lines come back as `step(done, total, message)`; the end
    as `ended(summary or None, error text)`. Cancel writes a `cancel` line (the requests in flight finish and are
    stored, so a second run resumes); a second Cancel kills it at once (a killed process loses only its requests in
    flight: every stored result is a transaction of its own)."""

    step = Signal(int, int, str)
    ended = Signal(object, str)

    def __init__(self, argv: list[str], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.summary: dict[str, Any] | None = None
        self.cancelling = False
        self._buf = b""
        self.proc = QProcess(self)
        self.proc.setProgram(argv[0])
        self.proc.setArguments(argv[1:])
        self.proc.readyReadStandardOutput.connect(self._read)
        self.proc.finished.connect(self._finished)
        self.proc.errorOccurred.connect(self._error)

    def start(self) -> None:
        self.proc.start()

    def running(self) -> bool:
        return self.proc.state() != QProcess.ProcessState.NotRunning

    def cancel(self) -> None:
        if not self.running():
            return
        if self.cancelling:
            self.proc.kill()
            return
        self.cancelling = True
        self.proc.write(b"cancel\n")

    def kill(self, wait_ms: int = 5000) -> None:
        """Stop at once and wait (a dialog being closed: the finished work is on disk)."""
        if self.running():
            self.proc.kill()
            self.proc.waitForFinished(wait_ms)

    def _read(self) -> None:
        self._buf += bytes(self.proc.readAllStandardOutput().data())
        *lines, self._buf = self._buf.split(b"\n")
        for line in lines:
            try:
                doc = json.loads(line)
            except ValueError:
                continue  # not one of the job's lines (a library's print): ignored
            if "progress" in doc:
                p = doc["progress"]
                self.step.emit(int(p["done"]), int(p["total"]), str(p["message"]))
            elif "summary" in doc:
                self.summary = doc["summary"]

    def _finished(self, code: int, status: Any) -> None:
        self._read()
        errors = bytes(self.proc.readAllStandardError().data()).decode("utf-8", "replace")
        said = [ln.removeprefix("error: ") for ln in errors.splitlines() if ln.startswith("error: ")]
        if status == QProcess.ExitStatus.CrashExit:
            text = "killed: the requests in flight were lost; run again to resume" if self.cancelling else "crashed"
        else:
            text = said[-1] if said else "" if code in (0, 1) else f"exit status {code}"
        self.ended.emit(self.summary, text)

    def _error(self, error: Any) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self.ended.emit(None, f"cannot start {self.proc.program()}: {self.proc.errorString()}")


class JobBar(QWidget):
    """Run, Cancel and a progress bar in a row, the job's message line under them: a view of one `JobModel`.
    The panel connects `run_button` and `cancel_button` to its own start and cancel (what to run is the panel's)."""

    def __init__(
        self,
        model: JobModel,
        *,
        run_text: str = "Run",
        progress_format: str = "%p%",
        wrap_paths: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.model = model
        self.wrap_paths = wrap_paths  # a line may break after a path's slashes instead of widening the dock
        self.run_button = QPushButton(run_text)
        self.cancel_button = QPushButton("Cancel")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat(progress_format)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(hrow(self.run_button, self.cancel_button, self.progress))
        layout.addWidget(self.message)
        model.changed.connect(self.sync)
        self.sync()

    def sync(self) -> None:
        if not alive(self):  # the model outlived its panel
            self.model.changed.disconnect(self.sync)
            return
        m = self.model
        self.run_button.setEnabled(m.can_run)
        self.cancel_button.setEnabled(m.can_cancel)
        if self.progress.maximum() != m.total:
            self.progress.setMaximum(m.total)
        self.progress.setValue(min(m.done, m.total))
        text = m.message.replace("/", "/\u200b") if self.wrap_paths else m.message
        self.message.setText(text)
        set_style(self.message, ERROR_STYLE if m.is_error else "")


def cancel_job(model: JobModel, job: Any) -> None:
    """A Cancel click: the model decides (ask, force or nothing); a thread or a process is told."""
    request = model.cancel()
    if request is CancelRequest.ASK:
        job.cancel()
    elif request is CancelRequest.FORCE:
        job.cancel()  # a ProcessJob that is cancelling kills on a second cancel
