"""A render colours a scene straight from its raw DN (reviewer/record/render_dn.py): each pixel as the USGS
scaling and the stretch make it, worked out by hand, and every masked pixel in the no-data colour: fill, a DN
outside the valid range, a cloud in QA_PIXEL, a saturated band in QA_RADSAT (a band not shown saturated does not
mask). The same pixels as the float path (decode, then Stretch.apply) on every pixel.

Landsat C2 L2 surface reflectance = DN x 0.0000275 - 0.2, valid DN 7273-43636, fill 0 (USGS LSDS-1619);
truecolor's fixed stretch is 0-0.3 with gamma 1.2: out = round(255 * ((r - 0) / 0.3) ** (1 / 1.2))."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import rasterio
from affine import Affine

from reviewer.record.render import ScenePanel, render_panel, resolve_panel, saturation_share
from reviewer.record.render_figure import NODATA_RGB
from reviewer.record.scan import scan_site
from reviewer.record.stack import open_stack
from reviewer.record.stretch import Stretch
from tests.conftest import write_site_json

OLI = "LC08_L2SP_008056_20210718_20210729_02_T1"
CLEAR, CLOUD = 21824, 21824 | 1 << 3  # QA_PIXEL: clear land; the same with the cloud bit (3)


def _scene(folder: Path, bands: dict[str, np.ndarray], qa: np.ndarray, radsat: np.ndarray) -> Path:
    h, w = qa.shape
    t = Affine(30.0, 0, 399885.0, 0, -30.0, 800415.0)
    (folder / OLI).mkdir(parents=True)
    for name, arr in {**bands, "QA_PIXEL": qa, "QA_RADSAT": radsat}.items():
        profile = dict(driver="GTiff", width=w, height=h, count=1, dtype="uint16", crs="EPSG:32618", transform=t)
        with rasterio.open(folder / OLI / f"{OLI}_{name}.TIF", "w", **profile) as d:
            d.write(arr.astype(np.uint16), 1)
    write_site_json(folder, bbox=[t.c, t.f - 30 * h, t.c + 30 * w, t.f], crs="EPSG:32618", resolution=30)
    return folder


def test_a_scene_is_coloured_from_its_dn_as_worked_out_by_hand(tmp_path, caplog):
    # row 0: clear pixels of known colour; row 1: each masked one way
    red = np.array([[7273, 10000, 12000, 18182, 43636], [0, 12000, 12000, 12000, 12000]])
    green = np.array([[12000, 12000, 12000, 12000, 12000], [12000, 7272, 12000, 12000, 12000]])
    blue = np.array([[10000, 10000, 10000, 10000, 10000], [10000, 10000, 43637, 10000, 10000]])
    qa = np.full(red.shape, CLEAR)
    qa[1, 3] = CLOUD
    radsat = np.zeros(red.shape)
    radsat[1, 4] = 1 << 3  # SR_B4 (red) saturated: masked
    radsat[0, 2] = 1 << 0  # SR_B1 (coastal, not shown) saturated: not masked
    site = _scene(tmp_path / "site", {"SR_B4": red, "SR_B3": green, "SR_B2": blue}, qa, radsat)
    stack = open_stack(scan_site(site), composite="truecolor")
    stretch = Stretch.default("truecolor")
    panel = render_panel(stack, "2021-07-18", "truecolor")
    assert isinstance(panel, ScenePanel)  # the DN path, not the float one
    with caplog.at_level("INFO", logger="reviewer.record.decode"):
        rgb = panel.rgb(stretch)
    # `reviewer -v` names the values outside the valid range as a read does: green's 7272 and blue's 43637
    assert [r.getMessage() for r in caplog.records] == [
        f"{OLI}: 1 values of green outside the valid range were masked",
        f"{OLI}: 1 values of blue outside the valid range were masked",
    ]
    # by hand: DN 7273 -> 0.0000075 -> 0; 10000 -> 0.075 -> (0.25 ** (1 / 1.2)) * 255 = 80.3; 12000 -> 0.13 ->
    # 127.0; 18182 -> 0.300005 and 43636 -> 1.0: at or above the stretch's high end -> 255
    assert rgb[0].tolist() == [[0, 127, 80], [80, 127, 80], [127, 127, 80], [255, 127, 80], [255, 127, 80]]
    assert rgb[1].tolist() == [list(NODATA_RGB)] * 5
    # 2 of the 5 clear pixels have red at or above 0.3
    assert saturation_share(panel, stretch) == 2 / 5
    # the float path (decode to reflectance with NaN, then the stretch) gives every pixel the same colour
    assert np.array_equal(
        rgb, stretch.apply(resolve_panel(stack, "2021-07-18", "truecolor").channels, nodata_rgb=NODATA_RGB)
    )


def test_the_dn_path_matches_the_float_path_on_every_code_of_a_band(tmp_path):
    """All 65,536 codes of the red band in one scene (fill, out of range, saturated high end, every level of the
    stretch), with clouds here and there: the same colours as decoding to float and stretching."""
    codes = np.arange(65536, dtype=np.uint16).reshape(256, 256)
    rng = np.random.default_rng(7)
    qa = np.where(rng.random(codes.shape) < 0.1, CLOUD, CLEAR)
    ramp = np.full(codes.shape, 11000)
    site = _scene(tmp_path / "site", {"SR_B4": codes, "SR_B3": ramp, "SR_B2": codes[::-1]}, qa, np.zeros(codes.shape))
    stack = open_stack(scan_site(site), composite="truecolor")
    for stretch in (Stretch.default("truecolor"), Stretch.default("truecolor").with_channel(0, low=0.05, gamma=2.0)):
        fast = render_panel(stack, "2021-07-18", "truecolor").rgb(stretch)
        slow = stretch.apply(resolve_panel(stack, "2021-07-18", "truecolor").channels, nodata_rgb=NODATA_RGB)
        assert np.array_equal(fast, slow)


def test_render_writes_the_dn_colours_and_notes_a_saturating_scene(tmp_path):
    """`reviewer render` end to end: the PNG holds the panel's pixels as worked out by hand, drawn straight into
    the figure (the top left 2 x 5 pixels, clear of the scale bar); 764 of the 1,599 clear pixels at or above the
    high end (48% > the 25% of composites.json) is noted under the panels, and a stretch set by hand (no such
    note) draws the same pixels."""
    import json

    from PIL import Image

    from reviewer.record.render import render_dates

    red = np.full((40, 40), 12000)
    red[2:, :20] = 20000  # 38 x 20 = 760 pixels at or above the high end
    red[:2, :5] = [[7273, 10000, 12000, 18182, 43636], [0, 20000, 20000, 12000, 12000]]  # 4 more; 1 fill
    bands = {"SR_B4": red, "SR_B3": np.full(red.shape, 12000), "SR_B2": np.full(red.shape, 10000)}
    site = _scene(tmp_path / "site", bands, np.full(red.shape, CLEAR), np.zeros(red.shape))
    index = scan_site(site)
    expected = np.array(
        [
            [[0, 127, 80], [80, 127, 80], [127, 127, 80], [255, 127, 80], [255, 127, 80]],
            [list(NODATA_RGB)] + [[255, 127, 80]] * 2 + [[127, 127, 80]] * 2,
        ],
        np.uint8,
    )
    manual = Stretch.from_json({**Stretch.default("truecolor").to_json(), "source": "manual"})
    for stretch, notes in ((None, 1), (manual, 0)):
        out = tmp_path / f"r{notes}.png"
        result = render_dates(index, ["2021-07-18"], "truecolor", out, width=40, stretch=stretch)
        assert len(result["warnings"]) == notes
        if notes:
            assert result["warnings"][0].startswith("2021-07-18: 48% of clear pixels saturate the fixed stretch")
        png = np.asarray(Image.open(out).convert("RGB"))
        windows = np.lib.stride_tricks.sliding_window_view(png, expected.shape)[..., 0, :, :, :]
        assert (windows == expected).all(axis=(-3, -2, -1)).any(), "the panel's pixels are in the PNG"
        assert json.loads(Image.open(out).text["Stretch"])["source"] == ("fixed default" if notes else "manual")
