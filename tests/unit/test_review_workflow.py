"""Two-stage review in the core: assignment, blinding, decisions, routing, adjudication, versions.

Expected values follow the product rules of the review-core issue (k distinct annotators per item,
balanced, seeded; the annotator's view; legal transitions by role), worked out by hand.
"""

import json

import bank_factory as bf
import pytest

from reviewer.bank.io import BankContent, write_bank
from reviewer.cli import main
from reviewer.errors import ReviewError
from reviewer.review import api
from reviewer.review.banks import import_bank
from reviewer.review.rules import ROLES, workflow
from reviewer.store import Store

BANK = "rb"


def _questions(n, start=0, text=None):
    out = []
    for i in range(start, start + n):
        q = bf.trend_question(f"q{i:03d}")
        if text:
            q["text"] = text
        out.append(q)
    return out


def _write(folder, questions, name=BANK):
    write_bank(folder, BankContent(name, "1", questions, [bf.site()], [], created="2026-11-30T12:00:00Z"))
    return folder


def _store(tmp_path, n=6, annotators=("ann", "bob"), experts=("eve",), name="review.sqlite"):
    store = Store(tmp_path / name)
    api.add_user(store, "mia", "maintainer")
    for a in annotators:
        api.add_user(store, a, "annotator", by="mia")
    for e in experts:
        api.add_user(store, e, "expert", by="mia")
    import_bank(store, _write(tmp_path / f"bank-{name}", _questions(n)), user="mia")
    return store


def _events(store):
    return store.db.execute("SELECT count(*) FROM events").fetchone()[0]


def _state(store, qid):
    return store.db.execute("SELECT state FROM items WHERE qid = ?", [qid]).fetchone()[0]


def _assigned(store):
    out = {}
    for item, user, rank in store.db.execute(
        "SELECT i.qid, a.user, a.rank FROM assignments a JOIN items i ON i.id = a.item ORDER BY a.user, a.rank"
    ):
        out.setdefault(item, {})[user] = rank
    return out


# ----------------------------------------------------------------------------- assignment


def test_assignment_gives_k_distinct_annotators_balanced_and_seeded(tmp_path):
    store = _store(tmp_path, n=30, annotators=("ann", "bob", "cat"))
    out = api.assign(store, BANK, annotators=["ann", "bob", "cat"], k=2, seed=7, user="mia")
    assert out["items"] == 30
    # 30 items x 2 = 60 assignments over 3 annotators: 20 each
    assert out["per_annotator"] == {"ann": 20, "bob": 20, "cat": 20}
    table = _assigned(store)
    assert len(table) == 30 and all(len(users) == 2 for users in table.values())
    assert {_state(store, f"q{i:03d}") for i in range(30)} == {"in_review"}
    again = _store(tmp_path, n=30, annotators=("ann", "bob", "cat"), name="second.sqlite")
    api.assign(again, BANK, annotators=["ann", "bob", "cat"], k=2, seed=7, user="mia")
    assert _assigned(again) == table  # same seed, same assignment and the same order per annotator
    other = _store(tmp_path, n=30, annotators=("ann", "bob", "cat"), name="third.sqlite")
    api.assign(other, BANK, annotators=["ann", "bob", "cat"], k=2, seed=8, user="mia")
    assert _assigned(other) != table


def test_assigning_again_extends_without_reshuffling(tmp_path):
    store = _store(tmp_path, n=10)
    api.assign(store, BANK, annotators=["ann", "bob"], k=1, seed=3, user="mia")
    before = _assigned(store)
    import_bank(store, _write(tmp_path / "more", _questions(16)), user="mia")  # 6 new questions
    api.add_user(store, "dan", "annotator", by="mia")
    out = api.assign(store, BANK, annotators=["ann", "bob", "dan"], k=1, seed=3, user="mia")
    after = _assigned(store)
    assert out["items"] == 6 and out["batch"] == 2
    assert {q: after[q] for q in before} == before  # what was assigned stays, ranks included
    # the 6 new items go to the least loaded first: dan (0) before ann and bob (5 each)
    new_loads = {u: sum(1 for q in after if q not in before and u in after[q]) for u in ("ann", "bob", "dan")}
    assert sum(new_loads.values()) == 6 and new_loads["dan"] >= 5
    for user in ("ann", "bob"):
        old_max = max(r[user] for r in before.values() if user in r)
        assert all(after[q][user] > old_max for q in after if q not in before and user in after[q])


