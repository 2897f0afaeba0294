"""Review store and the two-stage review workflow."""
