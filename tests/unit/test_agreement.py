"""Inter-rater agreement (reviewer.review.agreement): every expected value is worked out by hand in the comments."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from reviewer.review.agreement import (
    CSV_FIGURES,
    FEW_COMMON,
    FEW_ITEMS,
    NO_PAIRS,
    ONE_CATEGORY,
    VERDICTS,
    YES_NO,
    Rating,
    agreement_figures,
    agreement_report,
    reason_ratings,
    write_csv,
)

REASONS = ["ambiguous_evidence", "wrong_reference", "format_wording", "other"]


def table(columns: dict[str, str]) -> list[Rating]:
    """{rater: one letter per item, "a" accept, "f" flag, "." not rated} -> ratings of items i1, i2, ..."""
    label = {"a": "accept", "f": "flag"}
    return [
        Rating(f"i{i}", rater, label[x])
        for rater, letters in columns.items()
        for i, x in enumerate(letters, start=1)
        if x != "."
    ]


def pair(figs: dict, a: str, b: str) -> dict:
    (found,) = [p for p in figs["cohen"] if p["raters"] == [a, b]]
    return found


# ----------------------------------------------------------------------------- a small complete table

#           items 1-6  7  8  9  10
SMALL = {
    "A": "aaaaaa" + "affa",
    "B": "aaaaaa" + "afaf",
    "C": "aaaaaa" + "fffa",
}


def test_small_table_hand_values():
    figs = agreement_figures(table(SMALL), VERDICTS)
    assert (figs["items"], figs["items_rated"], figs["raters"], figs["ratings"]) == (10, 10, 3, 30)
    assert figs["label_counts"] == {"accept": 23, "flag": 7}  # 18 in items 1-6, then 2 + 0 + 1 + 2
    assert figs["reasons"] == {}

    # Per item (accepts, flags) and the share of the 3 rater pairs that agree:
    #   items 1-6 (3,0): 3/3; item 7 (2,1): 1/3; item 8 (0,3): 3/3; item 9 (1,2): 1/3; item 10 (2,1): 1/3
    #   mean = (6 + 1/3 + 1 + 1/3 + 1/3) / 10 = 8 / 10
    assert figs["percent_agreement"] == pytest.approx(0.8)

    # Fleiss: p_accept = 23/30, p_flag = 7/30, P_e = (23^2 + 7^2) / 30^2 = 578/900, P_bar = 0.8 = 720/900
    #   kappa = (720 - 578) / (900 - 578) = 142/322 = 71/161 = 0.440994
    assert figs["fleiss_kappa"] == pytest.approx(71 / 161)
    assert (figs["fleiss_items"], figs["fleiss_ratings_per_item"]) == (10, 3)

    # Gwet AC1: pi_accept = mean of (accepts / 3) = 23/30, pi_flag = 7/30,
    #   p_e = sum pi (1 - pi) / (q - 1) = 2 * 23/30 * 7/30 = 322/900
    #   AC1 = (720 - 322) / (900 - 322) = 398/578 = 199/289 = 0.688581
    assert figs["gwet_ac1"] == pytest.approx(199 / 289)

    # Krippendorff (nominal), coincidences o_ck = sum over items of (c-k pairs) / (m_u - 1), m_u = 3:
    #   items 1-6: o_aa += 3*2/2 = 3 each -> 18; item 7 (2,1): o_aa += 1, o_af += 1, o_fa += 1;
    #   item 8 (0,3): o_ff += 3; item 9 (1,2): o_ff += 1, o_af += 1, o_fa += 1; item 10 (2,1): like item 7
    #   o_aa = 20, o_ff = 4, o_af = o_fa = 3, n = 30, n_a = 23, n_f = 7
    #   D_o = 6/30, D_e = 2 * 23 * 7 / (30 * 29) = 322/870
    #   alpha = 1 - (6 * 870) / (30 * 322) = 1 - 87/161 = 74/161 = 0.459627
    assert figs["krippendorff_alpha"] == pytest.approx(74 / 161)

    # Cohen: A flags {8, 9}, B flags {8, 10}, C flags {7, 8, 9}
    #   A-B: disagree on 9, 10: p_o = 0.8; flag shares 0.2, 0.2: p_e = 0.8*0.8 + 0.2*0.2 = 0.68
    #        kappa = 0.12 / 0.32 = 0.375
    #   A-C: disagree on 7: p_o = 0.9; flag shares 0.2, 0.3: p_e = 0.8*0.7 + 0.2*0.3 = 0.62
    #        kappa = 0.28 / 0.38 = 14/19 = 0.736842
    #   B-C: disagree on 7, 9, 10: p_o = 0.7; p_e = 0.62; kappa = 0.08 / 0.38 = 4/19 = 0.210526
    assert [p["raters"] for p in figs["cohen"]] == [["A", "B"], ["A", "C"], ["B", "C"]]
    expected = {("A", "B"): (0.8, 0.375), ("A", "C"): (0.9, 14 / 19), ("B", "C"): (0.7, 4 / 19)}
    for (a, b), (po, kappa) in expected.items():
        p = pair(figs, a, b)
        assert p["items"] == 10
        assert p["percent_agreement"] == pytest.approx(po)
        assert p["kappa"] == pytest.approx(kappa)
        assert p["reason"] is None
    json.dumps(figs)


def test_categories_default_to_the_labels_seen_and_unknown_labels_are_refused():
    figs = agreement_figures(table(SMALL))
    assert figs["categories"] == ["accept", "flag"]
    assert figs["gwet_ac1"] == pytest.approx(199 / 289)
    with pytest.raises(ValueError, match="outside the categories"):
        agreement_figures([*table(SMALL), Rating("i1", "D", "maybe")], VERDICTS)


# ----------------------------------------------------------------------------- the prevalence paradox


def test_prevalence_paradox_kappa_near_zero_ac1_high():
    # 20 items, A flags item 1 only, B flags item 2 only
    ratings = table({"A": "f" + "a" * 19, "B": "af" + "a" * 18})
    figs = agreement_figures(ratings, VERDICTS)
    # p_o = 18/20 = 0.9
    assert figs["percent_agreement"] == pytest.approx(0.9)
    # Cohen: flag shares 1/20 each: p_e = 0.95^2 + 0.05^2 = 0.905; kappa = (0.9 - 0.905) / (1 - 0.905) = -0.0526
    assert pair(figs, "A", "B")["kappa"] == pytest.approx(-0.0526, abs=1e-3)
    # AC1: pi_flag = (1/2 + 1/2) / 20 = 0.05; p_e = 2 * 0.95 * 0.05 = 0.095; AC1 = (0.9 - 0.095) / 0.905 = 0.8895
    assert figs["gwet_ac1"] == pytest.approx(0.8895, abs=1e-3)
    # Fleiss with two raters: p_e = 0.95^2 + 0.05^2 = 0.905 too (pooled shares equal), so the same -0.0526
    assert figs["fleiss_kappa"] == pytest.approx(-0.0526, abs=1e-3)
    # Krippendorff: items 1, 2 each give o_af = o_fa = 1/(2 - 1) = 1; n = 40, n_a = 38, n_f = 2
    #   D_o = (2 + 2)/40, D_e = 2 * 38 * 2 / (40 * 39) = 152/1560
    #   alpha = 1 - (4 * 1560) / (40 * 152) = 1 - 6240/6080 = -0.026316: it collapses like kappa
    assert figs["krippendorff_alpha"] == pytest.approx(1 - 6240 / 6080)


# ----------------------------------------------------------------------------- missing ratings

#   item 1   2   3   4   5   6   7
MISSING = {
    "A": "aafa.ff",
    "B": "aa.faa.",
    "C": "a.f.aa.",
}


def test_missing_ratings_alpha_ac1_and_fleiss_on_the_modal_items():
    figs = agreement_figures(table(MISSING), VERDICTS)
    # (accepts, flags) per item: 1 (3,0), 2 (2,0), 3 (0,2), 4 (1,1), 5 (2,0), 6 (2,1), 7 (0,1)
    assert (figs["items"], figs["items_rated"], figs["ratings"]) == (6, 7, 15)

    # percent agreement over items 1-6 (item 7 has one rating): 1, 1, 1, 0, 1, 1/3 -> (13/3) / 6 = 13/18
    assert figs["percent_agreement"] == pytest.approx(13 / 18)

    # Gwet AC1 (Gwet 2014): p_a = 13/18 over the 6 items with 2+ ratings;
    #   pi_accept over all 7 rated items = (1 + 1 + 0 + 1/2 + 1 + 2/3 + 0) / 7 = (25/6) / 7 = 25/42, pi_flag = 17/42
    #   p_e = 2 * 25/42 * 17/42 = 850/1764; p_a = 1274/1764
    #   AC1 = (1274 - 850) / (1764 - 850) = 424/914 = 212/457 = 0.463895
    assert figs["gwet_ac1"] == pytest.approx(212 / 457)

    # Krippendorff over the pairable items 1-6 (n = 14 values):
    #   1 (3a, m=3): o_aa += 3; 2 (2a, m=2): o_aa += 2; 3 (2f): o_ff += 2; 4 (1a1f, m=2): o_af += 1, o_fa += 1;
    #   5 (2a): o_aa += 2; 6 (2a1f, m=3): o_aa += 1, o_af += 1, o_fa += 1
    #   o_aa = 8, o_ff = 2, o_af = o_fa = 2; n_a = 10, n_f = 4
    #   D_o = 4/14, D_e = 2 * 10 * 4 / (14 * 13) = 80/182; alpha = 1 - (4 * 182) / (14 * 80) = 1 - 0.65 = 0.35
    assert figs["krippendorff_alpha"] == pytest.approx(0.35)

    # Fleiss: ratings per item 3, 2, 2, 2, 2, 3 -> modal 2: items 2-5, counts (2,0), (0,2), (1,1), (2,0)
    #   P_i = 1, 1, 0, 1 -> P_bar = 0.75; p_accept = 5/8, p_flag = 3/8; P_e = (25 + 9) / 64 = 34/64
    #   kappa = (48/64 - 34/64) / (30/64) = 14/30 = 7/15
    assert (figs["fleiss_items"], figs["fleiss_ratings_per_item"]) == (4, 2)
    assert figs["fleiss_kappa"] == pytest.approx(7 / 15)
    assert "modal" in figs["fleiss_note"] and "2 items with another number" in figs["fleiss_note"]

    # Cohen on the common items only:
    #   A-B: items 1, 2, 4, 6: A a a a f, B a a f a: p_o = 2/4; flag shares 1/4, 1/4: p_e = 9/16 + 1/16 = 10/16
    #        kappa = (8/16 - 10/16) / (6/16) = -1/3
    #   A-C: items 1, 3, 6: A a f f, C a f a: p_o = 2/3; A flags 2/3, C 1/3: p_e = 1/3 * 2/3 + 2/3 * 1/3 = 4/9
    #        kappa = (6/9 - 4/9) / (5/9) = 0.4
    #   B-C: items 1, 5, 6, all accepted by both: p_o = 1, p_e = 1 -> not estimable
    ab, ac, bc = pair(figs, "A", "B"), pair(figs, "A", "C"), pair(figs, "B", "C")
    assert (ab["items"], ab["percent_agreement"]) == (4, 0.5)
    assert ab["kappa"] == pytest.approx(-1 / 3)
    assert ac["items"] == 3 and ac["percent_agreement"] == pytest.approx(2 / 3)
    assert ac["kappa"] == pytest.approx(0.4)
    assert (bc["items"], bc["percent_agreement"], bc["kappa"], bc["reason"]) == (3, 1.0, None, ONE_CATEGORY)


def test_a_one_rating_item_changes_ac1_only_through_the_category_shares():
    # Without item 7 (A's lone flag): pi_accept = (25/6) / 6 = 25/36, pi_flag = 11/36
    #   p_e = 2 * 25/36 * 11/36 = 550/1296; p_a = 13/18 = 936/1296; AC1 = (936 - 550) / (1296 - 550) = 386/746
    without = agreement_figures([r for r in table(MISSING) if r.item != "i7"], VERDICTS)
    assert without["gwet_ac1"] == pytest.approx(386 / 746)
    # alpha and percent agreement ignore the unpairable item
    assert without["krippendorff_alpha"] == pytest.approx(0.35)
    assert without["percent_agreement"] == pytest.approx(13 / 18)


def test_a_later_rating_by_the_same_rater_replaces_the_earlier_one():
    ratings = table(SMALL)
    changed = [*ratings, Rating("i9", "B", "flag")]  # B now agrees with A and C on item 9
    figs = agreement_figures(changed, VERDICTS)
    assert figs["ratings"] == 30
    # item 9 becomes (0,3): percent agreement (6 + 1/3 + 1 + 1 + 1/3) / 10 = 26/30
    assert figs["percent_agreement"] == pytest.approx(26 / 30)


# ----------------------------------------------------------------------------- degenerate inputs


def test_all_accepted_kappa_and_alpha_not_estimable():
    figs = agreement_figures(table({"A": "aaaa", "B": "aaaa", "C": "aaaa"}), VERDICTS)
    assert figs["percent_agreement"] == 1.0
    assert figs["fleiss_kappa"] is None and figs["reasons"]["fleiss_kappa"] == ONE_CATEGORY
    assert figs["krippendorff_alpha"] is None and figs["reasons"]["krippendorff_alpha"] == ONE_CATEGORY
    assert all(p["kappa"] is None and p["reason"] == ONE_CATEGORY for p in figs["cohen"])
    assert len(figs["cohen"]) == 3
    # AC1 on the two-category scale: pi = (1, 0), p_e = 0, AC1 = (1 - 0) / (1 - 0) = 1
    assert figs["gwet_ac1"] == 1.0
    # without a scale only one category is known: q = 1, p_e = .../(q - 1) is undefined
    figs = agreement_figures(table({"A": "aaaa", "B": "aaaa"}))
    assert figs["gwet_ac1"] is None and figs["reasons"]["gwet_ac1"] == ONE_CATEGORY
    json.dumps(figs)


def test_a_single_item():
    figs = agreement_figures(table({"A": "a", "B": "f"}), VERDICTS)
    assert (figs["items"], figs["ratings"]) == (1, 2)
    assert figs["percent_agreement"] == 0.0
    for name in ("fleiss_kappa", "krippendorff_alpha", "gwet_ac1"):
        assert figs[name] is None and figs["reasons"][name] == FEW_ITEMS
    assert figs["fleiss_items"] == 0
    (p,) = figs["cohen"]
    assert (p["items"], p["percent_agreement"], p["kappa"], p["reason"]) == (1, 0.0, None, FEW_COMMON)


def test_a_single_rating_and_no_ratings():
    figs = agreement_figures([Rating("i1", "A", "flag")], VERDICTS)
    assert (figs["items"], figs["items_rated"], figs["raters"], figs["cohen"]) == (0, 1, 1, [])
    assert figs["percent_agreement"] is None and figs["reasons"]["percent_agreement"] == NO_PAIRS

    for figs in (agreement_figures([], VERDICTS), agreement_figures([])):
        assert (figs["items"], figs["raters"], figs["ratings"], figs["cohen"]) == (0, 0, 0, [])
        for name in ("percent_agreement", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1"):
            assert figs[name] is None and figs["reasons"][name]
        json.dumps(figs)

    report = agreement_report([], REASONS)
    assert report["overall"]["ratings"] == 0
    assert set(report["per_reason"]) == set(REASONS)


def test_fleiss_mode_tie_goes_to_more_ratings_per_item():
    # items 1, 2 have 2 ratings, items 3, 4 have 3: tie -> the items with 3 ratings
    figs = agreement_figures(table({"A": "afaa", "B": "aafa", "C": "..af"}), VERDICTS)
    assert (figs["fleiss_items"], figs["fleiss_ratings_per_item"]) == (2, 3)
    # items 3 (a, f, a) and 4 (a, a, f): P_i = 1/3 each; p_accept = 4/6; P_e = 16/36 + 4/36 = 20/36
    #   kappa = (12/36 - 20/36) / (16/36) = -0.5
    assert figs["fleiss_kappa"] == pytest.approx(-0.5)


# ----------------------------------------------------------------------------- per-reason tables

DECISIONS = [
    ("i1", "A", "flag", ["ambiguous_evidence"]),
    ("i1", "B", "flag", ["ambiguous_evidence", "wrong_reference"]),
    ("i2", "A", "accept", []),
    ("i2", "B", "accept", []),
    ("i3", "A", "flag", ["format_wording"]),
    ("i3", "B", "flag", ["ambiguous_evidence"]),
    ("i4", "A", "accept", ["other"]),  # an accept is "no" for every reason, whatever it carries
    ("i4", "B", "flag", ["other"]),
]


def test_reason_ratings_binary_tables():
    tables = reason_ratings(DECISIONS, REASONS)
    assert list(tables) == REASONS

    def labels(reason: str) -> dict[tuple[str, str], str]:
        return {(r.item, r.rater): r.label for r in tables[reason]}

    assert labels("ambiguous_evidence") == {
        ("i1", "A"): "yes",
        ("i1", "B"): "yes",
        ("i2", "A"): "no",
        ("i2", "B"): "no",
        ("i3", "A"): "no",
        ("i3", "B"): "yes",
        ("i4", "A"): "no",
        ("i4", "B"): "no",
    }
    assert {k for k, v in labels("wrong_reference").items() if v == "yes"} == {("i1", "B")}
    assert {k for k, v in labels("format_wording").items() if v == "yes"} == {("i3", "A")}
    assert {k for k, v in labels("other").items() if v == "yes"} == {("i4", "B")}
    assert all(len(t) == 8 for t in tables.values())


def test_reason_ratings_refuses_unknown_reasons_and_verdicts():
    with pytest.raises(ValueError, match="not in"):
        reason_ratings([("i1", "A", "flag", ["typo"])], REASONS)
    with pytest.raises(ValueError, match="neither"):
        reason_ratings([("i1", "A", "maybe", [])], REASONS)
    with pytest.raises(TypeError):
        reason_ratings([("i1", "A", "flag", "other")], REASONS)
    with pytest.raises(ValueError, match="repeat"):
        reason_ratings([], ["other", "other"])


def test_agreement_report_hand_values():
    report = agreement_report(DECISIONS, REASONS)
    overall, per = report["overall"], report["per_reason"]
    # overall: A f a f a, B f a f f: p_o = 3/4; flag shares 2/4, 3/4: p_e = 2/4 * 1/4 + 2/4 * 3/4 = 8/16
    #   kappa = (12/16 - 8/16) / (8/16) = 0.5
    assert overall["percent_agreement"] == pytest.approx(0.75)
    assert pair(overall, "A", "B")["kappa"] == pytest.approx(0.5)
    # ambiguous_evidence: A yes no no no, B yes no yes no: p_o = 3/4; yes shares 1/4, 2/4:
    #   p_e = 3/4 * 2/4 + 1/4 * 2/4 = 8/16; kappa = 0.5
    amb = per["ambiguous_evidence"]
    assert amb["categories"] == list(YES_NO)
    assert amb["percent_agreement"] == pytest.approx(0.75)
    assert pair(amb, "A", "B")["kappa"] == pytest.approx(0.5)
    # wrong_reference: A all no, B yes on i1: p_o = 3/4; p_e = 1 * 3/4 + 0 * 1/4 = 3/4; kappa = 0
    assert per["wrong_reference"]["percent_agreement"] == pytest.approx(0.75)
    assert pair(per["wrong_reference"], "A", "B")["kappa"] == pytest.approx(0.0)
    # AC1 for wrong_reference: pi_yes = (1/2 + 0 + 0 + 0) / 4 = 1/8; p_e = 2 * 1/8 * 7/8 = 14/64
    #   AC1 = (48/64 - 14/64) / (50/64) = 34/50 = 0.68
    assert per["wrong_reference"]["gwet_ac1"] == pytest.approx(0.68)
    json.dumps(report)


def test_agreement_report_matches_agreement_figures_on_each_table():
    decisions = [(r.item, r.rater, r.label, ["other"] if r.label == "flag" else []) for r in table(MISSING)]
    decisions += [("i3", "B", "flag", ["other", "wrong_reference"]), ("i5", "A", "flag", ["wrong_reference"])]
    report = agreement_report(decisions, REASONS)
    assert report["overall"] == agreement_figures([Rating(i, r, v) for i, r, v, _ in decisions], VERDICTS)
    for reason, ratings in reason_ratings(decisions, REASONS).items():
        assert report["per_reason"][reason] == agreement_figures(ratings, YES_NO), reason


# ----------------------------------------------------------------------------- csv


def read(path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def test_write_csv(tmp_path):
    report = agreement_report(DECISIONS, REASONS)
    folder = tmp_path / "agreement"
    paths = write_csv(report, folder)
    assert [p.name for p in paths] == ["overall.csv", "per_reason.csv", "cohen_pairs.csv"]
    assert sorted(p.name for p in folder.iterdir()) == ["cohen_pairs.csv", "overall.csv", "per_reason.csv"]

    overall = read(folder / "overall.csv")
    assert overall[0] == ["figure", "value", "note"]
    assert [row[0] for row in overall[1:]] == list(CSV_FIGURES)
    rows = {row[0]: row for row in overall[1:]}
    assert rows["items"][1:] == ["4", ""]
    assert rows["raters"][1] == "2" and rows["ratings"][1] == "8"
    assert float(rows["percent_agreement"][1]) == pytest.approx(0.75)
    # 2 x 2 overall table, 4 items of 2 ratings: p_accept = 3/8, p_flag = 5/8; P_bar = 3/4;
    #   P_e = (9 + 25) / 64 = 34/64; kappa = (48 - 34) / (64 - 34) = 14/30
    assert float(rows["fleiss_kappa"][1]) == pytest.approx(14 / 30)
    assert "all 4 items" in rows["fleiss_kappa"][2]

    per = read(folder / "per_reason.csv")
    assert per[0] == ["flag_reason", "figure", "value", "note"]
    assert len(per) == 1 + len(REASONS) * len(CSV_FIGURES)
    assert [row[:2] for row in per[1 : 1 + len(CSV_FIGURES)]] == [["ambiguous_evidence", f] for f in CSV_FIGURES]

    pairs = read(folder / "cohen_pairs.csv")
    assert pairs[0] == ["table", "rater_a", "rater_b", "figure", "value", "note"]
    assert len(pairs) == 1 + (1 + len(REASONS)) * 3
    kappa = {row[0]: row for row in pairs[1:] if row[3] == "kappa"}
    assert float(kappa["overall"][4]) == pytest.approx(0.5)
    assert float(kappa["ambiguous_evidence"][4]) == pytest.approx(0.5)
    assert kappa["overall"][1:3] == ["A", "B"]


def test_write_csv_not_estimable_is_empty_with_a_note(tmp_path):
    report = agreement_report([("i1", "A", "accept", []), ("i1", "B", "accept", [])], REASONS)
    write_csv(report, tmp_path)
    rows = {row[0]: row for row in read(tmp_path / "overall.csv")[1:]}
    assert rows["percent_agreement"][1:] == ["1.0", ""]
    assert rows["krippendorff_alpha"][1:] == ["", FEW_ITEMS]
    assert rows["gwet_ac1"][1:] == ["", FEW_ITEMS]
    pairs = read(tmp_path / "cohen_pairs.csv")
    assert ["overall", "A", "B", "kappa", "", FEW_COMMON] in pairs
    # writing again replaces the files and leaves no temporary file behind
    write_csv(report, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cohen_pairs.csv", "overall.csv", "per_reason.csv"]


# ----------------------------------------------------------------------------- core module


def test_importing_the_module_loads_no_heavy_library():
    code = (
        "import sys, reviewer.review.agreement; "
        "print([m for m in ('numpy', 'statsmodels', 'krippendorff', 'agreement', 'PySide6', 'napari', 'pyqtgraph') "
        "if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("seed", range(6))
def test_cohen_and_fleiss_equal_statsmodels(seed):
    """agreement's Conger kappa (two raters) and Scott's pi (same ratings per item) are statsmodels' Cohen's and
    Fleiss' kappa: random tables of three raters with missing ratings, every pair and the modal items."""
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 60))
    truth = rng.random(n) < 0.7
    columns = {}
    for r in "ABC":
        agree = rng.random(n) < 0.8
        rated = rng.random(n) < 0.85
        columns[r] = "".join("." if not rated[i] else ("a" if truth[i] == agree[i] else "f") for i in range(n))
    figs = agreement_figures(table(columns), categories=VERDICTS)
    code = {"a": 0, "f": 1}
    for p in figs["cohen"]:
        a, b = p["raters"]
        both = [(code[x], code[y]) for x, y in zip(columns[a], columns[b], strict=True) if "." not in (x, y)]
        t = np.zeros((2, 2))
        for x, y in both:
            t[x, y] += 1
        if p["kappa"] is not None:
            assert p["kappa"] == pytest.approx(cohens_kappa(t, return_results=False), abs=1e-12)
    rows = [[r[i] for r in columns.values() if r[i] != "."] for i in range(n)]
    size = figs["fleiss_ratings_per_item"]
    counts = np.array([[row.count("a"), row.count("f")] for row in rows if len(row) == size and size >= 2])
    if figs["fleiss_kappa"] is not None:
        assert figs["fleiss_kappa"] == pytest.approx(fleiss_kappa(counts, method="fleiss"), abs=1e-12)


def test_the_report_loads_neither_statsmodels_nor_pandas():
    """A cold `review agreement` spent most of its time importing statsmodels (pandas, scipy.stats)."""
    code = (
        "import sys\n"
        "from reviewer.review.agreement import Rating, agreement_figures\n"
        "r = [Rating(f'i{i}', u, 'accept' if (i + len(u)) % 3 else 'flag') for i in range(9) for u in ('a', 'bb', 'c')]\n"
        "f = agreement_figures(r)\n"
        "assert f['fleiss_kappa'] is not None and f['cohen'][0]['kappa'] is not None, f\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'statsmodels', 'pandas', 'scipy'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