def test_assign_refuses_wrong_role_k_and_changed_seed(tmp_path):
    store = _store(tmp_path)
    with pytest.raises(ReviewError, match="only maintainer may assign"):
        api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="ann")
    with pytest.raises(ReviewError, match="k must be between 1 and the number of annotators"):
        api.assign(store, BANK, annotators=["ann", "bob"], k=3, seed=1, user="mia")
    with pytest.raises(ReviewError, match="mia is maintainer: cannot review"):
        api.assign(store, BANK, annotators=["ann", "mia"], k=1, seed=1, user="mia")
    assert _assigned(store) == {}
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    with pytest.raises(ReviewError, match="use the same seed"):
        api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=2, user="mia")


def test_gold_items_are_hidden_and_scored_per_annotator(tmp_path):
    store = _store(tmp_path, n=18)
    good = bf.trend_question("gold-good")
    bad = bf.trend_question(
        "gold-bad",
        reference={"direction": "decrease", "trend": -0.28},
        reference_range={"trend": [-0.31, -0.25]},
        accept={"direction": ["decrease"]},
    )
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps({"question": good, "verdict": "accept"})
        + "\n"
        + json.dumps({"question": bad, "verdict": "flag", "reasons": ["wrong_reference"], "note": "sign flipped"})
        + "\n"
    )
    out = api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia", gold=gold, gold_share=0.1)
    # each annotator has 18 real items; 0.1 of the queue is gold: round(0.1 * 18 / 0.9) = 2 (both gold items)
    assert out["per_annotator"] == {"ann": 20, "bob": 20}
    seen = []
    while (view := api.next_item(store, BANK, user="ann")) is not None:
        assert "gold" not in json.dumps(view).lower().replace("gold-", "")  # nothing but the id says gold
        seen.append(view["id"])
        verdict = "flag" if view["id"] in ("gold-good", "gold-bad") else "accept"  # wrong on gold-good
        api.decide(
            store,
            view["item"],
            api.Decision(verdict, reasons=["wrong_reference"] if verdict == "flag" else None),
            user="ann",
        )
    assert {"gold-good", "gold-bad"} <= set(seen) and len(seen) == 20
    assert seen.index("gold-good") != 0 or seen.index("gold-bad") != 1  # mixed in, not a block at the front
    row = next(r for r in api.progress(store, BANK, user="mia") if r["user"] == "ann")
    assert (row["done"], row["assigned"], row["gold_decided"], row["gold_correct"]) == (20, 20, 2, 1)
    assert row["gold_accuracy"] == 0.5
    assert _state(store, "gold-bad") == "in_review"  # gold is never routed to an expert
    assert api.status(store, BANK, user="mia")["states"] == {"in_review": 18}  # gold items not counted


# ----------------------------------------------------------------------------- blinding


ANNOTATOR_VIEW_KEYS = {"item", "bank", "id", "version", "question", "flag_reasons", "your_decision", "progress"}


