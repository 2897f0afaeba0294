"""Faults a user can run into, asserted as the user sees them: exit status 2, one `error:` line naming the
file, line or field, no traceback, and nothing saved lost or left half-written.

Classes: a full disk (output folders appear whole or not at all), fixed temporary names (concurrent
writes to one output), hangs (looping links, FIFOs, odd names in a site folder), tracebacks instead of
messages (non-finite numbers, deep JSON, bad --out, bad arguments), unclear or silent input (GDAL/PROJ
noise, truncated files, duplicate JSON keys, external strings in report.md).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import rasterio
from test_scoring_metrics import all_runs, make_bank

from reviewer.bank.io import BankContent, validate_bank, write_bank
from reviewer.cli import main
from reviewer.errors import BankError, OutputError, UnreadableFileError
from reviewer.fileio import loads_strict
from tests.conftest import REPO, write_site_json

OLI = "LC08_L2SP_098084_20210503_20210508_02_T1"
DEEP = "[" * 5000 + "]" * 5000


# ----------------------------------------------------------------------------- helpers


def cli(capfd, *argv: str) -> tuple[int, str, str]:
    """Run `reviewer ARGV` in-process; (exit status, stdout, stderr) with GDAL's C-level output included."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capfd.readouterr()
    return code, out, err


