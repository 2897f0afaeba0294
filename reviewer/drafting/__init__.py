"""AI-drafted visual interpretations (issue 12): `reviewer draft`, through the anthropic SDK.

What the review dock needs: `item_draft(store, key, user=...)` (the current version's draft and any second
opinions, as display fields; confidence hidden from the roles the study setting names) and `draft_display(question)`.
The job itself is reviewer.drafting.run (draft_bank, draft_bank_batch); settings and the prompt are data in
assets/drafting.
"""

from typing import Any

__all__ = ["draft_display", "item_draft"]


def __getattr__(name: str) -> Any:
    """Imported when first used: `reviewer --help` must not load numpy and jsonschema through this package."""
    if name in __all__:
        from reviewer.drafting import draft

        return getattr(draft, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
