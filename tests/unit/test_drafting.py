"""AI drafting (issue 12) through the real anthropic.Anthropic client with its HTTP transport mocked
(tests/unit/drafting_fake.py answers in the Messages / Message Batches API's JSON format). No test reaches the
network. Expected values are worked out by hand: the cost from the list prices in assets/drafting/settings.json
(claude-sonnet-5-5: $2 input, $10 output, $2.50 cache write per million tokens; batches half), the prompt's sha256
from the file's bytes, the image limits from the settings.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import threading
import time
import warnings

import pytest
from drafting_fake import KEY, FakeAPI, good_reply, offline, status, timeout

from reviewer.drafting import run as RUN
from reviewer.drafting.config import DRAFTING_DIR, settings
from reviewer.drafting.draft import draft_display
from reviewer.drafting.images import Image
from reviewer.drafting.options import DraftOptions
from reviewer.review import api
from reviewer.review.banks import import_bank
from reviewer.store import Store

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BANK = "demo-core-seed0-generated"
VISUAL = "demo-core-seed0-26"  # attribute.land_cover_after_loss: the demo bank's visual-reference item
# cost of one fake reply (1200 input, 350 output, 900 cache-write tokens) at the claude-sonnet-5-5 list prices
ONE_REPLY_USD = (1200 * 2.0 + 350 * 10.0 + 900 * 2.5) / 1e6  # 0.00815


@pytest.fixture(scope="module")
def base_store(demo, tmp_path_factory):
    """The demo bank in a store with the site's scan and a maintainer; copied per test."""
    path = tmp_path_factory.mktemp("drafting") / "review.sqlite"
    with Store(path) as store, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api.add_user(store, "mia", "maintainer")
        api.add_user(store, "ann", "annotator", by="mia")
        import_bank(store, demo["out"], user="mia")
        from reviewer.record.scan import open_index

        open_index(demo["site"], store=store)
    return path


@pytest.fixture
def store(base_store, tmp_path):
    path = tmp_path / "review.sqlite"
    shutil.copy(base_store, path)
    with Store(path) as s:
        yield s


@pytest.fixture
def fast(monkeypatch):
    """A one-panel stand-in for the evidence render (the render itself is checked in the first test), and short
    backoff waits."""
    png = _png(64, 48)

    def render(index, view, period, limits):
        return [Image("image 1", f"{view.composite} panel", png, 64, 48)]

    monkeypatch.setattr(RUN, "render_evidence", render)
    monkeypatch.setitem(settings()["retry"], "backoff_s", 0.01)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def _png(w, h):
    from PIL import Image as PILImage

    buf = io.BytesIO()
    PILImage.new("RGB", (w, h), (90, 140, 60)).save(buf, format="PNG")
    return buf.getvalue()


def _qids(store, n, *, skip=()):
    rows = store.db.execute("SELECT qid FROM items WHERE bank = ? ORDER BY position", [BANK]).fetchall()
    return [r[0] for r in rows if r[0] not in skip][:n]


def _versions(store, qid):
    return store.db.execute(
        "SELECT v.version, v.origin, v.json FROM item_versions v JOIN items i ON i.id = v.item "
        "WHERE i.qid = ? ORDER BY v.version",
        [qid],
    ).fetchall()


def _posts(fake, path="/v1/messages"):
    return [body for method, p, body, _ in fake.requests if method == "POST" and p == path]


