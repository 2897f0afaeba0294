"""Renders as a user sees them: captions (title, panel label, stretch caption) inside the figure for a
single panel from 96 to 2000 px whatever the aspect; the scale-bar label readable on bright ground (dark
halo); and a bright scene that saturates the fixed stretch says so and suggests the percentile stretch."""

from __future__ import annotations

import numpy as np
import pytest

from reviewer.record.render import Panel, build_figure, saturation_share, saturation_warnings
from reviewer.record.stretch import Stretch

LONG_TITLE = "Mount Kilimanjaro southern slopes glacier retreat study region (kilimanjaro-south-glaciers-2024)"


def _panel(h: int, w: int, value: float = 0.1, label: str = "2021-05-03  OLI-2  (clearest of 2021)") -> Panel:
    return Panel(label, np.full((3, h, w), value, np.float32), [], "clearest")


@pytest.mark.parametrize(("h", "w"), [(96, 96), (500, 500), (2000, 2000), (96, 2000), (2000, 96)])
def test_single_panel_captions_are_inside_the_figure(h, w):
    stretch = Stretch.default("truecolor")
    notes = ["2021-05-03: 80% of clear pixels saturate the fixed stretch (more than 25%); try --percentiles"]
    fig = build_figure([_panel(h, w)], stretch, pixel_size_m=30.0, title=LONG_TITLE, notes=notes)
    width, height = fig.size
    texts = [t for t in fig.texts if t.text.strip()]
    assert {"truecolor" in t.text or "True colour" in t.text for t in texts} >= {True}
    for t in texts:
        x0, y0, x1, y1 = t.box
        assert x0 >= 0 and x1 <= width and y0 >= 0 and y1 <= height, (t.text, t.box, fig.size)
    words = " ".join(t.text.replace("\n", " ") for t in texts)
    assert "kilimanjaro-south-glaciers-2024" in words.replace(" ", "") or "kilimanjaro" in words


def test_scale_bar_label_has_a_dark_halo_on_bright_ground():
    stretch = Stretch.default("truecolor")
    fig = build_figure([_panel(200, 200, value=0.5)], stretch, pixel_size_m=30.0)  # all white after the stretch
    label = next(t for t in fig.texts if t.text.endswith(" km"))
    x0, y0, x1, y1 = label.box
    crop = fig.rgb[y0:y1, x0:x1].astype(int)
    dark = (crop.sum(axis=2) < 150).sum()
    white = (crop.min(axis=2) > 240).sum()
    assert dark > 20 and white > 20, "white letters outlined in black stand out from a white panel"


def test_bright_scene_saturating_the_fixed_stretch_is_flagged():
    stretch = Stretch.default("truecolor")  # 0 - 0.3 per channel
    desert = _panel(10, 10, value=0.2, label="2020-07-01  OLI")
    desert.channels[0, :6, :] = 0.35  # red above 0.3 on 60 of 100 pixels
    desert.channels[:, 9, 9] = np.nan  # one masked pixel: not a clear pixel
    assert saturation_share(desert, stretch) == pytest.approx(60 / 99)
    (line,) = saturation_warnings([desert, _panel(10, 10, 0.1, "2020-08-01  OLI")], stretch)
    assert line.startswith("2020-07-01: 61% of clear pixels saturate the fixed stretch") and "--percentiles" in line
    percentile = Stretch(composite="truecolor", channels=stretch.channels, source="percentiles 2-98")
    assert saturation_warnings([desert], percentile) == []
    fig = build_figure([desert], stretch, pixel_size_m=30.0, notes=[line])
    assert any("saturate the fixed stretch" in t.text.replace("\n", " ") for t in fig.texts)
