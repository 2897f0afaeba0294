"""One stretch per comparison: a value object (per channel low/high in physical units and gamma)
set once and applied identically to every date, saved with items and renders so any render can be redone.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

COMPOSITES_PATH = Path(__file__).with_name("composites.json")


@cache
def composites() -> dict[str, dict[str, Any]]:
    """The composite catalogue (data): RGB band triples and single-index maps with their default ranges."""
    return json.loads(COMPOSITES_PATH.read_text(encoding="utf-8"))


def composite_names() -> list[str]:
    return list(composites())


def is_single(composite: str) -> bool:
    """One channel shown through a colour map with a colour bar: an index (NDVI ...) or one physical band
    (land-surface temperature, ERA5-Land air temperature)."""
    spec = composites()[composite]
    return "index" in spec or ("band" in spec and "bands" not in spec)


def unit_of(composite: str) -> str | None:
    """The unit a single-channel composite's colour bar is labelled with (composites.json 'unit')."""
    return composites()[composite].get("unit")


@dataclass(frozen=True)
class ChannelStretch:
    low: float
    high: float
    gamma: float = 1.0


STRETCH_EXAMPLE = 'e.g. {"composite": "ndvi", "channels": [{"low": 0, "high": 0.8}]}'


@dataclass(frozen=True)
class Stretch:
    """Applied the same to every date compared; `source` says how it was set (fixed default or percentiles)."""

    composite: str
    channels: tuple[ChannelStretch, ...]
    source: str = "fixed default"
    colormap: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def default(cls, composite: str) -> Stretch:
        spec = composites()[composite]
        return cls(
            composite=composite,
            channels=tuple(ChannelStretch(*c) for c in spec["stretch"]),
            source="fixed default",
            colormap=spec.get("colormap"),
        )

    @property
    def is_index(self) -> bool:
        return is_single(self.composite)

    def with_channel(
        self, i: int, *, low: float | None = None, high: float | None = None, gamma: float | None = None
    ) -> Stretch:
        ch = list(self.channels)
        c = ch[i]
        ch[i] = ChannelStretch(
            c.low if low is None else float(low),
            c.high if high is None else float(high),
            c.gamma if gamma is None else float(gamma),
        )
        return replace(self, channels=tuple(ch), source="manual")

    def to_json(self) -> dict[str, Any]:
        return {
            "composite": self.composite,
            "channels": [{"low": c.low, "high": c.high, "gamma": c.gamma} for c in self.channels],
            "source": self.source,
            "colormap": self.colormap,
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    @classmethod
    def from_json(cls, doc: dict[str, Any] | str) -> Stretch:
        from reviewer.errors import SchemaError

        if isinstance(doc, str):
            from reviewer.fileio import json_problem, loads_strict

            try:
                doc = loads_strict(doc)  # no NaN/Infinity, duplicate keys or deep nesting
            except ValueError as exc:
                raise SchemaError(f"not a stretch: {json_problem(exc)}", field="stretch") from exc
        if not isinstance(doc, dict):
            raise SchemaError(f"not a stretch: a JSON object, {STRETCH_EXAMPLE}", field="stretch")
        try:
            composite = doc["composite"]
            if composite not in composites():
                raise SchemaError(f"unknown composite {composite!r}", field="composite")
            chans = tuple(
                ChannelStretch(float(c["low"]), float(c["high"]), float(c.get("gamma", 1.0))) for c in doc["channels"]
            )
        except KeyError as exc:  # (a KeyError's text was the whole message: "not a stretch: 'composite'")
            needs = [k for k in ("composite", "channels") if k not in doc]
            what = " and ".join(repr(k) for k in needs) or repr(exc.args[0])
            raise SchemaError(f"not a stretch: it needs {what}; {STRETCH_EXAMPLE}", field="stretch") from exc
        except (TypeError, ValueError) as exc:  # ("could not convert string to float: 'a'")
            raise SchemaError(
                f"not a stretch: each channel's low, high and gamma are numbers; {STRETCH_EXAMPLE}", field="stretch"
            ) from exc
        expected = 1 if is_single(composite) else 3
        if len(chans) != expected:
            raise SchemaError(f"{composite} needs {expected} channel(s), got {len(chans)}", field="channels")
        for c in chans:
            if not all(math.isfinite(v) for v in (c.low, c.high, c.gamma)):
                raise SchemaError("each channel needs finite low, high and gamma", field="channels")
            if not c.high > c.low or c.gamma <= 0:
                raise SchemaError("each channel needs high > low and gamma > 0", field="channels")
        return cls(
            composite,
            chans,
            doc.get("source", "manual"),
            doc.get("colormap") or composites()[composite].get("colormap"),
        )

    # ------------------------------------------------------------------ applying

    def normalise(self, channels: np.ndarray) -> np.ndarray:
        """(c, y, x) physical values -> (c, y, x) in 0..1 after low/high and gamma (NaN stays NaN)."""
        out = np.empty(channels.shape, np.float32)
        for i, c in enumerate(self.channels):
            v = (channels[i] - np.float32(c.low)) / np.float32(c.high - c.low)
            np.clip(v, 0.0, 1.0, out=v)
            if c.gamma != 1.0:
                np.power(v, np.float32(1.0 / c.gamma), out=v)
            out[i] = v
        return out

    def apply(self, channels: np.ndarray, *, nodata_rgb: tuple[int, int, int] = (0, 0, 0)) -> np.ndarray:
        """(c, y, x) physical values -> (y, x, 3) uint8 RGB; masked (NaN) pixels get `nodata_rgb`.

        Same result as round(255 * normalise(x)), computed through a 4096-level lookup table whose one extra
        entry is the no-data colour (a pixel NaN in any channel takes it): a 1,000 px date in ~10 ms, with no
        masked assignment over the RGB array (the viewer steps through dates with it).
        """
        nan = np.isnan(channels[0])
        for c in channels[1:]:
            nan |= np.isnan(c)
        if self.is_index:
            lut = colormap_lut(self.colormap or "viridis")[_gamma_lut(self.channels[0].gamma, 255)]
            table = np.concatenate([lut, np.asarray([nodata_rgb], np.uint8)])
            return table.take(_levels(channels[0], self.channels[0], nan), axis=0)
        shape = channels.shape[1:]
        rgb = np.empty((*shape, 3), np.uint8)
        # one float, one level and one byte plane for all channels: fresh memory for each had cost as much again
        scratch, levels, plane = np.empty(shape, np.float32), np.empty(shape, np.uint16), np.empty(shape, np.uint8)
        for i, c in enumerate(self.channels):
            table = np.append(_gamma_lut(c.gamma, 255), np.uint8(nodata_rgb[i]))
            rgb[..., i] = table.take(_levels(channels[i], c, nan, scratch=scratch, out=levels), out=plane)
        return rgb


_LEVELS = 4096


def channel_colours(c: ChannelStretch, values: np.ndarray, nodata: int = 0) -> np.ndarray:
    """The uint8 output of an RGB channel stretched by `c` for physical `values`, `nodata` where NaN: what
    Stretch.apply draws for pixels whose other channels are not masked (a render tabulates every raw code of a
    band with it: render_dn.py)."""
    table = np.append(_gamma_lut(c.gamma, 255), np.uint8(nodata))
    return table.take(_levels(values, c, np.isnan(values)))


def _levels(
    values: np.ndarray, c: ChannelStretch, nan: np.ndarray, *, scratch: np.ndarray | None = None, out=None
) -> np.ndarray:
    """Physical values -> integer levels 0..4095 between low and high, and _LEVELS where `nan` (the no-data
    entry of the caller's table); in place on one float temporary (`scratch`), into `out` (uint16) if given."""
    v = np.subtract(values, np.float32(c.low), dtype=np.float32, out=scratch)
    v *= np.float32((_LEVELS - 1) / (c.high - c.low))
    v += np.float32(0.5)
    np.clip(v, 0, _LEVELS - 1, out=v)
    np.copyto(v, _LEVELS, where=nan)
    if out is None:
        return v.astype(np.uint16)
    np.copyto(out, v, casting="unsafe")  # (the same truncating cast as astype)
    return out


@cache
def _gamma_lut(gamma: float, top: int) -> np.ndarray:
    """Level -> output value 0..top after gamma (Earth Engine convention: out = v ** (1 / gamma))."""
    v = np.linspace(0.0, 1.0, _LEVELS)
    if gamma != 1.0:
        v = v ** (1.0 / gamma)
    return (v * top + 0.5).astype(np.uint8)


@cache
def colormap_lut(name: str) -> np.ndarray:
    import matplotlib

    cmap = matplotlib.colormaps[name]
    return (cmap(np.linspace(0, 1, 256))[:, :3] * 255 + 0.5).astype(np.uint8)


def percentile_stretch(
    samples: np.ndarray,
    composite: str,
    *,
    low_pct: float = 2.0,
    high_pct: float = 98.0,
    n_scenes: int = 0,
    gamma: float = 1.0,
) -> Stretch:
    """A stretch from percentiles of pooled clear pixels (c, n) of the whole stack, never of one image."""
    base = Stretch.default(composite)
    chans = []
    for i in range(samples.shape[0]):
        v = samples[i][np.isfinite(samples[i])]
        if v.size < 10:
            chans.append(base.channels[i])
            continue
        lo, hi = np.percentile(v, [low_pct, high_pct])
        if hi <= lo:
            hi = lo + 1e-3
        chans.append(ChannelStretch(float(lo), float(hi), gamma))
    return Stretch(
        composite,
        tuple(chans),
        source=f"percentiles {low_pct:g}-{high_pct:g} of pooled clear pixels of {n_scenes} scenes",
        colormap=base.colormap,
    )
