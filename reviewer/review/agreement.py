"""Inter-rater agreement for stage-1 review: k annotators judge each item, `accept` or `flag` with flag reasons.

Most items are accepted, so Cohen's and Fleiss' kappa and Krippendorff's alpha collapse towards 0 (or below) even
when the annotators almost always agree: the chance agreement they subtract is itself near 1 (the prevalence
paradox). Gwet's AC1 corrects for chance differently and stays high, so the report gives all of them side by side.

Which library computes which figure:

- percent agreement: here (the share of agreeing rater pairs per item, averaged over items with 2+ ratings);
- Cohen's kappa per annotator pair: `agreement.metrics.cohens_kappa` (Conger's generalisation, which for two raters is
  Cohen's) on the pair's items x category counts and the two raters' marginals;
- Fleiss' kappa: `agreement.metrics.scotts_pi` (the multi-rater Scott's pi, which is Fleiss' kappa when every item has
  the same number of ratings) on the item x category count table, restricted to the
  items with the modal number of ratings (Fleiss needs the same number per item);
- Krippendorff's alpha (nominal, missing ratings allowed): `krippendorff.alpha` on the raters x items matrix with NaN;
- Gwet's AC1 (multi-rater, missing ratings allowed, Gwet 2008 / Handbook 2014): `agreement.metrics.gwets_gamma` on
  the item x category count table (checked against hand values, with and without missing ratings, in the tests).

The count tables are built here with `np.bincount` once per table (statsmodels' `aggregate_raters` and `agreement`'s
`pivot_table_frequency` would do the same with a per-item loop, resp. a dense ratings x items one-hot matrix).

Both equal statsmodels' `cohens_kappa` and `fleiss_kappa(method="fleiss")` to 1e-15 (test_agreement checks it);
statsmodels itself is not used here because importing it loads pandas and scipy.stats, most of a cold
`reviewer review agreement`'s time.

This module is core: no Qt, napari or pyqtgraph, and numpy, krippendorff and agreement are imported inside
the functions so that importing it (and so starting the CLI) stays cheap.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

#: The stage-1 verdicts, in the order of the overall table's categories.
VERDICTS = ("accept", "flag")
#: The categories of a per-reason table: did the rater flag the item with that reason?
YES_NO = ("no", "yes")

#: The rows of overall.csv and per_reason.csv, in order.
CSV_FIGURES = (
    "items",
    "items_rated",
    "raters",
    "ratings",
    "percent_agreement",
    "fleiss_kappa",
    "fleiss_items",
    "krippendorff_alpha",
    "gwet_ac1",
)
#: The rows of cohen_pairs.csv for each annotator pair.
#: What `review agreement --csv DIR` writes into DIR (per_task.csv with the per-task part).
CSV_FILES = frozenset({"overall.csv", "per_reason.csv", "cohen_pairs.csv", "per_task.csv"})
CSV_PAIR_FIGURES = ("items", "percent_agreement", "kappa")

NO_PAIRS = "no item with 2 ratings"
FEW_ITEMS = "fewer than 2 items with 2 ratings"
FEW_MODAL = "fewer than 2 items with the modal number of ratings"
FEW_COMMON = "fewer than 2 common items"
ONE_CATEGORY = "one category only"


@dataclass(frozen=True, slots=True)
class Rating:
    """One annotator's label for one item."""

    item: str  #: item key
    rater: str  #: annotator name
    label: str  #: e.g. "accept" / "flag", or "no" / "yes" in a per-reason table


# ----------------------------------------------------------------------------- public face


def agreement_figures(ratings: Iterable[Rating], categories: Sequence[str] | None = None) -> dict[str, Any]:
    """All agreement figures for one table of nominal ratings (JSON-serialisable).

    `categories` is the scale (its length is the q of Gwet's chance agreement); by default the labels seen, sorted.
    A label outside `categories` is a ValueError. When one rater labels one item twice, the later rating counts.

    Keys: `items` (items with >= 2 ratings), `items_rated` (>= 1), `raters`, `ratings`, `categories`,
    `label_counts`, `percent_agreement`, `cohen` (one entry per annotator pair with >= 1 common item:
    {"raters": [a, b], "items": n, "percent_agreement": x, "kappa": x, "reason": why kappa is None or None}),
    `fleiss_kappa`, `fleiss_items`, `fleiss_ratings_per_item`, `fleiss_note`, `krippendorff_alpha`, `gwet_ac1`, and
    `reasons`: {figure: why it is None} for each figure that is not estimable.
    """
    latest: dict[tuple[str, str], str] = {}
    for r in ratings:
        latest[(r.item, r.rater)] = r.label
    seen = set(latest.values())
    if categories is None:
        cats = sorted(seen)
    else:
        cats = _categories(categories)
        unknown = seen - set(cats)
        if unknown:
            raise ValueError(f"labels outside the categories {cats}: {sorted(unknown)}")
    code = {c: i for i, c in enumerate(cats)}
    m, raters, _, _ = _matrix(latest.keys(), [code[label] for label in latest.values()])
    return _figures(m, raters, cats)


