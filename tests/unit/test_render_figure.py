"""The render's figure as a user opens the PNG: the panel's pixels exactly as read (no resampling when read at the
width drawn), a scale bar whose length in pixels is its km at the panel's pixel size, and a PNG any reader
decodes to the same pixels, with the stretch and panels in its text chunks."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
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


@pytest.mark.parametrize("width", [40, 60, 100, None])
@pytest.mark.parametrize(
    ("composite", "label"), [("ndvi", "NDVI (unitless)"), ("t2m", "Air temperature at 2 m (ERA5-Land) (K)")]
)
def test_colour_bar_label_and_ticks_of_a_narrow_render_lie_inside_the_figure_uncut(composite, label, width):
    """render --width 40 drew "NDVI (unitless)" and the ERA5-Land label past both edges of a 58 px figure, the
    bar's triangles cut and its tick labels on top of each other. The panel keeps its --width; the label wraps
    at spaces (every word whole, in order) inside the figure, under the ticks and over the footer; the bar with
    its triangles and each tick label inside the figure, the tick labels apart; the figure's edge columns white
    beside the label."""
    panel = Panel("2023-01  ERA5-Land", np.full((1, 6, 6), 0.3, np.float32), [], "scene")
    fig = build_figure([panel], Stretch.default(composite), pixel_size_m=11_000, width_px=width)
    w, h = fig.size
    x0, _, x1, _ = fig.panels[0]
    assert x1 - x0 == (width or 352), "the panel at --width (3.2 in at 110 dpi by default)"
    (bar_label,) = [t for t in fig.texts if t.role == "bar label"]
    assert bar_label.text.split() == label.split(), "whole words, in order"
    lx0, ly0, lx1, ly1 = bar_label.box
    assert 0 <= lx0 and lx1 <= w and 0 <= ly0 and ly1 <= h, (bar_label.box, fig.size)
    dark = (fig.rgb[ly0:ly1] < 128).all(axis=2)
    assert not dark[:, 0].any() and not dark[:, -1].any(), "nothing cut at the figure's edges"
    (footer,) = [t for t in fig.texts if t.role == "footer"]
    ticks = sorted((t for t in fig.texts if t.role == "tick"), key=lambda t: t.box[0])
    assert ticks and max(t.box[3] for t in ticks) <= ly0 and ly1 <= footer.box[1]
    assert all(0 <= t.box[0] and t.box[2] <= w for t in ticks)
    assert all(a.box[2] < b.box[0] for a, b in zip(ticks, ticks[1:], strict=False)), "tick labels apart"
    bx0, by0, bx1, by1 = fig.colour_bar.box
    tip = by1 - by0  # each end's triangle reaches one bar height beyond it
    assert 0 <= bx0 - 1 - tip and bx1 + tip < w


@pytest.mark.parametrize("width", [176, 120, 352])
def test_a_wrapped_stretch_caption_keeps_each_channels_range_and_gamma_on_one_line(width):
    """A pair of 1,820 x 3,623 px panels drawn 176 px wide (`reviewer render` of a tall Landsat box): the
    caption wrapped as "... g1.2, [0," / "0.3] g1.2". Each channel's "[low, high] gN" stays whole on a line."""
    import re

    panels = [Panel(f"{y}-07-12  OLI", np.full((3, 60, 30), 0.1, np.float32), [], "scene") for y in (2016, 2018)]
    fig = build_figure(panels, Stretch.default("truecolor"), pixel_size_m=30.0, width_px=width)
    (footer,) = [t for t in fig.texts if t.role == "footer"]
    assert "\n" in footer.text or width == 352, "wrapped at the narrow widths"
    whole = [re.findall(r"\[0,\s0\.3\]\sg1\.2", line) for line in footer.text.splitlines()]
    assert sum(len(found) for found in whole) == 3, footer.text


def _bar_rows(width: int, height: int) -> tuple[str, int, int]:
    """(label, the bar's white rows, the gap between the label's foot and the bar's top black edge) of a
    panel drawn `width` px wide at 10 m a pixel."""
    fig = build_figure([_panel(height, width)], Stretch.default("truecolor"), pixel_size_m=10.0, width_px=width)
    (label,) = [t for t in fig.texts if t.role == "scale"]
    x0, y0, x1, y1 = fig.panels[0]
    white = (fig.rgb[y0:y1, x0:x1] == 255).all(axis=2)
    km = float(label.text.removesuffix(" km"))
    rows = [r for r in range(y1 - y0) if abs(longest_run(white[r]) + 2 - km * 100) <= 1.5]  # 100 px a km
    assert rows == list(range(rows[0], rows[-1] + 1)), rows
    return label.text, len(rows), y0 + rows[0] - 1 - label.box[3]


def test_scale_bar_of_a_wide_panel_is_as_thick_as_a_default_ones_under_its_label():
    """A 1,000 px box drawn at full resolution (`render --width 1000`): its bar was a 30 px slab (3% of the
    panel's side) with its 7 pt label 15 px above it. Now as thick as on a 352 px panel (at most 2 px more) and
    its label as close above it: 10 km across, a 2 km bar of 200 px; 3.5 km, a 1 km bar of 100 px."""
    label, rows, gap = _bar_rows(1000, 1000)
    label_d, rows_d, gap_d = _bar_rows(352, 300)
    assert (label, label_d) == ("2 km", "1 km")
    assert 0 <= rows - rows_d <= 2 and abs(gap - gap_d) <= 2, (rows, rows_d, gap, gap_d)
