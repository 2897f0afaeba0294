"""Small synthetic demo sites for tests: the recipes as named settings of make_demo_site, and one factory.

    from tests.sites import make_site
    site = make_site(tmp_path / "site", "core")

A recipe is the keyword arguments of reviewer.record.synthetic.make_demo_site; `make_site(path, name, **kw)`
writes it (keywords override the recipe) and returns the site folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

RECIPES: dict[str, dict[str, Any]] = {
    # 64 x 64 px, 1996-2020, 6 Landsat scenes a year, no MODIS/S2/thermal/MTL: the generation and pair tests
    "core": dict(
        seed=0,
        size=64,
        start=1996,
        end=2020,
        scenes_per_year=6,
        modis=False,
        sentinel2=False,
        thermal=False,
        mtl=False,
    ),
    # 32 x 32 px, 2014-2020: MOD10A1 daily snow cover for winters 2016-2020, one Landsat scene a year
    "snow": dict(
        seed=0,
        size=32,
        start=2014,
        end=2020,
        scenes_per_year=1,
        variant="snow",
        sentinel2=False,
        thermal=False,
        mtl=False,
    ),
    # 64 x 64 px, 1999-2016, 2 scenes a year, Landsat TM/ETM+/OLI, Sentinel-2, MODIS, VIIRS: the GUI tests
    "gui": dict(
        seed=0,
        size=64,
        start=1999,
        end=2016,
        scenes_per_year=2,
        thermal=False,
        era5=False,
        landcover=False,
        reference=False,
        extras=False,
    ),
    # 64 x 64 px, 1999-2023, 2 scenes a year, every product the generator writes: the synthetic-record tests
    "full": dict(seed=0, size=64, start=1999, end=2023, scenes_per_year=2),
    # 40 x 40 px, 2018-2021, snow variant with its MOD10A1 files, no Sentinel-2 or ERA5: the snow-variant test
    "snow_variant": dict(
        seed=1,
        size=40,
        start=2018,
        end=2021,
        scenes_per_year=1,
        variant="snow",
        sentinel2=False,
        era5=False,
    ),
    # 32 x 32 px, 2000-2004, 3 Landsat scenes a year only: pixel and region series of a stack
    "landsat_small": dict(
        size=32,
        start=2000,
        end=2004,
        scenes_per_year=3,
        landsat_only=True,
        thermal=False,
        mtl=False,
    ),
}


def make_site(path: str | Path, recipe: str, **overrides: Any) -> Path:
    """Write the named recipe's demo site into `path` (keywords override the recipe); returns the folder."""
    from reviewer.record.synthetic import make_demo_site

    return Path(make_demo_site(Path(path), **{**RECIPES[recipe], **overrides}))


def drop_ndvi_composites(site: Path) -> Path:
    """Remove the MODIS/VIIRS NDVI composites a site's generator also writes (the snow tests do not use them,
    and indexing them would cost more than the rest)."""
    shutil.rmtree(site / "viirs", ignore_errors=True)
    for f in list((site / "modis").glob("M[OY]D13Q1.*")):
        f.unlink()
    return site
