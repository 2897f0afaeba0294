"""A render's figure drawn straight into an RGB array: the panels' pixels pasted at their output size (no
resampling when a panel is read at the width it is drawn), and only the small annotations drawn over them with
Pillow (title, panel labels, a km scale bar, the stretch caption, a colour bar, an outline). Then written as PNG.

Why not matplotlib: on a whole Landsat scene its figure and PNG cost more than reading the pixels (issue 31:
0.07 s against a 0.04 s read at 352 px, 0.45 s for a 1,000 px panel); this draws the same figure in a few
milliseconds. Sizes follow the matplotlib figure it replaces: 110 dpi, fonts in points (DejaVu Sans, the font
matplotlib ships), panels 3.2 in (2.2 in in strips).
"""

from __future__ import annotations

import importlib.util
import struct
import textwrap
import threading
import zlib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

DPI = 110
MARGIN_IN = 0.08
#: panels drawn lower than this (pixels) carry the scale-bar label beside the bar, not above it
THIN_PANEL_PX = 40
MAX_BAR_HALF_PX = 5.5  # a scale bar's half thickness at most (a 352 px panel's is 5.28)
COLOUR_BAR_IN = 0.55  # the colour bar's band above the footer: bar, ticks and a label of one line
BAR_LABEL_PT = 7.0  # the colour bar's label (smaller, to 5 pt, only while one of its words is wider than the figure)
NODATA_RGB = (40, 40, 40)
HIGHLIGHT = (255, 204, 0)  # #ffcc00
#: the outline of a region (drafting images): dashed yellow, about 1.4 pt
OUTLINE_RGB, OUTLINE_PX, OUTLINE_DASH = (255, 212, 0), 2, (8, 4)

#: the FreeType faces are shared by every render (font() caches them) and FreeType is not safe on one face from
#: two threads (the app exports in the background while a CLI-like render may run): text goes one at a time
_FREETYPE = threading.Lock()

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in image pixels (y down), x1/y1 exclusive


@dataclass
class Text:
    """A caption as drawn: what it says and where (tests check nothing is clipped or covers a panel)."""

    text: str
    box: Box
    role: str  # title | label | scale | footer | bar label | tick
    panel: int | None = None


@dataclass
class ColourBar:
    label: str
    box: Box
    ticks: list[tuple[float, str]]


@dataclass
class Figure:
    """The drawn figure: its pixels, and where each panel and caption went."""

    rgb: np.ndarray  # (y, x, 3) uint8
    panels: list[Box]
    texts: list[Text] = field(default_factory=list)
    colour_bar: ColourBar | None = None

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return self.rgb.shape[1], self.rgb.shape[0]


def px(points: float) -> int:
    """Points at the figure's dpi, in whole pixels."""
    return max(1, round(points * DPI / 72))


def font(points: float, bold: bool = False):
    """DejaVu Sans (from matplotlib's own data, without importing matplotlib) at `points`."""
    return _face(px(points), bold)


