"""An item's evidence view rendered as the images a drafting request carries, within the API's image limits.

Pair and single views are one render (reviewer.record.render.build_figure, as render_panels: the item's stored
stretch on every panel, each labelled with its date and sensor, a km scale bar, and here the question's region
outlined in dashed yellow on every panel: the site's boundary, its quadrant or the polygon); a strip is the clearest scene of every year of its
period, split into renders of at most `strip_panels_per_image` panels. A view with an index gets its trajectory
(the yearly median over the question's region, the period shaded) as a plot. Every image is PNG, scaled down when
it exceeds the long-edge, pixel-count or byte limits of the settings.
"""

from __future__ import annotations

import hashlib
import io
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from reviewer.bank.evidence import EvidenceView, Region
from reviewer.errors import DraftingError, NoSceneError, ReviewerError

#: matplotlib's font cache and text layout are not safe to drive from several threads at once
_RENDER_LOCK = threading.Lock()


@dataclass(frozen=True)
class Image:
    name: str  # "image 1", "image 2", ... as the prompt names it
    label: str  # what it shows (panels, or the trajectory)
    data: bytes
    width: int
    height: int
    media_type: str = "image/png"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def record(self) -> dict[str, Any]:
        """The image as provenance keeps it (no pixels)."""
        return {
            "name": self.name,
            "sha256": self.sha256,
            "media_type": self.media_type,
            "width": self.width,
            "height": self.height,
            "bytes": len(self.data),
            "label": self.label,
        }


def fit(data: bytes, limits: dict[str, Any]) -> tuple[bytes, int, int]:
    """PNG bytes scaled down (never up) to the long-edge, pixel-count and byte limits; (bytes, width, height)."""
    from PIL import Image as PILImage

    img = PILImage.open(io.BytesIO(data))
    img.load()
    w, h = img.size
    scale = min(1.0, limits["max_long_edge_px"] / max(w, h), (limits["max_pixels"] / (w * h)) ** 0.5)
    while True:
        if scale < 1.0:
            size = (max(1, int(w * scale)), max(1, int(h * scale)))
            out = img.convert("RGB").resize(size, PILImage.LANCZOS)
            buf = io.BytesIO()
            out.save(buf, format="PNG", optimize=True)
            data, (nw, nh) = buf.getvalue(), size
        else:
            nw, nh = w, h
        if len(data) <= limits["max_bytes"]:
            return data, nw, nh
        scale *= 0.8


def region_mask(view: EvidenceView, site: Any, shape: tuple[int, int]) -> np.ndarray:
    """The pixels of the view's region on the site grid (quadrants split at half height and width)."""
    h, w = shape
    rr, cc = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    reg: Region = view.region
    if reg.kind == "quadrant":
        north, west = rr < h / 2, cc < w / 2
        return {"NW": north & west, "NE": north & ~west, "SW": ~north & west, "SE": ~north & ~west}[reg.quadrant]
    if reg.kind == "polygon":
        from matplotlib.path import Path as MplPath

        inv = ~site.transform
        ring = [inv * (x, y) for x, y in reg.coordinates]  # (col, row) in pixel units
        centres = np.column_stack([cc.ravel() + 0.5, rr.ravel() + 0.5])
        return MplPath(ring).contains_points(centres).reshape(shape)
    return np.ones(shape, bool)


def _panels(index: Any, view: EvidenceView, composite: str) -> list[Any]:
    """The panels of the view: its dates and periods as given (pair, single) or one per year (strip)."""
    from reviewer.record.render import resolve_panel
    from reviewer.record.stack import open_stack

    stack = open_stack(index, composite=composite)
    if not len(stack):
        raise NoSceneError(f"the record of {index.site.id} has no scene with {composite} bands")
    if view.view != "strip":
        return [resolve_panel(stack, spec, composite) for spec in view.panels]
    specs = list(view.dates) + [str(y) for a, b in view.periods for y in range(a, b + 1)]
    out = []
    for spec in specs:
        try:
            out.append(resolve_panel(stack, spec, composite))
        except NoSceneError:
            continue  # a year without a scene is a gap in the strip
    if not out:
        raise NoSceneError(f"no scene with {composite} bands in {', '.join(view.panels)}")
    return out


def region_outline(view: EvidenceView, site: Any, shape: tuple[int, int]) -> list[tuple[float, float]]:
    """The region's outline in panel pixel coordinates (x = column, y = row; pixel edges at whole numbers): the
    site's boundary, its quadrant (split at half height and width, as region_mask) or the polygon's ring."""
    h, w = shape
    reg: Region = view.region
    if reg.kind == "polygon":
        inv = ~site.transform
        ring = [tuple(inv * (x, y)) for x, y in reg.coordinates]
        return [(c - 0.5, r - 0.5) for c, r in ring]  # the figure puts pixel (0, 0)'s centre at 0
    x0, x1, y0, y1 = 0.0, float(w), 0.0, float(h)
    if reg.kind == "quadrant":
        x0, x1 = (0.0, w / 2) if reg.quadrant in ("NW", "SW") else (w / 2, float(w))
        y0, y1 = (0.0, h / 2) if reg.quadrant in ("NW", "NE") else (h / 2, float(h))
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
    return [(x - 0.5, y - 0.5) for x, y in corners]