def test_a_visual_item_is_drafted_from_its_rendered_evidence_and_stored_as_a_new_version(store):
    fake = FakeAPI()
    summary = RUN.draft_bank(store, BANK, fake.client(), user="mia")  # default: the visual-reference items
    assert [(o.key, o.status) for o in summary.outcomes] == [(f"{BANK}/{VISUAL}", "drafted")]
    (body,) = _posts(fake)
    # the request: fixed part cached, images as base64 PNG within the limits, the structured output schema
    assert body["model"] == "claude-sonnet-5-5" and body["max_tokens"] == 2048
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    content = body["messages"][0]["content"]
    assert content[0]["cache_control"] == {"type": "ephemeral"} and "insufficient evidence" in content[0]["text"]
    images = [b for b in content if b["type"] == "image"]
    assert len(images) == 2  # the pair (true colour 2001 | 2020) and the NDVI trajectory
    from PIL import Image as PILImage

    q1 = json.loads(_versions(store, VISUAL)[0][2])
    for block in images:
        assert block["source"]["media_type"] == "image/png"
        data = base64.b64decode(block["source"]["data"])
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) <= 3_750_000
        w, h = PILImage.open(io.BytesIO(data)).size
        assert max(w, h) <= 1568 and w * h <= 1_150_000
    pair = PILImage.open(io.BytesIO(base64.b64decode(images[0]["source"]["data"])))
    # one stretch for both panels: the item's stored stretch, as the render's metadata records it
    assert json.loads(pair.text["Stretch"]) == q1["evidence"]["stretch"]
    assert [p["label"][:4] for p in json.loads(pair.text["Panels"])] == ["2001", "2020"]
    # the question's region (its north-west quadrant) outlined in dashed yellow on the panels, and the prompt says so
    assert json.loads(pair.text["Region"]) == {"kind": "quadrant", "quadrant": "NW"}
    import numpy as np

    rgb = np.asarray(pair.convert("RGB")).astype(int)
    yellow = (rgb[..., 0] > 200) & (rgb[..., 1] > 170) & (rgb[..., 2] < 90)
    cols = np.nonzero(yellow.any(axis=0))[0]
    assert yellow.sum() > 100 and cols.size
    assert "outlined by a dashed yellow line" in body["system"][0]["text"]
    assert "outlined in dashed yellow" in content[-1]["text"]
    schema = body["output_config"]["format"]["schema"]
    assert schema["properties"]["answer"]["required"] == ["cover"]
    assert "insufficient evidence" in schema["properties"]["answer"]["properties"]["cover"]["enum"]
    assert "Sensors in the period: " in content[-1]["text"] and "SLC" in content[-1]["text"]
    # stored: version 2, origin drafted, state drafted, version 1 untouched
    (v1, o1, j1), (v2, o2, j2) = _versions(store, VISUAL)
    assert (v1, o1, v2, o2) == (1, "generated", 2, "drafted") and "draft" not in json.loads(j1)["provenance"]
    assert store.db.execute("SELECT state FROM items WHERE qid = ?", [VISUAL]).fetchone()[0] == "drafted"
    prov = json.loads(j2)["provenance"]["draft"]["provenance"]
    raw = (DRAFTING_DIR / "prompt-2.json").read_bytes()
    assert prov["prompt_version"] == "2" and prov["prompt_sha256"] == hashlib.sha256(raw).hexdigest()
    assert [i["sha256"] for i in prov["images"]] == [
        hashlib.sha256(base64.b64decode(b["source"]["data"])).hexdigest() for b in images
    ]
    assert prov["stretch"] == q1["evidence"]["stretch"] and prov["request_id"] == "req_fake000001"
    assert prov["usage"] == {
        "input_tokens": 1200,
        "output_tokens": 350,
        "cache_creation_input_tokens": 900,
        "cache_read_input_tokens": 0,
    }
    assert prov["cost_usd"] == pytest.approx(ONE_REPLY_USD) and prov["latency_s"] >= 0 and prov["mode"] == "messages"
    shown = draft_display(json.loads(j2))
    assert shown["answer"] == {"cover": good_reply(body)["answer"]["cover"]} and shown["confidence"] == 0.7
    assert draft_display(json.loads(j2), hide_confidence=True)["confidence"] is None
    assert draft_display(q1) is None
    # a second run skips it (resume); --redraft adds version 3 and keeps version 2 as it was
    again = RUN.draft_bank(store, BANK, fake.client(), user="mia")
    assert [o.status for o in again.outcomes] == ["skipped"] and len(_posts(fake)) == 1
    RUN.draft_bank(store, BANK, fake.client(), DraftOptions(redraft=True), user="mia")
    versions = _versions(store, VISUAL)
    assert [v[:2] for v in versions] == [(1, "generated"), (2, "drafted"), (3, "drafted")] and versions[1][2] == j2


