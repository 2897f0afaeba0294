"""What the review dock's modes share: their key tables, the saved / refused / hint styles, the key line under a
dock, the question as HTML and the item's drafts. A module of its own so that the annotator's mode (qt_review), the
expert's (qt_review_expert), the maintainer's (qt_review_admin) and the failure-coding dock import it without
importing each other.
"""

from __future__ import annotations

import html
import json
import logging
from collections.abc import Callable
from typing import Any

from qtpy.QtCore import Qt
from qtpy.QtGui import QKeySequence
from qtpy.QtWidgets import QLabel, QShortcut, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget

from reviewer.app.errors import CORE_ERRORS
from reviewer.app.qt_style import set_style
from reviewer.app.review_model import ReviewQueue
from reviewer.app.review_sensor_break import sensor_break_html

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
    ("N / P", "next / previous item (N at the list's end looks for new work)"),
    ("Esc", "cancel the flag; in a dock's field: back to the canvas"),
)
EXPERT_KEYS = (
    ("A", "accept (asks for the rationale if none is typed)"),
    ("1-9, R", "pick the reject reason; reject"),
    ("Enter / Esc", "in the rationale: save / leave the field"),
    ("E", "correct (form with the diff)"),
    ("L / M / H", "my confidence in this adjudication: low / medium / high (again: not given)"),
    ("N / P", "next / previous item (N at the list's end looks for new work)"),
)
#: keys of the failure-coding dock (the line under it; also a table of the Keys help dialog)
FAILURE_KEYS = (
    ("1-7 / 1-5", "the code with that key, steps / pairs (saved at once, then the next run to code)"),
    ("C", "type a note (Enter or Esc: back to the keys; saved with the next code)"),
    ("N / P", "next / previous run"),
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
    ("N/P", "next/previous"),
    ("F1", "all keys"),  # (Esc, back to the canvas from a field: a third line at 1366 x 768; in F1 and the tooltip)
)
EXPERT_KEYS_SHORT = (
    ("A", "accept"),
    ("1-9, R", "reject"),
    ("Enter", "save"),
    ("Esc", "leave a field"),
    ("E", "correct"),
    ("L/M/H", "confidence"),
    ("N/P", "next/previous"),
    ("F1", "all keys"),
)
OK_STYLE, BAD_STYLE = "color: #6bd36b", "color: #ff6b6b; font-weight: bold"


HINT_STYLE = "color: #e0c060"


def say(label: QLabel, text: str, *, ok: bool | None) -> None:
    """A dock's status line (saved, not saved, a job's message, a hint): `text` shown as written, green when it went
    well, red and bold when not, amber for a hint (`ok=None`). Plain text: escaped for rich text, a quote in an
    error ('unknown user "carl"', a typed rationale) had shown as &quot; (a label guesses rich text only from a
    tag, and an escaped line has none)."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    set_style(label, HINT_STYLE if ok is None else OK_STYLE if ok else BAD_STYLE)


def soon(func, parent) -> Any:
    """A handler that calls `func` on the next event-loop turn, once however often it was called before: the docks
    ask for an item's evidence through it, so that keys pressed in one burst ask only for the last key's item. Not a
    chain: one turn, never re-armed. Without it (each key asking at once, the worker preparing only the latest by
    its token), twelve N / P pressed in a burst still moved exactly twelve items, but every item passed over that
    was prepared ahead was applied on the way (the canvas, pair and chips set for nothing): 224-248 ms of UI-thread
    CPU to the last item shown instead of 133-139, 444-707 ms wall instead of 283-409 (the GUI demo bank, five
    bursts of twelve presses each, issue 27)."""
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
    """The key line's rich text: it breaks between pairs, never inside one. A short pair ("E correct", "L/M/H
    confidence", "N/P next/previous") is one unbreakable unit; a long description (the failure dock's) wraps
    inside, its key kept with its first word. At a narrow Review dock the line had broken between "E" and
    "correct", and inside "L/" "M/H" and "next /" "previous"."""

    def whole(text: str) -> str:  # no break at its spaces (nowrap) nor after a slash (a word joiner, unseen)
        return html.escape(text).replace("/", "/&#8288;")

    def pair(k: str, v: str) -> str:
        key = f"<b>{whole(k)}</b>"
        if len(v.split()) <= 3:
            return f'<span style="white-space: nowrap">{key} {whole(v)}</span>'
        first, rest = v.split(" ", 1)
        return f'<span style="white-space: nowrap">{key} {whole(first)}</span> {html.escape(rest)}'

    return "&nbsp;· ".join(pair(k, v) for k, v in keys)  # a break after a dot, never before it


def keys_label(keys: tuple[tuple[str, str], ...], full: tuple[tuple[str, str], ...] | None = None) -> QLabel:
    """The line under a dock that lists its keys (the review, adjudication and coding docks); `full`: what each
    does at length, in its tooltip (and in F1)."""
    label = QLabel(keys_html(keys))
    label.setWordWrap(True)
    label.setStyleSheet("color: #aaa")
    if full:
        label.setToolTip("<br>".join(f"<b>{html.escape(k)}</b> {html.escape(v)}" for k, v in full))
    return label


def question_view() -> QTextBrowser:
    """The item's question, decision and drafts (the focus view of the review docks). Its scroll bar is always
    there: shown only when needed, it came and went with each item's length, and the text was laid out again 13 px
    narrower or wider (every line re-wrapped under the reader's eye, and the document laid out twice)."""
    view = QTextBrowser()
    view.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOn)
    return view


