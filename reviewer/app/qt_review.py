"""The review dock: who is working, their bank, and one mode per role (annotator: my queue and the focus
view with keys; expert: adjudication; maintainer: assignment, progress, agreement, rule, log).

A thin view over `reviewer.review.api`: every read and write goes through it, so blinding, roles and
transitions are the core's. Each decision is saved the moment its key is pressed (one transaction).
"""

from __future__ import annotations

import html
import json
import logging
from collections.abc import Callable
from typing import Any

from qtpy.QtCore import Qt
from qtpy.QtGui import QKeySequence
from qtpy.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QShortcut,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.item_pipeline import PendingSave
from reviewer.app.review_model import ReviewQueue, progress
from reviewer.app.review_sensor_break import sensor_break_html
from reviewer.review import api

logger = logging.getLogger(__name__)

#: keys of the annotator mode (also listed in the Keys help dialog)
ANNOTATOR_KEYS = (
    ("A", "accept"),
    ("F then 1-4, Enter", "flag with the reasons picked (1-4 toggle them)"),
    ("1-4", "flag with that reason at once"),
    ("C", "comment (saved with the decision)"),
    ("L / M / H", "my confidence in the next decision: low / medium / high (again: not given)"),
    ("E", "suggest a correction (a flag with the corrected fields)"),
    ("Space", "skip (the item comes back at the end)"),
    ("Backspace", "undo my last decision"),
    ("N / P", "next / previous item"),
)
EXPERT_KEYS = (
    ("A", "accept (asks for the rationale if none is typed)"),
    ("1-9, R", "pick the reject reason; reject"),
    ("Enter / Esc", "in the rationale: save / leave the field"),
    ("E", "correct (form with the diff)"),
    ("N / P", "next / previous item"),
)
#: the same keys in a word each, for the line under the dock (every key whole at 1366 x 768; F1 has the full list)
ANNOTATOR_KEYS_SHORT = (
    ("A", "accept"),
    ("F, 1-4", "flag"),
    ("C", "comment"),
    ("L/M/H", "confidence"),
    ("E", "correct"),
    ("Space", "skip"),
    ("Backspace", "undo"),
    ("N / P", "next / previous"),
    ("F1", "all keys"),
)
EXPERT_KEYS_SHORT = (
    ("A", "accept"),
    ("1-9, R", "reject"),
    ("Enter", "save"),
    ("Esc", "leave the rationale"),
    ("E", "correct"),
    ("N / P", "next / previous"),
    ("F1", "all keys"),
)
MARKS = {None: "·", "accept": "✓", "flag": "⚑", "skip": "↷"}
STATE_FILTERS = {"all": None, "undecided": (None, "skip"), "accepted": ("accept",), "flagged": ("flag",)}
OK_STYLE, BAD_STYLE = "color: #6bd36b", "color: #ff6b6b; font-weight: bold"
HINT_STYLE = "color: #e0c060"
#: the next item's evidence is prepared this long after an item shows: workers started with the item held the GIL
#: while the UI thread changed the docks and painted them (2-3 x slower); the annotator reads for seconds anyway
PREFETCH_DELAY_MS = 250
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


def soon(func, parent) -> Any:
    """A handler that calls `func` on the next event-loop turn, once however often it was called before."""
    from qtpy.QtCore import QTimer

    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(0)
    timer.timeout.connect(func)
    return timer.start


def confidence_keys() -> dict[str, str]:
    """Key -> confidence level: each level of assets/review/quality.json by its first letter (L, M, H)."""
    from reviewer.review.quality import quality_settings

    return {level[0].upper(): level for level in quality_settings().confidence}


def keys_html(keys: tuple[tuple[str, str], ...]) -> str:
    return " &nbsp;·&nbsp; ".join(f"<b>{html.escape(k)}</b> {html.escape(v)}" for k, v in keys)


def keys_label(keys: tuple[tuple[str, str], ...], full: tuple[tuple[str, str], ...] | None = None) -> QLabel:
    """The line under a dock that lists its keys (the review, adjudication and coding docks); `full`: what each
    does at length, in its tooltip (and in F1)."""
    label = QLabel(keys_html(keys))
    label.setWordWrap(True)
    label.setStyleSheet("color: #aaa")
    if full:
        label.setToolTip("<br>".join(f"<b>{html.escape(k)}</b> {html.escape(v)}" for k, v in full))
    return label


def window_keys(window: QWidget, keys: tuple[str, ...], on_key: Callable[[str], Any]) -> list[QShortcut]:
    """Window-wide shortcuts calling on_key(key) (a dock's keys; Qt gives keys typed in a text field to the field)."""
    out = []
    for key in keys:
        sc = QShortcut(QKeySequence(key), window)
        sc.setContext(Qt.WindowShortcut)
        sc.activated.connect(lambda key=key: on_key(key))
        out.append(sc)
    return out


