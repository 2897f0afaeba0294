"""The expert mode of the review dock: the adjudication queue in disagreement order, every stage-1
decision side by side (annotators pseudonymised by the core), and accept / reject / correct."""

from __future__ import annotations

import json
from typing import Any

from qtpy.QtCore import Qt
from qtpy.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.errors import CORE_ERRORS
from reviewer.app.item_pipeline import PendingSave
from reviewer.app.qt_review_parts import (
    BAD_STYLE,
    EXPERT_KEYS,
    EXPERT_KEYS_SHORT,
    HINT_STYLE,
    StatusBand,
    confidence_keys,
    item_drafts,
    keys_label,
    open_form,
    question_html,
    question_view,
    say,
    soon,
)
from reviewer.app.qt_rows import WholeRowsSplitter
from reviewer.app.qt_style import StatusLabel, scroll_into_view
from reviewer.app.review_model import ExpertKeys, ReviewQueue, after_refusal, refused_line
from reviewer.review import api

QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's 'no maximum' for a widget's size
COLUMNS = ("annotator", "verdict", "reasons", "comment", "correction", "s")
#: columns as wide as their words (the rest share the room left, their text wrapped, whole in the tooltip)
FITTED = (0, 1, 5)
#: columns shown only when an annotator wrote in them (at 1366 x 768 five columns left the reasons ~60 px)
OPTIONAL = (3, 4, 5)


def reason_label(code: str) -> str:
    """A flag reason as the codebook words it ("wrong reference answer"): words wrap in a narrow column, where a
    code ("wrong_reference") was cut."""
    from reviewer.review.rules import codebook

    return next((r.label for r in codebook().flag_reasons if r.code == code), code)


class RationaleEdit(QLineEdit):
    """The rationale field: Enter and Esc go to the expert's keys (`ExpertKeys`) when the window's shortcuts do
    not take them first."""

    def __init__(self, on_key) -> None:
        super().__init__()
        self._on_key = on_key

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        key = {Qt.Key_Return: "Return", Qt.Key_Enter: "Return", Qt.Key_Escape: "Escape"}.get(event.key())
        if key is not None and self._on_key(key):
            event.accept()
            return
        super().keyPressEvent(event)


class ExpertPanel(QWidget):
    """Adjudication: queue, the item, the stage-1 table, rationale, reject reason, and the actions."""

    def __init__(self, dock) -> None:
        super().__init__()
        self.dock, self.store, self.user = dock, dock.store, dock.user
        self.bank: str | None = None
        self.rows: list[dict[str, Any]] = []
        self._own = 0  # flagged items this expert decided at stage 1 (another expert's), as the queue last said
        self.view: dict[str, Any] | None = None
        self.dialog = None
        self.mode = "adjudicate"
        self.queue = ReviewQueue()
        self.keys = ExpertKeys(levels=tuple(confidence_keys().items()))
        self._reason_labels: dict[str, str] = {}  # the item's reject reasons' words, by code
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
        split = self.split = WholeRowsSplitter(min_rows=3)  # the queue in whole rows
        self.list = QListWidget()
        self.list.itemClicked.connect(lambda it: self.show_item(it.data(Qt.UserRole)))
        split.addWidget(self.list)
        self.focus = question_view()
        split.addWidget(self.focus)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.horizontalHeaderItem(5).setToolTip("seconds the annotator took")
        self.table.horizontalHeaderItem(4).setToolTip("the correction the annotator suggested")
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)  # wrapped whole, never "wrong_refe..."
        self.table.verticalHeader().setVisible(False)
        # rows follow their wrapped text as the columns change, and the table's minimum follows the rows
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().sectionResized.connect(lambda *_: self._fit_table_height())
        # a column's new width re-wraps its rows: the table's height follows them (measured only when the item came,
        # at the widths the columns had before the dock's layout gave them theirs, a commented flag's table kept the
        # height of narrower columns: 224 px for 120 px of rows at 1366 x 768, the question left 67 px)
        self.table.horizontalHeader().sectionResized.connect(lambda *_: self._fit_table_height())
        header = self.table.horizontalHeader()
        for col in range(len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeToContents if col in FITTED else QHeaderView.Stretch)
        split.addWidget(self.table)
        # the question takes what the window gives or takes: beside a 520 px review dock at 1366 x 768 a commented
        # flag's taller table had squeezed it to ~120 px (its field table out of sight); the queue opens three rows
        # tall (N / P walk it, the count above says how long it is) and the table at its rows' height; the
        # splitter keeps it whole rows (measured from the font, three rows had opened as three and a half)
        rows3 = 3 * (self.list.fontMetrics().height() + 2) + 2 * self.list.frameWidth() + 2
        self.list.setMinimumHeight(rows3)  # its scroll bar's arrows asked ~70 px; the splitter sets it from its rows
        split.setSizes([rows3, 240, 100])  # the rationale, reasons, buttons and keys below stay on a 768 px screen
        for k, stretch in enumerate((0, 1, 0)):
            split.setStretchFactor(k, stretch)
        layout.addWidget(split, 1)
        self.rationale = RationaleEdit(self.key)
        self.rationale.setPlaceholderText("rationale: Enter saves, Esc leaves")
        self.rationale.setToolTip(
            "needed for every adjudication: type it, Enter saves the verdict, Esc leaves the field"
        )
        layout.addWidget(self.rationale)
        row = QHBoxLayout()
        self.reject_combo = QComboBox()
        self.reject_combo.setToolTip("reject reason: 1-9 pick it by key")
        self.reject_combo.currentIndexChanged.connect(self._on_reason_picked)
        self.reject_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.reject_combo.setMinimumContentsLength(8)  # shrinks with the dock; the list shows whole reasons
        reason_row = QHBoxLayout()  # a row of its own: beside the buttons a reason read "evidence cannot set"
        reason_row.addWidget(QLabel("reject reason"))
        reason_row.addWidget(self.reject_combo, 1)
        layout.addLayout(reason_row)
        for text, key in (("Accept (A)", "A"), ("Reject (R)", "R"), ("Correct... (E)", "E")):
            b = QPushButton(text)
            b.clicked.connect(lambda _=False, key=key: self.key(key))
            row.addWidget(b)
        layout.addLayout(row)
        self.evidence_label = StatusLabel("")
        self.evidence_label.setStyleSheet(BAD_STYLE)
        self.pending = StatusLabel("")  # what the next save carries besides the verdict: the expert's confidence
        self.pending.setStyleSheet(HINT_STYLE)
        self.save = PendingSave()  # the verdict being saved and its outcome (the saved line says it)
        self.saved = StatusLabel("")
        layout.addWidget(StatusBand(self.evidence_label, self.pending, self.saved))
        dock.loader.applied.connect(self._on_evidence)
        self._load_soon = soon(
            lambda: self.view and self.dock.loader.load(self.view["item"], self.view["question"]), self
        )
        layout.addWidget(keys_label(EXPERT_KEYS_SHORT, EXPERT_KEYS))

    def show_evidence(self) -> None:
        """Its item's evidence in the viewer (only while this mode is in front: the other mode's item stays)."""
        if self.view is not None and self.dock.tabs.currentWidget() is self:
            self.dock.loader.wanted = self.view["item"]
            if self.dock.loader.ready(self.view["item"]):
                self.dock.loader.load(self.view["item"], self.view["question"])  # prepared ahead: in this turn
            else:
                self._load_soon()

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
        self.keys.needs_rationale = mode != "drafts"  # a draft's review takes a rationale if one is typed
        self.keys.levels = () if mode == "drafts" else tuple(confidence_keys().items())  # a draft's review has none
        self.table.setVisible(mode != "drafts")  # a draft has no stage-1 decisions
        if self.mode_combo.currentData() != mode:
            self.mode_combo.setCurrentIndex(self.mode_combo.findData(mode))
        if self.bank is not None:
            self.start(self.bank)

    def refresh(self, rows: list[dict[str, Any]] | None = None) -> None:
        """The queue read again (or `rows`, the queue just read) and listed."""
        if self.mode == "drafts":
            self._refresh_drafts()
            return
        if rows is None:
            own: list[str] = []  # flagged items this expert decided at stage 1: another expert's to adjudicate
            rows = api.queue(self.store, self.bank, user=self.user, own=own)
            self._own = len(own)
        self.rows = rows
        # (the count had said nothing of them: a store of 6 flagged items and a queue of 2, not a word why)
        wait = f"; {self._own} you decided at stage 1 wait for another expert" if self._own else ""
        self.count.setText(f"{len(self.rows)} item(s) to adjudicate, split decisions first{wait}")
        self.list.clear()
        for r in self.rows:
            it = QListWidgetItem(f"{r['id']}   {r['kind']}  ({r['flags']} of {r['decisions']} flagged)")
            it.setData(Qt.UserRole, r["item"])
            self.list.addItem(it)
        self.queue.set_items([r["item"] for r in self.rows])
        self.split.whole_rows()

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
        self.queue.set_items([r["item"] for r in self.rows])
        self.split.whole_rows()

    def show_item(self, key: str) -> None:
        if self.mode == "drafts":
            self._show_draft(key)
            return
        try:
            view = api.expert_view(self.store, key, user=self.user)
        except CORE_ERRORS as exc:  # shown in the dock
            say(self.saved, f"cannot open {key}: {exc}", ok=False)
            return
        self.view = view
        self.focus.setHtml(question_html(view["question"], drafts=item_drafts(self, view)))
        self.table.setRowCount(len(view["stage1"]))
        for i, d in enumerate(view["stage1"]):
            cells = (
                d["annotator"],
                d["verdict"] + (f"\n{d['confidence']} confidence" if d.get("confidence") else ""),
                ", ".join(reason_label(r) for r in d["reasons"]),
                d["comment"] or "",
                json.dumps(d["correction"], ensure_ascii=False) if d["correction"] else "",
                "" if d["seconds"] is None else f"{d['seconds']:.0f}",
            )
            for j, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                cell.setToolTip(", ".join(d["reasons"]) if j == 2 else text)  # the reasons' codes
                self.table.setItem(i, j, cell)
        for j in OPTIONAL:  # a column no annotator wrote in gives its room to the reasons
            self.table.setColumnHidden(j, not any(self.table.item(i, j).text() for i in range(self.table.rowCount())))
        self.table.resizeRowsToContents()
        self._fit_table_height()
        self._set_reasons([(r["label"], r["code"]) for r in view["reject_reasons"]])
        self.queue.show(key)
        for k in range(self.list.count()):
            if self.list.item(k).data(Qt.UserRole) == key:
                self.list.setCurrentRow(k)
        self.show_evidence()

    def _fit_table_height(self, max_rows: int = 3) -> None:
        """The decision table at least as tall as its first rows (two annotators' decisions are the usual case): at
        1366 x 768 the splitter had left it a row and a half, the second decision behind a scroll bar."""
        t = self.table
        # at the columns' widths now, and no less than a row is drawn: two one-line decisions ("flag / other",
        # "accept") hinted 15 px a row and were drawn 22 px tall, the second cut behind a scroll bar at 1366 x 768
        # (a row's own height may be stale, from narrower columns: the header's hint for it is measured now)
        head = t.verticalHeader()
        rows = sum(max(t.sizeHintForRow(i), head.sectionSizeHint(i)) for i in range(min(t.rowCount(), max_rows)))
        t.setMinimumHeight(t.horizontalHeader().sizeHint().height() + rows + 2 * t.frameWidth() + 2)
        t.setMaximumHeight(t.minimumHeight() if t.rowCount() <= max_rows else QWIDGETSIZE_MAX)  # no empty rows

    def _show_draft(self, key: str) -> None:
        try:
            view = api.draft_view(self.store, key, user=self.user)
        except CORE_ERRORS as exc:  # shown in the dock
            say(self.saved, f"cannot open {key}: {exc}", ok=False)
            return
        self.view = view
        self.focus.setHtml(question_html(view["question"], drafts=item_drafts(self, view)))
        self.table.setRowCount(0)
        self._set_reasons([(f"{r['label']} (→ {r['route']})", r["code"]) for r in view["reasons"]])
        self.queue.show(key)
        for k in range(self.list.count()):
            if self.list.item(k).data(Qt.UserRole) == key:
                self.list.setCurrentRow(k)
        self.show_evidence()

    def review_draft(self, verdict: str, *, reason=None, correction=None, rationale: str | None = None) -> bool:
        """Accept, correct or reject (with a reason whose route sends the item to a redraft or to a reference set
        by hand) the draft on show, through the core (reviewer review draft)."""
        if self.view is None:
            return False
        key = self.view["item"]
        why = rationale if rationale is not None else self.rationale.text().strip()
        self.save.start(key, f"draft {verdict}")
        try:
            out = api.review_draft(
                self.store, key, user=self.user, verdict=verdict, reason=reason, correction=correction,
                rationale=why or None, version=self.view["version"],
            )  # fmt: skip
        except CORE_ERRORS as exc:  # a failed save is shown and the item stays
            self.save.not_saved(refused_line(f"draft {verdict}", key, str(exc)))
            say(self.saved, self.save.message, ok=False)
            return False
        new = f", new version {out['new_version']}" if out["new_version"] else ""
        route = f" ({out['reason']} → {out['state']})" if out["reason"] else ""
        self.save.saved(f"saved: draft {out['verdict']} on {out['item']}{route}{new}")
        say(self.saved, self.save.message, ok=True)
        self._next_after_save()
        return True

    def _set_reasons(self, reasons: list[tuple[str, str]]) -> None:
        """The item's reject reasons, numbered for the 1-9 keys; a new item starts with nothing pending."""
        self._reason_labels = dict((code, label) for label, code in reasons)  # the saved line names the reason
        self.reject_combo.blockSignals(True)
        self.reject_combo.clear()
        for n, (label, code) in enumerate(reasons, 1):
            self.reject_combo.addItem(f"{n} {label}" if n < 10 else label, code)
        self.reject_combo.blockSignals(False)
        self.keys.reset([code for _label, code in reasons], self._reason_labels)  # a confidence too belongs to its item
        self._pending_text()
        self.rationale.clear()  # a rationale belongs to the item it was typed for
        self.evidence_label.setText("")

    def _on_reason_picked(self, index: int) -> None:
        if 0 <= index < len(self.keys.reasons):
            self.keys.reason = self.keys.reasons[index]

    def _next_after_save(self, rows: list[dict[str, Any]] | None = None) -> None:
        self.rationale.clear()
        self.refresh(rows)
        if self.rows:
            self.show_item(self.rows[0]["item"])
        else:
            self.view = None
            self.list.clear()
            self.table.setRowCount(0)
            self.focus.setHtml("<h3>Nothing left here.</h3>")

    def adjudicate(self, verdict: str, *, reasons=None, correction=None, rationale: str | None = None) -> bool:
        if self.view is None:
            return False
        if self.mode == "drafts":
            return self.review_draft(verdict, reason=(reasons or [None])[0], correction=correction, rationale=rationale)
        key = self.view["item"]
        self.save.start(key, verdict)
        try:
            decision = api.Decision(
                verdict,
                reasons=reasons,
                correction=correction,
                rationale=rationale if rationale is not None else self.rationale.text().strip(),
                confidence=self.keys.confidence,
            )
            out = api.adjudicate(self.store, key, decision, user=self.user, version=self.view["version"])
        except CORE_ERRORS as exc:  # a failed save is shown; the item stays unless someone else settled it meanwhile
            self.save.not_saved(refused_line(verdict, key, str(exc)))
            typed = rationale if rationale is not None else self.rationale.text().strip()
            self._after_refusal(key, typed, verdict, str(exc))
            return False
        new = f", new version {out['new_version']}" if out["new_version"] else ""
        sure = f", {self.keys.confidence} confidence" if self.keys.confidence else ""
        why = f" ({', '.join(self._reason_labels.get(r, r) for r in reasons)})" if reasons else ""
        self.save.saved(f"saved: {out['verdict']}{why}{sure} on {out['item']}{new} (decision {out['decision']})")
        say(self.saved, self.save.message, ok=True)
        self._next_after_save()
        return True

    def _after_refusal(self, key: str, typed: str, verdict: str, reason: str) -> None:
        """Another expert may have decided the item, or a maintainer reopened it, in another process: the queue as
        the store has it now says whether the item stays to be mended or gives way to the next (`after_refusal`)."""
        try:
            rows = api.queue(self.store, self.bank, user=self.user)
        except CORE_ERRORS:  # the queue unreadable: the item and what was typed stay
            rows = self.rows
        what = after_refusal(key, None, rows, typed)
        if what.action == "next":
            typing = self.rationale.hasFocus()
            self._next_after_save(rows)
            if typing:
                self._leave_field()  # the next item's keys are verdicts again, not text
        self.save.not_saved(refused_line(verdict, key, reason, what.why))
        say(self.saved, self.save.message, ok=False)

    def ask_correction(self):
        from reviewer.app.qt_review_forms import CorrectionForm

        self.dialog = CorrectionForm(self, self.view["question"], why_label="rationale")
        self.dialog.why.setText(self.rationale.text())
        self.dialog.submitted.connect(lambda corr, why, _c: self.adjudicate("correct", correction=corr, rationale=why))
        return open_form(self.dialog, self.dock.app.viewer)

    def step(self, by: int) -> bool:
        target = self.queue.step(by)
        if target is None or (self.view is not None and target == self.view["item"]):
            return by > 0 and self._look_again()
        self.show_item(target)
        return True

    def _look_again(self) -> bool:
        """N at the end of the list (or on an empty one) reads the queue again: annotators and other experts in
        other processes add and settle items while it is on screen, and it was read only at a save."""
        before = {r["item"] for r in self.rows}
        self.refresh()
        new = [r["item"] for r in self.rows if r["item"] not in before]
        if new:
            self.show_item(new[0])
        self._hint(
            f"{len(new)} new item(s) in your queue" if new else "nothing new in your queue (N at its end looks again)"
        )
        return True

    def key(self, key: str) -> bool:
        """One key of the expert's mode: what it does is decided by `ExpertKeys` (no Qt), done here."""
        self.keys.typing = self.rationale.hasFocus()
        self.keys.rationale = self.rationale.text()
        if self.view is None and key not in ("N", "P"):
            return False
        act = self.keys.key(key)
        if act.kind == "save":
            saved = self.adjudicate(act.verdict, reasons=[act.reason] if act.reason else None)
            if saved and self.rationale.hasFocus():
                self._leave_field()  # the next item's keys are verdicts again, not text
            return saved
        if act.kind == "ask_rationale":
            self.rationale.setFocus()
            self._show_in_dock(self.rationale)
            self._hint(act.message)
            return True
        if act.kind == "leave_field":
            self._leave_field()
            self._hint(act.message)
            return True
        if act.kind == "pick_reason":
            self.reject_combo.setCurrentIndex(self.keys.reasons.index(act.reason))
            self._hint(act.message)
            return True
        if act.kind in ("say", "cancel"):
            self._hint(act.message)
            return True
        if act.kind == "confidence":
            self._pending_text()
            self._show_in_dock(self.pending)
            return True
        if act.kind == "correct":
            return bool(self.ask_correction())
        if act.kind == "step":
            return self.step(act.by)
        return False

    def _leave_field(self) -> None:
        """The keys back to the canvas, as after the annotator's forms: the viewer's keys (dates, pair, stretch,
        F1) work there as well as the expert's (the list had taken the focus: Up / Down moved its selection)."""
        from reviewer.app.qt_window import give_keys_to_canvas

        give_keys_to_canvas(self.dock.app.viewer, fallback=self.list)

    def _on_evidence(self, key: str, problem: str) -> None:
        """Why the item's evidence is not in the viewer (a site not in the store, a folder missing), or nothing."""
        if self.view is not None and key == self.view["item"]:
            self.evidence_label.setText(f"evidence: {problem} (you can still decide)" if problem else "")
            self._prefetch_next()

    def _prefetch_next(self) -> None:
        """The next item of the queue prepared while the expert reads this one, as the annotator's dock does: after
        a verdict or N it shows in one turn (its evidence and series ready)."""
        nxt = self.queue.neighbour(+1)
        if self.mode == "drafts" or self.view is None or nxt is None or nxt == self.view["item"]:
            return
        try:
            question = api.expert_view(self.store, nxt, user=self.user)["question"]
        except CORE_ERRORS:
            return  # said when it is shown
        self.dock.loader.prefetch(question, nxt)

    def _show_in_dock(self, widget) -> None:
        """Scroll the dock (a short screen) so that `widget` and the hint under it are seen."""
        scroll_into_view(self.parentWidget(), self.saved, widget)

    def _pending_text(self) -> None:
        level = self.keys.confidence
        self.pending.setText(f"confidence: {level} (saved with the adjudication; {level[0].upper()} again: none)"
                             if level else "")  # fmt: skip

    def _hint(self, text: str) -> None:
        say(self.saved, text, ok=None)
