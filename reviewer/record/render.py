"""Render one date, a pair or a strip with the same extent and the same stretch, labelled, with a km
scale bar, and the exact stretch saved in the PNG's metadata so the render can be reproduced.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from reviewer.errors import NoSceneError, OutputError, ReviewerError
from reviewer.fileio import atomic_write, check_output_file, os_error_text, shown
from reviewer.record.scan import Scene, SceneIndex
from reviewer.record.stack import Stack, check_read_fits, open_stack
from reviewer.record.stretch import Stretch, composites

logger = logging.getLogger(__name__)

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_YEAR = re.compile(r"^\d{4}$")
_PERIOD = re.compile(r"^(\d{4})(?:-(\d{4}))?$")


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


def clear_land_view(scene: Scene) -> float:
    """Share of the site seen clear and snow-free: what 'clearest scene of a year' ranks by."""
    return (scene.clear_fraction or 0.0) - float(scene.extra.get("snow_fraction", 0.0))


def resolve_panel(stack: Stack, spec: str, composite: str, *, method: str = "clearest") -> Panel:
    """A day (YYYY-MM-DD) picks that day's scene; a year or period (YYYY or YYYY-YYYY) picks the
    clearest scene, or with method 'median' the per-pixel median of all clear pixels in it."""
    spec = spec.strip()
    if _DAY.match(spec):
        try:
            day = dt.date.fromisoformat(spec)
        except ValueError as exc:
            raise ReviewerError(f"not a date: {spec!r}", field="date") from exc
        same = [i for i, s in enumerate(stack.scenes) if s.date == day]
        if not same:
            near = stack.scenes[stack.nearest(day)].date.isoformat() if stack.scenes else None
            hint = f"; the nearest scene is {near}" if near else ""
            raise NoSceneError(f"no scene with {composite} bands on {spec}{hint}", field="date")
        i = max(same, key=lambda j: stack.scenes[j].clear_fraction or 0.0)
        s = stack.scenes[i]
        return Panel(f"{s.date.isoformat()}  {s.label}", stack.read(i, composite), [s], "scene")
    m = _PERIOD.match(spec)
    if not m:
        raise ReviewerError(f"not a date, year or period: {spec!r} (use YYYY-MM-DD, YYYY or YYYY-YYYY)", field="date")
    y0 = int(m.group(1))
    y1 = int(m.group(2) or y0)
    idx = [i for i, s in enumerate(stack.scenes) if y0 <= s.year <= y1]
    if not idx:
        raise NoSceneError(f"no scene with {composite} bands in {spec}", field="date")
    period = str(y0) if y0 == y1 else f"{y0}-{y1}"
    if method == "median":
        arrays = np.stack([stack.read(i, composite) for i in idx])
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                med = np.nanmedian(arrays, axis=0).astype(np.float32)
        scenes = [stack.scenes[i] for i in idx]
        sensors = "/".join(sorted({s.label for s in scenes}))
        return Panel(f"{period}  median of {len(idx)}  {sensors}", med, scenes, "median")
    best = max(idx, key=lambda j: (clear_land_view(stack.scenes[j]), stack.scenes[j].tier == "T1"))
    s = stack.scenes[best]
    return Panel(
        f"{s.date.isoformat()}  {s.label}  (clearest of {period})", stack.read(best, composite), [s], "clearest"
    )


def nice_scale_km(width_km: float) -> float:
    """A round scale-bar length of about a fifth of the panel width."""
    target = width_km / 5
    if target <= 0:
        return 1.0
    exp = 10 ** np.floor(np.log10(target))
    for step in (1, 2, 5, 10):
        if step * exp >= target:
            return float(step * exp)
    return float(10 * exp)


def saturation_share(panel: Panel, stretch: Stretch) -> float:
    """Share of the panel's clear pixels (finite in every channel) at or above a channel's high end."""
    ch = panel.channels
    clear = np.isfinite(ch).all(axis=0)
    n = int(np.count_nonzero(clear))
    if not n:
        return 0.0
    highs = np.array([c.high for c in stretch.channels], dtype=np.float32)[: ch.shape[0], None]
    with np.errstate(invalid="ignore"):
        hot = (ch.reshape(ch.shape[0], -1)[:, clear.ravel()] >= highs).any(axis=0)
    return float(np.count_nonzero(hot)) / n


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


def _fit_text(fig, artist, max_px: float, min_size: float = 5.0) -> None:
    """Wrap (then shrink) a text artist until it is no wider than max_px: captions are never clipped."""
    renderer = fig.canvas.get_renderer()
    text = artist.get_text()
    for _ in range(12):
        width = artist.get_window_extent(renderer).width
        if width <= max_px:
            return
        longest = max(len(line) for line in artist.get_text().splitlines()) or 1
        chars = int(longest * max_px / width)
        if chars >= 12 or artist.get_fontsize() <= min_size:
            artist.set_text(_wrap(text, max(4, chars)))
        else:
            artist.set_fontsize(max(min_size, artist.get_fontsize() * 0.85))


def _wrap(text: str, chars: int) -> str:
    """Each line of `text` wrapped to `chars` on its own (a note stays on its own lines)."""
    import textwrap

    return "\n".join(w for line in text.splitlines() for w in textwrap.wrap(line, chars, break_long_words=True) or [""])


DPI = 110


def default_width(n: int, rows: int, cols: int) -> int:
    """The panel width in pixels a render of n panels of a rows x cols site draws at by default: what
    `render --width` defaults to, so a render reads no more pixels than its PNG shows."""
    return min(cols, max(1, round(_panel_inches(n, rows, cols)[0] * DPI)))


def _panel_inches(n: int, h: int, w: int, width_px: int | None = None) -> tuple[float, float]:
    """Panel size: its longer side 3.2 in (2.2 in strips), never below 1.6 in wide, whatever the grid; with
    `width_px` (render --width), that many pixels wide."""
    if width_px is not None:
        pw = width_px / DPI
        return pw, pw * h / w
    side = 3.2 if n <= 3 else 2.2
    if w >= h:
        return side, side * h / w
    pw = max(1.6, side * w / h)
    return pw, pw * h / w


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
):
    """The figure of panels side by side (wrapping into rows for strips) with labels, a km scale bar
    (white on a black halo, readable on any ground), the stretch caption and any notes, none clipped."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib import patheffects
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    n = len(panels)
    if n == 0:
        raise NoSceneError("nothing to render")
    cols = columns or min(n, 6)
    rows = int(np.ceil(n / cols))
    h, w = panels[0].channels.shape[1:]
    pw, ph = _panel_inches(n, h, w, width_px)
    fig = Figure(figsize=(cols * pw + MARGIN_IN * (cols + 1), rows * (ph + 0.35) + 1.0), dpi=DPI)  # height: _layout
    FigureCanvasAgg(fig)  # an Agg canvas, to measure text with
    width_km = w * pixel_size_m / 1000.0
    bar_km = nice_scale_km(width_km)
    bar_px = bar_km * 1000.0 / pixel_size_m
    halo = [patheffects.withStroke(linewidth=2.5, foreground="black")]
    fig_w = fig.get_figwidth() * fig.dpi
    for k, panel in enumerate(panels):
        ax = fig.add_subplot(rows, cols, k + 1)
        # "none": drawn unsampled (a 1,000 px panel took 3.7 s in matplotlib's resampler; the pixels are
        # read at the panel's own width already)
        ax.imshow(opaque_rgba(stretch.apply(panel.channels, nodata_rgb=(40, 40, 40))), interpolation="none")
        label = ax.set_title(panel.label, fontsize=8 if n > 3 else 9)
        _fit_text(fig, label, 0.95 * fig_w / cols)
        ax.set_xticks([])
        ax.set_yticks([])
        if highlight is not None and k == highlight:
            for side in ax.spines.values():
                side.set_edgecolor("#ffcc00")
                side.set_linewidth(3)
        side = min(h, w)  # the bar's thickness and inset follow the shorter side (strips, tall sites)
        x0, y0 = side * 0.05, h - side * 0.07
        # a panel too low for the label above the bar (a 96 x 2000 px site is ~17 px high) gets the bar across
        # its middle and the label beside it: above the bar the label stuck out of the panel
        thin = ph * fig.dpi < THIN_PANEL_PX
        if thin:
            y0 = h / 2
        ax.add_patch(Rectangle((x0, y0 - side * 0.015), bar_px, side * 0.03, color="white", ec="black", lw=0.8))
        where = (x0 + bar_px + side * 0.1, y0) if thin else (x0 + bar_px / 2, y0 - side * 0.03)
        ax.text(
            *where, f"{bar_km:g} km", color="white", ha="left" if thin else "center",
            va="center" if thin else "bottom", fontsize=6 if thin else 7, fontweight="bold", path_effects=halo,
        )  # fmt: skip
    st = stretch.to_json()
    chan = ", ".join(f"[{c['low']:.3g}, {c['high']:.3g}] g{c['gamma']:.2g}" for c in st["channels"])
    lines = [f"{composites()[stretch.composite]['label']}  stretch ({stretch.source}): {chan}", *notes]
    footer = fig.text(0.5, 0.0, "\n".join(lines), ha="center", va="bottom", fontsize=7, color="black")
    _fit_text(fig, footer, 0.96 * fig_w)
    if title:
        head = fig.suptitle(title, fontsize=10, y=1.0, va="top")
        _fit_text(fig, head, 0.96 * fig_w)
    bar = _colour_bar(fig, stretch) if stretch.is_index else None
    _layout(fig, footer, head if title else None, cols, (pw, ph), bar)
    return fig


