"""The review session's rules without a display (reviewer.app.review_model imports no Qt)."""

from __future__ import annotations

import subprocess
import sys

from reviewer.app.review_model import (
    ExpertKeys,
    Progress,
    QueueWork,
    Refusal,
    ReviewQueue,
    after_refusal,
    first_mode,
    progress,
    refused_line,
)


def test_the_model_imports_no_qt() -> None:
    code = (
        "import sys, reviewer.app.review_model; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('qtpy', 'PySide6', 'PyQt5', 'PyQt6', 'napari')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_n_and_p_move_exactly_one_item_in_list_order() -> None:
    q = ReviewQueue()
    q.set_items([f"b/q{i}" for i in range(1, 6)])
    q.show("b/q3")
    assert [q.step(-1) for _ in range(4)] == ["b/q2", "b/q1", "b/q1", "b/q1"]  # held at the start, never wraps
    assert [q.step(1) for _ in range(6)] == ["b/q2", "b/q3", "b/q4", "b/q5", "b/q5", "b/q5"]


def test_after_the_shown_item_leaves_a_filtered_list_n_takes_the_one_in_its_place() -> None:
    q = ReviewQueue()
    q.set_items(["q1", "q2", "q3", "q4"])
    q.show("q3")
    q.set_items(["q1", "q2", "q4"])  # q3 decided: the 'undecided' filter drops it
    assert q.neighbour(1) == "q4"
    assert q.neighbour(-1) == "q2"
    q.set_items(["q1", "q2"])  # and q4 too: N stays at the end, it does not wrap to q1
    assert q.neighbour(1) == "q2"


def test_progress_counts_what_is_left_and_never_goes_back_when_another_person_acts() -> None:
    rows = [{"open": True, "mine": None} for _ in range(26)]
    for r in rows[:5]:
        r["mine"] = "accept"
    assert progress(rows) == Progress(26, 21)
    # an expert corrects one of them: a new version, on which ann has no decision, and the item is closed
    rows[0] = {"open": False, "mine": None}
    # and adjudicates one ann had not reached yet
    rows[10] = {"open": False, "mine": None}
    assert progress(rows).done == 6
    assert progress(rows).left == 20
    # a skip is still to do
    rows[11] = {"open": True, "mine": "skip"}
    assert progress(rows).left == 20
    for r in rows:
        if r["open"]:
            r["mine"] = "flag"
    assert progress(rows).text() == "all 26 done: nothing left for you to review"


def test_expert_adjudicates_by_keys_with_a_typed_rationale() -> None:
    keys = ExpertKeys()
    keys.reset(["wrong_reference", "ambiguous"])
    ask = keys.key("A")  # no rationale yet: the field is asked for, nothing is saved
    assert (ask.kind, ask.verdict) == ("ask_rationale", "accept")
    assert "Enter saves" in ask.message and "Esc" in ask.message
    keys.typing, keys.rationale = True, "the burn scar is visible in both dates"
    assert keys.key("A").kind == "none"  # typed into the field by Qt, never a verdict
    saved = keys.key("Return")
    assert (saved.kind, saved.verdict) == ("save", "accept")
    assert keys.pending is None


def test_an_ai_drafts_review_saves_at_once_without_a_rationale() -> None:
    keys = ExpertKeys(needs_rationale=False)
    keys.reset(["misread_imagery", "beyond_the_imagery"])
    assert (keys.key("A").kind, keys.key("2").kind) == ("save", "pick_reason")
    out = keys.key("R")
    assert (out.kind, out.verdict, out.reason) == ("save", "reject", "beyond_the_imagery")


def test_expert_rejects_with_a_reason_by_keys_and_esc_leaves_the_field() -> None:
    keys = ExpertKeys()
    keys.reset(["wrong_reference", "ambiguous", "unanswerable"])
    assert keys.key("2").reason == "ambiguous"
    assert keys.key("9").kind == "say"
    assert keys.reason == "ambiguous"
    keys.typing = True
    keys.rationale = "two readings of the question"
    left = keys.key("Escape")
    assert left.kind == "leave_field"
    keys.typing = False
    out = keys.key("R")
    assert (out.kind, out.verdict, out.reason) == ("save", "reject", "ambiguous")
    # Enter in the field with nothing asked for leaves it (so the next key is a verdict), saving nothing
    keys.typing = True
    assert keys.key("Return").kind == "leave_field"
    # Esc outside the field drops a verdict waiting for its rationale
    keys.typing, keys.rationale = False, ""
    assert keys.key("R").kind == "ask_rationale"
    assert keys.key("Escape").kind == "cancel" and keys.pending is None
    assert keys.key("N").by == 1 and keys.key("P").by == -1


def test_each_role_opens_on_the_queue_that_has_work() -> None:
    # the expert with nothing to annotate and four items to adjudicate
    assert first_mode(QueueWork(annotate=0, adjudicate=4)) == "adjudicate"
    assert first_mode(QueueWork(annotate=3, adjudicate=4)) == "annotate"
    assert first_mode(QueueWork(annotate=None, adjudicate=0, maintain=True)) == "maintain"
    assert first_mode(QueueWork(annotate=0, adjudicate=0)) == "annotate"
    assert first_mode(QueueWork(annotate=5)) == "annotate"


def test_evidence_opens_on_the_dates_the_question_turns_on() -> None:
    from types import SimpleNamespace

    from reviewer.app.review_model import EvidenceFocus, evidence_focus

    def view(dates=(), periods=()):
        return SimpleNamespace(dates=tuple(dates), periods=tuple(periods))

    fire = {
        "period": {"start": "1984-01-01", "end": "2024-12-31"},
        "fields": [{"name": "year", "type": "year"}],
        "reference": {"year": 2003},
    }
    # a strip over 1984-2024 asking when the fire was: the fire year, compared with the year before (not 1984)
    assert evidence_focus(fire, view(periods=[(1984, 2024)])) == EvidenceFocus(2003, ("2002", "2003"))
    # a change over a period: its last year opens, the pair is its first and last year
    change = {"period": {"start": "1995", "end": "2005"}, "fields": [{"name": "changed", "type": "category"}]}
    assert evidence_focus(change, view(periods=[(1995, 2005)])) == EvidenceFocus(2005, ("1995", "2005"))
    # two periods: the second (the 'after') opens, the view's own pair stays
    assert evidence_focus(change, view(periods=[(1995, 1995), (1997, 1997)])) == EvidenceFocus(1997, None)
    # dates named by the view: the view decides
    assert evidence_focus(change, view(dates=["2001-05-02", "2002-05-02"])) == EvidenceFocus(None, None)
    # a reference year outside the period is not a turning point
    odd = {**fire, "reference": {"year": 1950}}
    assert evidence_focus(odd, view(periods=[(1984, 2024)])) == EvidenceFocus(2024, ("1984", "2024"))


def test_expert_confidence_keys_toggle_stay_text_while_typing_and_end_with_the_item() -> None:
    keys = ExpertKeys(levels=(("L", "low"), ("M", "medium"), ("H", "high")))
    keys.reset(["wrong_reference"])
    assert (keys.key("H").kind, keys.confidence) == ("confidence", "high")
    assert (keys.key("M").kind, keys.confidence) == ("confidence", "medium")  # another level replaces it
    assert keys.key("M").kind == "confidence" and keys.confidence is None  # the same key again: not given
    keys.key("L")
    keys.typing = True
    assert keys.key("H").kind == "none" and keys.confidence == "low"  # an 'h' typed in the rationale is text
    keys.typing = False
    keys.reset(["wrong_reference"])  # the next item starts with none
    assert keys.confidence is None
    drafts = ExpertKeys(needs_rationale=False)  # an AI draft's review has no confidence keys
    assert drafts.key("L").kind == "none" and drafts.confidence is None


def test_a_dock_never_calls_another_items_evidence_the_one_in_the_viewer() -> None:
    """Issue 27, "evidence is always the item's": the failures dock said "evidence of demo-core-seed0-18" while
    another run's question was selected and loading."""
    from reviewer.app.item_pipeline import ItemEvidence
    from reviewer.app.review_model import evidence_line

    ev = ItemEvidence()
    q18 = ev.begin("q18")
    assert evidence_line("q18", ev, site="demo").text == "evidence: opening demo ..."
    ev.shown(q18)
    assert evidence_line("q18", ev).text == "evidence of q18 in the viewer"
    # q29's run is selected: q18's evidence is still on screen, q29's not asked for yet, then loading
    assert evidence_line("q29", ev, site="demo") == evidence_line(None, ev, site="demo")
    assert evidence_line("q29", ev, site="demo").text == "evidence: opening demo ..."
    q29 = ev.begin("q29")
    assert not ev.shown(q18)  # q18's late result changes nothing
    assert evidence_line("q29", ev).state == "opening" and evidence_line("q18", ev).state == "opening"
    ev.shown(q29)
    assert evidence_line("q29", ev).text == "evidence of q29 in the viewer"
    q7 = ev.begin("q7")
    ev.failed(q7, "site 'x' is not in this store")
    assert evidence_line("q7", ev).text == "evidence: site 'x' is not in this store"
    assert evidence_line("q29", ev).state == "opening"  # q29's evidence is no longer the one on screen


def test_the_expert_hints_name_a_reject_reason_in_its_words() -> None:
    """Issue 27: the hints say the reason as the reject combo shows it (they had said its code, "wrong_reference")."""
    keys = ExpertKeys()
    keys.reset(
        ["unfixable_evidence", "wrong_reference"], {"wrong_reference": "reference wrong and not correctable here"}
    )
    assert keys.key("2").message == "reject reason: reference wrong and not correctable here (R rejects)"
    ask = keys.key("R")
    assert ask.message.startswith("reject (reference wrong and not correctable here): type the rationale")
    keys.reset(["other"])  # a reason with no words given: its code
    assert keys.key("1").message == "reject reason: other (R rejects)"


def test_a_refused_save_on_an_item_someone_else_settled_moves_on_and_names_what_was_typed() -> None:
    # eve's queue as the store has it after fay adjudicated b/q2 in another process: q2 is gone from it
    rows = [{"item": "b/q5", "version": 1}, {"item": "b/q7", "version": 1}]
    gone = after_refusal("b/q2", None, rows, "burn scar on both dates")
    assert gone == Refusal("next", 'next item shown; typed, not saved: "burn scar on both dates"')
    # an annotator's row still listed but closed by an expert's correction: not open for her any more
    closed = after_refusal("b/q5", 1, [{"item": "b/q5", "version": 2, "open": False}])
    assert (closed.action, closed.why) == ("next", "next item shown")
    # reopened by a maintainer: open again at version 2 while she had version 1 on screen
    again = after_refusal("b/q5", 1, [{"item": "b/q5", "version": 2, "open": True}], "clouds")
    assert again == Refusal("reload", 'shown again at its new version 2; typed, not saved: "clouds"')
    # refused for her own reason (no rationale typed yet): the item and what was typed stay to be mended
    assert after_refusal("b/q5", 1, [{"item": "b/q5", "version": 1, "open": True}]).action == "stay"


def test_a_refused_line_names_the_item_once_by_its_id_and_keeps_who_when_and_the_text() -> None:
    """The store's reason names the item by its whole key: the line says it once, by its id (the line had named
    "demo-core-seed0-generated/demo-core-seed0-3" twice, the store's rule and what followed at length: 6 lines in
    a 1366 x 768 review dock)."""
    settled = (
        "item bank-x/q2 is accepted by fay (decision 45, 2026-12-05 02:30 UTC): an adjudicated item is final "
        "(a maintainer may reopen it)"
    )
    gone = 'next item shown; typed, not saved: "burn scar"'
    assert refused_line("accept", "bank-x/q2", settled, gone) == (
        'NOT saved: accept; q2 is accepted by fay (decision 45, 2026-12-05 02:30 UTC); next item shown; typed, not saved: "burn scar"'
    )
    # the item stays (refused for the person's own reason): the store's reason whole, the rule in it
    assert refused_line("accept", "bank-x/q2", settled).endswith(
        "02:30 UTC): an adjudicated item is final (a maintainer may reopen it)"
    )
    closed = "item bank-x/q2: stage 1 is closed (the item was adjudicated)"
    assert refused_line("flag", "bank-x/q2", closed, "next item shown") == (
        "NOT saved: flag q2: stage 1 is closed (the item was adjudicated); next item shown"
    )
    # a reason that does not name the item (the store locked, a full disk): the item by its id before it
    assert (
        refused_line("draft accept", "bank-x/q2", "database is locked")
        == "NOT saved: draft accept q2: database is locked"
    )
