"""Freeze and verify: only finally decided items, byte-stable, qc.json pinned; a frozen item is read-only."""

import json

import pytest
from test_review_workflow import BANK, _state, _store

from reviewer.cli import main
from reviewer.errors import BankError, ReviewError
from reviewer.review import api
from reviewer.review.freeze import freeze

FILES = ("questions.jsonl", "sites.jsonl", "pairs.jsonl", "qc.json", "manifest.json")


def _reviewed(tmp_path):
    """4 items: q000 consensus, q001 rejected, q002 corrected, q003 accepted after a split."""
    store = _store(tmp_path, n=4)
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    api.set_rule(store, BANK, user="mia", audit_share=0.0)
    plan = {
        "q000": ("accept", "accept"),
        "q001": ("flag", "flag"),
        "q002": ("flag", "accept"),
        "q003": ("accept", "flag"),
    }
    for qid, verdicts in plan.items():
        for user, verdict in zip(("ann", "bob"), verdicts, strict=True):
            api.decide(
                store, qid, api.Decision(verdict, reasons=["wrong_reference"] if verdict == "flag" else None), user=user
            )
    return store


def _adjudicate_all(store):
    api.adjudicate(store, "q001", api.Decision("reject", reasons=["wrong_reference"], rationale="no lake"), user="eve")
    api.adjudicate(
        store, "q002", api.Decision("correct", correction={"reference": {"trend": 0.29}}, rationale="0.29"), user="eve"
    )
    api.adjudicate(store, "q003", api.Decision("accept", rationale="holds"), user="eve")


