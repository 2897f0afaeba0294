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
