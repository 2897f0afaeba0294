"""Annotator reliability and item posteriors (`reviewer review quality`): crowd-kit's models on stage-1 verdicts.

The simulation has a known truth and known annotator accuracies; the store test's figures are counted by hand.
"""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from test_review_workflow import BANK, _store

from reviewer.cli import main
from reviewer.review import api
from reviewer.review.quality import quality_settings, reliability

ACCURACY = {"ann_a": 0.95, "ann_b": 0.8, "ann_c": 0.6}


def _simulate(n=200, seed=30, prevalence=0.8):
    """3 annotators of known accuracy judge n items whose reference is acceptable with probability `prevalence`."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < prevalence
    decisions = []
    for i, acceptable in enumerate(truth):
        for name, acc in ACCURACY.items():
            says_acceptable = acceptable if rng.random() < acc else not acceptable
            verdict = "accept" if says_acceptable else "flag"
            decisions.append((f"q{i:03d}", name, verdict, [] if says_acceptable else ["wrong_reference"]))
    return truth, decisions


#: 30 EM steps (crowd-kit's pandas steps cost about 0.1 s each here whatever the size); GLAD is tested on fewer items
FAST = dataclasses.replace(quality_settings(), ds_iterations=30, glad_max_decisions=0)


@pytest.fixture(scope="module")
def simulated():
    truth, decisions = _simulate()
    return truth, decisions, reliability(decisions, settings=FAST)


def test_reliabilities_rank_the_annotators_and_posteriors_beat_majority_vote(simulated):
    truth, decisions, out = simulated
    rel = {name: a["reliability"] for name, a in out["annotators"].items()}
    assert sorted(rel, key=rel.get, reverse=True) == ["ann_a", "ann_b", "ann_c"]
    for name, acc in ACCURACY.items():  # each within 0.07 of the accuracy it was simulated with
        assert abs(rel[name] - acc) < 0.07, (name, rel[name])
    posterior = np.array([out["items"][f"q{i:03d}"]["posterior_acceptable"] for i in range(len(truth))])
    votes = np.array([sum(d[2] == "accept" for d in decisions[3 * i : 3 * i + 3]) for i in range(len(truth))])
    majority_right = ((votes >= 2) == truth).mean()
    model_right = ((posterior >= 0.5) == truth).mean()
    assert model_right > majority_right
    # majority vote errs where ann_a alone is right against the two others; Dawid-Skene trusts ann_a there
    assert model_right >= 0.9


def test_figures_match_crowd_kit_called_directly(simulated):
    from crowdkit.aggregation import GLAD, DawidSkene

    truth, decisions, out = simulated
    s = FAST
    df = pd.DataFrame([(i, w, v) for i, w, v, _ in decisions], columns=["task", "worker", "label"])
    ds = DawidSkene(n_iter=s.ds_iterations, tol=float("-inf")).fit(df)
    for i in range(len(truth)):
        assert out["items"][f"q{i:03d}"]["posterior_acceptable"] == pytest.approx(ds.probas_.loc[f"q{i:03d}", "accept"])
    for name, a in out["annotators"].items():
        spec = ds.errors_.loc[(name, "accept"), "accept"]
        sens = ds.errors_.loc[(name, "flag"), "flag"]
        assert a["specificity"] == pytest.approx(spec) and a["sensitivity"] == pytest.approx(sens)
        assert a["reliability"] == pytest.approx(ds.priors_["accept"] * spec + ds.priors_["flag"] * sens)
    # GLAD: difficulty is 1/beta of the paper, crowd-kit's exp(-betas_); on the first 20 items to stay quick
    few = [d for d in decisions if int(d[0][1:]) < 20]
    small = reliability(few, settings=dataclasses.replace(FAST, glad_max_decisions=1000), mace=True)
    glad = GLAD(n_iter=s.glad_iterations, tol=float("-inf"), silent=True).fit(df[df.task.isin({d[0] for d in few})])
    for item, beta in glad.betas_.items():
        assert small["items"][item]["difficulty"] == pytest.approx(np.exp(-beta), rel=1e-6)
    assert {n: a["glad_ability"] for n, a in small["annotators"].items()} == pytest.approx(glad.alphas_.to_dict())
    # MACE: competence is the posterior of "not spamming", spamming_[:, 1], workers in order of first appearance
    from crowdkit.aggregation import MACE

    sub = df[df.task.isin({d[0] for d in few})]
    mace = MACE(n_restarts=s.mace_restarts, n_iter=s.mace_iterations, random_state=0).fit(sub)
    order = list(pd.unique(sub["worker"]))
    assert {n: small["annotators"][n]["mace_competence"] for n in order} == pytest.approx(
        dict(zip(order, mace.spamming_[:, 1], strict=True))
    )


def test_gold_and_per_reason_figures_match_crowd_kit_called_directly():
    """What the report reads off crowd-kit (fitted on integer codes) with gold labels fixed, and over
    accept-or-first-reason (4 classes): posteriors, confusion matrices, priors and step count equal crowd-kit's
    DawidSkene called directly on the names."""
    from crowdkit.aggregation import DawidSkene

    reasons = ("ambiguous_evidence", "wrong_reference", "format_wording")
    rng = np.random.default_rng(7)
    decisions = []
    for i in range(60):
        true = rng.integers(len(reasons) + 1)  # 0: acceptable, else the reason it is not
        for name, acc in ACCURACY.items():
            said = true if rng.random() < acc else rng.integers(len(reasons) + 1)
            decisions.append((f"q{i:03d}", name, "flag" if said else "accept", [reasons[said - 1]] if said else []))
    gold = {f"q{i:03d}": "accept" for i in range(0, 60, 7)} | {"q001": "flag"}
    out = reliability(decisions, gold, settings=FAST)
    df = pd.DataFrame([d[:3] for d in decisions], columns=["task", "worker", "label"])
    ds = DawidSkene(n_iter=FAST.ds_iterations, tol=float("-inf")).fit(df, true_labels=pd.Series(gold))
    assert out["models"]["dawid_skene"]["iterations"] == len(ds.loss_history_)
    # the gold verdicts, whatever the votes (crowd-kit clips posteriors at 1e-10)
    assert out["items"]["q001"]["posterior_acceptable"] < 1e-9 and out["items"]["q007"]["posterior_acceptable"] == 1
    for item, p in ds.probas_["accept"].items():
        assert out["items"][item]["posterior_acceptable"] == pytest.approx(p, abs=1e-12)
    for name, a in out["annotators"].items():
        assert a["specificity"] == pytest.approx(ds.errors_.loc[(name, "accept"), "accept"], abs=1e-12)
        assert a["sensitivity"] == pytest.approx(ds.errors_.loc[(name, "flag"), "flag"], abs=1e-12)
    flagged = {i for i, _, v, _ in decisions if v == "flag"}  # the per-reason model sees the items someone flagged
    labels = pd.DataFrame(
        [(i, w, r[0] if r else "accept") for i, w, _, r in decisions if i in flagged], columns=df.columns
    )
    per = DawidSkene(n_iter=FAST.ds_iterations, tol=float("-inf")).fit(labels)
    assert out["models"]["per_reason"]["iterations"] == len(per.loss_history_)
    for name, a in out["annotators"].items():
        for r in reasons:
            assert a["per_reason"][r]["reliability"] == pytest.approx(per.errors_.loc[(name, r), r], abs=1e-12)
        classes = ["accept", *reasons]
        hits = [per.errors_.loc[(name, c), c] if (name, c) in per.errors_.index else 0.0 for c in classes]
        assert a["reason_reliability"] == pytest.approx(
            sum(per.priors_[c] * h for c, h in zip(classes, hits, strict=True))
        )


def test_gold_verdicts_are_fixed_and_an_unknown_verdict_is_refused():
    decisions = [("g1", "a", "accept", []), ("g1", "b", "flag", ["other"]), ("q1", "a", "accept", [])]
    out = reliability(decisions, {"g1": "flag"}, settings=FAST)
    assert out["items"]["g1"]["posterior_acceptable"] < 1e-9  # the gold verdict, whatever the votes
    assert out["models"]["dawid_skene"]["gold_fixed"] == 1
    from reviewer.errors import ReviewError

    with pytest.raises(ReviewError, match="neither 'accept' nor 'flag'"):
        reliability([("q1", "a", "skip", [])])


def test_review_quality_from_the_store_with_gold_outcome_skips_and_undos(tmp_path, capsys):
    """6 items, ann and bob on each (k=2); hand-counted figures."""
    store = _store(tmp_path, n=6)
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    for i in range(6):
        api.decide(store, f"q{i:03d}", api.Decision("accept", seconds=10.0 + i), user="ann")
    api.decide(store, "q000", api.Decision("skip"), user="bob")
    api.undo(store, BANK, user="bob")  # takes back the skip: not an undo of a verdict
    api.decide(store, "q000", api.Decision("flag", reasons=["wrong_reference"], seconds=4.0), user="bob")
    api.undo(store, BANK, user="bob")
    reasons = {0: ["wrong_reference"], 1: ["ambiguous_evidence"]}
    for i in range(6):
        verdict = "flag" if i in reasons else "accept"
        api.decide(store, f"q{i:03d}", api.Decision(verdict, reasons=reasons.get(i), seconds=2.0), user="bob")
    api.adjudicate(store, "q000", api.Decision("reject", reasons=["wrong_reference"], rationale="wrong"), user="eve")
    api.adjudicate(store, "q001", api.Decision("accept", rationale="fine"), user="eve")
    store.close()
    db = str(tmp_path / "review.sqlite")
    assert main(["--db", db, "review", "quality", BANK, "--user", "mia", "--json", "--csv", str(tmp_path / "q")]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {a["annotator"]: a for a in out["annotators"]}
    # outcomes: q000 rejected (flag), q001 accepted, q002-q005 consensus (accept)
    assert rows["ann"]["outcome_decided"] == 6 and rows["ann"]["outcome_agreement"] == pytest.approx(5 / 6)
    assert rows["bob"]["outcome_agreement"] == pytest.approx(5 / 6)
    assert rows["ann"]["median_seconds"] == pytest.approx(12.5)
    # bob: 7 accept/flag decisions made (the first flag undone) and 1 skip -> skip share 1/8, undo share 1/7
    assert rows["bob"]["skip_share"] == pytest.approx(1 / 8) and rows["bob"]["undo_share"] == pytest.approx(1 / 7)
    assert rows["ann"]["skip_share"] == 0 and rows["ann"]["undo_share"] == 0
    items = {i["item"]: i for i in out["items"]}
    assert items["q000"]["outcome"] == "flag" and items["q000"]["accepts"] == 1
    assert 0 <= items["q000"]["posterior_acceptable"] < items["q003"]["posterior_acceptable"] <= 1
    head = (tmp_path / "q" / "annotators.csv").read_text().splitlines()[0].split(",")
    assert head[:3] == ["annotator", "decisions", "reliability"] and "reliability_ambiguous_evidence" in head
    assert head[-3:] == ["confidence_low", "confidence_medium", "confidence_high"]
    assert len((tmp_path / "q" / "items.csv").read_text().splitlines()) == 7
    # an annotator may not see everyone's figures
    assert main(["--db", db, "review", "quality", BANK, "--user", "ann"]) == 2
    assert "only expert or maintainer" in capsys.readouterr().err


def test_agreement_per_task_in_the_report_and_csv(tmp_path, capsys):
    """Two trend and two quantify questions and an insufficient one; annotators split on one trend question and
    the insufficient one."""
    import bank_factory as bf
    from test_review_workflow import _write

    from reviewer.review.banks import import_bank
    from reviewer.store import Store

    store = Store(tmp_path / "review.sqlite")
    api.add_user(store, "mia", "maintainer")
    for a in ("ann", "bob"):
        api.add_user(store, a, "annotator", by="mia")
    questions = [bf.trend_question("t1"), bf.trend_question("t2"), bf.number_question("n1"), bf.number_question("n2")]
    questions.append(bf.insufficient_question("i1"))  # no task: under its class
    import_bank(store, _write(tmp_path / "bank", questions), user="mia")
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    plan = {"t1": ("accept", "accept"), "t2": ("accept", "flag"), "n1": ("flag", "flag"), "n2": ("accept", "accept")}
    plan["i1"] = ("accept", "flag")
    for qid, verdicts in plan.items():
        for user, v in zip(("ann", "bob"), verdicts, strict=True):
            api.decide(store, qid, api.Decision(v, reasons=["wrong_reference"] if v == "flag" else None), user=user)
    store.close()
    db = str(tmp_path / "review.sqlite")
    assert main(["--db", db, "review", "agreement", BANK, "--user", "mia", "--csv", str(tmp_path / "csv")]) == 0
    text = capsys.readouterr().out
    assert "task quantify" in text and "task trend" in text
    rows = (tmp_path / "csv" / "per_task.csv").read_text().splitlines()
    assert rows[0] == "task,figure,value,note"
    # trend: agree on t1, not t2 -> 0.5; quantify: agree on both -> 1
    assert "trend,percent_agreement,0.5," in rows and "quantify,percent_agreement,1.0," in rows
    assert "quantify,items,2," in rows
    assert "insufficient,items,1," in rows and "insufficient,percent_agreement,0.0," in rows and "task none" not in text


def test_confidence_is_stored_shown_to_experts_and_routes_a_low_confidence_accept(tmp_path, capsys):
    store = _store(tmp_path, n=3)
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    api.set_rule(store, BANK, user="mia", audit_share=0.0)  # no random audit: only the confidence routes
    store.close()
    db = str(tmp_path / "review.sqlite")

    def decide(item, user, *extra):
        return main(["--db", db, "review", "decide", item, "--user", user, *extra])

    assert decide("q000", "ann", "--accept", "--confidence", "low") == 0
    assert "accept, low confidence saved" in capsys.readouterr().out
    assert decide("q000", "bob", "--accept", "--confidence", "high") == 0
    assert decide("q001", "ann", "--accept", "--confidence", "medium") == 0
    assert decide("q001", "bob", "--accept") == 0
    assert decide("q002", "ann", "--accept", "--confidence", "sure") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "confidence must be one of low, medium, high, not 'sure'" in err
    from reviewer.store import Store

    with Store(tmp_path / "review.sqlite") as store:
        stored = store.db.execute(
            "SELECT i.qid, d.user, d.confidence FROM decisions d JOIN items i ON i.id = d.item ORDER BY d.id"
        ).fetchall()
        assert stored == [
            ("q000", "ann", "low"),
            ("q000", "bob", "high"),
            ("q001", "ann", "medium"),
            ("q001", "bob", None),
        ]
        # the unanimous accept with a low-confidence decision goes to an expert; the other one does not
        audit = dict(store.db.execute("SELECT qid, audit FROM items WHERE qid IN ('q000', 'q001')").fetchall())
        assert audit == {"q000": 1, "q001": 0}
        why = store.db.execute(
            "SELECT e.detail FROM events e JOIN items i ON i.id = e.item WHERE i.qid = 'q000' AND e.action = 'route_consensus'"
        ).fetchone()[0]
        assert "low-confidence" in json.loads(why)["why_audit"]
        view = api.expert_view(store, "q000", user="eve")
        assert [(d["annotator"], d["confidence"]) for d in view["stage1"]] == [
            ("annotator 1", "low"),
            ("annotator 2", "high"),
        ]
        assert '"ann"' not in json.dumps(view)
    assert main(["--db", db, "review", "quality", BANK, "--user", "mia", "--json"]) == 0
    rows = {a["annotator"]: a["confidence"] for a in json.loads(capsys.readouterr().out)["annotators"]}
    assert rows == {"ann": {"low": 1, "medium": 1, "high": 0}, "bob": {"low": 0, "medium": 0, "high": 1}}
    assert main(["--db", db, "review", "quality", BANK, "--user", "mia"]) == 0  # the table: counts per level
    table = {line.split()[0]: line.split()[-1] for line in capsys.readouterr().out.splitlines()[:3]}
    assert table["annotator"] == "L/M/H" and table["ann"] == "1/1/0" and table["bob"] == "0/0/1"
    assert main(["--db", db, "review", "show", "q000", "--user", "eve"]) == 0
    assert "annotator 1: accept [low confidence]" in capsys.readouterr().out
    assert main(["--db", db, "review", "adjudicate", "q000", "--user", "eve", "--accept", "--rationale", "fine",
                 "--confidence", "high"]) == 0  # fmt: skip
    assert "accept, high confidence (decision" in capsys.readouterr().out
    with Store(tmp_path / "review.sqlite") as store:
        assert store.db.execute("SELECT confidence FROM decisions WHERE stage = 2").fetchone()[0] == "high"


def test_routing_by_the_model_sends_uncertain_items_and_lists_weak_annotators(tmp_path, capsys, monkeypatch):
    import reviewer.review.quality as quality

    # every posterior counts as uncertain and every annotator as under the threshold: the routing itself is tested
    wide = dataclasses.replace(quality_settings(), uncertain_posterior=(0.0, 1.0), min_reliability=1.01)
    monkeypatch.setattr(quality, "quality_settings", lambda: wide)
    store = _store(tmp_path, n=4)
    api.add_user(store, "cat", "annotator", by="mia")
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    api.set_rule(store, BANK, user="mia", audit_share=0.0)
    for qid in ("q000", "q001"):
        for user in ("ann", "bob"):
            api.decide(store, qid, api.Decision("accept"), user=user)
    api.decide(store, "q002", api.Decision("flag", reasons=["other"]), user="ann")
    bob_before = store.db.execute("SELECT count(*) FROM decisions WHERE user = 'bob'").fetchone()[0]
    store.close()
    db = str(tmp_path / "review.sqlite")
    assert main(["--db", db, "review", "route", BANK, "--user", "mia", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [i["item"] for i in out["uncertain"]] == ["q000", "q001"] and out["route_uncertain"] is False
    weak = {w["annotator"]: sorted(w["open_items"]) for w in out["weak_annotators"]}
    assert weak == {"ann": ["q003"], "bob": ["q002", "q003"]}
    # applying needs the stage-2 setting on; nothing changed
    assert main(["--db", db, "review", "route", BANK, "--user", "mia", "--apply"]) == 2
    assert "routing by the reliability model is off" in capsys.readouterr().err
    assert main(["--db", db, "review", "rule", BANK, "--user", "mia", "--route-uncertain", "on"]) == 0
    assert "route uncertain on" in capsys.readouterr().out
    assert main(["--db", db, "review", "route", BANK, "--user", "mia", "--apply"]) == 0
    assert "sent 2 item(s) to an expert" in capsys.readouterr().out
    assert main(["--db", db, "review", "reassign", BANK, "--from", "bob", "--to", "cat", "--reason", "low reliability",
                 "--user", "mia"]) == 0  # fmt: skip
    assert "moved 2 open item(s) from bob to cat" in capsys.readouterr().out
    # ann's one open item (q003) is cat's already: it stays with ann, and the line says so
    assert main(["--db", db, "review", "reassign", BANK, "--from", "ann", "--to", "cat", "--reason", "on leave",
                 "--user", "mia"]) == 0  # fmt: skip
    assert "moved 0 open item(s) from ann to cat; 1 stay with ann (cat has them already)" in capsys.readouterr().out
    from reviewer.store import Store

    with Store(tmp_path / "review.sqlite") as store:
        assert [q["item"] for q in api.queue(store, BANK, user="eve")] == ["rb/q000", "rb/q001"]  # sent to an expert
        events = store.db.execute(
            "SELECT action, before, after FROM events WHERE action IN ('route_uncertain', 'reassign', 'settings') "
            "ORDER BY id"
        ).fetchall()
        assert events[-5:] == [
            ("settings", '{"route_uncertain": 0}', '{"route_uncertain": 1}'),
            ("route_uncertain", "audit 0", "audit 1"),
            ("route_uncertain", "audit 0", "audit 1"),
            ("reassign", "bob", "cat"),
            ("reassign", "bob", "cat"),
        ]
        assert sorted(i["id"] for i in api.my_items(store, BANK, user="cat")) == ["q002", "q003"]
        assert store.db.execute("SELECT count(*) FROM decisions WHERE user = 'bob'").fetchone()[0] == bob_before


def test_all_accepted_has_no_sensitivity():
    out = reliability([("q1", "a", "accept", []), ("q1", "b", "accept", []), ("q2", "a", "accept", [])], settings=FAST)
    assert out["annotators"]["a"]["sensitivity"] is None and out["annotators"]["a"]["reliability"] == pytest.approx(1.0)
    assert out["items"]["q1"]["posterior_acceptable"] == pytest.approx(1.0)


def test_the_report_says_when_dawid_skene_stopped_before_converging(tmp_path, capsys, monkeypatch):
    """crowd-kit's EM stops when its bound per decision rises by less than tol, or after max steps: the report says
    which, with the last rise crowd-kit recorded, so nobody takes an unfinished fit's posteriors for converged ones."""
    from crowdkit.aggregation import DawidSkene

    import reviewer.review.quality as quality

    store = _store(tmp_path, n=6)
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    said = {"ann": "aaffaa", "bob": "afaafa"}
    for user, verdicts in said.items():
        for i, v in enumerate(verdicts):
            flag = v == "f"
            why = ["wrong_reference"] if flag else None
            api.decide(store, f"q{i:03d}", api.Decision("flag" if flag else "accept", reasons=why), user=user)
    store.close()
    db = str(tmp_path / "review.sqlite")
    argv = ["--db", db, "review", "quality", BANK, "--user", "mia"]
    rows = [(f"q{i:03d}", u, "flag" if v == "f" else "accept") for u, vs in said.items() for i, v in enumerate(vs)]
    direct = DawidSkene(n_iter=2, tol=1e-5).fit(pd.DataFrame(rows, columns=["task", "worker", "label"]))
    for steps, tol, converged in ((2, 1e-5, False), (60, 1e-7, True)):
        s = dataclasses.replace(quality_settings(), ds_iterations=steps, ds_tol=tol)
        monkeypatch.setattr(quality, "quality_settings", lambda s=s: s)
        assert main([*argv, "--json"]) == 0
        ds = json.loads(capsys.readouterr().out)["models"]["dawid_skene"]
        assert ds["converged"] is converged and (ds["iterations"] == 2) is not converged
        assert main(argv) == 0
        text = capsys.readouterr().out
        assert ("dawid_skene: stopped at its 2-step limit before converging" in text) is not converged, text
        assert ("dawid_skene: converged (the last of its 60 EM steps" in text) is converged, text
    # the unconverged fit's last rise is crowd-kit's own, read off its loss history
    s = dataclasses.replace(quality_settings(), ds_iterations=2)
    fit = reliability([(*r, []) for r in rows], settings=s)["models"]["dawid_skene"]
    assert fit["last_change"] == pytest.approx(direct.loss_history_[1] - direct.loss_history_[0])