def neighbour(ids: list[str], current: str | None, by: int) -> str | None:
    """The id `by` places from `current` in a queue, held at its ends: what N / P go to (`ReviewQueue` also keeps
    the place of an item that left the list)."""
    queue = ReviewQueue()
    queue.set_items(ids)
    queue.show(current)
    return queue.neighbour(by)


def draft_html(drafts: dict[str, Any] | None) -> str:
    """The item's AI draft beside the evidence (reviewer.drafting.item_draft): answer, conclusion, what is visible,
    alternatives, caveats, confidence (or that the study hides it), model and prompt; then any second opinions."""
    e = html.escape
    if not drafts or (not drafts.get("draft") and not drafts.get("second_opinions")):
        return (
            "<p style='color:#999'>AI draft: none for this item (a maintainer drafts visual items: reviewer draft)</p>"
        )

    def one(title: str, d: dict[str, Any]) -> str:
        conf = "hidden (study setting)" if d.get("confidence") is None else f"{d['confidence']}"
        answer = ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}" for k, v in (d.get("answer") or {}).items())
        seen = "".join(f"<li>{e(str(v))}</li>" for v in (d.get("visible") or []))
        return (
            f"<p><b>{e(title)}</b> ({e(str(d.get('model')))}, prompt {e(str(d.get('prompt_version')))}): "
            f"{e(str(d.get('conclusion')))}<br>answer: {e(answer)}<br>confidence: {e(conf)}</p>"
            + (f"<ul>{seen}</ul>" if seen else "")
            + (
                f"<p>alternatives: {e('; '.join(map(str, d.get('alternatives') or [])))}</p>"
                if d.get("alternatives")
                else ""
            )
            + (f"<p>caveats: {e('; '.join(map(str, d.get('caveats') or [])))}</p>" if d.get("caveats") else "")
        )

    parts = [one("AI draft", drafts["draft"])] if drafts.get("draft") else []
    parts += [one(f"second opinion {i}", d) for i, d in enumerate(drafts.get("second_opinions") or [], 1) if d]
    return "".join(parts)


def question_html(q: dict[str, Any], mine: dict[str, Any] | None = None, drafts: dict[str, Any] | None = None) -> str:
    """The focus view of one question: text, fields, reference and range, how the reference was computed
    (every method's value and their agreement), template and phrasing, sensors, the AI draft."""
    e = html.escape
    parts = [f"<h3>{e(str(q.get('id')))}</h3><p style='font-size:11pt'>{e(q.get('text', ''))}</p>"]
    period = q.get("period") or {}
    parts.append(
        f"<p>site <b>{e(str(q.get('site')))}</b>, {e(str(period.get('start')))} to {e(str(period.get('end')))}, "
        f"{e(str(q.get('class')))}" + (f" / {e(str(q['task']))}" if q.get("task") else "") + "</p>"
    )
    ref, rng = q.get("reference") or {}, q.get("reference_range") or {}
    rows = []
    for f in q.get("fields", []):
        name = f["name"]
        kind = f.get("type", "")
        unit = f" {f['unit']}" if f.get("unit") else ""
        opts = f" ({' | '.join(map(str, f['options']))})" if f.get("options") else ""
        conclusion = " <i>(scored)</i>" if q.get("conclusion") == name else ""
        r = rng.get(name)
        range_text = f"[{r[0]}, {r[1]}]" if r else ""
        rows.append(
            f"<tr><td><b>{e(name)}</b>{conclusion}</td><td>{e(kind + unit + opts)}</td>"
            f"<td>{e(json.dumps(ref.get(name), ensure_ascii=False))}</td><td>{e(range_text)}</td></tr>"
        )
    parts.append(
        "<table cellspacing=4><tr><th align=left>field</th><th align=left>type</th><th align=left>reference</th>"
        "<th align=left>range</th></tr>" + "".join(rows) + "</table>"
    )
    parts.append(sensor_break_html(q))
    prov = q.get("provenance") or {}
    parts.append(f"<p>reference source <b>{e(str(q.get('reference_source')))}</b>")
    if prov.get("reference_pending"):
        parts.append(" (a draft: to be set by review)")
    parts.append("</p>")
    methods = prov.get("methods") or {}
    if methods:
        lines = []
        for key, val in methods.items():
            if isinstance(val, dict):
                vals = ", ".join(f"{m} {json.dumps(v, ensure_ascii=False)}" for m, v in val.items())
                lines.append(f"<b>{e(key)}</b>: {e(vals)}")
            else:
                lines.append(f"{e(key)} {e(json.dumps(val, ensure_ascii=False))}")
        parts.append("<p>methods: " + "<br>".join(lines) + "</p>")
    if prov.get("agreement"):
        agree = ", ".join(f"{k} {v:.0%}" if isinstance(v, float) else f"{k} {v}" for k, v in prov["agreement"].items())
        parts.append(f"<p>agreement among methods: {e(agree)}</p>")
    parts.append(
        f"<p>template <b>{e(str(prov.get('template', '-')))}</b>, phrasing {e(str(prov.get('phrasing', '-')))}; "
        f"sensors {e(', '.join(q.get('sensors') or []) or '-')}"
        f"{' (spans several sensors)' if q.get('multi_sensor') else ''}</p>"
    )
    parts.append(draft_html(drafts))
    if mine:
        why = f" ({', '.join(mine['reasons'])})" if mine.get("reasons") else ""
        parts.append(f"<p><b>your decision</b>: {e(mine['verdict'] + why)}</p>")
    return "".join(parts)


