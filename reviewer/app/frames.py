"""The array napari slices for the time stack: one frame rendered per request, no task graph.

napari only asks for one date at a time. A dask array of one block per date cost ~8 ms per step on the
UI thread (graph culling, then a wait on dask's pool thread, which competes with the prefetch readers
for the GIL) against ~3 ms for rendering the frame from the scene cache directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np


class FrameArray:
    """A lazy (date, row, col[, channel]) array-like: `frame(i)` renders date i on request."""

    def __init__(self, n: int, frame_shape: tuple[int, ...], dtype, frame: Callable[[int], np.ndarray]) -> None:
        self.shape = (int(n), *(int(x) for x in frame_shape))
        self.dtype = np.dtype(dtype)
        self._frame = frame

    def set_frame(self, frame: Callable[[int], np.ndarray]) -> None:
        """Render dates with `frame` from now on (another stretch or stack of the same shape): the layer keeps
        this array, so napari only re-slices instead of rebuilding the layer (~100-200 ms per data swap)."""
        self._frame = frame

    @contextmanager
    def only_date(self, i: int, fill: int = 0, shown: np.ndarray | None = None) -> Iterator[FrameArray]:
        """Within the block, every date but `i` renders as a plain `fill` frame: napari's data setter slices a new array
        at the old step (clamped to the new number of dates) before the session sets the step to the date shown; that
        slice is never seen, so it should neither render a frame on the UI thread (a 1,600 px stretch is ~40 ms) nor
        ask the frame reader to read a date nobody looks at. `shown`: date i's frame, already rendered."""
        frame = self._frame

        def only(j: int) -> np.ndarray:
            if j == i:
                return frame(j) if shown is None else shown
            return np.full(self.shape[1:], fill, self.dtype)

        self._frame = only
        try:
            yield self
        finally:
            self._frame = frame

    @contextmanager
    def every_date(self, shown: np.ndarray) -> Iterator[FrameArray]:
        """Within the block, every date renders as `shown` (a date's frame, already rendered): a step napari clamps to
        the new last date before the session sets the one shown slices that date's frame, not another's."""
        frame = self._frame
        self._frame = lambda _j: shown
        try:
            yield self
        finally:
            self._frame = frame

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def __len__(self) -> int:
        return self.shape[0]

    def _date(self, t) -> int:
        i = int(t)
        n = self.shape[0]
        if not -n <= i < n:
            raise IndexError(f"date {i} out of range for {n} dates")
        return i + n if i < 0 else i

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        t, rest = key[0], key[1:]
        if isinstance(t, (int, np.integer)):
            return np.asarray(self._frame(self._date(t)))[rest]
        dates = range(self.shape[0])[t] if isinstance(t, slice) else [self._date(x) for x in np.asarray(t).ravel()]
        frames = [np.asarray(self._frame(i)) for i in dates]
        out = np.stack(frames) if frames else np.zeros((0, *self.shape[1:]), self.dtype)
        return out[(slice(None), *rest)]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self[:]
        return out.astype(dtype) if dtype is not None else out

    def __repr__(self) -> str:
        return f"FrameArray(shape={self.shape}, dtype={self.dtype})"
