"""A real record read within its budget: the eo-datasets TM and ETM+ scenes (files in EPSG:32655, whole scenes
decimated to 60 x 60 px) on a 30 m site in EPSG:32755 are read through a nearest-neighbour lookup of every
block pixel, which the block-size rule did not count: under a 2 GB budget, 1024-row blocks of a 2204 x 2280 px
site peaked at 2.17 GB. The peak is measured in a child process (its own peak resident set, VmHWM)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: the child: scans the site, builds its series under the budget, prints its own peak RSS
CHILD = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from reviewer.bank.series import build_series, cached_index
budget = int(sys.argv[2])
index = cached_index(sys.argv[1])
series = build_series(index, memory=budget, parts={"landsat"})
# VmHWM: the peak of this process's own memory since its exec (ru_maxrss keeps what a forked parent held)
status = open("/proc/self/status").read().split("VmHWM:")[1]
peak = int(status.split()[0]) * 1024
print(json.dumps({"peak": peak, "read": series.scenes_read, "rows": list(series.shape)}))
"""


@pytest.fixture
def eo_site(real_dir, tmp_path):
    """The three eo-datasets scenes linked into a site folder, a 66 x 68 km box of the 090/084 path/row at 30 m:
    2204 x 2280 px (the OLI scene of 098/084 lies off it)."""
    site = tmp_path / "eo"
    site.mkdir()
    for scene in sorted((real_dir / "eo-datasets").iterdir()):
        (site / scene.name).symlink_to(scene)
    (site / "site.json").write_text(
        json.dumps(
            {
                "id": "eo-budget",
                "name": "eo budget",
                "kind": "region",
                "theme": "forest",
                "role": "region",
                "bbox": [728415.0, 6133365.0, 794535.0, 6201765.0],
                "crs": "EPSG:32755",
                "resolution": 30.0,
            }
        )
    )
    return site


def test_a_reprojected_real_record_is_read_within_its_budget(eo_site):
    budget = 2 * 2**30  # the default
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(eo_site), str(budget)],
        capture_output=True,
        text=True,
        env=env,
        timeout=280,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    # the site is what the box says: 66,120 m / 30 m by 68,400 m / 30 m, and both 090/084 scenes are read
    assert got["rows"] == [2280, 2204]
    assert got["read"] == 2
    # the old rule read it in blocks of 1024 rows (the lookups uncounted): a peak of 2.15 GB; now 256 rows
    assert got["peak"] <= budget, f"peak {got['peak'] / 2**20:.0f} MB over the {budget / 2**20:.0f} MB budget"