def test_annotator_view_holds_only_their_own_work(tmp_path):
    store = _store(tmp_path, n=3)
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    first = api.next_item(store, BANK, user="ann")
    assert set(first) == ANNOTATOR_VIEW_KEYS
    assert first["question"] == next(q for q in _questions(3) if q["id"] == first["id"])
    assert first["your_decision"] is None and first["progress"] == {"done": 0, "assigned": 3}
    # the four stage-1 reasons come first (the codebook may add maintainer reasons after them)
    codes = [r["code"] for r in first["flag_reasons"]]
    assert codes[:4] == ["ambiguous_evidence", "wrong_reference", "format_wording", "other"]
    assert all(r["definition"] and r["example"] for r in first["flag_reasons"])
    assert "pilot_audit" not in codes  # a maintainer's reason: not offered to annotators, and refused from them
    with pytest.raises(ReviewError, match="unknown flag reason 'pilot_audit'"):
        api.decide(store, first["item"], api.Decision("flag", reasons=["pilot_audit"]), user="ann")
    # bob flags every item; ann skips one and then sees it again: her view never shows bob
    for qid in ("q000", "q001", "q002"):
        api.decide(
            store, f"{BANK}/{qid}", api.Decision("flag", reasons=["wrong_reference"], comment="bob says no"), user="bob"
        )
    api.decide(store, first["item"], api.Decision("skip"), user="ann")
    for _ in range(3):
        view = api.next_item(store, BANK, user="ann")
        text = json.dumps(view)
        assert set(view) == ANNOTATOR_VIEW_KEYS
        assert '"bob"' not in text and "bob says no" not in text and "in_review" not in text
        assert '"flag"' not in text  # nobody's flag: ann's own decisions here are accepts and a skip
        api.decide(store, view["item"], api.Decision("accept"), user="ann")
    assert view["item"] == first["item"]  # the skipped item came last
    # her queue, status and log are blind too
    assert api.queue(store, BANK, user="ann") == []
    status = api.status(store, BANK, user="ann")
    assert set(status) == {"bank", "annotators"} and [r["user"] for r in status["annotators"]] == ["ann"]
    log = api.history(store, first["item"], user="ann")
    assert {d["user"] for d in log["decisions"]} == {"ann"} and {e["user"] for e in log["events"]} == {"ann"}
    assert "state" not in log
    with pytest.raises(ReviewError, match="only expert or maintainer may see all"):
        api.agreement(store, BANK, user="ann")
    with pytest.raises(ReviewError, match="only expert may adjudicate"):
        api.expert_view(store, first["item"], user="ann")


def test_expert_view_pseudonymises_annotators(tmp_path):
    store = _store(tmp_path, n=1)
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    api.decide(
        store,
        "q000",
        api.Decision(
            "flag",
            reasons=["ambiguous_evidence"],
            comment="clouds",
            correction={"text": "Has the lake grown from 1990 to 2021?", "reason": "simpler"},
        ),
        user="bob",
    )
    api.decide(store, "q000", api.Decision("accept"), user="ann")
    view = api.expert_view(store, "q000", user="eve")
    assert view["state"] == "flagged"
    assert [(d["annotator"], d["verdict"], d["reasons"], d["comment"]) for d in view["stage1"]] == [
        ("annotator 1", "flag", ["ambiguous_evidence"], "clouds"),
        ("annotator 2", "accept", [], None),
    ]
    assert view["stage1"][0]["correction"]["text"] == "Has the lake grown from 1990 to 2021?"
    text = json.dumps(view)
    assert '"ann"' not in text and '"bob"' not in text  # no user name anywhere in the view


# ----------------------------------------------------------------------------- transitions


def test_the_state_machine_allows_only_its_transitions_and_roles():
    wf = workflow()
    for t in wf.transitions.values():
        for state in wf.states:
            for role in (*ROLES, "tool"):
                legal = state in t.sources and role in t.roles
                if legal:
                    assert wf.target(t.action, state, role, reason="because") == t.target
                else:
                    with pytest.raises(ReviewError):
                        wf.target(t.action, state, role, reason="because")
    # the chain, in the data
    assert wf.transitions["assign"].sources == {"generated", "drafted"}
    assert wf.transitions["route_flagged"].target == "flagged"
    assert {wf.transitions[a].target for a in ("adjudicate_accept", "adjudicate_reject", "adjudicate_correct")} == {
        "accepted",
        "rejected",
        "corrected",
    }
    # a frozen item changes only by a maintainer's reopen or a changed re-import (both start the next version)
    leaving = [t for t in wf.transitions.values() if "frozen" in t.sources]
    assert {"reopen", "revise"} <= {t.action for t in leaving}
    assert all(t.roles <= {"maintainer", "tool"} for t in leaving)
    assert wf.transitions["reopen"].roles == {"maintainer"}
    with pytest.raises(ReviewError, match="needs a reason"):
        wf.target("reopen", "accepted", "maintainer", reason=" ")


