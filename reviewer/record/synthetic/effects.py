"""Scene effects shared by the optical products of the synthetic demo site: clouds, shadows, geometry."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from reviewer.record.synthetic.common import _smooth


# --------------------------------------------------------------------------------------------------------------
# Shared scene effects: clouds, shadows, geometry
# --------------------------------------------------------------------------------------------------------------
def _cloud_month_p(month: int) -> float:
    """Probability of a fairly cloudy scene by month (central European climate)."""
    return [0.5, 0.45, 0.38, 0.28, 0.22, 0.17, 0.14, 0.14, 0.19, 0.3, 0.45, 0.52][month - 1]


def _draw_cloud(rng: np.random.Generator, month: int) -> float:
    u = rng.random()
    p = _cloud_month_p(month)
    if u < p:
        return float(round(rng.uniform(0.35, 0.95), 3))
    if u < p + 0.35:
        return 0.0
    return float(round(rng.uniform(0.01, 0.3), 3))


@dataclass
class Clouds:
    cloud: np.ndarray
    alpha: np.ndarray
    dilated: np.ndarray
    shadow: np.ndarray
    cirrus: np.ndarray
    core: np.ndarray  # thick cloud cores (excess over threshold, in std units)


def _clouds(
    rng: np.random.Generator, shape: tuple[int, int], frac: float, cirrus: bool, px_scale: float
) -> Clouds | None:
    if frac <= 0:
        return None
    h, w = shape
    f = 0.75 * _smooth(rng, shape, max(h, w) / 4) + 0.35 * _smooth(rng, shape, max(h, w) / 14)
    thr = float(np.quantile(f, 1.0 - frac))
    cloud = f > thr
    excess = np.where(cloud, f - thr, 0.0).astype(np.float32)
    alpha = np.clip(0.45 + excess / 0.6, 0.45, 1.0).astype(np.float32)
    it = max(1, int(round(3 * px_scale)))
    dil = ndimage.binary_dilation(cloud, iterations=it) & ~cloud
    sr = int(rng.integers(5, 14) * px_scale) + 1
    sc = int(rng.integers(4, 12) * px_scale) + 1
    shadow = np.zeros(shape, bool)
    if sr < h and sc < w:
        shadow[: h - sr, : w - sc] = cloud[sr:, sc:]  # shadows fall north-west of their clouds (sun from SE)
    shadow &= ~cloud
    cir = np.zeros(shape, bool)
    if cirrus:
        cir = cloud & (_smooth(rng, shape, max(h, w) / 6) > 0.2)
    return Clouds(cloud, alpha, dil, shadow, cir, excess)


def _apply_clouds(rho: np.ndarray, cl: Clouds, cloud_spec: np.ndarray) -> None:
    for i in range(rho.shape[0]):
        rb = rho[i]
        rb[cl.shadow] *= 0.35
        rb[cl.dilated] = 0.88 * rb[cl.dilated] + 0.12 * cloud_spec[i]
        a = cl.alpha[cl.cloud]
        bright = cloud_spec[i] * (0.85 + 0.5 * np.tanh(cl.core[cl.cloud]))
        rb[cl.cloud] = (1.0 - a) * rb[cl.cloud] + a * bright


def _shift(a: np.ndarray, dr: int, dc: int) -> np.ndarray:
    """Content moved by (dr, dc) pixels (south/east positive); edges replicated."""
    if dr == 0 and dc == 0:
        return a
    p = max(abs(dr), abs(dc))
    padded = np.pad(a, [(0, 0)] * (a.ndim - 2) + [(p, p), (p, p)], mode="edge")
    h, w = a.shape[-2:]
    return padded[..., p - dr : p - dr + h, p - dc : p - dc + w]


def _pad(a: np.ndarray, pad: tuple[int, int, int, int]) -> np.ndarray:
    pt, pl, pb, pr = pad
    return np.pad(a, [(0, 0)] * (a.ndim - 2) + [(pt, pb), (pl, pr)], mode="reflect")


def _slc_gaps(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, float]:
    """Wedge-like SLC-off scan gaps: near-horizontal stripes whose width grows across the scene."""
    h, w = shape
    theta = math.radians(float(rng.uniform(-10, -6)))
    period = float(rng.uniform(15.0, 17.0))
    target = float(rng.uniform(0.17, 0.27))
    phase = float(rng.uniform(0, period))
    r, c = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32), indexing="ij")
    u = r * math.cos(theta) + c * math.sin(theta) + phase
    x = c / max(1, w - 1)
    if rng.random() < 0.5:
        x = 1.0 - x
    width = period * target * (0.55 + 0.9 * x)
    gaps = np.mod(u, period) < width
    return gaps, target
