"""The arrays behind the canvas's image and overlay layers: the stack's dates, each frame rendered on request
(`FrameArray`, no task graph), and the one date napari shows (`ShownFrame`, a 2-D view of one date of it).

The date is the session's own state (`ViewState.current`), not a napari dims axis: the layers are 2-D, and a date
step is the same `ShownFrame` rendering another date plus the layer's `refresh()` (napari's data setter runs only
when the display grid's shape changes). As a dims axis, each step had napari slice every layer and each item of
another stack its data setter and dims round (issue 27: ~50 ms of an item change).

(A dask array of one block per date cost ~8 ms per step on the UI thread against ~3 ms for rendering the frame from
the scene cache directly.)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class _Shaped:
    """What napari asks of an array-like beside slicing it, from its `shape`."""

    shape: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def __len__(self) -> int:
        return self.shape[0]


class FrameArray(_Shaped):
    """A lazy (date, row, col[, channel]) array-like: `frame(i)` renders date i on request."""

    def __init__(self, n: int, frame_shape: tuple[int, ...], dtype, frame: Callable[[int], np.ndarray]) -> None:
        self.shape = (int(n), *(int(x) for x in frame_shape))
        self.dtype = np.dtype(dtype)
        self._frame = frame

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


class ShownFrame(_Shaped):
    """The 2-D (row, col[, channel]) array a layer shows: date `date` of `frames` (a `FrameArray`). napari slices it
    whole; `show` points it at another date or another stack of the same frame shape, and the layer's `refresh()`
    then draws that (no napari data setter, no dims). The frame rendered last is kept until `show` or `forget`: napari
    slices a layer again for each of its setters (scale, translate, visible), and another site's grid re-rendered the
    same date for each (a 1,600 px frame's stretch is ~40 ms)."""

    def __init__(self, frames: FrameArray, date: int = 0) -> None:
        self.shape = tuple(frames.shape[1:])
        self.dtype = frames.dtype
        self.frames = frames
        self.date = int(date)
        self._kept: np.ndarray | None = None  # the frame rendered last, of (frames, date)

    def fits(self, frames: FrameArray) -> bool:
        """`frames` has this array's frame shape and type: `show` can take it."""
        return tuple(frames.shape[1:]) == self.shape and frames.dtype == self.dtype

    def show(self, frames: FrameArray, date: int) -> None:
        """Show date `date` of `frames` (of the same frame shape: `fits`) from the next slice on."""
        if not self.fits(frames):
            raise ValueError(f"frames of shape {frames.shape[1:]} shown in an array of shape {self.shape}")
        if frames is not self.frames or int(date) != self.date:
            self.frames, self.date, self._kept = frames, int(date), None

    def forget(self) -> None:
        """Render the date again at the next slice (its frame was read since: the last render was a placeholder)."""
        self._kept = None

    def frame(self) -> np.ndarray:
        """The shown date's whole frame (rendered once per `show`)."""
        if self._kept is None:
            self._kept = np.asarray(self.frames[self.date])
        return self._kept

    def __getitem__(self, key):
        return self.frame()[key]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.frame()
        return out.astype(dtype) if dtype is not None else out

    def __repr__(self) -> str:
        return f"ShownFrame(date {self.date} of {self.frames!r})"