def one_error_line(err: str, *needles: str) -> str:
    """stderr is exactly one `error:` line, holding every needle, and no traceback."""
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def leftovers(folder: Path) -> list[str]:
    """Temporary names left in a folder (every temporary file or folder of the tool starts with '.')."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or p.name.endswith(".tmp"))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def fail_fsync_of(monkeypatch, name: str, code: int = errno.ENOSPC) -> None:
    """os.fsync raises OSError(code) for a file whose name contains `name` (every tool write fsyncs)."""
    real = os.fsync

    def fsync(fd):
        if name in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(code, os.strerror(code))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.fixture
def mount_tmpfs(tmp_path):
    """mount(size, *options) -> a fresh tmpfs folder (skips when mounting is not permitted)."""
    mounted = []

    def mount(size: str, *options: str) -> Path:
        where = tmp_path / f"mnt{len(mounted)}"
        where.mkdir()
        opts = ",".join([f"size={size}", *options])
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode(errors='replace').strip()})")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def copy_oli(real_dir: Path, site: Path) -> Path:
    """A copy of the real OLI scene (60 x 60 px) as a site on its own grid."""
    src = real_dir / "eo-datasets" / OLI
    (site / OLI).mkdir(parents=True)
    for f in src.iterdir():
        shutil.copy(f, site / OLI / f.name)
        os.chmod(site / OLI / f.name, 0o644)
    with rasterio.open(src / f"{OLI}_SR_B4.TIF") as ds:
        b = ds.bounds
        write_site_json(site, bbox=[b.left, b.bottom, b.right, b.top], crs=ds.crs.to_string(), shape=[60, 60])
    return site


@pytest.fixture(scope="module")
def oli(real_dir, tmp_path_factory) -> Path:
    """The OLI site, for tests that do not damage it."""
    return copy_oli(real_dir, tmp_path_factory.mktemp("oli") / "site")


@pytest.fixture(scope="module")
def scoring(tmp_path_factory):
    """A small frozen bank and its runs (tests/unit/test_scoring_metrics.py)."""
    tmp = tmp_path_factory.mktemp("faults-score")
    bank = make_bank(tmp / "bank")
    runs = tmp / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    return bank, runs


def score_args(scoring, out: Path, *more: str) -> list[str]:
    bank, runs = scoring
    return ["score", str(bank), str(runs), "--out", str(out), "--bootstrap", "20", *more]


# ----------------------------------------------------------------------------- a full disk


def test_score_on_a_full_tmpfs_writes_no_partial_report(scoring, mount_tmpfs, capfd):
    small = mount_tmpfs("200k")  # the report (figures and all) needs about 290 kB
    out = small / "report"
    code, _, err = cli(capfd, *score_args(scoring, out))
    assert code == 2
    one_error_line(err, "disk full", str(out))
    assert os.listdir(small) == [], "neither a partial report nor a temporary folder is left"


def test_score_disk_full_at_report_html_keeps_the_old_report(scoring, tmp_path, capfd, monkeypatch):
    out = tmp_path / "report"
    assert cli(capfd, *score_args(scoring, out))[0] == 0
    before = snapshot(out)
    assert {"scores.json", "report.html", "report.md"} <= set(before)
    fail_fsync_of(monkeypatch, "report.html")
    code, _, err = cli(capfd, *score_args(scoring, out, "--seed", "7"))
    assert code == 2
    one_error_line(err, "disk full", str(out))
    assert snapshot(out) == before, "the old report is untouched: no new scores.json beside an old report.html"
    assert leftovers(tmp_path) == [] and leftovers(out) == []


def test_generate_disk_full_writes_no_folder(oli, tmp_path, capfd, monkeypatch):
    out = tmp_path / "candidates"
    fail_fsync_of(monkeypatch, "manifest.json")
    code, _, err = cli(capfd, "generate", str(oli), "--out", str(out))
    assert code == 2
    one_error_line(err, "disk full", str(out))
    assert not out.exists() and leftovers(tmp_path) == []
    monkeypatch.undo()
    assert cli(capfd, "generate", str(oli), "--out", str(out))[0] == 0
    assert {"manifest.json", "questions.jsonl", "dropped.jsonl", "generation_report.json"} <= set(os.listdir(out))


def test_bank_folder_disk_full_changes_nothing(scoring, tmp_path, monkeypatch):
    """write_bank is what `bank export` and `generate` write a bank with."""
    from reviewer.bank.io import load_bank

    bank = load_bank(scoring[0])
    fresh, existing = tmp_path / "fresh", tmp_path / "existing"
    write_bank(existing, BankContent("tiny", "2", bank.questions, bank.sites, bank.pairs))
    before = snapshot(existing)
    fail_fsync_of(monkeypatch, "questions.jsonl")
    for folder in (fresh, existing):
        with pytest.raises(OutputError, match="disk full") as err:
            write_bank(folder, BankContent("tiny", "3", bank.questions, bank.sites, bank.pairs))
        assert err.value.path == str(folder)
    assert not fresh.exists() and snapshot(existing) == before
    assert leftovers(tmp_path) == [] and leftovers(existing) == []


def test_alter_disk_full_leaves_no_altered_copy(oli, tmp_path, capfd, monkeypatch):
    out = tmp_path / "altered"
    fail_fsync_of(monkeypatch, "alter_report.json")
    argv = ["alter", str(oli), "--out", str(out), "--drop-clear", "0.5", "--question", "q1"]
    code, _, err = cli(capfd, *argv)
    assert code == 2
    one_error_line(err, "disk full", str(out))
    assert not out.exists() and leftovers(tmp_path) == []
    monkeypatch.undo()
    assert cli(capfd, *argv)[0] == 0 and (out / "alter_report.json").is_file() and (out / "site.json").is_file()


# ----------------------------------------------------------------------------- fixed temporary names


def test_six_renders_to_one_out_at_once(tmp_path):
    from reviewer.record.render import Panel, render_panels
    from reviewer.record.stretch import Stretch

    out = tmp_path / "pics.png"
    rng = np.random.default_rng(0)
    errors: list[BaseException] = []

    def render(i: int) -> None:
        try:
            panel = Panel(f"panel {i}", rng.random((3, 24, 24)).astype(np.float32) * 0.3, [], "scene")
            render_panels([panel], Stretch.default("truecolor"), pixel_size_m=30.0, out=out)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=render, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert out.read_bytes().startswith(b"\x89PNG") and os.listdir(tmp_path) == ["pics.png"]


def test_render_out_naming_a_folder_is_refused_and_leaves_nothing(oli, tmp_path, capfd):
    folder = tmp_path / "pics"
    folder.mkdir()
    db = str(tmp_path / "db.sqlite")
    code, _, err = cli(capfd, "--db", db, "render", str(oli), "--date", "2021-05-03", "--out", str(folder))
    assert code == 2
    one_error_line(err, str(folder), "is a folder")
    assert os.listdir(folder) == [] and not (tmp_path / "pics.tmp").exists()


def test_demo_cache_generated_by_two_threads_at_once(tmp_path, monkeypatch):
    from reviewer.record import demo, synthetic

    def fake_make(out, **_kw):
        out = Path(out)
        (out / "site.json").write_text("{}")
        (out / "truth.json").write_text(json.dumps({"generator": {"version": synthetic.GENERATOR_VERSION}}))

    monkeypatch.setenv("REVIEWER_DEMO_DIR", str(tmp_path / "demo-site"))
    monkeypatch.setattr(synthetic, "make_demo_site", fake_make)
    results, errors = [], []

    def run():
        try:
            results.append(demo.ensure_demo_site())
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(results) == 4
    assert os.listdir(tmp_path) == ["demo-site"] and sorted(os.listdir(tmp_path / "demo-site")) == [
        "site.json",
        "truth.json",
    ]


def test_a_demo_cache_from_an_older_generator_is_made_again(tmp_path, monkeypatch):
    """A demo site written by a since-fixed generator must not keep showing the old mistakes."""
    from reviewer.record import demo, synthetic

    cached = tmp_path / "demo-site"
    cached.mkdir()
    (cached / "site.json").write_text("{}")
    (cached / "truth.json").write_text(json.dumps({"generator": {"version": "1"}}))
    made = []

    def fake_make(out, **_kw):
        made.append(out)
        (Path(out) / "site.json").write_text("{}")
        (Path(out) / "truth.json").write_text(json.dumps({"generator": {"version": synthetic.GENERATOR_VERSION}}))

    monkeypatch.setenv("REVIEWER_DEMO_DIR", str(cached))
    monkeypatch.setattr(synthetic, "make_demo_site", fake_make)
    assert demo.ensure_demo_site() == cached and len(made) == 1
    assert json.loads((cached / "truth.json").read_text())["generator"]["version"] == synthetic.GENERATOR_VERSION
    assert demo.ensure_demo_site() == cached and len(made) == 1  # now current: reused


def test_no_fixed_temporary_names_in_the_code():
    fixed = re.compile(r"""(with_name|with_suffix)\([^)]*\.tmp|\+\s*["']\.tmp["']""")
    hits = [
        f"{p.relative_to(REPO)}:{i}"
        for p in (REPO / "reviewer").rglob("*.py")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if fixed.search(line)
    ]
    assert hits == [], "write temporary files with tempfile in the target's folder"


# ----------------------------------------------------------------------------- hangs


def test_scan_of_looping_links_fifos_and_odd_names_finishes(real_dir, tmp_path):
    site = copy_oli(real_dir, tmp_path / "site")
    (site / "a").symlink_to(".")
    (site / "b").symlink_to(".")
    (site / "up").symlink_to("..")
    (site / "gone").symlink_to(tmp_path / "nowhere")
    (site / "self").symlink_to("self")
    os.mkfifo(site / OLI / f"{OLI}_SR_B1.TIF.fifo")
    (site / OLI / f"{OLI}_SR_B5.TIF").unlink()
    os.mkfifo(site / OLI / f"{OLI}_SR_B5.TIF")  # named like a band file
    os.close(os.open(os.fsencode(site) + b"/bad\xff.TIF", os.O_CREAT | os.O_WRONLY))
    done = subprocess.run(
        [sys.executable, "-m", "reviewer.cli", "--db", str(tmp_path / "db.sqlite"), "scan", str(site), "--json"],
        capture_output=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    doc = json.loads(done.stdout)
    reasons = {p["path"]: p["reason"] for p in doc["problems"]}
    assert len(doc["scenes"]) == 1
    assert "already scanned" in reasons["a"] and "already scanned" in reasons["b"]
    assert "holds the site" in reasons["up"]
    assert "dangling link" in reasons["gone"] and "link loop" in reasons["self"]
    assert "FIFO" in reasons[f"{OLI}/{OLI}_SR_B5.TIF"] and "FIFO" in reasons[f"{OLI}/{OLI}_SR_B1.TIF.fifo"]
    assert "not valid UTF-8" in reasons["bad\\xff.TIF"]

    from reviewer.record.scan import site_files

    files = site_files(site)
    assert len(files) == len(set(files)) == 14, "each regular file once, nothing through the links"


# ----------------------------------------------------------------------------- tracebacks instead of messages


@pytest.mark.parametrize(
    "bbox, needle",
    [("[0, 0, Infinity, 3000]", "Infinity"), ("[0, 0, 1e999, 3000]", "out of range"), ("[0, 0, NaN, 1]", "NaN")],
)
def test_site_json_with_a_non_finite_bbox(tmp_path, capfd, bbox, needle):
    site = write_site_json(tmp_path / "s", bbox=[0, 0, 3000, 3000], crs="EPSG:32633")
    text = (site / "site.json").read_text().replace("[0, 0, 3000, 3000]", bbox)
    (site / "site.json").write_text(text)
    code, _, err = cli(capfd, "--db", str(tmp_path / "db.sqlite"), "scan", str(site))
    assert code == 2
    one_error_line(err, str(site / "site.json"), needle)


@pytest.mark.parametrize(
    "flag, value", [("--scale", "nan"), ("--scale", "inf"), ("--scale", "0"), ("--drop-clear", "nan")]
)
def test_alter_refuses_a_non_finite_number_before_writing(oli, tmp_path, capfd, flag, value):
    out = tmp_path / "altered"
    argv = ["alter", str(oli), "--out", str(out), "--satellite", "landsat8", flag, value, "--question", "q1"]
    code, _, err = cli(capfd, *argv)
    assert code == 2
    one_error_line(err, flag, value)
    assert not out.exists()


def test_alter_api_refuses_nan_scale_before_writing(oli, tmp_path):
    from reviewer.bank.alter import Alteration, alter_record

    with pytest.raises(BankError, match="finite"):
        alter_record(
            oli, tmp_path / "altered", Alteration(satellite="landsat8", scale=float("nan")), bank=tmp_path / "b"
        )
    assert not (tmp_path / "altered").exists()


def test_deep_json_is_a_schema_error_naming_file_and_line(scoring, tmp_path, capfd):
    bank = tmp_path / "bank"
    shutil.copytree(scoring[0], bank)
    lines = (bank / "questions.jsonl").read_text().splitlines()
    lines[1] = DEEP
    (bank / "questions.jsonl").write_text("\n".join(lines) + "\n")
    found = {(Path(p.path).name, p.line): p.message for p in validate_bank(bank)}
    assert "nested deeper" in found[("questions.jsonl", 2)]
    code, out, err = cli(capfd, "bank", "validate", str(bank))
    assert code == 2 and "questions.jsonl:2" in out and "nested deeper" in out and "Traceback" not in err

    (bank / "manifest.json").write_text(DEEP)
    assert any(Path(p.path).name == "manifest.json" and "nested deeper" in p.message for p in validate_bank(bank))

    runs = tmp_path / "runs.jsonl"
    runs.write_text(scoring[1].read_text() + '{"model": "A", "answer": ' + DEEP + "}\n")
    n = len(runs.read_text().splitlines())
    code, _, err = cli(capfd, "score", str(scoring[0]), str(runs), "--out", str(tmp_path / "r"), "--bootstrap", "5")
    assert code == 2
    one_error_line(err, f"{runs}, line {n}", "nested deeper")
    assert not (tmp_path / "r").exists()

    site = write_site_json(tmp_path / "s", bbox=[0, 0, 3000, 3000], crs="EPSG:32633")
    (site / "site.json").write_text('{"id": ' + DEEP + "}")
    code, _, err = cli(capfd, "--db", str(tmp_path / "db.sqlite"), "scan", str(site))
    assert code == 2
    one_error_line(err, str(site / "site.json"), "nested deeper")


def test_out_naming_an_existing_file(scoring, oli, tmp_path, capfd):
    a_file = tmp_path / "taken"
    a_file.write_text("keep me")
    db = str(tmp_path / "db.sqlite")
    for argv in (
        score_args(scoring, a_file),
        ["generate", str(oli), "--out", str(a_file)],
        ["alter", str(oli), "--out", str(a_file), "--drop-clear", "0.5", "--question", "q1"],
    ):
        code, _, err = cli(capfd, *argv)
        assert code == 2, argv
        one_error_line(err, str(a_file), "is a file, not a folder")
    assert cli(capfd, "--db", db, "bank", "import", str(scoring[0]))[0] == 0
    code, _, err = cli(capfd, "--db", db, "bank", "export", "tiny", str(a_file))
    assert code == 2
    one_error_line(err, str(a_file))
    code, _, err = cli(capfd, "--db", db, "render", str(oli), "--date", "2021-05-03", "--out", str(a_file / "x.png"))
    assert code == 2
    one_error_line(err, str(a_file))
    assert a_file.read_text() == "keep me" and leftovers(tmp_path) == []


def test_out_in_a_read_only_place(scoring, oli, tmp_path, mount_tmpfs, capfd):
    ro = mount_tmpfs("1m", "ro")
    db = str(tmp_path / "db.sqlite")
    assert cli(capfd, "--db", db, "bank", "import", str(scoring[0]))[0] == 0
    for argv in (
        score_args(scoring, ro / "report"),
        ["generate", str(oli), "--out", str(ro / "cands")],
        ["--db", db, "bank", "export", "tiny", str(ro / "export")],
        ["--db", db, "render", str(oli), "--date", "2021-05-03", "--out", str(ro / "pair.png")],
    ):
        code, _, err = cli(capfd, *argv)
        assert code == 2, argv
        one_error_line(err, "read-only file system", str(ro))


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["demo-site", "{tmp}/d", "--size", "0"], ["--size", "'0'"]),
        (["demo-site", "{tmp}/d", "--size", "nan"], ["--size"]),
        (["demo-site", "{tmp}/d", "--size", "32", "--start", "2020", "--end", "1990"], ["end year 1990"]),
        (["demo-site", "{tmp}/full", "--size", "32"], ["{tmp}/full", "not empty"]),
        (["score", "b", "r.jsonl", "--out", "o", "--passes", "0"], ["--passes"]),
        (["score", "b", "r.jsonl", "--out", "o", "--bootstrap", "-1"], ["--bootstrap"]),
        (
            [
                "render",
                "s",
                "--date",
                "2020",
                "--out",
                "{tmp}/x.png",
                "--stretch",
                '{"composite": "truecolor", "channels": '
                '[{"low": 0, "high": Infinity}, {"low": 0, "high": 1}, {"low": 0, "high": 1}]}',
            ],
            ["Infinity"],
        ),
    ],
)
def test_bad_arguments_are_one_line(tmp_path, capfd, argv, needles):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("keep")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, _, err = cli(capfd, "--db", str(tmp_path / "db.sqlite"), *argv)
    assert code == 2
    one_error_line(err, *(n.replace("{tmp}", str(tmp_path)) for n in needles))
    assert os.listdir(tmp_path / "full") == ["mine.txt"] and not (tmp_path / "d").exists()


