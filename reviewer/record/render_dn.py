"""A render's colours straight from the raw DN of a scene's bands: decode and stretch folded into one colour table
per band (every raw code decoded and stretched once, by decode() and Stretch itself, so each pixel gets the very
colour the float path gives it), the masks put on in the same pass, a block of rows at a time.

Why: on a 1,000 px box at full resolution the float path (decode to float32 with NaN, then the stretch's levels and
lookup) cost half as much as reading the files (issue 31), most of it in passes over 4 MB arrays freshly taken
from the system. Here every pass works on a block of ~64 K pixels that stays in the CPU cache, and the only
full-size array written is the panel's RGB.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from reviewer.record.catalog import BandSpec
from reviewer.record.decode import SceneDN, _decode, band_scaling, flag_bits, mask_from_flags
from reviewer.record.decode import logger as decode_logger
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
    out_of_range: Runs | np.ndarray  # outside the valid range (neither fill nor saturated): logged as a read logs it


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
    tables = [  # (bands that decode alike under one channel stretch share a table: Landsat's red, green and blue)
        band_colours(
            replace(spec, token="", name="", unit=""),
            *band_scaling(spec, dn.scene.extra),
            raw.dtype.str,
            stretch.channels[i],
            nodata_rgb[i],
        )  # fmt: skip
        for i, ((_, spec), raw) in enumerate(zip(dn.specs, raws, strict=True))
    ]
    codes = [r.view(f"u{r.dtype.itemsize}") for r in raws]
    height, width = raws[0].shape
    rgb = np.empty((height, width, 3), np.uint8) if out is None else out
    rows = max(1, BLOCK_PIXELS // max(1, width))
    block = _Block((rows, width), dn)
    n_clear = n_hot = 0
    for y0 in range(0, height, rows):
        part = slice(y0, min(height, y0 + rows))
        n = part.stop - y0
        masked, hot, tmp = block.masked[:n], block.hot[:n], block.tmp[:n]
        block.quality_mask(part, masked)
        hot.fill(False)
        for code, table in zip(codes, tables, strict=True):
            _or_codes(code[part], table.masked, masked, tmp, block.index[:n])
            _or_codes(code[part], table.hot, hot, tmp, block.index[:n])
        np.logical_not(masked, out=tmp)
        n_clear += int(np.count_nonzero(tmp))
        hot &= tmp
        n_hot += int(np.count_nonzero(hot))
        # the no-data colour without a masked assignment (whose cost follows how scattered the mask is): each
        # plane ANDed with 0x00 where masked (0xFF elsewhere), then ORed with the no-data value there
        fill, keep, plane, index = block.fill[:n], block.keep[:n], block.plane[:n], block.index[:n]
        np.subtract(0, masked.view(np.uint8), out=fill)  # 0xFF where masked
        np.invert(fill, out=keep)
        for i, (code, table) in enumerate(zip(codes, tables, strict=True)):
            np.copyto(index, code[part], casting="unsafe")
            table.colours.take(index, out=plane, mode="clip")
            plane &= keep
            if nodata_rgb[i]:
                plane |= fill & np.uint8(nodata_rgb[i])
            rgb[part, :, i] = plane
    if decode_logger.isEnabledFor(logging.INFO):  # (`reviewer -v`: what read_scene's decode logs)
        for (name, _), code, table in zip(dn.specs, codes, tables, strict=True):
            hit = np.zeros(code.shape, bool)
            _or_codes(code, table.out_of_range, hit, np.empty(code.shape, bool), np.empty(code.shape, np.intp))
            if hit.any():
                decode_logger.info(
                    "%s: %d values of %s outside the valid range were masked",
                    dn.scene.scene_id,
                    int(np.count_nonzero(hit)),
                    name,
                )
    return PanelColours(rgb, n_clear, n_hot)


class _Block:
    """The scratch arrays of one block of rows (allocated once: fresh memory costs more than the passes), and the
    scene's quality and saturation masks of a block."""

    def __init__(self, shape: tuple[int, int], dn: SceneDN) -> None:
        self.index = np.empty(shape, np.intp)
        self.masked, self.hot, self.tmp = (np.empty(shape, bool) for _ in range(3))
        self.plane, self.fill, self.keep = (np.empty(shape, np.uint8) for _ in range(3))
        self.dn = dn
        quality = dn.product.quality
        qa = dn.qa
        # unsigned bit flags (Landsat QA_PIXEL): one AND of all flags' bits (mask_from_flags' own test)
        self.qa_bits = (
            flag_bits(quality, dn.mask_flags)
            if qa is not None and quality is not None and quality.kind == "bits" and qa.dtype.kind == "u"
            else None
        )
        # a pixel saturated in any band shown is masked in every channel: one AND of the bands' bits
        bits = [
            dn.saturation_bits[s.token] for _, s in dn.specs if dn.radsat is not None and s.token in dn.saturation_bits
        ]
        self.radsat_bits = sum({1 << b for b in bits}) if bits else 0
        self.words = np.empty(shape, qa.dtype if qa is not None else np.uint16)
        self.radsat = dn.radsat if self.radsat_bits else None
        self.radsat_words = np.empty(shape, self.radsat.dtype) if self.radsat is not None else None

    def quality_mask(self, part: slice, out: np.ndarray) -> None:
        """out = the pixels of rows `part` hidden by the quality layer's mask flags or saturated in a band shown."""
        dn, n, qa, quality = self.dn, part.stop - part.start, self.dn.qa, self.dn.product.quality
        if qa is None or quality is None:
            out.fill(False)
        elif self.qa_bits is not None:
            np.bitwise_and(qa[part], qa.dtype.type(self.qa_bits), out=self.words[:n])
            np.not_equal(self.words[:n], 0, out=out)
        else:
            np.copyto(out, mask_from_flags(qa[part], quality, dn.mask_flags))
        if self.radsat is not None and self.radsat_words is not None:
            words = self.radsat_words[:n]
            np.bitwise_and(self.radsat[part], self.radsat.dtype.type(self.radsat_bits), out=words)
            out |= words != 0


@lru_cache(maxsize=64)
def band_colours(
    spec: BandSpec, scale: float, offset: float, dtype: str, channel: ChannelStretch, nodata: int
) -> BandColours:
    """Every raw code of a band decoded (decode(): the same float32 arithmetic and masks as a read) and
    stretched (Stretch.channel_colours: the same levels and gamma table as Stretch.apply)."""
    raw_dtype = np.dtype(dtype)
    codes = np.arange(1 << (8 * raw_dtype.itemsize), dtype=f"u{raw_dtype.itemsize}").view(raw_dtype)
    values, out_of_range = _decode(codes, spec, scale, offset)  # (what decode() does with the scene's scaling)
    colours = channel_colours(channel, values, nodata)
    nan = np.isnan(values)
    with np.errstate(invalid="ignore"):
        hot = values >= np.float32(channel.high)
    # a masked code is never counted, so it may take either value: that of the nearest code below it that is not
    # masked (the first one's, below that), which leaves the hot codes in as few runs as they are among the valid
    if (~nan).any():
        seen = np.where(~nan, np.arange(nan.size), 0)
        np.maximum.accumulate(seen, out=seen)
        seen[: int(np.argmax(~nan))] = int(np.argmax(~nan))
        hot = hot[seen]
    return BandColours(colours, _as_runs(nan), _as_runs(hot), _as_runs(out_of_range))


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
