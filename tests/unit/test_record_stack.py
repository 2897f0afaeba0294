"""Stretch, lazy stacks and the scene cache: what an annotator relies on when comparing dates."""

from __future__ import annotations

import json

import numpy as np
import pytest
import rasterio

import reviewer.record.decode as decode_mod
from reviewer.errors import SchemaError
from reviewer.record.scan import scan_site
from reviewer.record.stack import SceneCache, harmonize, open_stack
from reviewer.record.stretch import ChannelStretch, Stretch, percentile_stretch
from tests.conftest import write_site_json

TM = "LT05_L2SP_090084_19980308_20200909_02_T1"
ETM = "LE07_L2SP_090084_20210331_20210426_02_T1"


@pytest.fixture
def pair_index(real_dir, tmp_path):
    site = tmp_path / "pair"
    site.mkdir()
    for name in (TM, ETM):
        (site / name).symlink_to(real_dir / "eo-datasets" / name)
    with rasterio.open(real_dir / "eo-datasets" / TM / f"{TM}_SR_B3.TIF") as ds:
        b = ds.bounds
    write_site_json(site, bbox=[b.left, b.bottom, b.right, b.top], crs="EPSG:32655", resolution=4000)
    return scan_site(site)


def test_default_stretch_maps_values_by_hand():
    s = Stretch.default("truecolor")  # 0-0.3, gamma 1.2 on each channel
    channels = np.array([[[0.15, 0.0, 0.3, 0.6, np.nan]]] * 3, dtype=np.float32)
    rgb = s.apply(channels)
    # 0.15 -> (0.5) ** (1 / 1.2) = 0.5612 -> 0.5612 * 255 = 143.1 -> 143; 0 -> 0; 0.3 and above -> 255; NaN -> nodata
    assert rgb[0, :, 0].tolist() == [143, 0, 255, 255, 0]


def test_stretch_round_trips_through_json_and_rejects_bad_values():
    s = Stretch.default("swir").with_channel(1, low=0.02, high=0.45, gamma=1.3)
    again = Stretch.from_json(json.loads(s.dumps()))
    assert again == s and again.channels[1] == ChannelStretch(0.02, 0.45, 1.3)
    with pytest.raises(SchemaError) as err:
        Stretch.from_json({"composite": "swir", "channels": [{"low": 0.3, "high": 0.1}] * 3})
    assert err.value.field == "channels"
    with pytest.raises(SchemaError):
        Stretch.from_json({"composite": "ndvi", "channels": [{"low": 0, "high": 1}] * 3})


def test_percentiles_are_pooled_over_the_stack_not_per_image():
    dark = np.full((3, 1000), 0.05, np.float32)
    bright = np.full((3, 1000), 0.25, np.float32)
    pooled = percentile_stretch(np.concatenate([dark, bright], axis=1), "truecolor", n_scenes=2)
    # half the pooled pixels are 0.05 and half 0.25: p2 = 0.05, p98 = 0.25 for every channel
    assert [(c.low, c.high) for c in pooled.channels] == [(pytest.approx(0.05), pytest.approx(0.25))] * 3
    # so the dark date stays dark and the bright one bright: one mapping for both
    two_dates = np.array([[[0.05, 0.25]]] * 3, np.float32)  # (c, y=1, x=2): one pixel from each date
    img = pooled.apply(two_dates)
    assert img[0, 0, 0] == 0 and img[0, 1, 0] == 255
    assert "2 scenes" in pooled.source


def test_opening_a_stack_reads_no_pixels(pair_index, monkeypatch):
    calls = []
    real_open = decode_mod.rasterio.open
    monkeypatch.setattr(decode_mod.rasterio, "open", lambda *a, **k: calls.append(a) or real_open(*a, **k))
    stack = open_stack(pair_index, composite="truecolor", cache=SceneCache())
    lazy = stack.rgb("truecolor", Stretch.default("truecolor"))
    assert lazy.shape == (2, *pair_index.site.shape, 3) and calls == []
    frame = lazy[1].compute()
    assert frame.shape == (*pair_index.site.shape, 3) and len(calls) >= 4  # three bands + QA of one date


