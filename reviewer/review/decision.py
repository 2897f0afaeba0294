"""What a reviewer decided on one item version, as one object: what the CLI, the app's docks and review packages
hand to `decide` / `adjudicate`, and what those hand to the ledger (one row of the `decisions` table beyond who
made it, on which item version and at which stage)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from reviewer.errors import ReviewError


@dataclass(frozen=True)
class Decision:
    """One decision's fields.

    - `verdict`: stage 1 accept / flag / skip, stage 2 accept / reject / correct, or retract / rule (the tool's).
    - `reasons`: flag or reject codes of the codebook; `comment` (stage 1) or `rationale` (stage 2, retractions).
    - `correction`: the corrected parts of the question (JSON), `view`: the evidence view the decision rests on.
    - `seconds`: time on the item (stage 1; measured from when it was shown when None).
    - `confidence`: the reviewer's own low / medium / high (assets/review/quality.json), or None.
    - `created`: when a decision made elsewhere was made (a review package's, merged on import); None is now.
    - `retracts`: the decision this one takes back (an undo, a reopen, an audit).
    """

    verdict: str
    reasons: Sequence[str] = ()  # kept as a tuple
    comment: str | None = None
    correction: dict[str, Any] | None = None
    rationale: str | None = None
    view: dict[str, Any] | None = None
    seconds: float | None = None
    confidence: str | None = None
    created: str | None = None
    retracts: int | None = None

    def __post_init__(self) -> None:
        # a list (or None) from a caller becomes a tuple: the decision cannot change after it is checked
        object.__setattr__(self, "reasons", tuple(self.reasons or ()))

    def only(self, allowed: tuple[str, ...], what: str) -> None:
        """Refuse the fields a kind of decision does not take (a stage-1 decision has no rationale...)."""
        extra = [
            f.name
            for f in fields(self)
            if f.name not in ("verdict", "reasons", *allowed) and getattr(self, f.name) is not None
        ]
        if extra:
            raise ReviewError(f"{what} takes no {', '.join(extra)}")
