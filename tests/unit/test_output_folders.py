"""One rule for every folder the tool writes (reviewer.fileio): the folder must be new, empty, or hold only what
the verb writes there (its own earlier output). A user's notes.txt in it makes the verb refuse with exit 2 and one
`error:` line naming the folder and notes.txt, before any work, writing nothing; the same verb into its own earlier
output still works. One test per verb family."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_audit import pilot_bank, pilot_runs
from test_failures_report import coded, store  # noqa: F401 (fixtures)
from test_faults import cli, one_error_line
from test_review_workflow import BANK, _store
from test_scoring_metrics import all_runs, make_bank

from reviewer.errors import OutputError
from reviewer.fileio import output_folder, write_folder
from reviewer.review import api

NOTE = b"my own notes, not the tool's\n"


def with_notes(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.txt").write_bytes(NOTE)
    return folder


def refused(err: str, folder: Path) -> None:
    """One error line naming the folder, notes.txt and that nothing was written; notes.txt as it was, nothing else."""
    one_error_line(err, str(folder), "holds other files (notes.txt)", "nothing was written")
    assert sorted(os.listdir(folder)) == ["notes.txt"] and (folder / "notes.txt").read_bytes() == NOTE
    assert [p.name for p in folder.parent.iterdir() if p.name.startswith(".")] == [], "no temporary folder left"


# ----------------------------------------------------------------------------- the rule itself


def test_output_folder_refuses_others_files_and_keeps_writing_over_its_own(tmp_path):
    out = tmp_path / "out"
    write_folder(out, {"a.csv": b"1\n", "b.csv": b"2\n"})
    write_folder(out, {"a.csv": b"3\n", "b.csv": b"4\n"})  # its own earlier output: written over
    assert (out / "a.csv").read_bytes() == b"3\n" and (out / "b.csv").read_bytes() == b"4\n"
    for name in ("notes.txt", "z1", "z2", "z3", "z4", "z5"):
        (out / name).write_text("x")
    (out / "photos").mkdir()
    with pytest.raises(OutputError) as err:
        write_folder(out, {"a.csv": b"5\n", "b.csv": b"6\n"})
    # sorted, a folder with '/', five named and the count of the others
    assert "holds other files (notes.txt, photos/, z1, z2, z3 and 2 more)" in str(err.value)
    assert err.value.path == str(out) and (out / "a.csv").read_bytes() == b"3\n"
    for name in ("notes.txt", "z1", "z2", "z3", "z4", "z5", "photos"):
        (out / name).rmdir() if name == "photos" else (out / name).unlink()
    # an entry of its earlier output it does not write this time (b.csv) is its own: kept
    write_folder(out, {"a.csv": b"7\n"}, ours={"a.csv", "b.csv"})
    assert (out / "a.csv").read_bytes() == b"7\n" and (out / "b.csv").read_bytes() == b"4\n"


def test_a_file_that_appears_while_the_output_is_written_is_not_overwritten_or_hidden(tmp_path):
    out = tmp_path / "out"
    write_folder(out, {"a.csv": b"1\n"})
    with pytest.raises(OutputError, match=r"holds other files \(notes.txt\)"):
        with output_folder(out) as tmp:
            (tmp / "a.csv").write_bytes(b"2\n")
            (out / "notes.txt").write_bytes(NOTE)  # someone saves a file there meanwhile
    assert (out / "a.csv").read_bytes() == b"1\n" and (out / "notes.txt").read_bytes() == NOTE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_entry_of_a_written_name_but_another_kind_is_someone_elses(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "figures").write_text("a file of the user's named like the report's folder")
    with pytest.raises(OutputError, match=r"holds other files \(figures\)"):
        with output_folder(out) as tmp:
            (tmp / "figures").mkdir()
    assert (out / "figures").read_text().startswith("a file of the user's")


# ----------------------------------------------------------------------------- the verbs


@pytest.fixture(scope="module")
def scoring(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("folders-score")
    bank = make_bank(tmp / "bank")
    runs = tmp / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    return bank, runs


def test_score_into_a_folder_with_notes_is_refused_and_into_its_own_report_works(scoring, tmp_path, capfd):
    bank, runs = scoring
    argv = ["score", str(bank), str(runs), "--bootstrap", "20", "--out"]
    out = with_notes(tmp_path / "mine")
    code, _, err = cli(capfd, *argv, str(out))
    assert code == 2
    refused(err, out)
    report = tmp_path / "report"
    assert cli(capfd, *argv, str(report))[0] == 0
    first = (report / "scores.json").read_bytes()
    assert cli(capfd, *argv, str(report), "--seed", "7")[0] == 0, "a second score into its own report folder"
    assert (report / "scores.json").read_bytes() != first and (report / "report.html").is_file()


def test_audit_out_with_notes_is_refused_and_into_its_own_audit_works(tmp_path, capfd):
    bank = pilot_bank(tmp_path / "bank")
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in pilot_runs()))
    out = with_notes(tmp_path / "mine")
    code, _, err = cli(capfd, "audit", str(bank), str(runs), "--out", str(out))
    assert code == 2
    refused(err, out)
    own = tmp_path / "audit"
    assert cli(capfd, "audit", str(bank), str(runs), "--out", str(own))[0] == 0
    assert cli(capfd, "audit", str(bank), str(runs), "--out", str(own))[0] == 0
    assert os.listdir(own) == ["audit.json"]


def test_failures_report_into_notes_is_refused_and_into_its_own_works(store, coded, tmp_path):  # noqa: F811
    from reviewer.failures.report import write_report

    out = with_notes(tmp_path / "mine")
    with pytest.raises(OutputError) as err:
        write_report(store, coded, out, user="mia")
    refused(f"error: {err.value}", out)
    own = tmp_path / "failures"
    write_report(store, coded, own, user="mia")
    write_report(store, coded, own, user="mia", split=1)  # again into its own folder
    assert json.loads((own / "failures.json").read_text())["leading"] == ["M1"]


def _reviewed(tmp_path):
    review = _store(tmp_path, n=4)
    api.assign(review, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    for i in range(4):
        for user in ("ann", "bob"):
            verdict = "flag" if (user, i) == ("bob", 0) else "accept"
            reasons = ["wrong_reference"] if verdict == "flag" else None
            api.decide(review, f"q{i:03d}", api.Decision(verdict, reasons=reasons, seconds=3.0), user=user)
    review.close()
    return str(tmp_path / "review.sqlite")


@pytest.mark.parametrize("verb, made", [("agreement", "overall.csv"), ("quality", "annotators.csv")])
def test_review_csv_into_notes_is_refused_and_into_its_own_csv_works(tmp_path, capfd, verb, made):
    db = _reviewed(tmp_path)
    out = with_notes(tmp_path / "mine")
    code, _, err = cli(capfd, "--db", db, "review", verb, BANK, "--user", "mia", "--csv", str(out))
    assert code == 2
    refused(err, out)
    own = tmp_path / "csv"
    for _ in range(2):  # the second time into its own earlier CSV
        code, text, err = cli(capfd, "--db", db, "review", verb, BANK, "--user", "mia", "--csv", str(own))
        assert code == 0, err
        assert f"wrote {own / made}" in text
    assert (own / made).read_text().count("\n") > 1


def test_bank_export_into_notes_is_refused_and_over_its_own_export_works(tmp_path, capfd):
    src = make_bank(tmp_path / "bank")
    db = str(tmp_path / "db.sqlite")
    assert cli(capfd, "--db", db, "bank", "import", str(src))[0] == 0
    out = with_notes(tmp_path / "mine")
    code, _, err = cli(capfd, "--db", db, "bank", "export", "tiny", str(out))
    assert code == 2
    refused(err, out)
    own = tmp_path / "export"
    assert cli(capfd, "--db", db, "bank", "export", "tiny", str(own))[0] == 0
    assert cli(capfd, "--db", db, "bank", "export", "tiny", str(own))[0] == 0
    assert (own / "manifest.json").read_bytes() == (src / "manifest.json").read_bytes()


def test_generate_into_notes_is_refused_before_the_record_is_read(tmp_path, capfd):
    from tests.sites import make_site

    site = make_site(tmp_path / "site", "landsat_small", seed=0)
    out = with_notes(tmp_path / "mine")
    code, _, err = cli(capfd, "generate", str(site), "--out", str(out), "--tasks", "trend")
    assert code == 2
    refused(err, out)
    own = tmp_path / "candidates"
    for _ in range(2):  # the second time over its own earlier bank
        assert cli(capfd, "generate", str(site), "--out", str(own), "--tasks", "trend")[0] == 0
    assert "generation_report.json" in os.listdir(own)


def test_bank_many_refuses_notes_in_its_folder_or_a_sites_folder_before_any_site_runs(tmp_path):
    from reviewer.bank.many import generate_many

    sites = [tmp_path / "sites" / "a", tmp_path / "sites" / "b"]  # never read: refused before
    out = with_notes(tmp_path / "many")
    with pytest.raises(OutputError, match=r"holds other files \(notes.txt\)") as err:
        generate_many(sites, out, workers=0)
    assert err.value.path == str(out) and os.listdir(out) == ["notes.txt"]
    (out / "notes.txt").unlink()
    with_notes(out / "b")
    with pytest.raises(OutputError, match=r"holds other files \(notes.txt\)") as err:
        generate_many(sites, out, workers=0)
    assert err.value.path == str(out / "b") and os.listdir(out) == ["b"]


def test_run_out_with_notes_is_refused_and_a_run_folder_keeps_resuming(tmp_path):
    from types import SimpleNamespace

    from reviewer.runs.run import MARKER, RunOptions, _check_out

    bank = SimpleNamespace(sha256="abc")
    opts = RunOptions(bank="b", model="mockllm/model", out=str(tmp_path / "run"), passes=1)
    marker = {"bank_sha256": "abc", "model": opts.model, "passes": 1, "conditions": sorted(opts.conditions)}
    run = Path(opts.out)
    (run / "logs").mkdir(parents=True)
    (run / MARKER).write_text(json.dumps(marker))
    (run / "runs.jsonl").write_text("")
    assert _check_out(opts, bank) == run, "its own earlier run: continued"
    with_notes(run)
    with pytest.raises(OutputError, match=r"holds other files \(notes.txt\)"):
        _check_out(opts, bank)


def test_a_users_file_inside_a_folder_the_tool_writes_again_is_not_deleted(scoring, tmp_path, capfd):
    """score writes figures/ whole: a second score used to replace the old figures/ and delete what a user had
    put in it. Figures of the same kind it wrote before (.png/.svg) are its own; figures/notes.txt is not."""
    bank, runs = scoring
    argv = ["score", str(bank), str(runs), "--bootstrap", "20", "--out"]
    report = tmp_path / "report"
    assert cli(capfd, *argv, str(report))[0] == 0
    (report / "figures" / "old_figure.png").write_bytes(b"an earlier run's figure")
    assert cli(capfd, *argv, str(report))[0] == 0, "a figure of the kind it writes there is its own"
    (report / "figures" / "notes.txt").write_bytes(NOTE)
    before = sorted(p.name for p in (report / "figures").iterdir())
    code, _, err = cli(capfd, *argv, str(report), "--seed", "7")
    assert code == 2
    one_error_line(err, str(report), "holds other files (figures/notes.txt)", "nothing was written")
    assert (report / "figures" / "notes.txt").read_bytes() == NOTE
    assert sorted(p.name for p in (report / "figures").iterdir()) == before
