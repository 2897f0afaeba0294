"""The maintainer's Drafts section: `reviewer draft` run in a process of its own (DraftProcess) with progress and
Cancel, the drafts waiting by what they wait for, and one item's draft reviewed (accept, or reject with a reason of
the codebook and its route). A box of its own: it shares only the store, the user and the message line with the
rest of the maintainer's dock (qt_review_admin.MaintainerPanel)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qtpy.QtCore import Qt
from qtpy.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.errors import CORE_ERRORS
from reviewer.app.jobs import alive
from reviewer.app.qt_jobs import ProcessJob as DraftProcess  # the Drafts action's job: the app's one process runner


class DraftsBox(QGroupBox):
    """Drafts of the bank's visual items; `say(text, ok=...)` is the dock's message line, `changed()` refreshes the
    rest of the dock after a run or a review."""

    def __init__(self, store, user: str, *, say: Callable[..., None], changed: Callable[[], None]) -> None:
        super().__init__("Drafts (AI interpretations of visual items)")
        self.store, self.user, self.say, self.changed = store, user, say, changed
        self.bank: str | None = None
        self._build()

    def _build(self) -> None:
        """AI drafts of the bank's visual items: `reviewer draft` itself, in a process of its own (DraftProcess),
        with progress and Cancel; without an API key it says how to set one."""
        form = QFormLayout(self)
        self.draft_items = QComboBox()
        self.draft_items.addItems(["visual", "all", "rejected"])
        self.draft_items.setToolTip("rejected: the items whose draft a reviewer rejected for a new draft")
        self.draft_concurrency = QSpinBox()
        self.draft_concurrency.setRange(1, 16)
        self.draft_concurrency.setValue(4)
        row = QHBoxLayout()
        self.draft_button = QPushButton("Draft")
        self.draft_button.clicked.connect(self.draft)
        self.draft_cancel = QPushButton("Cancel")
        self.draft_cancel.setEnabled(False)
        self.draft_cancel.clicked.connect(self.cancel_draft)
        row.addWidget(self.draft_button)
        row.addWidget(self.draft_cancel)
        self.draft_progress = QProgressBar()
        self.draft_progress.setFormat("%v of %m")
        self.draft_waiting = QLabel("")
        self.draft_waiting.setWordWrap(True)
        for label, w in (("items", self.draft_items), ("concurrency", self.draft_concurrency), ("", row)):
            form.addRow(label, w)
        form.addRow("", self.draft_progress)
        form.addRow("", self.draft_waiting)
        self.draft_job: DraftProcess | None = None
        form.addRow(self._draft_review_row())

    def _draft_review_row(self) -> QWidget:
        """Review one item's draft (reviewer.review.drafts.review_draft, as `reviewer review draft`): accept, or
        reject with a draft reject reason of the codebook (its route is shown: redraft or manual reference)."""
        from reviewer.review.rules import codebook

        host = QWidget()
        rows = QVBoxLayout(host)
        rows.setContentsMargins(0, 0, 0, 0)
        intro = QLabel("Review a draft (accept, or reject with a reason: back to drafting or set by hand)")
        intro.setWordWrap(True)
        rows.addWidget(intro)
        self.draft_item = QLineEdit()
        self.draft_item.setPlaceholderText("item id")
        self.draft_verdict = QComboBox()
        self.draft_verdict.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.draft_verdict.setMinimumContentsLength(16)
        self.draft_verdict.addItem("accept the draft", ("accept", None))
        for r in codebook().draft_reject_reasons:
            route = "redraft" if r.route == "redraft" else "manual reference"
            self.draft_verdict.addItem(f"reject: {r.label} ({route})", ("reject", r.code))
            self.draft_verdict.setItemData(self.draft_verdict.count() - 1, r.definition, Qt.ItemDataRole.ToolTipRole)
        self.draft_rationale = QLineEdit()
        self.draft_rationale.setPlaceholderText("rationale")
        save = QPushButton("Save")
        save.clicked.connect(self.review_draft)
        for line in ((self.draft_item, self.draft_verdict), (self.draft_rationale, save)):
            row = QHBoxLayout()
            row.addWidget(line[0], 1)
            row.addWidget(line[1], 2 if line[1] is self.draft_verdict else 0)
            rows.addLayout(row)
        return host

    def review_draft(self) -> bool:
        from reviewer.review.drafts import review_draft

        key = self.draft_item.text().strip()
        if not key:
            return False
        verdict, reason = self.draft_verdict.currentData()
        try:
            out = review_draft(
                self.store, key if "/" in key else f"{self.bank}/{key}", user=self.user, verdict=verdict,
                reason=reason, rationale=self.draft_rationale.text().strip() or None,
            )  # fmt: skip
        except CORE_ERRORS as exc:  # shown in the dock
            self.say(f"not saved: {exc}", ok=False)
            return False
        said = f"new version {out['new_version']}" if out["new_version"] else f"{out['reason']} ({out['route']})"
        self.say(f"saved: draft {out['verdict']} on {out['item']}, {said}; now {out['state']}", ok=True)
        self.changed()
        return True

    def draft(self) -> bool:
        """Start `reviewer draft BANK --user ME --items ... --concurrency N --progress-json` as a process on the
        same store; the UI only reads its lines."""
        from reviewer.drafting.cli import command
        from reviewer.drafting.config import require_key

        if self.draft_job is not None and self.draft_job.running():
            return False
        try:
            require_key()  # no key: the message says how to set one, and no process is started
        except CORE_ERRORS as exc:  # shown in the dock
            self.say(f"not drafted: {exc}", ok=False)
            return False
        which = self.draft_items.currentText()
        argv = command(
            self.bank,
            db=str(self.store.path),
            user=self.user,
            which=[which],
            concurrency=self.draft_concurrency.value(),
        )
        self.draft_job = DraftProcess(argv, self)
        self.draft_job.step.connect(self._on_draft_step)
        self.draft_job.ended.connect(self._on_draft_end)
        self.draft_button.setEnabled(False)
        self.draft_cancel.setEnabled(True)
        self.draft_progress.setValue(0)
        self.say(f"drafting the {which} items of {self.bank}...", ok=True)
        self.draft_job.start()
        return True

    def cancel_draft(self) -> None:
        job = self.draft_job
        if job is None or not job.running():
            return
        again = job.cancelling
        job.cancel()
        if not again:
            self.say("cancelling: the requests in flight finish and are kept (Cancel again stops at once)", ok=True)

    def _on_draft_step(self, done: int, total: int, message: str) -> None:
        self.draft_progress.setMaximum(max(total, 1))
        self.draft_progress.setValue(done)
        self.draft_progress.setToolTip(message)

    def _on_draft_end(self, doc: dict[str, Any] | None, error: str) -> None:
        if not alive(self.draft_button):
            return
        self.draft_button.setEnabled(True)
        self.draft_cancel.setEnabled(False)
        if doc is None:
            self.say(f"drafting stopped: {error or 'no summary'}", ok=False)
            self.changed()
            return
        done = f"drafted {doc['drafted']}, skipped {doc['skipped']}, invalid {doc['invalid']}, failed {doc['failed']}"
        why = f"; stopped: {doc['stopped']}" if doc["stopped"] else "; cancelled, Draft again resumes" if doc[
            "cancelled"] else ""  # fmt: skip
        self.say(f"{done} (cost about ${doc['cost_usd']:.2f}){why}", ok=not (doc["stopped"] or doc["failed"]))
        self.changed()

    def refresh_counts(self) -> None:
        """The drafts waiting, by what they wait for."""
        from reviewer.review.drafts import draft_queue

        try:
            q = draft_queue(self.store, self.bank, user=self.user)
        except CORE_ERRORS as exc:  # shown in the dock
            self.draft_waiting.setText(f"drafts: {exc}")
            return
        self.draft_waiting.setText(
            f"drafts to review: {len(q['to_review'])}; waiting for a redraft: {len(q['redraft'])} (Draft with items "
            f"'rejected'); waiting for a reference set by hand: {len(q['needs_reference'])}"
        )
