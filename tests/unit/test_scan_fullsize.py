"""A scan counts a quality layer on the file's own pixels, each weighted by the site pixels that take it
(issue 31: a Sentinel-2 tile's 20 m SCL was first copied onto its 10 m site, four times its pixels), and a
whole-scene QA_PIXEL goes through GDAL rather than the small-file decoder: the fractions are those of the
layer placed on the site grid, worked out by hand here."""

from __future__ import annotations

import numpy as np
import pytest

from reviewer.record import decode
from reviewer.record.scan import scan_site
from tests.conftest import write_site_json
from tests.formats import S2_CRS, S2_ORIGIN, write_safe
from tests.sites import make_site

VEG, CLOUD_HIGH = 4, 9  # SCL classes: vegetation (clear), cloud high probability


def _tile() -> dict:
    """A 600 m tile: 10 m red, 20 m SCL whose west half (300 m) is vegetation and east half cloud."""
    scl = np.full((30, 30), VEG, np.uint8)
    scl[:, 15:] = CLOUD_HIGH
    return {("B04", 10): np.full((60, 60), 1500, np.uint16), ("SCL", 20): scl}


@pytest.mark.parametrize("res", [10, 30])
def test_scl_counted_on_its_own_pixels_for_a_site_crossing_the_tile_edge(tmp_path, res):
    # the site runs from 150 m inside the tile's west edge to 150 m past its east edge, 300 m high: a
    # quarter of its width is vegetation (150-300 m), half cloud (300-600 m), a quarter outside the tile;
    # at 10 m each SCL pixel is four site pixels, at 30 m the site takes some SCL rows/columns and not others
    w, n = S2_ORIGIN
    site = write_site_json(tmp_path / "s", bbox=[w + 150, n - 300, w + 750, n], crs=S2_CRS, resolution=res)
    write_safe(site, _tile())
    (scene,) = scan_site(site).scenes
    assert scene.valid_fraction == pytest.approx(0.75)  # outside the tile is not valid
    assert scene.clear_fraction == pytest.approx(0.25)
    assert scene.cloud_fraction == pytest.approx(2 / 3)  # of the valid pixels


def test_a_large_qa_pixel_read_through_gdal_gives_the_same_fractions(tmp_path, monkeypatch):
    site = make_site(tmp_path / "ls", "landsat_small")
    small = {s.scene_id: (s.valid_fraction, s.clear_fraction, s.cloud_fraction) for s in scan_site(site).scenes}
    monkeypatch.setattr(decode, "DIRECT_MAX_PIXELS", 0)  # every QA_PIXEL as a whole scene's: through GDAL
    large = {s.scene_id: (s.valid_fraction, s.clear_fraction, s.cloud_fraction) for s in scan_site(site).scenes}
    assert len(small) > 10 and large == small
    assert any(0 < c < 1 for _, c, _ in small.values()), "some scene is partly cloudy"
