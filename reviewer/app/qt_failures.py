"""The failure-coding dock (issue 13): one run of a coding set at a time, coded with the keyboard.

A thin view over reviewer.failures: the list is `coding.queue` (or `check.check_queue` in the check mode), what
the coder reads is `coding.run_view` (or `check.check_view`), and a key saves through `coding.code_run`, the
functions `reviewer failures list/show/code` call. None of them holds the LLM's code, quote or uncertain flag, so
the expert check is blind by construction, not by hiding. The question's evidence goes to the viewer through the
review dock's EvidenceLoader (its site opens in the session's worker).
"""

from __future__ import annotations

import html
import json
import logging
import re
from pathlib import Path
from typing import Any

from qtpy.QtCore import Qt
from qtpy.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QScrollArea,
    QShortcut,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.errors import CORE_ERRORS
from reviewer.app.qt_review_parts import BAD_STYLE, FAILURE_KEYS, keys_label, neighbour, say, soon, window_keys
from reviewer.app.qt_style import set_style

logger = logging.getLogger(__name__)

#: the dock's modes: (name, label, part, check sample only)
MODES = (
    ("steps", "steps: first wrong step", "steps", False),
    ("pairs", "pairs: sensor report", "pairs", False),
    ("check-steps", "check sample, steps (blind)", "steps", True),
    ("check-pairs", "check sample, pairs (blind)", "pairs", True),
)
SHORTCUT_KEYS = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "C", "N", "P")
CANDIDATE_STYLE = "background-color:#4a4020"


def _j(value: Any) -> str:
    return html.escape(json.dumps(value, ensure_ascii=False))


def _known(value) -> str:
    """A figure the run may not have recorded: 'not given', never 'None'."""
    return "not given" if value is None else str(value)


def code_words(part: str) -> dict[str, str]:
    """A part's codes in the codebook's words ("time_sampling" -> "Time sampling"), as the code list shows them."""
    from reviewer.failures.codebook import codebook
    from reviewer.failures.coding import SCHEME_OF_PART

    return {c.code: c.label for c in codebook().schemes[SCHEME_OF_PART[part]].codes}


def run_line(row: dict[str, Any]) -> str:
    """A run in the coder's list: this coder's code in force in the codebook's words (it showed the code,
    "✓ time_sampling"), or a dot, then the run, model and question."""
    code = row["my_code"]
    mark = f"✓ {code_words(row['part']).get(code, code)}" if code else "·"
    return f"{mark}   {row['run']}  {row['model']}  {row['question']}"


def statement_html(s: dict[str, Any], labels: dict[str, str]) -> str:
    """One statement of a report; a candidate one shaded, the words the keyword passes matched in bold, and the
    passes it matched after it."""
    text = s["text"]
    if not s["candidate"]:
        return f"<li>{html.escape(text)}</li>"
    words = sorted({w for ws in s["passes"].values() for w in ws}, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(w) for w in words))
    out, at = [], 0
    for m in pattern.finditer(text):
        out += [html.escape(text[at : m.start()]), f"<b><u>{html.escape(m.group(0))}</u></b>"]
        at = m.end()
    out.append(html.escape(text[at:]))
    hits = "; ".join(f"{labels.get(k, k)}: {', '.join(v)}" for k, v in s["passes"].items())
    return (
        f"<li style='{CANDIDATE_STYLE}'><span style='{CANDIDATE_STYLE}'>&gt;&gt; {''.join(out)}</span> "
        f"<span style='color:#aaa'>[{html.escape(hits)}]</span></li>"
    )


