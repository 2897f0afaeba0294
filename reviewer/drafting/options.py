"""The settings of a drafting job as one object: what the `draft` verb and tests pass to reviewer.drafting.run.

Frozen, so that one job's settings cannot change under its worker threads; kept apart from run.py so that
building it imports neither the anthropic SDK nor the renderer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from reviewer.errors import DraftingError


@dataclass(frozen=True)
class DraftOptions:
    """Which items are drafted and how.

    - `which`: 'visual' (the default when empty), 'all', 'rejected', or item ids (reviewer.drafting.run.select).
    - `model`: the Claude model; None is drafting.json's model.
    - `concurrency`: requests in flight (Messages API only); None is drafting.json's concurrency.
    - `redraft`: draft items that have a draft already (otherwise they are skipped: resume).
    - `second_opinion`: the drafts go to the items' event logs, not into new versions (Messages API only).
    - `site_folders`: a site record's folder by site id, for sites the store has not scanned.
    - `poll_s`: seconds between polls of a Message Batch; None is drafting.json's batch.poll_s.
    """

    which: tuple[str, ...] = ()
    model: str | None = None
    concurrency: int | None = None
    redraft: bool = False
    second_opinion: bool = False
    site_folders: Mapping[str, str] = field(default_factory=dict)
    poll_s: float | None = None

    def __post_init__(self) -> None:
        # a caller's list or dict cannot change the options afterwards
        object.__setattr__(self, "which", tuple(self.which or ()))
        object.__setattr__(self, "site_folders", MappingProxyType(dict(self.site_folders or {})))

    def check_batch(self) -> None:
        """Refuse settings the Message Batches API cannot honour (before a key or a store is touched)."""
        if self.second_opinion:
            raise DraftingError("--second-opinion works through the Messages API, not --batch")
