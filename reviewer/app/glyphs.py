"""Warm the canvas font atlas a few glyphs at a time while the UI is idle.

vispy typesets canvas text (the date caption, the scale bar) from a signed-distance-field atlas that
napari fills on first use of each character, 4-14 ms a glyph on the UI thread. A caption with a dozen
characters not seen before blocked the UI for 250-330 ms right after a site opened. Loading the
printable characters in idle-time slices before they are needed keeps every later draw to glyphs
that are already there.
"""

from __future__ import annotations

import logging
import string
import time
from collections.abc import Callable, Iterable

from qtpy.QtCore import QObject, QTimer

logger = logging.getLogger(__name__)

SLICE_MS = 5.0  # glyph work per idle tick (one glyph is 3-14 ms): a step plus a slice stays well under 100 ms
PRINTABLE = string.digits + "-: " + string.ascii_uppercase + string.ascii_lowercase + string.punctuation


def canvas_font(viewer):
    """The texture font napari's canvas text overlays draw with, or None if this napari hides it."""
    try:
        info = viewer.window._qt_viewer.canvas.font_info()  # noqa: SLF001 - napari has no public font API
        return info.font_manager.get_font(info.face)
    except (AttributeError, TypeError):
        logger.debug("canvas font atlas not reachable; glyphs load on first draw", exc_info=True)
        return None


class GlyphWarmer(QObject):
    """Loads queued characters into the canvas font, at most SLICE_MS of work per event-loop turn, and
    only while the user is not stepping (`hold`), so glyph work never adds to a step's own time."""

    def __init__(self, viewer, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._font = canvas_font(viewer)
        self._queue: list[str] = []
        self._failed: set[str] = set()
        self._waiting: list[tuple[set[str], Callable[[], None]]] = []
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._tick)
        self._resume = QTimer(self)
        self._resume.setSingleShot(True)
        self._resume.timeout.connect(self._start)
        self._paused = False

    @property
    def pending(self) -> int:
        return len(self._queue)

    def loaded(self, char: str) -> bool:
        """True if `char` is in the atlas (or cannot be: an unreachable atlas, a glyph the font lacks)."""
        return self._font is None or char in self._failed or char in self._font._glyphs  # noqa: SLF001

    def warm(self, text: Iterable[str], *, first: bool = False) -> None:
        """Queue the characters of `text` not yet in the atlas; `first` puts them before those queued."""
        if self._font is None:
            return
        new = [ch for ch in dict.fromkeys(text) if not ch.isspace() and not self.loaded(ch)]
        if first:
            self._queue = new + [ch for ch in self._queue if ch not in new]
        else:
            self._queue += [ch for ch in new if ch not in self._queue]
        if not self._resume.isActive():
            self._start()

    def when_loaded(self, text: str, then: Callable[[], None]) -> None:
        """Call `then` once every character of `text` is in the atlas: now, or after loading them first."""
        missing = {ch for ch in text if not ch.isspace() and not self.loaded(ch)}
        if not missing:
            then()
            return
        self._waiting.append((missing, then))
        self.warm("".join(sorted(missing)), first=True)
        self._resume.stop()  # the user is waiting for this text: load it now, paused or not
        self._start(force=True)

    def hold(self, ms: int) -> None:
        """Pause for `ms` after the last call (stepping calls this at every step)."""
        self._timer.stop()
        self._resume.start(ms)

    def pause(self) -> None:
        """Stop until `resume` (a site opening: its worker needs the GIL more than glyphs do)."""
        self._paused = True
        self._timer.stop()

    def resume(self) -> None:
        self._paused = False
        if not self._resume.isActive():
            self._start()

    def _start(self, *, force: bool = False) -> None:
        if (force or not self._paused) and self._queue and not self._timer.isActive():
            self._timer.start()

    def _tick(self) -> None:
        t0 = time.perf_counter()
        while self._queue and (time.perf_counter() - t0) * 1000 < SLICE_MS:
            ch = self._queue.pop(0)
            try:
                self._font[ch]
            except Exception:  # noqa: BLE001 - a glyph the font cannot draw is drawn (or not) by vispy later
                self._failed.add(ch)
                logger.debug("glyph %r not preloaded", ch, exc_info=True)
        ready = [w for w in self._waiting if all(self.loaded(ch) for ch in w[0])]
        self._waiting = [w for w in self._waiting if w not in ready]
        for _chars, then in ready:
            then()
        if not self._queue:
            self._timer.stop()
