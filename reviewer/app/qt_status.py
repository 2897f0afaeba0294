"""The status line: date, sensor, scene id, tier, clear %, and the physical values under the cursor."""

from __future__ import annotations

from qtpy.QtWidgets import QHBoxLayout, QLineEdit, QSizePolicy, QWidget

from reviewer.app.session import StackSession


class QtStatusLine(QWidget):
    def __init__(self, session: StackSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        # a read-only line edit, not a QLabel: its size hint does not follow its text, so a new status
        # at every date step repaints one line instead of re-laying out the window (and the canvas)
        self.label = QLineEdit(session.status_text())
        self.label.setReadOnly(True)
        self.label.setFrame(False)
        self.label.setStyleSheet("font-family: monospace; background: transparent;")
        self.label.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        layout.addWidget(self.label, 1)
        session.status.connect(self._on_status)

    def _on_status(self, text: str) -> None:
        self.label.setText(text)
        self.label.setCursorPosition(0)

    def text(self) -> str:
        return self.label.text()
