"""bank."""
