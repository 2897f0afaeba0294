"""Render one date, a pair or a strip with the same extent and the same stretch, labelled, with a km
scale bar, and the exact stretch saved in the PNG's metadata so the render can be reproduced.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from reviewer.errors import NoSceneError, OutputError, ReviewerError
from reviewer.fileio import atomic_write, check_output_file, os_error_text, shown
from reviewer.record.datespec import by_month, names_scene, nearest_dates, parse_date_spec, scene_date_text
from reviewer.record.decode import SceneDN, decode_scene, read_scene_dn
from reviewer.record.render_dn import PanelColours, panel_colours, renderable
from reviewer.record.render_figure import (
    NODATA_RGB,
    Figure,
    bar_label,
    draw_figure,
    layout,
    nice_scale_km,  # noqa: F401 - the app's pair view imports it from here
    panel_size_px,
    png_bytes,
)
from reviewer.record.scan import Scene, SceneIndex
from reviewer.record.stack import Stack, check_read_fits, composite_bands, open_stack
from reviewer.record.stretch import Stretch, composites, is_single

logger = logging.getLogger(__name__)


@dataclass
class Panel:
    """One labelled panel: physical channels (c, y, x) and the scenes it was made from."""

    label: str
    channels: np.ndarray
    scenes: list[Scene]
    method: str  # scene | clearest | median

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "method": self.method,
            "scenes": [
                {"scene_id": s.scene_id, "date": s.date.isoformat(), "sensor": s.label, "product": s.product}
                for s in self.scenes
            ],
        }

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the panel's pixels."""
        return self.channels.shape[1:]

    def rgb(self, stretch: Stretch) -> np.ndarray:
        """(y, x, 3) uint8: the channels through `stretch`, masked pixels in the no-data colour."""
        return stretch.apply(self.channels, nodata_rgb=NODATA_RGB)