def opaque_rgba(rgb: np.ndarray) -> np.ndarray:
    """(y, x, 3) uint8 as (y, x, 4) with alpha 255: the pixels matplotlib draws from RGB, without its own
    conversion (half of drawing a 1,000 px panel)."""
    out = np.empty((*rgb.shape[:2], 4), np.uint8)
    out[..., :3] = rgb
    out[..., 3] = 255
    return out


COLOUR_BAR_IN = 0.55  # the colour bar's band above the footer: bar, ticks and label


def _colour_bar(fig, stretch: Stretch):
    """A horizontal colour bar of a single-channel composite (index, LST, ERA5 variable): its colour map over
    the stretch's low..high, labelled with the composite and its unit (composites.json)."""
    import matplotlib
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize, PowerNorm

    from reviewer.record.stretch import unit_of

    c = stretch.channels[0]
    norm = Normalize(c.low, c.high) if c.gamma == 1.0 else PowerNorm(1.0 / c.gamma, c.low, c.high)
    cax = fig.add_axes([0.2, 0.0, 0.6, 0.05])
    mappable = ScalarMappable(norm=norm, cmap=matplotlib.colormaps[stretch.colormap or "viridis"])
    cb = fig.colorbar(mappable, cax=cax, orientation="horizontal", extend="both")
    unit = unit_of(stretch.composite)
    cb.set_label(f"{composites()[stretch.composite]['label']}" + (f" ({unit})" if unit else ""), fontsize=7)
    cax.tick_params(labelsize=6)
    return cax