def view_html(view: dict[str, Any]) -> str:
    """The run as the coder reads it (the same fields `reviewer failures show` prints)."""
    from reviewer.failures.codebook import keyword_passes

    e = html.escape
    labels = {p.name: p.label for p in keyword_passes()}
    q = view["question"]
    rng = f" (range {q['range'][0]} to {q['range'][1]})" if q["range"] else ""
    period = q.get("period") or {}
    head = f"{view['model']}, pass {view['pass']}, {view['condition']}"
    if view["pair"]:
        head += f", pair {view['pair']} ({view['outcome']})"
    parts = [f"<h3>{e(view['run'])}: {e(head)}</h3>"]
    if view.get("alteration"):
        from reviewer.failures.coding import alteration_text

        parts.append(f"<p>altered: <b>{e(alteration_text(view['alteration']))}</b></p>")
    parts += [
        f"<p><b>{e(q['id'])}</b> ({e(str(period.get('start')))} to {e(str(period.get('end')))}): {e(q['text'])}</p>",
        f"<p>reference <b>{e(q['conclusion'])}</b>: {_j(q['reference'])}{e(rng)}",
    ]
    for k, f in q["other_fields"].items():
        r = f" (range {f['range'][0]} to {f['range'][1]})" if f["range"] else ""
        parts.append(f"<br>&nbsp;&nbsp;reference {e(k)}: {_j(f['reference'])}{e(r)}")
    verdict = "right" if view["right"] else "wrong"
    parts.append(
        f"</p><p>answer: <b>{_j(view['answer'])}</b> ({verdict}), confidence <b>{e(_known(view['confidence']))}</b>"
    )
    for k, v in view["answer_fields"].items():
        parts.append(f"<br>&nbsp;&nbsp;answer {e(k)}: {_j(v)}")
    parts.append("</p>")
    for name in ("method", "caveats"):
        items = "".join(statement_html(s, labels) for s in view[name]) or "<li style='color:#999'>(none)</li>"
        parts.append(f"<p><b>{'method summary' if name == 'method' else 'caveats'}</b></p><ul>{items}</ul>")
    others = [
        f"<li>pass {o['pass']}: {_j(o['conclusion'])} ({'right' if o['right'] else 'wrong'}), "
        f"confidence {e(_known(o['confidence']))}</li>"
        for o in view["other_passes"]
    ]
    parts.append("<p><b>the same model's other passes</b></p><ul>" + ("".join(others) or "<li>(none)</li>") + "</ul>")
    w = view["work"]
    work = [
        f"{w[key]} {what}"
        for key, what in (("tool_calls", "tool calls"), ("minutes", "minutes"), ("image_views", "images viewed"))
        if w.get(key) is not None
    ]
    parts.append(f"<p>work: {e(', '.join(work) or 'not recorded by the run')}</p>")
    if view["my_code"]:
        note = f" ({view['my_code']['note']})" if view["my_code"]["note"] else ""
        parts.append(f"<p><b>your code</b>: {e(view['my_code']['code'] + note)}</p>")
    return "".join(parts)


