"""Reader: a folder with a site.json opens as the site's lazy stack; anything else is not ours (None)."""

from __future__ import annotations

from pathlib import Path


def napari_get_reader(path):
    """Cheap check only (a directory holding site.json); never raises."""
    if isinstance(path, list):
        if len(path) != 1:
            return None
        path = path[0]
    try:
        p = Path(path)
        if p.is_dir() and (p / "site.json").is_file():
            return read_site
    except (OSError, TypeError, ValueError):
        return None
    return None


def read_site(path):
    """[(data, kwargs, type)] layers of the site: the stack and its boundary (see reviewer.app.layers)."""
    from reviewer.app.layers import site_layer_data

    if isinstance(path, list):
        path = path[0]
    return site_layer_data(path)
