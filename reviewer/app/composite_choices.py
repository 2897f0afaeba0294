"""What the Stack dock offers for a site, as plain data (no Qt): its sensors, its years and every composite of the
catalogue in its order, the ones no record scene of the site has the bands for disabled with the reason naming the
band missing (a Sentinel-2 tile delivered without B8A and B12 cannot show SWIR2 / NIR / red: picked, it gave a blank
canvas).
The decision is `reviewer.record.render.showable_composites`'s, the one a render makes.

Deciding the composites asks every scene of the site for every composite's bands (~15 ms on the demo site; the
sensors and years another pass over its ~1,000 scenes): the worker that opens a site's index (`SiteOpener`, the review
dock's evidence worker) makes the choices there (`site_choices`), and the Stack dock only sets them on its widgets
when the site is shown. They are kept per index, as the boundary's raster is."""

from __future__ import annotations

from dataclasses import dataclass

from reviewer.app.kept import Kept
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
    (a band its product does not have, or a file not delivered or not readable), "" if one of them can make it.
    A composite of one band no scene's product has at all (air temperature, precipitation, land surface temperature)
    is said in the catalogue's words, its label: the band's name in the data ("temperature_2m") tells a user nothing
    more."""
    if any(composite_bands(composite, s) is not None for s in scenes):
        return ""
    if not scenes:
        return "no scene of this site to make it from"
    need = needed_bands(composite)
    spec = composites()[composite]
    if "band" in spec and not (spec.get("bands") or spec.get("index")):
        if all(s.product_spec.band_by_name(spec["band"]) is None for s in scenes):
            return "no scene of this site has it"

    def missing(scene) -> list[str]:
        product = scene.product_spec
        return [n for n in need if (b := product.band_by_name(n)) is None or b.token not in scene.files]

    fewest = min((missing(s) for s in scenes), key=len) or need
    texts = [_band_text(scenes, n) for n in fewest]
    names = texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} and {texts[-1]}"
    return f"needs {names}, which no scene of this site has"


@dataclass(frozen=True)
class SiteChoices:
    """What the Stack dock offers for a site, as plain data: its composites (`composite_choices`), its sensors in the
    catalogue's order (a box each), the first and last year of its scenes (the year filter's range, None without a
    scene) and how many record scenes it has."""

    composites: tuple[CompositeChoice, ...]
    sensors: tuple[str, ...]
    years: tuple[int, int] | None
    scenes: int


INDEXES_KEPT = 4  # sites' choices kept (made by the worker that opened the site, shown by the UI thread)
_kept: Kept[tuple[SceneIndex, SiteChoices]] = Kept(INDEXES_KEPT)  # id(index) -> (the index, its choices)


def site_choices(index: SceneIndex) -> SiteChoices:
    """The site's choices, made once per index (any thread: the worker that opens a site makes them, so showing the
    site only reads them; a site indexed anew is another index, decided anew)."""
    from reviewer.record.series import coverage

    kept = _kept.get(id(index))
    if kept is not None and kept[0] is index:  # (the index is kept with them: its id cannot name another meanwhile)
        return kept[1]
    record = [s for s in index.scenes if s.record]
    inside = [s for s in record if not s.extra.get("outside_site")]  # (scenes outside it do not count, as in a render)
    years = [s.year for s in record]
    made = SiteChoices(
        tuple(CompositeChoice(k, spec["label"], why_not(k, inside)) for k, spec in composites().items()),
        tuple(coverage(record).sensors),
        (min(years), max(years)) if years else None,
        len(record),
    )
    return _kept.put(id(index), (index, made))[1]


def composite_choices(index: SceneIndex | None) -> tuple[CompositeChoice, ...]:
    """Every composite of the catalogue, each disabled with its reason when no record scene of the site (scenes
    outside it do not count, as in a render) has the bands for it; with no site open, all offered."""
    if index is None:
        return tuple(CompositeChoice(k, spec["label"]) for k, spec in composites().items())
    return site_choices(index).composites