def reason_ratings(
    decisions: Iterable[tuple[str, str, str, Sequence[str]]], reasons: Sequence[str]
) -> dict[str, list[Rating]]:
    """One binary table per flag reason: label "yes" if that rater flagged the item with that reason, else "no".

    `decisions` are (item, rater, verdict, flag reasons) with verdict "accept" or "flag". An accept is "no" for every
    reason (whatever reasons it carries); a flag reason outside `reasons` is a ValueError (the codebook given is not
    the one the decisions were made with). When one rater decided one item twice, the later decision counts.
    """
    reasons = _categories(reasons, what="reasons")
    latest = _latest_decisions(decisions, reasons)
    return {
        reason: [
            Rating(item, rater, "yes" if reason in flagged else "no") for (item, rater), (_, flagged) in latest.items()
        ]
        for reason in reasons
    }


def agreement_report(decisions: Iterable[tuple[str, str, str, Sequence[str]]], reasons: Sequence[str]) -> dict:
    """{"overall": figures of the accept/flag table, "per_reason": {reason: figures of its no/yes table}}.

    Same figures as `agreement_figures` on the accept/flag ratings (categories VERDICTS) and on each table of
    `reason_ratings` (categories YES_NO), but the item x rater grid is built once for all the tables.
    """
    import numpy as np

    reasons = _categories(reasons, what="reasons")
    latest = _latest_decisions(decisions, reasons)
    verdicts = [VERDICTS.index(v) for v, _ in latest.values()]
    m, raters, ii, rr = _matrix(latest.keys(), verdicts)
    rated = m >= 0
    # flags[i, r, k]: rater r flagged item i with reason k (only where the rater rated the item)
    flags = np.zeros((*m.shape, len(reasons)), dtype=np.intp)
    reason_ix = {reason: k for k, reason in enumerate(reasons)}
    at = [(k, reason_ix[x]) for k, (_, flagged) in enumerate(latest.values()) for x in flagged]
    if at:
        pos, ks = np.array(at, dtype=np.intp).T
        flags[ii[pos], rr[pos], ks] = 1
    per_reason = {
        reason: _figures(np.where(rated, flags[:, :, k], -1), raters, YES_NO) for k, reason in enumerate(reasons)
    }
    return {"overall": _figures(m, raters, VERDICTS), "per_reason": per_reason}


def per_task_report(decisions: Iterable[tuple[str, str, str, Sequence[str]]], task_of: dict[str, str]) -> dict:
    """{task: figures of the accept/flag table of that task's items}: which templates people disagree on.

    `task_of` maps each item to its task (the question's template task, or its class for a question without one:
    insufficient); an item missing from it is under "none"."""
    by_task: dict[str, list[Rating]] = {}
    for item, rater, verdict, _ in decisions:
        by_task.setdefault(task_of.get(item) or "none", []).append(Rating(item, rater, verdict))
    return {task: agreement_figures(ratings, VERDICTS) for task, ratings in sorted(by_task.items())}


def write_csv(report: dict, folder: Path) -> list[Path]:
    """Write overall.csv, per_reason.csv and cohen_pairs.csv into `folder` (created if missing), one row per figure;
    with a "per_task" part (`per_task_report`), per_task.csv too (task,figure,value,note).

    overall.csv: figure,value,note; per_reason.csv: flag_reason,figure,value,note; cohen_pairs.csv:
    table,rater_a,rater_b,figure,value,note (table is "overall" or the flag reason). An empty value is a figure that
    is not estimable, and its note says why. The files are written whole or not at all, into a folder that is new,
    empty or holds only these files (CSV_FILES: an earlier --csv; reviewer.fileio's one rule for output folders).
    """
    from reviewer.fileio import write_folder

    folder = Path(folder)
    tables = {"overall": report["overall"], **report["per_reason"]}

    overall = [["figure", "value", "note"]]
    overall += [[name, _cell(value), note] for name, value, note in _figure_rows(report["overall"])]
    per_reason = [["flag_reason", "figure", "value", "note"]]
    for reason, figs in report["per_reason"].items():
        per_reason += [[reason, name, _cell(value), note] for name, value, note in _figure_rows(figs)]
    pairs = [["table", "rater_a", "rater_b", "figure", "value", "note"]]
    for table, figs in tables.items():
        for pair in figs["cohen"]:
            for name in CSV_PAIR_FIGURES:
                note = (pair["reason"] or "") if name == "kappa" else ""
                pairs.append([table, *pair["raters"], name, _cell(pair[name]), note])

    files = [("overall.csv", overall), ("per_reason.csv", per_reason), ("cohen_pairs.csv", pairs)]
    if "per_task" in report:
        per_task = [["task", "figure", "value", "note"]]
        for task, figs in report["per_task"].items():
            per_task += [[task, name, _cell(value), note] for name, value, note in _figure_rows(figs)]
        files.append(("per_task.csv", per_task))
    data = {}
    for name, rows in files:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        data[name] = buf.getvalue().encode("utf-8")
    write_folder(folder, data, ours=CSV_FILES, field="csv")
    return [folder / name for name in data]


