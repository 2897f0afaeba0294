"""napari plugin (npe2) for EarthRecord Reviewer: a thin adapter over `reviewer`.

A reader that opens a site folder dropped on napari, the reviewer's dock widgets, and the demo site as
sample data. All logic lives in `reviewer.record` (data) and `reviewer.app` (widgets).
"""

__all__: list[str] = []