def test_the_region_outline_is_the_quadrant_or_polygon_in_panel_pixels():
    """Worked by hand: a 10 x 8 px grid (w x h) drawn by imshow with pixel (0, 0)'s centre at (0, 0), so pixel
    edges at -0.5, 0.5, ...; the south-east quadrant spans columns 5-9 and rows 4-7. A polygon vertex at
    (500300, 3999700) on a 30 m grid from (500000, 4000000) is the corner of pixel (10, 10): (9.5, 9.5)."""
    from types import SimpleNamespace

    from affine import Affine

    from reviewer.bank.evidence import EvidenceView
    from reviewer.drafting.images import region_outline

    base = {"composite": "truecolor", "dates": ["2001-06-01", "2020-06-01"]}
    se = EvidenceView.from_json({**base, "region": {"kind": "quadrant", "quadrant": "SE"}})
    assert region_outline(se, None, (8, 10)) == [(4.5, 3.5), (9.5, 3.5), (9.5, 7.5), (4.5, 7.5), (4.5, 3.5)]
    whole = EvidenceView.from_json(base)
    assert region_outline(whole, None, (8, 10))[:3] == [(-0.5, -0.5), (9.5, -0.5), (9.5, 7.5)]
    site = SimpleNamespace(transform=Affine(30.0, 0.0, 500000.0, 0.0, -30.0, 4000000.0))
    ring = [[500000.0, 4000000.0], [500300.0, 4000000.0], [500300.0, 3999700.0], [500000.0, 4000000.0]]
    poly = EvidenceView.from_json({**base, "region": {"kind": "polygon", "coordinates": ring}})
    assert region_outline(poly, site, (8, 10)) == [(-0.5, -0.5), (9.5, -0.5), (9.5, 9.5), (-0.5, -0.5)]


def test_a_malformed_reply_is_retried_once_with_the_error_then_reported_never_stored(store, fast):
    fake = FakeAPI()
    bad = json.dumps({"answer": {"cover": "jungle"}, "conclusion": "x"})
    fake.script = [bad, bad]
    summary = RUN.draft_bank(store, BANK, fake.client(), user="mia")
    (o,) = summary.outcomes
    assert o.status == "invalid" and "did not validate" in o.message and "invalid twice" in o.message
    posts = _posts(fake)
    assert len(posts) == 2
    retry = posts[1]["messages"]
    assert [m["role"] for m in retry] == ["user", "assistant", "user"] and retry[1]["content"][0]["text"] == bad
    assert "failed validation" in retry[2]["content"][0]["text"] and "jungle" in retry[2]["content"][0]["text"]
    assert len(_versions(store, VISUAL)) == 1
    # malformed once, then good: drafted, with both requests' tokens counted
    fake.script = ["not json at all"]
    (o,) = RUN.draft_bank(store, BANK, fake.client(), user="mia").outcomes
    prov = json.loads(_versions(store, VISUAL)[-1][2])["provenance"]["draft"]["provenance"]
    assert o.status == "drafted" and prov["attempts"] == 2 and prov["usage"]["input_tokens"] == 2400


def test_401_stops_the_job_at_once_with_a_clear_message(store, fast):
    fake = FakeAPI()
    fake.script = [status(401)] * 5
    ids = _qids(store, 4)
    summary = RUN.draft_bank(store, BANK, fake.client(), DraftOptions(which=ids, concurrency=1), user="mia")
    assert "refused the key (401)" in summary.stopped and "ANTHROPIC_API_KEY" in summary.stopped
    assert len(_posts(fake)) == 1 and summary.count("drafted") == 0 and summary.count("not_done") == 4
    fake.script = [offline]
    summary = RUN.draft_bank(store, BANK, fake.client(), DraftOptions(which=ids, concurrency=1), user="mia")
    assert "cannot reach the Anthropic API" in summary.stopped and len(_posts(fake)) == 2


def test_429_honours_retry_after_and_529_and_timeouts_are_retried_with_backoff(store, fast):
    fake = FakeAPI()
    fake.script = [status(429, {"retry-after": "0.4"})]
    t0 = time.perf_counter()
    (o,) = RUN.draft_bank(store, BANK, fake.client(), user="mia").outcomes
    assert o.status == "drafted" and time.perf_counter() - t0 >= 0.4 and len(_posts(fake)) == 2
    fake.script = [status(529), timeout]
    (o,) = RUN.draft_bank(store, BANK, fake.client(), DraftOptions(redraft=True), user="mia").outcomes
    assert o.status == "drafted" and len(_posts(fake)) == 5
    # a 400 is not retried: the item is reported as failed and the job goes on
    fake.script = [status(400)]
    (o,) = RUN.draft_bank(store, BANK, fake.client(), DraftOptions(redraft=True), user="mia").outcomes
    assert o.status == "failed" and "400" in o.message and len(_posts(fake)) == 6


