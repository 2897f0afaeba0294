"""A long verb's progress on stderr, readable wherever stderr goes.

On a terminal, a rich progress bar (removed when the verb ends, so the summary or the one `error:` line
follows it cleanly). With stderr redirected (CI, a log file, the app's job process) no bar is drawn: a
plain line is written now and then (each tenth of the work, and the end) when the verb asks for lines,
so a log never fills with carriage returns and an error stays the one `error:` line.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO


class StderrProgress:
    """Use as a context manager; call `update(fraction, message)` or `count(done, total, message)`."""

    def __init__(self, what: str, *, lines_when_redirected: bool = True, stream: TextIO | None = None) -> None:
        self.what = what
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.lines = lines_when_redirected and not self.tty
        self._bar: Any = None
        self._task: Any = None
        self._next_tenth = 1

    def __enter__(self) -> StderrProgress:
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[msg]}"),
                console=Console(file=self.stream),
                transient=True,
            )
            self._task = self._bar.add_task(self.what, total=1.0, msg="")
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def update(self, fraction: float, message: str = "") -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        if self._bar is not None:
            self._bar.update(self._task, completed=fraction, msg=message[:60])
        elif self.lines and (fraction >= 1.0 or fraction * 10 >= self._next_tenth):
            self._next_tenth = int(fraction * 10) + 1
            self.stream.write(f"{self.what}: {fraction:4.0%} {message}".rstrip() + "\n")
            self.stream.flush()

    def count(self, done: int, total: int, message: str = "") -> None:
        self.update(done / total if total else 1.0, f"{done}/{total} {message}".strip())