def test_unexpected_errors_are_one_line_and_verbose_shows_the_traceback(capfd, monkeypatch):
    import reviewer.scoring.api as api

    def boom(*_a, **_k):
        raise TypeError("a bug")

    monkeypatch.setattr(api, "score", boom)
    code, _, err = cli(capfd, "score", "b", "r.jsonl", "--out", "o")
    assert code == 2
    one_error_line(err, "internal error", "TypeError: a bug", "-v")
    code, _, err = cli(capfd, "-v", "score", "b", "r.jsonl", "--out", "o")
    assert code == 2 and "Traceback" in err and err.strip().splitlines()[-1].startswith("error: internal error")

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device", "/data/x.json")

    monkeypatch.setattr(api, "score", full)
    code, _, err = cli(capfd, "score", "b", "r.jsonl", "--out", "o")
    assert code == 2
    one_error_line(err, "disk full: /data/x.json")


# ----------------------------------------------------------------------------- unclear or silent


def test_unknown_crs_prints_only_the_tools_message(tmp_path, capfd):
    site = write_site_json(tmp_path / "s", bbox=[0, 0, 3000, 3000], crs="EPSG:99999")
    code, _, err = cli(capfd, "--db", str(tmp_path / "db.sqlite"), "scan", str(site))
    assert code == 2
    one_error_line(err, "field 'crs'", "unknown CRS 'EPSG:99999'")
    assert "PROJ" not in err


