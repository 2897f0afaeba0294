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


# Sentinel-2 SCL classes as ESA publishes them (L2A product specification): 0 no data and 1 saturated or
# defective are not valid; 3 cloud shadow, 8 and 9 cloud (medium, high probability), 10 thin cirrus are cloud;
# 11 snow; 2 dark area, 4 vegetation, 5 not vegetated, 6 water, 7 unclassified are clear
SCL_NOT_VALID, SCL_CLOUD, SCL_SNOW = {0, 1}, {3, 8, 9, 10}, {11}


def _by_hand(codes: np.ndarray, not_valid, cloud, snow) -> tuple[int, int, int]:
    values, counts = np.unique(codes, return_counts=True)
    n = dict(zip(values.tolist(), counts.tolist(), strict=True))
    valid = sum(c for v, c in n.items() if v not in not_valid)
    return valid, sum(n.get(v, 0) for v in cloud), sum(n.get(v, 0) for v in snow)


def test_every_scl_class_counted_as_esa_publishes_it():
    # k + 5000 * (k + 1) pixels of each code 0-11 and a few codes no SCL has (12, 200: counted as clear), in
    # more pixels than one block of the comparison passes
    s2 = decode_product("sentinel2_msi_l2a")
    codes = np.concatenate(
        [np.full(5000 * (k + 1) + k, k, np.uint8) for k in range(12)] + [np.array([12, 200], np.uint8)]
    )
    np.random.default_rng(3).shuffle(codes)
    assert codes.size > decode.CLASS_COUNT_BLOCK
    layer = codes[: 400 * 200].reshape(400, 200)
    assert decode._class_counts(layer, s2) == _by_hand(layer, SCL_NOT_VALID, SCL_CLOUD, SCL_SNOW)
    assert decode._class_counts(codes, s2) == _by_hand(codes, SCL_NOT_VALID, SCL_CLOUD, SCL_SNOW)
    only = np.array([4, 9, 9, 4, 4], np.uint8)  # two codes (the full-size bench's tile): valid 5, cloud 2
    assert decode._class_counts(only, s2) == (5, 2, 0)
    assert decode._class_counts(np.full(7, 0, np.uint8), s2) == (0, 0, 0)


def test_a_real_scl_counted_as_esa_publishes_it(real_dir):
    import rasterio

    path = real_dir / "stactools-sentinel2" / "T29UNU_20221005T115411_SCL_60m.jp2"
    with rasterio.open(path) as src:
        scl = src.read(1)
    assert len(np.unique(scl)) > 3, "a real tile has several classes"
    got = decode._class_counts(scl, decode_product("sentinel2_msi_l2a"))
    assert got == _by_hand(scl, SCL_NOT_VALID, SCL_CLOUD, SCL_SNOW)


def test_signed_modis_pixel_reliability_counted_as_lp_daac_publishes_it():
    # MOD13Q1 pixel reliability (int8): -1 fill, 0 good, 1 marginal, 2 snow/ice, 3 cloudy
    codes = np.repeat(np.array([-1, 0, 1, 2, 3], np.int8), [5, 40, 7, 3, 11])
    got = decode._class_counts(codes, decode_product("modis_terra_mod13q1"))
    assert got == (40 + 7 + 3 + 11, 11, 3)


def decode_product(pid: str):
    from reviewer.record.catalog import catalog

    return catalog().products[pid]


@pytest.mark.parametrize(
    "when",
    [{"datetime": "2023-06-01T15:36:19.024000Z"}, {"datetime": None, "start_datetime": "2023-06-01T15:36:19Z",
                                                  "end_datetime": "2023-06-01T15:36:20Z"}],
)  # fmt: skip
def test_a_stac_1x_item_is_read_as_pystac_reads_it(when):
    """A 1.x item is read as GeoJSON (pystac's extension-hook discovery cost 0.03 s a process): the same id,
    properties, asset hrefs and date as pystac.Item.from_dict gives."""
    import pystac

    from reviewer.record.stac import _item_1x

    doc = {
        "type": "Feature", "stac_version": "1.0.0", "id": "S2A_18NWM_20230601_0_L2A", "geometry": None,
        "links": [], "properties": {"s2:processing_baseline": "05.09", **when},
        "assets": {"red": {"href": "https://x/B04.tif"}, "scl": {"href": "https://x/SCL.tif"}},
    }  # fmt: skip
    item = pystac.Item.from_dict(doc, migrate=False)
    item_id, props, hrefs, stamp = _item_1x(doc)
    assert (item_id, hrefs) == (item.id, [a.href for a in item.assets.values()])
    assert props["s2:processing_baseline"] == item.properties["s2:processing_baseline"]
    assert stamp == (item.datetime or item.common_metadata.start_datetime)
