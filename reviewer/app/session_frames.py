"""The canvas's frames, read off the UI thread at display size: napari slices on the UI thread, so a date not read
yet shows a placeholder until the frame reader has it (then the layer re-slices). Each date is read at VIEW_PX
across (`Stack.at_width`: from a COG's overviews, or decimated), not at the site's full resolution."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from qtpy.QtCore import QObject, Signal

from reviewer.app.evidence_prep import shown_stack
from reviewer.app.frames import FrameArray
from reviewer.record.series import quality_codes
from reviewer.record.stack import Stack
from reviewer.record.stretch import Stretch

READY_KEYS = 4096  # frames remembered as read (their data is in the scene cache)
PLACEHOLDER_GREY = 40  # what a date shows for the few ms until its frame is read
FRAMES_KEPT = 16  # recent frames' channels kept for the status line's values
RENDERED_KEPT = 4  # frames rendered ahead (an item's opening date, by the evidence worker) kept for napari's slice


class FrameSource(QObject):
    """Reads frames for the canvas in its own thread and renders them when napari slices; `on_read(key, error)`
    runs on the UI thread once a requested frame is read (the session re-slices the layer showing it)."""

    frame_read = Signal(object)  # (key, error or None) from the frame reader, handled on the UI thread

    def __init__(self, on_read: Callable[[tuple, BaseException | None], None], report) -> None:
        super().__init__()
        self.on_read = on_read
        self.report = report  # (error, context) -> None: said once, in the window's messages
        self._frames: OrderedDict[tuple, np.ndarray] = OrderedDict()  # recent frames' channels (status line)
        #: (frame key, id(stretch)) -> (stretch, channels, RGB) of frames rendered ahead off the UI thread
        self._rendered: OrderedDict[tuple, tuple[Stretch, np.ndarray, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()
        self._ready: OrderedDict[tuple, None] = OrderedDict()  # keys of frames read recently (data in the cache)
        self._requested: set[tuple] = set()
        self._failed: dict[tuple, BaseException] = {}
        self.shown: tuple | None = None  # the key of the frame the image layer shows (None: its placeholder)
        self.overlay_shown: tuple | None = None
        self.all_masked: set[tuple[int, int]] = set()  # (id(stack), date) of frames with no clear pixel
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="frame")
        self.frame_read.connect(self._on_frame_read)

    @staticmethod
    def frame_key(stack: Stack, composite: str, i: int) -> tuple:
        """Names what a read puts in the scene cache: the same for every stack over the same scene."""
        s = stack.scenes[i]
        return ("frame", s.files_root, s.key, composite, stack.harmonized, shown_stack(stack).grid.shape)

    @staticmethod
    def codes_key(stack: Stack, i: int) -> tuple:
        s = stack.scenes[i]
        return ("overlay", s.files_root, s.key, shown_stack(stack).grid.shape)

    def _mark_ready(self, key: tuple) -> None:
        with self._lock:
            self._ready[key] = None
            self._ready.move_to_end(key)
            while len(self._ready) > READY_KEYS:
                self._ready.popitem(last=False)

    def _is_ready(self, key: tuple) -> bool:
        with self._lock:
            return key in self._ready

    def read_frame(self, stack: Stack, composite: str, i: int) -> np.ndarray:
        """Read date i's channels at display size (any thread: the evidence worker too) and remember that the frame
        is in the cache, so the canvas shows it without asking the frame reader again."""
        channels = shown_stack(stack).read(i, composite)
        self._mark_ready(self.frame_key(stack, composite, i))
        return channels

    def render_ahead(self, stack: Stack, composite: str, stretch: Stretch, i: int) -> None:
        """Read date i and render it through `stretch` (any thread: the evidence worker), so that napari's slice of it
        on the UI thread only takes the RGB (a 1,600 px frame's stretch is ~40 ms of CPU)."""
        channels = self.read_frame(stack, composite, i)
        rgb = stretch.apply(channels)
        key = (self.frame_key(stack, composite, i), id(stretch))
        with self._lock:
            self._rendered[key] = (stretch, channels, rgb)
            self._rendered.move_to_end(key)
            while len(self._rendered) > RENDERED_KEPT:
                self._rendered.popitem(last=False)

    def _rendered_rgb(self, key: tuple, stretch: Stretch) -> tuple[np.ndarray, np.ndarray] | None:
        """(channels, RGB) of a frame rendered ahead through this very stretch, else None."""
        with self._lock:
            kept = self._rendered.get((key, id(stretch)))
        return kept[1:] if kept is not None and kept[0] is stretch else None

    def read_codes(self, stack: Stack, i: int) -> np.ndarray:
        codes = quality_codes(shown_stack(stack), i)
        self._mark_ready(self.codes_key(stack, i))
        return codes

    def values(self, stack: Stack, composite: str, i: int) -> np.ndarray | None:
        """Channels of a frame already read (None when not yet in memory: never blocks)."""
        with self._lock:
            return self._frames.get(self.frame_key(stack, composite, i))

    def _request(self, key: tuple, read) -> None:
        """Read a frame in the frame reader; `frame_read` brings the result back to the UI thread."""
        if key in self._requested:
            return
        self._requested.add(key)

        def job() -> None:
            try:
                read()
                result = (key, None)
            except Exception as exc:  # noqa: BLE001 - reported on the UI thread, once
                result = (key, exc)
            try:
                self.frame_read.emit(result)
            except RuntimeError:  # the session closed meanwhile
                pass

        self._reader.submit(job)

    def _on_frame_read(self, payload) -> None:
        key, exc = payload
        self._requested.discard(key)
        if exc is not None:
            self._failed[key] = exc
        self.on_read(key, exc)

    def render(self, stack: Stack, composite: str, stretch: Stretch, i: int) -> np.ndarray:
        """One frame (UI thread, from napari's slicing): physical channels through the stack's stretch if they were
        read, else a placeholder while the frame reader reads them; never raises."""
        shape = (*shown_stack(stack).grid.shape, 3)
        key = self.frame_key(stack, composite, i)
        exc = self._failed.pop(key, None)  # a read that failed in the frame reader
        if exc is None and not self._is_ready(key):
            self.shown = None
            self._request(key, lambda: self.read_frame(stack, composite, i))
            return np.full(shape, PLACEHOLDER_GREY, np.uint8)
        ahead = self._rendered_rgb(key, stretch) if exc is None else None
        if ahead is not None:
            channels, rgb = ahead
        elif exc is None:
            try:
                channels = shown_stack(stack).read(i, composite)  # from the cache (re-read if evicted since)
            except Exception as err:  # noqa: BLE001 - a broken file must not break slicing
                exc = err
        self.shown = key
        if exc is not None:
            s = stack.scenes[i]
            self.report(exc, f"{s.date.isoformat()} {s.label}")
            return np.zeros(shape, np.uint8)
        with self._lock:
            self._frames[key] = channels
            while len(self._frames) > FRAMES_KEPT:
                self._frames.popitem(last=False)
        if not np.isfinite(channels).any():
            self.all_masked.add((id(stack), i))
        return ahead[1] if ahead is not None else stretch.apply(channels)

    def rgb_array(self, stack: Stack, composite: str, stretch: Stretch) -> FrameArray:
        """Lazy (t, y, x, 3) uint8 frames at display size, each date rendered with one stretch when napari slices."""
        shape = (*shown_stack(stack).grid.shape, 3)
        return FrameArray(len(stack), shape, np.uint8, lambda i: self.render(stack, composite, stretch, i))

    def overlay_array(self, stack: Stack) -> FrameArray:
        """Lazy (t, y, x) uint8 overlay codes at display size (1 cloud, 2 shadow, 3 snow, 4 fill/SLC gap)."""
        h, w = shown_stack(stack).grid.shape

        def frame(i: int) -> np.ndarray:
            key = self.codes_key(stack, i)
            exc = self._failed.pop(key, None)
            if exc is None and not self._is_ready(key):
                self.overlay_shown = None
                self._request(key, lambda: self.read_codes(stack, i))
                return np.zeros((h, w), np.uint8)
            self.overlay_shown = key
            if exc is None:
                try:
                    return quality_codes(shown_stack(stack), i)
                except Exception as err:  # noqa: BLE001 - a broken QA file must not break slicing
                    exc = err
            self.report(exc, "quality overlay")
            return np.zeros((h, w), np.uint8)

        return FrameArray(len(stack), (h, w), np.uint8, frame)

    def close(self) -> None:
        self._reader.shutdown(wait=False, cancel_futures=True)