def test_routing_audit_and_the_disagreement_queue(tmp_path):
    store = _store(tmp_path, n=4)
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    api.set_rule(store, BANK, user="mia", audit_share=1.0)  # every consensus item is audited
    verdicts = {
        "q000": ("accept", "accept"),
        "q001": ("flag", "flag"),
        "q002": ("accept", "flag"),
        "q003": ("accept", "accept"),
    }
    for qid, (a, b) in verdicts.items():
        api.decide(store, qid, api.Decision(a, reasons=["other"] if a == "flag" else None), user="ann")
        assert _state(store, qid) == "in_review"  # one of two decisions: not routed yet
        api.decide(store, qid, api.Decision(b, reasons=["wrong_reference"] if b == "flag" else None), user="bob")
    assert [_state(store, q) for q in verdicts] == ["consensus_accepted", "flagged", "flagged", "consensus_accepted"]
    queue = api.queue(store, BANK, user="eve")
    assert [(r["id"], r["kind"]) for r in queue] == [
        ("q002", "split"),
        ("q001", "unanimous flag"),
        ("q000", "audit"),
        ("q003", "audit"),
    ]
    api.set_rule(store, BANK, user="mia", audit_share=0.0)
    api.reopen(store, "q003", user="mia", reason="check the audit rule")
    for u in ("ann", "bob"):
        api.decide(store, "q003", api.Decision("accept"), user=u)
    assert _state(store, "q003") == "consensus_accepted"
    assert "q003" not in [r["id"] for r in api.queue(store, BANK, user="eve")]
    with pytest.raises(ReviewError, match="not in the audit sample"):
        api.adjudicate(store, "q003", api.Decision("accept", rationale="fine"), user="eve")


def test_undo_retracts_and_reopens_stage1_until_adjudicated(tmp_path):
    store = _store(tmp_path, n=2)
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    api.decide(store, "q000", api.Decision("accept"), user="ann")
    api.decide(store, "q000", api.Decision("flag", reasons=["other"]), user="bob")
    assert _state(store, "q000") == "flagged"
    assert api.undo(store, BANK, user="bob")["verdict"] == "flag"
    assert _state(store, "q000") == "in_review"
    assert store.db.execute("SELECT verdict FROM decisions ORDER BY id").fetchall() == [
        ("accept",),
        ("flag",),
        ("retract",),
    ]
    assert api.next_item(store, BANK, user="bob")["id"] in ("q000", "q001")
    api.decide(store, "q000", api.Decision("accept"), user="bob")
    assert _state(store, "q000") == "consensus_accepted"
    api.decide(store, "q001", api.Decision("flag", reasons=["format_wording"]), user="ann")
    api.decide(store, "q001", api.Decision("accept"), user="bob")
    api.adjudicate(
        store, "q001", api.Decision("reject", reasons=["format_wording"], rationale="two readings"), user="eve"
    )
    with pytest.raises(ReviewError, match="adjudicated already"):
        api.undo(store, BANK, user="bob")
    with pytest.raises(ReviewError, match="decided it already"):
        api.decide(store, "q000", api.Decision("flag", reasons=["other"]), user="ann")


