"""A render's colours straight from the raw DN of a scene's bands: decode and stretch folded into one colour table
per band (every raw code decoded and stretched once, by decode() and Stretch itself, so each pixel gets the very
colour the float path gives it), the masks put on in the same pass, a block of rows at a time.

Why: on a 1,000 px box at full resolution the float path (decode to float32 with NaN, then the stretch's levels and
lookup) cost half as much as reading the files (issue 31), most of it in passes over 4 MB arrays freshly taken
from the system. Here every pass works on a block of ~64 K pixels that stays in the CPU cache, and the only
full-size array written is the panel's RGB.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from reviewer.record.catalog import BandSpec
from reviewer.record.decode import SceneDN, _decode, band_scaling, mask_from_flags
from reviewer.record.stretch import ChannelStretch, Stretch, channel_colours

#: pixels per block: a block's index, mask and colour planes (~0.7 MB) stay in the CPU's L2 cache
BLOCK_PIXELS = 1 << 16
#: a set of codes tested by comparisons up to this many runs of consecutive codes; more: by a table lookup
MAX_RUNS = 3

Runs = tuple[tuple[int, int], ...]  # (first, last) code of each run of consecutive codes, unsigned order


@dataclass(frozen=True)
class BandColours:
    """Per raw code of a band (its unsigned view): the channel's colour, whether decode masks the code (fill,
    saturated, outside the valid range), and whether it is at or above the stretch's high end (or masked)."""

    colours: np.ndarray  # uint8, one per code
    masked: Runs | np.ndarray  # runs, or a bool table when the codes are scattered
    hot: Runs | np.ndarray


@dataclass
class PanelColours:
    """A panel's RGB and its pixel counts: not masked in any channel, and of those at or above a high end."""

    rgb: np.ndarray  # (y, x, 3) uint8
    clear: int
    hot: int


def renderable(dn: SceneDN, stretch: Stretch) -> bool:
    """Whether the scene's bands can be coloured from their DN: an RGB stretch of three integer bands of at most
    16 bits, each a band of its own (not the quality layer), all of the quality layer's shape."""
    if stretch.is_index or len(dn.specs) != 3 or len(stretch.channels) != 3:
        return False
    raws = [dn.raws[name] for name, _ in dn.specs]
    shape = raws[0].shape
    return all(
        r.dtype.kind in "ui" and r.dtype.itemsize <= 2 and r.shape == shape and r is not dn.qa for r in raws
    ) and (dn.qa is None or dn.qa.shape == shape)


def panel_colours(
    dn: SceneDN, stretch: Stretch, nodata_rgb: tuple[int, int, int], *, out: np.ndarray | None = None
) -> PanelColours:
    """Stretch.apply(read_scene(...).stacked) of a renderable scene (the same pixels), written into `out` when
    given ((y, x, 3) uint8, e.g. the panel's place in the figure), with its clear and hot pixel counts."""
    raws = [dn.raws[name] for name, _ in dn.specs]
    tables = [
        band_colours(spec, *band_scaling(spec, dn.scene.extra), raw.dtype.str, stretch.channels[i], nodata_rgb[i])
        for i, ((_, spec), raw) in enumerate(zip(dn.specs, raws, strict=True))
    ]
    codes = [r.view(f"u{r.dtype.itemsize}") for r in raws]
    height, width = raws[0].shape
    rgb = np.empty((height, width, 3), np.uint8) if out is None else out
    rows = max(1, BLOCK_PIXELS // max(1, width))
    index = np.empty((rows, width), np.intp)
    plane = np.empty((rows, width), np.uint8)
    masked, hot, scratch = (np.empty((rows, width), bool) for _ in range(3))
    quality = dn.product.quality
    n_clear = n_hot = 0
    for y0 in range(0, height, rows):
        part = slice(y0, min(height, y0 + rows))
        n = part.stop - y0
        m, h, tmp = masked[:n], hot[:n], scratch[:n]
        if dn.qa is not None:
            np.copyto(m, mask_from_flags(dn.qa[part], quality, dn.mask_flags))
        else:
            m.fill(False)
        h.fill(False)
        for (_, spec), code, table in zip(dn.specs, codes, tables, strict=True):
            block = code[part]
            _or_codes(block, table.masked, m, tmp, index[:n])
            _or_codes(block, table.hot, h, tmp, index[:n])
            saturated = dn.saturated(spec, part)
            if saturated is not None:
                m |= saturated
        np.logical_not(m, out=tmp)
        n_clear += int(np.count_nonzero(tmp))
        h &= tmp
        n_hot += int(np.count_nonzero(h))
        for i, (code, table) in enumerate(zip(codes, tables, strict=True)):
            np.copyto(index[:n], code[part], casting="unsafe")
            table.colours.take(index[:n], out=plane[:n], mode="clip")
            np.copyto(plane[:n], np.uint8(nodata_rgb[i]), where=m)
            rgb[part, :, i] = plane[:n]
    return PanelColours(rgb, n_clear, n_hot)


@lru_cache(maxsize=64)
def band_colours(
    spec: BandSpec, scale: float, offset: float, dtype: str, channel: ChannelStretch, nodata: int
) -> BandColours:
    """Every raw code of a band decoded (decode(): the same float32 arithmetic and masks as a read) and
    stretched (Stretch.channel_colours: the same levels and gamma table as Stretch.apply)."""
    raw_dtype = np.dtype(dtype)
    codes = np.arange(1 << (8 * raw_dtype.itemsize), dtype=f"u{raw_dtype.itemsize}").view(raw_dtype)
    values, _ = _decode(codes, spec, scale, offset)  # (what decode() does with the scene's scaling)
    colours = channel_colours(channel, values, nodata)
    nan = np.isnan(values)
    with np.errstate(invalid="ignore"):
        hot = (values >= np.float32(channel.high)) | nan  # (masked pixels are not counted: either will do)
    return BandColours(colours, _as_runs(nan), _as_runs(hot))


def _as_runs(table: np.ndarray) -> Runs | np.ndarray:
    """The codes set in a bool table as runs of consecutive codes, or the table itself when there are many."""
    edges = np.flatnonzero(np.diff(np.r_[False, table, False].view(np.int8)))
    if len(edges) // 2 > MAX_RUNS:
        return table
    return tuple((int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2], strict=True))


def _or_codes(block: np.ndarray, codes: Runs | np.ndarray, out: np.ndarray, tmp: np.ndarray, index: np.ndarray) -> None:
    """out |= the pixels of `block` (unsigned codes) whose code is in `codes`."""
    if isinstance(codes, np.ndarray):
        np.copyto(index, block, casting="unsafe")
        out |= codes.take(index, mode="clip")
        return
    top = np.iinfo(block.dtype).max
    for first, last in codes:
        if first == 0 and last == top:
            out.fill(True)
        elif first == 0:
            out |= np.less_equal(block, last, out=tmp)
        elif last == top:
            out |= np.greater_equal(block, first, out=tmp)
        elif first == last:
            out |= np.equal(block, first, out=tmp)
        else:
            np.greater_equal(block, first, out=tmp)
            tmp &= block <= last
            out |= tmp
