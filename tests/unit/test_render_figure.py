"""The render's figure as a user opens the PNG: the panel's pixels exactly as read (no resampling when read at the
width drawn), a scale bar whose length in pixels is its km at the panel's pixel size, and a PNG any reader
decodes to the same pixels, with the stretch and panels in its text chunks."""

from __future__ import annotations

import io
import json

import numpy as np
from PIL import Image

from reviewer.record.render import Panel, build_figure, render_panels
from reviewer.record.render_figure import png_bytes
from reviewer.record.stretch import Stretch
from tests.figures import longest_run


def _panel(h: int = 300, w: int = 400) -> Panel:
    rng = np.random.default_rng(3)
    return Panel("2021-07-18  OLI", (rng.random((3, h, w)) * 0.25).astype(np.float32), [], "scene")


def test_a_panel_read_at_its_drawn_width_is_pasted_pixel_for_pixel():
    panel, stretch = _panel(), Stretch.default("truecolor")
    fig = build_figure([panel], stretch, pixel_size_m=30.0, width_px=400)
    x0, y0, x1, y1 = fig.panels[0]
    assert (x1 - x0, y1 - y0) == (400, 300)
    drawn, expected = fig.rgb[y0:y1, x0:x1], stretch.apply(panel.channels)
    # the top half holds no annotation (the scale bar sits in the bottom tenth): every pixel as the stretch made it
    assert np.array_equal(drawn[:150], expected[:150])


def test_scale_bar_is_its_km_long_at_the_panel_pixel_size():
    # 400 px of 30 m = 12 km across; a fifth is 2.4 km, rounded up to 5 km = 5000 / 30 = 166.7 px
    fig = build_figure([_panel()], Stretch.default("truecolor"), pixel_size_m=30.0, width_px=400)
    (label,) = [t for t in fig.texts if t.role == "scale"]
    assert label.text == "5 km"
    x0, y0, x1, y1 = fig.panels[0]
    white = (fig.rgb[y0:y1, x0:x1] == 255).all(axis=2)
    longest = max(longest_run(row) for row in white[int(0.85 * (y1 - y0)) :])
    assert abs(longest + 2 - 5000 / 30) <= 1.5  # its white inside and a one-pixel black edge at each end
    # the same panel drawn twice as wide: the bar doubles with it
    fig = build_figure([_panel()], Stretch.default("truecolor"), pixel_size_m=30.0, width_px=800)
    x0, y0, x1, y1 = fig.panels[0]
    white = (fig.rgb[y0:y1, x0:x1] == 255).all(axis=2)
    assert abs(max(longest_run(row) for row in white[int(0.85 * (y1 - y0)) :]) + 2 - 2 * 5000 / 30) <= 1.5


def test_png_decodes_to_the_same_pixels_with_its_text_chunks(tmp_path):
    rgb = np.random.default_rng(0).integers(0, 256, (37, 53, 3), dtype=np.uint8)
    data = png_bytes(rgb, {"Stretch": '{"a": 1}', "Site": "Zürich — Łódź"})
    img = Image.open(io.BytesIO(data))
    img.load()
    assert img.mode == "RGB" and np.array_equal(np.asarray(img), rgb)
    assert img.text == {"Stretch": '{"a": 1}', "Site": "Zürich — Łódź"}
    out = render_panels([_panel(30, 40)], Stretch.default("truecolor"), pixel_size_m=30.0, out=tmp_path / "r.png")
    meta = Image.open(out).text
    assert json.loads(meta["Stretch"])["composite"] == "truecolor"
    assert json.loads(meta["Panels"])[0]["label"] == "2021-07-18  OLI"