@dataclass
class ScenePanel(Panel):
    """A panel of one scene read as raw DN (render_dn.py), for `reviewer render`: no float values; its colours
    and pixel counts are made in one pass once the stretch is known (channels is None)."""

    dn: SceneDN | None = None
    _coloured: tuple[Stretch, PanelColours] | None = field(default=None, repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        return self.dn.raws[self.dn.specs[0][0]].shape

    def colours(self, stretch: Stretch, *, out: np.ndarray | None = None) -> PanelColours:
        """The panel's RGB through `stretch` and its pixel counts, made once (into `out` if given)."""
        if self._coloured is None or self._coloured[0] != stretch:
            self._coloured = (stretch, panel_colours(self.dn, stretch, NODATA_RGB, out=out))
        return self._coloured[1]

    def rgb(self, stretch: Stretch) -> np.ndarray:
        return self.colours(stretch).rgb


def clear_land_view(scene: Scene) -> float:
    """Share of the site seen clear and snow-free: what 'clearest scene of a year' ranks by."""
    return (scene.clear_fraction or 0.0) - float(scene.extra.get("snow_fraction", 0.0))


def pick_panel(stack: Stack, spec: str, composite: str, *, method: str = "clearest") -> tuple[str, list[int], str]:
    """What resolve_panel shows for `spec`, read nothing: (label, the stack indices of its scenes, method).

    A day (YYYY-MM-DD) picks that day's scene; a month, year or period (YYYY-MM, YYYY or YYYY-YYYY) picks the
    clearest scene, or with method 'median' the per-pixel median of all clear pixels in it. A product dated by
    month (ERA5-Land) has one scene a month: a day of the month or the month names it. A date with no scene
    names the site's nearest dates (datespec)."""
    asked = parse_date_spec(spec)
    idx = [i for i, s in enumerate(stack.scenes) if names_scene(asked, s)]
    if not idx:
        where = "on" if asked.kind == "day" else "in"
        raise NoSceneError(
            f"no scene with {composite} bands {where} {asked.text}{nearest_dates(asked, stack.scenes)}", field="date"
        )
    if asked.kind == "day" or (asked.kind == "month" and all(by_month(stack.scenes[i]) for i in idx)):
        i = max(idx, key=lambda j: stack.scenes[j].clear_fraction or 0.0)
        s = stack.scenes[i]
        return f"{scene_date_text(s)}  {s.label}", [i], "scene"
    period = asked.label
    if method == "median":
        sensors = "/".join(sorted({stack.scenes[i].label for i in idx}))
        return f"{period}  median of {len(idx)}  {sensors}", idx, "median"
    best = max(idx, key=lambda j: (clear_land_view(stack.scenes[j]), stack.scenes[j].tier == "T1"))
    s = stack.scenes[best]
    return f"{scene_date_text(s)}  {s.label}  (clearest of {period})", [best], "clearest"


def resolve_panel(stack: Stack, spec: str, composite: str, *, method: str = "clearest") -> Panel:
    """The panel pick_panel names, read as float values (the median of its scenes for method 'median')."""
    label, idx, how = pick_panel(stack, spec, composite, method=method)
    if how == "median":
        arrays = np.stack([stack.read(i, composite) for i in idx])
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                med = np.nanmedian(arrays, axis=0).astype(np.float32)
        return Panel(label, med, [stack.scenes[i] for i in idx], "median")
    return Panel(label, stack.read(idx[0], composite), [stack.scenes[idx[0]]], how)


def render_panel(stack: Stack, spec: str, composite: str, *, method: str = "clearest") -> Panel:
    """resolve_panel for a render: one scene of an RGB composite read as raw DN, coloured in one pass once the
    stretch is known (ScenePanel: the same pixels), without the float values, the viewer's cache or its copy."""
    label, idx, how = pick_panel(stack, spec, composite, method=method)
    if how == "median" or is_single(composite) or stack.harmonized:
        return resolve_panel(stack, spec, composite, method=method)
    scene = stack.scenes[idx[0]]
    dn = read_scene_dn(scene, scene.product_spec, composite_bands(composite, scene), stack.grid)
    if not renderable(dn, Stretch.default(composite)):  # (float or 32-bit bands: decoded as any read)
        return Panel(label, decode_scene(dn, stacked=True, grid=stack.grid).stacked, [scene], how)
    return ScenePanel(label, None, [scene], how, dn=dn)


def saturation_share(panel: Panel, stretch: Stretch) -> float:
    """Share of the panel's clear pixels (finite in every channel) at or above a channel's high end."""
    if isinstance(panel, ScenePanel):
        counts = panel.colours(stretch)
        return counts.hot / counts.clear if counts.clear else 0.0
    ch = panel.channels
    clear = np.isfinite(ch[0])
    for c in ch[1:]:
        clear &= np.isfinite(c)
    n = int(np.count_nonzero(clear))
    if not n:
        return 0.0
    hot = np.zeros(clear.shape, bool)
    for c, spec in zip(ch, stretch.channels, strict=False):
        with np.errstate(invalid="ignore"):
            hot |= c >= np.float32(spec.high)  # (channel by channel: the boolean-indexed copy took 0.05 s at 1,000 px)
    return float(np.count_nonzero(hot & clear)) / n


def saturation_warnings(panels: list[Panel], stretch: Stretch) -> list[str]:
    """One line per panel whose clear pixels saturate the fixed stretch more than the composite's set share
    (composites.json saturation_warning_share), suggesting the whole-stack percentile stretch."""
    limit = composites()[stretch.composite].get("saturation_warning_share")
    if limit is None or stretch.source != "fixed default":
        return []
    out = []
    for p in panels:
        share = saturation_share(p, stretch)
        if share > limit:
            out.append(
                f"{p.label.split('  ')[0]}: {100 * share:.0f}% of clear pixels saturate the fixed stretch "
                f"(more than {100 * limit:.0f}%); try the percentile stretch (--percentiles)"
            )
    return out


def default_width(n: int, rows: int, cols: int) -> int:
    """The panel width in pixels a render of n panels of a rows x cols site draws at by default: what
    `render --width` defaults to, so a render reads no more pixels than its PNG shows."""
    return min(cols, panel_size_px(n, rows, cols)[0])


def build_figure(
    panels: list[Panel],
    stretch: Stretch,
    *,
    pixel_size_m: float,
    title: str | None = None,
    highlight: int | None = None,
    columns: int | None = None,
    notes: list[str] = (),
    width_px: int | None = None,
    outline: list[tuple[float, float]] | None = None,
    canvas: np.ndarray | None = None,
) -> Figure:
    """The figure of panels side by side (wrapping into rows for strips) with labels, a km scale bar
    (white on a black halo, readable on any ground), the stretch caption and any notes, none clipped, a colour
    bar for a single-channel composite, and `outline` (panel pixel coordinates) dashed on every panel; drawn on
    `canvas` (paint_panels) when it is the figure's size."""
    n = len(panels)
    if n == 0:
        raise NoSceneError("nothing to render")
    return draw_figure(
        [p.rgb(stretch) for p in panels], [p.label for p in panels], stretch,
        pixel_size_m=pixel_size_m, cols=columns or min(n, 6), title=title, footer=_footer(stretch, notes),
        highlight=highlight, width_px=width_px, outline=outline, canvas=canvas,
    )  # fmt: skip


def _footer(stretch: Stretch, notes: list[str]) -> str:
    """The stretch caption under the panels, then any notes. A channel's "[low, high] gamma" is never wrapped
    (no-break spaces: a narrow pair's caption read "[0," on one line and "0.3] g1.2" on the next)."""
    st = stretch.to_json()
    chan = ", ".join(f"[{c['low']:.3g},\u00a0{c['high']:.3g}]\u00a0g{c['gamma']:.2g}" for c in st["channels"])
    return "\n".join([f"{composites()[stretch.composite]['label']}  stretch ({stretch.source}): {chan}", *notes])


def paint_panels(
    panels: list[Panel], stretch: Stretch, *, title: str | None, width_px: int | None
) -> np.ndarray | None:
    """The figure's pixels laid out as build_figure lays them out without notes, white, with every ScenePanel
    drawn at its own size coloured straight into its place (its counts, which the notes need, made in the same
    pass): build_figure(canvas=...) draws the rest on it, with no panel array of its own to copy in. None when
    no panel is a ScenePanel. (Notes only add lines at the bottom: the panels keep their places.)"""
    if not any(isinstance(p, ScenePanel) for p in panels):
        return None
    lay = layout(
        [p.label for p in panels], panels[0].shape, cols=min(len(panels), 6), title=title,
        footer=_footer(stretch, []), colour_bar=bar_label(stretch), width_px=width_px,
    )  # fmt: skip
    canvas = np.full((lay.height, lay.width, 3), 255, np.uint8)
    for p, (left, top, right, bottom) in zip(panels, lay.panels, strict=True):
        if isinstance(p, ScenePanel) and (bottom - top, right - left) == p.shape:
            p.colours(stretch, out=canvas[top:bottom, left:right])
    return canvas


def render_panels(
    panels: list[Panel],
    stretch: Stretch,
    *,
    pixel_size_m: float,
    out: str | Path,
    title: str | None = None,
    highlight: int | None = None,
    columns: int | None = None,
    notes: list[str] = (),
    width_px: int | None = None,
    canvas: np.ndarray | None = None,
) -> Path:
    """Write panels side by side to a PNG (see build_figure), the stretch in the PNG's metadata."""
    out = check_png(out)
    fig = build_figure(
        panels, stretch, pixel_size_m=pixel_size_m, title=title, highlight=highlight, columns=columns, notes=notes,
        width_px=width_px, canvas=canvas,
    )  # fmt: skip
    metadata = {
        "Stretch": stretch.dumps(),
        "Panels": json.dumps([p.to_json() for p in panels]),
        "Software": "EarthRecord Reviewer",
    }
    bars = sorted({t.text for t in fig.texts if t.role == "scale"})  # what the bar says, readable without OCR
    if bars:
        metadata["Scale bar"] = ", ".join(bars)
    buf = png_bytes(fig.rgb, metadata)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(os_error_text(exc), path=shown(out), field="out") from exc
    atomic_write(out, buf)  # a unique temporary name: renders to one --out never collide
    return out


def check_png(out: str | Path) -> Path:
    """The output file of a render: a writable place whose name ends in .png (the bytes written are PNG).
    A folder or a read-only place is named as such first: that is the mistake to fix."""
    check_output_file(out)
    if Path(out).suffix.lower() != ".png":
        raise OutputError(
            f"a render is written as PNG: name the file with .png "
            f"({'not ' + Path(out).suffix if Path(out).suffix else 'the name has no extension'})",
            path=shown(Path(out)),
            field="out",
        )
    return check_output_file(out)


def showable_composites(index: SceneIndex) -> list[str]:
    """The composites at least one record scene of the site has every band for (scenes outside the site, which
    a render leaves out, do not count)."""
    scenes = [s for s in index.scenes if s.record and not s.extra.get("outside_site")]
    return [c for c in composites() if any(composite_bands(c, s) is not None for s in scenes)]


def default_composite(index: SceneIndex) -> str:
    """What a render shows when no --composite is given: true colour, or on a site whose products have no visible
    bands at all (land-surface temperature, ERA5-Land, an NDVI-only MODIS export) the first composite it can show.
    A scene missing a red band it should have keeps true colour, so the missing file is named."""
    scenes = [s for s in index.scenes if s.record and not s.extra.get("outside_site")]
    visible = composites()["truecolor"]["bands"]
    if any(all(s.product_spec.band_by_name(b) is not None for b in visible) for s in scenes):
        return "truecolor"
    return next(iter(showable_composites(index)), "truecolor")


def _no_scene_reason(index: SceneIndex, composite: str, sensors: list[str] | None) -> str:
    """Why no scene can show `composite`: a band left out as damaged (named), and what the site can show."""
    spec = composites()[composite]
    wanted = spec.get("bands") or spec.get("index") or [spec["band"]]
    can = showable_composites(index)
    where = f" of the sensors {', '.join(sensors)}" if sensors else ""
    hint = (
        f"; this site can show: {', '.join(can)} (--composite)" if can else "; no composite can be made of its scenes"
    )
    for s in index.scenes:
        damaged = s.extra.get("damaged", {}) if isinstance(s.extra, dict) else {}
        for name in wanted:
            band = s.product_spec.band_by_name(name)
            if band is not None and band.token not in s.files and band.token in damaged:
                bad = damaged[band.token]
                return (
                    f"no scene with {composite} bands: band {band.token} ({name}) of {s.scene_id} is not readable "
                    f"({bad['path']}: {bad['reason']}){hint}"
                )
    absent = _absent_band(index, wanted)
    if absent:
        return f"no scene{where} with {composite} bands: {absent}{hint}"
    if not index.scenes and index.problems:  # every scene left out at the scan: say why
        from reviewer.record.scan import why_none

        return f"the record of {index.site.id} has no usable scene{why_none(index.problems)}"
    return f"the record of {index.site.id} has no scene{where} with {composite} bands{hint}"


def _absent_band(index: SceneIndex, wanted: list[str]) -> str | None:
    """'<scene> has no <token> (<name>) file' for the first scene inside the site whose product has every band
    of the composite but whose folder lacks one (a band not downloaded), else None."""
    for s in index.scenes:
        if not s.record or s.extra.get("outside_site"):
            continue
        bands = [(name, s.product_spec.band_by_name(name)) for name in wanted]
        if any(b is None for _, b in bands):
            continue  # the product has no such band: not a missing file
        gone = [f"{b.token} ({name})" for name, b in bands if b.token not in s.files]
        if gone:
            return f"{s.scene_id} has no {' or '.join(gone)} file in the folder"
    return None


#: bytes a drawn figure pixel costs while the PNG is made: the figure, a panel's colours, the PNG's rows
#: (measured: --width 10,980 -> 20,000 on a Sentinel-2 tile, 1.72 -> 3.83 GB peak for 0.84 GB more figure)
FIGURE_BYTES_PER_PIXEL = 9


def check_figure_fits(panel_w: int, panel_h: int, n: int) -> None:
    """Refuse, before any read, a figure of `n` panels drawn `panel_w` x `panel_h` px that would not fit in
    the memory free (`--width` far past the site's pixels: a 10,980 px tile drawn 20,000 px wide took 3.8 GB)."""
    import psutil

    need = n * panel_w * panel_h * FIGURE_BYTES_PER_PIXEL
    free = psutil.virtual_memory().available
    if need > free * 0.8:
        from reviewer.errors import MemoryBudgetError

        raise MemoryBudgetError(
            f"a figure of {n} panel(s) of {panel_w} x {panel_h} px needs about {need / 2**30:.1f} GB to draw, more "
            f"than the {free / 2**30:.1f} GB of memory free; give a smaller --width",
            field="width",
        )


def render_dates(
    index: SceneIndex,
    dates: list[str],
    composite: str,
    out: str | Path,
    *,
    stretch: Stretch | None = None,
    method: str = "clearest",
    sensors: list[str] | None = None,
    percentiles: bool = False,
    width: int | None = None,
) -> dict[str, Any]:
    """The `reviewer render` verb: same extent (the site) and same stretch for every panel, each read at the
    panel's pixel width (`width`, default what the PNG draws: default_width), never the site's full grid."""
    if composite not in composites():
        raise ReviewerError(
            f"unknown composite {composite!r}; choose one of {', '.join(composites())}", field="composite"
        )
    if not dates:
        raise ReviewerError("give at least one --date", field="date")
    if width is not None and width < 1:
        raise ReviewerError(f"--width must be at least 1 pixel, got {width}", field="width")
    check_png(out)
    stack = open_stack(index, composite=composite, sensors=sensors)
    if not len(stack):
        raise NoSceneError(_no_scene_reason(index, composite, sensors))
    rows, cols = stack.grid.shape
    asked = width  # the panels are drawn this wide (a small site's pixels upsampled, nearest neighbour)
    width = min(cols, width) if asked is not None else default_width(len(dates), rows, cols)  # read this wide
    stack = stack.at_width(width)
    spec = composites()[composite]
    check_read_fits(
        stack.grid, len(spec.get("bands") or spec.get("index") or [1]), site=f"site {index.site.id}",
        cell_m=(index.site.cell_m[0] * cols / width, index.site.cell_m[1] * rows / stack.grid.shape[0]),
    )  # fmt: skip
    check_figure_fits(*panel_size_px(len(dates), rows, cols, asked), len(dates))
    panels = [render_panel(stack, d, composite, method=method) for d in dates]
    if stretch is None:
        if percentiles:
            from reviewer.record.stretch import percentile_stretch

            samples, n = stack.pooled_samples(composite)
            stretch = percentile_stretch(samples, composite, n_scenes=n)
        else:
            stretch = Stretch.default(composite)
    elif stretch.composite != composite:
        raise ReviewerError(f"the stretch is for {stretch.composite}, not {composite}", field="stretch")
    title = f"{index.site.name} ({index.site.id})"
    canvas = paint_panels(panels, stretch, title=title, width_px=asked)
    for p in panels:
        if isinstance(p, ScenePanel):
            if not p.colours(stretch).clear:
                logger.warning("panel %s: every pixel is masked", p.label)
        elif not any(np.isfinite(c).any() for c in p.channels):  # (channel by channel: stops at the first seen)
            logger.warning("panel %s: every pixel is masked", p.label)
    warnings = saturation_warnings(panels, stretch)
    for line in warnings:
        logger.info("%s", line)
    path = render_panels(
        panels, stretch, pixel_size_m=index.site.cell_m[0] * cols / stack.grid.shape[1], out=out, title=title,
        notes=warnings, width_px=asked, canvas=canvas,
    )  # fmt: skip
    return {
        "out": str(path),
        "stretch": stretch.to_json(),
        "panels": [p.to_json() for p in panels],
        "warnings": warnings,
    }
