"""A site wider than the canvas's display width (issue 31, the viewer part): the pair view and the whole-stack
percentile stretch read each date at the canvas's display size (VIEW_PX = 1,600 px across), as the canvas and the
chips do, never at the site's own grid.

The site: one Landsat 8 C2 L2 scene of 3,200 x 3,200 px as USGS COGs. Read at its own grid a date's three
reflectance bands are 3 x 3,200 x 3,200 float32 = 123 MB; at 1,600 px across 3 x 1,600 x 1,600 x 4 = 31 MB."""

from __future__ import annotations

import tracemalloc

import pytest

from tests.gui.conftest import wait_frame
from tests.unit.test_fullsize import _big_scene

SIZE = 3200
FULL_READ_MB = 3 * SIZE * SIZE * 4 / 2**20  # 117 MiB: one date's three bands at the site's grid
SHOWN_READ_MB = 3 * 1600 * 1600 * 4 / 2**20  # 29 MiB at the display width


@pytest.fixture
def wide(reviewer_app, tmp_path, qtbot):
    app = reviewer_app
    app.open_site(_big_scene(tmp_path / "wide", size=SIZE))
    qtbot.waitUntil(lambda: app.session.stack is not None and len(app.session.stack) == 1, timeout=60000)
    wait_frame(app, qtbot, timeout=60000)
    qtbot.waitUntil(lambda: app.settled, timeout=60000)
    app.session.cache.clear()  # what follows reads its dates itself
    return app


def _peak_mb(run, done, qtbot) -> float:
    tracemalloc.start()
    try:
        run()
        qtbot.waitUntil(done, timeout=60000)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_pair_view_reads_its_panels_at_the_display_width(wide, qtbot):
    """P on a 3,200 px site: both panels 1,600 px across (the old view read 3,200), holding well under one
    full-grid date (117 MiB: the old read held several) at its peak (~90 MiB: the bands read, their floats, masks); the scale bar still measures the site's 96 km (3,200 x 30 m)."""
    app = wide
    peak = _peak_mb(app.show_pair, lambda: bool(app.pair.panels) and not app.pair.busy, qtbot)
    assert [p.channels.shape for p in app.pair.panels] == [(3, 1600, 1600)] * 2
    assert peak < FULL_READ_MB, f"{peak:.0f} MiB at the peak"
    assert app.pair.images[0].width() == 1600


def test_whole_stack_percentile_stretch_reads_at_the_display_width(wide, qtbot):
    """The Stack dock's whole-stack percentile stretch pools the dates as the canvas reads them: its peak is about
    a few display-size dates' worth (~90 MiB: 29 MiB of floats, the bands read, masks), under one full-grid date (117 MiB, the old read)."""
    app = wide
    s = app.session
    peak = _peak_mb(
        s.stretch_from_percentiles,
        lambda: s.state.stretch.source.startswith("percentiles"),
        qtbot,
    )
    assert peak < FULL_READ_MB, f"{peak:.0f} MiB at the peak"
    red = s.state.stretch.channels[0]
    assert red.low < red.high


def test_save_view_reads_the_date_at_the_display_width(wide, qtbot, tmp_path):
    """Save view as PNG on the 3,200 px site: the date read as the canvas shows it, 1,600 px across, under one
    full-grid date at the peak (the old export read the whole grid, 3,200 px, for a PNG ~360 px wide)."""
    from PIL import Image

    app = wide
    out = tmp_path / "view.png"
    saved = []
    peak = _peak_mb(lambda: app.session.export_view(out, on_done=saved.append), lambda: bool(saved), qtbot)
    assert peak < FULL_READ_MB, f"{peak:.0f} MiB at the peak"
    assert Image.open(out).width < 1600  # render_panels' panel width: the full grid was never needed
