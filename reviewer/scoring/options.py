"""The settings of a scoring as one object: what the `score` verb, the app's Scoring panel and tests pass to
reviewer.scoring.api. Kept apart from api.py so that building it imports neither scipy nor the metrics."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from reviewer.errors import ScoringError
from reviewer.scoring import BOOTSTRAP_RESAMPLES


@dataclass(frozen=True)
class ScoringOptions:
    """What is scored and how.

    - `passes`: answers per question and model (pass^k over them).
    - `bootstrap`, `seed`: resamples of the questions for the intervals (0: none) and their seed.
    - `lenient`: skip bad run lines (listed in the scores' problems) instead of refusing the file.
    - `models`: only these models (None: every model in the runs).
    - `draft`: score a bank that is not frozen (its scores are not comparable with others).
    - `rescore_from`: the bank the runs were made on, when they are scored on this one without a rerun.
    - `subset`: only the questions the review settled that way (reviewer.scoring.subset.SUBSETS).
    """

    passes: int = 3
    bootstrap: int = BOOTSTRAP_RESAMPLES
    seed: int = 0
    lenient: bool = False
    models: Collection[str] | None = None
    draft: bool = False
    rescore_from: str | Path | None = None
    subset: str | None = None

    def __post_init__(self) -> None:
        if self.bootstrap < 0:
            raise ScoringError("--bootstrap must be 0 or more")
        if self.models is not None:  # a caller's list cannot change the options afterwards
            object.__setattr__(self, "models", frozenset(self.models))
