"""failures."""