def test_a_fall_of_crowd_kits_bound_does_not_stop_the_fit(tmp_path, capsys):
    """crowd-kit stops its EM when its bound rises by less than tol, a fall included; its bound counts the class
    prior once per decision, so it can fall long before the fit converges: on these 12 items crowd-kit's own stop
    comes after 4 steps with q005 (flagged by bob and cat) at 0.15 where a 1,000-step fit has 0. review quality runs
    to its step limit and reaches the 1,000-step fit's posteriors (crowd-kit's, worked out once: acceptable but for
    q003, q005 and q006, which two of three flagged) within 1e-6, and says it converged."""
    from crowdkit.aggregation import DawidSkene

    said = {"ann": "aaafaafaaaaa", "bob": "aaafaffaaaaa", "cat": "afaaafaaa"}
    decisions = [
        (f"q{i:03d}", who, "flag" if v == "f" else "accept", ["wrong_reference"] if v == "f" else [])
        for who, verdicts in said.items()
        for i, v in enumerate(verdicts)
    ]
    own_stop = DawidSkene(n_iter=100, tol=1e-5).fit(
        pd.DataFrame([d[:3] for d in decisions], columns=["task", "worker", "label"])
    )
    assert len(own_stop.loss_history_) == 4 and own_stop.probas_.loc["q005", "accept"] > 0.1
    store = _store(tmp_path, n=12, annotators=tuple(said))
    api.assign(store, BANK, annotators=list(said), k=3, seed=1, user="mia")
    for item, who, verdict, why in decisions:
        api.decide(store, item, api.Decision(verdict, reasons=why or None), user=who)
    store.close()
    argv = ["--db", str(tmp_path / "review.sqlite"), "review", "quality", BANK, "--user", "mia"]
    assert main(argv) == 0
    assert "dawid_skene: converged (the last of its 100 EM steps" in capsys.readouterr().out
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    fit = out["models"]["dawid_skene"]
    assert fit["iterations"] == 100 and fit["converged"] is True
    long_fit = {f"q{i:03d}": 0.0 if i in (3, 5, 6) else 1.0 for i in range(12)}
    got = {i["item"]: i["posterior_acceptable"] for i in out["items"]}
    assert got == pytest.approx(long_fit, abs=1e-6)
