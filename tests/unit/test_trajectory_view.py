"""What the trajectory plot draws, decided without a display (reviewer.app.trajectory_view): which points each
sensor's filled and hollow scatters take, the region's error bars, the labels and the caption with the key.
Series built by hand, so the expected point numbers are read off them."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from types import SimpleNamespace

import numpy as np

from reviewer.app.trajectory_view import TrajectoryContent, drawing, series_title, shown_as, why_empty
from reviewer.record.series import Trajectory

COLORS = {"TM": "#1f77b4", "MODIS Aqua": "#2ca02c"}


def series() -> Trajectory:
    """Six dates: TM clear, TM masked, MODIS Aqua clear, TM no value (NaN), MODIS Aqua masked, TM clear."""
    s = Trajectory(name="ndvi", where="region of 16 pixels")
    rows = [
        ("TM", 0.2, False),
        ("TM", 0.1, True),
        ("MODIS Aqua", 0.5, False),
        ("TM", float("nan"), False),
        ("MODIS Aqua", 0.4, True),
        ("TM", 0.3, False),
    ]
    for k, (sensor, v, m) in enumerate(rows):
        scene = SimpleNamespace(date=dt.date(2000 + k, 7, 2), label=sensor, scene_id=f"s{k}")
        s.append(k, scene, v, 0.05 * (k + 1), m, 16)
    return s


def groups_of(d) -> dict[tuple[str, bool], list[int]]:
    return {(g.sensor, g.hollow): list(g.points) for g in d.groups}


def test_each_sensor_gets_its_clear_points_filled_and_its_masked_points_hollow():
    d = drawing(series(), "ndvi", show_masked=True, harmonized=False, region=False, colors=COLORS)
    # point 3 has no value: drawn nowhere; sensors in the series' order, TM first
    assert groups_of(d) == {
        ("TM", False): [0, 5],
        ("TM", True): [1],
        ("MODIS Aqua", False): [2],
        ("MODIS Aqua", True): [4],
    }
    assert [g.sensor for g in d.groups][:2] == ["TM", "TM"]
    assert {g.sensor: g.color for g in d.groups} == COLORS
    assert d.value_label == "NDVI" and d.error_bars[0].size == 0  # a pixel has no spread to draw
    assert d.x[0] == 2000 + (dt.date(2000, 7, 2) - dt.date(2000, 1, 1)).days / 366  # a leap year


def test_hidden_masked_points_leave_no_hollow_scatter_and_no_error_bar():
    d = drawing(series(), "ndvi", show_masked=False, harmonized=False, region=True, colors={})
    assert groups_of(d) == {("TM", False): [0, 5], ("MODIS Aqua", False): [2]}
    assert {g.color for g in d.groups} == {"#cccccc"}  # a sensor without a colour in the catalogue
    x, y, height = d.error_bars
    assert list(y) == [0.2, 0.5, 0.3] and np.allclose(height, [2 * 0.05, 2 * 0.15, 2 * 0.30])


def test_the_caption_says_what_and_how_and_never_breaks_a_sensors_name():
    d = drawing(series(), "ndvi", show_masked=True, harmonized=True, region=True, colors=COLORS)
    assert d.caption.startswith("NDVI at region of 16 pixels, TM/ETM+ harmonised to OLI (Roy et al. 2016")
    assert "4 clear, 2 masked (hollow)" in d.caption  # the NaN date counts as clear, not drawn
    # the key: one coloured dot per sensor, the two words of "MODIS Aqua" held together ("MODIS Aqu" was cut)
    assert "<span style='color:#2ca02c'>&#9679;</span>&nbsp;MODIS&nbsp;Aqua" in d.caption
    assert shown_as(False) == "as recorded (not harmonised)"


def test_names_and_why_nothing_is_drawn():
    assert (series_title("mndwi"), series_title("swir1")) == ("MNDWI", "swir1")
    assert why_empty("nbr", 0, region=False) == "no scene in the stack: no NBR to plot"
    assert why_empty("ndvi", 12, region=True).startswith("no observation of NDVI over this region: none of the 12")


def test_the_previous_items_series_goes_while_the_next_items_is_read():
    """Item 1's series drawn, then item 2 shown with its series still being read: the plot holds no series under the
    reading line (item 1's points there were stale evidence), then item 2's once it lands; an item whose series was
    read ahead is handed over in the same turn, so nothing is cleared for it."""
    content, changes = TrajectoryContent(), []
    content.changed.connect(lambda: changes.append((content.series, content.reading)))
    first, second = series(), series()
    content.show(first, True)
    assert (content.series, content.harmonized, content.reading) == (first, True, "")

    content.expect("reading NDVI over the region (12 scenes)...")
    assert content.series is None and content.reading == "reading NDVI over the region (12 scenes)..."
    assert changes[-1] == (None, "reading NDVI over the region (12 scenes)...")
    partial = Trajectory(name="ndvi", where="region of 16 pixels")
    content.show(partial, False, partial=True)  # the scenes read so far are the item's own: drawn, still reading
    assert content.series is partial and content.reading.startswith("reading")
    content.show(second, False)
    assert (content.series, content.harmonized, content.reading) == (second, False, "")

    content.expect("")  # read ahead: handed over in this turn
    assert content.series is second
    content.clear()
    assert (content.series, content.reading) == (None, "")
    assert len(changes) == 6


def test_the_module_imports_no_qt():
    code = (
        "import sys, reviewer.app.trajectory_view; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('qtpy', 'PySide6', 'pyqtgraph', 'napari', 'vispy')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
