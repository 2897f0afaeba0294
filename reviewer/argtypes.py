"""argparse `type=` checks for numeric options: finite and in range, refused before any work starts.

A value out of range is an argparse error (one `error:` line, exit status 2, see reviewer.cli). Only
the standard library is imported, so building the parser stays light.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _number(text: str, kind: type) -> float | int:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {'an integer' if kind is int else 'a number'}: {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"needs a finite number, got {text!r}")
    return value


def integer(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """An integer within [lo, hi] (either bound optional)."""

    def parse(text: str) -> int:
        value = _number(text, int)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            if hi is None:
                raise argparse.ArgumentTypeError(f"needs an integer of at least {lo}, got {text!r}")
            if lo is None:
                raise argparse.ArgumentTypeError(f"needs an integer of at most {hi}, got {text!r}")
            raise argparse.ArgumentTypeError(f"needs an integer from {lo} to {hi}, got {text!r}")
        return value

    parse.__name__ = "integer"
    return parse


def positive_float(text: str) -> float:
    """A finite number above 0."""
    value = _number(text, float)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"needs a finite number above 0, got {text!r}")
    return value


def open_fraction(text: str) -> float:
    """A number strictly between 0 and 1."""
    value = _number(text, float)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"needs a fraction between 0 and 1, got {text!r}")
    return value