def test_concurrency_keeps_four_requests_in_flight(store, fast):
    fake = FakeAPI(latency_s=0.2)
    ids = _qids(store, 8)
    t0 = time.perf_counter()
    summary = RUN.draft_bank(store, BANK, fake.client(), DraftOptions(which=ids, concurrency=4), user="mia")
    took = time.perf_counter() - t0
    assert summary.count("drafted") == 8 and took < 8 * 0.2 * 0.75  # sequential: 1.6 s; 4 in flight: 0.4 s
    assert {json.loads(_versions(store, q)[-1][2])["provenance"]["draft"]["provenance"]["model"] for q in ids} == {
        "claude-sonnet-5-5"
    }


def test_cancel_keeps_finished_drafts_and_a_second_run_resumes(store, fast):
    fake = FakeAPI(latency_s=0.05)
    ids = _qids(store, 6)
    cancel = threading.Event()

    def progress(done, total, message):
        if done == 2:
            cancel.set()

    first = RUN.draft_bank(
        store, BANK, fake.client(), DraftOptions(which=ids, concurrency=1), user="mia", cancel=cancel, progress=progress
    )
    assert first.cancelled and first.count("drafted") == 2 and first.count("not_done") == 4
    second = RUN.draft_bank(store, BANK, fake.client(), DraftOptions(which=ids, concurrency=2), user="mia")
    assert second.count("skipped") == 2 and second.count("drafted") == 4 and len(_posts(fake)) == 6


def test_a_batch_job_goes_through_create_poll_results(store, fast):
    fake = FakeAPI()
    fake.batch_script = ["in_progress", "ended"]
    ids = _qids(store, 2)
    summary = RUN.draft_bank_batch(store, BANK, fake.client(), DraftOptions(which=ids, poll_s=0), user="mia")
    assert summary.count("drafted") == 2 and summary.batch_id == "msgbatch_01Fake0001"
    calls = [(m, p) for m, p, _, _ in fake.requests]
    assert calls == [
        ("POST", "/v1/messages/batches"),
        ("GET", "/v1/messages/batches/msgbatch_01Fake0001"),
        ("GET", "/v1/messages/batches/msgbatch_01Fake0001"),
        ("GET", "/v1/messages/batches/msgbatch_01Fake0001"),  # results() looks the batch up for its results_url
        ("GET", "/v1/messages/batches/msgbatch_01Fake0001/results"),
    ]
    sent = fake.batches["msgbatch_01Fake0001"]["requests"]
    assert sorted(r["custom_id"] for r in sent) == sorted(f"item{i}-v1" for i in _item_ids(store, ids))
    assert all(r["params"]["system"][0]["cache_control"] == {"type": "ephemeral"} for r in sent)
    prov = json.loads(_versions(store, ids[0])[-1][2])["provenance"]["draft"]["provenance"]
    assert prov["mode"] == "batch" and prov["batch_id"] == "msgbatch_01Fake0001"
    assert prov["cost_usd"] == pytest.approx(ONE_REPLY_USD / 2)


def _item_ids(store, qids):
    return [store.db.execute("SELECT id FROM items WHERE qid = ?", [q]).fetchone()[0] for q in qids]