def test_adjudication_rules(tmp_path):
    store = _store(tmp_path, n=3, annotators=("ann", "bob"), experts=("eve", "ed"))
    api.assign(store, BANK, annotators=["ann", "ed"], k=2, seed=1, user="mia")  # an expert reviews in stage 1 too
    for qid in ("q000", "q001", "q002"):
        api.decide(store, qid, api.Decision("flag", reasons=["wrong_reference"]), user="ann")
        api.decide(store, qid, api.Decision("accept"), user="ed")
    events = _events(store)
    with pytest.raises(ReviewError, match="ed reviewed it in stage 1"):
        api.adjudicate(store, "q000", api.Decision("accept", rationale="mine"), user="ed")
    with pytest.raises(ReviewError, match="only expert may adjudicate"):
        api.adjudicate(store, "q000", api.Decision("accept", rationale="mine"), user="ann")
    with pytest.raises(ReviewError, match="needs a rationale"):
        api.adjudicate(store, "q000", api.Decision("accept", rationale=""), user="eve")
    with pytest.raises(ReviewError, match="unknown reject reason"):
        api.adjudicate(store, "q000", api.Decision("reject", reasons=["nope"], rationale="x"), user="eve")
    assert _events(store) == events  # refused: nothing written
    assert [r["id"] for r in api.queue(store, BANK, user="ed")] == []
    with pytest.raises(ReviewError, match="only maintainer may allow"):
        api.allow(store, "q000", "ed", user="eve", reason="short of experts")
    api.allow(store, "q000", "ed", user="mia", reason="short of experts")
    assert [r["id"] for r in api.queue(store, BANK, user="ed")] == ["q000"]
    api.adjudicate(store, "q000", api.Decision("accept", rationale="reference holds"), user="ed")
    assert _state(store, "q000") == "accepted"
    # eve, with q000 open in another process, is told who settled it: ed, in the 7th decision (six stage-1 before)
    with pytest.raises(ReviewError, match=r"is accepted by ed \(decision 7, 20\d\d-\d\d-\d\d \d\d:\d\d UTC\): .*final"):
        api.adjudicate(store, "q000", api.Decision("reject", reasons=["other"], rationale="second opinion"), user="eve")
    # a correction is a new version; the old decisions stay with version 1
    out = api.adjudicate(
        store,
        "q001",
        api.Decision("correct", correction={"reference": {"trend": 0.29}}, rationale="trend is 0.29"),
        user="eve",
    )
    assert out["new_version"] == 2 and _state(store, "q001") == "corrected"
    v1, v2 = [
        json.loads(r[0])
        for r in store.db.execute(
            "SELECT json FROM item_versions v JOIN items i ON i.id = v.item WHERE i.qid = 'q001' ORDER BY version"
        )
    ]
    assert v1["reference"]["trend"] == 0.28 and v2["reference"]["trend"] == 0.29
    assert {
        r[0]
        for r in store.db.execute(
            "SELECT d.version FROM decisions d JOIN items i ON i.id = d.item WHERE i.qid = 'q001' AND d.stage = 1"
        )
    } == {1}
    with pytest.raises(ReviewError, match="corrected question is not valid"):
        api.adjudicate(
            store, "q002", api.Decision("correct", correction={"reference": {"trend": 0.9}}, rationale="x"), user="eve"
        )  # outside its range [0.25, 0.31]
    # reopen: maintainer only, with a reason; decisions are retracted, not deleted
    with pytest.raises(ReviewError, match="reopen is for maintainer"):
        api.reopen(store, "q000", user="eve", reason="again")
    n = store.db.execute("SELECT count(*) FROM decisions").fetchone()[0]
    assert api.reopen(store, "q000", user="mia", reason="new imagery")["retracted"] == 3
    assert _state(store, "q000") == "in_review"
    assert store.db.execute("SELECT count(*) FROM decisions").fetchone()[0] == n + 3
    assert "q000" in [r["id"] for r in api.queue(store, BANK, user="ann")]


def test_decisions_on_old_versions_and_unassigned_items_are_refused(tmp_path):
    store = _store(tmp_path, n=2, annotators=("ann", "bob", "cat"))
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    with pytest.raises(ReviewError, match="not assigned to cat"):
        api.decide(store, "q000", api.Decision("accept"), user="cat")
    with pytest.raises(ReviewError, match="unknown flag reason 'cloudy'"):
        api.decide(store, "q000", api.Decision("flag", reasons=["cloudy"]), user="ann")
    with pytest.raises(ReviewError, match="give at least one flag reason"):
        api.decide(store, "q000", api.Decision("flag"), user="ann")
    api.decide(store, "q000", api.Decision("accept"), user="ann", version=1)
    api.decide(store, "q000", api.Decision("accept"), user="bob")
    # regenerated with new text: a new version; the item goes back to review, old decisions stay on v1
    import_bank(
        store, _write(tmp_path / "v2", _questions(2, text="Did the lake area change from 1990 to 2021?")), user="mia"
    )
    assert _state(store, "q000") == "in_review"
    with pytest.raises(ReviewError, match="version 1 is no longer current"):
        api.decide(store, "q000", api.Decision("accept"), user="ann", version=1)
    assert api.next_item(store, BANK, user="ann")["version"] == 2