def test_time_axis_labels_and_filters(pair_index):
    stack = open_stack(pair_index, composite="swir")
    assert stack.labels == ["1998-03-08 TM", "2021-03-31 ETM+"]
    assert open_stack(pair_index, sensors=["ETM+"]).labels == ["2021-03-31 ETM+"]
    assert open_stack(pair_index, years=(1990, 2000)).labels == ["1998-03-08 TM"]
    # TM is 18.3% cloudy over its valid pixels, ETM+ 9.9%: a 15% limit keeps only ETM+
    assert [s.label for s in open_stack(pair_index, max_cloud=0.15).scenes] == ["ETM+"]
    assert open_stack(pair_index, months={3}).labels == stack.labels


def test_same_stretch_gives_same_colour_for_same_reflectance_on_both_dates(pair_index):
    stack = open_stack(pair_index, composite="truecolor", cache=SceneCache())
    stretch = Stretch.default("truecolor")
    a, b = stack.read(0, "truecolor"), stack.read(1, "truecolor")
    ra, rb = stretch.apply(a), stretch.apply(b)
    ok = np.isfinite(a).all(0)
    value = a[:, ok][:, 0]
    both = np.stack([a, b], axis=0).copy()
    both[1, :, 0, 0] = value  # plant the same reflectance in the second date
    assert (stretch.apply(both[1])[0, 0] == ra[ok][0]).all()
    assert ra.shape == rb.shape


def test_cache_is_bounded_and_evicts_oldest():
    cache = SceneCache(max_bytes=3 * 400)
    for i in range(5):
        cache.put(("k", i), np.zeros(100, np.float32))  # 400 bytes each
    assert cache.nbytes <= 3 * 400 and ("k", 0) not in cache and ("k", 4) in cache


def test_harmonization_uses_roy_2016_ols_for_etm_only():
    v = np.array([0.1], np.float32)
    # OLI red = 0.9047 * 0.1 + 0.0061 = 0.09657
    assert harmonize(v, "red", "ETM+")[0] == pytest.approx(0.09657, abs=1e-6)
    assert harmonize(v, "red", "OLI")[0] == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("product", "truecolor", "swir"),
    [
        ("landsat5_tm_c2l2", ["SR_B3", "SR_B2", "SR_B1"], ["SR_B7", "SR_B4", "SR_B3"]),
        ("landsat7_etm_c2l2", ["SR_B3", "SR_B2", "SR_B1"], ["SR_B7", "SR_B4", "SR_B3"]),
        ("landsat8_oli_c2l2", ["SR_B4", "SR_B3", "SR_B2"], ["SR_B7", "SR_B5", "SR_B4"]),
        ("landsat9_oli2_c2l2", ["SR_B4", "SR_B3", "SR_B2"], ["SR_B7", "SR_B5", "SR_B4"]),
        ("sentinel2_msi_l2a", ["B04", "B03", "B02"], ["B12", "B8A", "B04"]),
    ],
)
def test_composites_use_each_sensors_own_bands(product, truecolor, swir):
    """TM/ETM+ 3,2,1 and 7,4,3; OLI 4,3,2 and 7,5,4; Sentinel-2 B4,B3,B2 and B12,B8A,B4 (USGS band combinations)."""
    from reviewer.record.catalog import catalog
    from reviewer.record.stretch import composites

    spec = catalog().products[product]
    assert [spec.band_by_name(n).token for n in composites()["truecolor"]["bands"]] == truecolor
    assert [spec.band_by_name(n).token for n in composites()["swir"]["bands"]] == swir


def test_cache_reads_a_key_once_when_two_threads_ask_together():
    """The viewer and its prefetch often want the same date at once: one read, both get it."""
    import threading
    import time

    cache = SceneCache()
    calls = []

    def slow_read():
        calls.append(1)
        time.sleep(0.2)
        return np.ones(3, np.float32)

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get_or_read(("k",), slow_read))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(results) == 3 and all((r == 1).all() for r in results)


def test_cache_retries_after_a_failed_read():
    cache = SceneCache()

    def broken():
        raise OSError("disk went away")

    with pytest.raises(OSError):
        cache.get_or_read(("k",), broken)
    assert cache.get_or_read(("k",), lambda: np.zeros(2, np.float32)).shape == (2,)
