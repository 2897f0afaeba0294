"""A review item's region as the canvas draws it (`evidence_prep.region_raster`): the very pixels its trajectory
averages, its border a band of REGION_EDGE inside them. Plain numpy, no display."""

from __future__ import annotations

import numpy as np

from reviewer.app.evidence_prep import REGION_EDGE, REGION_INSIDE, region_raster


def test_a_square_region_is_its_pixels_with_a_one_pixel_edge():
    mask = np.zeros((8, 8), bool)
    mask[2:6, 1:6] = True  # 4 rows x 5 columns
    out = region_raster(mask)
    # a site under 400 px across: a band of one pixel; the 2 x 3 pixels inside it are the region's inside
    want = np.zeros((8, 8), np.uint8)
    want[2:6, 1:6] = REGION_EDGE
    want[3:5, 2:5] = REGION_INSIDE
    assert out.dtype == np.uint8 and np.array_equal(out, want)


def test_a_region_on_the_site_border_has_its_edge_there():
    mask = np.ones((5, 5), bool)  # the whole site (a question with no region of its own)
    out = region_raster(mask)
    assert (out[0] == REGION_EDGE).all() and (out[:, -1] == REGION_EDGE).all()
    assert (out[1:4, 1:4] == REGION_INSIDE).all()


def test_the_edge_band_widens_with_the_site():
    mask = np.zeros((800, 810), bool)  # 810 px across: a band of round(810 / 400) = 2 pixels
    mask[100:300, 100:300] = True
    out = region_raster(mask)
    row = out[200, 95:110]
    assert row.tolist() == [0] * 5 + [REGION_EDGE] * 2 + [REGION_INSIDE] * 8
    assert not out[~mask].any()