def item_drafts(panel: Any, view: dict[str, Any]) -> dict[str, Any] | None:
    """The drafts of the item on show, as the core gives them to this user (None when they cannot be read)."""
    from reviewer.drafting import item_draft

    try:
        return item_draft(panel.store, view["item"], user=panel.user)
    except Exception:  # noqa: BLE001 - the focus view still shows the question
        logger.warning("cannot read the drafts of %s", view.get("item"), exc_info=True)
        return None


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
        """Window-wide keys (not while typing in a text field: Qt gives those keys to the field)."""
        self._shortcuts += window_keys(window, SHORTCUT_KEYS, self.key)

    def key(self, key: str) -> bool:
        """Send a key to the mode in front; True when it did something."""
        panel = self.tabs.currentWidget()
        handler = getattr(panel, "key", None)
        return bool(handler(key)) if handler else False


class AnnotatorPanel(QWidget):
    """My queue (filters, progress), the focus view of one item, the keys and the save status."""

    def __init__(self, dock: ReviewDock) -> None:
        super().__init__()
        self.dock, self.store, self.user = dock, dock.store, dock.user
        self.loader = dock.loader
        self.bank: str | None = None
        self.rows: list[dict[str, Any]] = []
        self.shown_rows: list[dict[str, Any]] = []
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
        split = QSplitter(Qt.Vertical)
        self.list = QListWidget()
        self.list.itemActivated.connect(lambda it: self.show_item(it.data(Qt.UserRole)))
        self.list.itemClicked.connect(lambda it: self.show_item(it.data(Qt.UserRole)))
        split.addWidget(self.list)
        self.focus = QTextBrowser()
        split.addWidget(self.focus)
        split.setSizes([160, 420])
        layout.addWidget(split, 1)
        self.evidence_label = QLabel("")
        self.evidence_label.setWordWrap(True)
        self.evidence_label.setStyleSheet(BAD_STYLE)
        layout.addWidget(self.evidence_label)
        self.pending = QLabel("")
        self.pending.setWordWrap(True)
        layout.addWidget(self.pending)
        self.saved = QLabel("")
        self.saved.setWordWrap(True)
        layout.addWidget(self.saved)
        layout.addWidget(keys_label(ANNOTATOR_KEYS_SHORT, ANNOTATOR_KEYS))
        self.loader.applied.connect(self._on_evidence)
        self._load_soon = soon(self._load_evidence, self)
        from reviewer.app.jobs import when_settled

        self._prefetch_later = when_settled(self._prefetch_next, PREFETCH_DELAY_MS, self)

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
        except Exception as exc:  # noqa: BLE001 - shown in the dock, never a traceback
            self._say(f"cannot read the queue: {exc}", ok=False)
            return
        if view is None:
            self._done()
        else:
            self._show_view(view)

    def refresh(self) -> None:
        self.rows = api.my_items(self.store, self.bank, user=self.user)
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
        same = self.list.count() == len(keys) and all(
            self.list.item(k).data(Qt.UserRole) == key for k, key in enumerate(keys)
        )
        if not same:  # another filter or queue: the list anew (a repaint of the whole list)
            self.list.clear()
        for k, r in enumerate(self.shown_rows):
            kind = r["task"] or r["question"].get("class")  # an 'insufficient' question has no task
            text = f"{MARKS.get(r['mine'], '?')}  {r['id']}   {kind}   {r['site']}"
            if same:  # the same rows: only the marks that changed are set (each row repaints alone)
                it = self.list.item(k)
                if it.text() != text:
                    it.setText(text)
            else:
                it = QListWidgetItem(text)
                it.setData(Qt.UserRole, r["item"])
                self.list.addItem(it)
            if self.view is not None and r["item"] == self.view["item"] and self.list.currentItem() is not it:
                self.list.setCurrentItem(it)  # selects it, and only it
        if self.view is None:
            self.list.clearSelection()
        self.list.blockSignals(False)

    def show_item(self, key: str) -> None:
        try:
            self._show_view(api.open_item(self.store, key, user=self.user))
        except Exception as exc:  # noqa: BLE001
            self._say(f"cannot open {key}: {exc}", ok=False)

    def _show_view(self, view: dict[str, Any]) -> None:
        self.view = view
        self.queue.show(view["item"])
        self.comment = None
        self.flagging = None
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
            self._load_soon()

    def show_evidence(self) -> None:
        """This mode came to the front: its item's evidence in the viewer."""
        if self.view is not None:
            self.loader.wanted = self.view["item"]
            self._load_evidence()

    def _load_evidence(self) -> None:
        """The shown item's evidence, and the next one's prefetched (keys pressed in a burst load once)."""
        view = self.view
        if view is None:
            return
        self.loader.load(view["item"], view["question"])
        self.loader.prefetch(None)  # stale prefetch work stops now ...
        self._prefetch_later()  # ... and the next item's starts once this one is on screen

    def _prefetch_next(self) -> None:
        view = self.view
        if view is None:
            return
        if self.loader.changing():  # (another site's item still showing: its workers would slow its last paints)
            self._prefetch_later()
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
        if self.view is not None and key == self.view["item"]:
            self.evidence_label.setText(f"evidence: {problem} (you can still decide or skip)" if problem else "")

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

    # ------------------------------------------------------------------ decisions

    def decide(self, verdict: str, reasons: list[str] | None = None, correction: dict | None = None) -> bool:
        """Save one decision now; on failure say so and keep the item and its comment on screen."""
        if self.view is None:
            return False
        key = self.view["item"]
        ev = self.loader.view.to_json() if self.loader.view is not None and self.loader.key == key else None
        self.save.start(key, verdict)
        try:
            out = api.decide(
                self.store,
                key,
                user=self.user,
                verdict=verdict,
                reasons=reasons,
                comment=self.comment,
                correction=correction,
                version=self.view["version"],
                view=ev if verdict != "skip" else None,
                confidence=self.confidence if verdict != "skip" else None,
            )
        except Exception as exc:  # noqa: BLE001 - a failed save is shown, the decision stays on screen
            self.save.not_saved(f"NOT saved: {verdict} {key}: {exc}")
            self._say(self.save.message, ok=False)
            return False
        why = f" ({', '.join(out['reasons'])})" if out["reasons"] else ""
        sure = f", {self.confidence} confidence" if self.confidence and verdict != "skip" else ""
        self.save.saved(f"saved: {out['verdict']}{why}{sure} on {out['item']} (decision {out['decision']})")
        self._say(self.save.message, ok=True)
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

    def undo(self) -> bool:
        try:
            out = api.undo(self.store, self.bank, user=self.user)
        except Exception as exc:  # noqa: BLE001
            self._say(f"nothing undone: {exc}", ok=False)
            return False
        self._say(f"saved: took back {out['verdict']} on {out['item']}", ok=True)
        self.refresh()
        self.show_item(out["item"])
        return True

    def _say(self, text: str, *, ok: bool) -> None:
        self.saved.setText(html.escape(text))
        self.saved.setStyleSheet(OK_STYLE if ok else BAD_STYLE)

    def _pending_text(self) -> None:
        bits = []
        if self.flagging is not None:
            reasons = self.view["flag_reasons"] if self.view else []
            menu = ", ".join(
                f"{'[x]' if r['code'] in self.flagging else '[ ]'} {i} {r['label']}" for i, r in enumerate(reasons, 1)
            )
            bits.append(f"<b>flag</b>: {html.escape(menu)} - Enter saves, Esc cancels")
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
        level = confidence_keys().get(key)
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
        self.dialog.show()
        return self.dialog

    def ask_correction(self):
        from reviewer.app.qt_review_forms import CorrectionForm

        reasons = [r for r in self.view["flag_reasons"]]
        self.dialog = CorrectionForm(self, self.view["question"], flag_reasons=reasons, why_label="reason")
        self.dialog.submitted.connect(
            lambda corr, why, code: self.decide("flag", [code], correction={**corr, "reason": why})
        )
        self.dialog.show()
        return self.dialog
