"""A tabbed dock's content built the first time its tab comes to the front, or when the app first asks for it:
the docks behind other tabs at launch (Coverage, Scoring, Pair) cost nothing before the first imagery (issue 27).
A tab in front at launch (Trajectory) can be `held`: left empty until `release()`, which the launch calls once the
first imagery is on screen."""

from __future__ import annotations

from collections.abc import Callable

from qtpy.QtCore import Signal
from qtpy.QtWidgets import QVBoxLayout, QWidget


class LazyTab(QWidget):
    """Holds the widget `build()` makes, made by `content()` (the dock's tab picked calls `on_shown`).
    `held`: a tab shown is not built until `release()` (asked for by `content()`, it is built at once).
    `built_now`: the content was just built (its dock may be a tab behind: qt_dock_keys.follow_tab)."""

    built_now = Signal()

    def __init__(self, build: Callable[[], QWidget], name: str, *, held: bool = False) -> None:
        super().__init__()
        self.setObjectName(name)
        self._build: Callable[[], QWidget] | None = build
        self._content: QWidget | None = None
        self._held = held
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    @property
    def built(self) -> bool:
        return self._content is not None

    @property
    def held(self) -> bool:
        """Not built yet and waiting for `release()`."""
        return self._held and self._content is None

    def content(self) -> QWidget:
        """The real widget, built now if it was not yet."""
        if self._content is None and self._build is not None:
            build, self._build = self._build, None
            self._content = build()
            self.layout().addWidget(self._content)
            self.built_now.emit()
        return self._content

    def on_shown(self) -> None:
        """Its dock came to the front: build the content (unless held), which then draws what it shows."""
        if self._held and self._content is None:
            return
        content = self.content()
        if hasattr(content, "on_shown"):
            content.on_shown()

    def release(self) -> None:
        """No longer held: built now if its tab is in front, else when it comes to the front."""
        self._held = False
        if self.isVisible():
            self.on_shown()
