"""The maintainer mode of the review dock: assign (annotators, k, seed, gold), progress per annotator, the
agreement table of the core, annotator quality (qt_quality), the stage-2 rule and audit share, AI drafts
(qt_review_drafts), the freeze, and an item's log (versions and events)."""

from __future__ import annotations

import html
import json
from functools import partial
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
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from reviewer.app.errors import CORE_ERRORS
from reviewer.app.jobs import alive
from reviewer.app.qt_review_drafts import DraftProcess as DraftProcess  # the name bench_drafting imports
from reviewer.app.qt_review_drafts import DraftsBox
from reviewer.app.qt_review_parts import say
from reviewer.app.qt_rows import fit_table_height as _fit_height
from reviewer.console import figure, seconds_text
from reviewer.review import api

AGREEMENT_KEYS = ("items", "raters", "percent_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1")
PROGRESS_KEYS = ("user", "done", "assigned", "median_seconds", "gold_correct", "gold_decided")
#: the tables' headers, short so every column shows whole in the dock (the keys' names, "krippendorff_alpha",
#: had made the agreement table 740 px wide), each with what it means in its tooltip
HEADERS = {
    "table": ("table", "accept / flag overall, each flag reason, each task"),
    "items": ("n", "n: items decided by two raters or more"),
    "raters": ("raters", "annotators who decided them"),
    "percent_agreement": ("%\nagree", "percent agreement: the share of items on which the raters agree"),
    "fleiss_kappa": ("Fleiss\nκ", "Fleiss' kappa: agreement beyond chance"),
    "krippendorff_alpha": ("Kripp.\nα", "Krippendorff's alpha (nominal)"),
    "gwet_ac1": ("Gwet\nAC1", "Gwet's AC1: agreement beyond chance, stable when one verdict dominates"),
    "user": ("user", "the annotator"),
    "done": ("done", "items decided"),
    "assigned": ("assigned", "items assigned"),
    "median_seconds": ("median s", "median seconds per decision"),
    "gold_correct": ("gold ok", "gold items decided as the gold answer says"),
    "gold_decided": ("gold n", "gold items decided"),
}


fmt = figure  # the tables' figures, as the CLI shows them


class _FitTable(QTableWidget):
    """Its columns and height fitted to its contents again when shown: filled before the dock had its style sheet,
    they kept the default font's sizes and cut the longer names ("ambiguous_evide..."). `wrap_first`: the first
    column (names of several words) as wide as its longest word, its names wrapped."""

    wrap_first = False

    def fit(self) -> None:
        self.resizeColumnsToContents()
        if self.wrap_first and self.rowCount():
            fm = self.fontMetrics()
            texts = [self.item(i, 0).text() for i in range(self.rowCount()) if self.item(i, 0) is not None]
            word = max((fm.horizontalAdvance(w) for t in texts for w in t.split()), default=0)
            self.setColumnWidth(0, max(word + 16, self.horizontalHeader().sectionSizeHint(0)))  # the cell's padding
            self.resizeRowsToContents()
        _fit_height(self)  # and its rows' heights (two rows had shown behind a scroll bar)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.fit()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        _fit_height(self)  # the sideways bar's room only when the table is narrower than its columns


def _table(keys: tuple[str, ...], *, wrap_first: bool = False) -> QTableWidget:
    """A table that keeps its columns at their contents' width, under short headers (their meaning in the tooltip),
    so every column shows whole in the review dock at 1366 x 768 (the keys' names had made the agreement table 740
    px wide, the progress table 477 px: both scrolled sideways, their headers and values cut at the dock's edge);
    in a narrower dock it scrolls sideways rather than cutting a column."""
    t = _FitTable(0, len(keys))
    t.wrap_first = wrap_first
    t.setTabKeyNavigation(False)  # Tab goes on to the next field (it had walked the cells: the dock's end unreachable)
    for j, key in enumerate(keys):
        head, tip = HEADERS[key]
        item = QTableWidgetItem(head)
        item.setToolTip(tip)
        t.setHorizontalHeaderItem(j, item)
    t.verticalHeader().setVisible(False)  # row numbers said nothing
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    t.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    t.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    t.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    _fit_height(t)
    return t