def test_truncated_quality_layer_is_called_truncated(real_dir, tmp_path, capfd):
    from reviewer.record.decode import Grid, read_raw
    from reviewer.record.site import load_site

    site = copy_oli(real_dir, tmp_path / "site")
    qa = site / OLI / f"{OLI}_QA_PIXEL.TIF"
    qa.write_bytes(qa.read_bytes()[:250])  # the header survives, the georeferencing tags do not
    with pytest.raises(UnreadableFileError, match="truncated") as err:
        read_raw(qa, Grid.of_site(load_site(site)), nodata=1)
    assert err.value.path == str(qa)
    code, out, err = cli(capfd, "--db", str(tmp_path / "db.sqlite"), "scan", str(site))
    assert code == 0 and "truncated" in out and "georeferencing" not in out
    assert not re.search(r"CPLE|TIFF|Warning 1|ERROR 1", err), err


def test_bank_validate_exits_2(scoring, tmp_path, capfd):
    bank = tmp_path / "bank"
    shutil.copytree(scoring[0], bank)
    (bank / "pairs.jsonl").write_text('{"id": "p"}\n')
    code, out, err = cli(capfd, "bank", "validate", str(bank))
    assert code == 2 and "pairs.jsonl:1" in out
    one_error_line(err, str(bank))


