"""AI-drafted visual interpretations (issue 12): `reviewer draft`, through the anthropic SDK.

What the review dock needs: `item_draft(store, key, user=...)` (the current version's draft and any second
opinions, as display fields; confidence hidden from the roles the study setting names) and `draft_display(question)`.
The job itself is reviewer.drafting.run (draft_bank, draft_bank_batch); settings and the prompt are data in
assets/drafting.
"""

from reviewer.drafting.draft import draft_display, item_draft

__all__ = ["draft_display", "item_draft"]
