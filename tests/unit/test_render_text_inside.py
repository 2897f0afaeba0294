"""Exports as a user opens them: every caption (title, panel labels, scale-bar labels, stretch footer and
notes) lies inside the PNG and no text covers another panel, for the app's single-view export, the CLI's
pair render and the chip strip (rows of panels), at panel sizes from 96 to 2000 px and any aspect."""

from __future__ import annotations

import numpy as np
import pytest

from reviewer.record.render import Panel, build_figure
from reviewer.record.stretch import Stretch

SIZES = [(96, 96), (500, 500), (2000, 2000), (96, 2000), (2000, 96), (64, 64)]
TITLE = "Synthetic demo site with a rather long name for a figure title (demo-core-seed0-generated)"
NOTE = "2021-05-03: 80% of clear pixels saturate the fixed stretch (more than 25%); try the percentile stretch"


def _panels(n: int, h: int, w: int) -> list[Panel]:
    labels = [f"{1984 + k}-07-1{k % 10}  ETM+  (clearest of {1984 + k})" for k in range(n)]
    return [Panel(lab, np.full((3, h, w), 0.1, np.float32), [], "clearest") for lab in labels]


def _texts(fig) -> list:
    return [t for t in fig.texts if t.text.strip()]


def _check(fig) -> None:
    width, height = fig.size
    texts = _texts(fig)
    assert texts
    for t in texts:
        x0, y0, x1, y1 = t.box
        assert x0 >= 0 and y0 >= 0 and x1 <= width and y1 <= height, (t.text, t.box, fig.size)
    # a panel's title never lies over another panel (the strip's second row's titles covered the first row),
    # nor does the figure title or the footer; its scale-bar label lies inside its own panel
    for k, panel in enumerate(fig.panels):
        for t in texts:
            x0, y0, x1, y1 = t.box
            if t.panel == k and t.role == "scale":
                assert x0 >= panel[0] and x1 <= panel[2] and y0 >= panel[1] and y1 <= panel[3], (t.text, t.box, panel)
                continue
            overlap_w = min(x1, panel[2]) - max(x0, panel[0])
            overlap_h = min(y1, panel[3]) - max(y0, panel[1])
            assert overlap_w <= 0 or overlap_h <= 0, (t.text, t.box, panel)


@pytest.mark.parametrize(("h", "w"), SIZES)
def test_single_view_export_keeps_title_date_and_stretch_line_inside(h, w):
    (panel,) = _panels(1, h, w)
    panel.label = "1999-06-18  TM  LT05_L2SP_190026_19990618_20201123_02_T1"  # the app's date and scene id
    fig = build_figure([panel], Stretch.default("truecolor"), pixel_size_m=30.0, title=TITLE)
    _check(fig)
    words = " ".join(t.text.replace("\n", " ") for t in _texts(fig)).replace(" ", "")
    assert "LT05_L2SP_190026_19990618_20201123_02_T1" in words and "stretch" in words


@pytest.mark.parametrize(("h", "w"), SIZES)
def test_cli_pair_render_keeps_its_stretch_footer_and_notes_inside(h, w):
    stretch = Stretch.default("ndvi") if h == 64 else Stretch.default("truecolor")
    panels = _panels(2, h, w)
    if stretch.composite == "ndvi":
        panels = [Panel(p.label, p.channels[:1], [], "clearest") for p in panels]
    fig = build_figure(panels, stretch, pixel_size_m=30.0, title=TITLE, notes=[NOTE, NOTE.replace("2021", "1999")])
    _check(fig)
    footer = " ".join(t.text.replace("\n", " ") for t in _texts(fig))
    assert "saturate" in footer and "stretch (fixed default)" in footer.replace("\n", " ")


@pytest.mark.parametrize(("n", "cols"), [(33, 11), (7, 3)])
@pytest.mark.parametrize(("h", "w"), [(64, 64), (96, 2000), (2000, 96)])
def test_strip_rows_titles_never_cover_the_row_above(n, cols, h, w):
    fig = build_figure(
        _panels(n, h, w), Stretch.default("truecolor"), pixel_size_m=30.0, title=TITLE, highlight=3, columns=cols
    )
    _check(fig)
