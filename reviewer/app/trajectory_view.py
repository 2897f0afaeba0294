"""What the trajectory plot shows for a series, as plain data (no Qt, no pyqtgraph): which points each sensor's
filled and hollow scatters take, the region's error bars, the value axis's label and the caption with the
sensors' key. `QtTrajectoryPlot` only hands this to pyqtgraph; the rules are tested without a display."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np
from psygnal import Signal

from reviewer.record.series import Trajectory
from reviewer.record.stack import harmonization

#: series written in capitals on the axis and in the captions (the others are band names, as they are)
INDEX_NAMES = ("ndvi", "ndwi", "mndwi", "nbr")
DEFAULT_COLOR = "#cccccc"
NO_SERIES_CAPTION = "Click a pixel on the canvas (or draw a polygon) to plot its trajectory."


def series_title(name: str) -> str:
    """The series as the axis and combo name it: indices in capitals ("NDVI"), bands as they are."""
    return name.upper() if name in INDEX_NAMES else name


def harmonization_source() -> str:
    """The catalogue's short citation of the harmonisation coefficients ("Roy et al. 2016 ... OLS")."""
    source = harmonization()["source"]
    parts = [p.strip() for p in source.split(",")]
    return f"{parts[0]}, {parts[3]}" if len(parts) > 3 else parts[0]


def shown_as(harmonized: bool) -> str:
    """What the plotted values are: TM/ETM+ harmonised to OLI, or each sensor as recorded."""
    if harmonized:
        return f"TM/ETM+ harmonised to OLI ({harmonization_source()})"
    return "as recorded (not harmonised)"


def why_empty(name: str, n_scenes: int, *, region: bool) -> str:
    """Why a series has no point: every date masked there, or no scene in the stack at all."""
    where = "this region" if region else "this pixel"
    if not n_scenes:
        return f"no scene in the stack: no {series_title(name)} to plot"
    return (
        f"no observation of {series_title(name)} over {where}: none of the {n_scenes} scenes of the stack has a "
        "valid pixel there (outside their footprint, or no data on every date)"
    )


def point_tip(series: Trajectory, k: int, value: float) -> str:
    """A point's tooltip: its date, sensor and value, and whether it was masked."""
    return f"{series.dates[k].isoformat()} {series.sensors[k]} {value:.3f}" + (" (masked)" if series.masked[k] else "")


@dataclass(frozen=True)
class PointGroup:
    """One scatter: a sensor's clear (filled) or masked (hollow) observations, as series point numbers."""

    sensor: str
    hollow: bool
    points: np.ndarray
    color: str


@dataclass(frozen=True)
class TrajectoryDrawing:
    """Everything drawn for a series: x (decimal years) and y of every point, the scatters, the error bars
    (x, y, full height; empty for a pixel), the value axis's label and the caption (rich text)."""

    x: np.ndarray
    y: np.ndarray
    groups: list[PointGroup]
    value_label: str
    caption: str
    error_bars: tuple[np.ndarray, np.ndarray, np.ndarray] = field(
        default_factory=lambda: (np.zeros(0), np.zeros(0), np.zeros(0))
    )


def drawing(
    series: Trajectory, name: str, *, show_masked: bool, harmonized: bool, region: bool, colors: dict[str, str]
) -> TrajectoryDrawing:
    """What to draw for a non-empty series: per sensor (in the series' order) its finite clear points filled and,
    if masked points are shown, its finite masked points hollow; for a region, bars of twice the spread on the
    points drawn. The caption names the series, where, how the values were read, the counts and the sensors'
    colours (the plot's key: no legend covers a point)."""
    x = series.decimal_years()
    y = np.asarray(series.values, float)
    masked = np.asarray(series.masked, bool)
    sensors = np.asarray(series.sensors)
    groups = []
    for sensor in dict.fromkeys(series.sensors):
        for hollow in (False, True) if show_masked else (False,):
            sel = np.flatnonzero((sensors == sensor) & (masked == hollow) & np.isfinite(y))
            if sel.size:
                groups.append(PointGroup(sensor, hollow, sel, colors.get(sensor, DEFAULT_COLOR)))
    bars = (np.zeros(0), np.zeros(0), np.zeros(0))
    if region:
        spread = np.asarray(series.spread, float)
        ok = np.isfinite(y) & np.isfinite(spread) & (~masked | show_masked)
        bars = (x[ok], y[ok], 2 * spread[ok])
    n_masked = int(masked.sum())
    key = " ".join(
        f"<span style='color:{colors.get(s, DEFAULT_COLOR)}'>&#9679;</span>&nbsp;{html.escape(s).replace(' ', '&nbsp;')}"
        for s in dict.fromkeys(series.sensors)
    )  # a sensor's name never breaks across lines ("MODIS Aqu" / "a")
    caption = (
        f"{html.escape(series_title(name))} at {html.escape(str(series.where))}, {html.escape(shown_as(harmonized))}: "
        f"{len(series) - n_masked} clear, {n_masked} masked (hollow). {key}"
    )
    return TrajectoryDrawing(x, y, groups, series_title(name), caption, bars)


class TrajectoryContent:
    """What the trajectory plot holds, as plain state (the plot only draws it): the series drawn (None: an empty plot),
    whether it was read with TM/ETM+ harmonised to OLI, and the line said while the series of the item shown is read
    elsewhere ("": nothing being read, or it is handed over in this turn). `changed` fires after every change."""

    changed = Signal()

    def __init__(self) -> None:
        self.series: Trajectory | None = None
        self.harmonized = False
        self.reading = ""

    def expect(self, reading: str) -> None:
        """Another item is shown and its series is read elsewhere, `reading` saying so: the series drawn so far is
        the previous item's and goes now (its points under the next item's reading line were stale evidence). With
        no `reading` the next item's series is handed over in this turn, and replaces the drawn one there."""
        if reading:
            self.series = None
        self.reading = reading
        self.changed.emit()

    def show(self, series: Trajectory, harmonized: bool, *, partial: bool = False) -> None:
        """The series to draw; `partial`: the scenes read so far, the rest still being read (the line stays)."""
        self.series = series
        self.harmonized = bool(harmonized)
        if not partial:
            self.reading = ""
        self.changed.emit()

    def clear(self) -> None:
        """Nothing to draw: another site, or an item with no region."""
        self.series = None
        self.reading = ""
        self.changed.emit()
