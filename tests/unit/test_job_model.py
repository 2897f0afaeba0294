"""The job panels' shared rules without a display (reviewer.app.job_model): one run at a time, Cancel asks then
forces (only where the job can be forced), progress of an ended job is dropped, and each ending reads as a user
expects (a failure as an error line, a cancel with the bar back at zero, a partial result at its share)."""

from __future__ import annotations

from reviewer.app.job_model import CancelRequest, JobModel, JobPhase, JobTexts


def test_one_run_at_a_time_and_progress_while_running() -> None:
    job = JobModel()
    seen: list[tuple[bool, int]] = []
    job.changed.connect(lambda: seen.append((job.can_run, job.done)))
    assert job.can_run and not job.can_cancel
    assert job.begin() and job.message == "Starting…"
    assert not job.begin("again")  # a second Run while one runs changes nothing
    assert job.message == "Starting…" and job.running and not job.can_run and job.can_cancel
    job.report_fraction(0.25, "site-0: scene 3 of 12")
    assert (job.done, job.total, job.message) == (250, 1000, "site-0: scene 3 of 12")
    job.report(3, 4)  # no message: the last one stays
    assert (job.done, job.total, job.message) == (3, 4, "site-0: scene 3 of 12")
    job.finish("4 runs")
    assert job.phase is JobPhase.DONE and job.done == job.total == 4 and job.can_run
    job.report(1, 4, "late")  # a late report of an ended job is dropped
    assert job.done == 4 and job.message == "4 runs"
    assert seen[-1] == (True, 4)


def test_cancel_asks_first_and_forces_only_a_process() -> None:
    thread = JobModel(JobTexts(cancelling="stopping at the next scene"))
    assert thread.cancel() is CancelRequest.NONE  # nothing running
    thread.begin()
    assert thread.cancel() is CancelRequest.ASK and thread.message == "stopping at the next scene"
    assert not thread.can_cancel and thread.cancel() is CancelRequest.NONE  # a thread cannot be killed
    thread.cancelled()
    assert thread.phase is JobPhase.CANCELLED and thread.done == 0 and thread.message == "Cancelled."

    process = JobModel(can_force=True)
    process.begin()
    process.report(2, 5)
    assert process.cancel() is CancelRequest.ASK and process.can_cancel
    assert process.cancel() is CancelRequest.FORCE and process.message == "Stopping at once…"


def test_endings_read_as_a_user_expects() -> None:
    job = JobModel()
    job.set_ready(False)
    assert not job.can_run  # e.g. no site picked yet
    job.set_ready(True)
    job.say("Pick a bank folder first.", error=True)
    assert job.is_error and job.phase is JobPhase.IDLE
    job.begin()
    assert not job.is_error
    job.fail("sites.jsonl: sha256 does not match")
    assert job.is_error and job.phase is JobPhase.FAILED and job.can_run
    job.begin()
    job.finish("2 generated, 1 failed", done=667, total=1000)  # two of three sites complete
    assert (job.done, job.total, job.is_error) == (667, 1000, False)
