"""The viewer's time-stack array renders only the dates napari asks for."""

import numpy as np
import pytest

from reviewer.app.frames import FrameArray


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


def test_another_renderer_shows_through_the_same_array():
    """A new stretch keeps the layer's array: the next slice of any date is rendered by the new function."""
    fa, asked = make()
    fa[3]
    fa.set_frame(lambda i: np.full((4, 3), 100 + i, np.uint8))
    assert fa.shape == (5, 4, 3)
    assert (fa[3] == 103).all() and (fa[0] == 100).all()
    assert asked == [3]  # the old renderer is not asked again