# ----------------------------------------------------------------------------- building the grid


def _categories(values: Sequence[str], what: str = "categories") -> list[str]:
    if isinstance(values, str):
        raise TypeError(f"{what} must be a sequence of strings, not one string")
    values = list(values)
    if len(set(values)) != len(values):
        raise ValueError(f"{what} repeat a name: {values}")
    return values


def _latest_decisions(
    decisions: Iterable[tuple[str, str, str, Sequence[str]]], reasons: Sequence[str]
) -> dict[tuple[str, str], tuple[str, frozenset[str]]]:
    """{(item, rater): (verdict, flag reasons)}, the later decision winning; accepts carry no reasons."""
    known = set(reasons)
    latest: dict[tuple[str, str], tuple[str, frozenset[str]]] = {}
    no_reasons: frozenset[str] = frozenset()
    for item, rater, verdict, flagged in decisions:
        if verdict == "accept":
            latest[(item, rater)] = ("accept", no_reasons)
        elif verdict == "flag":
            if isinstance(flagged, str):
                raise TypeError(f"flag reasons of item {item!r} by {rater!r} must be a sequence, not one string")
            flagged = frozenset(flagged)
            if not flagged <= known:
                raise ValueError(
                    f"item {item!r} by {rater!r}: flag reasons {sorted(flagged - known)} are not in {list(reasons)}"
                )
            latest[(item, rater)] = ("flag", flagged)
        else:
            raise ValueError(f"item {item!r} by {rater!r}: verdict {verdict!r} is neither 'accept' nor 'flag'")
    return latest


def _matrix(keys: Iterable[tuple[str, str]], codes: Sequence[int]):
    """The items x raters matrix of category codes (-1 where a rater did not rate an item), the rater names (sorted),
    and each key's row and column."""
    import numpy as np

    keys = list(keys)
    raters = sorted({rater for _, rater in keys})
    rater_ix = {r: j for j, r in enumerate(raters)}
    item_ix: dict[str, int] = {}
    ii = np.fromiter((item_ix.setdefault(item, len(item_ix)) for item, _ in keys), np.intp, len(keys))
    rr = np.fromiter((rater_ix[rater] for _, rater in keys), np.intp, len(keys))
    m = np.full((len(item_ix), len(raters)), -1, dtype=np.intp)
    m[ii, rr] = np.asarray(codes, dtype=np.intp)  # keys are unique, so no cell is written twice
    return m, raters, ii, rr


# ----------------------------------------------------------------------------- the figures