MARGIN_IN = 0.08
#: panels drawn lower than this (pixels) carry the scale-bar label beside the bar, not above it
THIN_PANEL_PX = 40


def _layout(fig, footer, head, cols: int, panel_in: tuple[float, float], bar=None) -> None:
    """Place the panels by hand between the measured (possibly wrapped) title and footer, each under its
    measured label, and size the figure to fit them: nothing is clipped and nothing overlaps. A colour bar
    (`bar`) goes between the panels and the footer."""
    renderer = fig.canvas.get_renderer()
    dpi = fig.dpi
    pw, ph = panel_in
    axes = [ax for ax in fig.axes if ax is not bar]
    rows = int(np.ceil(len(axes) / cols))
    text_in = (footer.get_window_extent(renderer).height + 8) / dpi
    foot_in = text_in + (COLOUR_BAR_IN if bar is not None else 0.0)
    head_in = (head.get_window_extent(renderer).height + 12) / dpi if head is not None else MARGIN_IN
    label_in = max(ax.title.get_window_extent(renderer).height for ax in axes) / dpi + 10 / 72  # + the title pad
    row_in = label_in + ph + MARGIN_IN
    width, height = fig.get_figwidth(), head_in + rows * row_in + foot_in
    fig.set_figheight(height)
    if head is not None:
        head.set_y(1 - 6 / dpi / height)  # a few pixels below the top edge
    # the footer a few pixels above the bottom edge: as a share of the height (0.01) it rose into the panel
    # of a tall figure (a 2000 x 96 px site: 0.01 of a 35 in figure is 38 px, the gap left for it 8 px)
    footer.set_y(3 / dpi / height)
    if bar is not None:
        bar_w = min(width * 0.8, max(2.4, 0.6 * width))
        bar_bottom = text_in + 0.32  # above the footer, room below the bar for its ticks and label
        bar.set_position([(width - bar_w) / 2 / width, bar_bottom / height, bar_w / width, 0.1 / height])
    for k, ax in enumerate(axes):
        r, c = divmod(k, cols)
        left = MARGIN_IN / 2 + c * (width - MARGIN_IN) / cols + ((width - MARGIN_IN) / cols - pw) / 2
        bottom = foot_in + (rows - 1 - r) * row_in + MARGIN_IN / 2
        ax.set_position([left / width, bottom / height, pw / width, ph / height])


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
) -> Path:
    """Write panels side by side to a PNG (see build_figure), the stretch in the PNG's metadata."""
    out = check_png(out)
    fig = build_figure(
        panels, stretch, pixel_size_m=pixel_size_m, title=title, highlight=highlight, columns=columns, notes=notes,
        width_px=width_px,
    )  # fmt: skip
    metadata = {
        "Stretch": stretch.dumps(),
        "Panels": json.dumps([p.to_json() for p in panels]),
        "Software": "EarthRecord Reviewer",
    }
    buf = png_bytes(fig, metadata)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(os_error_text(exc), path=shown(out), field="out") from exc
    atomic_write(out, buf)  # a unique temporary name: renders to one --out never collide
    return out


