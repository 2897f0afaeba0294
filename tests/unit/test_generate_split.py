"""A large site split over a dask cluster (issue 17): its Landsat years and runs of MODIS/VIIRS composites run as
tasks of the cluster's workers, and the bank is byte for byte what one process writes alone; the MODIS/VIIRS
yearly medians stream through the memory budget like the Landsat composites."""

from __future__ import annotations

import json
import warnings

import pytest

from reviewer.bank.options import GenerationOptions
from tests.sites import make_site

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

FILES = ("questions.jsonl", "dropped.jsonl")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """32 x 32 px, 2000-2008, 4 Landsat scenes a year, with the MODIS Terra/Aqua NDVI composites and ERA5-Land
    (no Sentinel-2): every part of the pass that can be split has something to read."""
    return make_site(
        tmp_path_factory.mktemp("split") / "site",
        "landsat_small",
        landsat_only=False,
        start=2000,
        end=2008,
        scenes_per_year=4,
        sentinel2=False,
    )


def _alone(site, out, **kw):
    from reviewer.bank.generate import generate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return generate(site, out, GenerationOptions(seed=2, **kw))


def test_one_site_on_two_workers_writes_the_bytes_one_process_writes(site, tmp_path):
    """One site and two workers: fewer sites than workers, so the site's years become tasks (split "auto")."""
    from reviewer.bank.many import generate_many

    alone = _alone(site, tmp_path / "alone")
    cluster = generate_many([site], tmp_path / "cluster", GenerationOptions(seed=2), workers=2)
    assert [s.status for s in cluster.sites] == ["done"]
    bank = tmp_path / "cluster" / site.name
    for name in FILES:
        assert (tmp_path / "alone" / name).read_bytes() == (bank / name).read_bytes()
    assert alone.questions > 0 and alone.tasks == 0
    # every one of the nine Landsat years was a task (and the MODIS runs besides), and the summary says so
    rep = json.loads((bank / "generation_report.json").read_text())
    assert rep["cluster_tasks"] > 9
    assert f"the record read as {rep['cluster_tasks']} tasks of the cluster" in cluster.sites[0].summary


def test_split_never_keeps_the_site_in_one_task(site, tmp_path):
    from reviewer.bank.many import generate_many

    run = generate_many(
        [site], tmp_path / "out", GenerationOptions(seed=2, tasks=("quantify",)), workers=1, split="never"
    )
    rep = json.loads((tmp_path / "out" / site.name / "generation_report.json").read_text())
    assert [s.status for s in run.sites] == ["done"] and rep["cluster_tasks"] == 0
    assert "tasks of the cluster" not in run.sites[0].summary


def test_a_split_of_an_unknown_kind_is_refused(site, tmp_path):
    from reviewer.bank.many import generate_many
    from reviewer.errors import BankError

    with pytest.raises(BankError, match="split must be auto, always or never"):
        generate_many([site], tmp_path / "out", workers=1, split="sometimes")


def test_modis_medians_beyond_the_budget_go_to_files_and_change_no_byte(site, tmp_path):
    """32 x 32 float32 frames are 4 KB: 13 Landsat composites x 9 years alone are 468 KB, so a 60 KB budget
    sends nearly all frames to files, the MODIS yearly medians with them."""
    whole = _alone(site, tmp_path / "memory")
    tight = _alone(site, tmp_path / "tight", memory=60_000)
    assert whole.spilled == 0 and tight.spilled > 468_000
    for name in FILES:
        assert (tmp_path / "memory" / name).read_bytes() == (tmp_path / "tight" / name).read_bytes()
    # the NDVI-trend shares have a method on the MODIS Terra medians (2001-2008: at least min_obs years), so
    # those medians were read back from the files (kept questions, or candidates a consistency rule dropped)
    methods = [
        json.loads(line)["provenance"]["methods"]["share"]
        for line in (tmp_path / "tight" / "questions.jsonl").read_text().splitlines()
        if json.loads(line)["task"] == "regional_statistics"
    ] + [
        d["methods"]["share"]
        for d in map(json.loads, (tmp_path / "tight" / "dropped.jsonl").read_text().splitlines())
        if d["template"] == "regional_statistics.ndvi_share"
    ]
    assert methods and all("modis_terra:ols" in m for m in methods)


def test_cli_split_without_a_cluster_is_refused(site, tmp_path, capsys):
    from reviewer.cli import main

    assert main(["generate", str(site), "--out", str(tmp_path / "out"), "--split", "always"]) == 2
    assert "--split is for a run on a cluster" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
