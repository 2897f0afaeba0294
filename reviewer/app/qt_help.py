"""The keyboard help dialog (the keys are bound in `main_window.bind_keys`)."""

from __future__ import annotations

from qtpy.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

KEYS = (
    ("Left / Right", "previous / next date"),
    ("Shift+Left / Shift+Right", "previous / next year (first date of the year)"),
    ("P (Shift+P while reviewing)", "pair view: the remembered pair, else the first date and the shown date"),
    ("S", "lock / unlock the stretch"),
    ("O", "quality overlay on / off"),
    ("F1", "this help"),
    ("click on the canvas", "trajectory at that pixel"),
    ("click a chip / a year / a trajectory point", "show that date"),
)


def _rows(keys) -> str:
    return "".join(f"<tr><td><b>{k}</b></td><td>&nbsp;&nbsp;{v}</td></tr>" for k, v in keys)


def help_html() -> str:
    from reviewer.app.qt_review_parts import ANNOTATOR_KEYS, EXPERT_KEYS

    return (
        "<h3>EarthRecord Reviewer: keys</h3><table>" + _rows(KEYS) + "</table>"
        "<h4>Review dock, annotator mode</h4><table>" + _rows(ANNOTATOR_KEYS) + "</table>"
        "<h4>Review dock, expert mode</h4><table>" + _rows(EXPERT_KEYS) + "</table>"
        "<p>Every date is drawn with the one stretch shown in the Stack dock; lock it to keep it while filtering.</p>"
    )


class QtHelpDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard")
        layout = QVBoxLayout(self)
        label = QLabel(help_html())
        label.setWordWrap(True)
        layout.addWidget(label)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


def show_help(parent: QWidget | None = None, return_focus: QWidget | None = None) -> QtHelpDialog:
    """Show the keys; when the dialog closes, focus goes back to `return_focus` (the canvas), so the keys work
    again at once instead of after a click on the canvas."""
    dialog = QtHelpDialog(parent)
    if return_focus is not None:
        dialog.finished.connect(lambda _result: return_focus.setFocus())
    dialog.show()
    return dialog
