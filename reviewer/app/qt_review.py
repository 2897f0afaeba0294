"""The review dock: who is working, their bank, and one mode per role (annotator: my queue and the focus
view with keys; expert: adjudication; maintainer: assignment, progress, agreement, rule, log).

A thin view over `reviewer.review.api`: every read and write goes through it, so blinding, roles and
transitions are the core's. Each decision is saved the moment its key is pressed (one transaction).
"""

from __future__ import annotations

import html
import logging
from typing import Any

from qtpy.QtCore import Qt
from qtpy.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.errors import CORE_ERRORS
from reviewer.app.item_pipeline import PendingSave
from reviewer.app.qt_review_parts import (
    ANNOTATOR_KEYS,
    ANNOTATOR_KEYS_SHORT,
    BAD_STYLE,
    KeysLine,
    StatusBand,
    confidence_keys,
    item_drafts,
    keys_label,
    open_form,
    question_html,
    question_view,
    say,
    soon,
    window_keys,
)
from reviewer.app.qt_rows import WholeRowsSplitter
from reviewer.app.qt_style import StatusLabel
from reviewer.app.review_model import ReviewQueue, after_refusal, progress, refused_line, still_to_do
from reviewer.review import api

logger = logging.getLogger(__name__)

MARKS = {None: "·", "accept": "✓", "flag": "⚑", "skip": "↷"}
STATE_FILTERS = {"all": None, "undecided": (None, "skip"), "accepted": ("accept",), "flagged": ("flag",)}
SERIES_AHEAD = 6  # items past the next two whose series grids are read ahead (a small site's; EvidenceLoader.prefetch)
SHORTCUT_KEYS = (
    "A",
    "F",
    *"123456789",
    "C",
    "E",
    "R",
    "N",
    "P",
    "L",
    "M",
    "H",
    "Space",
    "Backspace",
    "Return",
    "Escape",
)


