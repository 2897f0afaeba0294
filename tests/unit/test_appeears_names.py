"""AppEEARS area-sample GeoTIFF names of every catalogue product AppEEARS serves, written by hand from
published sources (issue 31), are recognised with their product, layer and date:

- AppEEARS' own README of an area request (AppEEARS 3.28, shipped with the R package appeears,
  github.com/bluegreen-labs/appeears inst/extdata/polygon/README.md, section 4): the convention
  <ProductShortName>.<Version>_<LayerName>_doy<Year><JulianDate>_<AppEEARSFeatureID>.<FileFormat>, its example
  MOD13Q1.061__250m_16_days_NDVI_doy2005193.aid0002.tif (a dot before the feature id), and the request's
  files in the same folder, MCD12Q2.006_Greenup_0_doy2010001_aid0001.tif (an underscore);
- exports as users keep them in public code: VNP13A1.001__500_m_16_days_NDVI_doy2012353_aid0001.tif (the
  layer is the HDF5 dataset "500 m 16 days NDVI", spaces as underscores, a leading underscore before the digit),
  MOD11A2.061_LST_Day_1km_doy2023361000000_aid0001.tif (current exports: doyYYYYDDDHHMMSS),
  MOD11A2.061_LST_Day_1km_doy2017361_aid0001.tif, MCD64A1.061_Burn_Date_doy2019182_aid0001.tif,
  MOD10A1.006_NDSI_Snow_Cover_doy2017001_aid0001.tif, MOD13Q1.061__250m_16_days_NDVI_doy2024033_aid0001.tif.
"""

from __future__ import annotations

import datetime as dt

import pytest

from reviewer.record.catalog import catalog

PUBLISHED = [
    # (file name as published, product id, band token, date: 1 January + doy - 1, worked out by hand)
    ("VNP13A1.001__500_m_16_days_NDVI_doy2012353_aid0001.tif", "viirs_npp_vnp13a1", "NDVI", dt.date(2012, 12, 18)),
    ("MOD13Q1.061__250m_16_days_NDVI_doy2024033_aid0001.tif", "modis_terra_mod13q1", "NDVI", dt.date(2024, 2, 2)),
    ("MOD13Q1.061__250m_16_days_NDVI_doy2005193.aid0002.tif", "modis_terra_mod13q1", "NDVI", dt.date(2005, 7, 12)),
    ("MOD11A2.061_LST_Day_1km_doy2023361000000_aid0001.tif", "modis_terra_mod11a2", "LST_Day_1km", dt.date(2023, 12, 27)),
    ("MOD11A2.061_LST_Day_1km_doy2017361_aid0001.tif", "modis_terra_mod11a2", "LST_Day_1km", dt.date(2017, 12, 27)),
    ("MCD64A1.061_Burn_Date_doy2019182_aid0001.tif", "modis_mcd64a1", "Burn_Date", dt.date(2019, 7, 1)),
    ("MOD10A1.006_NDSI_Snow_Cover_doy2017001_aid0001.tif", "modis_terra_mod10a1", "NDSI_Snow_Cover", dt.date(2017, 1, 1)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "product", "band", "date"), PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_published_appeears_names_are_recognised(name, product, band, date):
    found = catalog().match_alias(name)
    assert found is not None, f"{name} is not recognised"
    assert (found.product.id, found.band, found.date) == (product, band, date)


def test_one_request_date_is_one_scene_whatever_the_separator_before_the_feature_id():
    a = catalog().match_alias("MOD13Q1.061__250m_16_days_NDVI_doy2005193.aid0002.tif")
    b = catalog().match_alias("MOD13Q1.061__250m_16_days_pixel_reliability_doy2005193_aid0002.tif")
    assert a.scene_id == b.scene_id == "MOD13Q1.061_doy2005193_aid0002"


# the full doyYYYYDDDHHMMSS stamp of current exports (MOD11A2 above) for a layer of every catalogue product
# AppEEARS serves, each with its layer's name as AppEEARS writes it: doy 2024017 is 17 January 2024
FULL_STAMP = [
    ("MOD13Q1.061__250m_16_days_NDVI", "modis_terra_mod13q1", "NDVI"),
    ("MOD13Q1.061__250m_16_days_pixel_reliability", "modis_terra_mod13q1", "pixel_reliability"),
    ("MYD13Q1.061__250m_16_days_EVI", "modis_aqua_myd13q1", "EVI"),
    ("MYD13Q1.061__250m_16_days_VI_Quality", "modis_aqua_myd13q1", "VI_Quality"),
    ("MOD10A1.061_NDSI_Snow_Cover", "modis_terra_mod10a1", "NDSI_Snow_Cover"),
    ("MYD10A1.061_NDSI_Snow_Cover_Basic_QA", "modis_aqua_myd10a1", "NDSI_Snow_Cover_Basic_QA"),
    ("MOD11A2.061_LST_Night_1km", "modis_terra_mod11a2", "LST_Night_1km"),
    ("MOD11A2.061_QC_Day", "modis_terra_mod11a2", "QC_Day"),
    ("VNP13A1.002__500_m_16_days_NDVI", "viirs_npp_vnp13a1", "NDVI"),
    ("VNP13A1.002__500_m_16_days_pixel_reliability", "viirs_npp_vnp13a1", "pixel_reliability"),
    ("VNP21A2.002_LST_Day_1KM", "viirs_npp_vnp21a2", "LST_Day_1KM"),
    ("VNP21A2.002_QC_Day", "viirs_npp_vnp21a2", "QC_Day"),
    ("MCD64A1.061_Burn_Date", "modis_mcd64a1", "Burn_Date"),
    ("MCD64A1.061_QA", "modis_mcd64a1", "QA"),
]  # fmt: skip


@pytest.mark.parametrize(("stem", "product", "band"), FULL_STAMP, ids=[f[0] for f in FULL_STAMP])
def test_full_doy_stamp_of_every_product_appeears_serves(stem, product, band):
    full = catalog().match_alias(f"{stem}_doy2024017000000_aid0001.tif")
    short = catalog().match_alias(f"{stem}_doy2024017_aid0001.tif")
    assert full is not None, f"{stem}_doy2024017000000_aid0001.tif is not recognised"
    assert (full.product.id, full.band, full.date) == (product, band, dt.date(2024, 1, 17))
    assert full.scene_id == short.scene_id, "one request date is one scene whichever stamp the export has"