def test_a_cancelled_batch_is_resumed(store, fast):
    fake = FakeAPI()
    ids = _qids(store, 3)
    a, b, c = (f"item{i}-v1" for i in _item_ids(store, ids))
    # the run is interrupted while the batch runs: nothing is sent twice, the next run collects it
    cancel = threading.Event()
    fake.batch_script = ["in_progress"]
    first = RUN.draft_bank_batch(
        store,
        BANK,
        fake.client(),
        DraftOptions(which=ids, poll_s=5),
        user="mia",
        cancel=cancel,
        progress=lambda *_: cancel.set(),
    )
    assert first.cancelled and first.count("not_done") == 3 and len(fake.batches) == 1
    # meanwhile the batch was cancelled on the console: one request had finished, two were canceled
    fake.batch_outcomes = {b: "canceled", c: "canceled"}
    second = RUN.draft_bank_batch(store, BANK, fake.client(), DraftOptions(which=ids, poll_s=0), user="mia")
    assert len(fake.batches) == 1 and second.count("drafted") == 1 and second.count("not_done") == 2
    assert "canceled" in next(o.message for o in second.outcomes if o.status == "not_done")
    # the next run sends only the two canceled items, in a new batch
    fake.batch_outcomes = {}
    third = RUN.draft_bank_batch(store, BANK, fake.client(), DraftOptions(which=ids, poll_s=0), user="mia")
    assert third.count("drafted") == 2 and third.count("skipped") == 1 and len(fake.batches) == 2
    assert sorted(r["custom_id"] for r in fake.batches["msgbatch_01Fake0002"]["requests"]) == sorted([b, c])


def test_the_key_is_never_written_to_the_store_logs_or_output(store, fast, monkeypatch, capsys, caplog, tmp_path):
    from reviewer.cli import main
    from reviewer.drafting import cli as DCLI

    fake = FakeAPI()
    monkeypatch.setattr(DCLI, "_http_client", fake.http_client)
    ids = _qids(store, 2)
    path = store.path
    store.close()
    caplog.set_level("DEBUG")
    # the SDK's own debug dump of each request's options is left out: pytest's capture handler cannot format it
    caplog.set_level("INFO", logger="anthropic")
    code = main(["-v", "--db", str(path), "draft", BANK, "--items", *ids, "--user", "mia", "--json"])
    out = capsys.readouterr()
    assert code == 0 and json.loads(out.out)["drafted"] == 2, out.err
    assert all(h.get("authorization") == f"Bearer {KEY}" for _, _, _, h in fake.requests)  # sent to the API only
    export = tmp_path / "export"
    assert main(["--db", str(path), "bank", "export", BANK, str(export)]) == 0
    from reviewer.review.packages import export_package

    with Store(path) as again:  # a review package of the drafted items for an annotator
        api.assign(again, BANK, annotators=["ann"], k=1, seed=1, user="mia")
        assert export_package(again, BANK, annotator="ann", out=tmp_path / "ann.pkg", user="mia")["items"] >= 2
    texts = [out.out, out.err, caplog.text] + [
        p.read_bytes().decode("latin-1") for p in tmp_path.rglob("*") if p.is_file()
    ]
    assert texts and not any(KEY in t for t in texts)
    assert not any(KEY[10:30] in t for t in texts)


