"""Layer data for napari's reader and sample-data hooks, and the one reviewer session per viewer that the
plugin's dock widgets share.
"""

from __future__ import annotations

import logging
import weakref
from pathlib import Path

from reviewer.errors import ReviewerError

logger = logging.getLogger(__name__)

_sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_docks: dict[int, int] = {}  # id(session) -> the plugin's docks open on it (`session_for`, `dock_gone`)

SITE_KEY = "reviewer_site_dir"


def site_layer_data(site_dir: str | Path, composite: str = "truecolor") -> list[tuple]:
    """[(data, kwargs, type)]: the site's lazy (t, y, x, 3) stack in the default stretch, and its boundary."""
    from reviewer.record.scan import open_index
    from reviewer.record.stack import open_stack
    from reviewer.record.stretch import Stretch
    from reviewer.store import Store

    with Store() as store:
        index = open_index(site_dir, store)
    stack = open_stack(index, composite=composite)
    site = index.site
    x_m, y_m = site.cell_m  # a pixel's ground size: napari's scale bar in metres, the image in its ground aspect
    meta = {SITE_KEY: str(site.dir), "labels": stack.labels}
    layers: list[tuple] = []
    if len(stack):
        layers.append(
            (
                stack.rgb(composite, Stretch.default(composite)),
                {
                    "name": f"{site.id} {composite}",
                    "rgb": True,
                    "contrast_limits": (0, 255),
                    "scale": (1.0, y_m, x_m),
                    "units": ("pixel", "m", "m"),
                    "metadata": meta,
                },
                "image",
            )
        )
    try:
        rings = site.boundary_lines()
    except (
        ReviewerError,
        OSError,
        ValueError,
    ):  # a bad boundary file (unreadable, not GeoJSON) must not stop the reader
        logger.warning("boundary of %s not drawn", site.id, exc_info=True)
        rings = []
    if rings:
        layers.append(
            (
                rings,
                {
                    "name": f"{site.id} boundary",
                    "shape_type": "path",
                    "edge_color": "yellow",
                    "scale": (y_m, x_m),
                    "units": ("m", "m"),
                    "metadata": meta,
                },
                "shapes",
            )
        )
    return layers


def session_for(viewer):
    """The viewer's reviewer session (created once); opens a site a reader put on the canvas."""
    from reviewer.app.recent import RecentSites
    from reviewer.app.session import StackSession

    session = _sessions.get(viewer)
    if session is None:
        session = StackSession(viewer, recent=RecentSites())
        _sessions[viewer] = session
        site_dirs = [layer.metadata.get(SITE_KEY) for layer in viewer.layers if SITE_KEY in layer.metadata]
        if site_dirs:
            for layer in [lay for lay in viewer.layers if SITE_KEY in lay.metadata]:
                viewer.layers.remove(layer)
            session.open_site(site_dirs[0])
    _docks[id(session)] = _docks.get(id(session), 0) + 1
    return session


def dock_gone(session) -> None:
    """A plugin dock on `session` was deleted (napari deletes its docks when its window closes): the last one gone
    closes the session and forgets it, so a dock opened later starts a new one."""
    left = _docks.get(id(session), 0) - 1
    if left > 0:
        _docks[id(session)] = left
        return
    _docks.pop(id(session), None)
    session.close()
    for viewer, s in list(_sessions.items()):
        if s is session:
            del _sessions[viewer]
