"""The viewer's time-stack array renders only the dates napari asks for."""

import numpy as np
import pytest

from reviewer.app.frames import FrameArray, ShownFrame


def make(n=5, h=4, w=3):
    asked = []

    def frame(i):
        asked.append(i)
        return np.full((h, w), i, np.uint8)

    return FrameArray(n, (h, w), np.uint8, frame), asked


def test_one_date_renders_only_that_date():
    fa, asked = make()
    assert fa.shape == (5, 4, 3) and fa.ndim == 3 and fa.dtype == np.uint8 and len(fa) == 5
    out = fa[2, 1:3, :]
    assert out.shape == (2, 3) and (out == 2).all()
    assert asked == [2]
    assert (fa[-1] == 4).all()  # the last date, as numpy counts
    assert asked == [2, 4]


def test_ranges_of_dates_stack_frames():
    fa, asked = make()
    out = fa[1:4, 0]
    assert out.shape == (3, 3) and list(out[:, 0]) == [1, 2, 3]
    assert np.asarray(fa).shape == (5, 4, 3)
    assert fa[np.array([0, 4])][:, 0, 0].tolist() == [0, 4]


def test_date_out_of_range_is_an_index_error():
    fa, _ = make()
    with pytest.raises(IndexError):
        fa[5]


def test_the_shown_frame_is_one_date_another_date_or_stack_shows_through_the_same_array():
    """The layer's array is 2-D, the date shown: `show` points it at another date or another stack of the same
    frame shape, rendered at the next slice; napari's repeated slices of one date render it once."""
    fa, asked = make()
    shown = ShownFrame(fa, 3)
    assert shown.shape == (4, 3) and shown.ndim == 2 and shown.dtype == np.uint8
    assert (shown[:, :] == 3).all() and (np.asarray(shown) == 3).all() and shown[1, 2] == 3
    assert asked == [3]  # rendered once for the three reads
    shown.show(fa, 0)
    assert (shown[:, :] == 0).all() and asked == [3, 0]
    other, asked_other = make(n=2)
    shown.show(other, 1)
    assert (shown[:, :] == 1).all() and asked_other == [1] and asked == [3, 0]
    shown.forget()  # its frame was read since: rendered again
    assert (shown[:, :] == 1).all() and asked_other == [1, 1]
    with pytest.raises(ValueError):
        shown.show(make(h=5)[0], 0)  # another frame shape takes napari's data setter
