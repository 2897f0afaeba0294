"""The keyboard help dialog (the keys are bound in `main_window.bind_keys`)."""

from __future__ import annotations

from qtpy.QtWidgets import QDialog, QDialogButtonBox, QDockWidget, QLabel, QVBoxLayout, QWidget

KEYS = (
    ("Left / Right", "previous / next date"),
    ("Shift+Left / Shift+Right", "previous / next year (first date of the year)"),
    ("P (Shift+P while reviewing / coding)", "pair view: the remembered pair, else the first date and the shown date"),
    ("S", "lock / unlock the stretch"),
    ("O", "quality overlay on / off"),
    ("F1", "this help"),
    ("Tab / Shift+Tab", "from the canvas: the Review (or Failures) dock first; after the last field, the canvas"),
    ("Esc", "in a dock's field: back to the canvas, the text kept"),
    (
        "Ctrl+1 ... Ctrl+9",
        "bring a dock to the front: Review, Stack, Trajectory, Coverage, Chips, Pair, Scoring, "
        "Failures, Generate (Reviewer menu > Show dock)",
    ),  # fmt: skip
    ("click on the canvas", "trajectory at that pixel"),
    ("click a chip / a year / a trajectory point", "show that date"),
    (
        "the date slider (under the canvas)",
        "click or drag to a date; once clicked, Left / Right, Shift+Left / Shift+Right, Home / End step it "
        "(on the canvas Left / Right step the same date)",
    ),
)

HELP_WIDTH = 640  # px: the key tables' two columns without a break in a key's name


def _rows(keys) -> str:
    return "".join(f"<tr><td><b>{k}</b></td><td>&nbsp;&nbsp;{v}</td></tr>" for k, v in keys)


def help_html(docks: set[str] | frozenset[str] = frozenset()) -> str:
    """The keys of the window, and those of the docks where its person works among `docks` (the window's dock
    names): the Review dock's modes, the Failures dock's coding; a window with neither (a viewer) lists the Review
    dock's. Each table is the one its dock shows (every key said once, where it is bound)."""
    from reviewer.app.qt_review_parts import ANNOTATOR_KEYS, EXPERT_KEYS, FAILURE_KEYS

    tables = (
        ("Review", "Review dock, annotator mode", ANNOTATOR_KEYS),
        ("Review", "Review dock, expert mode", EXPERT_KEYS),
        ("Failures", "Failures dock, coding", FAILURE_KEYS),
    )
    work = {dock for dock, _title, _keys in tables} & set(docks) or {"Review"}
    return (
        "<h3>EarthRecord Reviewer: keys</h3><table>" + _rows(KEYS) + "</table>"
        + "".join(f"<h4>{title}</h4><table>{_rows(keys)}</table>" for dock, title, keys in tables if dock in work)
        + "<p>Every date is drawn with the one stretch shown in the Stack dock; lock it to keep it while filtering.</p>"
    )  # fmt: skip


class QtHelpDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, docks: set[str] | frozenset[str] = frozenset()) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard")
        layout = QVBoxLayout(self)
        self.label = QLabel(help_html(docks))
        self.label.setWordWrap(True)
        self.label.setFixedWidth(HELP_WIDTH)
        layout.addWidget(self.label)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        """A window is sized by its label's one-line hint, not by its height at the width it gets: the last
        paragraph was cut at 1366 x 768 (541 px of text in 525). Once shown (napari's style sheet and its font
        applied), the label gets the height of its text at its width."""
        self.label.setMinimumHeight(self.label.heightForWidth(HELP_WIDTH))
        super().showEvent(event)


def show_help(parent: QWidget | None = None, return_focus: QWidget | None = None) -> QtHelpDialog:
    """Show the keys (those of the docks in `parent`'s window), with the keyboard in the dialog (Esc closes it); when
    it closes, focus goes back to `return_focus` (the canvas) in its window, so the keys work again at once instead
    of after a click."""
    window = parent.window() if parent is not None else None
    docks = {d.objectName() for d in window.findChildren(QDockWidget)} if window is not None else set()
    dialog = QtHelpDialog(parent, docks)
    if return_focus is not None:

        def back(_result: int) -> None:
            return_focus.window().activateWindow()
            return_focus.setFocus()

        dialog.finished.connect(back)
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog
