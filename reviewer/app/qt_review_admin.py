"""The maintainer mode of the review dock: assign (annotators, k, seed, gold), progress per annotator, the
agreement table of the core, the stage-2 rule and audit share, and an item's log (versions and events)."""

from __future__ import annotations

import html
import json
from typing import Any

from qtpy.QtCore import Qt
from qtpy.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.jobs import alive
from reviewer.app.qt_jobs import ProcessJob as DraftProcess  # the Drafts action's job: the app's one process runner
from reviewer.app.qt_review import BAD_STYLE, OK_STYLE
from reviewer.review import api

AGREEMENT_KEYS = ("items", "raters", "percent_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1")
PROGRESS_KEYS = ("user", "done", "assigned", "median_seconds", "gold_correct", "gold_decided")


def fmt(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def _table(headers: tuple[str, ...]) -> QTableWidget:
    """A table that keeps its columns at their contents' width and scrolls sideways inside the dock (the columns
    can be widened by dragging their header edges) instead of being cut at the dock's width."""
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(list(headers))
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    t.horizontalHeader().setStretchLastSection(True)
    t.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    t.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
    t.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    _fit_height(t)
    return t


def _fit_height(table: QTableWidget, max_rows: int = 8) -> None:
    """Tall enough for the header, up to max_rows rows and the sideways scroll bar (rows beyond scroll)."""
    rows = min(table.rowCount(), max_rows)
    row_h = table.verticalHeader().defaultSectionSize()
    h = table.horizontalHeader().sizeHint().height() + max(rows, 1) * row_h
    h += table.horizontalScrollBar().sizeHint().height() + 2 * table.frameWidth() + 2
    table.setFixedHeight(h)


def _fill(table: QTableWidget, rows: list[list[str]]) -> None:
    table.setRowCount(len(rows))
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            table.setItem(i, j, QTableWidgetItem(text))
    table.resizeColumnsToContents()
    _fit_height(table)


class MaintainerPanel(QWidget):
    """Forms and tables over api.assign / status / agreement / set_rule / apply_rule / history."""

    def __init__(self, dock) -> None:
        super().__init__()
        self.dock, self.store, self.user = dock, dock.store, dock.user
        self.bank: str | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        host = QWidget()
        layout = QVBoxLayout(host)
        scroll.setWidget(host)
        outer.addWidget(scroll)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        outer.addWidget(self.message)

        layout.addWidget(self._assign_box())
        for box in self._status_boxes():
            layout.addWidget(box)
        from reviewer.app.qt_quality import QualityBox

        self.quality = QualityBox(self.store.path, self.user)  # the annotator quality table and plot (issue 30)
        layout.addWidget(self.quality)
        layout.addWidget(self._rule_box())
        layout.addWidget(self._drafts_box())
        layout.addWidget(self._freeze_box())
        layout.addWidget(self._log_box())
        # the annotators, not the experts (an expert adjudicates what annotators decided; add one here by hand)
        annot = [u["name"] for u in api.list_users(self.store) if u["role"] == "annotator"]
        self.annotators.setText(",".join(u for u in annot if u != self.user))

    def _assign_box(self) -> QGroupBox:
        """Assign: annotators, k, seed, gold and its share (api.assign)."""
        box = QGroupBox("Assign")
        form = QFormLayout(box)
        self.annotators = QLineEdit()
        self.annotators.setPlaceholderText("comma-separated annotators")
        self.k = QSpinBox()
        self.k.setRange(1, 20)
        self.k.setValue(2)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.gold = QLineEdit()
        self.gold.setPlaceholderText("GOLD.jsonl (optional)")
        self.gold_share = QDoubleSpinBox()
        self.gold_share.setRange(0.0, 0.9)
        self.gold_share.setSingleStep(0.05)
        assign = QPushButton("Assign")
        assign.clicked.connect(self.assign)
        for label, w in (
            ("annotators", self.annotators),
            ("k", self.k),
            ("seed", self.seed),
            ("gold", self.gold),
            ("gold share", self.gold_share),
            ("", assign),
        ):
            form.addRow(label, w)
        return box

    def _status_boxes(self) -> tuple[QGroupBox, QGroupBox]:
        """Progress per annotator and the stage-1 agreement tables (filled by refresh)."""
        progress_box = QGroupBox("Progress per annotator")
        v = QVBoxLayout(progress_box)
        self.progress = _table(PROGRESS_KEYS)
        self.states = QLabel("")
        v.addWidget(self.progress)
        v.addWidget(self.states)
        agreement_box = QGroupBox("Agreement (stage 1, accept / flag, per reason and per task)")
        v = QVBoxLayout(agreement_box)
        self.agreement = _table(("table", *AGREEMENT_KEYS))
        self.cohen = QLabel("")
        self.cohen.setWordWrap(True)
        v.addWidget(self.agreement)
        v.addWidget(self.cohen)
        return progress_box, agreement_box

    def _rule_box(self) -> QGroupBox:
        """The stage-2 rule: audit share, adjudication sample, the rest (api.set_rule)."""
        box = QGroupBox("Stage-2 rule")
        form = QFormLayout(box)
        self.audit_share = QDoubleSpinBox()
        self.adjudicate_share = QDoubleSpinBox()
        for sb in (self.audit_share, self.adjudicate_share):
            sb.setRange(0.0, 1.0)
            sb.setSingleStep(0.05)
        self.rest = QComboBox()
        self.rest.addItems(["open", "reject", "accept"])
        self.apply_now = QCheckBox("apply now")
        self.apply_now.setToolTip("apply the rule to the flagged items outside the adjudication sample now")
        save = QPushButton("Save rule")
        save.clicked.connect(self.save_rule)
        for label, w in (
            ("audit share", self.audit_share),
            ("adjudicate share", self.adjudicate_share),
            ("rest", self.rest),
            ("", self.apply_now),
            ("", save),
        ):
            form.addRow(label, w)
        return box

    def _log_box(self) -> QGroupBox:
        """An item's versions and events (api.history)."""
        box = QGroupBox("Item log")
        v = QVBoxLayout(box)
        row = QHBoxLayout()
        self.item_edit = QLineEdit()
        self.item_edit.setPlaceholderText("item id")
        self.item_edit.returnPressed.connect(self.show_log)
        show = QPushButton("Show log")
        show.clicked.connect(self.show_log)
        row.addWidget(self.item_edit, 1)
        row.addWidget(show)
        v.addLayout(row)
        self.log = QTextBrowser()
        self.log.setMinimumHeight(160)
        v.addWidget(self.log)
        return box

    def _drafts_box(self) -> QGroupBox:
        """AI drafts of the bank's visual items: `reviewer draft` itself, in a process of its own (DraftProcess),
        with progress and Cancel; without an API key it says how to set one."""
        box = QGroupBox("Drafts (AI interpretations of visual items)")
        form = QFormLayout(box)
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
        return box

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
        except Exception as exc:  # noqa: BLE001 - shown in the dock
            self._say(f"not saved: {exc}", ok=False)
            return False
        said = f"new version {out['new_version']}" if out["new_version"] else f"{out['reason']} ({out['route']})"
        self._say(f"saved: draft {out['verdict']} on {out['item']}, {said}; now {out['state']}", ok=True)
        self.refresh()
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
        except Exception as exc:  # noqa: BLE001 - shown in the dock
            self._say(f"not drafted: {exc}", ok=False)
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
        self._say(f"drafting the {which} items of {self.bank}...", ok=True)
        self.draft_job.start()
        return True

    def cancel_draft(self) -> None:
        job = self.draft_job
        if job is None or not job.running():
            return
        again = job.cancelling
        job.cancel()
        if not again:
            self._say("cancelling: the requests in flight finish and are kept (Cancel again stops at once)", ok=True)

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
            self._say(f"drafting stopped: {error or 'no summary'}", ok=False)
            self.refresh()
            return
        done = f"drafted {doc['drafted']}, skipped {doc['skipped']}, invalid {doc['invalid']}, failed {doc['failed']}"
        why = f"; stopped: {doc['stopped']}" if doc["stopped"] else "; cancelled, Draft again resumes" if doc[
            "cancelled"] else ""  # fmt: skip
        self._say(f"{done} (cost about ${doc['cost_usd']:.2f}){why}", ok=not (doc["stopped"] or doc["failed"]))
        self.refresh()

    def _freeze_box(self) -> QGroupBox:
        """Freeze the reviewed bank as a version into a new folder (reviewer.review.freeze, as `reviewer freeze`)."""
        box = QGroupBox("Freeze")
        form = QFormLayout(box)
        self.freeze_version = QLineEdit()
        self.freeze_version.setPlaceholderText("version, e.g. 1")
        self.freeze_out = QLineEdit()
        self.freeze_out.setPlaceholderText("folder to write (new or empty)")
        self.freeze_button = QPushButton("Freeze")
        self.freeze_button.clicked.connect(self.freeze)
        for label, w in (("version", self.freeze_version), ("folder", self.freeze_out), ("", self.freeze_button)):
            form.addRow(label, w)
        return box

    def freeze(self) -> bool:
        """Start the freeze in a worker (it reads the store and writes a folder); the result comes back here."""
        from reviewer.app.jobs import run_in_thread
        from reviewer.review.freeze import freeze
        from reviewer.store import Store

        version, out = self.freeze_version.text().strip(), self.freeze_out.text().strip()
        if not version or not out:
            self._say("not frozen: give the version and the folder to write", ok=False)
            return False
        path, bank, user = self.store.path, self.bank, self.user

        def work() -> dict[str, Any]:
            with Store(path) as store:  # its own connection: SQLite connections stay in their thread
                return freeze(store, bank, version=version, out=out, user=user)

        def done(manifest: dict[str, Any]) -> None:
            if alive(self.freeze_button):
                self.freeze_button.setEnabled(True)
                counts = manifest.get("counts", {})
                self._say(
                    f"frozen {manifest['name']} {manifest['version']} into {out}: {counts.get('questions')} "
                    f"questions (reviewer verify {out})",
                    ok=True,
                )
                self.refresh()

        def failed(exc: BaseException) -> None:
            if alive(self.freeze_button):
                self.freeze_button.setEnabled(True)
                self._say(f"not frozen: {exc}", ok=False)

        self.freeze_button.setEnabled(False)
        self._say(f"freezing {bank} as version {version}...", ok=True)
        self.freeze_worker = run_in_thread(work, on_done=done, on_error=failed)
        return True

    def start(self, bank: str) -> None:
        self.bank = bank
        self.quality.set_bank(bank)
        self.refresh()

    def refresh(self) -> None:
        try:
            status = api.status(self.store, self.bank, user=self.user)
            report = api.agreement(self.store, self.bank, user=self.user)
        except Exception as exc:  # noqa: BLE001 - shown in the dock
            self._say(str(exc), ok=False)
            return
        _fill(self.progress, [[fmt(r[k]) for k in PROGRESS_KEYS] for r in status["annotators"]])
        self.states.setText("items: " + ", ".join(f"{s} {n}" for s, n in (status.get("states") or {}).items()))
        cfg = status.get("settings") or {}
        for sb, name in ((self.audit_share, "audit_share"), (self.adjudicate_share, "adjudicate_share")):
            if cfg.get(name) is not None:
                sb.setValue(float(cfg[name]))
        if cfg.get("rest_rule"):
            self.rest.setCurrentText(cfg["rest_rule"])
        if cfg.get("k"):
            self.k.setValue(int(cfg["k"]))
            self.seed.setValue(int(cfg["seed"]))
        self._draft_counts()
        tables = [("accept / flag", report["overall"]), *report["per_reason"].items()]
        tables += [(f"task {task}", figs) for task, figs in report.get("per_task", {}).items()]
        _fill(self.agreement, [[name, *(fmt(figs.get(k)) for k in AGREEMENT_KEYS)] for name, figs in tables])
        self.cohen.setText(
            "; ".join(
                f"Cohen {p['raters'][0]} x {p['raters'][1]}: {fmt(p['kappa'])} on {p['items']} items"
                for p in report["overall"].get("cohen", [])
            )
        )

    def _draft_counts(self) -> None:
        from reviewer.review.drafts import draft_queue

        try:
            q = draft_queue(self.store, self.bank, user=self.user)
        except Exception as exc:  # noqa: BLE001 - shown in the dock
            self.draft_waiting.setText(f"drafts: {exc}")
            return
        self.draft_waiting.setText(
            f"drafts to review: {len(q['to_review'])}; waiting for a redraft: {len(q['redraft'])} (Draft with items "
            f"'rejected'); waiting for a reference set by hand: {len(q['needs_reference'])}"
        )

    def assign(self) -> bool:
        try:
            out = api.assign(
                self.store,
                self.bank,
                annotators=[a for a in self.annotators.text().split(",") if a.strip()],
                k=self.k.value(),
                seed=self.seed.value(),
                user=self.user,
                gold=self.gold.text().strip() or None,
                gold_share=self.gold_share.value(),
            )
        except Exception as exc:  # noqa: BLE001
            self._say(f"not assigned: {exc}", ok=False)
            return False
        loads = ", ".join(f"{n} {c}" for n, c in out["per_annotator"].items())
        self._say(f"assigned {out['items']} items (batch {out['batch']}): {loads}", ok=True)
        self.refresh()
        return True

    def save_rule(self) -> bool:
        try:
            cfg = api.set_rule(
                self.store,
                self.bank,
                user=self.user,
                audit_share=self.audit_share.value(),
                adjudicate_share=self.adjudicate_share.value() or None,
                rest_rule=self.rest.currentText(),
            )
            applied = api.apply_rule(self.store, self.bank, user=self.user) if self.apply_now.isChecked() else None
        except Exception as exc:  # noqa: BLE001
            self._say(f"rule not saved: {exc}", ok=False)
            return False
        extra = f"; applied to {applied['applied']} item(s)" if applied else ""
        self._say(
            f"saved: audit share {cfg['audit_share']}, adjudicate share {cfg['adjudicate_share']}, "
            f"rest {cfg['rest_rule']}{extra}",
            ok=True,
        )
        self.refresh()
        return True

    def show_log(self) -> bool:
        key = self.item_edit.text().strip()
        if not key:
            return False
        try:
            out = api.history(self.store, key if "/" in key else f"{self.bank}/{key}", user=self.user)
        except Exception as exc:  # noqa: BLE001
            self._say(str(exc), ok=False)
            return False
        rows = [
            (v["created"], f"version {v['version']} ({v['origin']} by {v['created_by']}) {v['sha256'][:19]}")
            for v in out["versions"]
        ]
        for e in out["events"]:
            change = f" {e['before'] or ''} -> {e['after'] or ''}" if e["before"] or e["after"] else ""
            detail = json.dumps(e["detail"], ensure_ascii=False) if e["detail"] else ""
            rows.append((e["at"], f"#{e['id']} {e['user'] or 'tool'} {e['action']} v{e['version']}{change} {detail}"))
        head = f"<b>{html.escape(out['item'])}</b> [{html.escape(str(out.get('state')))}]<br>"
        self.log.setHtml(head + "<br>".join(html.escape(f"{at}  {t}") for at, t in sorted(rows)))
        return True

    def _say(self, text: str, *, ok: bool) -> None:
        self.message.setText(html.escape(text))
        self.message.setStyleSheet(OK_STYLE if ok else BAD_STYLE)
