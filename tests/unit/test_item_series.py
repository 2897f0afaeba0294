"""The trajectory an item shows is read for the index it is labelled with (issue 27, "evidence is always the
item's"): a view that names no index (the built-up compare template: a SWIR composite) read no series at all and
the plot said "no observation of NDVI over this region" for a site whose every date is clear there."""

from __future__ import annotations

import numpy as np

from reviewer.app.evidence_prep import Prepared, item_series_name, item_trajectory
from reviewer.bank.evidence import EvidenceView, Region
from reviewer.record.stretch import Stretch


def test_a_view_without_an_index_reads_the_ndvi_it_is_plotted_as(tmp_path):
    from reviewer.record.scan import open_index
    from reviewer.record.stack import open_stack
    from reviewer.store import Store
    from tests.sites import make_site

    site = make_site(tmp_path / "site", "core", start=2018, end=2020, scenes_per_year=2)
    with Store(tmp_path / "store.sqlite") as store:
        index = open_index(site, store)
    view = EvidenceView(composite="swir", stretch=Stretch.default("swir"), region=Region(kind="site"))
    stack = open_stack(index, composite="swir", sensors=("OLI",))
    mask = np.ones(index.site.shape, bool)
    p = Prepared("q", view, index, (), stack, 0, None, None, None, "", [], {}, mask)

    assert item_series_name(view) == "ndvi"  # what the plot's axis and caption say
    series = item_trajectory(p, False, lambda: False)
    assert len(stack) >= 3  # OLI scenes of 2018-2020
    assert len(series.values) == len(stack)  # one NDVI value per date (the old code: none)
    values = np.array(series.values, float)
    assert np.isfinite(values).sum() >= len(stack) - 1 and np.all(values[np.isfinite(values)] <= 1)
    assert p.series_key(False)[1] == "ndvi"


def test_a_whole_scene_region_is_named_without_its_pixels(tmp_path):
    """A whole-scene item's region (a full-size Landsat scene: 7,591 x 7,741 px) names its series by a digest: the
    key held the mask's 58.8 MB, copied on the UI thread at each look-up (~0.1 s each, 8 at the first item) and kept
    with every series read. The same pixels give the same key, one pixel more another."""
    mask = np.zeros((7591, 7741), bool)
    mask[100:7000, 50:7700] = True
    view = EvidenceView(composite="swir", stretch=Stretch.default("swir"), region=Region(kind="site"))

    class Stack:  # (what series_key reads of a stack: its scenes)
        scenes = ()

    def key(m):
        return Prepared("q", view, None, (), Stack(), 0, None, None, None, "", [], {}, m).series_key(False)

    k = key(mask)
    assert len(repr(k)) < 300  # (the old key's repr: 58.8 M bytes' worth)
    assert key(mask.copy()) == k
    other = mask.copy()
    other[7000, 7700] = True
    assert key(other) != k
    assert key(mask[:, :7740]) != k  # another grid
