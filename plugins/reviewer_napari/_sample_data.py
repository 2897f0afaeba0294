"""Sample data: the demo site (generated once into the user cache directory)."""

from __future__ import annotations


def make_demo_site():
    from reviewer.app.layers import site_layer_data
    from reviewer.record.demo import ensure_demo_site

    return site_layer_data(ensure_demo_site())