def test_without_a_key_the_verb_says_how_to_set_one(store, monkeypatch, capsys):
    from reviewer.cli import main

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr("reviewer.drafting.config.api_key", lambda: None)
    assert main(["--db", str(store.path), "draft", BANK, "--user", "mia"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no Anthropic API key") and "keyring set earthrecord-reviewer anthropic" in err


def test_only_a_maintainer_drafts(store, fast):
    with pytest.raises(Exception, match="draft is for maintainer, not annotator"):
        RUN.draft_bank(store, BANK, FakeAPI().client(), user="ann")


def test_the_dock_gets_the_draft_with_confidence_hidden_from_annotators_and_second_opinions_beside_it(store, fast):
    from reviewer.drafting import item_draft

    fake = FakeAPI()
    RUN.draft_bank(store, BANK, fake.client(), user="mia")
    for_mia = item_draft(store, f"{BANK}/{VISUAL}", user="mia")
    assert for_mia["version"] == 2 and for_mia["draft"]["confidence"] == 0.7 and for_mia["second_opinions"] == []
    assert for_mia["draft"]["model"] == "claude-sonnet-5-5" and for_mia["draft"]["prompt_version"] == "2"
    for_ann = item_draft(store, f"{BANK}/{VISUAL}", user="ann")
    assert for_ann["confidence_hidden"] and for_ann["draft"]["confidence"] is None
    assert for_ann["draft"]["caveats"] == ["one clear scene stands for each year"]
    # a second opinion on a computed item: in its log beside the reference, no new version, state unchanged
    computed = _qids(store, 1)[0]
    before = _versions(store, computed)
    summary = RUN.draft_bank(
        store, BANK, fake.client(), DraftOptions(which=[computed], second_opinion=True), user="mia"
    )
    assert summary.count("drafted") == 1 and _versions(store, computed) == before
    shown = item_draft(store, f"{BANK}/{computed}", user="mia")
    assert shown["draft"] is None and len(shown["second_opinions"]) == 1
    assert shown["second_opinions"][0]["conclusion"].startswith("Grassland")


def test_the_cli_batch_job_reports_its_batch(store, fast, monkeypatch, capsys):
    from reviewer.cli import main
    from reviewer.drafting import cli as DCLI

    fake = FakeAPI()
    fake.batch_script = ["in_progress", "ended"]
    monkeypatch.setattr(DCLI, "_http_client", fake.http_client)
    ids = _qids(store, 2)
    path = store.path
    store.close()
    args = ["--db", str(path), "draft", BANK, "--items", *ids, "--batch", "--poll", "0", "--user", "mia"]
    assert main([*args, "--no-progress"]) == 0
    assert f"{BANK}: drafted 2 through batch msgbatch_01Fake0001, skipped 0" in capsys.readouterr().out
    assert main([*args, "--no-progress"]) == 0  # nothing left: no second batch
    assert "drafted 0, skipped 2" in capsys.readouterr().out and len(fake.batches) == 1


def _run_process(store, fake, ids, *, concurrency=1, cancel_after=None):
    """`reviewer draft --progress-json` in a process of its own (as the app runs it), the fake API behind a local
    server; a `cancel` line is written once `cancel_after` progress lines came. Returns (lines, exit status)."""
    import os
    import subprocess

    from reviewer.drafting.cli import command

    argv = command(BANK, db=str(store.path), user="mia", which=ids, concurrency=concurrency)
    with fake.serve() as url:
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": url}
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        lines = []
        for raw in proc.stdout:
            lines.append(json.loads(raw))
            if cancel_after is not None and sum("progress" in d for d in lines) == cancel_after:
                proc.stdin.write(b"cancel\n")
                proc.stdin.flush()
        proc.wait(timeout=120)
        err = proc.stderr.read().decode()
    assert KEY not in err and KEY not in json.dumps(lines)
    return lines, proc.returncode, err


def test_the_verb_in_a_process_of_its_own_reports_json_lines_and_cancels_on_a_line(store):
    """The app's Drafts action runs `reviewer draft --progress-json` as a process: one JSON object a line (each
    item's progress, then the summary), real renders in that process; a `cancel` line keeps the drafts finished
    and a second run resumes with the rest."""
    ids = _qids(store, 5)
    fake = FakeAPI(latency_s=0.3)
    lines, code, err = _run_process(store, fake, ids, cancel_after=2)
    progress = [d["progress"] for d in lines if "progress" in d]
    summary = lines[-1]["summary"]
    assert code == 0, err
    assert summary["cancelled"] and summary["drafted"] >= 2 and summary["drafted"] + summary["not_done"] == 5
    assert [p["done"] for p in progress] == list(range(1, len(progress) + 1)) and progress[0]["total"] == 5
    first = summary["drafted"]
    lines, code, err = _run_process(store, FakeAPI(), ids, concurrency=2)
    summary = lines[-1]["summary"]
    assert code == 0, err
    assert summary["skipped"] == first and summary["drafted"] == 5 - first and not summary["cancelled"]
    assert sum(1 for q in ids if _versions(store, q)[-1][1] == "drafted") == 5


# ----------------------------------------------------------------------------- reviewing a draft


def _state(store, qid):
    return store.db.execute("SELECT state FROM items WHERE qid = ?", [qid]).fetchone()[0]


def _events(store, qid, action):
    rows = store.db.execute(
        "SELECT e.detail FROM events e JOIN items i ON i.id = e.item WHERE i.qid = ? AND e.action = ? ORDER BY e.id",
        [qid, action],
    ).fetchall()
    return [json.loads(r[0]) for r in rows]


def test_a_draft_is_accepted_edited_or_rejected_with_a_reason_that_routes_the_item(store, fast, capsys):
    """Accept: the draft's answer becomes the reference in a new version; reject with a redraft reason: the item
    goes back to drafting and `--items rejected` drafts it again (a new draft version); reject with a manual reason:
    it waits for a reference set by hand, which a correction gives. Each outcome is an event; the maintainer's
    queue counts the items waiting."""
    from reviewer.cli import main
    from reviewer.errors import ReviewError
    from reviewer.review.drafts import draft_queue, review_draft

    api.add_user(store, "eve", "expert", by="mia")
    other = _qids(store, 2, skip=(VISUAL,))
    keys = [VISUAL, *other]
    fake = FakeAPI()
    RUN.draft_bank(store, BANK, fake.client(), DraftOptions(which=keys), user="mia")
    assert set(draft_queue(store, BANK, user="mia")["to_review"]) == {f"{BANK}/{q}" for q in keys}
    with pytest.raises(ReviewError, match="only expert or maintainer may review drafts"):
        review_draft(store, VISUAL, user="ann", verdict="accept")

    # accept: the fake's reply answers the first option of each category, so 'bare soil' for the land cover
    out = review_draft(store, VISUAL, user="eve", verdict="accept")
    versions = _versions(store, VISUAL)
    assert [o for _, o, _ in versions] == ["generated", "drafted", "corrected"] and out["new_version"] == 3
    q = json.loads(versions[-1][2])
    assert q["reference"]["cover"] == "bare soil" and "reference_pending" not in q["provenance"]
    assert q["provenance"]["draft_review"]["verdict"] == "accept" and _state(store, VISUAL) == "drafted"
    assert _events(store, VISUAL, "draft_accept")[0]["by"] == "eve"
    with pytest.raises(ReviewError, match="reviewed already"):
        review_draft(store, VISUAL, user="eve", verdict="reject", reason="misread_imagery")

    # reject for a redraft; the reason is checked against the codebook
    redo, manual = other
    with pytest.raises(ReviewError, match="unknown draft reject reason 'blurry'.*misread_imagery"):
        review_draft(store, redo, user="eve", verdict="reject", reason="blurry")
    out = review_draft(store, redo, user="eve", verdict="reject", reason="misread_imagery", rationale="water is bright")
    assert (out["route"], out["state"]) == ("redraft", "redraft") and _state(store, redo) == "redraft"
    assert _events(store, redo, "draft_reject_redraft")[0]["reason"] == "misread_imagery"

    # reject for a manual reference, then the reference set by hand
    out = review_draft(store, manual, user="mia", verdict="reject", reason="beyond_the_imagery")
    assert out["state"] == "needs_reference"
    queue = draft_queue(store, BANK, user="mia")
    assert queue["redraft"] == [f"{BANK}/{redo}"] and queue["needs_reference"] == [f"{BANK}/{manual}"]
    assert queue["to_review"] == [] and {r["route"] for r in queue["reasons"]} == {"redraft", "manual"}

    # `reviewer draft --items rejected` drafts exactly the item sent back, as a new version
    before = len(_posts(fake))
    summary = RUN.draft_bank(store, BANK, fake.client(), DraftOptions(which=["rejected"]), user="mia")
    assert summary.count("drafted") == 1 and summary.outcomes[0].key == f"{BANK}/{redo}"
    assert len(_posts(fake)) == before + 1
    assert [o for _, o, _ in _versions(store, redo)] == ["generated", "drafted", "drafted"]
    assert _state(store, redo) == "drafted" and draft_queue(store, BANK, user="mia")["to_review"] == [f"{BANK}/{redo}"]

    ref = json.loads(_versions(store, manual)[-1][2])["reference"]
    path = store.path
    store.close()
    args = ["--db", str(path), "review", "draft", f"{BANK}/{manual}", "--user", "eve"]
    assert main([*args, "--correct", json.dumps({"reference": ref}), "--rationale", "from field records"]) == 0
    assert f"{BANK}/{manual}: draft correct, new version 3; now drafted" in capsys.readouterr().out
    assert main(["--db", str(path), "review", "drafts", BANK, "--user", "mia"]) == 0
    said = capsys.readouterr().out
    assert f"to review: 1 ({BANK}/{redo})" in said and "redraft: 0" in said and "needs reference: 0" in said
