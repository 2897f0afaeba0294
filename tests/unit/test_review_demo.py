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
    n = len(real)
    assert n >= 20
    visual = next(
        q
        for q in bank.questions
        if q["reference_source"] == "visual" and (q.get("provenance") or {}).get("reference_pending")
    )
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
    # n real items each; gold share 0.1 of the queue: round(0.1 * n / 0.9) >= 2 for n >= 14, capped by the 2 gold items
    assert f"assigned {n} items" in out and f"ann {n + 2}, bob {n + 2}" in out

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
    assert (rows["ann"]["done"], rows["ann"]["assigned"]) == (n + 2, n + 2)
    assert (rows["ann"]["gold_correct"], rows["ann"]["gold_decided"]) == (2, 2)
    assert (rows["bob"]["gold_correct"], rows["bob"]["gold_decided"]) == (1, 2)
    assert status["states"]["flagged"] == 2
    assert sum(status["states"].values()) == n

    # agreement over the n real items: they differ on 2, ann accepted all n (the prevalence paradox). Worked by
    # hand for this design; with n = 25: p_o 0.92, Fleiss -0.041667, alpha -0.020833, AC1 0.913345
    fig = json.loads(_run(capsys, db, "review", "agreement", name, "--user", "mia", "--json"))["overall"]
    assert fig["items"] == n and fig["raters"] == 2
    p_o = (n - 2) / n
    assert fig["percent_agreement"] == pytest.approx(p_o)
    assert fig["cohen"][0]["kappa"] == pytest.approx(0.0, abs=1e-9)  # ann's one category: p_e = p_o
    # Fleiss: 2n ratings, 2 flags: p_flag = 1/n; P_e = (1 - 1/n)^2 + (1/n)^2
    pe = (1 - 1 / n) ** 2 + (1 / n) ** 2
    assert fig["fleiss_kappa"] == pytest.approx((p_o - pe) / (1 - pe), abs=1e-9)
    # Krippendorff: D_o = 2 disagreeing items x 2 ordered pairs / 2n values; D_e = 2 * (2n-2) * 2 / (2n (2n-1))
    d_o, d_e = 4 / (2 * n), 2 * (2 * n - 2) * 2 / (2 * n * (2 * n - 1))
    assert fig["krippendorff_alpha"] == pytest.approx(1 - d_o / d_e, abs=1e-9)
    # Gwet AC1: pi_accept = (1 + (n-2)/n) / 2; p_e = 2 pi (1 - pi)
    pi = (1 + (n - 2) / n) / 2
    pe = 2 * pi * (1 - pi)
    assert fig["gwet_ac1"] == pytest.approx((p_o - pe) / (1 - pe), abs=1e-9)
    assert fig["gwet_ac1"] > 0.85 and abs(fig["fleiss_kappa"]) < 0.1  # the paradox

    # stage 2 by disagreement: the two split items first, then audit items (the visual item among them)
    queue = json.loads(_run(capsys, db, "review", "queue", name, "--user", "eve", "--json"))
    assert [r["kind"] for r in queue[:2]] == ["split", "split"]
    assert {r["id"] for r in queue[:2]} == set(flagged)
    assert {r["kind"] for r in queue[2:]} == {"audit"}
    assert visual["id"] in [r["id"] for r in queue[2:]]  # a visual draft always goes to an expert
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
    _run(
        capsys,
        db,
        "review",
        "adjudicate",
        f"{name}/{visual['id']}",
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
