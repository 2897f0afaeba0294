"""Screenshots of every review mode on the demo bank, for looking at the fit of the window at a screen size, and
what a program can see wrong in each (`fit_problems`: a label, button, table header or cell, or pyqtgraph title
cut; a dock scrolling sideways; the trajectory's plotting area under 170 px or its axis labels below the plot).
Shots: the annotator (annotate; the flag bar open; a confidence pending; the next item after a save: the item's
view must not move; the F1 keys dialog; the Pair, Chips and Coverage tabs), the expert (the decision table with the
annotators' confidence, also beside a review dock of 520 px; adjudicating with a typed rationale), the maintainer
(assign; quality table and plot; drafts; freeze). Run under an Xvfb screen of the size to check (the GUI test
session's cached demo site, store and bank are in .pytest_cache/d/reviewer-demo-64-*):

    xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python tests/gui/shots_review.py SITE DB BANK OUT [ROLES]

ROLES: which of annotator,annotator_done,expert,maintainer,failures,viewer (all by default): annotator_done is
bob with every item decided, failures the failure-coding dock on a small coding set, viewer the window with no
review dock (the site opened, a pixel clicked); failures_saved is the coding dock after a code key (its saved line).

Writes OUT/review_<shot>_<W>x<H>.png, OUT/keys_dialog_<W>x<H>.png (F1) and OUT/problems_<W>x<H>.json ({shot: [problem, ...]}).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT, ROOT / "tests" / "unit"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

TRAJECTORY_MIN_PX = 170  # the plotting area at 1366 x 768 with the review dock open (issue 27: 150, and a margin)
QUESTION_MIN_LINES = 9  # the expert's question view: its question, site line and the field table's first rows


def wait(cond, timeout: float = 60.0) -> bool:
    from qtpy.QtWidgets import QApplication

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        QApplication.processEvents()
        if cond():
            return True
        time.sleep(0.02)
    return False


def seen(w) -> bool:
    """Shown and not scrolled away or covered by its parents."""
    return w.isVisible() and not w.visibleRegion().isEmpty()


def _name(w) -> str:
    text = w.text() if hasattr(w, "text") and callable(w.text) else ""
    return f"{type(w).__name__} {text[:40]!r}" if text else type(w).__name__


def clipped_widgets(root) -> list[str]:
    """Labels, buttons and check boxes under `root` whose text does not fit the room they have."""
    from qtpy.QtWidgets import QAbstractButton, QComboBox, QLabel

    out = []
    for c in root.findChildren(QComboBox):  # the text shown and the arrow (~30 px)
        if seen(c) and c.fontMetrics().horizontalAdvance(c.currentText()) + 30 > c.width():
            out.append(f"combo {c.currentText()[:40]!r} has {c.width()} px")
    for w in [*root.findChildren(QLabel), *root.findChildren(QAbstractButton)]:
        if not seen(w) or not w.text().strip() or type(w).__name__ == "QTabBar":
            continue
        if isinstance(w, QLabel) and w.wordWrap():
            if w.heightForWidth(w.width()) > w.height() + 1:
                out.append(f"{_name(w)} needs {w.heightForWidth(w.width())} px of height, has {w.height()}")
        elif isinstance(w, QLabel) and w.pixmap() is not None and not w.pixmap().isNull():
            continue
        elif w.sizeHint().width() > w.width() + 1:
            out.append(f"{_name(w)} needs {w.sizeHint().width()} px of width, has {w.width()}")
    return out


def clipped_cells(root) -> list[str]:
    """Table headers and cells whose text is cut (Qt's own measures: a header's or column's size hint wider than
    the column; with word wrap, a word wider than its column or a row lower than its lines)."""
    from qtpy.QtWidgets import QTableWidget

    out = []
    for t in root.findChildren(QTableWidget):
        if not seen(t):
            continue
        head, fm = t.horizontalHeader(), t.fontMetrics()
        if t.horizontalScrollBar().isVisible():  # columns hidden past the table's edge, a header or value cut there
            out.append(f"a table of {', '.join(t.horizontalHeaderItem(j).text() for j in range(t.columnCount()) if t.horizontalHeaderItem(j))!r} scrolls sideways")  # fmt: skip
        if 0 < t.rowCount() <= 3 and t.verticalScrollBar().isVisible():  # a few rows behind a scroll bar
            out.append(f"a table of {t.rowCount()} rows shows them in {t.viewport().height()} px")
        for j in range(t.columnCount()):
            if t.isColumnHidden(j):
                continue
            h = t.horizontalHeaderItem(j)
            if h is not None and head.sectionSizeHint(j) > head.sectionSize(j) + 1:
                out.append(f"header {h.text()!r} needs {head.sectionSizeHint(j)} px, has {head.sectionSize(j)}")
            texts = [(i, t.item(i, j).text()) for i in range(t.rowCount()) if t.item(i, j) is not None]
            if not t.wordWrap():
                if t.sizeHintForColumn(j) > t.columnWidth(j) + 1:
                    out.append(f"column {j} needs {t.sizeHintForColumn(j)} px, has {t.columnWidth(j)}")
                continue
            for i, text in texts:
                longest = max((fm.horizontalAdvance(w) for w in text.split()), default=0)
                if longest + 6 > t.columnWidth(j) or t.sizeHintForRow(i) > t.rowHeight(i) + 1:
                    out.append(f"cell {text!r} cut in a column of {t.columnWidth(j)} px")
    return out


def cut_list_rows(root) -> list[str]:
    """Lists that show a row cut (the expert's queue had opened three and a half rows tall, the fourth cut in half):
    a list with more rows than it shows must show whole rows."""
    from qtpy.QtWidgets import QListWidget

    out = []
    for lst in root.findChildren(QListWidget):
        row = lst.sizeHintForRow(0) if lst.count() else 0
        if not seen(lst) or row <= 0:
            continue
        height = lst.viewport().height()
        if lst.count() * row > height and height % row > 1:
            out.append(f"a list shows {height / row:.2f} rows ({height} px of {row} px rows)")
    return out


def elided_date_label(app) -> list[str]:
    """The date slider's date and count under the canvas cut ("2006-04-02 T", "12 / 6"): each is to show whole."""
    slider = getattr(app, "date_slider", None)
    out = []
    for label in (slider.date, slider.count) if slider is not None else ():
        if not seen(label):
            continue
        text = label.text()
        if label.fontMetrics().horizontalAdvance(text) > label.contentsRect().width():
            out.append(f"the date slider shows {text!r} in {label.width()} px")
    return out


def clipped_html(root) -> list[str]:
    """Text views (the item's focus view, HTML with tables) wider than their view, or with a word broken across
    lines: Qt breaks a word only where it does not fit its table cell (a header had read "referenc e")."""
    from qtpy.QtWidgets import QTextEdit

    out = []
    for view in root.findChildren(QTextEdit):
        if not seen(view):
            continue
        if view.horizontalScrollBar().isVisible():
            out.append(f"{type(view).__name__} {view.objectName()!r} scrolls sideways")
        block = view.document().begin()
        while block.isValid():
            text, layout = block.text(), block.layout()
            for k in range(layout.lineCount() - 1):
                end = layout.lineAt(k).textStart() + layout.lineAt(k).textLength()
                if 0 < end < len(text) and not (
                    text[end - 1].isspace() or text[end].isspace() or text[end - 1] in "-/|,"
                ):
                    a, b = text.rfind(" ", 0, end) + 1, text.find(" ", end)
                    out.append(f"a text view breaks {text[a : b if b >= 0 else None]!r} after {text[a:end]!r}")
            block = block.next()
    return out


def trajectory_problems(app) -> list[str]:
    """The trajectory's plotting area under TRAJECTORY_MIN_PX, its year label outside the plot widget, or its tool
    row in more than two rows (at 1366 x 768 it had wrapped to three, a year box alone on the third)."""
    traj = app.trajectory
    if not seen(traj.plot):
        return []
    out = []
    flow = traj.tools.layout()
    rows, bottom = 0, -1
    for g in sorted((flow.itemAt(k).geometry() for k in range(flow.count()) if not flow.itemAt(k).isEmpty()),
                    key=lambda g: g.top()):  # fmt: skip
        if g.top() > bottom:  # below the row before: a new row
            rows, bottom = rows + 1, g.bottom()
        bottom = max(bottom, g.bottom())
    if rows > 2:
        out.append(f"the trajectory's tools take {rows} rows in {traj.tools.width()} px")
    vb = traj.plot.getPlotItem().vb
    if vb.sceneBoundingRect().height() < TRAJECTORY_MIN_PX:
        out.append(f"the trajectory's plotting area is {vb.sceneBoundingRect().height():.0f} px tall")
    axis = traj.plot.getAxis("bottom")  # its tick labels, the years, inside the plot widget
    if axis.isVisible() and axis.sceneBoundingRect().bottom() > traj.plot.height() + 1:
        out.append(f"the trajectory's year axis ends {axis.sceneBoundingRect().bottom():.0f} px down a plot "
                   f"{traj.plot.height()} px tall")  # fmt: skip
    label = axis.label
    text_bottom = label.sceneBoundingRect().bottom() - label.document().documentMargin()
    if label.isVisible() and text_bottom > traj.plot.height():
        out.append(f"the trajectory's year label ends {text_bottom:.0f} px down a plot {traj.plot.height()} px tall")
    scroll = app.docks["Trajectory"].widget()  # the dock's scroll area: its caption's last line had been cut
    if scroll.verticalScrollBar().isVisible():
        out.append(f"the Trajectory dock scrolls (needs {traj.minimumSizeHint().height()} px, has {scroll.height()})")
    if traj.info.heightForWidth(traj.info.width()) > traj.info.height() + 1:
        out.append(f"the trajectory's caption needs {traj.info.heightForWidth(traj.info.width())} px, has "
                   f"{traj.info.height()}")  # fmt: skip
    years = (traj.tools.period_from.text().strip(), traj.tools.period_to.text().strip())
    if app.session.index is None and any(years):
        out.append(f"the trajectory's period shows years {years} before a site is open")
    return out


def pair_problems(app) -> list[str]:
    """A pair panel's title wider or taller than the room it has."""
    out = []
    if not seen(app.pair.graphics):
        return out
    room = app.pair.graphics.viewport().width()
    for title in app.pair.labels:
        have, need = title.boundingRect(), title.itemRect()
        if need.width() > have.width() + 1 or need.height() > have.height() + 1:
            out.append(f"pair title {title.text!r} needs {need.width():.0f} x {need.height():.0f} px")
    for item in [*app.pair.labels, *app.pair.views]:  # a long title had widened its column past the dock
        if item.sceneBoundingRect().right() > room + 3:  # the layout's 2 px margin and rounding
            out.append(f"pair {type(item).__name__} reaches {item.sceneBoundingRect().right():.0f} px of {room}")
    return out


def item_view_rows(app) -> tuple[int, ...] | None:
    """The top and bottom (window pixels) of the item's view in the mode shown (annotate or adjudicate), and of the
    trajectory's plot when it is seen."""
    review = getattr(app, "review", None)
    panel = review.tabs.currentWidget() if review is not None else None
    focus = getattr(panel, "focus", None)
    if focus is None or not seen(focus):
        return None
    qwin = app.viewer.window._qt_window
    top = focus.mapTo(qwin, focus.rect().topLeft()).y()
    plot = app.trajectory.plot
    below = (plot.mapTo(qwin, plot.rect().topLeft()).y(), plot.height()) if seen(plot) else ()
    return top, top + focus.height(), *below


def coverage_problems(app) -> list[str]:
    """The Coverage dock's sensor lanes closer than their names are high (ten lanes in ~90 px had overlapped)."""
    from qtpy.QtCore import QPointF
    from qtpy.QtGui import QFont, QFontMetrics

    tab = getattr(app, "coverage_tab", None)  # built when its tab is first shown: not built, not seen
    if tab is not None and not tab.built:
        return []
    cov = app.coverage
    if not seen(cov.graphics) or not cov.timeline.items:
        return []
    vb = cov.timeline.vb
    lane = vb.mapViewToScene(QPointF(0, 0)).y() - vb.mapViewToScene(QPointF(0, 1)).y()
    font = cov.timeline.getAxis("left").style.get("tickFont") or QFont(cov.graphics.font())
    need = QFontMetrics(font).height()
    return [f"the coverage lanes are {lane:.0f} px apart, their names {need} px high"] if lane < need else []


def question_problems(app) -> list[str]:
    """The expert's question view lower than QUESTION_MIN_LINES lines (beside a 520 px review dock a commented
    flag's decision table had squeezed it to ~120 px, the question's fields out of sight)."""
    review = getattr(app, "review", None)
    expert = getattr(review, "expert", None)
    if expert is None or not seen(expert.focus):
        return []
    need = QUESTION_MIN_LINES * expert.focus.fontMetrics().lineSpacing()
    if expert.focus.viewport().height() < need:
        return [f"the expert's question view is {expert.focus.viewport().height()} px tall, under {need}"]
    return []


def bank_question_problems(app, bank: Path) -> list[str]:
    """Every question of `bank` in the annotator's question view: none makes it scroll sideways (a trend's slope
    and its range, item 13 of the demo bank, had made the field table 1 px too wide at 1366 x 768)."""
    from reviewer.app.qt_review_parts import question_html

    focus = app.review.annotator.focus
    html, out = focus.toHtml(), []
    for line in (bank / "questions.jsonl").read_text().splitlines():
        q = json.loads(line)
        focus.setHtml(question_html(q))
        wait(lambda: False, 0.05)
        out += [f"{q['id']}: {p}" for p in clipped_html(focus.parentWidget())]
    focus.setHtml(html)
    return out


def caption_problems(app) -> list[str]:
    """The date caption over the canvas: shown whenever a date is, naming it, whole inside the canvas and clear of
    napari's scale bar (in the canvas's bottom-right corner: the caption stays in its top half)."""
    from reviewer.app.qt_window import canvas_widget

    s, label, canvas = app.session, app.caption, canvas_widget(app.viewer)
    scene = s.current_scene
    if scene is None or label is None or canvas is None or not canvas.isVisible():
        return []
    out = []
    if not seen(label) or not label.text().startswith(f"{scene.date.isoformat()} {scene.label}   "):
        out.append(f"the date caption says {label.text()!r} (shown: {seen(label)}) of {scene.date} {scene.label}")
    g, room = label.geometry(), canvas.rect()
    if not room.contains(g) or g.bottom() > room.height() // 2:
        out.append(f"the date caption at {g.getRect()} in a canvas of {room.width()} x {room.height()} px")
    return out


def sideways_docks(qwin) -> list[str]:
    """Docks whose content scrolls sideways: a scroll area in a dock a user sees, its horizontal scroll bar shown (at
    1366 x 768 with MODIS ticked, napari's ~186 px date label widened the middle column and the Stack dock's controls
    went behind a sideways scroll bar, their right edge out of sight). Tables and text views: `clipped_cells`,
    `clipped_html`."""
    from qtpy.QtWidgets import QDockWidget, QScrollArea

    out = []
    for dock in qwin.findChildren(QDockWidget):
        if not seen(dock):
            continue
        for area in dock.findChildren(QScrollArea):
            content = area.widget()
            if seen(area) and area.horizontalScrollBar().isVisible() and content is not None:
                need = max(content.minimumSizeHint().width(), content.minimumWidth())
                out.append(f"the {dock.windowTitle()} dock scrolls sideways ({need} px of content in "
                           f"{area.viewport().width()} px)")  # fmt: skip
    return out


def fit_problems(app) -> list[str]:
    """What a program sees cut or squeezed in the window now (empty: nothing)."""
    qwin = app.viewer.window._qt_window
    tables = clipped_widgets(qwin) + clipped_cells(qwin) + clipped_html(qwin) + cut_list_rows(qwin)
    tables += sideways_docks(qwin)
    tables += elided_date_label(app) + caption_problems(app)
    return tables + trajectory_problems(app) + pair_problems(app) + coverage_problems(app) + question_problems(app)


def make_shots_store(tmp: Path, db: Path, bank: Path, site: Path) -> Path:
    """ann halfway with her confidence, bob done with two flags: the expert has split items with confidences."""
    from reviewer.review import api
    from reviewer.store import Store
    from tests.gui.test_review_dock import BANK, make_store

    store_path = make_store(tmp / "review.sqlite", db, bank, site)
    with Store(store_path) as store:
        rows = api.my_items(store, BANK, user="ann")
        for r in rows[: len(rows) // 2]:
            api.decide(store, r["item"], api.Decision("accept", confidence="high", seconds=41), user="ann")
        for k, r in enumerate(api.my_items(store, BANK, user="bob")):
            verdict, reasons = ("flag", ["wrong_reference", "ambiguous_evidence"]) if k < 2 else ("accept", None)
            comment = "the scar is north of the region; the reference area looks too small to me" if k < 2 else None
            decision = api.Decision(verdict, reasons=reasons, confidence="low", seconds=95, comment=comment)
            api.decide(store, r["item"], decision, user="bob")
    return store_path


def make_failures_set(tmp: Path, bank: Path) -> Path:
    """The failure-coding set of the failures dock's tests (three questions of `bank`, two models' runs)."""
    from reviewer.bank.io import BankContent, write_bank
    from reviewer.cli import main as cli
    from tests.gui.test_failures_dock import Q7, Q18, Q29, _runs
    from tests.unit import bank_factory as bf

    questions = [q for q in map(json.loads, (bank / "questions.jsonl").read_text().splitlines())
                 if q["id"] in (Q7, Q29, Q18)]  # fmt: skip
    sites = [json.loads(s) for s in (bank / "sites.jsonl").read_text().splitlines()]
    content = BankContent(
        "dock", "1", questions, sites, [bf.pair("P1", Q7)], frozen=True, created="2026-12-01T00:00:00Z"
    )
    write_bank(tmp / "coding-bank", content)
    (tmp / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _runs()))
    out = tmp / "set.json"
    assert (
        cli(["failures", "sample", str(tmp / "runs.jsonl"), str(tmp / "coding-bank"), "--seed", "2", "--out", str(out)])
        == 0
    )
    return out


ALL_ROLES = "annotator,annotator_done,expert,maintainer,failures,viewer"


def main(site: Path, db: Path, bank: Path, out: Path, roles: str = ALL_ROLES) -> int:
    import napari
    from qtpy.QtCore import Qt
    from qtpy.QtTest import QTest
    from qtpy.QtWidgets import QScrollArea

    from reviewer.app.main_window import ReviewerApp
    from reviewer.app.recent import RecentSites

    tmp = Path(tempfile.mkdtemp(prefix="shots-review-"))
    store_path = make_shots_store(tmp, db, bank, site)
    out.mkdir(parents=True, exist_ok=True)
    problems: dict[str, list[str]] = {}
    plot_px: dict[str, float] = {}  # the trajectory's plotting area (px tall) in each shot where it is seen
    size = None
    rows = None  # where the item's view was at the mode's first shot

    def shot(app, name: str, *, same_rows: bool = False) -> None:
        """`same_rows`: the item's view must be where it was (a status line or the flag bar had moved it)."""
        nonlocal size, rows
        wait(lambda: False, 0.4)  # the layouts and the paint
        qwin = app.viewer.window._qt_window
        size = f"{qwin.width()}x{qwin.height()}"
        path = out / f"review_{name}_{size}.png"
        app.viewer.screenshot(str(path), canvas_only=False, flash=False)
        problems[name] = fit_problems(app)
        if seen(app.trajectory.plot):
            plot_px[name] = round(app.trajectory.plot.getPlotItem().vb.sceneBoundingRect().height(), 1)
        now = item_view_rows(app)
        if same_rows and now != rows:
            problems[name].append(f"the item's view moved from rows {rows} to {now}")
        rows = now
        print(path, problems[name])

    def press(app, *keys, mod=Qt.NoModifier) -> None:
        for k in keys:
            QTest.keyClick(app.viewer.window._qt_viewer.canvas.native, getattr(Qt, f"Key_{k}"), mod)

    users = {"annotator": "ann", "annotator_done": "bob", "expert": "eve", "maintainer": "mia", "failures": "eve"}
    for role in roles.split(","):
        viewer = napari.Viewer(show=True)
        app = ReviewerApp(viewer, db=store_path, recent=RecentSites(tmp / "recent.json"), scoring=False)
        if role == "viewer":  # no review dock: a site opened, a pixel clicked
            app.open_site(site)
            wait(lambda app=app: app.session.frame_shown() and app.settled, 120)
            app.session.pixel_clicked.emit(32, 32)
            wait(lambda app=app: app.trajectory.series is not None and not app.trajectory.busy, 60)
            shot(app, "viewer")
        elif role == "failures":  # the coding dock on a set of runs of three of the bank's questions
            from reviewer.app.qt_failures import close_failures_dock, install_failures_dock

            install_failures_dock(app, make_failures_set(tmp, bank), users[role], "expert")
            app.docks["Trajectory"].raise_()
            wait(lambda app=app: app.failures.loader.shown(trajectory=True), 120)
            wait(lambda app=app: app.settled, 30)
            shot(app, "failures")
            viewer.window._qt_window.activateWindow()  # the dock's keys are the window's shortcuts
            wait(viewer.window._qt_window.isActiveWindow, 5)
            press(app, "2")  # s001 coded: the saved line in the codebook's words ("Time sampling"), the next run shown
            wait(lambda app=app: app.failures.loader.shown(trajectory=True), 120)
            shot(app, "failures_saved")
            close_failures_dock(app)
        else:
            app.start_review(users[role], "annotator" if role == "annotator_done" else role)
        qwin = viewer.window._qt_window
        qwin.activateWindow()
        wait(qwin.isActiveWindow, 5)
        if role in ("viewer", "failures"):
            pass
        elif role == "annotator_done":
            wait(lambda app=app: app.settled, 30)
        elif role != "maintainer":
            app.docks["Trajectory"].raise_()
            wait(lambda app=app: app.review.loader.shown(trajectory=True), 120)
            wait(lambda app=app: app.settled, 30)
        if role == "annotator":
            shot(app, "annotator")
            app.trajectory.progress.setVisible(True)  # as while a clicked pixel's series is read: nothing moves
            shot(app, "trajectory_reading", same_rows=True)
            app.trajectory.progress.setVisible(False)
            press(app, "F")
            shot(app, "annotator_flag", same_rows=True)
            press(app, "Escape", "M")  # a confidence pending, then saved with an accept: the next item comes
            shot(app, "annotator_pending", same_rows=True)
            press(app, "A")
            wait(lambda app=app: app.review.loader.shown(trajectory=True), 60)
            shot(app, "annotator_saved", same_rows=True)
            press(app, "F1")  # the keys dialog (its last paragraph had been cut)
            shot(app, "help")
            app._help.grab().save(str(out / f"keys_dialog_{size}.png"))  # a window of its own: not in the shot
            app._help.close()
            app.docks["Pair"].raise_()
            wait(lambda app=app: bool(app.pair.rgbs) and not app.pair.busy, 60)
            shot(app, "pair")
            app.docks["Chips"].raise_()
            wait(lambda app=app: bool(app.chips.labels) and not app.chips.busy, 60)
            shot(app, "chips")
            press(app, "4", mod=Qt.ControlModifier)  # Ctrl+4 brings the Coverage dock to the front
            shot(app, "coverage")
            problems["question_fields"] = bank_question_problems(app, bank)
        elif role == "annotator_done":  # bob has decided every item of his
            shot(app, "annotator_done")
        elif role == "expert":
            shot(app, "expert_table")
            # the review dock as wide as a 1600 px window left it when the window was made smaller: the middle
            # column, the trajectory's, is then ~360 px wide
            qwin.resizeDocks([app.docks["Review"]], [520], Qt.Horizontal)
            shot(app, "expert_wide_review")
            press(app, "A")  # asks for the rationale (a hint in the status band)
            QTest.keyClicks(app.review.expert.rationale, "the burn scar shows on both dates; bob's flag stands")
            shot(app, "expert_rationale", same_rows=True)
            QTest.keyClick(app.review.expert.rationale, Qt.Key_Escape)  # leaves the field, the rationale kept
            press(app, "2", "R")  # a reject reason by its number, then the reject is saved with the rationale
            wait(lambda app=app: app.review.loader.shown(trajectory=True), 60)
            shot(app, "expert_rejected")  # the saved line names the reason
            app.review.tabs.setCurrentWidget(app.review.annotator)
            shot(app, "expert_annotate")
            # MODIS ticked beside the 520 px review dock (the narrowest canvas): a MODIS date's label is the longest
            # ("2016-10-07 MODIS Terra", ~186 px), and must show whole under the canvas
            wait(lambda app=app: app.review.loader.shown(trajectory=True), 60)
            app.state.locked = False
            app.state.composite = "ndvi"  # (a MODIS NDVI product makes no other composite)
            for name in ("MODIS Terra", "MODIS Aqua"):
                app.controls.sensor_checks[name].setChecked(True)
            s = app.session
            wait(lambda s=s: s.stack is not None and any(sc.label.startswith("MODIS") for sc in s.stack.scenes), 60)
            modis = [i for i, sc in enumerate(s.stack.scenes) if sc.label.startswith("MODIS")]
            last = max(modis, key=lambda i, s=s: (len(s.stack.scenes[i].label), i))  # the longest name, the latest
            s.jump_to_index(last)
            wait(lambda app=app, last=last: app.session.frame_shown(last) and app.settled, 60)
            shot(app, "expert_modis_date")
        elif role == "maintainer":
            # the trajectory's tools before a site: no years (they had said "shade 1970 - 1970")
            app.docks["Trajectory"].raise_()
            admin = app.review.maintainer
            scroll = admin.findChild(QScrollArea)
            shot(app, "maintainer_assign")
            admin.quality.compute.click()
            wait(lambda admin=admin: admin.quality.report is not None, 60)
            wait(lambda: False, 0.3)  # the table filled and laid out
            scroll.ensureWidgetVisible(admin.quality.plot, 0, 0)
            shot(app, "maintainer_quality")
            scroll.ensureWidgetVisible(admin.drafts, 0, 0)
            shot(app, "maintainer_drafts")
            admin.freeze_version.setText("1")
            admin.freeze_out.setText(str(tmp / "frozen-v1"))
            scroll.ensureWidgetVisible(admin.freeze_button, 0, 0)
            shot(app, "maintainer_freeze")
        app.close()
        viewer.close()
    (out / f"problems_{size}.json").write_text(json.dumps(problems, indent=1))
    (out / f"trajectory_px_{size}.json").write_text(json.dumps(plot_px, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(*(Path(a).resolve() for a in sys.argv[1:5]), *sys.argv[5:6]))
