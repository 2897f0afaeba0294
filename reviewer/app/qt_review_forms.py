"""Small non-modal forms of the review dock: a comment, and a correction over a question's answer fields
(the annotator's suggestion with a flag reason, or the expert's correction with a rationale) that shows
the diff against the current version as it is edited."""

from __future__ import annotations

import html
import json
from typing import Any

from qtpy.QtCore import Signal
from qtpy.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def diff_lines(question: dict[str, Any], correction: dict[str, Any]) -> list[str]:
    """'part: old -> new' for every part a correction changes (what the expert sees before saving)."""
    out = []
    if "text" in correction:
        out.append(f"text: {question.get('text')!r} -> {correction['text']!r}")
    for part in ("reference", "reference_range", "accept"):
        for name, new in (correction.get(part) or {}).items():
            old = (question.get(part) or {}).get(name)
            out.append(f"{part}.{name}: {_show(old)} -> {_show(new)}")
    return out


def parse_value(text: str, kind: str) -> Any:
    """A field's value as typed: a number, a year or a category (a list for year lists)."""
    text = text.strip()
    if kind == "number":
        return float(text)
    if kind == "year":
        return int(text)
    if text.startswith("["):
        return json.loads(text)
    return text


class BadValue(ValueError):
    """A correction's field whose text is not of its kind; `edit` is that field (None: not one field's)."""

    def __init__(self, message: str, edit: QLineEdit | None) -> None:
        super().__init__(message)
        self.edit = edit


class CommentDialog(QDialog):
    """C: one line of comment that goes with the next decision on the item."""

    def __init__(self, parent: QWidget | None, text: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Comment")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Comment (saved with your decision on this item):"))
        self.edit = QLineEdit(text)
        layout.addWidget(self.edit)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.edit.setFocus()


