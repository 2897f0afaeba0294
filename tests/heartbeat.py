"""A heartbeat on the UI thread: how long the UI was blocked while something ran (the drafting bench and the
Drafts GUI test measure the same figure)."""

from __future__ import annotations

import time


class Heartbeat:
    """A 10 ms QTimer on the UI thread; the largest gap between ticks is the longest UI block."""

    def __init__(self) -> None:
        from qtpy.QtCore import QTimer

        self.gaps: list[float] = []
        self.last = time.perf_counter()
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self.last)
        self.last = now

    def stop(self) -> tuple[float, float, int]:
        """The longest gap, the 99th percentile and how many gaps were over 100 ms."""
        self.timer.stop()
        gaps = sorted(self.gaps[1:]) or [0.0]
        return gaps[-1], gaps[int(0.99 * (len(gaps) - 1))], sum(g > 0.1 for g in gaps)