@cache
def _face(size_px: int, bold: bool):
    from PIL import ImageFont

    spec = importlib.util.find_spec("matplotlib")  # its fonts' folder, without importing it
    assert spec is not None and spec.origin is not None, "matplotlib (a dependency) is installed"
    folder = Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf"
    with _FREETYPE:
        return ImageFont.truetype(str(folder / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")), size_px)


def _spacing(points: float) -> int:
    return max(1, round(0.2 * px(points)))  # matplotlib's 1.2 line spacing


def text_size(text: str, points: float, bold: bool = False) -> tuple[int, int]:
    """(width, height) of a (multi-line) caption in pixels."""
    f = font(points, bold)
    lines = text.split("\n")
    with _FREETYPE:
        width = max(f.getlength(line) for line in lines)
        ascent, descent = f.getmetrics()
    return int(np.ceil(width)), len(lines) * (ascent + descent) + (len(lines) - 1) * _spacing(points)


def fit_text(text: str, points: float, max_px: float, min_points: float = 5.0) -> tuple[str, float]:
    """The caption wrapped (then shrunk) until it is no wider than max_px: captions are never clipped."""
    out = text
    for _ in range(12):
        width = text_size(out, points)[0]
        if width <= max_px:
            break
        longest = max(len(line) for line in out.splitlines()) or 1
        chars = int(longest * max_px / width)
        if chars >= 12 or points <= min_points:
            out = _wrap(text, max(4, chars))
        else:
            points = max(min_points, points * 0.85)
    return out, points


def fit_words(text: str, points: float, max_px: float, min_points: float = 5.0) -> tuple[str, float]:
    """The caption wrapped at spaces to lines no wider than max_px, its font shrunk (to min_points) only while
    one word is wider than max_px: a word is never cut. At min_points a word may still be wider than max_px:
    the caller makes room (the figure grows)."""
    words = text.split()
    if not words:
        return text, points
    while points > min_points and max(text_size(w, points)[0] for w in words) > max_px:
        points = max(min_points, points * 0.9)
    lines = [words[0]]
    for word in words[1:]:
        joined = f"{lines[-1]} {word}"
        if text_size(joined, points)[0] <= max_px:
            lines[-1] = joined
        else:
            lines.append(word)
    return "\n".join(lines), points


def _wrap(text: str, chars: int) -> str:
    """Each line of `text` wrapped to `chars` on its own (a note stays on its own lines)."""
    return "\n".join(w for line in text.splitlines() for w in textwrap.wrap(line, chars, break_long_words=True) or [""])


def panel_size_px(n: int, h: int, w: int, width_px: int | None = None) -> tuple[int, int]:
    """A panel's drawn (width, height) in pixels: its longer side 3.2 in (2.2 in in strips), never below 1.6 in
    wide, whatever the grid; with `width_px` (render --width), that many pixels wide."""
    if width_px is not None:
        pw = width_px / DPI
    else:
        side = 3.2 if n <= 3 else 2.2
        pw = side if w >= h else max(1.6, side * w / h)
    return max(1, round(pw * DPI)), max(1, round(pw * DPI * h / w))


@dataclass
class Layout:
    """Where everything goes (pixels): computed before anything is drawn."""

    width: int
    height: int
    panels: list[Box]
    title: tuple[str, float] | None
    labels: list[tuple[str, float]]
    footer: tuple[str, float]
    bar: Box | None
    bar_label: tuple[str, float] | None = None  # the colour bar's label as drawn (wrapped, its points)


def layout(labels: list[str], shape: tuple[int, int], *, cols: int, title: str | None, footer: str,
           colour_bar: str | None, width_px: int | None) -> Layout:  # fmt: skip
    """The panels on a grid between the (wrapped) title and footer, each under its label; a colour bar (labelled
    `colour_bar`) between the panels and the footer: nothing clipped, nothing overlapping.

    The panels keep their width (render --width); the colour bar's label wraps at spaces, then shrinks to 5 pt,
    and only a word wider than that makes the figure wider than its panels (they stay centred)."""
    n = len(labels)
    rows = -(-n // cols)
    h, w = shape
    pw, ph = panel_size_px(n, h, w, width_px)
    margin = px(MARGIN_IN * 72)
    width = cols * pw + margin * (cols + 1)
    bar_text = fit_words(colour_bar, BAR_LABEL_PT, 0.96 * width) if colour_bar else None
    if bar_text:
        width = max(width, int(np.ceil(text_size(*bar_text)[0] / 0.96)))
    label_pt = 8 if n > 3 else 9
    fitted = [fit_text(lab, label_pt, 0.95 * width / cols) for lab in labels]
    foot = fit_text(footer, 7, 0.96 * width)
    head = fit_text(title, 10, 0.96 * width) if title else None
    text_h = text_size(*foot)[1] + 8
    extra = max(0, text_size(*bar_text)[1] - text_size("x", BAR_LABEL_PT)[1]) if bar_text else 0  # more lines
    foot_h = text_h + (px(COLOUR_BAR_IN * 72) + extra if bar_text else 0)
    head_h = text_size(*head)[1] + 12 if head else margin
    label_h = max(text_size(*f)[1] for f in fitted) + px(10)  # + the title pad
    row_h = label_h + ph + margin
    height = head_h + rows * row_h + foot_h
    panels = []
    for k in range(n):
        r, c = divmod(k, cols)
        left = margin // 2 + c * (width - margin) // cols + ((width - margin) // cols - pw) // 2
        top = head_h + r * row_h + label_h + margin // 2
        panels.append((left, top, left + pw, top + ph))
    bar = None
    if bar_text:
        tip = px(0.1 * 72)  # the bar's height, and how far each end's triangle reaches beyond it
        bar_w = round(min(width * 0.8, max(2.4 * DPI, 0.6 * width), width - 2 * (tip + 1) - margin))
        bottom = height - text_h - px(0.32 * 72) - extra
        bar = ((width - bar_w) // 2, bottom - tip, (width + bar_w) // 2, bottom)
    return Layout(width, height, panels, head, fitted, foot, bar, bar_text)


def on_panel(rgb: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The panel's pixels at its drawn (width, height): as they are when read at that width, else nearest
    neighbour (a small site's pixels enlarged, a strip's panels shrunk)."""
    h, w = rgb.shape[:2]
    pw, ph = size
    if (w, h) == (pw, ph):
        return rgb
    rows = np.minimum(((np.arange(ph) + 0.5) * h / ph).astype(np.intp), h - 1)
    cols = np.minimum(((np.arange(pw) + 0.5) * w / pw).astype(np.intp), w - 1)
    return rgb[rows[:, None], cols[None, :]]


def draw_text(draw, texts: list[Text], xy: tuple[float, float], text: str, points: float, *, anchor: str,
              role: str, panel: int | None = None, bold: bool = False, fill=(0, 0, 0), halo: int = 0) -> None:  # fmt: skip
    """A caption at `xy` (Pillow's anchor; multi-line captions centred line by line), recorded in `texts`."""
    kw = dict(font=font(points, bold), anchor=anchor, spacing=_spacing(points), align="center", stroke_width=halo)
    with _FREETYPE:
        box = draw.multiline_textbbox(xy, text, **kw)
        draw.multiline_text(xy, text, fill=fill, stroke_fill=(0, 0, 0) if halo else None, **kw)
    left, top, right, bottom = (int(v) for v in box)
    texts.append(Text(text, (left, top, right, bottom), role, panel))


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


def scale_bar(draw, texts: list[Text], box: Box, shape: tuple[int, int], pixel_size_m: float, k: int) -> None:
    """A round km bar about a fifth of the panel wide, white outlined in black, its label white on a black halo
    (readable on any ground); on a panel too low for the label above the bar, across its middle, label beside.

    Placed in drawn pixels, so it stays inside a panel of a few coarse pixels (a 3 x 5 px ERA5-Land site drawn
    350 px high put it below the panel); a bar shorter than its label takes the next round length that fits
    the panel, and where none does the label starts where the bar starts, over the panel."""
    h, w = shape
    left, top, right, bottom = box
    dw, dh = right - left, bottom - top
    per_km = 1000.0 / pixel_size_m * dw / w  # drawn pixels per km
    side = min(dw, dh)  # the bar's thickness and inset follow the shorter side (strips, tall sites)
    inset = side * 0.05
    bar_km = nice_scale_km(w * pixel_size_m / 1000.0)
    points, halo = 7.0, 2
    label_px = text_size(f"{bar_km:g} km", points, bold=True)[0] + 2 * halo
    longer = bar_km
    while bar_km * per_km < label_px:  # the next round length (1, 2, 5, 10 ...) whose bar holds its label
        longer = nice_scale_km(longer * 5 * 1.001)
        if longer * per_km > dw - 2 * inset:
            break
        bar_km, label_px = longer, text_size(f"{longer:g} km", points, bold=True)[0] + 2 * halo
    bar_px = bar_km * per_km
    x0, y0 = left + inset, bottom - side * 0.07
    thin = dh < THIN_PANEL_PX
    if thin:
        y0 = top + dh / 2
    # (a white inside between its two black edges) as thick as a default 352 px panel's at most: on a 1,000 px
    # panel (a full-resolution box) it was a 30 px slab under a 7 pt label, the label 15 px above it
    half = min(max(side * 0.015, 2.0), MAX_BAR_HALF_PX)
    above = min(side * 0.03, 2 * half)  # the label's foot above the bar's middle
    draw.rectangle((round(x0), round(y0 - half), max(round(x0), round(x0 + bar_px) - 1), round(y0 + half) - 1),
                   fill=(255, 255, 255), outline=(0, 0, 0), width=1)  # fmt: skip
    text = f"{bar_km:g} km"
    if thin:  # beside the bar, as large as the panel's height allows (a 96 x 2000 px strip panel is 12 px high)
        xy, anchor, points, halo = (x0 + bar_px + max(side * 0.1, 3), y0), "lm", 6.0, 1
        while points > 4 and text_size(text, points, bold=True)[1] + 2 * halo > dh:
            points *= 0.9
    elif bar_px < label_px:  # a narrow panel: above the bar from its start, into the panel (not past its edge)
        xy, anchor = (x0, y0 - above), "ld"
    else:
        xy, anchor = (x0 + bar_px / 2, y0 - above), "md"
    draw_text(draw, texts, xy, text, points, anchor=anchor, role="scale", panel=k, bold=True,
              fill=(255, 255, 255), halo=halo)  # fmt: skip


def _dashes(ring: list[tuple[float, float]], on: float, off: float):
    """The pieces of a dashed polyline (dash pattern carried across corners)."""
    phase, drawing = on, True
    for (x0, y0), (x1, y1) in zip(ring, ring[1:], strict=False):
        length = float(np.hypot(x1 - x0, y1 - y0))
        pos = 0.0
        while pos < length:
            step = min(phase, length - pos)
            if drawing and length:
                a, b = pos / length, (pos + step) / length
                yield (x0 + (x1 - x0) * a, y0 + (y1 - y0) * a), (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b)
            pos += step
            phase -= step
            if phase <= 0:
                drawing = not drawing
                phase = on if drawing else off


def draw_outline(rgb: np.ndarray, box: Box, shape: tuple[int, int], ring: list[tuple[float, float]]) -> None:
    """The region's outline (panel pixel coordinates, pixel centres at integers) dashed on the panel, clipped to it."""
    from PIL import Image, ImageDraw

    h, w = shape
    left, top, right, bottom = box
    sx, sy = (right - left) / w, (bottom - top) / h
    sub = Image.fromarray(np.ascontiguousarray(rgb[top:bottom, left:right]))
    draw = ImageDraw.Draw(sub)
    points = [((x + 0.5) * sx, (y + 0.5) * sy) for x, y in ring]
    for a, b in _dashes(points, *OUTLINE_DASH):
        draw.line([a, b], fill=OUTLINE_RGB, width=OUTLINE_PX)
    rgb[top:bottom, left:right] = np.asarray(sub)


def bar_label(stretch) -> str | None:
    """The colour bar's label of a single-channel composite: its label and unit (composites.json); None: no bar."""
    from reviewer.record.stretch import composites, unit_of

    if not stretch.is_index:
        return None
    unit = unit_of(stretch.composite)
    return composites()[stretch.composite]["label"] + (f" ({unit})" if unit else "")


def colour_bar(canvas, draw, texts: list[Text], box: Box, stretch, label: tuple[str, float], width: int) -> ColourBar:
    """A horizontal colour bar of a single-channel composite (index, LST, ERA5 variable): the panel's own colour
    map and gamma over the stretch's low..high, triangles for values beyond, ticks whose labels neither overlap
    nor leave the figure (`width` px), and `label` (text, points: layout's fit of bar_label) under them."""
    c = stretch.channels[0]
    x0, y0, x1, y1 = box
    colours = stretch.apply(np.linspace(c.low, c.high, x1 - x0, dtype=np.float32)[None, None])[0]  # as the panels
    canvas.paste(_strip(colours, y1 - y0), (x0, y0))
    tip = y1 - y0
    mid = (y0 + y1 - 1) / 2
    draw.polygon([(x0 - 1, y0), (x0 - 1 - tip, mid), (x0 - 1, y1 - 1)], fill=tuple(int(v) for v in colours[0]))
    draw.polygon([(x1, y0), (x1 + tip, mid), (x1, y1 - 1)], fill=tuple(int(v) for v in colours[-1]))
    # one black outline round the bar and its two triangles (a pale end of a colour map stands out from white)
    draw.polygon([(x0 - 1, y0 - 1), (x1, y0 - 1), (x1 + tip, mid), (x1, y1), (x0 - 1, y1), (x0 - 1 - tip, mid)],
                 outline=(0, 0, 0))  # fmt: skip
    ticks = []
    for v, tick in _readable_ticks(c.low, c.high, x0, x1, width):
        x = x0 + (v - c.low) / (c.high - c.low) * (x1 - x0 - 1)
        draw.line([(round(x), y1), (round(x), y1 + px(3.5) - 1)], fill=(0, 0, 0), width=1)
        draw_text(draw, texts, (x, y1 + px(3.5) + 1), tick, 6, anchor="ma", role="tick")
        ticks.append((v, tick))
    text, points = label
    below = max((t.box[3] for t in texts if t.role == "tick"), default=y1 + px(3.5))
    draw_text(draw, texts, ((x0 + x1) / 2, below + 2), text, points, anchor="ma", role="bar label")
    return ColourBar(" ".join(text.split()), box, ticks)


def _readable_ticks(low: float, high: float, x0: int, x1: int, width: int) -> list[tuple[float, str]]:
    """The most round ticks (at most 6) whose 6 pt labels stand apart and inside the figure; on a bar too short
    for two, those of the fewest that do, the ones in the way left out."""
    gap = px(2)

    def readable(ticks) -> bool:
        s = [(x0 + (v - low) / (high - low) * (x1 - x0 - 1), text_size(t, 6)[0] / 2) for v, t in ticks]
        inside = all(x - half >= 0 and x + half <= width for x, half in s)
        return inside and all(a + ha + gap <= b - hb for (a, ha), (b, hb) in zip(s, s[1:], strict=False))

    if not high > low:
        return nice_ticks(low, high)
    for most in range(6, 1, -1):
        ticks = nice_ticks(low, high, most)
        if readable(ticks):
            return ticks
    kept: list[tuple[float, str]] = []
    for tick in nice_ticks(low, high, 2):
        if readable([*kept, tick]):
            kept.append(tick)
    return kept


def _strip(colours: np.ndarray, height: int):
    from PIL import Image

    return Image.fromarray(np.ascontiguousarray(np.broadcast_to(colours[None], (height, *colours.shape))))


def nice_ticks(low: float, high: float, most: int = 6) -> list[tuple[float, str]]:
    """Round ticks within [low, high] (steps of 1, 2, 2.5 or 5 times a power of ten, at most `most`), labelled
    as matplotlib labels them: the step's decimals on every tick, a true minus sign."""
    span = high - low
    if not span > 0:
        return [(low, f"{low:g}")]
    for exp in range(int(np.floor(np.log10(span / most))), int(np.ceil(np.log10(span))) + 2):
        for step in (1, 2, 2.5, 5):
            s = step * 10.0**exp
            values = np.arange(np.ceil(low / s - 1e-9) * s, high + s * 1e-9, s)
            if len(values) <= most:
                decimals = max(0, -exp + (1 if step == 2.5 else 0))
                return [(float(v), f"{v + 0.0:.{decimals}f}".replace("-", "\u2212")) for v in values]
    return [(low, f"{low:g}"), (high, f"{high:g}")]


def draw_figure(panels: list[np.ndarray], labels: list[str], stretch, *, pixel_size_m: float, cols: int,
                title: str | None, footer: str, highlight: int | None = None, width_px: int | None = None,
                outline: list[tuple[float, float]] | None = None, canvas: np.ndarray | None = None) -> Figure:  # fmt: skip
    """The figure of panels (each (y, x, 3) uint8, one shape) side by side in rows of `cols`: labels, scale bars,
    the footer, a colour bar for a single-channel stretch, a highlighted panel, a region's outline.

    The figure is one numpy array: the panels are copied in, and each caption, bar and frame is drawn by Pillow
    on a crop of just the pixels it covers (a Pillow canvas of the whole figure, its fill, the panels' paste and
    the copy back cost as much as the pixels' colours on a 1,000 px panel: issue 31)."""
    shape = panels[0].shape[:2]
    lay = layout(labels, shape, cols=cols, title=title, footer=footer, colour_bar=bar_label(stretch),
                 width_px=width_px)  # fmt: skip
    if canvas is not None and canvas.shape == (lay.height, lay.width, 3):
        rgb = canvas  # (white, with panels drawn in their places already: see render.paint_panels)
    else:
        rgb = np.full((lay.height, lay.width, 3), 255, np.uint8)
    texts: list[Text] = []
    for k, (panel, box) in enumerate(zip(panels, lay.panels, strict=True)):
        left, top, right, bottom = box
        place = rgb[top:bottom, left:right]
        if not _same_array(place, panel):
            place[...] = on_panel(panel, (right - left, bottom - top))
        if outline:
            draw_outline(rgb, box, shape, outline)
        frame, width = ((0, 0, 0), 1) if k != highlight else (HIGHLIGHT, px(3))
        draw_frame(rgb, (left - width, top - width, right - 1 + width, bottom - 1 + width), frame, width)
        on_crop(rgb, texts, lambda d, t, box=box, k=k: scale_bar(d, t, box, shape, pixel_size_m, k))
        text, points = lay.labels[k]
        xy = ((left + right) / 2, top - px(6))
        on_crop(rgb, texts, lambda d, t, xy=xy, text=text, points=points, k=k: draw_text(
            d, t, xy, text, points, anchor="md", role="label", panel=k))  # fmt: skip
    text, points = lay.footer
    on_crop(rgb, texts, lambda d, t: draw_text(d, t, (lay.width / 2, lay.height - 3), text, points, anchor="md",
                                               role="footer"))  # fmt: skip
    if lay.title:
        head, head_points = lay.title
        on_crop(rgb, texts, lambda d, t: draw_text(d, t, (lay.width / 2, 6), head, head_points, anchor="ma",
                                                   role="title"))  # fmt: skip
    bar = None
    if lay.bar and lay.bar_label:
        bar = on_crop(rgb, texts, lambda d, t: colour_bar(d, d, t, lay.bar, stretch, lay.bar_label, lay.width))
    return Figure(rgb, lay.panels, texts, bar)


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether a and b are the same pixels in memory (a panel already drawn in its place)."""
    return (
        a.shape == b.shape
        and a.strides == b.strides
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    )


def draw_frame(rgb: np.ndarray, xy: Box, colour: tuple[int, int, int], width: int) -> None:
    """Pillow's rectangle(xy, outline=colour, width=width) (xy inclusive), as four slices of the figure."""
    x0, y0, x1, y1 = xy
    height, wide = rgb.shape[:2]
    for ya, yb, xa, xb in ((y0, y0 + width, x0, x1 + 1), (y1 - width + 1, y1 + 1, x0, x1 + 1),
                           (y0, y1 + 1, x0, x0 + width), (y0, y1 + 1, x1 - width + 1, x1 + 1)):  # fmt: skip
        ya, yb, xa, xb = max(0, ya), min(height, yb), max(0, xa), min(wide, xb)
        if ya < yb and xa < xb:
            rgb[ya:yb, xa:xb] = colour


def on_crop(rgb: np.ndarray, texts: list[Text], draw):
    """draw(d, texts) run on a crop of the figure `rgb` holding everything it draws: first on a probe that only
    measures (the same calls, nothing drawn), then for real on a Pillow image of the pixels it covers, written back.
    `d` takes ImageDraw's calls in figure coordinates (and paste). Returns what draw returns."""
    probe = _Probe()
    draw(probe, list(texts))
    if probe.box is None:
        return draw(probe, texts)
    crop = _Crop(rgb, probe.box)
    out = draw(crop, texts)
    crop.close()
    return out


class _Probe:
    """The bounds of what ImageDraw calls would cover (text boxes measured by Pillow itself), drawing nothing."""

    PAD = 2  # pixels beyond the measured extent (anti-aliased edges)

    def __init__(self) -> None:
        self.box: Box | None = None
        self._text_boxes: dict[tuple, tuple] = {}  # (a caption is measured, then drawn: laid out once)

    def _grow(self, x0: float, y0: float, x1: float, y1: float) -> None:
        import math

        p = self.PAD
        b = (math.floor(x0) - p, math.floor(y0) - p, math.ceil(x1) + 1 + p, math.ceil(y1) + 1 + p)
        self.box = b if self.box is None else (min(self.box[0], b[0]), min(self.box[1], b[1]),
                                               max(self.box[2], b[2]), max(self.box[3], b[3]))  # fmt: skip

    def _points(self, xy, width: int = 1) -> None:
        pts = _pairs(xy)
        xs, ys = [x for x, _ in pts], [y for _, y in pts]
        self._grow(min(xs) - width, min(ys) - width, max(xs) + width, max(ys) + width)

    def rectangle(self, xy, **kw) -> None:
        self._points(xy, kw.get("width", 1))

    def polygon(self, xy, **kw) -> None:
        self._points(xy, kw.get("width", 1))

    def line(self, xy, **kw) -> None:
        self._points(xy, kw.get("width", 1))

    def multiline_textbbox(self, xy, text, **kw):
        key = (tuple(xy), text, tuple(sorted(kw.items(), key=lambda item: item[0])))
        box = self._text_boxes.get(key)
        if box is None:
            box = self._text_boxes[key] = _measure().multiline_textbbox(xy, text, **kw)
        return box

    def multiline_text(self, xy, text, **kw) -> None:
        colours = ("fill", "stroke_fill")  # (what it is drawn in: not what textbbox takes)
        self._grow(*self.multiline_textbbox(xy, text, **{k: v for k, v in kw.items() if k not in colours}))

    def paste(self, image, xy) -> None:
        self._grow(xy[0], xy[1], xy[0] + image.width - 1, xy[1] + image.height - 1)


class _Crop:
    """ImageDraw calls in figure coordinates, drawn on a Pillow image of the figure's pixels in `box`."""

    def __init__(self, rgb: np.ndarray, box: Box) -> None:
        from PIL import Image, ImageDraw

        height, width = rgb.shape[:2]
        x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), min(width, box[2]), min(height, box[3])
        self.rgb, self.x0, self.y0, self.x1, self.y1 = rgb, x0, y0, max(x0, x1), max(y0, y1)
        self.image = Image.fromarray(np.ascontiguousarray(rgb[y0 : self.y1, x0 : self.x1]))
        self.draw = ImageDraw.Draw(self.image)

    def _shift(self, xy):
        pts = [(x - self.x0, y - self.y0) for x, y in _pairs(xy)]
        return [v for p in pts for v in p] if len(xy) == 4 and not isinstance(xy[0], tuple | list) else pts

    def rectangle(self, xy, **kw) -> None:
        self.draw.rectangle(self._shift(xy), **kw)

    def polygon(self, xy, **kw) -> None:
        self.draw.polygon(self._shift(xy), **kw)

    def line(self, xy, **kw) -> None:
        self.draw.line(self._shift(xy), **kw)

    def multiline_textbbox(self, xy, text, **kw):
        x0, y0, x1, y1 = self.draw.multiline_textbbox((xy[0] - self.x0, xy[1] - self.y0), text, **kw)
        return x0 + self.x0, y0 + self.y0, x1 + self.x0, y1 + self.y0

    def multiline_text(self, xy, text, **kw) -> None:
        self.draw.multiline_text((xy[0] - self.x0, xy[1] - self.y0), text, **kw)

    def paste(self, image, xy) -> None:
        self.image.paste(image, (xy[0] - self.x0, xy[1] - self.y0))

    def close(self) -> None:
        if self.x1 > self.x0 and self.y1 > self.y0:
            self.rgb[self.y0 : self.y1, self.x0 : self.x1] = np.asarray(self.image)


def _pairs(xy) -> list[tuple[float, float]]:
    """ImageDraw's coordinates ((x, y) pairs, or flat x0, y0, x1, y1 ...) as pairs."""
    if xy and isinstance(xy[0], tuple | list):
        return [(x, y) for x, y in xy]
    return [(xy[i], xy[i + 1]) for i in range(0, len(xy), 2)]


@cache
def _measure():
    """An ImageDraw that only measures text (multiline_textbbox draws nothing)."""
    from PIL import Image, ImageDraw

    return ImageDraw.Draw(Image.new("RGB", (1, 1)))


# ----------------------------------------------------------------------------- PNG


def png_bytes(rgb: np.ndarray, metadata: dict[str, str]) -> bytes:
    """(y, x, 3) uint8 as PNG, `metadata` in text chunks. Each row is 'up'-filtered and deflated by ISA-L (isal):
    5 ms and 0.91 MB for a 1,000 px render, where zlib took 21 ms at its fastest setting and Pillow's encoder
    (which tries five filters on every row) 0.12-0.17 s at any level for 0.87 MB. ISA-L's level 1 (0 saved 5% of
    the time for 10% more bytes; 2 and 3 cost 1.8x and 2.2x for 1% fewer). The rows are filtered and deflated a
    block at a time into one small buffer, and the deflated pieces joined once: the whole filtered image and the
    chunk's copies had cost half as much again as deflating it."""
    from isal import isal_zlib

    h, w, _ = rgb.shape
    rows = np.ascontiguousarray(rgb).reshape(h, w * 3)
    block = max(1, PNG_BLOCK_BYTES // (w * 3 + 1))
    filtered = np.empty((min(block, h), w * 3 + 1), np.uint8)
    filtered[:, 0] = 2  # 'up': each byte minus the one above (the first row: minus zeros)
    deflate = isal_zlib.compressobj(1)
    pieces = []
    for y0 in range(0, h, block):
        n = min(block, h - y0)
        part = filtered[:n]
        if y0 == 0:
            part[0, 1:] = rows[0]
            np.subtract(rows[1:n], rows[: n - 1], out=part[1:, 1:])
        else:
            np.subtract(rows[y0 : y0 + n], rows[y0 - 1 : y0 + n - 1], out=part[:, 1:])
        pieces.append(deflate.compress(part.data))
    pieces.append(deflate.flush())
    size = sum(map(len, pieces))
    crc = zlib.crc32(b"IDAT")
    for piece in pieces:
        crc = isal_zlib.crc32(piece, crc)
    head = [b"\x89PNG\r\n\x1a\n", _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))]
    head += [_text_chunk(key, value) for key, value in metadata.items()]
    idat = [struct.pack(">I", size), b"IDAT", *pieces, struct.pack(">I", crc & 0xFFFFFFFF)]
    return b"".join([*head, *idat, _chunk(b"IEND", b"")])


#: bytes of filtered rows deflated at a time (stays in the CPU cache)
PNG_BLOCK_BYTES = 1 << 18


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def _text_chunk(key: str, value: str) -> bytes:
    """tEXt (Latin-1, as Pillow writes it), or iTXt (UTF-8) for text beyond Latin-1."""
    try:
        return _chunk(b"tEXt", key.encode("latin-1") + b"\0" + value.encode("latin-1"))
    except UnicodeEncodeError:
        return _chunk(b"iTXt", key.encode("latin-1") + b"\0\0\0\0\0" + value.encode("utf-8"))
