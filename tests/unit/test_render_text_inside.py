"""Exports as a user opens them: every caption (title, panel labels, scale-bar labels, stretch footer and
notes) lies inside the PNG and no text covers another panel, for the app's single-view export, the CLI's
pair render and the chip strip (rows of panels), at panel sizes from 96 to 2000 px and any aspect."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.text import Text

from reviewer.record.render import Panel, build_figure
from reviewer.record.stretch import Stretch

SIZES = [(96, 96), (500, 500), (2000, 2000), (96, 2000), (2000, 96), (64, 64)]
TITLE = "Synthetic demo site with a rather long name for a figure title (demo-core-seed0-generated)"
NOTE = "2021-05-03: 80% of clear pixels saturate the fixed stretch (more than 25%); try the percentile stretch"


def _panels(n: int, h: int, w: int) -> list[Panel]:
    labels = [f"{1984 + k}-07-1{k % 10}  ETM+  (clearest of {1984 + k})" for k in range(n)]
    return [Panel(lab, np.full((3, h, w), 0.1, np.float32), [], "clearest") for lab in labels]


def _texts(fig) -> list[Text]:
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def _check(fig) -> None:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    texts = _texts(fig)
    assert texts
    for t in texts:
        e = t.get_window_extent(renderer)
        inside = e.x0 >= box.x0 - 0.5 and e.x1 <= box.x1 + 0.5 and e.y0 >= box.y0 - 0.5 and e.y1 <= box.y1 + 0.5
        assert inside, (t.get_text(), e, box)
    # a panel's title never lies over another panel (the strip's second row's titles covered the first row),
    # nor does the figure title or the footer
    for ax in fig.axes:
        panel = ax.get_window_extent(renderer)
        for t in texts:
            if t.axes is ax:
                if t is not ax.title:  # its scale-bar label lies inside the panel
                    e = t.get_window_extent(renderer)
                    assert e.x0 >= panel.x0 - 0.5 and e.x1 <= panel.x1 + 0.5, (t.get_text(), e, panel)
                    assert e.y0 >= panel.y0 - 0.5 and e.y1 <= panel.y1 + 0.5, (t.get_text(), e, panel)
                continue
            e = t.get_window_extent(renderer)
            overlap_w = min(e.x1, panel.x1) - max(e.x0, panel.x0)
            overlap_h = min(e.y1, panel.y1) - max(e.y0, panel.y0)
            assert overlap_w <= 0.5 or overlap_h <= 0.5, (t.get_text(), e, panel)


@pytest.mark.parametrize(("h", "w"), SIZES)
def test_single_view_export_keeps_title_date_and_stretch_line_inside(h, w):
    (panel,) = _panels(1, h, w)
    panel.label = "1999-06-18  TM  LT05_L2SP_190026_19990618_20201123_02_T1"  # the app's date and scene id
    fig = build_figure([panel], Stretch.default("truecolor"), pixel_size_m=30.0, title=TITLE)
    _check(fig)
    words = " ".join(t.get_text().replace("\n", " ") for t in _texts(fig)).replace(" ", "")
    assert "LT05_L2SP_190026_19990618_20201123_02_T1" in words and "stretch" in words


@pytest.mark.parametrize(("h", "w"), SIZES)
def test_cli_pair_render_keeps_its_stretch_footer_and_notes_inside(h, w):
    stretch = Stretch.default("ndvi") if h == 64 else Stretch.default("truecolor")
    panels = _panels(2, h, w)
    if stretch.composite == "ndvi":
        panels = [Panel(p.label, p.channels[:1], [], "clearest") for p in panels]
    fig = build_figure(panels, stretch, pixel_size_m=30.0, title=TITLE, notes=[NOTE, NOTE.replace("2021", "1999")])
    _check(fig)
    footer = " ".join(t.get_text().replace("\n", " ") for t in _texts(fig))
    assert "saturate" in footer and "stretch (fixed default)" in footer.replace("\n", " ")


@pytest.mark.parametrize(("n", "cols"), [(33, 11), (7, 3)])
@pytest.mark.parametrize(("h", "w"), [(64, 64), (96, 2000), (2000, 96)])
def test_strip_rows_titles_never_cover_the_row_above(n, cols, h, w):
    fig = build_figure(
        _panels(n, h, w), Stretch.default("truecolor"), pixel_size_m=30.0, title=TITLE, highlight=3, columns=cols
    )
    _check(fig)
