"""Synthetic demo site: a multi-sensor raw record in the providers' own file formats and names.

`make_demo_site(out_dir, seed=...)` writes a site folder that the scanner, decoder and stack viewer read like
real downloads, plus `truth.json` (schemas/truth.schema.json) and `truth_masks.npz` holding the planted land
changes, so question generation and tests can check that computed answers recover them.

The surface is defined once, in Landsat 8 OLI surface reflectance (blue, green, red, nir, swir1, swir2), on the
30 m site grid (`DemoSiteModel.surface(date)`). Each product is derived from it:

* Landsat C2 L2 (TM, ETM+, OLI, OLI-2): DN = round((rho + 0.2) / 2.75e-5); TM/ETM+ get the inverse of the Roy et
  al. (2016) OLS ETM+ -> OLI transform, so harmonising with that transform exactly recovers the OLI surface.
  QA_PIXEL carries the real CFMask codes (TM/ETM+ water 5504 has the clear bit unset, OLI water 21952 has it set).
* Sentinel-2 L2A (computed on a 20 m grid): the inverse of the HLS S2 -> OLI bandpass adjustment; DN = rho *
  10000 (+1000 from processing baseline 04.00, 2022-01-25, written into MTD_MSIL2A.xml). Each band is written
  at its native resolution (10 m bands repeat each 20 m value over 2 x 2 pixels): SAFE folders with lossless
  JPEG2000 (GRANULE/<id>/IMG_DATA/R10m|R20m/), and from S2_COG_FROM the Element84 / AWS layout (one COG per
  band beside a STAC item).
* MODIS/VIIRS NDVI composites: NDVI of the area-averaged red/NIR reflectance on the sinusoidal grid, one HDF4
  (MODIS) or HDF5 (VIIRS) granule each with the SDS by their real names (formats.py); MOD10A1 daily snow as
  HDF4 too.
* ERA5-Land monthly t2m/tp as one CDS-style netCDF file, ESA WorldCover 2021, and withheld references (Hansen
  loss year) under reference/.

Everything is deterministic for a seed: every random draw comes from numpy's default_rng seeded from
(seed, task), so the bytes do not depend on the number of worker processes.

The package has one module per concern: common (constants, helpers), model (the surface), effects
(clouds, shadows, geometry), one per sensor family (landsat, sentinel2, coarse), products (climate, land
cover, references), truth (the planted changes), workers and site (make_demo_site); this module re-exports
the public names.
"""

from reviewer.record.synthetic.coarse import VI_PRODUCTS, Coarse
from reviewer.record.synthetic.common import (
    BANDS,
    BARE,
    BUILT,
    BURN,
    BURN1_C,
    BURN1_R,
    BURN2_C,
    BURN2_R,
    CLASS_NAMES,
    CLEAR_BOX,
    CLOUD,
    CROP,
    CROP_BOX,
    DEMO_LAST_ACQUISITION,
    DORMANT,
    FOREST,
    GENERATOR_VERSION,
    GRASS,
    GREEN,
    GROWING_MONTHS,
    HLS_S2_TO_OLI,
    LAKE_C,
    LAKE_R,
    MISSION_META,
    MISSIONS,
    MODIS_250,
    MODIS_500,
    NOISE_SD,
    PHENO,
    QA_CODES,
    RES,
    S2_COG_FROM,
    S2_OFFSET_FROM,
    S2_ORBIT,
    S2_PRODUCT,
    S2_TILE,
    SHRUB,
    SINU_TILE,
    SINU_WKT,
    SINU_X0,
    SINU_Y0,
    SITE_EPSG,
    SITE_NORTH,
    SITE_WEST,
    SLC_OFF,
    SNOW,
    SR_FLOOR,
    SR_OFFSET,
    SR_SATURATED_DN,
    SR_SCALE,
    ST_OFFSET,
    ST_SCALE,
    STABLE_BOX,
    URBAN_C,
    URBAN_R,
    UTM_ZONE,
    VEG,
    WATER,
    WORLDCOVER,
    WRS_PATH,
    WRS_ROW,
    Progress,
)
from reviewer.record.synthetic.effects import Clouds
from reviewer.record.synthetic.model import DemoSiteModel, Events, Grid, build_model
from reviewer.record.synthetic.site import DemoSettings, make_demo_site

__all__ = [
    "BANDS",
    "BARE",
    "BUILT",
    "BURN",
    "BURN1_C",
    "BURN1_R",
    "BURN2_C",
    "BURN2_R",
    "CLASS_NAMES",
    "CLEAR_BOX",
    "CLOUD",
    "CROP",
    "CROP_BOX",
    "Clouds",
    "Coarse",
    "DEMO_LAST_ACQUISITION",
    "DORMANT",
    "DemoSettings",
    "DemoSiteModel",
    "Events",
    "FOREST",
    "GENERATOR_VERSION",
    "GRASS",
    "GREEN",
    "GROWING_MONTHS",
    "Grid",
    "HLS_S2_TO_OLI",
    "LAKE_C",
    "LAKE_R",
    "MISSIONS",
    "MISSION_META",
    "MODIS_250",
    "MODIS_500",
    "NOISE_SD",
    "PHENO",
    "Progress",
    "QA_CODES",
    "RES",
    "S2_COG_FROM",
    "S2_OFFSET_FROM",
    "S2_ORBIT",
    "S2_PRODUCT",
    "S2_TILE",
    "SHRUB",
    "SINU_TILE",
    "SINU_WKT",
    "SINU_X0",
    "SINU_Y0",
    "SITE_EPSG",
    "SITE_NORTH",
    "SITE_WEST",
    "SLC_OFF",
    "SNOW",
    "SR_FLOOR",
    "SR_OFFSET",
    "SR_SATURATED_DN",
    "SR_SCALE",
    "STABLE_BOX",
    "ST_OFFSET",
    "ST_SCALE",
    "URBAN_C",
    "URBAN_R",
    "UTM_ZONE",
    "VEG",
    "VI_PRODUCTS",
    "WATER",
    "WORLDCOVER",
    "WRS_PATH",
    "WRS_ROW",
    "build_model",
    "make_demo_site",
]
