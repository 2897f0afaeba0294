"""The status line: date, sensor, scene id, tier, clear %, and the physical values under the cursor."""

from __future__ import annotations

from qtpy.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

from reviewer.app.session import StackSession


class QtStatusLine(QWidget):
    def __init__(self, session: StackSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        self.label = QLabel(session.status_text())
        self.label.setStyleSheet("font-family: monospace;")
        # a changing text must not re-layout the main window (that resizes and redraws the canvas)
        self.label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.label.setFixedHeight(self.label.sizeHint().height() + 4)
        layout.addWidget(self.label, 1)
        session.status.connect(self.label.setText)

    def text(self) -> str:
        return self.label.text()