def test_freeze_refuses_undecided_items_and_lists_them(tmp_path, capsys):
    store = _reviewed(tmp_path)
    with pytest.raises(
        ReviewError, match=r"3 item\(s\) lack a final decision: rb/q001 \(flagged\), rb/q002 \(flagged\)"
    ):
        freeze(store, BANK, version="1", out=tmp_path / "frozen", user="mia")
    assert not (tmp_path / "frozen").exists()
    api.adjudicate(store, "q001", api.Decision("reject", reasons=["other"], rationale="x"), user="eve")
    db = str(tmp_path / "review.sqlite")
    assert main(["--db", db, "freeze", BANK, "--version", "1", "--out", str(tmp_path / "f"), "--user", "mia"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "2 item(s) lack a final decision" in err
    with pytest.raises(ReviewError, match="only maintainer may freeze"):
        freeze(store, BANK, version="1", out=tmp_path / "f", user="eve")


def test_freeze_writes_accepted_and_corrected_items_with_qc(tmp_path, capsys):
    store = _reviewed(tmp_path)
    _adjudicate_all(store)
    agreement = api.agreement(store, BANK, user="mia")
    events_before = store.db.execute("SELECT count(*) FROM events").fetchone()[0]
    db = str(tmp_path / "review.sqlite")
    assert main(["--db", db, "freeze", BANK, "--version", "1", "--out", str(tmp_path / "v1"), "--user", "mia"]) == 0
    assert "froze rb version 1" in capsys.readouterr().out
    out = tmp_path / "v1"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["frozen"] is True and manifest["counts"] == {"questions": 3, "sites": 1, "pairs": 0}
    assert set(manifest["files"]) == {"questions.jsonl", "sites.jsonl", "pairs.jsonl", "qc.json"}
    questions = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert [q["id"] for q in questions] == ["q000", "q002", "q003"]  # q001 rejected: out
    assert questions[1]["reference"]["trend"] == 0.29  # the corrected version
    qc = json.loads((out / "qc.json").read_text())
    assert qc["counts"] == {
        "items": 4,
        "in_bank": 3,
        "stage1": {"consensus_accepted": 1, "flagged": 3, "audited": 0},
        "outcomes": {"accepted": 1, "consensus_accepted": 1, "corrected": 1, "rejected": 1},
    }
    assert qc["adjudicated_by"] == {"eve": 3}
    assert qc["removed"] == [
        {"id": "q001", "outcome": "rejected", "by": "eve", "reasons": ["wrong_reference"], "rationale": "no lake"}
    ]
    assert qc["routing"] == {
        "k": 2,
        "seed": 1,
        "audit_share": 0.0,
        "adjudicate_share": 1.0,
        "rest_rule": "open",
        "gold_share": 0.0,
    }
    assert qc["agreement"]["overall"]["percent_agreement"] == agreement["overall"]["percent_agreement"] == 0.5
    assert qc["agreement"]["overall"]["gwet_ac1"] == agreement["overall"]["gwet_ac1"]
    assert qc["events"]["count"] == events_before
    # per item: how it was settled (q000 both accepted; q002 corrected by eve; q003 split, eve accepted), the
    # stage-1 agreement (share of agreeing pairs: 1 pair of 2 annotators), people who decided (counted, not named)
    items = qc["items"]
    assert set(items) == {"q000", "q002", "q003"}
    assert [items[q]["settled"] for q in ("q000", "q002", "q003")] == ["unanimous", "corrected", "adjudicated"]
    assert items["q000"]["stage1"] == {"decisions": 2, "accepts": 2, "agreement": 1.0}
    assert items["q003"]["stage1"] == {"decisions": 2, "accepts": 1, "agreement": 0.0}
    assert [items[q]["people"] for q in ("q000", "q002", "q003")] == [2, 3, 3]
    assert items["q000"]["posterior_acceptable"] > items["q003"]["posterior_acceptable"]
    assert "ann" not in json.dumps(items) and "eve" not in json.dumps(items)
    assert {_state(store, q) for q in ("q000", "q002", "q003")} == {"frozen"} and _state(store, "q001") == "rejected"
    assert main(["verify", str(out)]) == 0
    assert capsys.readouterr().out.startswith("OK ")
    # the same store state frozen again, and the stored version exported: the same bytes
    assert main(["--db", db, "freeze", BANK, "--version", "1", "--out", str(tmp_path / "again"), "--user", "mia"]) == 0
    assert main(["--db", db, "bank", "export", BANK, str(tmp_path / "export"), "--version", "1"]) == 0
    for name in FILES:
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes(), name
        assert (tmp_path / "export" / name).read_bytes() == (out / name).read_bytes(), name


def test_a_frozen_item_is_read_only_and_an_edit_starts_the_next_version(tmp_path):
    store = _reviewed(tmp_path)
    _adjudicate_all(store)
    freeze(store, BANK, version="1", out=tmp_path / "v1", user="mia")
    with pytest.raises(ReviewError, match="frozen in bank rb version 1: read-only"):
        api.adjudicate(store, "q003", api.Decision("reject", reasons=["other"], rationale="second look"), user="eve")
    with pytest.raises(BankError, match="holds a frozen bank"):
        freeze(store, BANK, version="2", out=tmp_path / "v1", user="mia")  # never over a frozen folder
    api.reopen(store, "q003", user="mia", reason="new imagery")
    assert _state(store, "q003") == "in_review"
    with pytest.raises(ReviewError, match="version 1 is frozen and items changed since"):
        freeze(store, BANK, version="1", out=tmp_path / "v1b", user="mia")
    for user in ("ann", "bob"):
        api.decide(store, "q003", api.Decision("accept"), user=user)
    freeze(store, BANK, version="2", out=tmp_path / "v2", user="mia")
    assert main(["verify", str(tmp_path / "v2")]) == 0
    assert (tmp_path / "v1" / "questions.jsonl").read_bytes() == (tmp_path / "v2" / "questions.jsonl").read_bytes()
    assert json.loads((tmp_path / "v2" / "manifest.json").read_text())["version"] == "2"


@pytest.mark.parametrize("name", FILES)
def test_verify_catches_one_changed_byte_in_each_file(tmp_path, capsys, name):
    store = _reviewed(tmp_path)
    _adjudicate_all(store)
    freeze(store, BANK, version="1", out=tmp_path / "v1", user="mia")
    path = tmp_path / "v1" / name
    data = bytearray(path.read_bytes())
    if name == "manifest.json":
        at = data.index(b"sha256:") + 10  # one hex digit of a pinned hash
        data[at] = ord("0") if data[at] != ord("0") else ord("1")
    elif not data:
        data = bytearray(b"\n")  # pairs.jsonl is empty here: one byte more
    else:
        at = data.index(b"q0") if b"q0" in data else data.index(b"a24")
        data[at] = data[at] ^ 0x01  # 'q0' -> 'p0' or 'a24' -> '`24': one bit of one byte
    path.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "v1")]) == 2
    out = capsys.readouterr().out
    assert "sha256 does not match" in out


