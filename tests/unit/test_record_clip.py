"""A review package's record: a scene whose bands are layers of one HDF granule brings that granule whole."""

from __future__ import annotations

import numpy as np

from reviewer.record.clip import clip_record
from reviewer.record.scan import scan_site
from tests.conftest import write_site_json
from tests.formats import SINU, TILE_M, tile_corner, write_modis_hdf4


def test_hdf_layers_of_a_scene_copy_their_granule_once(tmp_path):
    ulx, uly = tile_corner(8, 5)
    cell = TILE_M / 24
    site = write_site_json(tmp_path / "s", bbox=[ulx, uly - 12 * cell, ulx + 12 * cell, uly], crs=SINU, shape=[12, 12])
    name = "MOD10A1.A2020001.h08v05.061.2021001000000.hdf"
    layers = {
        "NDSI_Snow_Cover": (np.full((24, 24), 40, np.uint8), {"_FillValue": 255}),
        "NDSI_Snow_Cover_Basic_QA": (np.zeros((24, 24), np.uint8), {}),
        "NDSI_Snow_Cover_Algorithm_Flags_QA": (np.zeros((24, 24), np.uint8), {}),
    }
    write_modis_hdf4(site / name, "MOD_Grid_Snow_500m", 8, 5, layers)
    (scene,) = scan_site(site).scenes
    assert all(v.startswith(f"{name}::") for v in scene.files.values())  # three layers of one file
    counts = clip_record(site, scene.files.values(), tmp_path / "out")
    assert counts == {"clipped": 0, "copied": 2}  # site.json and the granule, whole
    assert (tmp_path / "out" / name).read_bytes() == (site / name).read_bytes()
    (again,) = scan_site(tmp_path / "out").scenes
    assert again.files == scene.files
