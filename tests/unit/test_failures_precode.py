"""LLM pre-coding through the real anthropic client on a mocked HTTP transport (tests/unit/drafting_fake.py answers
in the Messages API's JSON format), the seeded check sample, blindness of the expert's view, and the agreement
figures against hand-worked values. The coding set is test_failures.py's (runs s001-s003 of model B, p001-p005).
"""

from __future__ import annotations

import hashlib
import json

import pytest
from drafting_fake import KEY, FakeAPI, status
from test_failures import all_runs, make_bank

from reviewer.errors import ReviewError
from reviewer.failures.check import agreement, check_sample, draw_check
from reviewer.failures.codebook import FAILURES_DIR
from reviewer.failures.coding import FailureCode, code_run, insert_code, latest, run_view
from reviewer.failures.precode import precode_set
from reviewer.failures.sample import build_set
from reviewer.review import api
from reviewer.store import Store

#: the replies in set order: s001-s003 (step codes), p001-p005 (sensor codes)
REPLIES = [
    ("data", "B method on q1", True),
    ("data", "500 m land-cover map", False),
    ("analysis", "B method on q3", False),
    ("nothing", "", True),
    ("nothing", "", False),
    ("attributes", "C method on q1", False),  # p003-p005 are C's beyond runs
    ("attributes", "C method on q1", False),
    ("attributes", "C method on q1", False),
]


def reply(code, quote, uncertain, why="fits"):
    return json.dumps({"code": code, "quote": quote, "uncertain": uncertain, "why": why})


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("precode")
    bank = make_bank(tmp / "bank")
    runs = tmp / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    return build_set([runs], bank, per_model=12, seed=3)


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "review.sqlite") as s:
        api.add_user(s, "mia", "maintainer")
        api.add_user(s, "eve", "expert", by="mia")
        yield s


def fake_with(replies):
    fake = FakeAPI()
    fake.script = [reply(*r) for r in replies]
    return fake


def posts(fake):
    return [r for r in fake.requests if r[0] == "POST"]


def test_good_replies_are_stored_with_provenance_and_a_second_run_resumes(store, doc):
    fake = fake_with(REPLIES)
    s = precode_set(store, doc, fake.client(), user="mia", concurrency=1)
    assert (s["precoded"], s["invalid"], s["failed"], s["stopped"]) == (8, 0, 0, None)
    body = posts(fake)[1][2]  # s002's request
    assert body["model"] == "claude-sonnet-5-5" and body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["output_config"]["format"]["schema"]["properties"]["code"]["enum"][:2] == ["data", "time_sampling"]
    text = body["messages"][0]["content"][1]["text"]
    assert "Reference (area): 100 (accepted range 95 to 105)" in text and "The run's answer: 50 (wrong)" in text
    assert "- no calibration was applied." in text  # a candidate statement of the keyword passes
    sensor_enum = posts(fake)[3][2]["output_config"]["format"]["schema"]["properties"]["code"]["enum"]
    assert sensor_enum == ["attributes", "reports_break", "separate", "generic", "nothing"]
    row = latest(store, doc["id"], "s002", "llm")
    assert (row["code"], row["quote"], row["uncertain"], row["coder"]) == (
        "data",
        "500 m land-cover map",
        0,
        "claude-sonnet-5-5",
    )
    prov = json.loads(row["provenance"])
    assert prov["prompt_sha256"] == hashlib.sha256((FAILURES_DIR / "precode-1.json").read_bytes()).hexdigest()
    assert prov["request_id"] == "req_fake000002" and prov["attempts"] == 1
    # second reply: 1200 input at $2, 350 output at $10, 900 cache-read at $0.20 per million tokens
    assert prov["cost_usd"] == pytest.approx((1200 * 2 + 350 * 10 + 900 * 0.2) / 1e6)
    assert latest(store, doc["id"], "p004", "llm")["quote"] == "C method on q1"
    again = precode_set(store, doc, fake.client(), user="mia", concurrency=1)
    assert (again["skipped"], again["precoded"], len(posts(fake))) == (8, 0, 8)
    assert KEY.encode() not in store.path.read_bytes()


def test_malformed_reply_is_asked_again_then_reported(store, doc):
    one = {**doc, "runs": doc["runs"][1:2]}
    fake = FakeAPI()
    fake.script = ["this is not json {", reply("data", "500 m land-cover map", False)]
    s = precode_set(store, one, fake.client(), user="mia", concurrency=1)
    assert s["precoded"] == 1 and json.loads(latest(store, doc["id"], "s002", "llm")["provenance"])["attempts"] == 2
    retry = posts(fake)[1][2]["messages"]
    assert (
        retry[1]["content"][0]["text"] == "this is not json {" and "failed validation" in retry[2]["content"][0]["text"]
    )
    fake.script = [reply("data", "a quote the run never wrote", False), reply("weather", "500 m land-cover map", False)]
    s = precode_set(store, one, fake.client(), user="mia", concurrency=1, redo=True)
    assert s["invalid"] == 1 and "quote is not a passage" in s["runs"][0]["message"]
    assert "'weather' is not one of data" in s["runs"][0]["message"]
    assert store.db.execute("SELECT count(*) FROM failure_codes").fetchone()[0] == 1  # nothing stored for it