def test_visual_reference_cannot_end_accepted_without_one(tmp_path):
    store = _store(tmp_path, n=0)
    q = bf.trend_question("vis-1", reference_source="visual")
    q["provenance"] = {"generator": "test", "reference_pending": {"needs_review": True, "reason": "visual"}}
    import_bank(store, _write(tmp_path / "vis", [q]), user="mia")
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    api.set_rule(store, BANK, user="mia", audit_share=0.0)
    for u in ("ann", "bob"):
        api.decide(store, "vis-1", api.Decision("accept"), user=u)
    assert _state(store, "vis-1") == "consensus_accepted"
    assert [r["kind"] for r in api.queue(store, BANK, user="eve")] == ["audit"]  # despite audit share 0
    with pytest.raises(ReviewError, match="cannot be accepted while its reference is a draft"):
        api.adjudicate(store, "vis-1", api.Decision("accept", rationale="looks right"), user="eve")
    api.adjudicate(
        store,
        "vis-1",
        api.Decision(
            "correct", correction={"reference": {"direction": "increase", "trend": 0.27}}, rationale="lake grew"
        ),
        user="eve",
    )
    final = json.loads(store.db.execute("SELECT json FROM item_versions WHERE version = 2").fetchone()[0])
    assert "reference_pending" not in final["provenance"] and final["reference"]["trend"] == 0.27


def test_stage2_rule_rejects_flagged_items_outside_the_sample(tmp_path):
    store = _store(tmp_path, n=40, annotators=("ann",))
    api.assign(store, BANK, annotators=["ann"], k=1, seed=5, user="mia")
    for i in range(40):
        api.decide(store, f"q{i:03d}", api.Decision("flag", reasons=["other"]), user="ann")
    api.set_rule(store, BANK, user="mia", adjudicate_share=0.25, rest_rule="reject")
    sample = {r["id"] for r in api.queue(store, BANK, user="eve")}
    assert 3 <= len(sample) <= 20  # a seeded quarter of 40
    out = api.apply_rule(store, BANK, user="mia")
    assert out == {"rule": "reject", "outside_sample": 40 - len(sample), "applied": 40 - len(sample)}
    states = dict(store.db.execute("SELECT qid, state FROM items").fetchall())
    assert {q for q, s in states.items() if s == "flagged"} == sample
    assert {s for q, s in states.items() if q not in sample} == {"rejected"}
    event = store.db.execute("SELECT detail FROM events WHERE action = 'apply_rule'").fetchone()[0]
    assert json.loads(event)["seed"] == 5 and json.loads(event)["adjudicate_share"] == 0.25


def test_agreement_from_the_store_matches_hand_worked_values(tmp_path):
    store = _store(tmp_path, n=4)
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    plan = {
        "q000": ("accept", "accept"),
        "q001": ("accept", "flag"),
        "q002": ("flag", "flag"),
        "q003": ("accept", "accept"),
    }
    for qid, (a, b) in plan.items():
        api.decide(store, qid, api.Decision(a, reasons=["wrong_reference"] if a == "flag" else None), user="ann")
        api.decide(store, qid, api.Decision(b, reasons=["wrong_reference"] if b == "flag" else None), user="bob")
    fig = api.agreement(store, BANK, user="mia", csv_dir=tmp_path / "csv")["overall"]
    # agree on 3 of 4 items: p_o = 0.75
    assert fig["percent_agreement"] == pytest.approx(0.75)
    # Cohen: ann accepts 3/4, bob 2/4; p_e = 3/4*2/4 + 1/4*2/4 = 0.5; kappa = (0.75-0.5)/0.5 = 0.5
    assert fig["cohen"][0]["kappa"] == pytest.approx(0.5)
    # Fleiss: p_accept = 5/8, p_flag = 3/8; P_e = 25/64 + 9/64 = 0.53125; (0.75-0.53125)/0.46875 = 0.4667
    assert fig["fleiss_kappa"] == pytest.approx(0.46667, abs=1e-4)
    # Krippendorff: D_o = 2/8, D_e = 2*5*3/(8*7) = 30/56; alpha = 1 - 0.25/0.5357 = 0.5333
    assert fig["krippendorff_alpha"] == pytest.approx(0.53333, abs=1e-4)
    # Gwet AC1: pi = 5/8, 3/8; p_e = 2 * 5/8 * 3/8 = 0.46875; (0.75-0.46875)/0.53125 = 0.5294
    assert fig["gwet_ac1"] == pytest.approx(0.52941, abs=1e-4)
    assert (tmp_path / "csv" / "overall.csv").is_file()


