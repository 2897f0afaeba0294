"""The whole two-stage review, from the CLI, on the generated demo bank (the review-core issue's 'done')."""

import json

import bank_factory as bf
import pytest

from reviewer.cli import main

GOLD_IDS = ("gold-good", "gold-bad")


def _run(capsys, db, *argv):
    assert main(["--db", db, *argv]) == 0, argv
    return capsys.readouterr().out


def _gold(path, site):
    good = bf.trend_question("gold-good", site_id=site)
    bad = bf.trend_question(
        "gold-bad",
        site_id=site,
        reference={"direction": "decrease", "trend": -0.28},
        reference_range={"trend": [-0.31, -0.25]},
        accept={"direction": ["decrease"]},
    )
    path.write_text(
        json.dumps({"question": good, "verdict": "accept"})
        + "\n"
        + json.dumps({"question": bad, "verdict": "flag", "reasons": ["wrong_reference"], "note": "sign flipped"})
        + "\n"
    )
    return path


def test_two_stage_review_end_to_end_on_the_demo_bank(demo, tmp_path, capsys, monkeypatch):
    secret = "sk-ant-api03-SENTINEL-never-stored"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    db = str(tmp_path / "review.sqlite")
    bank = demo["bank"]
    name = bank.name
    real = [q["id"] for q in bank.questions]
    assert len(real) == 25
    _run(capsys, db, "users", "add", "mia", "--role", "maintainer")
    for user, role in (("ann", "annotator"), ("bob", "annotator"), ("eve", "expert")):
        _run(capsys, db, "users", "add", user, "--role", role, "--user", "mia")
    _run(capsys, db, "bank", "import", str(demo["out"]), "--user", "mia")
    gold = _gold(tmp_path / "gold.jsonl", bank.questions[0]["site"])
    out = _run(
        capsys,
        db,
        "review",
        "assign",
        name,
        "--annotators",
        "ann,bob",
        "--k",
        "2",
        "--seed",
        "11",
        "--gold",
        str(gold),
        "--gold-share",
        "0.1",
        "--user",
        "mia",
    )
    # 25 real items each; gold share 0.1 of the queue: round(0.1 * 25 / 0.9) = 3, capped by the 2 gold items
    assert "assigned 25 items" in out and "ann 27, bob 27" in out

    def work(user, choose):
        while True:
            view = json.loads(_run(capsys, db, "review", "next", name, "--user", user, "--json"))
            if view is None:
                return
            argv = choose(view)
            _run(capsys, db, "review", "decide", view["item"], "--user", user, "--version", str(view["version"]), *argv)

    # ann accepts everything but the planted bad gold item
    work("ann", lambda v: ["--flag", "wrong_reference"] if v["id"] == "gold-bad" else ["--accept"])
    # bob accepts his first real item, takes it back, then flags it with a suggested correction; he flags
    # one more real item and accepts all the rest (the bad gold item too: a miss)
    flagged: list[str] = []
    first = json.loads(_run(capsys, db, "review", "next", name, "--user", "bob", "--json"))
    while first["id"] in GOLD_IDS:
        _run(capsys, db, "review", "decide", first["item"], "--user", "bob", "--accept")
        first = json.loads(_run(capsys, db, "review", "next", name, "--user", "bob", "--json"))
    _run(capsys, db, "review", "decide", first["item"], "--user", "bob", "--accept")
    assert "took back accept" in _run(capsys, db, "review", "undo", name, "--user", "bob")
    fix = json.dumps({"text": first["question"]["text"] + " Answer for the whole site.", "reason": "say the region"})
    _run(
        capsys,
        db,
        "review",
        "decide",
        first["item"],
        "--user",
        "bob",
        "--flag",
        "format_wording",
        "--comment",
        "which region?",
        "--correct",
        fix,
    )
    flagged.append(first["id"])

    def bob(view):
        if view["id"] not in GOLD_IDS and len(flagged) < 2:
            flagged.append(view["id"])
            return ["--flag", "wrong_reference,ambiguous_evidence"]
        return ["--accept"]

    work("bob", bob)

    status = json.loads(_run(capsys, db, "review", "status", name, "--user", "mia", "--json"))
    rows = {r["user"]: r for r in status["annotators"]}
    assert (rows["ann"]["done"], rows["ann"]["assigned"]) == (27, 27)
    assert (rows["ann"]["gold_correct"], rows["ann"]["gold_decided"]) == (2, 2)
    assert (rows["bob"]["gold_correct"], rows["bob"]["gold_decided"]) == (1, 2)
    assert status["states"]["flagged"] == 2
    assert sum(status["states"].values()) == 25

    # agreement over the 25 real items: they differ on 2, ann accepted all 25 (the prevalence paradox)
    fig = json.loads(_run(capsys, db, "review", "agreement", name, "--user", "mia", "--json"))["overall"]
    assert fig["items"] == 25 and fig["raters"] == 2
    assert fig["percent_agreement"] == pytest.approx(23 / 25)
    assert fig["cohen"][0]["kappa"] == pytest.approx(0.0, abs=1e-9)  # ann's one category: p_e = p_o
    # Fleiss: p = 48/50, 2/50; P_e = 0.9216 + 0.0016 = 0.9232; (0.92 - 0.9232) / 0.0768 = -0.041667
    assert fig["fleiss_kappa"] == pytest.approx(-0.041667, abs=1e-5)
    # Krippendorff: D_o = 4/50, D_e = 2*48*2/(50*49) = 0.078367; 1 - 0.08/0.078367 = -0.020833
    assert fig["krippendorff_alpha"] == pytest.approx(-0.020833, abs=1e-5)
    # Gwet AC1: pi = 0.96; p_e = 2*0.96*0.04 = 0.0768; (0.92 - 0.0768) / 0.9232 = 0.913345
    assert fig["gwet_ac1"] == pytest.approx(0.913345, abs=1e-5)

    # stage 2 by disagreement: the two split items first, then audit items (the visual item among them)
    queue = json.loads(_run(capsys, db, "review", "queue", name, "--user", "eve", "--json"))
    assert [r["kind"] for r in queue[:2]] == ["split", "split"]
    assert {r["id"] for r in queue[:2]} == set(flagged)
    assert {r["kind"] for r in queue[2:]} == {"audit"}
    assert "demo-core-seed0-26" in [r["id"] for r in queue[2:]]  # a visual draft always goes to an expert
    shown = json.loads(_run(capsys, db, "review", "show", f"{name}/{first['id']}", "--user", "eve", "--json"))
    assert [d["annotator"] for d in shown["stage1"]] == ["annotator 1", "annotator 2"]
    assert shown["stage1"][1]["correction"]["reason"] == "say the region"
    _run(
        capsys,
        db,
        "review",
        "adjudicate",
        f"{name}/{first['id']}",
        "--user",
        "eve",
        "--correct",
        json.dumps({"text": first["question"]["text"] + " Answer for the whole site."}),
        "--rationale",
        "bob is right",
    )
    _run(
        capsys,
        db,
        "review",
        "adjudicate",
        f"{name}/{flagged[1]}",
        "--user",
        "eve",
        "--reject",
        "wrong_reference",
        "--rationale",
        "methods disagree",
    )
    visual = next(q for q in bank.questions if q["id"] == "demo-core-seed0-26")
    _run(
        capsys,
        db,
        "review",
        "adjudicate",
        f"{name}/demo-core-seed0-26",
        "--user",
        "eve",
        "--correct",
        json.dumps({"reference": visual["reference"]}),
        "--rationale",
        "the imagery shows the draft is right",
    )

    log = _run(capsys, db, "review", "log", f"{name}/{first['id']}", "--user", "mia")
    steps = [
        "version 1 (generated",
        "mia item_add",
        "mia assign",
        "bob decide v1 -> accept",
        "bob undo",
        "bob decide v1 -> flag",
        "eve adjudicate",
        "version 2 (corrected by eve",
        "adjudicate_correct",
    ]
    at = [log.index(s) for s in steps]
    assert at == sorted(at), log
    assert "[corrected, current version 2]" in log
    assert "chain intact" in _run(capsys, db, "review", "verify-log")
    # the store never holds a secret from the environment (main file and its write-ahead log)
    for path in tmp_path.glob("review.sqlite*"):
        assert secret.encode() not in path.read_bytes(), path
