"""app: Qt/napari widgets only (no logic): the stack viewer, its docks and background jobs."""
