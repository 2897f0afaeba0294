"""`reviewer run`: a bank through Inspect (mockllm with scripted turns, and Inspect's real anthropic provider
against a local stand-in of the Messages API) in the local sandbox, the runs file scored by `reviewer score`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runs_agents import KEY, MessagesStandIn, honest_steps, make_bank, mock_model

from reviewer.cli import main
from reviewer.runs.config import RunError
from reviewer.schemas import problems

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from reviewer.record.site import load_site
    from tests.sites import make_site

    folder = make_site(tmp_path_factory.mktemp("runs") / "site", "landsat_small")
    return folder, load_site(folder).id


def _runs(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


def _messages(out: Path, condition: str) -> list:
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = [read_eval_log(i, resolve_attachments=True) for i in list_eval_logs(str(out / "logs"))]
    log = next(lg for lg in logs if lg.eval.task == f"earthrecord_{condition}")
    return {s.id: s.messages for s in log.samples}


def test_mockllm_run_lists_renders_views_submits_and_is_scored(site, tmp_path, capsys):
    from reviewer.runs.run import RunOptions, run_bank

    folder, sid = site
    bank = make_bank(tmp_path / "bank", sid)
    out = tmp_path / "runs"
    opts = RunOptions(
        bank=str(bank),
        model="mockllm/model",
        out=str(out),
        conditions=["record", "closed_book"],
        passes=1,
        sandbox="local",
        sites=[str(folder)],
        display="none",
    )
    summary = run_bank(opts, model=mock_model(honest_steps))
    runs = _runs(out)
    assert [problems(r, "run") for r in runs] == [[]] * 4
    by = {(r["question"], r["condition"]): r for r in runs}
    rec = by[("q1", "record")]
    # listed, rendered, viewed, submitted invalid, submitted again: 5 tool calls, one image view, no error
    assert (rec["answer"], rec["error"], rec["image_views"], rec["tool_calls"]) == (
        {"direction": "increase", "trend": 0.3},
        None,
        1,
        5,
    )
    assert by[("q2", "record")]["answer"] == {"area": 101.0} and by[("q2", "record")]["confidence"] == 0.7
    # the record as delivered, without the synthetic site's truth; the closed book has no record at all
    msgs = _messages(out, "record")["q1"]
    listing = next(m.text for m in msgs if m.role == "tool" and m.function == "bash")
    assert "landsat" in listing and "site.json" in listing and "truth" not in listing
    viewed = next(m for m in msgs if m.role == "tool" and m.function == "view_image")
    assert any(c.type == "image" and c.image.startswith("data:image/png;base64,") for c in viewed.content)
    rejected = [m for m in msgs if m.role == "tool" and m.function == "submit" and m.error is not None]
    assert len(rejected) == 1
    assert rejected[0].error.message == "submission not accepted: confidence: expected a number from 0 to 1, got 1.5"
    closed = _messages(out, "closed_book")["q1"]
    assert "No such file or directory" in next(m.text for m in closed if m.role == "tool" and m.function == "bash")
    assert by[("q1", "record")]["image_views"] == by[("q2", "record")]["image_views"] == 1
    assert by[("q1", "closed_book")]["image_views"] == 0
    # tokens per condition in the summary: turns of 1000 + 100 n input tokens (q1 5 turns, q2 4; 2 in the closed book)
    tokens = {c: v["tokens"]["input_tokens"] for c, v in summary["conditions"].items()}
    assert tokens == {"record": 5000 + 1000 + 4000 + 600, "closed_book": 2 * (2000 + 100)}
    # straight into the scorer
    assert main(["score", str(bank), str(out / "runs.jsonl"), "--passes", "1", "--out", str(tmp_path / "rep")]) == 0
    scores = json.loads((tmp_path / "rep" / "scores.json").read_text())
    assert scores["models"]["mockllm/model"]["record"]["pass3"] == 100.0
    assert scores["problems"]["errors"] == [] and scores["problems"]["missing_passes"] == []


def test_an_endless_loop_hits_the_message_limit_and_is_a_run_with_error(site, tmp_path):
    from reviewer.runs.run import RunOptions, run_bank

    folder, sid = site
    bank = make_bank(tmp_path / "bank", sid, n_number=0)
    out = tmp_path / "runs"
    opts = RunOptions(
        bank=str(bank),
        model="mockllm/model",
        out=str(out),
        conditions=["closed_book"],
        passes=2,
        sandbox="local",
        limit_messages=8,
        display="none",
    )
    run_bank(opts, model=mock_model(lambda q, closed: [("bash", {"command": "echo again"})]))
    runs = _runs(out)
    assert [(r["pass"], r["answer"], r["error"]) for r in runs] == [
        (1, None, "message limit of 8 reached before a valid answer"),
        (2, None, "message limit of 8 reached before a valid answer"),
    ]
    assert all(r["messages"] >= 8 for r in runs)
    # the same folder with other conditions is refused, and its runs file is left as it was
    before = (out / "runs.jsonl").read_bytes()
    opts.conditions = ["record"]
    with pytest.raises(RunError, match=r"whose conditions is \['closed_book'\], not \['record'\]"):
        run_bank(opts, model=mock_model(lambda q, closed: [("bash", {"command": "echo again"})]))
    assert (out / "runs.jsonl").read_bytes() == before


def test_closed_book_screening_of_candidates_then_audit(site, tmp_path, capsys):
    """Before freeze: a draft bank run in the closed book, then `reviewer audit` lists the question the model
    answers right in all 3 passes without the record (q1); q2's answer (50 km2, range 95-105) is wrong."""
    from runs_agents import right_answer

    from reviewer.runs.run import RunOptions, run_bank

    _, sid = site
    bank = make_bank(tmp_path / "candidates", sid, frozen=False)
    out = tmp_path / "screen"
    opts = RunOptions(
        bank=str(bank),
        model="mockllm/model",
        out=str(out),
        conditions=["closed_book"],
        passes=3,
        sandbox="local",
        draft=True,
        display="none",
    )
    answer = {"q1": right_answer("q1"), "q2": right_answer("q2") | {"area": 50.0}}
    run_bank(opts, model=mock_model(lambda q, closed: [("submit", answer[q])]))
    assert main(["audit", str(bank), str(out / "runs.jsonl"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {q["id"]: q["rules"] for q in doc["questions"]} == {"q1": ["closed_book_right"]}
    assert doc["questions"][0]["evidence"][0]["summary"].startswith("mockllm/model: right in all 3 closed-book passes")


def test_a_bank_that_is_not_frozen_or_changed_is_refused(site, tmp_path, capsys):
    folder, sid = site
    draft = make_bank(tmp_path / "draft", sid, frozen=False)
    args = ["run", str(draft), "--model", "mockllm/model", "--sandbox", "local", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not frozen" in err and "--draft" in err
    frozen = make_bank(tmp_path / "frozen", sid)
    with open(frozen / "questions.jsonl", "ab") as fh:
        fh.write(b" ")
    assert main(["run", str(frozen), *args[2:]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "sha256" in err and "questions.jsonl" in err
    assert not (tmp_path / "o").exists()


def test_a_sandbox_engine_that_is_not_there_is_refused_before_any_work(site, tmp_path, capsys, monkeypatch):
    folder, sid = site
    bank = make_bank(tmp_path / "bank", sid)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # no docker, helm or kubectl
    base = ["run", str(bank), "--model", "mockllm/model", "--site", str(folder), "--out", str(tmp_path / "o")]
    assert main([*base, "--sandbox", "docker"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--sandbox docker: the docker command is not installed" in err
    assert main([*base, "--sandbox", "k8s"]) == 2
    assert "--sandbox k8s needs" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def _blocks(value):
    """Every content block (a dict with a type) anywhere in a request's messages."""
    if isinstance(value, dict):
        if "type" in value:
            yield value
        for v in value.values():
            yield from _blocks(v)
    elif isinstance(value, list):
        for v in value:
            yield from _blocks(v)


def _eval_texts(out: Path) -> str:
    """Every file under the runs folder, Inspect's .eval logs read whole (they are compressed zips)."""
    from inspect_ai.log import read_eval_log

    parts = []
    for p in out.rglob("*"):
        if p.is_file() and p.suffix == ".eval":
            parts.append(read_eval_log(str(p), resolve_attachments=True).model_dump_json())
        elif p.is_file():
            parts.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def test_anthropic_provider_sends_tools_and_images_and_a_killed_run_resumes(site, tmp_path):
    folder, sid = site
    bank = make_bank(tmp_path / "bank", sid)
    out = tmp_path / "runs"
    stand_in = MessagesStandIn(lambda q, closed: honest_steps(q, closed, render="shell"))
    stand_in.hold_second = True
    cmd = [
        *(sys.executable, "-m", "reviewer.cli"),
        *("run", str(bank), "--model", "anthropic/claude-sonnet-4-6", "--out", str(out), "--conditions", "record"),
        *("--passes", "1", "--sandbox", "local", "--max-samples", "1", "--site", str(folder)),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "INSPECT"))}
    with stand_in.serve() as url:
        env |= {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": KEY}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            assert stand_in.held.wait(60), "the run never reached its second sample"
            time.sleep(1.0)  # q1's sample is flushed to the log as it ends (log_buffer 1)
        finally:
            proc.kill()
            proc.wait(30)
        first = list(stand_in.requests)
        # the real provider's requests: the key in its header, the tools with the question's submit schema,
        # and the rendered PNG as an image block in a tool result
        body, headers = first[0]
        assert headers[":path"] == "/v1/messages"
        assert headers.get("x-api-key") == KEY or headers.get("authorization") == f"Bearer {KEY}"
        tools = {t["name"]: t for t in body["tools"]}
        assert set(tools) == {"bash", "python", "view_image", "submit"}
        direction = tools["submit"]["input_schema"]["properties"]["direction"]
        assert direction["enum"] == ["increase", "decrease", "no significant change", "insufficient evidence"]
        images = [block for b, _ in first for block in _blocks(b["messages"]) if block.get("type") == "image"]
        assert images and images[0]["source"]["media_type"] == "image/png"
        # resume: the same command again; the first question finished before the kill and is not asked again
        stand_in.hold_second = False
        stand_in.release.set()
        n_before = len(stand_in.requests)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
    again = [b for b, _ in stand_in.requests[n_before:]]
    asked = {"q1" if "open-water" in json.dumps(b["messages"][0]) else "q2" for b in again}
    assert asked == {"q1", "q2"} - {stand_in.first}
    runs = _runs(out)
    assert [(r["question"], r["error"]) for r in runs] == [("q1", None), ("q2", None)]
    # the key is nowhere in the runs, the summary, the sandbox configs or Inspect's logs
    assert KEY not in _eval_texts(out)
    assert KEY[-16:] not in _eval_texts(out)


def test_k8s_values_validate_against_the_charts_schema(tmp_path):
    k8s = pytest.importorskip("k8s_sandbox", reason="inspect-k8s-sandbox (the [k8s] extra) is not installed")
    import jsonschema
    import yaml

    from reviewer.runs.sandbox import k8s_values

    chart = Path(k8s.__file__).parent / "resources" / "helm" / "agent-env"
    schema = json.loads((chart / "values.schema.json").read_text())
    defaults = yaml.safe_load((chart / "values.yaml").read_text())
    root = tmp_path / "records"
    (root / "a24").mkdir(parents=True)
    for folder in (root / "a24", None):
        doc = yaml.safe_load(k8s_values(folder, tmp_path / "sandbox", root).read_text())
        jsonschema.validate(defaults | doc, schema)  # helm merges the file over the chart's defaults
        mounts = doc["services"]["default"].get("volumeMounts", [])
        assert [(m["mountPath"], m.get("subPath"), m["readOnly"]) for m in mounts] == (
            [("/work/record", "a24", True)] if folder else []
        )
    assert doc["services"]["default"]["resources"]["limits"] == {"cpu": "4", "memory": "24Gi"}


def test_dockerfile_builds(tmp_path):
    from reviewer.runs.config import SANDBOX_DIR

    docker = shutil.which("docker")
    if docker is None or subprocess.run([docker, "info"], capture_output=True, timeout=30).returncode != 0:
        pytest.skip("Docker engine not available here: the sandbox image's build is not tested")
    done = subprocess.run([docker, "build", "-t", "earthrecord-sandbox:test", str(SANDBOX_DIR)], timeout=3600)
    assert done.returncode == 0


def test_the_sandbox_shows_the_record_as_delivered_without_withheld_files(tmp_path):
    """Withheld reference products (Hansen GFC, MCD64A1), a synthetic site's truth and the alteration report are
    never linked into the local sandbox and are masked in the docker one; the record's own files are there."""
    import yaml

    from reviewer.runs.sandbox import docker_compose, link_record

    rec = tmp_path / "site"
    shown = [
        "site.json",
        "landsat/LC08_L2SP_190026_20200401_20200410_02_T1/LC08_L2SP_190026_20200401_20200410_02_T1_SR_B4.TIF",
        "notes.txt",
    ]
    hidden = [
        "truth.json",
        "truth_masks.npz",
        "alter_report.json",
        "gfc/Hansen_GFC-2023-v1.11_lossyear_50N_010E.tif",
        "modis/MCD64A1.A2020153.h18v04.061.2021309103000_Burn_Date.tif",
    ]
    for rel in shown + hidden:
        (rec / rel).parent.mkdir(parents=True, exist_ok=True)
        (rec / rel).write_bytes(b"x")
    work = tmp_path / "work"
    work.mkdir()
    assert link_record(rec, work) == 3
    linked = sorted(str(p.relative_to(work / "record")) for p in (work / "record").rglob("*") if p.is_symlink())
    assert linked == sorted(shown)
    compose = yaml.safe_load(docker_compose(rec, tmp_path / "sb").read_text())["services"]["default"]
    assert compose["network_mode"] == "none" and (compose["cpus"], compose["mem_limit"]) == (4, "24g")
    assert compose["volumes"][0] == f"{rec}:/work/record:ro"
    assert sorted(v.split(":")[1] for v in compose["volumes"][1:]) == sorted(f"/work/record/{h}" for h in hidden)
    closed = yaml.safe_load(docker_compose(None, tmp_path / "sb").read_text())["services"]["default"]
    assert "volumes" not in closed


def test_the_summary_names_what_ended_the_runs_that_erred(site, tmp_path):
    """Found running mockllm/model as a maintainer on this offline machine: every run ended in Inspect's
    ConnectionError (its token count downloads tiktoken's encoding), and the terminal said only 'errors 22' per
    condition; the cause was in runs.jsonl. Two passes of one closed-book question, each turn failing: the summary
    says 2 runs ended in that error."""
    from inspect_ai.model import get_model

    from reviewer.runs.cli import summary_lines
    from reviewer.runs.run import RunOptions, run_bank

    def offline(*_args):
        raise ConnectionError("Failed to resolve 'openaipublic.blob.core.windows.net'")

    folder, sid = site
    bank = make_bank(tmp_path / "bank", sid, n_number=0)
    opts = RunOptions(bank=str(bank), model="mockllm/model", out=str(tmp_path / "runs"), conditions=["closed_book"],
                      passes=2, sandbox="local", display="none")  # fmt: skip
    summary = run_bank(opts, model=get_model("mockllm/model", custom_outputs=offline))
    why = """harness error: ConnectionError("Failed to resolve 'openaipublic.blob.core.windows.net'")"""
    assert [r["error"] for r in _runs(tmp_path / "runs")] == [why, why]
    assert summary_lines(summary)[-1] == f"2 run(s): {why}"