def test_score_refuses_a_bank_that_is_not_frozen_unless_draft(tmp_path, capsys):
    from test_scoring_metrics import all_runs, make_bank

    from reviewer.bank.io import BankContent, load_bank, write_bank

    frozen = load_bank(make_bank(tmp_path / "frozen"))
    write_bank(
        tmp_path / "draft",
        BankContent(
            frozen.name,
            frozen.version,
            frozen.questions,
            frozen.sites,
            frozen.pairs,
            frozen=False,
            created=frozen.manifest["created"],
        ),
    )
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps(r) + "\n" for r in all_runs()))
    argv = ["score", str(tmp_path / "draft"), str(runs), "--bootstrap", "50", "--no-report"]
    assert main([*argv, "--out", str(tmp_path / "r1")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not frozen" in err and "--draft" in err
    assert not (tmp_path / "r1").exists()
    assert main([*argv, "--out", str(tmp_path / "r2"), "--draft"]) == 0
    bank = json.loads((tmp_path / "r2" / "scores.json").read_text())["bank"]
    assert (bank["frozen"], bank["draft"], bank["version"]) == (False, True, frozen.version)
    assert (
        main(
            [
                "score",
                str(tmp_path / "frozen"),
                str(runs),
                "--bootstrap",
                "50",
                "--no-report",
                "--out",
                str(tmp_path / "r3"),
            ]
        )
        == 0
    )
    bank = json.loads((tmp_path / "r3" / "scores.json").read_text())["bank"]
    assert (bank["frozen"], bank["draft"]) == (True, False)


def test_freeze_never_writes_beside_someone_elses_files(tmp_path, capsys):
    store = _reviewed(tmp_path)
    _adjudicate_all(store)
    db = str(tmp_path / "review.sqlite")
    mine = tmp_path / "my-folder"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes\n")
    code = main(["--db", db, "freeze", BANK, "--version", "1", "--out", str(mine), "--user", "mia"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert str(mine) in err and "notes.txt" in err
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]  # nothing added
    assert _state(store, "q000") != "frozen"  # and nothing frozen in the store
    # an empty folder is fine; the same frozen bank written again into its own folder changes nothing
    (tmp_path / "empty").mkdir()
    assert main(["--db", db, "freeze", BANK, "--version", "1", "--out", str(tmp_path / "empty"), "--user", "mia"]) == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "empty").iterdir()}
    assert main(["--db", db, "freeze", BANK, "--version", "1", "--out", str(tmp_path / "empty"), "--user", "mia"]) == 0
    assert {p.name: p.read_bytes() for p in (tmp_path / "empty").iterdir()} == before


def test_qc_counts_the_annotators_confidence_apart_from_the_experts(tmp_path):
    """qc.json items.*.confidence: stage 1 and the expert apart. By hand: q000 ann high (her medium undone) + bob low,
    so eve audits it (a low-confidence accept) with medium; q002 ann medium + bob high, eve corrects with high; q003 ann
    high + bob high, eve accepts with low."""
    store = _store(tmp_path, n=4)
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    api.set_rule(store, BANK, user="mia", audit_share=0.0)
    api.decide(store, "q000", api.Decision("accept", confidence="medium"), user="ann")
    api.undo(store, BANK, user="ann")
    said = {
        "q000": (("accept", "high"), ("accept", "low")),
        "q001": (("flag", None), ("flag", "medium")),
        "q002": (("flag", "medium"), ("accept", "high")),
        "q003": (("accept", "high"), ("flag", "high")),
    }
    for qid, pair in said.items():
        for user, (verdict, level) in zip(("ann", "bob"), pair, strict=True):
            why = ["wrong_reference"] if verdict == "flag" else None
            api.decide(store, qid, api.Decision(verdict, reasons=why, confidence=level), user=user)
    api.adjudicate(store, "q001", api.Decision("reject", reasons=["wrong_reference"], rationale="x"), user="eve")
    fix = {"reference": {"trend": 0.29}}
    api.adjudicate(
        store, "q002", api.Decision("correct", correction=fix, rationale="0.29", confidence="high"), user="eve"
    )
    api.adjudicate(store, "q003", api.Decision("accept", rationale="holds", confidence="low"), user="eve")
    api.adjudicate(store, "q000", api.Decision("accept", rationale="clear", confidence="medium"), user="eve")
    freeze(store, BANK, version="1", out=tmp_path / "v1", user="mia")
    items = json.loads((tmp_path / "v1" / "qc.json").read_text())["items"]
    assert {q: items[q]["confidence"] for q in items} == {
        "q000": {"stage1": {"low": 1, "high": 1}, "expert": {"medium": 1}},
        "q002": {"stage1": {"medium": 1, "high": 1}, "expert": {"high": 1}},
        "q003": {"stage1": {"high": 2}, "expert": {"low": 1}},
    }
    assert main(["verify", str(tmp_path / "v1")]) == 0


def test_a_bank_frozen_before_the_confidence_split_still_verifies(tmp_path, capsys):
    """A frozen bank's bytes never change: a qc.json holding one count per level over both stages (as freeze wrote
    it before the split) stays valid; a confidence of neither shape is refused naming the field."""
    from test_scoring_metrics import make_bank
    from test_scoring_paired import _qc

    from reviewer.bank.io import BankContent, load_bank, write_bank
    from reviewer.errors import SchemaError

    full = load_bank(make_bank(tmp_path / "made"))
    qc = _qc([q["id"] for q in full.questions])
    qc["items"]["q1"]["confidence"] = {"high": 2, "low": 1}
    frozen = {"frozen": True, "created": "2026-11-30T12:00:00Z"}
    write_bank(tmp_path / "old", BankContent("tiny", "1", full.questions, full.sites, full.pairs, qc=qc, **frozen))
    assert main(["verify", str(tmp_path / "old")]) == 0
    assert capsys.readouterr().out.startswith("OK ")
    qc["items"]["q1"]["confidence"] = {"stage1": {"high": 2}}  # the expert's part missing
    with pytest.raises(SchemaError, match="items.q1.confidence"):
        write_bank(tmp_path / "bad", BankContent("tiny", "1", full.questions, full.sites, full.pairs, qc=qc, **frozen))