class StatusBand(QWidget):
    """A dock's status lines (the evidence's problem, what the next save carries, the last save or a hint) in a band
    that keeps `lines` lines of room while they say less: a line that comes or goes no longer moves the list, the
    item and the table above it (it had, by a line, at each first save, confidence key and item change). Longer
    text (a long comment) grows it."""

    def __init__(self, *labels: QLabel, lines: int = 2) -> None:
        super().__init__()
        self.lines = lines
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        for label in labels:
            layout.addWidget(label)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override: the style sheet's font is known once shown
        one = QLabel("x", self)  # a one-line status label's height (its line and margins), never shown
        one.hide()
        one.ensurePolished()
        self.setMinimumHeight(self.lines * one.sizeHint().height())
        one.deleteLater()
        super().showEvent(event)


class KeysLine(QStackedWidget):
    """The key line under a dock, or in its place a bar of the keys a pending step takes (the flag's reasons, 1-4,
    Enter, Esc): as tall as the taller of the two at the dock's width, so that opening the bar moves nothing (the
    flag bar above the key line had pushed the item up by three lines and back)."""

    def __init__(self, keys: QLabel) -> None:
        super().__init__()
        self.keys = keys
        self.bar = QLabel()
        self.bar.setWordWrap(True)
        self.bar.setStyleSheet(HINT_STYLE)
        self.addWidget(keys)
        self.addWidget(self.bar)

    def reserve(self, text: str) -> None:
        """The bar's longest text for the item (what its height is kept for), shown or not."""
        if text == self.bar.text():
            return  # the item before had the same reasons: the review dock is not laid out again for it
        self.bar.setText(text)
        self.updateGeometry()

    def show_bar(self, text: str | None) -> None:
        """The bar with `text` in the key line's place, or the key line back (None)."""
        if text is not None:
            self.bar.setText(text)
        self.setCurrentWidget(self.keys if text is None else self.bar)


def open_form(form: QWidget, viewer) -> QWidget:
    """Show a review form (comment, correction) with the keyboard in it, and give the keys back to the canvas
    when it closes, so that a key-only user types into the form at once and the review keys work after it (the
    form had opened without the focus: the letters typed went to the window as review keys)."""
    from reviewer.app.qt_window import give_keys_to_canvas, main_window

    def back(_result: int) -> None:
        window = main_window(viewer)
        if window is not None:
            window.activateWindow()
        give_keys_to_canvas(viewer)

    form.finished.connect(back)
    form.show()
    form.raise_()
    form.activateWindow()
    return form


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
    """The focus view of one question: text, fields, reference and range, the evidence note (what the methods say,
    or what is missing), how the reference was computed (every method's value and their agreement), template and
    phrasing, sensors, the AI draft."""
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
        # the range under the reference, in its column: a fourth column made the table wider than a 1366 x 768
        # review dock for a trend's slope ("0.007094", "[0.004858, 0.01191]"), the view scrolled sideways
        range_text = f"<br><span style='color:#aaa'>range {e(f'[{r[0]}, {r[1]}]')}</span>" if r else ""
        value = ref.get(name)  # no value (a field an insufficient item leaves open): "none", not JSON's "null"
        reference = (
            "<span style='color:#aaa'>none</span>" if value is None else e(json.dumps(value, ensure_ascii=False))
        )
        rows.append(
            f"<tr><td><b>{e(name)}</b>{conclusion}</td><td>{e(kind + unit + opts)}</td>"
            f"<td>{reference}{range_text}</td></tr>"
        )
    parts.append(
        "<table cellspacing=4><tr>"  # a header is never broken ("referenc e" at 1366 x 768)
        + "".join(f"<th align=left style='white-space:nowrap'>{h}</th>" for h in ("field", "type", "reference"))
        + f"</tr>{''.join(rows)}</table>"
    )
    parts.append(sensor_break_html(q))
    prov = q.get("provenance") or {}
    parts.append(f"<p>reference source <b>{e(str(q.get('reference_source')))}</b>")
    if prov.get("reference_pending"):
        parts.append(" (a draft: to be set by review)")
    parts.append("</p>")
    note = (q.get("evidence") or {}).get("note")
    if note:  # what the methods say, or why the item is insufficient (the year and its clear observations)
        parts.append(f"<p>evidence: {e(str(note))}</p>")
    # a field no method gave a value for (an insufficient item's) gets no line: "methods: direction: change:"
    methods = {k: v for k, v in (prov.get("methods") or {}).items() if v not in ({}, None)}
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
    except CORE_ERRORS:  # the focus view still shows the question
        logger.warning("cannot read the drafts of %s", view.get("item"), exc_info=True)
        return None