# ----------------------------------------------------------------------------- the CLI, bad input


def test_cli_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys):
    store = _store(tmp_path, n=2, annotators=("ann", "bob", "cat"))
    api.assign(store, BANK, annotators=["ann", "bob"], k=2, seed=1, user="mia")
    db = str(tmp_path / "review.sqlite")
    events = _events(store)
    cases = [
        (["review", "decide", "q000", "--user", "zed", "--accept"], "unknown user 'zed'"),
        (["review", "decide", "q000", "--user", "cat", "--accept"], "item rb/q000 is not assigned to cat"),
        (["review", "decide", "q000", "--user", "ann", "--flag", "cloudy"], "unknown flag reason 'cloudy'"),
        (["review", "decide", "q000", "--user", "ann", "--accept", "--version", "5"], "version 5 is no longer current"),
        # (a version 0 or -1 had been "no longer current (current: 1); load it again", as if it had once been)
        (
            ["review", "decide", "q000", "--user", "ann", "--accept", "--version", "-1"],
            "needs an integer of at least 1",
        ),
        (
            ["review", "adjudicate", "q000", "--user", "eve", "--accept", "--rationale", "x", "--version", "0"],
            "needs an integer of at least 1",
        ),
        (
            ["review", "decide", "q000", "--user", "ann", "--accept", "--correct", "{bad"],
            "--correct: not valid JSON: line 1, column 2",
        ),  # "{" then no key
        (["review", "decide", "nope", "--user", "ann", "--accept"], "no item 'nope'"),
        (
            ["review", "adjudicate", "q000", "--user", "ann", "--accept", "--rationale", "x"],
            "only expert may adjudicate",
        ),
        (
            ["review", "adjudicate", "q000", "--user", "eve", "--accept", "--rationale", "x"],
            "cannot adjudicate accept an item that is in_review",
        ),
        (["review", "assign", BANK, "--annotators", "ann", "--user", "ann"], "only maintainer may assign"),
        (["users", "add", "zoe", "--role", "expert", "--user", "ann"], "only maintainer may users add"),
        (["review", "agreement", BANK, "--user", "bob"], "only expert or maintainer may see all"),
        (["review", "undo", BANK, "--user", "ann"], "ann has no decision to undo"),
        (["review", "log", "q000", "--user", "cat"], "item rb/q000 is not assigned to cat"),
    ]
    for argv, message in cases:
        try:
            code = main(["--db", db, *argv])
        except SystemExit as exc:  # an argument refused by argparse (its one `error:` line, exit 2)
            code = exc.code
        assert code == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and message in err, (argv, err)
    assert _events(store) == events


def test_cli_workflow_end_to_end(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "cli.sqlite")
    src = _write(tmp_path / "bank", _questions(2))
    run = lambda *a: main(["--db", db, *a])  # noqa: E731
    assert run("users", "add", "mia", "--role", "maintainer") == 0
    assert run("users", "add", "ann", "--role", "annotator", "--user", "mia") == 0
    assert run("users", "add", "bob", "--role", "annotator", "--user", "mia") == 0
    assert run("users", "add", "eve", "--role", "expert", "--user", "mia") == 0
    assert run("bank", "import", str(src), "--user", "mia") == 0
    assert run("review", "assign", BANK, "--annotators", "ann,bob", "--k", "2", "--seed", "4", "--user", "mia") == 0
    capsys.readouterr()
    monkeypatch.setenv("REVIEWER_USER", "ann")
    assert run("review", "next", BANK, "--json") == 0
    first = json.loads(capsys.readouterr().out)
    assert set(first) == ANNOTATOR_VIEW_KEYS
    assert run("review", "decide", first["item"], "--accept", "--version", "1") == 0
    assert "accept saved" in capsys.readouterr().out
    monkeypatch.delenv("REVIEWER_USER")
    assert (
        run("review", "decide", first["item"], "--user", "bob", "--flag", "wrong_reference,other", "--comment", "odd")
        == 0
    )
    assert run("review", "queue", BANK, "--user", "eve") == 0
    assert f"{first['item']}  split (1 of 2 flagged)" in capsys.readouterr().out
    assert (
        run(
            "review",
            "adjudicate",
            first["item"],
            "--user",
            "eve",
            "--reject",
            "wrong_reference",
            "--rationale",
            "no lake",
        )
        == 0
    )
    assert run("review", "log", first["item"], "--user", "mia") == 0
    log = capsys.readouterr().out
    order = ["item_add", "assign", "ann decide", "bob decide", "route_flagged", "eve adjudicate", "adjudicate_reject"]
    positions = [log.index(word) for word in order]
    assert positions == sorted(positions), log
    assert run("review", "status", BANK, "--user", "mia") == 0
    out = capsys.readouterr().out
    assert "ann" in out and "items: in_review 1, rejected 1" in out
    assert run("review", "verify-log") == 0


