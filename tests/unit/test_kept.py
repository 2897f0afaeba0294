"""What the worker that opens a site makes for the UI thread is kept for the last four sites used
(`reviewer.app.kept.Kept`): the Stack dock's choices per site index and each site's boundary raster. A site looked at
again counts as used: a reviewer going back and forth between her site and four others does not have its choices
and boundary made again each time (they were kept in the order made, and the fifth site dropped the one in use)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from reviewer.app import composite_choices, evidence_prep
from reviewer.app.kept import Kept
from tests.unit.test_composite_choices import S2, scene


def test_the_least_recently_used_goes_first():
    kept: Kept[str] = Kept(2)
    kept.put("a", "A")
    kept.put("b", "B")
    assert kept.get("a") == "A"  # a used again: b is now the oldest use
    kept.put("c", "C")
    assert (kept.get("a"), kept.get("b"), kept.get("c"), len(kept)) == ("A", None, "C", 2)


def test_a_site_looked_at_again_keeps_its_choices_while_four_others_are_opened():
    sites = [SimpleNamespace(scenes=[scene(S2, ["B02", "B03", "B04", "SCL"])]) for _ in range(5)]
    first = composite_choices.site_choices(sites[0])  # (4 sites kept: these four take every place)
    second = [composite_choices.site_choices(other) for other in sites[1:4]][0]
    assert composite_choices.site_choices(sites[0]) is first  # back to the first site: kept (4 sites so far)
    later = composite_choices.site_choices(sites[4])  # a fifth site: the one not looked at longest goes, sites[1]
    assert composite_choices.site_choices(sites[0]) is first
    assert composite_choices.site_choices(sites[4]) is later
    assert composite_choices.site_choices(sites[1]) is not second  # made again


def test_a_site_looked_at_again_keeps_its_boundary_raster_while_four_others_are_drawn(tmp_path):
    made = []

    def site(name: str) -> SimpleNamespace:
        ring = np.array([(0, 0), (0, 8), (8, 8), (8, 0), (0, 0)], float)  # (row, col): the 8 px site's edge

        def lines():
            made.append(name)
            return [ring]

        return SimpleNamespace(
            dir=tmp_path / name, shape=(8, 8), boundary_path=tmp_path / name / "b.geojson", boundary_lines=lines
        )

    sites = [site(n) for n in "abcde"]
    raster = evidence_prep.site_boundary_raster(sites[0])
    assert raster.shape == (1600, 1600)  # drawn at VIEW_PX across: 1,600 // 8 = 200 raster px a site px
    for s in sites[1:4]:
        evidence_prep.site_boundary_raster(s)
    evidence_prep.site_boundary_raster(sites[0])  # site a looked at again
    evidence_prep.site_boundary_raster(sites[4])  # a fifth site: b goes, not a
    evidence_prep.site_boundary_raster(sites[0])
    assert made == ["a", "b", "c", "d", "e"]  # a's boundary read once
    evidence_prep.site_boundary_raster(sites[1])
    assert made[-1] == "b"
