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

from reviewer.app.qt_review import BAD_STYLE, EXPERT_KEYS, OK_STYLE, item_drafts, keys_html, question_html, soon
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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        self.count = QLabel("")
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
        keys = QLabel(keys_html(EXPERT_KEYS))
        keys.setWordWrap(True)
        keys.setStyleSheet("color: #aaa")
        layout.addWidget(keys)

    def start(self, bank: str) -> None:
        self.bank = bank
        self.refresh()
        if self.rows:
            self.show_item(self.rows[0]["item"])
        else:
            self.view = None
            self.focus.setHtml("<h3>Nothing to adjudicate in this bank.</h3>")
            self.table.setRowCount(0)

    def refresh(self) -> None:
        self.rows = api.queue(self.store, self.bank, user=self.user)
        self.count.setText(f"{len(self.rows)} item(s) to adjudicate, split decisions first")
        self.list.clear()
        for r in self.rows:
            it = QListWidgetItem(f"{r['id']}   {r['kind']}  ({r['flags']} of {r['decisions']} flagged)")
            it.setData(Qt.UserRole, r["item"])
            self.list.addItem(it)

    def show_item(self, key: str) -> None:
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
                d["verdict"],
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

    def adjudicate(self, verdict: str, *, reasons=None, correction=None, rationale: str | None = None) -> bool:
        if self.view is None:
            return False
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
        self.rationale.clear()
        self.refresh()
        if self.rows:
            self.show_item(self.rows[0]["item"])
        else:
            self.view = None
            self.focus.setHtml("<h3>Nothing left to adjudicate.</h3>")
        return True

    def ask_correction(self):
        from reviewer.app.qt_review_forms import CorrectionForm

        self.dialog = CorrectionForm(self, self.view["question"], why_label="rationale")
        self.dialog.why.setText(self.rationale.text())
        self.dialog.submitted.connect(lambda corr, why, _c: self.adjudicate("correct", correction=corr, rationale=why))
        self.dialog.show()
        return self.dialog

    def step(self, by: int) -> bool:
        keys = [r["item"] for r in self.rows]
        if not keys:
            return False
        cur = keys.index(self.view["item"]) if self.view and self.view["item"] in keys else -by
        self.show_item(keys[max(0, min(len(keys) - 1, cur + by))])
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
