"""What the viewer shows, as one small evented model: the docks subscribe to it and change it.

No Qt here. Fields hold plain values (the stretch as a `Stretch` value object), so a test can set a
field and check what every dock does in response.
"""

from __future__ import annotations

from napari.utils.events import EventedModel

from reviewer.record.stretch import Stretch


class ViewState(EventedModel):
    """The viewer's state.

    Attributes
    ----------
    site_dir : folder of the open site, or None for an empty start.
    sensors : sensor labels shown (empty: all).
    years : (first, last) year shown, or None for all.
    months : months shown (empty: all), the season filter.
    max_cloud : scenes with a larger cloud fraction are hidden (0..1).
    composite : composite id (truecolor, swir, ndvi, ndwi, mndwi, nbr).
    stretch : the one stretch applied to every date of the stack.
    locked : a locked stretch is kept as is when filters change and cannot be edited.
    current : index of the shown date in the filtered stack.
    overlay : whether the quality overlay (cloud, shadow, snow, fill/SLC gaps) is drawn.
    pair : the two dates or periods of the pair view (YYYY-MM-DD, YYYY or YYYY-YYYY).
    pair_method : how a period becomes an image: its clearest scene or the per-pixel median.
    chip_months : month window of the chip strip (empty: whole year).
    chip_years : (first, last) year of the chip strip, or None for every year (a review item's period).
    series : what the trajectory plots (an index or a band common name).
    period : (first, last) year shaded in the trajectory and coverage plots, or None.
    show_masked : whether masked observations are drawn (hollow) in the trajectory.
    trajectory_harmonized : whether the trajectory reads TM/ETM+ harmonised to OLI (the catalogue's
        coefficients) instead of each sensor as recorded.
    """

    site_dir: str | None = None
    sensors: tuple[str, ...] = ()
    years: tuple[int, int] | None = None
    months: tuple[int, ...] = ()
    max_cloud: float = 1.0
    composite: str = "truecolor"
    stretch: Stretch = Stretch.default("truecolor")
    locked: bool = False
    current: int = 0
    overlay: bool = False
    pair: tuple[str, str] | None = None
    pair_method: str = "clearest"
    chip_months: tuple[int, ...] = ()
    chip_years: tuple[int, int] | None = None
    series: str = "ndvi"
    period: tuple[int, int] | None = None
    show_masked: bool = True
    trajectory_harmonized: bool = False
