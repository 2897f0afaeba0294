"""A site's scale in ground metres whatever its grid's unit (issue 31): an ERA5-Land site on its own 0.1 degree
lon/lat grid (EPSG:4326) read "0.0005 km" on its render's scale bar, a 0.1 degree cell taken as 0.1 m, and its
areas (generate's km2) were as wrong.

Expected values by hand, on the WGS 84 ellipsoid (a = 6,378,137 m, e2 = 0.00669438):
- a degree of longitude is N cos(lat) x pi / 180 with N = a / sqrt(1 - e2 sin2(lat)) (111.32 km x cos(lat) on a
  sphere): at the equator 0.1 degree = 6,378,137 x 0.00174533 = 11,131.9 m; at 45.75 N N = 6,389,129 m,
  cos = 0.697790, so 0.1 degree = 7,781 m (the sphere's 111.32 x 0.697790 x 0.1 = 7,768 m, 0.17% less);
- a degree of latitude is M x pi / 180 with M = a (1 - e2) / (1 - e2 sin2(lat))^1.5: at 45.75 N M = 6,368,284 m,
  so 0.1 degree = 11,114.6 m;
- a projected grid's cell is its resolution in the CRS's unit (US survey foot = 1200 / 3937 m = 0.3048006 m);
  MODIS sinusoidal keeps true scale along parallels (x = R lon cos(lat)), so its 463.313 m cells are 463.313 m
  east-west.
A scale bar is a fifth of the panel's width in km rounded up to 1, 2 or 5 x 10^k km."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import numpy as np
import pytest
import rasterio
from affine import Affine
from PIL import Image

from reviewer.cli import main
from reviewer.record.site import load_site
from tests.conftest import write_site_json
from tests.figures import longest_run
from tests.formats import write_era5_land_nc

ERA5_BOX = [8.95, 45.45, 9.55, 46.05]  # 6 x 6 cells of 0.1 degree centred on 45.75 N
SINUSOIDAL = "+proj=sinu +lon_0=0 +x_0=0 +y_0=0 +R=6371007.181 +units=m +no_defs"  # MODIS's sphere


@pytest.mark.parametrize(
    ("doc", "east_west", "north_south"),
    [
        (dict(bbox=ERA5_BOX, crs="EPSG:4326", resolution=0.1), 7781.1, 11114.6),
        (dict(bbox=[10.0, -0.3, 10.6, 0.3], crs="EPSG:4326", resolution=0.1), 11131.9, 11057.4),
        (dict(bbox=[500000, 5000000, 530000, 5030000], crs="EPSG:32632", resolution=30), 30.0, 30.0),
        (dict(bbox=[711648.3, 5076054.1, 741763.6, 5132578.3], crs=SINUSOIDAL, resolution=463.313), 463.313, 463.313),
        (dict(bbox=[980000, 190000, 990000, 200000], crs="EPSG:2263", resolution=100), 30.48006, 30.48006),
    ],
    ids=["lonlat-45N", "lonlat-equator", "utm", "modis-sinusoidal", "us-feet"],
)
def test_a_cell_is_its_ground_size_in_metres(tmp_path, doc, east_west, north_south):
    site = load_site(write_site_json(tmp_path / "s", **doc))
    x_m, y_m = site.cell_m
    assert x_m == pytest.approx(east_west, abs=0.5 if x_m > 1000 else 1e-3)
    assert y_m == pytest.approx(north_south, abs=0.5 if y_m > 1000 else 1e-3)
    assert site.pixel_area_km2 == pytest.approx(east_west * north_south / 1e6, rel=1e-4)
    assert site.width_km == pytest.approx(site.shape[1] * east_west / 1000, rel=1e-4)


def _render(tmp_path: Path, capsys, site: Path, date: str, composite: str) -> tuple[dict[str, str], np.ndarray]:
    out = tmp_path / f"{site.name}.png"
    code = main(["--db", str(tmp_path / "db"), "render", str(site), "--date", date, "--composite", composite,
                 "--out", str(out)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    img = Image.open(out)
    img.load()
    return dict(img.text), np.asarray(img)


def _panel(rgb: np.ndarray) -> tuple[int, int, int, int]:
    """The panel's inside (left, top, right, bottom) within its one-pixel black frame: the columns dark over a
    third of the figure's height, the rows dark from the one to the other."""
    dark = (rgb < 40).all(axis=2)
    cols = np.flatnonzero(dark.sum(axis=0) > rgb.shape[0] // 3)
    left, right = int(cols[0]), int(cols[-1])
    rows = np.flatnonzero(dark[:, left : right + 1].all(axis=1))
    return left + 1, int(rows[0]) + 1, right, int(rows[1])


def _bar_px(rgb: np.ndarray) -> int:
    """The scale bar's length in drawn pixels: the longest white run in the panel's bottom quarter (its white
    inside) and a one-pixel black edge at each end."""
    left, top, right, bottom = _panel(rgb)
    white = (rgb[top:bottom, left:right] == 255).all(axis=2)
    return max(longest_run(row) for row in white[-(bottom - top) // 4 :]) + 2


def _panel_width(rgb: np.ndarray) -> int:
    left, _, right, _ = _panel(rgb)
    return right - left


def test_an_era5_land_site_in_lon_lat_draws_its_scale_bar_in_km(tmp_path, capsys):
    """6 cells of 0.1 degree at 45.75 N are 6 x 7,781 m = 46.7 km across; a fifth is 9.3 km: a 10 km bar,
    10,000 / 7,781 = 1.285 cells long (before: "0.0002 km", two cells)."""
    site = write_site_json(tmp_path / "era5", bbox=ERA5_BOX, crs="EPSG:4326", resolution=0.1)
    lat = np.round(np.arange(46.0, 45.45, -0.1), 1)[:6]
    lon = np.round(np.arange(9.0, 9.55, 0.1), 1)[:6]
    t2m = np.full((1, 6, 6), 5000, np.int16)
    write_era5_land_nc(site / "era5.nc", [dt.date(2023, 1, 1)], lat, lon, {"t2m": (t2m, 0.001, 270.0, "K")})
    text, rgb = _render(tmp_path, capsys, site, "2023-01", "t2m")
    assert text["Scale bar"] == "10 km"
    per_cell = _panel_width(rgb) / 6
    assert _bar_px(rgb) == pytest.approx(10_000 / 7781.1 * per_cell, abs=1.5)


def test_an_appeears_lon_lat_export_draws_its_scale_bar_in_km(tmp_path, capsys):
    """MOD11A2 LST as AppEEARS exports it, on a lon/lat site of 20 cells of 0.01 degree centred on 45.9 N:
    cos(45.9) = 0.695913, N = 6,389,170 m, so a cell is 0.01 x pi / 180 x 6,389,170 x 0.695913 = 776.0 m and the
    site 15.5 km across; a fifth is 3.1 km: a 5 km bar, 6.44 cells long (before: "5e-05 km")."""
    site = write_site_json(tmp_path / "lst", bbox=[11.0, 45.8, 11.2, 46.0], crs="EPSG:4326", shape=[20, 20])
    profile = dict(driver="GTiff", width=20, height=20, count=1, crs="EPSG:4326",
                   transform=Affine(0.01, 0, 11.0, 0, -0.01, 46.0))  # fmt: skip
    lst = np.full((20, 20), 15000, np.uint16)  # 300 K
    for layer, arr in (("LST_Day_1km", lst), ("QC_Day", np.zeros((20, 20), np.uint8))):
        with rasterio.open(site / f"MOD11A2.061_{layer}_doy2024017000000_aid0001.tif", "w", dtype=arr.dtype.name,
                           **profile) as d:  # fmt: skip
            d.write(arr, 1)
    text, rgb = _render(tmp_path, capsys, site, "2024-01-17", "lst")
    assert text["Scale bar"] == "5 km"
    per_cell = _panel_width(rgb) / 20
    assert _bar_px(rgb) == pytest.approx(5000 / 776.0 * per_cell, abs=1.5)


def test_a_modis_site_on_its_sinusoidal_grid_keeps_metres(tmp_path, capsys, real_dir):
    """MODIStsp's MOD13A1 NDVI (real, 65 x 122 cells of 463.313 m in MODIS sinusoidal) on a site of its own
    grid: 65 x 463.313 m = 30.1 km across; a fifth is 6.0 km: a 10 km bar, 21.58 cells long."""
    site = tmp_path / "como"
    with rasterio.open(real_dir / "modistsp" / "MOD13A1_NDVI_2016_017.tif") as src:
        bounds, res = list(src.bounds), src.res[0]
    write_site_json(site, bbox=bounds, crs=SINUSOIDAL, resolution=res)
    (site / "MOD13A1_NDVI_2016_017.tif").symlink_to(real_dir / "modistsp" / "MOD13A1_NDVI_2016_017.tif")
    text, rgb = _render(tmp_path, capsys, site, "2016-01-17", "ndvi")
    assert text["Scale bar"] == "10 km"
    per_cell = _panel_width(rgb) / 65
    assert math.isclose(res, 463.313, abs_tol=1e-3)
    assert _bar_px(rgb) == pytest.approx(10_000 / 463.313 * per_cell, abs=1.5)