def _figures(m, raters: list[str], categories: Sequence[str]) -> dict[str, Any]:
    """Every figure of one items x raters code matrix (-1 = missing); every item has at least one rating."""
    import numpy as np

    q = len(categories)
    n_items, n_raters = m.shape
    rated = m >= 0
    per_item = rated.sum(axis=1)
    rows = np.nonzero(rated)[0]
    counts = np.bincount(rows * q + m[rated], minlength=n_items * q).reshape(n_items, q)
    multi = per_item >= 2
    n_multi = int(multi.sum())
    reasons: dict[str, str] = {}

    figs: dict[str, Any] = {
        "items": n_multi,
        "items_rated": int(n_items),
        "raters": int(n_raters),
        "ratings": int(rated.sum()),
        "categories": list(categories),
        "label_counts": {c: int(n) for c, n in zip(categories, counts.sum(axis=0), strict=True)},
    }

    # percent agreement: per item, agreeing pairs / all pairs = sum_k n_ik (n_ik - 1) / (n_i (n_i - 1))
    c, n = counts[multi], per_item[multi]
    if n_multi:
        figs["percent_agreement"] = float(((c * (c - 1)).sum(axis=1) / (n * (n - 1))).mean())
    else:
        figs["percent_agreement"] = None
        reasons["percent_agreement"] = NO_PAIRS

    figs["cohen"] = [_cohen(m, rated, a, b, raters, q) for a, b in combinations(range(n_raters), 2)]
    figs["cohen"] = [pair for pair in figs["cohen"] if pair is not None]

    figs.update(_fleiss(counts[multi], n))
    if figs["fleiss_kappa"] is None:
        reasons["fleiss_kappa"] = figs.pop("_reason")

    pairable_categories = int(np.count_nonzero(c.sum(axis=0)))
    if n_multi < 2:
        figs["krippendorff_alpha"] = None
        reasons["krippendorff_alpha"] = FEW_ITEMS
    elif pairable_categories < 2:
        figs["krippendorff_alpha"] = None
        reasons["krippendorff_alpha"] = ONE_CATEGORY
    else:
        import krippendorff

        data = np.where(rated, m, np.nan).T  # raters x items, NaN = missing
        figs["krippendorff_alpha"] = float(
            krippendorff.alpha(reliability_data=data, value_domain=np.arange(q), level_of_measurement="nominal")
        )

    if n_multi < 2:
        figs["gwet_ac1"] = None
        reasons["gwet_ac1"] = FEW_ITEMS
    elif q < 2:
        figs["gwet_ac1"] = None
        reasons["gwet_ac1"] = ONE_CATEGORY
    else:
        from agreement.metrics import gwets_gamma

        # Gwet (2014): p_a over the items with 2+ ratings, the category shares pi_k over all rated items (every row
        # here has a rating), p_e = sum_k pi_k (1 - pi_k) / (q - 1). gwets_gamma does exactly this.
        figs["gwet_ac1"] = float(gwets_gamma(counts.astype(float)))

    figs["reasons"] = reasons
    return figs


def _cohen(m, rated, a: int, b: int, raters: list[str], q: int) -> dict[str, Any] | None:
    import numpy as np

    both = rated[:, a] & rated[:, b]
    n = int(both.sum())
    if n == 0:
        return None
    table = np.bincount(m[both, a] * q + m[both, b], minlength=q * q).reshape(q, q)
    pair: dict[str, Any] = {
        "raters": [raters[a], raters[b]],
        "items": n,
        "percent_agreement": float(np.trace(table) / n),
        "kappa": None,
        "reason": None,
    }
    if n < 2:
        pair["reason"] = FEW_COMMON
    elif np.any((table.sum(axis=1) == n) & (table.sum(axis=0) == n)):  # chance agreement 1: both used one category
        pair["reason"] = ONE_CATEGORY
    else:
        from agreement.metrics import cohens_kappa

        answers = np.zeros((n, q))  # items x categories: how many of the two chose each
        np.add.at(answers, (np.arange(n), m[both, a]), 1)
        np.add.at(answers, (np.arange(n), m[both, b]), 1)
        marginals = np.stack([table.sum(axis=1), table.sum(axis=0)]).astype(float)  # raters x categories
        pair["kappa"] = float(cohens_kappa(answers, marginals))
    return pair


def _fleiss(c, n) -> dict[str, Any]:
    """Fleiss' kappa on the items (of those with 2+ ratings: counts c, ratings per item n) with the modal n."""
    import numpy as np

    out: dict[str, Any] = {"fleiss_kappa": None, "fleiss_items": 0, "fleiss_ratings_per_item": None}
    if len(n) < 2:
        out["fleiss_note"] = out["_reason"] = FEW_ITEMS
        return out
    sizes, freq = np.unique(n, return_counts=True)
    best_freq, size = max(zip(freq.tolist(), sizes.tolist(), strict=True))  # a tie goes to more ratings per item
    table = c[n == size]
    out["fleiss_items"] = int(best_freq)
    out["fleiss_ratings_per_item"] = int(size)
    left = len(n) - best_freq
    out["fleiss_note"] = (
        f"all {best_freq} items with 2+ ratings have {size} ratings"
        if not left
        else f"the {best_freq} items with {size} ratings (the modal number); {left} items with another number of "
        "ratings left out (Fleiss' kappa needs the same number of ratings per item)"
    )
    if best_freq < 2:
        out["_reason"] = FEW_MODAL
    elif np.count_nonzero(table.sum(axis=0)) < 2:
        out["_reason"] = ONE_CATEGORY
    else:
        from agreement.metrics import scotts_pi

        out["fleiss_kappa"] = float(scotts_pi(table.astype(float)))
    return out


# ----------------------------------------------------------------------------- csv


def _figure_rows(figs: dict[str, Any]) -> list[tuple[str, Any, str]]:
    notes = dict(figs["reasons"])
    rows = []
    for name in CSV_FIGURES:
        note = notes.get(name, "")
        if name == "fleiss_kappa" and not note:
            note = figs["fleiss_note"]
        rows.append((name, figs[name], note))
    return rows


def _cell(value: Any) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)
