"""Which composites the Stack dock offers for a site, as plain data (no Qt): every composite of the catalogue in its
order, the ones no record scene of the site has the bands for disabled with the reason naming the band missing
(a Sentinel-2 tile delivered without B8A and B12 cannot show SWIR2 / NIR / red: picked, it gave a blank canvas).
The decision is `reviewer.record.render.showable_composites`'s, the one a render makes.

Deciding it asks every scene of the site for every composite's bands (~15 ms on the demo site): the worker that opens
a site's index (`SiteOpener`, the review dock's evidence worker) makes the choices there, and the Stack dock only
sets them on its list when the site is shown. They are kept per index, as the boundary's raster is."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from reviewer.record.scan import SceneIndex
from reviewer.record.stack import composite_bands
from reviewer.record.stretch import composites


@dataclass(frozen=True)
class CompositeChoice:
    """One entry of the composite list: its key, its label, and why it cannot be shown ("": it can)."""

    key: str
    label: str
    missing: str = ""

    @property
    def enabled(self) -> bool:
        return not self.missing


def needed_bands(composite: str) -> list[str]:
    """The band common names a composite is made of (an index from its two bands; one physical band as it is)."""
    spec = composites()[composite]
    return list(spec.get("bands") or spec.get("index") or [spec["band"]])


def _band_text(scenes, name: str) -> str:
    """A band as the user knows it: its common name and the file token of the products that have one ("swir2 (B12)")."""
    tokens = sorted(
        {b.token for s in scenes if (b := s.product_spec.band_by_name(name)) is not None and b.token != name}
    )
    return f"{name} ({', '.join(tokens)})" if tokens else name


def why_not(composite: str, scenes) -> str:
    """Why no scene among `scenes` can make the composite: the bands missing from the scene that lacks the fewest
    (a band its product does not have, or a file not delivered or not readable), "" if one of them can make it."""
    if any(composite_bands(composite, s) is not None for s in scenes):
        return ""
    if not scenes:
        return "no scene of this site to make it from"
    need = needed_bands(composite)

    def missing(scene) -> list[str]:
        product = scene.product_spec
        return [n for n in need if (b := product.band_by_name(n)) is None or b.token not in scene.files]

    fewest = min((missing(s) for s in scenes), key=len) or need
    texts = [_band_text(scenes, n) for n in fewest]
    names = texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} and {texts[-1]}"
    return f"needs {names}, which no scene of this site has"


INDEXES_KEPT = 4  # sites' choices kept (made by the worker that opened the site, shown by the UI thread)
_kept: OrderedDict[int, tuple[SceneIndex, tuple[CompositeChoice, ...]]] = OrderedDict()  # id(index) -> (it, choices)
_kept_lock = threading.Lock()


def composite_choices(index: SceneIndex | None) -> tuple[CompositeChoice, ...]:
    """Every composite of the catalogue, each disabled with its reason when no record scene of the site (scenes
    outside it do not count, as in a render) has the bands for it; with no site open, all offered. Made once per
    index (any thread: the worker that opens a site makes them, so showing the site only reads them)."""
    if index is None:
        return tuple(CompositeChoice(k, spec["label"]) for k, spec in composites().items())
    with _kept_lock:
        kept = _kept.get(id(index))
    if kept is not None and kept[0] is index:  # (the index is kept with them: its id cannot name another meanwhile)
        return kept[1]
    scenes = [s for s in index.scenes if s.record and not s.extra.get("outside_site")]
    made = tuple(CompositeChoice(k, spec["label"], why_not(k, scenes)) for k, spec in composites().items())
    with _kept_lock:
        _kept[id(index)] = (index, made)
        while len(_kept) > INDEXES_KEPT:
            _kept.popitem(last=False)
    return made