def test_rate_limited_request_is_retried_and_a_refused_key_stops(store, doc):
    one = {**doc, "runs": doc["runs"][:1]}
    fake = FakeAPI()
    fake.script = [status(429, {"retry-after": "0"}), reply("data", "B method on q1", True)]
    s = precode_set(store, one, fake.client(), user="mia", concurrency=1)
    assert s["precoded"] == 1 and len(posts(fake)) == 2
    fake.script = [status(401)] * 3
    s = precode_set(store, {**doc, "runs": doc["runs"][1:3]}, fake.client(), user="mia", concurrency=1)
    assert s["precoded"] == 0 and s["not_done"] == 2 and "refused the key (401)" in s["stopped"]
    with pytest.raises(ReviewError, match="eve is expert: only maintainer may pre-code"):
        precode_set(store, one, fake.client(), user="eve")


def test_the_experts_view_holds_no_llm_code(store, doc):
    before = {rid: run_view(doc, rid, store=store, user="eve") for rid in ("s001", "s002", "p001")}
    precode_set(store, doc, fake_with(REPLIES).client(), user="mia", concurrency=1)
    draw_check(store, doc, "steps", seed=1, user="mia")
    for rid, view in before.items():
        after = run_view(doc, rid, store=store, user="eve")
        assert after == view  # key by key: pre-coding and the check draw change nothing the expert sees
        assert set(after) == {
            "set",
            "run",
            "scheme",
            "model",
            "pass",
            "condition",
            "pair",
            "outcome",
            "alteration",
            "question",
            "answer",
            "answer_fields",
            "right",
            "confidence",
            "method",
            "caveats",
            "other_passes",
            "work",
            "codes",
            "rule",
            "my_code",
        }
    assert check_sample(store, doc, "steps") == ["s001", "s002", "s003"]  # ids only: no reason, no code


def test_check_sample_takes_every_uncertain_run_and_up_to_two_per_code(store, doc):
    precode_set(store, doc, fake_with(REPLIES).client(), user="mia", concurrency=1)
    rows = draw_check(store, doc, "pairs", seed=4, user="mia")
    # p001 uncertain; 'nothing' rest p002; 'attributes' rest p003-p005: two of three
    assert [r["reason"] for r in rows[:2]] == ["uncertain", "per_code"] and [r["run"] for r in rows[:2]] == [
        "p001",
        "p002",
    ]
    assert len(rows) == 4 and {r["run"] for r in rows[2:]} < {"p003", "p004", "p005"}
    with pytest.raises(ReviewError, match="drawn already"):
        draw_check(store, doc, "pairs", seed=4, user="mia")
    steps = draw_check(store, doc, "steps", seed=4, user="mia", uncertain=0)
    assert steps == [{"run": "s002", "reason": "per_code"}, {"run": "s003", "reason": "per_code"}]


def test_agreement_against_hand_values(store):
    doc = {"id": "fs-000000000000", "runs": [{"id": f"s00{i}", "part": "steps", "model": "X"} for i in range(1, 9)]}
    pairs = [("data", "data"), ("data", "data"), ("data", "analysis"), ("analysis", "analysis"),
             ("analysis", "analysis"), ("analysis", "analysis"), ("close_call", "close_call"),
             ("close_call", "analysis")]  # fmt: skip
    for run, (llm, _) in zip(doc["runs"], pairs, strict=True):
        insert_code(store, doc["id"], run, FailureCode(llm, "llm", "m", quote="q", uncertain=False), event_user="mia")
    assert len(draw_check(store, doc, "steps", seed=0, user="mia", per_code=10)) == 8
    for run, (_, expert) in zip(doc["runs"][:-1], pairs[:-1], strict=True):
        code_run(store, doc, run["id"], expert, user="eve")
    a = agreement(store, doc, "steps", user="mia")
    assert (a["checked"], a["agree"], a["not_coded_yet"]) == (7, 6, ["s008"])
    code_run(store, doc, "s008", "analysis", user="eve", note="the test decided it")
    a = agreement(store, doc, "steps", user="mia")
    # po = 6/8; LLM margins data 3, analysis 3, close_call 2; expert data 2, analysis 5, close_call 1:
    # pe = (3*2 + 3*5 + 2*1) / 64 = 23/64; kappa = (48/64 - 23/64) / (41/64) = 25/41
    assert (a["checked"], a["agree"], a["percent"]) == (8, 6, 75.0)
    assert a["kappa"] == pytest.approx(25 / 41)
    assert a["table"][0] == [2, 0, 0, 1, 0, 0, 0] and a["table"][3] == [0, 0, 0, 3, 0, 0, 0]
    assert a["table"][4] == [0, 0, 0, 1, 1, 0, 0]
    assert [(d["run"], d["llm"], d["expert"], d["note"]) for d in a["disagreements"]] == [
        ("s003", "data", "analysis", None),
        ("s008", "close_call", "analysis", "the test decided it"),
    ]


