"""app: Qt/napari widgets only (no logic): the stack viewer, its docks and background jobs."""

from reviewer.app._qt_compat import immortalize_singletons

immortalize_singletons()
