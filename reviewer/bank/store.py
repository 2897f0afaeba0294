"""Moved: a bank in the review store is reviewer.review.banks (importing a bank into the review store is a
review operation, and bank sits below review).

Kept only for bank.generate's `store=` argument, which still imports `import_bank` from here; the
`reviewer generate --store` verb imports through reviewer.review.banks itself. Remove this module with that
argument (generate.py belongs to issue 28); .importlinter ignores this one import until then.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reviewer.store import Store


def import_bank(store: Store, folder: str | Path, *, user: str | None = None) -> tuple[str, str]:
    """reviewer.review.banks.import_bank."""
    from reviewer.review.banks import import_bank as into_review

    return into_review(store, folder, user=user)