class FailuresDock(QWidget):
    """The coding dock on one coding set for one coder (`app`: ReviewerApp, for the evidence in its viewer)."""

    def __init__(self, app, store, doc: dict[str, Any], user: str, role: str, *, prefetch: bool = True) -> None:
        from reviewer.app.review_evidence import EvidenceLoader

        super().__init__()
        self.app, self.store, self.doc, self.user, self.role = app, store, doc, user, role
        self.loader = EvidenceLoader(app, store, prefetch=prefetch) if app is not None else None
        self.rows: list[dict[str, Any]] = []
        self.view: dict[str, Any] | None = None
        self.mode = MODES[0]
        self._shortcuts: list[QShortcut] = []
        self._build()
        if self.loader is not None:
            self.loader.applied.connect(self._on_evidence)
        self._load_soon = soon(self._load_evidence, self)
        self.set_mode("steps")

    # ------------------------------------------------------------------ layout

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        bank = self.doc["bank"]
        layout.addWidget(
            QLabel(
                f"<b>{html.escape(self.user)}</b> ({html.escape(self.role)}) coding <b>{html.escape(self.doc['id'])}</b>"
                f" of {html.escape(bank['name'])} {html.escape(bank['version'])}"
            )
        )
        head = QHBoxLayout()
        head.addWidget(QLabel("mode"))
        self.mode_combo = QComboBox()
        for name, label, _part, _check in MODES:
            self.mode_combo.addItem(label, name)
        self.mode_combo.currentIndexChanged.connect(lambda i: self.set_mode(self.mode_combo.itemData(i)))
        head.addWidget(self.mode_combo, 1)
        layout.addLayout(head)
        self.progress = QProgressBar()
        layout.addWidget(self.progress)
        split = QSplitter(Qt.Vertical)
        self.list = QListWidget()
        self.list.itemClicked.connect(lambda it: self.show_run(it.data(Qt.UserRole)))
        self.list.itemActivated.connect(lambda it: self.show_run(it.data(Qt.UserRole)))
        split.addWidget(self.list)
        self.text = QTextBrowser()
        split.addWidget(self.text)
        self.codes_box = QWidget()  # in the splitter too: the coder gives the run or the codebook more room
        self.codes_layout = QVBoxLayout(self.codes_box)
        self.codes_layout.setContentsMargins(0, 2, 0, 0)
        self.codes_layout.setSpacing(2)
        scroll = QScrollArea()  # the definitions wrap; a short pane scrolls instead of clipping them
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.NoFrame)
        scroll.setWidget(self.codes_box)
        split.addWidget(scroll)
        split.setSizes([80, 470, 320])
        split.setCollapsible(1, False)
        layout.addWidget(split, 1)
        self.rule = QLabel("")
        self.rule.setWordWrap(True)
        self.rule.setStyleSheet("color: #ccb")
        layout.addWidget(self.rule)
        note = QHBoxLayout()
        note.addWidget(QLabel("note"))
        self.note = QLineEdit()
        self.note.setPlaceholderText("C: a note kept with the next code")
        self.note.returnPressed.connect(self._leave_note)
        note.addWidget(self.note, 1)
        layout.addLayout(note)
        self.evidence_label = QLabel("")
        self.evidence_label.setWordWrap(True)
        layout.addWidget(self.evidence_label)
        self.saved = QLabel("")
        self.saved.setWordWrap(True)
        layout.addWidget(self.saved)
        layout.addWidget(keys_label(FAILURE_KEYS))

    def _show_codes(self, view: dict[str, Any] | None) -> None:
        """The scheme's codes in the codebook's order, each with its key; the definition beside it and the
        worked example on hover."""
        while self.codes_layout.count():
            w = self.codes_layout.takeAt(0).widget()  # a stretch has no widget
            if w is not None:
                w.hide()  # gone at once, not on the next event-loop turn
                w.deleteLater()
        self.code_labels: dict[str, QLabel] = {}
        if view is None:
            self.rule.setText("")
            self.rule.hide()
            return
        from reviewer.failures.codebook import codebook

        scheme = codebook().schemes[view["scheme"]]
        mine = (view.get("my_code") or {}).get("code")
        for c in scheme.codes:
            mark = " ✓" if c.code == mine else ""
            label = QLabel(
                f"<b>{html.escape(c.key)}</b> {html.escape(c.label)}{mark} "
                f"<span style='color:#aaa'>{html.escape(c.definition)}</span>"
            )
            label.setWordWrap(True)
            label.setToolTip(f"{c.code}: {c.definition}\n\nexample: {c.example}")
            if c.code == mine:
                label.setStyleSheet("background-color: #2d4a2d")
            self.codes_layout.addWidget(label)
            label.show()  # at once (a layout shows a new child on the next event-loop turn)
            self.code_labels[c.code] = label
        self.codes_layout.addStretch(1)
        self.rule.setText(f"rule: {scheme.real_event_rule}" if scheme.real_event_rule else "")
        self.rule.setVisible(bool(scheme.real_event_rule))

    # ------------------------------------------------------------------ the list

    @property
    def part(self) -> str:
        return self.mode[2]

    @property
    def checking(self) -> bool:
        return self.mode[3]

    def set_mode(self, name: str) -> None:
        """Steps or pairs of the whole set, or the check sample of one part; opens its first run to code."""
        self.mode = next(m for m in MODES if m[0] == name)
        i = self.mode_combo.findData(name)
        if self.mode_combo.currentIndex() != i:
            self.mode_combo.blockSignals(True)
            self.mode_combo.setCurrentIndex(i)
            self.mode_combo.blockSignals(False)
        self.view = None
        if not self.refresh():
            return
        first = self.next_to_code(None)
        if first is not None:
            self.show_run(first)
        elif self.rows:
            self.show_run(self.rows[0]["run"])
        else:
            what = "the check sample is not drawn yet" if self.checking else "no runs"
            self._show_nothing(f"{what} in the {self.part} part of {self.doc['id']}")

    def refresh(self) -> bool:
        """The list and progress from the core (this coder's codes in force)."""
        from reviewer.failures.check import check_queue
        from reviewer.failures.coding import queue

        try:
            if self.checking:
                self.rows = check_queue(self.store, self.doc, self.user, self.part)
            else:
                self.rows = queue(self.store, self.doc, self.user, part=self.part)
        except CORE_ERRORS as exc:  # shown in the dock, never a traceback
            self.rows = []
            say(self.saved, f"cannot read the list: {exc}", ok=False)
            return False
        done = sum(1 for r in self.rows if r["my_code"])
        self.progress.setRange(0, max(len(self.rows), 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{done} of {len(self.rows)} coded by you")
        self.list.blockSignals(True)
        self.list.clear()
        for r in self.rows:
            it = QListWidgetItem(run_line(r))
            it.setData(Qt.UserRole, r["run"])
            self.list.addItem(it)
            if self.view is not None and r["run"] == self.view["run"]:
                self.list.setCurrentItem(it)
        self.list.blockSignals(False)
        return True

    def next_to_code(self, after: str | None) -> str | None:
        """The next run of the list this coder has not coded, after `after` (wrapping round), or None."""
        ids = [r["run"] for r in self.rows]
        start = ids.index(after) + 1 if after in ids else 0
        for r in self.rows[start:] + self.rows[:start]:
            if not r["my_code"] and r["run"] != after:
                return r["run"]
        return None

    def step(self, by: int) -> bool:
        target = neighbour([r["run"] for r in self.rows], self.view and self.view["run"], by)
        if target is None:
            return False
        self.show_run(target)
        return True

    # ------------------------------------------------------------------ one run

    def show_run(self, run_id: str) -> None:
        from reviewer.failures.check import check_view
        from reviewer.failures.coding import run_view

        try:
            if self.checking:
                view = check_view(self.store, self.doc, run_id, user=self.user)
            else:
                view = run_view(self.doc, run_id, store=self.store, user=self.user)
        except (*CORE_ERRORS, ValueError) as exc:  # ValueError: a runs file that is not JSON
            say(self.saved, f"cannot open {run_id}: {exc}", ok=False)
            return
        self.view = view
        self.text.setHtml(view_html(view))
        self._show_codes(view)
        for i in range(self.list.count()):
            if self.list.item(i).data(Qt.UserRole) == run_id:
                self.list.blockSignals(True)
                self.list.setCurrentRow(i)
                self.list.blockSignals(False)
        if self.loader is not None:
            self.loader.wanted = view["question"]["id"]  # its evidence is the one wanted from now on
            self._say_evidence()  # this run's question's, from now on (not the run before's, while it loads)
        self._load_soon()

    def _show_nothing(self, text: str) -> None:
        self.view = None
        self.text.setHtml(f"<h3>{html.escape(text)}</h3>")
        self._show_codes(None)

    def _load_evidence(self) -> None:
        """The question's evidence in the viewer (skipped while the question stays the same)."""
        if self.loader is None or self.view is None:
            return
        qid = self.view["question"]["id"]
        self.loader.wanted = qid
        if self.loader.key == qid and not self.loader.problem:
            return
        question = dict(self.doc["questions"][qid], id=qid)
        self.loader.load(qid, question)
        self._say_evidence()
        nxt = self.next_to_code(self.view["run"])  # the run a code key goes to next: its scenes read ahead
        nq = next((r["question"] for r in self.rows if r["run"] == nxt), None)
        if nq is not None and nq != qid:
            self.loader.prefetch(dict(self.doc["questions"][nq], id=nq))

    def _on_evidence(self, key: str, _problem: str) -> None:
        if self.view is not None and key == self.view["question"]["id"]:
            self._say_evidence()

    def _say_evidence(self) -> None:
        """The evidence line of the run's question, as the item pipeline stands (`review_model.evidence_line`)."""
        from reviewer.app.review_model import evidence_line

        if self.loader is None or self.view is None:
            return
        qid = self.view["question"]["id"]
        site = (self.doc["questions"].get(qid) or {}).get("site")
        line = evidence_line(qid, self.loader.model, site=site)
        failed = line.state == "failed"
        self.evidence_label.setText(line.text + (" (you can still code the run)" if failed else ""))
        set_style(self.evidence_label, BAD_STYLE if failed else "color: #aaa")

    # ------------------------------------------------------------------ saving

    def code(self, key_or_code: str) -> bool:
        """Save this coder's code for the run on show now (with the note); then the next run to code."""
        from reviewer.failures.codebook import codebook
        from reviewer.failures.coding import code_run

        if self.view is None:
            return False
        rid = self.view["run"]
        try:
            row = code_run(self.store, self.doc, rid, key_or_code, user=self.user, note=self.note.text())
        except CORE_ERRORS as exc:  # a failed save is shown; the run and its note stay
            say(self.saved, f"NOT saved: {key_or_code} on {rid}: {exc}", ok=False)
            return False
        # the codebook's words, as the code list beside shows them ("Time sampling", not "time_sampling")
        words = {c.code: c.label for c in codebook().schemes[row["scheme"]].codes}
        code = words.get(row["code"], row["code"])
        was = f" (was {words.get(row['replaces'], row['replaces'])})" if row["replaces"] else ""
        say(self.saved, f"saved: {code}{was} on {rid}", ok=True)
        self.note.clear()
        self.refresh()
        nxt = self.next_to_code(rid)
        if nxt is None:
            self.show_run(rid)  # all coded: stay, with the code just given
            say(self.saved, f"saved: {code}{was} on {rid}; every run of this list is coded", ok=True)
        else:
            self.show_run(nxt)
        return True

    def _leave_note(self) -> None:
        from reviewer.app.qt_window import give_keys_to_canvas

        give_keys_to_canvas(getattr(self.app, "viewer", None), fallback=self)

    # ------------------------------------------------------------------ keys

    def install_keys(self, window: QWidget) -> None:
        """Window-wide keys (not while typing in the note: Qt gives those keys to the field)."""
        self._shortcuts += window_keys(window, SHORTCUT_KEYS, self.key)

    def key(self, key: str) -> bool:
        """One key of the dock: a code key, C (note), N / P."""
        if key == "N":
            return self.step(1)
        if key == "P":
            return self.step(-1)
        if key == "C":
            self.note.setFocus()
            return True
        if key.isdigit() and self.view is not None:
            keys = {c["key"] for c in self.view["codes"]}
            return self.code(key) if key in keys else False
        return False


def install_failures_dock(app, set_path: str | Path, user: str, role: str, *, store=None, prefetch: bool = True):
    """Add the coding dock for `user` on the coding set at `set_path` to the reviewer window (`app`: ReviewerApp),
    with its keys and the window title; returns the dock. Raises the core's error for a bad set file."""
    from reviewer.failures.sample import load_set
    from reviewer.store import Store

    doc = load_set(set_path)
    store = store or Store(app.session.db)
    dock = FailuresDock(app, store, doc, user, role, prefetch=prefetch)
    app.failures = dock
    app.failures_store = store
    app.add_dock("Failures", dock, "left")  # in the window's scroll area: the dock never widens the window
    app.session.who = f"{user} ({role})"
    app.viewer.title = app.session.window_title(f"coding {doc['id']}")
    app.show_napari_docks(False)  # the coding dock takes their column
    from reviewer.app.qt_window import main_window

    qwin = main_window(app.viewer)
    if qwin is not None:
        dock.install_keys(qwin)
        from reviewer.app.qt_dock_keys import order_tabs

        order_tabs(app, "Failures")  # Tab from the canvas: the coding dock first
        try:
            qwin.resizeDocks([app.docks["Failures"]], [min(560, int(qwin.width() * 0.36))], Qt.Horizontal)
        except AttributeError:
            pass
    # P is 'previous run' while coding: the pair view moves to Shift+P
    app.viewer.bind_key("Shift-P", lambda viewer: app.show_pair(), overwrite=True)
    return dock


def close_failures_dock(app) -> None:
    """Stop the dock's evidence loading and close its store (before ReviewerApp.close)."""
    dock = getattr(app, "failures", None)
    if dock is not None and dock.loader is not None:
        close = getattr(dock.loader, "close", None)  # its workers cancelled, when the loader has them
        if close is not None:
            close()
        else:
            dock.loader.closed = True
    store = getattr(app, "failures_store", None)
    if store is not None:
        store.close()
        app.failures_store = None


def launch_failures(
    set_path: str | Path,
    *,
    db: str | Path | None = None,
    user: str | None = None,
    screenshot: str | Path | None = None,
) -> int:
    """`python main.py --failures SET`: the reviewer window with the coding dock of the person working (--user,
    REVIEWER_USER, else asked) on the set. Raises the core's error for a bad set or an unknown user."""
    import napari

    from reviewer.app.main_window import ReviewerApp, _screenshot_when_shown, end_screenshot_run
    from reviewer.app.qt_review_login import who_is_working
    from reviewer.failures.sample import load_set
    from reviewer.store import Store

    load_set(set_path)  # a bad set is refused before a window opens
    viewer = napari.Viewer(title="EarthRecord Reviewer")
    app = ReviewerApp(viewer, db=db)
    from reviewer.app.qt_window import give_keys_to_canvas, main_window

    store = Store(app.session.db)
    who = who_is_working(store, user, parent=main_window(viewer))  # in the window's dark style
    if who is None:
        store.close()
        viewer.close()
        from reviewer.errors import ReviewError

        raise ReviewError("nobody to code as: add an expert (reviewer users add NAME --role expert) or give --user")
    install_failures_dock(app, set_path, *who, store=store)
    qwin = main_window(viewer)
    if qwin is not None:  # the window in front with the keys, as `launch` leaves it (it had opened inactive)
        qwin.raise_()
        qwin.activateWindow()
        give_keys_to_canvas(viewer)
    failure: list[str] = []
    if screenshot:
        _screenshot_when_shown(app, Path(screenshot), failure)
    napari.run()
    close_failures_dock(app)
    app.close()
    if screenshot:  # the run's evidence site could not open: main.py says it, status 2; other errors logged once
        end_screenshot_run(app, failure)
    return 0
