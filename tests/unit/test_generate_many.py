"""Many sites in one run (issue 17): OUT/<site>/ per site, a failing site reported while the others finish,
finished sites not recomputed, cancel, and the same bytes on a 2-worker dask LocalCluster as one by one."""

from __future__ import annotations

import hashlib
import json

import pytest

from reviewer.bank.options import GenerationOptions
from tests.sites import make_site

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

OPTIONS = GenerationOptions(tasks=("quantify", "trend", "detect"), seed=2)


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """Two small Landsat-only sites (32 x 32 px, 2000-2004, 3 scenes a year) of different seeds."""
    root = tmp_path_factory.mktemp("many")
    return [make_site(root / f"site-{i}", "landsat_small", seed=i) for i in range(2)]


def _digest(folder):
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in ("questions.jsonl", "dropped.jsonl")}


def test_sites_run_one_by_one_a_bad_one_fails_alone_and_a_second_run_skips_the_finished(sites, tmp_path):
    from reviewer.bank.many import generate_many

    seen = []
    missing = tmp_path / "no-such-site"
    report = generate_many(
        [*sites, missing], tmp_path / "out", workers=0, progress=lambda f, m: seen.append(dict(f)), options=OPTIONS
    )
    status = {s.name: s.status for s in report.sites}
    assert status == {"site-0": "done", "site-1": "done", "no-such-site": "failed"}
    assert "no-such-site" in next(s.error for s in report.sites if s.status == "failed")
    for s in sites:
        bank = tmp_path / "out" / s.name
        assert (bank / "questions.jsonl").is_file() and (bank / "generation_report.json").is_file()
        site_id = json.loads((s / "site.json").read_text())["id"]
        assert json.loads((bank / "questions.jsonl").read_text().splitlines()[0])["site"] == site_id
    assert seen[-1] == {"site-0": 1.0, "site-1": 1.0, "no-such-site": 1.0}
    assert not (tmp_path / "out" / ".generate").exists()  # the run's progress files are gone
    stamp = (tmp_path / "out" / "site-0" / "generation_report.json").stat().st_mtime_ns
    again = generate_many([*sites, missing], tmp_path / "out", workers=0, options=OPTIONS)
    assert [s.status for s in again.sites] == ["skipped", "skipped", "failed"]
    assert (tmp_path / "out" / "site-0" / "generation_report.json").stat().st_mtime_ns == stamp
    assert "1 failed" in again.lines()[-1] and "2 finished before" in again.lines()[-1]


def test_cancel_stops_the_run_and_leaves_no_half_written_site(sites, tmp_path):
    from reviewer.bank.many import generate_many

    report = generate_many(sites, tmp_path / "out", workers=0, cancel=lambda: True, options=OPTIONS)
    assert [s.status for s in report.sites] == ["cancelled", "cancelled"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []


def test_two_sites_of_one_folder_name_are_refused(sites, tmp_path):
    from reviewer.bank.many import generate_many
    from reviewer.errors import BankError

    with pytest.raises(BankError, match="same folder"):
        generate_many([sites[0], sites[0]], tmp_path / "out", workers=0)


def test_a_running_2_worker_scheduler_writes_the_same_bytes_as_one_by_one(sites, tmp_path):
    """The sites go to a dask scheduler given by address (here a LocalCluster of 2 worker processes this test
    starts, as a team's cluster would be): same files as generating them one after another."""
    from distributed import LocalCluster

    from reviewer.bank.many import generate_many

    serial = generate_many(sites, tmp_path / "serial", workers=0, options=OPTIONS)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0", memory_limit=0) as lc:
        cluster = generate_many(sites, tmp_path / "dask", scheduler=lc.scheduler_address, options=OPTIONS)
    assert cluster.workers == f"scheduler {lc.scheduler_address}"
    assert [s.status for s in serial.sites] == [s.status for s in cluster.sites] == ["done", "done"]
    for s in sites:
        assert _digest(tmp_path / "serial" / s.name) == _digest(tmp_path / "dask" / s.name)


def test_cli_several_sites_and_a_bad_memory_size(sites, tmp_path, capsys):
    from reviewer.cli import main

    out = tmp_path / "out"
    argv = ["generate", *map(str, sites), "--out", str(out), "--workers", "0", "--tasks", "quantify", "--memory", "1GB"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "2 sites: 2 generated" in text and "peak memory" in text and "of 1.00 GB budget" in text
    assert main(argv) == 0 and "2 finished before" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["generate", str(sites[0]), "--out", str(out / "x"), "--memory", "lots"])
    assert exc.value.code == 2 and "not a memory size" in capsys.readouterr().err
