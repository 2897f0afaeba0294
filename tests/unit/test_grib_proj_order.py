"""ecCodes loaded before pyproj left pyproj without its database: ecCodes' wheel loads its eckit libraries
(one of them another PROJ) into the global symbol scope, and pyproj, loaded after, resolved its PROJ
calls to that copy ('proj_create: no database context specified', then a double free at exit). A fresh
interpreter is used, since what matters is the order in which the libraries are first loaded.

Expected by hand: lon 10 deg, lat 0 on EPSG:3857 is x = 6378137 m x 10 x pi / 180 = 1113194.908 m, y = 0;
lon 15 deg (the central meridian of UTM zone 33N) is x = 500000 m exactly."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

# (found, not imported: importing ecCodes here would be the very fault, for every later test of the run)
pytestmark = pytest.mark.skipif(importlib.util.find_spec("eccodes") is None, reason="ecCodes is not installed")

ROOT = Path(__file__).resolve().parents[2]

AFTER_GRIB = """
import sys
sys.path.insert(0, {root!r})
from reviewer.record.grib import load_eccodes
load_eccodes()                      # what reading a GRIB download does first
import geopandas as gpd             # pyproj (and pyogrio) first used after it
from shapely.geometry import Point
p = gpd.GeoSeries([Point(10, 0), Point(15, 45)], crs="EPSG:4326")
web, utm = p.to_crs("EPSG:3857"), p.to_crs("EPSG:32633")
print(f"{{web.x[0]:.3f}} {{web.y[0]:.3f}} {{utm.x[1]:.3f}}")
"""


def test_pyproj_keeps_its_database_after_eccodes_is_loaded():
    run = subprocess.run(
        [sys.executable, "-c", AFTER_GRIB.format(root=str(ROOT))], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["1113194.908", "0.000", "500000.000"]