def png_bytes(fig, metadata: dict[str, str]) -> bytes:
    """The figure drawn as savefig draws it, as PNG with `metadata` in text chunks. An opaque figure (all
    of ours) is written as RGB, not RGBA: a quarter fewer bytes to compress (0.10 s instead of 0.12 s for a
    1,000 px panel); zlib level 3 (the default 6 took 1.7 s of a 1,000 px render; ~10% larger)."""
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba())
    image = Image.fromarray(rgba[..., :3]) if (rgba[..., 3] == 255).all() else Image.fromarray(rgba)
    info = PngInfo()
    for key, value in metadata.items():
        info.add_text(key, value)
    buf = io.BytesIO()
    image.save(buf, format="png", pnginfo=info, compress_level=3)
    return buf.getvalue()


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
    from reviewer.record.stack import composite_bands

    scenes = [s for s in index.scenes if s.record and not s.extra.get("outside_site")]
    return [c for c in composites() if any(composite_bands(c, s) is not None for s in scenes)]


def _no_scene_reason(index: SceneIndex, composite: str, sensors: list[str] | None) -> str:
    """Why no scene can show `composite`: a band left out as damaged (named), and what the site can show."""
    spec = composites()[composite]
    wanted = spec.get("bands") or spec.get("index") or [spec["band"]]
    for s in index.scenes:
        damaged = s.extra.get("damaged", {}) if isinstance(s.extra, dict) else {}
        for name in wanted:
            band = s.product_spec.band_by_name(name)
            if band is not None and band.token not in s.files and band.token in damaged:
                bad = damaged[band.token]
                return (
                    f"no scene with {composite} bands: band {band.token} ({name}) of {s.scene_id} is not readable "
                    f"({bad['path']}: {bad['reason']})"
                )
    can = showable_composites(index)
    where = f" of the sensors {', '.join(sensors)}" if sensors else ""
    hint = (
        f"; this site can show: {', '.join(can)} (--composite)" if can else "; no composite can be made of its scenes"
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
        resolution=index.site.resolution * cols / width,
    )  # fmt: skip
    panels = [resolve_panel(stack, d, composite, method=method) for d in dates]
    if stretch is None:
        if percentiles:
            from reviewer.record.stretch import percentile_stretch

            samples, n = stack.pooled_samples(composite)
            stretch = percentile_stretch(samples, composite, n_scenes=n)
        else:
            stretch = Stretch.default(composite)
    elif stretch.composite != composite:
        raise ReviewerError(f"the stretch is for {stretch.composite}, not {composite}", field="stretch")
    for p in panels:
        if not np.isfinite(p.channels).any():
            logger.warning("panel %s: every pixel is masked", p.label)
    title = f"{index.site.name} ({index.site.id})"
    warnings = saturation_warnings(panels, stretch)
    for line in warnings:
        logger.info("%s", line)
    path = render_panels(
        panels, stretch, pixel_size_m=index.site.resolution * cols / stack.grid.shape[1], out=out, title=title,
        notes=warnings, width_px=asked,
    )  # fmt: skip
    return {
        "out": str(path),
        "stretch": stretch.to_json(),
        "panels": [p.to_json() for p in panels],
        "warnings": warnings,
    }
