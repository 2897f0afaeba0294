"""One background job as plain evented Python (no Qt): what the app's job panels (Generate, Scoring, Run models)
show about it -- running or not, how far, the last message and whether it is an error -- and the rules they share:
one run at a time, a first Cancel asks the job to stop at its next step, a second Cancel forces it (where the job
can be forced: a process can be killed, a thread cannot), an ended job says how it ended. The Qt side
(`reviewer.app.qt_jobs`) runs the work and draws this model; it is tested without a display.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from psygnal import Signal


class JobPhase(StrEnum):
    IDLE = "idle"  # never run
    RUNNING = "running"
    CANCELLING = "cancelling"  # asked to stop; the job ends at its next step
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


#: the phases in which a job holds its panel (Run disabled, Cancel enabled)
ACTIVE = (JobPhase.RUNNING, JobPhase.CANCELLING)


@dataclass(frozen=True)
class JobTexts:
    """What a panel says at each step of its job (each panel words its own)."""

    starting: str = "Starting…"
    cancelling: str = "Cancelling…"
    cancelled: str = "Cancelled."
    forcing: str = "Stopping at once…"


class CancelRequest(StrEnum):
    NONE = "none"  # nothing running: nothing to do
    ASK = "ask"  # the first Cancel: stop at the next step (finished work is kept)
    FORCE = "force"  # a second Cancel on a job that can be forced: stop now


class JobModel:
    """The state of one panel's job. `changed` fires after every change (the bar redraws from the attributes)."""

    changed = Signal()

    def __init__(self, texts: JobTexts | None = None, *, can_force: bool = False) -> None:
        self.texts = texts or JobTexts()
        self.can_force = can_force  # a second Cancel kills (processes) rather than waits (threads)
        self.phase = JobPhase.IDLE
        self.ready = True  # the panel's inputs allow a run (e.g. at least one site)
        self.done, self.total = 0, 1
        self.message = ""
        self.is_error = False

    @property
    def running(self) -> bool:
        return self.phase in ACTIVE

    @property
    def can_run(self) -> bool:
        return self.ready and not self.running

    @property
    def can_cancel(self) -> bool:
        return self.phase is JobPhase.RUNNING or (self.phase is JobPhase.CANCELLING and self.can_force)

    def set_ready(self, ready: bool) -> None:
        self.ready = bool(ready)
        self.changed.emit()

    def say(self, message: str, *, error: bool = False) -> None:
        """A line for the user without changing the phase (a refused Run, one model of several ended)."""
        self.message, self.is_error = message, error
        self.changed.emit()

    def begin(self, message: str | None = None) -> bool:
        """Start a run; False (and nothing changes) when one is running already."""
        if self.running:
            return False
        self.phase, self.done, self.total = JobPhase.RUNNING, 0, self.total
        self.say(self.texts.starting if message is None else message)
        return True

    def report(self, done: float, total: float, message: str = "") -> None:
        """Progress of the running job: `done` of `total` steps (a message replaces the last one; a late report of
        an ended job is dropped)."""
        if not self.running:
            return
        self.done, self.total = max(0, round(done)), max(1, round(total))
        if message:
            self.message, self.is_error = message, False
        self.changed.emit()

    def report_fraction(self, fraction: float, message: str = "") -> None:
        self.report(1000 * min(max(fraction, 0.0), 1.0), 1000, message)

    def cancel(self) -> CancelRequest:
        """What the runner should do for a Cancel now: ask the job to stop, force it, or nothing."""
        if self.phase is JobPhase.RUNNING:
            self.phase = JobPhase.CANCELLING
            self.say(self.texts.cancelling)
            return CancelRequest.ASK
        if self.phase is JobPhase.CANCELLING and self.can_force:
            self.say(self.texts.forcing)
            return CancelRequest.FORCE
        return CancelRequest.NONE

    def finish(self, message: str, *, done: int | None = None, total: int | None = None) -> None:
        """The job ended with a result: the bar full, or at `done` of `total` when part of it did not complete."""
        self.phase = JobPhase.DONE
        self.total = self.total if total is None else max(1, total)
        self.done = self.total if done is None else done
        self.say(message)

    def fail(self, message: str) -> None:
        """The job ended without a result: its one-line reason, as an error."""
        self.phase = JobPhase.FAILED
        self.say(message, error=True)

    def cancelled(self, message: str | None = None) -> None:
        """The job stopped on a Cancel: the bar back at zero."""
        self.phase, self.done = JobPhase.CANCELLED, 0
        self.say(self.texts.cancelled if message is None else message)
