"""The CLI's output channel: results for the user go to stdout here; diagnostics go through logging."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

S = TypeVar("S")
T = TypeVar("T")


def echo(*parts: Any, err: bool = False, end: str = "\n") -> None:
    """Write one line of command output (stdout, or stderr with err=True)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(" ".join(str(p) for p in parts) + end)


def figure(x: Any) -> str:
    """A figure as the tables show it: three decimals, '-' for none, and never '-0.000' (a kappa of -1e-17 is 0)."""
    if not isinstance(x, float):
        return "-" if x is None else str(x)
    text = f"{x:.3f}"
    return "0.000" if text == "-0.000" else text


def seconds_text(x: Any) -> str:
    """Seconds as `reviewer review status` says them, to a tenth ("95.0"; `figure`'s "95.000" read as thousands)."""
    return "-" if x is None else f"{x:.1f}"


def run_verb(
    open_store: Callable[[], AbstractContextManager[S]],
    call: Callable[[S], T],
    *,
    as_json: bool = False,
    say: Callable[[T], str | Iterable[str] | None] | None = None,
) -> int:
    """The one shape of a CLI verb: open the store, call the core with it (the store is closed however the call
    ends), then print the result: as JSON with --json, else the line or lines `say` makes of it. Exit status 0;
    an error propagates to reviewer.cli.main, which prints one `error:` line and exits 2. The verb's module imports
    the core function it calls inside the verb, so a verb loads only what it needs."""
    with open_store() as store:
        out = call(store)
    if as_json:
        echo(json.dumps(out, ensure_ascii=False, indent=2))
    elif say is not None:
        text = say(out)
        for line in [text] if isinstance(text, str) else text or ():
            echo(line)
    return 0
