"""The composites the Stack dock offers for a site (`reviewer.app.composite_choices`), decided without a display: a
Sentinel-2 tile delivered without B8A and B12 cannot make SWIR2 / NIR / red (picked, it gave a blank canvas and a
notice), so that one is greyed out with the band missing named. Scenes are made by hand from the product catalogue,
so which composite each can make is read off the files given."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from reviewer.app.composite_choices import composite_choices
from reviewer.record.catalog import catalog

S2 = "sentinel2_msi_l2a"


def scene(product: str, tokens: list[str], *, outside: bool = False) -> SimpleNamespace:
    spec = catalog().products[product]
    return SimpleNamespace(
        record=True,
        extra={"outside_site": True} if outside else {},
        product_spec=spec,
        files={t: f"/data/{t}.tif" for t in tokens},
        label=spec.label,
        year=2020,
        date=dt.date(2020, 6, 1),
        clear_fraction=1.0,
    )


def missing(index) -> dict[str, str]:
    return {c.key: c.missing for c in composite_choices(index)}


def test_a_sentinel2_tile_without_b8a_and_b12_offers_only_what_its_bands_make():
    tile = scene(S2, ["B02", "B03", "B04", "B08", "B11", "SCL"])
    # outside the site (a render leaves it out): its B8A and B12 do not count
    whole = scene(S2, ["B02", "B03", "B04", "B08", "B8A", "B11", "B12", "SCL"], outside=True)
    got = missing(SimpleNamespace(scenes=[tile, whole]))
    assert got == {
        "truecolor": "",  # B04 B03 B02
        "swir": "needs swir2 (B12) and nir (B8A), which no scene of this site has",
        "ndvi": "needs nir (B8A), which no scene of this site has",
        "ndwi": "needs nir (B8A), which no scene of this site has",
        "mndwi": "",  # B03 and B11
        "nbr": "needs nir (B8A) and swir2 (B12), which no scene of this site has",
        "lst": "no scene of this site has it",  # (in the label's words, not the data's "lst")
        "t2m": "no scene of this site has it",  # (not "temperature_2m")
        "precipitation": "no scene of this site has it",
    }
    labels = [c.label for c in composite_choices(SimpleNamespace(scenes=[tile]))]
    assert labels[:2] == ["True colour", "SWIR2 / NIR / red"]  # the catalogue's order, every composite listed


def test_one_scene_with_the_bands_is_enough_and_no_site_offers_everything():
    tile = scene(S2, ["B02", "B03", "B04", "B11", "SCL"])
    oli = scene("landsat8_oli_c2l2", ["SR_B2", "SR_B3", "SR_B4", "SR_B5", "SR_B6", "SR_B7", "QA_PIXEL"])
    got = missing(SimpleNamespace(scenes=[tile, oli]))
    assert [k for k, why in got.items() if not why] == ["truecolor", "swir", "ndvi", "ndwi", "mndwi", "nbr"]
    modis = scene("modis_terra_mod13q1", ["NDVI", "pixel_reliability"])  # an NDVI-only export: its NDVI band
    assert [k for k, why in missing(SimpleNamespace(scenes=[modis])).items() if not why] == ["ndvi"]
    assert missing(SimpleNamespace(scenes=[modis]))["truecolor"] == (
        "needs red, green and blue, which no scene of this site has"
    )
    assert all(c.enabled for c in composite_choices(None))


def test_a_sites_choices_are_decided_once_where_its_index_is_opened(monkeypatch):
    """The worker that opens a site decides its list (each composite asked of every scene: ~15 ms of the UI thread
    at each site change when the Stack dock decided it); showing the site then reads the same choices. A site
    indexed anew (another index, e.g. rescanned with B12 delivered) is decided anew."""
    from reviewer.app import composite_choices as module

    asked: list[str] = []
    real = module.why_not
    monkeypatch.setattr(module, "why_not", lambda composite, scenes: asked.append(composite) or real(composite, scenes))
    tile = scene(S2, ["B02", "B03", "B04", "B08", "B11", "SCL"])
    index = SimpleNamespace(scenes=[tile])
    opened = composite_choices(index)  # (the worker that opened it)
    assert len(asked) == 9  # the catalogue's nine composites, each decided once
    shown = composite_choices(index)  # (the Stack dock, as the site shows)
    assert shown == opened and len(asked) == 9
    assert dict((c.key, c.enabled) for c in shown)["swir"] is False
    rescanned = SimpleNamespace(scenes=[scene(S2, ["B02", "B03", "B04", "B08", "B8A", "B11", "B12", "SCL"])])
    assert dict((c.key, c.enabled) for c in composite_choices(rescanned))["swir"] is True
    assert len(asked) == 18


def test_a_band_of_the_sites_product_not_delivered_is_named_with_its_file():
    """An ERA5-Land export with only its t2m files: precipitation is ERA5-Land's too, its tp file missing: named so
    the user knows which file to add; air temperature is offered."""
    era5 = scene("era5land_monthly", ["t2m"])
    got = missing(SimpleNamespace(scenes=[era5]))
    assert got["t2m"] == ""
    assert got["precipitation"] == "needs precipitation (tp), which no scene of this site has"
    assert got["lst"] == "no scene of this site has it"


def test_the_sites_sensors_and_years_come_with_its_composites():
    """The Stack dock's sensor boxes (one per sensor, in the catalogue's order: Landsat before Sentinel-2) and its
    year filter's range (first to last year of the site's scenes) are decided with the composites, by the worker."""
    from reviewer.app.composite_choices import site_choices

    msi = scene(S2, ["B02", "B03", "B04", "SCL"])
    oli, oli_later = (scene("landsat8_oli_c2l2", ["SR_B2", "SR_B3", "SR_B4", "QA_PIXEL"]) for _ in range(2))
    oli.year, oli_later.year = 2014, 2022
    got = site_choices(SimpleNamespace(scenes=[msi, oli_later, oli]))
    assert got.sensors == ("OLI", "MSI") and got.years == (2014, 2022) and got.scenes == 3
    assert [c.key for c in got.composites if c.enabled] == ["truecolor"]
    assert site_choices(SimpleNamespace(scenes=[])).years is None
