"""The state of the item coming up, as plain evented Python (psygnal; no Qt, no napari): tested without a display
in tests/unit/test_item_pipeline.py. The review dock's loader only asks and reports here:

- `Token`: names one request (an item shown, a prefetch plan). A worker's result carries the token it was started
  with; the UI applies it only while that token is still the current one, else drops it. Nothing compares item
  keys or timers to decide that a result is stale.
- `ItemEvidence`: the item shown and its evidence: loading, shown or failed (with the reason).
- `PrefetchPlan`: the items prepared ahead (nearest first) under one token; a new plan (or none) cancels the old
  one: its workers ask `live(token)` before each step and stop.
- `PendingSave`: the decision being saved and its outcome (saved, or not saved and why).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from psygnal import evented

_serials = itertools.count(1)
_serial_lock = threading.Lock()

LOADING, SHOWN, FAILED = "loading", "shown", "failed"
SAVING, SAVED, NOT_SAVED = "saving", "saved", "not saved"


@dataclass(frozen=True)
class Token:
    """One request for `item` (None: a prefetch plan); `serial` is unique in the process, so two requests for the
    same item are told apart (the reviewer went N then P back to it)."""

    item: str | None
    serial: int

    @classmethod
    def new(cls, item: str | None) -> Token:
        with _serial_lock:
            return cls(item, next(_serials))


@evented
@dataclass
class ItemEvidence:
    """The item shown and where its evidence is: `status` loading / shown / failed (`reason` then says why)."""

    token: Token | None = None
    status: str = ""
    reason: str = ""

    @property
    def item(self) -> str | None:
        return self.token.item if self.token is not None else None

    def begin(self, item: str) -> Token:
        """A new item comes up: every result for the item before it is stale from now on."""
        token = Token.new(item)
        self.token, self.reason, self.status = token, "", LOADING
        return token

    def current(self, token: Token | None) -> bool:
        """The result of this request is still wanted (its item is the one shown, asked for last)."""
        return token is not None and token == self.token

    def shown(self, token: Token) -> bool:
        """The evidence of `token` is on screen; False (and nothing changes) for a stale token."""
        if not self.current(token):
            return False
        self.status = SHOWN
        return True

    def failed(self, token: Token, reason: str) -> bool:
        """The evidence of `token` cannot be shown: `reason` is said instead; False for a stale token."""
        if not self.current(token):
            return False
        self.reason, self.status = reason, FAILED
        return True

    @property
    def loading(self) -> bool:
        return self.status == LOADING


@evented
@dataclass
class PrefetchPlan:
    """The items prepared ahead, nearest first, under one token. Workers run on other threads: `live(token)` is a
    read of one reference (atomic in Python), so a worker stops at its next step once the plan was replaced."""

    token: Token | None = None
    items: tuple[str, ...] = ()

    def replace(self, items: Sequence[str]) -> Token:
        """A new plan (the items after the one shown); the plan before it is cancelled."""
        token = Token.new(None)
        self.token, self.items = token, tuple(items)
        return token

    def cancel(self) -> None:
        """No plan: every prefetch worker stops at its next step."""
        self.token, self.items = None, ()

    def live(self, token: Token | None) -> bool:
        return token is not None and token == self.token

    def wants(self, item: str | None) -> bool:
        return item is not None and item in self.items


@evented
@dataclass
class PendingSave:
    """The decision being saved: `item`, `verdict` and `status` saving / saved / not saved; `message` is what the
    dock says (the saved line, or why it was not saved: the decision then stays on screen)."""

    item: str | None = None
    verdict: str | None = None
    status: str = ""
    message: str = ""

    def start(self, item: str, verdict: str) -> None:
        self.item, self.verdict, self.message, self.status = item, verdict, "", SAVING

    def saved(self, message: str) -> None:
        self.message, self.status = message, SAVED

    def not_saved(self, message: str) -> None:
        self.message, self.status = message, NOT_SAVED

    @property
    def outcome(self) -> str | None:
        """saved / not saved once the save returned, else None."""
        return self.status if self.status in (SAVED, NOT_SAVED) else None