class CorrectionForm(QDialog):
    """E: edit the text, reference values, numeric ranges and accepted values; `submitted` gives the
    correction (only the changed parts), the reason or rationale and, for an annotator, the flag reason."""

    submitted = Signal(dict, str, str)  # correction, reason/rationale, flag reason code ('' for an expert)

    def __init__(
        self,
        parent: QWidget | None,
        question: dict[str, Any],
        *,
        flag_reasons: list[dict[str, Any]] | None = None,
        why_label: str = "reason",
    ) -> None:
        super().__init__(parent)
        self.question = question
        self.setWindowTitle(f"Correct {question.get('id')}")
        self.resize(560, 420)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.text = QPlainTextEdit(question.get("text", ""))
        self.text.setMaximumHeight(80)
        self.text.setTabChangesFocus(True)  # Tab goes on to the next field (it had typed a tab into the text)
        form.addRow("text", self.text)
        self.edits: dict[tuple[str, str], tuple[QLineEdit, str]] = {}
        ref, rng, acc = (question.get(k) or {} for k in ("reference", "reference_range", "accept"))
        for f in question.get("fields", []):
            name, kind = f["name"], f.get("type", "category")
            self._edit(form, ("reference", name), _plain(ref.get(name)), kind, f"{name} ({kind})")
            if kind == "number":
                lo, hi = rng.get(name) or ("", "")
                self._edit(form, ("lo", name), _plain(lo), "number", f"{name} range low")
                self._edit(form, ("hi", name), _plain(hi), "number", f"{name} range high")
            if name in acc:
                self._edit(form, ("accept", name), ", ".join(map(_plain, acc[name])), kind, f"{name} accepted")
        self.flag_combo = None
        if flag_reasons:
            self.flag_combo = QComboBox()
            for r in flag_reasons:
                self.flag_combo.addItem(r["label"], r["code"])
            k = self.flag_combo.findData("wrong_reference")
            self.flag_combo.setCurrentIndex(max(k, 0))
            form.addRow("flag reason", self.flag_combo)
        self.why = QLineEdit()
        self.why_label = why_label
        form.addRow(why_label, self.why)
        layout.addLayout(form)
        self.diff = QLabel("no change yet")
        self.diff.setWordWrap(True)
        layout.addWidget(self.diff)
        self.problem = QLabel("")
        self.problem.setStyleSheet("color: #ff6b6b")
        layout.addWidget(self.problem)
        keys = QLabel("Tab next field · Enter save · Esc cancel")
        keys.setStyleSheet("color: #aaa")
        layout.addWidget(keys)
        buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self._on_save)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.text.textChanged.connect(self._update_diff)

    def _edit(self, form: QFormLayout, key: tuple[str, str], text: str, kind: str, label: str) -> None:
        edit = QLineEdit(text)
        edit.textChanged.connect(self._update_diff)
        self.edits[key] = (edit, kind)
        form.addRow(label, edit)

    def set_value(self, part: str, name: str, text: str) -> None:
        """Type into one field of the form (tests and scripted use)."""
        self.edits[(part, name)][0].setText(text)

    def correction(self) -> dict[str, Any]:
        """The changed parts as a correction (schemas/correction.schema.json); BadValue naming the field (and its
        line edit) on a value that is not of the field's kind."""
        try:
            return self._correction()
        except BadValue:
            raise
        except ValueError as exc:  # json's or float()'s message: found again per field, to name it
            for (part, name), (edit, kind) in self.edits.items():
                raw = edit.text().strip()
                try:
                    for v in raw.split(",") if part == "accept" else [raw]:
                        if v.strip():
                            parse_value(v, "number" if part in ("lo", "hi") else kind)
                except ValueError:
                    label = {"lo": f"{name} range low", "hi": f"{name} range high"}.get(part, name)
                    what = "number" if part in ("lo", "hi") else kind
                    raise BadValue(f"{label}: '{raw}' is not a {what}", edit) from exc
            raise BadValue(str(exc), None) from exc

    def _correction(self) -> dict[str, Any]:
        q = self.question
        out: dict[str, Any] = {}
        text = self.text.toPlainText().strip()
        if text and text != q.get("text"):
            out["text"] = text
        ref, rng, acc = (q.get(k) or {} for k in ("reference", "reference_range", "accept"))
        for (part, name), (edit, kind) in self.edits.items():
            raw = edit.text().strip()
            if part == "reference" and raw and parse_value(raw, kind) != ref.get(name):
                out.setdefault("reference", {})[name] = parse_value(raw, kind)
            elif part == "accept" and raw:
                values = [parse_value(v, kind) for v in raw.split(",") if v.strip()]
                if values != acc.get(name):
                    out.setdefault("accept", {})[name] = values
        for (part, name), (edit, _kind) in self.edits.items():
            if part == "lo" and edit.text().strip():
                pair = [float(edit.text()), float(self.edits[("hi", name)][0].text())]
                if pair != list(rng.get(name) or []):
                    out.setdefault("reference_range", {})[name] = pair
        return out

    def _update_diff(self, *_: object) -> None:
        try:
            lines = diff_lines(self.question, self.correction())
            self.problem.setText("")
        except ValueError as exc:
            self.problem.setText(str(exc))
            return
        self.diff.setText(
            "<b>diff against the current version</b><br>" + "<br>".join(html.escape(t) for t in lines)
            if lines
            else "no change yet"
        )

    def _on_save(self) -> None:
        """Enter or Save: refused with the reason said and the keyboard put in the field to mend (it stayed in
        the field left, where the reason typed next went into the year: "2015scar is 2015")."""
        try:
            corr = self.correction()
        except BadValue as exc:
            self.problem.setText(str(exc))
            if exc.edit is not None:
                exc.edit.setFocus()
            return
        if not corr:
            self.problem.setText("nothing changed")
            return
        if not self.why.text().strip():
            self.problem.setText(f"say why: type the {self.why_label} here, then Enter")
            self.why.setFocus()
            return
        code = self.flag_combo.currentData() if self.flag_combo is not None else ""
        self.submitted.emit(corr, self.why.text().strip(), code)
        self.accept()


def _plain(value: Any) -> str:
    if value is None or value == "":
        return ""
    return value if isinstance(value, str) else _show(value)