def test_an_experts_queue_says_which_flagged_items_wait_for_another_expert(tmp_path, capsys):
    """Found trying the CLI as a team: bob's items were reassigned to the expert eve, who decided them; then
    `review status` said 'flagged 2' and eve's `review queue` listed 1 item with no word of the other. Two
    questions, ann and eve at stage 1 (k = 2): q000 flagged by both, q001 flagged by ann only. eve may not
    adjudicate either (she decided both); dan, a second expert, has both in his queue."""
    db = str(tmp_path / "cli.sqlite")
    src = _write(tmp_path / "bank", _questions(2))
    run = lambda *a: main(["--db", db, *a])  # noqa: E731
    assert run("users", "add", "mia", "--role", "maintainer") == 0
    assert run("users", "add", "ann", "--role", "annotator", "--user", "mia") == 0
    for expert in ("eve", "dan"):
        assert run("users", "add", expert, "--role", "expert", "--user", "mia") == 0
    assert run("bank", "import", str(src), "--user", "mia") == 0
    assert run("review", "assign", BANK, "--annotators", "ann,eve", "--k", "2", "--seed", "4", "--user", "mia") == 0
    for user, verdicts in (("ann", ("wrong_reference", "other")), ("eve", ("other", None))):
        for qid, reason in zip(("q000", "q001"), verdicts, strict=True):
            verdict = ["--flag", reason] if reason else ["--accept"]
            assert run("review", "decide", f"{BANK}/{qid}", *verdict, "--user", user) == 0
    capsys.readouterr()
    assert run("review", "queue", BANK, "--user", "eve") == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "0 item(s) in the queue",
        f"2 more wait for another expert: you decided them at stage 1 ({BANK}/q000 and 1 more); a maintainer may "
        f"let you adjudicate one: reviewer review allow {BANK}/q000 eve --reason T",
    ]
    assert run("review", "queue", BANK, "--user", "dan") == 0
    assert capsys.readouterr().out.splitlines()[-1] == "2 item(s) in the queue"


def test_review_next_says_why_an_insufficient_item_is_so_and_no_none_task(tmp_path, capsys):
    """Found as an annotator on the real-record bank: `review next` showed an insufficient item's reference
    ("insufficient evidence") with no word why, and its class line ended "insufficient / None"."""
    q = bf.insufficient_question("q000")
    note = "insufficient evidence: 2001-2021: 0 clear Landsat observations (ETM+; growing months), 5 needed"
    q["evidence"] = {"composite": "ndvi", "view": "pair", "periods": [[2001, 2001], [2021, 2021]],
                     "region": {"kind": "site"}, "note": note}  # fmt: skip
    src = _write(tmp_path / "bank", [q])
    db = str(tmp_path / "cli.sqlite")
    run = lambda *a: main(["--db", db, *a])  # noqa: E731
    assert run("users", "add", "mia", "--role", "maintainer") == 0
    assert run("users", "add", "ann", "--role", "annotator", "--user", "mia") == 0
    assert run("bank", "import", str(src), "--user", "mia") == 0
    assert run("review", "assign", BANK, "--annotators", "ann", "--k", "1", "--seed", "4", "--user", "mia") == 0
    capsys.readouterr()
    assert run("review", "next", BANK, "--user", "ann") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].endswith(", insufficient") and "None" not in out[1], out[1]
    assert f"evidence:  {note}" in out
