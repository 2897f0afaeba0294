"""A site wider than the canvas's display width (VIEW_PX = 1,600 px): the item's region and the site's boundary are
drawn at the grid the image is shown at, their pixels on the image's pixels. (At the site's own grid a whole Landsat
scene's region and boundary were 58.8 M px Labels layers, drawn on the UI thread: ~0.74 s for the region alone.)
Plain numpy, and napari's Qt-free ViewerModel: no display."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from reviewer.app.evidence_prep import (
    REGION_EDGE,
    REGION_INSIDE,
    boundary_raster,
    display_mask,
    display_shape,
    placement,
    region_raster,
)


def test_a_wide_sites_boundary_is_drawn_at_the_display_grid():
    """A 3,000 x 4,000 px site: shown 1,600 px across, so 1,200 x 1,600 (0.4 of a site pixel a raster pixel); its
    boundary a rectangle from (row 500, col 1000) to (2500, 3000) lands on raster (200, 400) to (1000, 1200), its lines
    round(1,600 / 250) = 6 px wide, from 3 before the line to 2 after it."""
    ring = np.array([(500, 1000), (500, 3000), (2500, 3000), (2500, 1000), (500, 1000)], float)
    out = boundary_raster([ring], (3000, 4000))
    assert out.shape == (1200, 1600) and out.dtype == np.uint8
    assert out[600, 396:404].tolist() == [0, 1, 1, 1, 1, 1, 1, 0]  # the left side, at col 400
    assert out[197:203, 800].tolist() == [1] * 6 and out[196, 800] == 0 and out[203, 800] == 0  # the top, row 200
    assert out[600, 1197:1203].tolist() == [1] * 6  # the right side, at col 1200
    assert not out[210:990, 410:1190].any()  # nothing inside
    assert out.sum() == 4 * 806 * 6 - 4 * 6 * 6  # 4 lines of 806 x 6 px (800 + 6), their 6 x 6 corners once


def test_a_small_sites_boundary_is_as_before():
    """A 200 px site (the demo's): 1,600 // 200 = 8 raster px a site pixel, as it always was; lines
    round(1,600 / 250) = 6 px wide."""
    ring = np.array([(50, 50), (50, 150), (150, 150), (150, 50), (50, 50)], float)
    out = boundary_raster([ring], (200, 200))
    assert out.shape == (1600, 1600)
    assert out[800, 396:404].tolist() == [0, 1, 1, 1, 1, 1, 1, 0]


def test_the_display_grid_is_the_images():
    assert display_shape((3000, 4000)) == (1200, 1600)
    assert display_shape((7741, 7601)) == (1629, 1600)  # round(7741 * 1600 / 7601) = round(1629.47)
    assert display_shape((200, 200)) == (200, 200)  # shown at full resolution
    assert display_shape((3000, 1000)) == (3000, 1000)  # tall and narrow: the image too is read at its grid


def test_a_raster_at_the_display_grid_covers_the_site_as_the_image_does():
    """1,200 x 1,600 raster pixels over 3,000 x 4,000 site pixels of 30 m: 2.5 site px (75 m) a raster pixel; napari
    centres pixel 0 on the translate, so it moves by (75 - 30) / 2 = 22.5 m: raster pixel 0's left edge is at
    22.5 - 37.5 = -15 m, the site pixel 0's left edge (site pixel centres at 0, 30, ...)."""
    scale, translate = placement((3000, 4000), (1200, 1600), (30.0, 30.0))
    assert scale == (75.0, 75.0) and translate == (22.5, 22.5)
    assert placement((200, 200), (200, 200), (30.0, 30.0)) == ((30.0, 30.0), (0.0, 0.0))  # full resolution: as before


def test_a_region_at_the_display_grid():
    """The left half of a 3,000 x 4,000 site (cols < 2,000) shown 1,200 x 1,600: raster cols 0-799 (col 799's centre
    is site col 1,998.75, col 800's 2,001.25), its edge band round(1,600 / 400) = 4 px."""
    mask = np.zeros((3000, 4000), bool)
    mask[:, :2000] = True
    shown = display_mask(mask)
    assert shown.shape == (1200, 1600) and shown[:, :800].all() and not shown[:, 800:].any()
    out = region_raster(shown)
    assert out[600, 790:804].tolist() == [REGION_INSIDE] * 6 + [REGION_EDGE] * 4 + [0] * 4
    assert out[600, :4].tolist() == [REGION_EDGE] * 4 and out[600, 4] == REGION_INSIDE  # the site's edge too
    small = np.zeros((8, 8), bool)
    small[2:6, 1:6] = True
    assert display_mask(small) is small  # a site shown at full resolution: its very pixels


@pytest.fixture
def wide_session(tmp_path):
    """A StackSession on napari's Qt-free ViewerModel with a 2,000 px Landsat site open (shown 1,600 across)."""
    from napari.components import ViewerModel

    from reviewer.app.session import StackSession
    from reviewer.record.scan import scan_site
    from tests.unit.test_fullsize import _big_scene

    s = StackSession(ViewerModel(), prefetch=False)
    s.show_index(scan_site(_big_scene(tmp_path / "wide", size=2000)))
    yield s
    s.close()
    gc.unfreeze()


def test_an_items_region_lies_on_the_images_pixels_on_a_wide_site(wide_session):
    """The region of an item on a 2,000 px site (the left half, site cols < 1,000) drawn on the 1,600 px image:
    1,600 x 1,600 labels with the image's scale (37.5 m) and translate (3.75 m), so the region's last column (799)
    ends where the image's column 799 does: at 3.75 + 37.5 * 799.5 = 29,985 m, the left edge of site column 1,000."""
    s = wide_session
    mask = np.zeros((2000, 2000), bool)
    mask[:, :1000] = True
    s.canvas.show_item_region(region_raster(display_mask(mask)))
    layer, image = s.canvas.item_region_layer, s.image_layer
    assert layer.data.shape == (1600, 1600) == image.data.shape[:2]  # (the image: the shown date's RGB frame)
    assert tuple(layer.scale) == (37.5, 37.5) == tuple(image.scale)
    assert tuple(layer.translate) == (3.75, 3.75) == tuple(image.translate)
    assert layer.data[800, 799] == REGION_EDGE and layer.data[800, 800] == 0
    assert layer.data_to_world((800, 799.5))[1] == pytest.approx(29985.0)


def _lonlat_site(root, days=(1, 9, 17)):
    """MOD11A2 LST as AppEEARS exports it: 20 x 20 cells of 0.01 degree (~776 x 1,111 m on the ground, not the
    start-up canvas's 30 m), one date per day of 2024 in `days`."""
    import rasterio
    from affine import Affine

    from tests.conftest import write_site_json

    site = write_site_json(root, bbox=[11.0, 45.8, 11.2, 46.0], crs="EPSG:4326", shape=[20, 20])
    profile = dict(driver="GTiff", width=20, height=20, count=1, crs="EPSG:4326",
                   transform=Affine(0.01, 0, 11.0, 0, -0.01, 46.0))  # fmt: skip
    lst = (14500 + 50 * np.add.outer(np.arange(20), np.arange(20))).astype(np.uint16)
    for day in days:
        for layer, arr in (("LST_Day_1km", lst), ("QC_Day", np.zeros((20, 20), np.uint8))):
            name = f"MOD11A2.061_{layer}_doy2024{day:03d}000000_aid0001.tif"
            with rasterio.open(site / name, "w", dtype=arr.dtype.name, **profile) as d:
                d.write(arr, 1)
    return site


def test_the_first_item_opens_on_its_own_date_on_a_site_of_another_pixel_size(tmp_path):
    """The app's first site comes with a review item that opens on its third date (2024-01-17): the start-up
    canvas (30 m pixels) takes the site's ~776 x 1,111 m pixels, and the date shown stays the item's. Before, the
    image layer's new pixel size moved napari's row and column steps, whose event set the date shown to the stale
    step 0 (a whole-site item on a full-size Landsat scene opened on its first date, 2014-03-01, not on 2018)."""
    from napari.components import ViewerModel

    from reviewer.app.session import StackSession
    from reviewer.record.scan import scan_site
    from reviewer.record.stack import open_stack

    s = StackSession(ViewerModel(), prefetch=False)
    try:
        s.warm_canvas()  # the start-up placeholder, as the app makes it before any site
        index = scan_site(_lonlat_site(tmp_path / "lst"))
        stack = open_stack(index)
        assert [sc.date.isoformat() for sc in stack.scenes] == ["2024-01-01", "2024-01-09", "2024-01-17"]
        s.show_index(index, stack=(stack, 2))
        assert s.state.current == 2 and s.image_layer.data.date == 2 and s.dates.position.text == "3 / 3"
        assert s.current_scene.date.isoformat() == "2024-01-17"
    finally:
        s.close()
        gc.unfreeze()
