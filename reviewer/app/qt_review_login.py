"""Who is working: --user NAME or REVIEWER_USER, else a dialog over the store's profiles (name and role)."""

from __future__ import annotations

import os

from qtpy.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from reviewer.review import api
from reviewer.review.ledger import USER_ENV


class WhoDialog(QDialog):
    """Pick a profile of the store; `choice()` is the (name, role) picked."""

    def __init__(self, users: list[dict], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Who is working?")
        self.users = users
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Review as:"))
        self.combo = QComboBox()
        for u in users:
            self.combo.addItem(f"{u['name']} ({u['role']})", u["name"])
        layout.addWidget(self.combo)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def choice(self) -> tuple[str, str]:
        u = self.users[self.combo.currentIndex()]
        return u["name"], u["role"]


def who_is_working(
    store, given: str | None = None, *, ask: bool = True, parent: QWidget | None = None
) -> tuple[str, str] | None:
    """(name, role) from --user, REVIEWER_USER or the dialog; None when the store has no users or the
    dialog was cancelled. An unknown given name raises the core's ReviewError. `parent`: the app's window, whose
    style (napari's dark theme) the dialog takes (without one it was drawn in Qt's light default)."""
    users = api.working_profiles(store)  # once logins are bound: only the profiles of this OS login
    name = given or os.environ.get(USER_ENV)
    if name:
        for u in users:
            if u["name"] == name:
                return u["name"], u["role"]
        from reviewer.review.ledger import get_user

        get_user(store, name)  # raises the core's message
    if not users or not ask:
        return None
    dialog = WhoDialog(users, parent)
    return dialog.choice() if dialog.exec() == QDialog.Accepted else None
