"""The CLI's output channel: results for the user go to stdout here; diagnostics go through logging."""

from __future__ import annotations

import sys
from typing import Any


def echo(*parts: Any, err: bool = False, end: str = "\n") -> None:
    """Write one line of command output (stdout, or stderr with err=True)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(" ".join(str(p) for p in parts) + end)