def test_cli_precode_check_and_agreement(store, doc, tmp_path, capsys, monkeypatch):
    from reviewer.cli import main
    from reviewer.drafting import config
    from reviewer.failures.sample import write_set

    path, db = str(write_set(doc, tmp_path / "set.json")), str(store.path)
    monkeypatch.setattr(config, "api_key", lambda: None)
    assert main(["--db", db, "failures", "precode", path, "--user", "eve"]) == 2
    assert capsys.readouterr().err.startswith("error: user eve is expert: only maintainer may pre-code")
    assert main(["--db", db, "failures", "precode", path, "--user", "mia"]) == 2
    assert capsys.readouterr().err.startswith("error: no Anthropic API key: set ANTHROPIC_API_KEY")
    fake = fake_with(REPLIES)
    monkeypatch.setattr(config, "make_client", lambda: fake.client())
    assert main(["--db", db, "failures", "precode", path, "--user", "mia", "--concurrency", "1"]) == 0
    assert "8 coded, 0 skipped (coded already), 0 invalid replies, 0 failed, 0 not done" in capsys.readouterr().out
    assert main(["--db", db, "failures", "check", path, "--draw", "--seed", "1", "--user", "mia"]) == 0
    assert "3 runs (1 marked uncertain by the LLM, 2 by code from the rest)" in capsys.readouterr().out
    for rid, code in (("s001", "analysis"), ("s002", "data")):
        assert main(["--db", db, "failures", "code", path, "--run", rid, "--code", code, "--user", "eve"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "failures", "check", path, "--user", "eve"]) == 0
    assert capsys.readouterr().out.splitlines() == ["s001  coded analysis", "s002  coded data", "s003  to code"]
    assert main(["--db", db, "failures", "code", path, "--run", "s003", "--code", "analysis", "--user", "eve"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "failures", "agreement", path, "--user", "eve"]) == 2
    assert capsys.readouterr().err == "error: user eve is expert: only maintainer may see the LLM's codes\n"
    assert main(["--db", db, "failures", "agreement", path, "--user", "mia"]) == 0
    out = capsys.readouterr().out.splitlines()
    # LLM data, data, analysis; expert analysis, data, analysis: po 2/3, pe (2*1 + 1*2)/9 = 4/9, kappa (2/9)/(5/9)
    assert (
        out[0]
        == "steps: LLM and experts agree on 2 of 3 checked runs (66.7%); Cohen's kappa 0.400; 0 check runs not coded yet"
    )
    assert out[-1] == "disagree s001 (B): LLM data, eve analysis; quote: B method on q1"


def test_the_check_list_is_the_sample_with_the_experts_own_codes_only(store, doc, tmp_path, capsys):
    """What the dock's check mode and `reviewer failures check SET` list: the sampled runs and the expert's own code
    in force, never the draw's reason or the LLM's code; a run outside the sample is not shown in that mode."""
    from reviewer.cli import main
    from reviewer.failures.check import check_queue, check_view
    from reviewer.failures.sample import write_set

    for run in doc["runs"]:
        code = "analysis" if run["part"] == "steps" else "generic"
        entry = FailureCode(code, "llm", "m", quote="the LLM's quote", uncertain=run["id"] == "s003")
        insert_code(store, doc["id"], run, entry, event_user="mia")
    api.add_user(store, "max", "expert", by="mia")
    drawn = [r["run"] for r in draw_check(store, doc, "steps", seed=0, user="mia", per_code=1)]
    assert "s003" in drawn and len(drawn) == 2  # the uncertain run and one of the rest (all 'analysis')
    code_run(store, doc, drawn[0], "data", user="eve")
    code_run(store, doc, drawn[0], "question", user="eve")  # the correction is in force
    code_run(store, doc, drawn[0], "close_call", user="max")  # another expert's code is not eve's
    rows = check_queue(store, doc, "eve", "steps")
    assert [(r["run"], r["my_code"]) for r in rows] == [(drawn[0], "question"), (drawn[1], None)]
    assert all(set(r) == {"run", "part", "model", "question", "my_code"} for r in rows)
    assert check_queue(store, doc, "eve", "pairs") == []  # not drawn for the pairs part
    outside = next(r["id"] for r in doc["runs"] if r["part"] == "steps" and r["id"] not in drawn)
    with pytest.raises(ReviewError, match=f"run {outside} is not in the check sample"):
        check_view(store, doc, outside, user="eve")
    view = check_view(store, doc, drawn[0], user="eve")
    assert view["my_code"] == {"code": "question", "note": None} and "the LLM's quote" not in json.dumps(view)
    path = write_set(doc, tmp_path / "set.json")
    capsys.readouterr()
    assert main(["--db", str(store.path), "failures", "check", str(path), "--user", "eve"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{drawn[0]}  coded question", f"{drawn[1]}  to code"]
