"""One place that turns errors into a message the user reads once (napari notification + log), never a
traceback. Workers and slicing threads report through `report_error`, which is thread-safe.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading

from qtpy.QtCore import QObject, Signal

from reviewer.errors import ReviewerError

logger = logging.getLogger(__name__)

#: What a dock's read or save through the core can raise and the dock says in one line: the core's own refusals
#: (ReviewerError: a role, a rule, a missing item), the store's database (a locked or damaged SQLite file) and the
#: file system (a full disk, a missing or unreadable file). Anything else is a bug, not a refusal: it propagates
#: to napari's error notification with its traceback in the log, instead of reading as "NOT saved: ...".
CORE_ERRORS: tuple[type[Exception], ...] = (ReviewerError, sqlite3.Error, OSError)


class _Bridge(QObject):
    message = Signal(str, str)  # level, text


class ErrorReporter:
    """Collects messages (tests read `.messages`) and shows each one once as a napari notification.

    `notify` False (a `--screenshot` run, which nobody watches): a message is not shown as a napari notification,
    which napari also prints to the terminal (its console level cannot be set above ERROR), and an error is not
    logged either: the run's caller says it (`main_window.launch`: a site that could not open as main.py's one
    `error:` line, any other error logged at the end). A site whose site.json had a mistake had been said three
    times: napari's "ERROR: ...", this reporter's log line, main.py's `error:` line."""

    def __init__(self) -> None:
        self.notify = True
        self.messages: list[tuple[str, str]] = []
        self._bridge = _Bridge()
        self._bridge.message.connect(self._show)
        self._lock = threading.Lock()
        self._recent: set[str] = set()

    def error(self, exc: BaseException | str, *, context: str = "") -> None:
        """Report an error; ReviewerError shows its message, anything else a short type + text."""
        if isinstance(exc, ReviewerError):
            text = str(exc)
        elif isinstance(exc, BaseException):
            logger.error("unexpected error%s", f" ({context})" if context else "", exc_info=exc)
            if os.environ.get("REVIEWER_RAISE"):
                raise exc
            text = f"{type(exc).__name__}: {exc}"
        else:
            text = exc
        if context:
            text = f"{context}: {text}"
        self._emit("error", text)

    @property
    def reported(self):
        """A Qt signal (level, text) emitted on the UI thread for each message shown: for a caller that must act on
        a failure (the launch's --screenshot quits on a site that cannot open instead of waiting for its imagery)."""
        return self._bridge.message

    def info(self, text: str) -> None:
        self._emit("info", text)

    def warning(self, text: str) -> None:
        self._emit("warning", text)

    def _emit(self, level: str, text: str) -> None:
        with self._lock:
            if text in self._recent:  # the same failure from many slices is shown once
                return
            self._recent.add(text)
            self.messages.append((level, text))
        self._bridge.message.emit(level, text)

    def forget(self) -> None:
        """Allow messages to show again (on opening another site)."""
        with self._lock:
            self._recent.clear()

    def _show(self, level: str, text: str) -> None:
        from napari.utils.notifications import show_error, show_info, show_warning

        if self.notify or level != "error":  # (a held error is said by the run's caller)
            getattr(logger, "info" if level == "info" else "warning")("%s", text)
        if self.notify:
            {"error": show_error, "warning": show_warning, "info": show_info}[level](text)
