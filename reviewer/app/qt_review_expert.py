"""The expert mode of the review dock: the adjudication queue in disagreement order, every stage-1
decision side by side (annotators pseudonymised by the core), and accept / reject / correct."""

from __future__ import annotations

import html
import json
from typing import Any

from qtpy.QtCore import Qt
from qtpy.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.qt_review import (
    BAD_STYLE,
    EXPERT_KEYS,
    OK_STYLE,
    item_drafts,
    keys_label,
    neighbour,
    question_html,
    soon,
)
from reviewer.review import api

COLUMNS = ("annotator", "verdict", "reasons", "comment", "suggested correction", "seconds")


class ExpertPanel(QWidget):
    """Adjudication: queue, the item, the stage-1 table, rationale, reject reason, and the actions."""

    def __init__(self, dock) -> None:
        super().__init__()
        self.dock, self.store, self.user = dock, dock.store, dock.user
        self.bank: str | None = None
        self.rows: list[dict[str, Any]] = []
        self.view: dict[str, Any] | None = None
        self.dialog = None
        self.mode = "adjudicate"
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        top = QHBoxLayout()
        top.addWidget(QLabel("queue"))
        self.mode_combo = QComboBox()
        self.mode_combo.addItem("adjudication", "adjudicate")
        self.mode_combo.addItem("AI drafts", "drafts")
        self.mode_combo.setToolTip("adjudicate flagged items, or review AI drafts (accept, edit, reject with a reason)")
        self.mode_combo.currentIndexChanged.connect(lambda _i: self.set_mode(self.mode_combo.currentData()))
        top.addWidget(self.mode_combo, 1)
        layout.addLayout(top)
        self.count = QLabel("")
        self.count.setWordWrap(True)
        layout.addWidget(self.count)
        split = QSplitter(Qt.Vertical)
        self.list = QListWidget()
        self.list.itemClicked.connect(lambda it: self.show_item(it.data(Qt.UserRole)))
        split.addWidget(self.list)
        self.focus = QTextBrowser()
        split.addWidget(self.focus)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.horizontalHeader().setStretchLastSection(True)
        split.addWidget(self.table)
        split.setSizes([110, 300, 150])
        layout.addWidget(split, 1)
        row = QHBoxLayout()
        self.rationale = QLineEdit()
        self.rationale.setPlaceholderText("rationale (needed for every adjudication)")
        row.addWidget(self.rationale, 2)
        self.reject_combo = QComboBox()
        row.addWidget(self.reject_combo, 1)
        layout.addLayout(row)
        row = QHBoxLayout()
        for text, key in (("Accept (A)", "A"), ("Reject (R)", "R"), ("Correct... (E)", "E")):
            b = QPushButton(text)
            b.clicked.connect(lambda _=False, key=key: self.key(key))
            row.addWidget(b)
        layout.addLayout(row)
        self.saved = QLabel("")
        self.saved.setWordWrap(True)
        layout.addWidget(self.saved)
        self._load_soon = soon(
            lambda: self.view and self.dock.loader.load(self.view["item"], self.view["question"]), self
        )
        layout.addWidget(keys_label(EXPERT_KEYS))

    def start(self, bank: str) -> None:
        self.bank = bank
        self.refresh()
        if self.rows:
            self.show_item(self.rows[0]["item"])
        else:
            self.view = None
            what = "No AI draft to review" if self.mode == "drafts" else "Nothing to adjudicate"
            self.focus.setHtml(f"<h3>{what} in this bank.</h3>")
            self.table.setRowCount(0)

    def set_mode(self, mode: str) -> None:
        """'adjudicate' (stage 2 on flagged items) or 'drafts' (AI drafts waiting for a review, and items whose
        draft was rejected to a reference set by hand)."""
        if mode == self.mode:
            return
        self.mode = mode
        self.table.setVisible(mode != "drafts")  # a draft has no stage-1 decisions
        if self.mode_combo.currentData() != mode:
            self.mode_combo.setCurrentIndex(self.mode_combo.findData(mode))
        if self.bank is not None:
            self.start(self.bank)

    def refresh(self) -> None:
        if self.mode == "drafts":
            self._refresh_drafts()
            return
        self.rows = api.queue(self.store, self.bank, user=self.user)
        self.count.setText(f"{len(self.rows)} item(s) to adjudicate, split decisions first")
        self.list.clear()
        for r in self.rows:
            it = QListWidgetItem(f"{r['id']}   {r['kind']}  ({r['flags']} of {r['decisions']} flagged)")
            it.setData(Qt.UserRole, r["item"])
            self.list.addItem(it)

    def _refresh_drafts(self) -> None:
        q = api.draft_queue(self.store, self.bank, user=self.user)
        self.rows = [{"item": k, "what": "draft to review"} for k in q["to_review"]]
        self.rows += [{"item": k, "what": "needs a reference (E)"} for k in q["needs_reference"]]
        self.count.setText(
            f"{len(q['to_review'])} AI draft(s) to review, {len(q['needs_reference'])} item(s) needing a reference, "
            f"{len(q['redraft'])} waiting for a redraft"
        )
        self.list.clear()
        for r in self.rows:
            it = QListWidgetItem(f"{r['item'].split('/', 1)[-1]}   {r['what']}")
            it.setData(Qt.UserRole, r["item"])
            self.list.addItem(it)

    def show_item(self, key: str) -> None:
        if self.mode == "drafts":
            self._show_draft(key)
            return
        try:
            view = api.expert_view(self.store, key, user=self.user)
        except Exception as exc:  # noqa: BLE001 - shown in the dock
            self._say(f"cannot open {key}: {exc}", ok=False)
            return
        self.view = view
        self.focus.setHtml(question_html(view["question"], drafts=item_drafts(self, view)))
        self.table.setRowCount(len(view["stage1"]))
        for i, d in enumerate(view["stage1"]):
            cells = (
                d["annotator"],
                d["verdict"] + (f" ({d['confidence']} confidence)" if d.get("confidence") else ""),
                ", ".join(d["reasons"]),
                d["comment"] or "",
                json.dumps(d["correction"], ensure_ascii=False) if d["correction"] else "",
                "" if d["seconds"] is None else f"{d['seconds']:.0f}",
            )
            for j, text in enumerate(cells):
                self.table.setItem(i, j, QTableWidgetItem(text))
        self.reject_combo.clear()
        for r in view["reject_reasons"]:
            self.reject_combo.addItem(r["label"], r["code"])
        for k in range(self.list.count()):
            if self.list.item(k).data(Qt.UserRole) == key:
                self.list.setCurrentRow(k)
        self.dock.loader.wanted = view["item"]
        self._load_soon()

    def _show_draft(self, key: str) -> None:
        try:
            view = api.draft_view(self.store, key, user=self.user)
        except Exception as exc:  # noqa: BLE001 - shown in the dock
            self._say(f"cannot open {key}: {exc}", ok=False)
            return
        self.view = view
        self.focus.setHtml(question_html(view["question"], drafts=item_drafts(self, view)))
        self.table.setRowCount(0)
        self.reject_combo.clear()
        for r in view["reasons"]:
            self.reject_combo.addItem(f"{r['label']} (→ {r['route']})", r["code"])
        for k in range(self.list.count()):
            if self.list.item(k).data(Qt.UserRole) == key:
                self.list.setCurrentRow(k)
        self.dock.loader.wanted = view["item"]
        self._load_soon()

    def review_draft(self, verdict: str, *, reason=None, correction=None, rationale: str | None = None) -> bool:
        """Accept, correct or reject (with a reason whose route sends the item to a redraft or to a reference set
        by hand) the draft on show, through the core (reviewer review draft)."""
        if self.view is None:
            return False
        key = self.view["item"]
        why = rationale if rationale is not None else self.rationale.text().strip()
        try:
            out = api.review_draft(
                self.store, key, user=self.user, verdict=verdict, reason=reason, correction=correction,
                rationale=why or None, version=self.view["version"],
            )  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - a failed save is shown and the item stays
            self._say(f"NOT saved: draft {verdict} {key}: {exc}", ok=False)
            return False
        new = f", new version {out['new_version']}" if out["new_version"] else ""
        route = f" ({out['reason']} → {out['state']})" if out["reason"] else ""
        self._say(f"saved: draft {out['verdict']} on {out['item']}{route}{new}", ok=True)
        self._next_after_save()
        return True

    def _next_after_save(self) -> None:
        self.rationale.clear()
        self.refresh()
        if self.rows:
            self.show_item(self.rows[0]["item"])
        else:
            self.view = None
            self.focus.setHtml("<h3>Nothing left here.</h3>")

    def adjudicate(self, verdict: str, *, reasons=None, correction=None, rationale: str | None = None) -> bool:
        if self.view is None:
            return False
        if self.mode == "drafts":
            return self.review_draft(verdict, reason=(reasons or [None])[0], correction=correction, rationale=rationale)
        key = self.view["item"]
        try:
            out = api.adjudicate(
                self.store,
                key,
                user=self.user,
                verdict=verdict,
                reasons=reasons,
                correction=correction,
                rationale=rationale if rationale is not None else self.rationale.text().strip(),
                version=self.view["version"],
            )
        except Exception as exc:  # noqa: BLE001 - a failed save is shown and the item stays
            self._say(f"NOT saved: {verdict} {key}: {exc}", ok=False)
            return False
        new = f", new version {out['new_version']}" if out["new_version"] else ""
        self._say(f"saved: {out['verdict']} on {out['item']}{new} (decision {out['decision']})", ok=True)
        self._next_after_save()
        return True

    def ask_correction(self):
        from reviewer.app.qt_review_forms import CorrectionForm

        self.dialog = CorrectionForm(self, self.view["question"], why_label="rationale")
        self.dialog.why.setText(self.rationale.text())
        self.dialog.submitted.connect(lambda corr, why, _c: self.adjudicate("correct", correction=corr, rationale=why))
        self.dialog.show()
        return self.dialog

    def step(self, by: int) -> bool:
        target = neighbour([r["item"] for r in self.rows], self.view and self.view["item"], by)
        if target is None:
            return False
        self.show_item(target)
        return True

    def key(self, key: str) -> bool:
        if key == "A":
            return self.adjudicate("accept")
        if key == "R":
            return self.adjudicate("reject", reasons=[self.reject_combo.currentData()])
        if key == "E" and self.view is not None:
            return bool(self.ask_correction())
        if key in ("N", "P"):
            return self.step(1 if key == "N" else -1)
        return False

    def _say(self, text: str, *, ok: bool) -> None:
        self.saved.setText(html.escape(text))
        self.saved.setStyleSheet(OK_STYLE if ok else BAD_STYLE)