def _fill(table: QTableWidget, rows: list[list[str]]) -> None:
    table.setRowCount(len(rows))
    for i, row in enumerate(rows):
        for j, text in enumerate(row):
            table.setItem(i, j, QTableWidgetItem(text))
    table.fit()  # type: ignore[attr-defined]  # (a _FitTable)


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
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no Tab stop of its own: it scrolls to the field Tab reaches
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

        self.quality = QualityBox(self.store.path, self.user)  # the annotator quality tables and plot (issue 30)
        layout.addWidget(self.quality)
        layout.addWidget(self._rule_box())
        self.drafts = DraftsBox(self.store, self.user, say=partial(say, self.message), changed=self.refresh)
        layout.addWidget(self.drafts)
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
        # wrapped: on one line ("items: accepted 1, consensus_accepted 1, flagged 1, in_review 21, rejected 1") it
        # widened the whole form past the dock at 1366 x 768, every field and button cut at the dock's right edge
        self.states.setWordWrap(True)
        v.addWidget(self.progress)
        v.addWidget(self.states)
        agreement_box = QGroupBox("Agreement (stage 1, accept / flag, per reason and per task)")
        v = QVBoxLayout(agreement_box)
        self.agreement = _table(("table", *AGREEMENT_KEYS), wrap_first=True)  # "ambiguous evidence" on two lines
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
            say(self.message, "not frozen: give the version and the folder to write", ok=False)
            return False
        path, bank, user = self.store.path, self.bank, self.user

        def work() -> dict[str, Any]:
            with Store(path) as store:  # its own connection: SQLite connections stay in their thread
                return freeze(store, bank, version=version, out=out, user=user)

        def done(manifest: dict[str, Any]) -> None:
            if alive(self.freeze_button):
                self.freeze_button.setEnabled(True)
                counts = manifest.get("counts", {})
                say(
                    self.message,
                    f"frozen {manifest['name']} {manifest['version']} into {out}: {counts.get('questions')} "
                    f"questions (reviewer verify {out})",
                    ok=True,
                )
                self.refresh()

        def failed(exc: BaseException) -> None:
            if alive(self.freeze_button):
                self.freeze_button.setEnabled(True)
                say(self.message, f"not frozen: {exc}", ok=False)

        self.freeze_button.setEnabled(False)
        say(self.message, f"freezing {bank} as version {version}...", ok=True)
        self.freeze_worker = run_in_thread(work, on_done=done, on_error=failed)
        return True

    def start(self, bank: str) -> None:
        self.bank = bank
        self.drafts.bank = bank
        self.quality.set_bank(bank)
        self.refresh()

    def refresh(self) -> None:
        try:
            status = api.status(self.store, self.bank, user=self.user)
            report = api.agreement(self.store, self.bank, user=self.user)
        except CORE_ERRORS as exc:  # shown in the dock
            say(self.message, str(exc), ok=False)
            return
        _fill(
            self.progress,
            [[seconds_text(r[k]) if k == "median_seconds" else fmt(r[k]) for k in PROGRESS_KEYS]
             for r in status["annotators"]],
        )  # fmt: skip
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
        self.drafts.refresh_counts()
        tables = [("accept / flag", report["overall"])]
        tables += [(reason.replace("_", " "), figs) for reason, figs in report["per_reason"].items()]  # wrap at spaces
        tables += [(f"task {task}", figs) for task, figs in report.get("per_task", {}).items()]
        _fill(self.agreement, [[name, *(fmt(figs.get(k)) for k in AGREEMENT_KEYS)] for name, figs in tables])
        self.cohen.setText(
            "; ".join(
                f"Cohen {p['raters'][0]} x {p['raters'][1]}: {fmt(p['kappa'])} on {p['items']} items"
                for p in report["overall"].get("cohen", [])
            )
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
        except CORE_ERRORS as exc:
            say(self.message, f"not assigned: {exc}", ok=False)
            return False
        loads = ", ".join(f"{n} {c}" for n, c in out["per_annotator"].items())
        say(self.message, f"assigned {out['items']} items (batch {out['batch']}): {loads}", ok=True)
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
        except CORE_ERRORS as exc:
            say(self.message, f"rule not saved: {exc}", ok=False)
            return False
        extra = f"; applied to {applied['applied']} item(s)" if applied else ""
        say(
            self.message,
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
        except CORE_ERRORS as exc:
            say(self.message, str(exc), ok=False)
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

    def tables(self) -> tuple[QTableWidget, ...]:
        return (self.progress, self.agreement, self.quality.table, self.quality.pace)
