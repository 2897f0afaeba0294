"""What tests measure on a rendered figure's pixels."""

from __future__ import annotations

import numpy as np


def longest_run(row: np.ndarray) -> int:
    """The longest run of True in a row of pixels (a scale bar's white inside, in pixels)."""
    best = run = 0
    for v in row:
        run = run + 1 if v else 0
        best = max(best, run)
    return best