def _render(panels: list[Any], view: EvidenceView, site: Any, title: str) -> bytes:
    """render_panels' figure (reviewer.record.render.build_figure) with the region outlined on every panel."""
    import json

    from reviewer.record.render import build_figure, png_bytes

    cols = len(panels) if len(panels) <= 6 else -(-len(panels) // 2)  # a strip render: two even rows
    ring = region_outline(view, site, panels[0].channels.shape[1:])
    fig = build_figure(panels, view.stretch, pixel_size_m=site.cell_m[0], title=title, columns=cols, outline=ring)
    meta = {"Stretch": view.stretch.dumps(), "Panels": json.dumps([p.to_json() for p in panels])}
    return png_bytes(fig.rgb, {**meta, "Region": json.dumps(view.region.to_json()), "Software": "EarthRecord Reviewer"})


def _trajectory(index: Any, view: EvidenceView, period: tuple[int, int], title: str) -> tuple[bytes, str] | None:
    """The index's yearly median over the region (clearest scene of each year) as a line plot, period shaded."""
    from matplotlib.figure import Figure

    first = min([period[0], *(a for a, _ in view.periods)])
    last = max([period[1], *(b for _, b in view.periods)])
    years = range(first, last + 1)
    stretch = view.stretch if view.composite == view.index else _default(view.index)
    strip = EvidenceView(view.index, stretch, "strip", periods=((first, last),), region=view.region)
    try:
        panels = _panels(index, strip, view.index)
    except NoSceneError:
        return None
    mask = region_mask(view, index.site, panels[0].channels.shape[1:])
    xs, ys = [], []
    for p in panels:
        vals = p.channels[0][mask]
        vals = vals[np.isfinite(vals)]
        if vals.size:
            xs.append(p.scenes[0].date.year + (p.scenes[0].date.timetuple().tm_yday - 1) / 365.25)
            ys.append(float(np.median(vals)))
    if not xs:
        return None
    fig = Figure(figsize=(7.0, 3.0), dpi=110)
    ax = fig.add_subplot(1, 1, 1)
    ax.axvspan(period[0], period[1] + 1, color="#ffe08a", alpha=0.5, lw=0, label=f"period {period[0]}-{period[1]}")
    ax.plot(xs, ys, "o-", color="#1f5fa8", ms=3, lw=1)
    ax.set_xlabel("year (clearest scene of each year)")
    ax.set_ylabel(f"{view.index.upper()} median over region")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="best", fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue(), f"{view.index.upper()} trajectory {years.start}-{years.stop - 1}, {_region_text(view)}"


def _default(composite: str) -> Any:
    from reviewer.record.stretch import Stretch

    return Stretch.default(composite)


def _region_text(view: EvidenceView) -> str:
    r = view.region
    return {"site": "whole site", "quadrant": f"{r.quadrant} quadrant", "polygon": "polygon region (see the text)"}[
        r.kind
    ]


def render_evidence(index: Any, view: EvidenceView, period: tuple[int, int], limits: dict[str, Any]) -> list[Image]:
    """The images of one item's evidence view (see the module docstring), named image 1, image 2, ..."""
    site = index.site
    raw: list[tuple[bytes, str]] = []
    with _RENDER_LOCK:
        try:
            panels = _panels(index, view, view.composite)
            parts = -(-len(panels) // limits["strip_panels_per_image"]) if view.view == "strip" else 1
            per = -(-len(panels) // parts)  # a strip is split into renders of equal size
            for k in range(0, len(panels), per):
                chunk = panels[k : k + per]
                label = f"{view.composite} panels: " + "; ".join(p.label for p in chunk)
                title = f"{site.name} ({site.id}), {_region_text(view)} outlined"
                raw.append((_render(chunk, view, site, title), label))
            if view.index:
                plot = _trajectory(index, view, period, f"{site.name} ({site.id}), {_region_text(view)}")
                if plot is not None:
                    raw.append(plot)
        except ReviewerError as exc:
            raise DraftingError(f"cannot render the evidence of this item: {exc}") from exc
    if len(raw) > limits["max_images"]:
        raise DraftingError(f"the evidence needs {len(raw)} images; the limit is {limits['max_images']}")
    out = []
    for n, (data, label) in enumerate(raw, 1):
        data, w, h = fit(data, limits)
        out.append(Image(f"image {n}", label, data, w, h))
    return out