def test_duplicate_keys_are_refused_naming_line_and_key(scoring, oli, tmp_path, capfd):
    bank = tmp_path / "bank"
    shutil.copytree(scoring[0], bank)
    lines = (bank / "questions.jsonl").read_text().splitlines()
    doc = json.loads(lines[0])
    ref = json.dumps(doc["reference"])
    lines[0] = lines[0][:-1] + ', "reference": ' + ref.replace("increase", "decrease") + "}"
    (bank / "questions.jsonl").write_text("\n".join(lines) + "\n")
    found = [p for p in validate_bank(bank, verify_hashes=False) if Path(p.path).name == "questions.jsonl"]
    assert found and found[0].line == 1 and "duplicate key 'reference'" in found[0].message

    manifest = (bank / "manifest.json").read_text()
    (bank / "manifest.json").write_text(manifest.replace('"frozen": true', '"frozen": true, "frozen": false'))
    assert any("duplicate key 'frozen'" in p.message for p in validate_bank(bank))

    runs = tmp_path / "runs.jsonl"
    first, *rest = scoring[1].read_text().splitlines()
    runs.write_text("\n".join([first[:-1] + ', "pass": 2}', *rest]) + "\n")
    code, _, err = cli(capfd, "score", str(scoring[0]), str(runs), "--out", str(tmp_path / "r"), "--bootstrap", "5")
    assert code == 2
    one_error_line(err, f"{runs}, line 1", "duplicate key 'pass'")

    site = write_site_json(tmp_path / "s", bbox=[0, 0, 3000, 3000], crs="EPSG:32633")
    (site / "site.json").write_text((site / "site.json").read_text()[:-1] + ', "id": "other"}')
    code, _, err = cli(capfd, "--db", str(tmp_path / "db.sqlite"), "scan", str(site))
    assert code == 2
    one_error_line(err, str(site / "site.json"), "duplicate key 'id'")

    stretch = '{"composite": "truecolor", "composite": "swir", "channels": []}'
    code, _, err = cli(
        capfd,
        "--db",
        str(tmp_path / "db.sqlite"),
        "render",
        str(oli),
        "--date",
        "2021-05-03",
        "--out",
        str(tmp_path / "x.png"),
        "--stretch",
        stretch,
    )
    assert code == 2
    one_error_line(err, "stretch", "duplicate key 'composite'")
    assert not (tmp_path / "x.png").exists()


def test_strict_json_keeps_ordinary_documents():
    assert loads_strict('{"a": [1, 2.5, {"b": null}], "c": "x"}') == {"a": [1, 2.5, {"b": None}], "c": "x"}
    assert loads_strict("[" * 60 + "]" * 60) is not None


def test_report_md_escapes_model_names(scoring, tmp_path):
    from reviewer.scoring.api import score
    from reviewer.scoring.options import ScoringOptions

    evil = "evil | <script>alert(1)</script>\n`rm` & *bold*"
    runs = tmp_path / "runs.jsonl"
    runs.write_text(
        "".join(json.dumps({**r, "model": evil if r["model"] == "A" else r["model"]}) + "\n" for r in all_runs())
    )
    out = tmp_path / "report"
    score(scoring[0], [runs], out, ScoringOptions(bootstrap=20))
    md = (out / "report.md").read_text()
    assert "<script>" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert "\\`rm\\` &amp; \\*bold\\*" in md
    for table in re.findall(r"(?ms)^\| .*?(?=^$)", md):
        rows = table.strip().splitlines()
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in rows}
        assert len(widths) == 1, rows  # an escaped pipe or a newline never adds a column
    assert "<script>" not in (out / "report.html").read_text()