class ReviewDock(QWidget):
    """The dock: a mode per role under one header (who, bank); keys go to the mode in front."""

    def __init__(self, app, store, user: str, role: str, *, prefetch: bool = True) -> None:
        from reviewer.app.review_evidence import EvidenceLoader

        super().__init__()
        self.app, self.store, self.user, self.role = app, store, user, role
        self.loader = EvidenceLoader(app, store, prefetch=prefetch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        head = QHBoxLayout()
        head.addWidget(QLabel(f"<b>{html.escape(user)}</b> ({role})"))
        head.addWidget(QLabel("bank"))
        self.bank_combo = QComboBox()
        self.bank_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.bank_combo.setMinimumContentsLength(12)  # a long bank name shrinks with the dock, whole in the list
        head.addWidget(self.bank_combo, 1)
        layout.addLayout(head)
        self.tabs = QTabWidget()
        layout.addWidget(self.tabs, 1)
        self.annotator = self.expert = self.maintainer = None
        from reviewer.review.rules import workflow

        if workflow().allowed("annotate", role) and role != "maintainer":
            self.annotator = AnnotatorPanel(self)
            self.tabs.addTab(self.annotator, "Annotate")
        if workflow().allowed("adjudicate", role):
            from reviewer.app.qt_review_expert import ExpertPanel

            self.expert = ExpertPanel(self)
            self.tabs.addTab(self.expert, "Adjudicate")
        if role == "maintainer":
            from reviewer.app.qt_review_admin import MaintainerPanel

            self.maintainer = MaintainerPanel(self)
            self.tabs.addTab(self.maintainer, "Maintain")
        self.bank_combo.currentTextChanged.connect(self._on_bank)
        self.tabs.currentChanged.connect(self._on_tab)
        self._shortcuts = []
        for name in api.review_banks(store, user=user):
            self.bank_combo.addItem(name)
        if not self.bank_combo.count():
            self.tabs.setTabToolTip(0, "no bank to work on")

    @property
    def bank(self) -> str | None:
        return self.bank_combo.currentText() or None

    def panels(self) -> list[QWidget]:
        return [p for p in (self.annotator, self.expert, self.maintainer) if p is not None]

    def _on_bank(self, bank: str) -> None:
        if bank:
            for p in self.panels():
                p.start(bank)
            self.open_on_work()

    def open_on_work(self) -> None:
        """Bring the mode with work to the front (`first_mode`): an expert with nothing to annotate opens on the
        items waiting for adjudication, with that item's evidence in the viewer."""
        from reviewer.app.review_model import QueueWork, first_mode

        work = QueueWork(
            annotate=progress(self.annotator.rows).left if self.annotator else None,
            adjudicate=len(self.expert.rows) if self.expert else None,
            maintain=self.maintainer is not None,
        )
        panel = {"annotate": self.annotator, "adjudicate": self.expert, "maintain": self.maintainer}.get(
            first_mode(work)
        )
        if panel is not None and self.tabs.currentWidget() is not panel:
            self.tabs.setCurrentWidget(panel)  # its evidence follows (_on_tab)

    def _on_tab(self, _index: int) -> None:
        """The mode brought to the front shows its own item's evidence (not the other mode's)."""
        panel = self.tabs.currentWidget()
        show = getattr(panel, "show_evidence", None)
        if show is not None:
            show()

    def install_keys(self, window: QWidget) -> None:
        """Window-wide keys (not while typing in a text field: Qt gives those keys to the field). A maintainer's
        dock has none: its forms take Qt's own keys (Space on the focused Assign button had been eaten by Space)."""
        from reviewer.app.qt_dock_keys import order_tabs

        order_tabs(self.app, "Review")  # Tab from the canvas: this dock first
        if self.annotator is None and self.expert is None:
            return
        self._shortcuts += window_keys(window, SHORTCUT_KEYS, self.key)

    def key(self, key: str) -> bool:
        """Send a key to the mode in front; True when it did something. Esc also gives the keyboard back to the
        canvas from a dock's field (the window's Esc shortcut takes the key before the field's dock sees it)."""
        panel = self.tabs.currentWidget()
        handler = getattr(panel, "key", None)
        done = bool(handler(key)) if handler else False
        if key == "Escape":
            from reviewer.app.qt_wheel import leave_field

            done = leave_field() or done
        return done


def row_text(r: dict[str, Any]) -> str:
    """A queue row's line in the list: my mark, the item's id, its task and its site."""
    kind = r["task"] or r["question"].get("class")  # an 'insufficient' question has no task
    return f"{MARKS.get(r['mine'], '?')}  {r['id']}   {kind}   {r['site']}"


class AnnotatorPanel(QWidget):
    """My queue (filters, progress), the focus view of one item, the keys and the save status."""

    def __init__(self, dock: ReviewDock) -> None:
        super().__init__()
        self.dock, self.store, self.user = dock, dock.store, dock.user
        self.loader = dock.loader
        self.bank: str | None = None
        self.rows: list[dict[str, Any]] = []
        self.shown_rows: list[dict[str, Any]] = []
        self._listed: list[tuple[str, str]] = []  # (item, text) of each row of `list`, as set there
        self.view: dict[str, Any] | None = None
        self.comment: str | None = None
        self.confidence: str | None = None  # low / medium / high for the next decision (L / M / H), or not given
        self.flagging: list[str] | None = None  # reasons picked after F
        self.dialog = None
        self.queue = ReviewQueue()
        self.save = PendingSave()  # the decision being saved and its outcome (the saved line says it)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        filters = QHBoxLayout()
        self.site_combo, self.task_combo, self.state_combo = QComboBox(), QComboBox(), QComboBox()
        for label, combo in (("site", self.site_combo), ("task", self.task_combo), ("state", self.state_combo)):
            filters.addWidget(QLabel(label))
            filters.addWidget(combo, 1)
        self.state_combo.addItems(list(STATE_FILTERS))
        for combo in (self.site_combo, self.task_combo, self.state_combo):
            # the combos share the row and shrink with the dock (the longest site id or task name had made the
            # panel wider than its dock: a sideways scroll bar and cut question text); the list shows whole names
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(3)
            combo.currentIndexChanged.connect(lambda _: self._fill_list())
        layout.addLayout(filters)
        self.progress = QProgressBar()
        self.progress.setFormat("%v of %m done")
        self.progress.setToolTip("what you still have to decide (an item someone else closed counts as done)")
        layout.addWidget(self.progress)
        # the list in whole rows, the question taking what the window gives or takes: a second line in the status band
        # below (a comment or a confidence pending under the saved line) had cut the list's last row at 1366 x 768
        split = WholeRowsSplitter(min_rows=3)
        self.list = QListWidget()
        self.list.itemActivated.connect(lambda it: self.show_item(it.data(Qt.UserRole)))
        self.list.itemClicked.connect(lambda it: self.show_item(it.data(Qt.UserRole)))
        split.addWidget(self.list)
        self.focus = question_view()
        split.addWidget(self.focus)
        split.setSizes([160, 420])
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        layout.addWidget(split, 1)
        self.evidence_label = StatusLabel("")
        self.evidence_label.setStyleSheet(BAD_STYLE)
        self.pending = StatusLabel("")
        self.saved = StatusLabel("")
        layout.addWidget(StatusBand(self.evidence_label, self.pending, self.saved))
        self.keys_line = KeysLine(keys_label(ANNOTATOR_KEYS_SHORT, ANNOTATOR_KEYS))  # the flag bar in its place
        layout.addWidget(self.keys_line)
        self.loader.applied.connect(self._on_evidence)
        self._load_soon = soon(self._load_evidence, self)
        self._prefetch_waits = False  # the next items' prefetch waits for the item shown to be painted

    # ------------------------------------------------------------------ queue

    def start(self, bank: str) -> None:
        """Open a bank: my list, then the first undecided item in my order."""
        self.bank = bank
        self.refresh()
        for combo, name in ((self.site_combo, "site"), (self.task_combo, "task")):
            combo.blockSignals(True)
            combo.clear()
            combo.addItem("all")
            combo.addItems(sorted({str(r[name]) for r in self.rows}))
            combo.blockSignals(False)
        self._fill_list()
        try:
            view = api.next_item(self.store, bank, user=self.user)
        except CORE_ERRORS as exc:  # shown in the dock, never a traceback
            say(self.saved, f"cannot read the queue: {exc}", ok=False)
            return
        if view is None:
            self._done()
        else:
            self._show_view(view)

    def refresh(self, rows: list[dict[str, Any]] | None = None) -> None:
        """My rows read again (or `rows`, just read), the progress and the list."""
        self.rows = rows if rows is not None else api.my_items(self.store, self.bank, user=self.user)
        mine = progress(self.rows)
        self.progress.setRange(0, max(mine.total, 1))
        self.progress.setValue(mine.done)
        self.progress.setFormat(mine.text())
        self._fill_list()

    def _fill_list(self) -> None:
        site, task = self.site_combo.currentText(), self.task_combo.currentText()
        states = STATE_FILTERS.get(self.state_combo.currentText())
        self.shown_rows = [
            r
            for r in self.rows
            if (site in ("", "all") or str(r["site"]) == site)
            and (task in ("", "all") or str(r["task"]) == task)
            and (states is None or r["mine"] in states)
        ]
        self.list.blockSignals(True)
        keys = [r["item"] for r in self.shown_rows]
        self.queue.set_items(keys)
        # the rows' keys and texts as the list holds them (`_listed`), compared in Python: at each item change the
        # list is checked row by row, two Qt calls a row before (~1 ms a few hundred rows)
        texts = [row_text(r) for r in self.shown_rows]
        same = self.list.count() == len(keys) and [key for key, _ in self._listed] == keys
        if not same:  # another filter or queue: the list anew (a repaint of the whole list)
            self.list.clear()
            for key, text in zip(keys, texts, strict=True):
                it = QListWidgetItem(text)
                it.setData(Qt.UserRole, key)
                self.list.addItem(it)
        else:  # the same rows: only the marks that changed are set (each row repaints alone)
            for k, (text, (_, was)) in enumerate(zip(texts, self._listed, strict=True)):
                if text != was:
                    self.list.item(k).setText(text)
        self._listed = list(zip(keys, texts, strict=True))
        if self.view is not None and self.view["item"] in keys:
            it = self.list.item(keys.index(self.view["item"]))
            if self.list.currentItem() is not it:
                self.list.setCurrentItem(it)  # selects it, and only it
        if self.view is None:
            self.list.clearSelection()
        self.list.blockSignals(False)

    def show_item(self, key: str) -> None:
        try:
            self._show_view(api.open_item(self.store, key, user=self.user))
        except CORE_ERRORS as exc:
            say(self.saved, f"cannot open {key}: {exc}", ok=False)

    def _show_view(self, view: dict[str, Any]) -> None:
        self.view = view
        self.queue.show(view["item"])
        self.comment = None
        self.flagging = None
        self.keys_line.reserve(self._flag_bar([]))  # its room is kept for the item: opening it moves nothing
        self._pending_text()
        self.focus.setHtml(question_html(view["question"], view.get("your_decision"), item_drafts(self, view)))
        self._fill_list()
        self.evidence_label.setText("")
        if self.dock.tabs.currentWidget() is not self:
            return  # the mode behind keeps its item; its evidence comes when it is brought to the front
        self.loader.wanted = view["item"]
        if self.loader.ready(view["item"]):
            self._load_evidence()  # prepared ahead: shown in this turn, painted once with the dock
        else:
            self._load_soon()  # keys pressed in a burst: only the last one's item is asked for (`soon`)

    def show_evidence(self) -> None:
        """This mode came to the front: its item's evidence in the viewer."""
        if self.view is not None:
            self.loader.wanted = self.view["item"]
            self._load_evidence()

    def _load_evidence(self) -> None:
        """The shown item's evidence; the next items are prefetched once it is on screen (`_on_evidence`)."""
        view = self.view
        if view is None:
            return
        self.loader.load(view["item"], view["question"])  # (prepared ahead: applied in this turn)
        self.loader.prefetch(None)  # stale prefetch work stops now (a prefetch of this item goes on: it is loading)

    def _prefetch_when_painted(self) -> None:
        """The next items' prefetch starts once the item shown is painted (the canvas's next frame, `after_next_paint`):
        workers started with the item held the GIL while the UI thread painted it (2-3 x slower)."""
        from reviewer.app.qt_window import after_next_paint, canvas_widget

        if self._prefetch_waits:
            return
        self._prefetch_waits = True

        def start() -> None:
            self._prefetch_waits = False
            self._prefetch_next()

        canvas = canvas_widget(self.dock.app.viewer)
        if canvas is not None:
            canvas.update()  # a frame comes even when the item changed nothing on the canvas (one paint for both)
        after_next_paint(self.dock.app.viewer, start)

    def _prefetch_next(self) -> None:
        view = self.view
        if view is None or self.loader.changing():  # (the item shown prefetches once it is applied)
            return
        ahead, at = [], view["item"]  # the next items in my order: two prepared, the series of the rest read ahead
        while len(ahead) < 2 + SERIES_AHEAD:
            r = self._next_open(at)
            if r is None or r["item"] in (view["item"], *(x["item"] for x in ahead)):
                break
            ahead.append(r)
            at = r["item"]
        nxt = ahead[0] if ahead else None
        self.loader.prefetch(
            nxt["question"] if nxt else None,
            nxt["item"] if nxt else None,
            then=[(r["question"], r["item"]) for r in ahead[1:2]],
            later=[r["question"] for r in ahead[2:]],
        )

    def _on_evidence(self, key: str, problem: str) -> None:
        """The item shown is applied (or cannot be): say why not, and prefetch the next items once it is painted."""
        if self.view is not None and key == self.view["item"] and self.dock.tabs.currentWidget() is self:
            self.evidence_label.setText(f"evidence: {problem} (you can still decide or skip)" if problem else "")
            self._prefetch_when_painted()

    def _done(self) -> None:
        self.view = None
        self.queue.show(None)
        self.focus.setHtml(f"<h3>Nothing left to review in this bank.</h3><p>{progress(self.rows).text()}</p>")
        self._fill_list()

    def _next_open(self, after: str | None) -> dict[str, Any] | None:
        """The next item I can still decide after `after` in the list shown: not skipped first, then skipped."""
        rows = self.shown_rows or self.rows
        keys = [r["item"] for r in rows]
        start = keys.index(after) + 1 if after in keys else 0
        order = rows[start:] + rows[:start]
        for skipped in (False, True):
            for r in order:
                if r["open"] and r["mine"] not in ("accept", "flag") and r["skipped"] == skipped and r["item"] != after:
                    return r
        return None

    def step(self, by: int) -> None:
        """N / P: exactly one item in the list's order (`ReviewQueue`), held at its ends."""
        target = self.queue.step(by)
        if target is not None and (self.view is None or target != self.view["item"]):
            self.show_item(target)
        elif by > 0:
            self._look_again()

    def _look_again(self) -> None:
        """N at the end of the list (or with nothing left) reads the queue again: a maintainer's new batch or an
        item reopened in another process is open work the list, read at each save, has not shown yet."""
        before = {r["item"] for r in self.rows if still_to_do(r)}
        self.refresh()
        new = [r["item"] for r in self.rows if still_to_do(r) and r["item"] not in before]
        if new:
            self.show_item(new[0])
        said = f"{len(new)} new item(s) to review" if new else "nothing new to review (N at the end looks again)"
        say(self.saved, said, ok=True)

    # ------------------------------------------------------------------ decisions

    def decide(self, verdict: str, reasons: list[str] | None = None, correction: dict | None = None) -> bool:
        """Save one decision now; on failure say so and keep the item and its comment on screen."""
        if self.view is None:
            return False
        key = self.view["item"]
        words = {r["code"]: r["label"] for r in self.view.get("flag_reasons") or []}  # as the flag bar says them
        ev = self.loader.view.to_json() if self.loader.view is not None and self.loader.key == key else None
        self.save.start(key, verdict)
        try:
            decision = api.Decision(
                verdict,
                reasons=reasons,
                comment=self.comment,
                correction=correction,
                view=ev if verdict != "skip" else None,
                confidence=self.confidence if verdict != "skip" else None,
            )
            out = api.decide(self.store, key, decision, user=self.user, version=self.view["version"])
        except CORE_ERRORS as exc:  # a failed save is shown, the decision stays on screen ...
            self.save.not_saved(refused_line(verdict, key, str(exc)))
            say(self.saved, self.save.message, ok=False)
            self._after_refusal(key, verdict, str(exc))  # ... unless someone else acted on the item meanwhile
            return False
        why = f" ({', '.join(words.get(r, r) for r in out['reasons'])})" if out["reasons"] else ""
        sure = f", {self.confidence} confidence" if self.confidence and verdict != "skip" else ""
        self.save.saved(f"saved: {out['verdict']}{why}{sure} on {out['item']} (decision {out['decision']})")
        say(self.saved, self.save.message, ok=True)
        self.comment = None
        self.confidence = None
        self._pending_text()
        self.refresh()
        nxt = self._next_open(key)
        if nxt is None:
            self._done()
        else:
            self.show_item(nxt["item"])
        return True

    def _after_refusal(self, key: str, verdict: str, reason: str) -> None:
        """An expert may have closed or corrected the item, or a maintainer reopened it, in another process: the
        queue as the store has it now says whether it stays, is shown again at its new version, or gives way to the
        next (`after_refusal`)."""
        try:
            rows = api.my_items(self.store, self.bank, user=self.user)
        except CORE_ERRORS:  # the queue unreadable: the item and the decision stay on screen
            return
        what = after_refusal(key, self.view["version"] if self.view else None, rows, self.comment or "")
        if what.action == "stay":
            return
        self.comment = None
        self.confidence = None
        self._pending_text()
        self.refresh(rows)
        nxt = {"item": key} if what.action == "reload" else self._next_open(key)
        if nxt is None:
            self._done()
        else:
            self.show_item(nxt["item"])
        self.save.not_saved(refused_line(verdict, key, reason, what.why))
        say(self.saved, self.save.message, ok=False)

    def undo(self) -> bool:
        try:
            out = api.undo(self.store, self.bank, user=self.user)
        except CORE_ERRORS as exc:
            say(self.saved, f"nothing undone: {exc}", ok=False)
            return False
        say(self.saved, f"saved: took back {out['verdict']} on {out['item']}", ok=True)
        self.refresh()
        self.show_item(out["item"])
        return True

    def _flag_bar(self, picked: list[str]) -> str:
        reasons = self.view["flag_reasons"] if self.view else []
        menu = ", ".join(
            f"{'[x]' if r['code'] in picked else '[ ]'} {i} {r['label']}" for i, r in enumerate(reasons, 1)
        )
        return f"<b>flag</b>: {html.escape(menu)} - Enter saves, Esc cancels"

    def _pending_text(self) -> None:
        self.keys_line.show_bar(None if self.flagging is None else self._flag_bar(self.flagging))
        bits = []
        if self.comment:
            bits.append(f"comment: {html.escape(self.comment)}")
        if self.confidence:
            bits.append(f"confidence: {self.confidence} (saved with the next decision)")
        self.pending.setText("<br>".join(bits))

    def reason_code(self, n: int) -> str | None:
        reasons = self.view["flag_reasons"] if self.view else []
        return reasons[n - 1]["code"] if 0 < n <= len(reasons) else None

    def key(self, key: str) -> bool:
        """One key of the annotator mode."""
        if self.view is None and key not in ("N", "P", "Backspace"):
            return False
        if self.flagging is not None and key in ("1", "2", "3", "4"):
            code = self.reason_code(int(key))
            if code:
                self.flagging = [c for c in self.flagging if c != code] + ([] if code in self.flagging else [code])
            self._pending_text()
            return True
        if self.flagging is not None and key in ("Return", "F"):
            picked, self.flagging = self.flagging, None
            self._pending_text()
            return self.decide("flag", picked) if picked else False
        if key == "Escape":
            self.flagging = None
            self._pending_text()
            return True
        level = confidence_keys().get(key)
        if self.flagging is not None and level is None:
            # another decision, an undo or a step would drop the reasons being picked without a word (Backspace
            # took back the previous item's decision and closed the bar): the bar is left by its own keys
            say(self.saved, "the flag's reasons are open: Enter saves them, Esc cancels", ok=False)
            return True
        actions = {
            "A": lambda: self.decide("accept"),
            "F": self._start_flag,
            "Space": lambda: self.decide("skip"),
            "Backspace": self.undo,
            "N": lambda: self.step(1) or True,
            "P": lambda: self.step(-1) or True,
            "C": self.ask_comment,
            "E": self.ask_correction,
        }
        if level is not None:
            self.confidence = None if self.confidence == level else level
            self._pending_text()
            return True
        if key in ("1", "2", "3", "4"):
            code = self.reason_code(int(key))
            return self.decide("flag", [code]) if code else False
        action = actions.get(key)
        return bool(action()) if action else False

    def _start_flag(self) -> bool:
        self.saved.setText("")  # the last item's 'saved' line would read as this one's
        self.flagging = []
        self._pending_text()
        return True

    def ask_comment(self):
        from reviewer.app.qt_review_forms import CommentDialog

        self.dialog = CommentDialog(self, self.comment or "")

        def done() -> None:
            self.comment = self.dialog.edit.text().strip() or None
            self._pending_text()

        self.dialog.accepted.connect(done)
        return open_form(self.dialog, self.dock.app.viewer)

    def ask_correction(self):
        from reviewer.app.qt_review_forms import CorrectionForm

        reasons = [r for r in self.view["flag_reasons"]]
        self.dialog = CorrectionForm(self, self.view["question"], flag_reasons=reasons, why_label="reason")
        self.dialog.submitted.connect(
            lambda corr, why, code: self.decide("flag", [code], correction={**corr, "reason": why})
        )
        return open_form(self.dialog, self.dock.app.viewer)
