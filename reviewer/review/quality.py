"""How good are the annotators and the items: crowd-kit's latent-truth models over the stage-1 verdicts.

- Dawid-Skene (crowd-kit `DawidSkene`) over the accept/flag verdicts, with the gold items' known verdicts fixed as
  true labels: each annotator's confusion matrix gives their reliability (the chance their verdict matches the truth
  on an item drawn at the bank's prevalence), sensitivity (flags what is wrong) and specificity (accepts what is
  right); each item's posterior is the probability that its reference is acceptable.
- Per flag reason, Dawid-Skene again on the items someone flagged (did the annotator name that reason?): which
  reasons an annotator gives reliably.
- MACE (crowd-kit `MACE`) as a second opinion on each annotator (competence: the chance they are not guessing) and
  GLAD (crowd-kit `GLAD`) for item difficulty (1/beta), each only up to a number of decisions set in
  assets/review/quality.json: both are slow (pandas per step) and the reliability and posterior do not need them.

The models run on integer codes (crowd-kit's pandas steps are about twice as fast on them as on strings); the
figures are the same as crowd-kit's on the names. Core: no Qt; pandas and crowd-kit are imported when used.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reviewer.errors import ReviewError
from reviewer.review.rules import QualitySettings, quality_settings

#: crowd-kit's DawidSkene and GLAD stop when their bound per decision changes by less than `tol`, a fall included; a
#: -inf tol never stops them, so they run their step limit and we judge convergence ourselves (`_convergence`)
NEVER_STOP = float("-inf")

#: label codes of the verdict models: 0 = the reference is acceptable, 1 = it is not
ACCEPT, FLAG = 0, 1
VERDICT_CODE = {"accept": ACCEPT, "flag": FLAG}

ANNOTATOR_COLUMNS = (
    "annotator",
    "decisions",
    "reliability",
    "sensitivity",
    "specificity",
    "reason_reliability",
    "mace_competence",
    "glad_ability",
    "gold_decided",
    "gold_accuracy",
    "outcome_decided",
    "outcome_agreement",
    "median_seconds",
    "skip_share",
    "undo_share",
)
#: What `review quality --csv DIR` writes into DIR.
CSV_FILES = frozenset({"annotators.csv", "items.csv"})
ITEM_COLUMNS = ("item", "decisions", "accepts", "posterior_acceptable", "difficulty", "state", "outcome")


# ----------------------------------------------------------------------------- the models


@contextmanager
def _quiet() -> Iterator[None]:
    """crowd-kit's pandas calls warn about pandas' own deprecations (inplace=True): not the user's concern."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _frame(decisions: Sequence[tuple[str, str, str]], codes: dict[str, int] = VERDICT_CODE):
    """Integer-coded task/worker/label frame (labels by `codes`), and the item and annotator names by code."""
    import numpy as np
    import pandas as pd

    items: dict[str, int] = {}
    raters: dict[str, int] = {}
    task = np.array([items.setdefault(d[0], len(items)) for d in decisions], np.int64)
    worker = np.array([raters.setdefault(d[1], len(raters)) for d in decisions], np.int64)
    label = np.array([codes[d[2]] for d in decisions], np.int64)
    return pd.DataFrame({"task": task, "worker": worker, "label": label}), list(items), list(raters)


def _latest(decisions: Iterable[tuple[str, str, str, Sequence[str]]]) -> dict[tuple[str, str], tuple[str, tuple]]:
    latest: dict[tuple[str, str], tuple[str, tuple]] = {}
    for item, rater, verdict, reasons in decisions:
        if verdict not in VERDICT_CODE:
            raise ReviewError(f"item {item!r} by {rater!r}: verdict {verdict!r} is neither 'accept' nor 'flag'")
        latest[(item, rater)] = (verdict, tuple(reasons) if verdict == "flag" else ())
    return latest


def dawid_skene(
    decisions: Sequence[tuple[str, str, str]],
    gold: dict[str, str],
    settings: QualitySettings,
    codes: dict[str, int] = VERDICT_CODE,
):
    """crowd-kit DawidSkene on (item, annotator, label); gold items' labels fixed. Returns the fitted model and
    the item and annotator names of its integer codes."""
    import pandas as pd
    from crowdkit.aggregation import DawidSkene

    df, items, raters = _frame(decisions, codes)
    # sorted by item: crowd-kit's joins and groupings run on monotonic indexes (about 15% faster a step; the figures
    # the same but for the order of floating-point sums, ~1e-13)
    df = df.sort_values(["task", "worker"], kind="stable", ignore_index=True)
    code = {name: i for i, name in enumerate(items)}
    truth = pd.Series({code[i]: codes[v] for i, v in gold.items() if i in code}, dtype="int64")
    ds = DawidSkene(n_iter=settings.ds_iterations, tol=NEVER_STOP)
    with _quiet():
        ds.fit(df, true_labels=truth if len(truth) else None)
    return ds, items, raters


def _ds_rater_figures(ds, raters: list[str], labels: tuple[int, int] = (ACCEPT, FLAG)) -> dict[str, dict[str, Any]]:
    """Reliability (accuracy at the fitted prevalence), sensitivity and specificity per annotator from the
    confusion matrices: errors_.loc[(worker, observed), true] = P(observed | true). A rate whose true class never
    occurred (no flag at all: no sensitivity) is None."""
    good, bad = labels
    prior = ds.priors_.reindex(list(labels), fill_value=0.0)
    errors = ds.errors_
    out = {}
    for w, name in enumerate(raters):

        def p(observed: int, true: int, w: int = w) -> float | None:
            if true not in errors.columns or prior[true] == 0:
                return None
            key = (w, observed)
            return float(errors.loc[key, true]) if key in errors.index else 0.0

        spec, sens = p(good, good), p(bad, bad)
        out[name] = {
            "reliability": float(sum(prior[c] * r for c, r in ((good, spec), (bad, sens)) if r is not None)),
            "sensitivity": sens,
            "specificity": spec,
        }
    return out


def _convergence(history: Sequence[float], tol: float) -> dict[str, Any]:
    """Whether crowd-kit's EM converged: its last step changed the bound per decision by less than `tol` either way.
    crowd-kit would also stop on any fall of its bound, which EM's objective never does: its bound adds the class prior
    once per decision rather than once per item, so it can fall long before the fit settles (on a 12-item bank it
    stopped after 4 steps with posteriors 0.15 from a 1,000-step fit); so it runs with NEVER_STOP and this is the one
    rule. At the step limit the posteriors may still move: on 10,000 items x 3 annotators, 100 steps leave them up to
    0.03 from a 1,000-step fit. `last_change`: the last step's."""
    last = history[-1] - history[-2] if len(history) >= 2 else None
    return {"converged": last is not None and abs(last) < tol, "last_change": last}


def convergence_note(models: dict[str, Any]) -> str | None:
    """The line the CLI and the maintainer's quality view show under the figures: whether the Dawid-Skene fit
    converged, or stopped at its step limit with figures that may still move (None when it did not run)."""
    ds = models.get("dawid_skene", {})
    if not ds.get("ran"):
        return None
    last = ds.get("last_change")
    if ds.get("converged"):
        return (
            f"dawid_skene: converged (the last of its {ds['iterations']} EM steps changed its bound by {abs(last):.1e} "
            f"a decision, under tol {ds['tol']:g})"
        )
    moved = f"its bound still moved {abs(last):.1e} a decision, " if last is not None else ""
    return (
        f"dawid_skene: stopped at its {ds['iterations']}-step limit before converging ({moved}tol {ds['tol']:g}): "
        "the figures above may still move (models.dawid_skene.iterations in assets/review/quality.json)"
    )


def reliability(
    decisions: Iterable[tuple[str, str, str, Sequence[str]]],
    gold: dict[str, str] | None = None,
    settings: QualitySettings | None = None,
    *,
    mace: bool = False,
    reasons: bool = True,
) -> dict[str, Any]:
    """The models' figures for stage-1 decisions (item, annotator, verdict, flag reasons); the later decision of an
    annotator on an item counts. `gold`: {item: known verdict} of gold items among them. MACE runs only when asked
    (`mace`): it assumes a uniform truth, so on banks where most references are acceptable it can rank annotators
    differently from Dawid-Skene and the gold items; it is a second opinion. `reasons`: also the per-reason model.

    {"annotators": {name: {reliability, sensitivity, specificity, per_reason, mace_competence, glad_ability}},
     "items": {item: {posterior_acceptable, difficulty}}, "models": {what ran, with which settings, or why not}}.
    """
    settings = settings or quality_settings()
    gold = gold or {}
    latest = _latest(decisions)
    rows = [(item, rater, verdict) for (item, rater), (verdict, _) in latest.items()]
    out: dict[str, Any] = {"annotators": {}, "items": {}, "models": {}}
    if not rows:
        out["models"]["dawid_skene"] = {"ran": False, "why": "no accept or flag decision"}
        return out
    ds, items, raters = dawid_skene(rows, gold, settings)
    figs = _ds_rater_figures(ds, raters)
    posterior = ds.probas_[ACCEPT].reindex(range(len(items)), fill_value=0.0).to_numpy()
    out["models"]["dawid_skene"] = {
        "ran": True,
        "iterations": len(ds.loss_history_),
        "max_iterations": settings.ds_iterations,
        "tol": settings.ds_tol,
        **_convergence(ds.loss_history_, settings.ds_tol),
        "gold_fixed": sum(1 for i in gold if i in set(items)),
        "prevalence_acceptable": float(ds.priors_.get(ACCEPT, 0.0)),
    }
    out["items"] = {
        name: {"posterior_acceptable": float(posterior[i]), "difficulty": None} for i, name in enumerate(items)
    }
    for name in raters:
        out["annotators"][name] = {
            **figs[name],
            "reason_reliability": None,
            "per_reason": {},
            "mace_competence": None,
            "glad_ability": None,
        }
    if reasons:
        _per_reason(out, latest, settings)
    else:
        out["models"]["per_reason"] = {"ran": False, "why": "fitted for --json and --csv, which show it"}
    n = len(rows)
    if not mace:
        out["models"]["mace"] = {"ran": False, "why": "add --mace to fit it"}
    elif n <= settings.mace_max_decisions:
        _mace(out, rows, settings)
    else:
        out["models"]["mace"] = {
            "ran": False,
            "why": f"{n} decisions, over max_decisions {settings.mace_max_decisions}",
        }
    if n <= settings.glad_max_decisions:
        _glad(out, rows, settings)
    else:
        out["models"]["glad"] = {
            "ran": False,
            "why": f"{n} decisions, over max_decisions {settings.glad_max_decisions} (no difficulty)",
        }
    return out


def _per_reason(out: dict[str, Any], latest: dict, settings: QualitySettings) -> None:
    """Dawid-Skene over the reasons, on the items someone flagged (the others say nothing of reasons): each decision
    labelled 'accept' or the first flag reason it names (one fit, K+1 classes). Per annotator and reason: the chance
    they name that reason when it is the item's (its recall), and their accuracy over all the classes on those items.
    Skipped when fewer than 2 reasons were named (the verdict model says it)."""
    reasons = sorted({rs[0] for verdict, rs in latest.values() if rs})
    if len(reasons) < 2:
        out["models"]["per_reason"] = {"ran": False, "reasons": reasons, "why": "fewer than 2 flag reasons named"}
        return
    codes = {"accept": 0, **{r: k for k, r in enumerate(reasons, start=1)}}
    flagged = {item for (item, _), (verdict, _) in latest.items() if verdict == "flag"}
    rows = [(item, rater, rs[0] if rs else "accept") for (item, rater), (_, rs) in latest.items() if item in flagged]
    ds, _, raters = dawid_skene(rows, {}, settings, codes)
    prior = ds.priors_.reindex(range(len(codes)), fill_value=0.0)
    for w, name in enumerate(raters):
        hit = [
            float(ds.errors_.loc[(w, c), c]) if (w, c) in ds.errors_.index and c in ds.errors_.columns else 0.0
            for c in range(len(codes))
        ]
        per = out["annotators"][name]["per_reason"]
        per.update({r: {"reliability": hit[k]} for r, k in codes.items() if k})
        out["annotators"][name]["reason_reliability"] = float(sum(prior[c] * hit[c] for c in range(len(codes))))
    out["models"]["per_reason"] = {
        "ran": True,
        "reasons": reasons,
        "items": len(flagged),
        "iterations": len(ds.loss_history_),
        **_convergence(ds.loss_history_, settings.ds_tol),
    }


def _mace(out: dict[str, Any], rows: list[tuple[str, str, str]], settings: QualitySettings) -> None:
    from crowdkit.aggregation import MACE

    df, _, raters = _frame(rows)
    if df["label"].nunique() < 2:
        out["models"]["mace"] = {"ran": False, "why": "one verdict only"}
        return
    mace = MACE(n_restarts=settings.mace_restarts, n_iter=settings.mace_iterations, random_state=0)
    with _quiet():
        mace.fit(df)
    import pandas as pd

    order = list(pd.factorize(df["worker"])[1])  # MACE's worker order is that of first appearance
    for row, w in enumerate(order):
        out["annotators"][raters[w]]["mace_competence"] = float(mace.spamming_[row, 1])
    out["models"]["mace"] = {"ran": True, "restarts": settings.mace_restarts, "iterations": settings.mace_iterations}


def _glad(out: dict[str, Any], rows: list[tuple[str, str, str]], settings: QualitySettings) -> None:
    import numpy as np
    from crowdkit.aggregation import GLAD

    df, items, raters = _frame(rows)
    if df["label"].nunique() < 2:
        out["models"]["glad"] = {"ran": False, "why": "one verdict only (no difficulty)"}
        return
    with _quiet():
        glad = GLAD(n_iter=settings.glad_iterations, tol=NEVER_STOP, silent=True).fit(df)
    # crowd-kit fits beta through exp(beta) (GLAD's 1/beta > 0 is the difficulty): difficulty = exp(-beta_)
    for t, beta in glad.betas_.items():
        out["items"][items[int(t)]]["difficulty"] = float(np.exp(-beta))
    for w, alpha in glad.alphas_.items():
        out["annotators"][raters[int(w)]]["glad_ability"] = float(alpha)
    out["models"]["glad"] = {"ran": True, "iterations": settings.glad_iterations}


# ----------------------------------------------------------------------------- the report on a store


def outcome_of(state: str, corrected: bool) -> str | None:
    """The final outcome as a verdict on the reference stage 1 judged: accept (kept as it was) or flag (rejected or
    corrected); None while undecided. A frozen item is corrected or kept."""
    if state in ("accepted", "consensus_accepted"):
        return "accept"
    if state in ("rejected", "corrected"):
        return "flag"
    if state == "frozen":
        return "flag" if corrected else "accept"
    return None


def _gold_table(store: Any, bank: str) -> tuple[list[tuple[str, str, str, list[str]]], dict[str, str]]:
    from reviewer.review.ledger import EFFECTIVE

    rows = store.db.execute(
        "SELECT i.qid, d.user, d.verdict, d.reasons, g.verdict FROM decisions d JOIN items i ON i.id = d.item "
        "JOIN gold g ON g.item = i.id WHERE i.bank = ? AND i.gold = 1 AND d.stage = 1 "
        f"AND d.verdict IN ('accept', 'flag') AND {EFFECTIVE} ORDER BY d.id",
        [bank],
    ).fetchall()
    return [(r[0], r[1], r[2], [] if r[3] == "[]" else json.loads(r[3])) for r in rows], {r[0]: r[4] for r in rows}


def _activity(store: Any, bank: str) -> dict[str, dict[str, int]]:
    """Per annotator, their stage-1 decisions in the bank: accept/flag made, skips, and undos of their own."""
    out: dict[str, dict[str, int]] = {}
    for user, verdict, n in store.db.execute(
        "SELECT d.user, d.verdict, count(*) FROM decisions d JOIN items i ON i.id = d.item "
        "WHERE i.bank = ? AND d.stage = 1 AND d.verdict IN ('accept', 'flag', 'skip') GROUP BY d.user, d.verdict",
        [bank],
    ):
        out.setdefault(user, {"made": 0, "skips": 0, "undos": 0})
        out[user]["skips" if verdict == "skip" else "made"] += n
    for user, n in store.db.execute(
        "SELECT d.user, count(*) FROM decisions d JOIN decisions o ON o.id = d.retracts JOIN items i ON i.id = d.item "
        "WHERE i.bank = ? AND d.stage = 1 AND d.verdict = 'retract' AND o.user = d.user "
        "AND o.verdict IN ('accept', 'flag') GROUP BY d.user",
        [bank],
    ):
        out.setdefault(user, {"made": 0, "skips": 0, "undos": 0})["undos"] = n
    return out


def item_outcomes(store: Any, bank: str) -> dict[str, dict[str, Any]]:
    """{qid: {"state", "outcome"}} of the bank's reviewed items (one query)."""
    rows = store.db.execute(
        "SELECT i.qid, i.state, EXISTS (SELECT 1 FROM decisions d WHERE d.item = i.id AND d.stage = 2 "
        "AND d.verdict = 'correct' AND NOT EXISTS (SELECT 1 FROM decisions r WHERE r.retracts = d.id)) "
        "FROM items i WHERE i.bank = ? AND i.gold = 0",
        [bank],
    ).fetchall()
    return {q: {"state": s, "outcome": outcome_of(s, bool(c))} for q, s, c in rows}


def quality_report(
    store: Any, bank: str, *, user: str | None, mace: bool = False, reasons: bool = True
) -> dict[str, Any]:
    """`reviewer review quality BANK`: per annotator reliability (Dawid-Skene, MACE, GLAD), gold accuracy, agreement
    with the final outcome, median seconds, skip and undo shares; per item the posterior and difficulty.
    `reasons`: also the per-reason Dawid-Skene (a second fit, as long as the first: only where it is shown)."""
    from reviewer.review.api import stage1_table
    from reviewer.review.ledger import get_user, require_bank
    from reviewer.review.rules import workflow
    from reviewer.review.stage1 import progress

    actor = get_user(store, user)
    workflow().require("see_all", actor.role, actor.name)
    require_bank(store, bank)
    table = stage1_table(store, bank)
    gold_rows, gold = _gold_table(store, bank)
    models = reliability(table + gold_rows, gold, mace=mace, reasons=reasons)
    outcomes = item_outcomes(store, bank)
    activity = _activity(store, bank)
    confidence: dict[str, dict[str, int]] = {}
    if _has_confidence(store):
        for name, level, n in store.db.execute(
            "SELECT d.user, d.confidence, count(*) FROM decisions d JOIN items i ON i.id = d.item WHERE i.bank = ? "
            "AND d.stage = 1 AND d.verdict IN ('accept', 'flag') AND d.confidence IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM decisions r WHERE r.retracts = d.id) GROUP BY d.user, d.confidence",
            [bank],
        ):
            confidence.setdefault(name, {})[level] = n
    agree: dict[str, list[int]] = {}
    per_item: dict[str, list[str]] = {}
    for item, rater, verdict, _ in table:
        per_item.setdefault(item, []).append(verdict)
        final = outcomes.get(item, {}).get("outcome")
        if final is not None:
            agree.setdefault(rater, []).append(int(verdict == final))
    annotators = []
    for p in progress(store, bank, user=actor.name):
        name = p["user"]
        m = models["annotators"].get(name, {})
        act = activity.get(name, {"made": 0, "skips": 0, "undos": 0})
        hits = agree.get(name, [])
        seen = act["made"] + act["skips"]
        annotators.append(
            {
                "annotator": name,
                "decisions": p["done"],
                "reliability": m.get("reliability"),
                "sensitivity": m.get("sensitivity"),
                "specificity": m.get("specificity"),
                "reason_reliability": m.get("reason_reliability"),
                "per_reason": m.get("per_reason", {}),
                "mace_competence": m.get("mace_competence"),
                "glad_ability": m.get("glad_ability"),
                "gold_decided": p["gold_decided"],
                "gold_accuracy": p["gold_accuracy"],
                "outcome_decided": len(hits),
                "outcome_agreement": sum(hits) / len(hits) if hits else None,
                "median_seconds": p["median_seconds"],
                "skip_share": act["skips"] / seen if seen else None,
                "undo_share": act["undos"] / act["made"] if act["made"] else None,
                "confidence": {c: confidence.get(name, {}).get(c, 0) for c in quality_settings().confidence},
            }
        )
    items = []
    for qid, o in outcomes.items():
        verdicts = per_item.get(qid, [])
        m = models["items"].get(qid, {})
        items.append(
            {
                "item": qid,
                "decisions": len(verdicts),
                "accepts": verdicts.count("accept"),
                "posterior_acceptable": m.get("posterior_acceptable"),
                "difficulty": m.get("difficulty"),
                "state": o["state"],
                "outcome": o["outcome"],
            }
        )
    return {"bank": bank, "annotators": annotators, "items": items, "models": models["models"]}


def write_quality_csv(report: dict[str, Any], folder: Path) -> list[Path]:
    """annotators.csv and items.csv (one row each, the columns of ANNOTATOR_COLUMNS / ITEM_COLUMNS; per-reason
    figures as reliability_<reason> columns, decisions per confidence level as confidence_<level>), written
    whole or not at all into `folder`: new, empty or holding only these files (an earlier --csv; reviewer.fileio's
    one rule for output folders)."""
    from reviewer.fileio import write_folder

    folder = Path(folder)
    reasons = sorted({r for a in report["annotators"] for r in a["per_reason"]})
    levels = quality_settings().confidence
    head = [*ANNOTATOR_COLUMNS, *(f"reliability_{r}" for r in reasons), *(f"confidence_{c}" for c in levels)]
    rows = [head]
    for a in report["annotators"]:
        rows.append(
            [_cell(a[c]) for c in ANNOTATOR_COLUMNS]
            + [_cell(a["per_reason"].get(r, {}).get("reliability")) for r in reasons]
            + [_cell(a.get("confidence", {}).get(c)) for c in levels]
        )
    data = {}
    for name, table in (
        ("annotators.csv", rows),
        ("items.csv", [list(ITEM_COLUMNS)] + [[_cell(i[c]) for c in ITEM_COLUMNS] for i in report["items"]]),
    ):
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(table)
        data[name] = buf.getvalue().encode("utf-8")
    write_folder(folder, data, ours=CSV_FILES, field="csv")
    return [folder / name for name in data]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


# ----------------------------------------------------------------------------- per-item provenance for qc.json

#: how an item was settled, in the order they are checked (qc.json items.*.settled; `score --subset`)
SETTLED = ("corrected", "drafted-then-corrected", "adjudicated", "unanimous")


def _has_confidence(store: Any) -> bool:
    return any(r[1] == "confidence" for r in store.db.execute("PRAGMA table_info(decisions)"))


def stage1_agreement(verdicts: Sequence[str]) -> float | None:
    """The share of agreeing pairs among an item's stage-1 verdicts; None with fewer than 2."""
    n = len(verdicts)
    if n < 2:
        return None
    same = sum(c * (c - 1) for c in (verdicts.count("accept"), verdicts.count("flag")))
    return same / (n * (n - 1))


def item_provenance(store: Any, bank: str, qids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Per item, how it was settled, the stage-1 verdicts and agreement, the Dawid-Skene posterior that its reference
    is acceptable, the confidence levels given on it (the stage-1 annotators' apart from the expert's in stage 2: an
    expert's "high" on a split item says something else than three annotators' "high"), and how many people decided on
    it (counted, never named).

    settled: corrected (an expert corrected it in stage 2), drafted-then-corrected (its AI draft was corrected by a
    reviewer before stage 1), adjudicated (an annotator flagged it and an expert or the stage-2 rule settled it),
    unanimous (every annotator accepted it at stage 1; an audit that accepted it does not change that).
    """
    from reviewer.review.api import stage1_table
    from reviewer.review.ledger import EFFECTIVE

    table = stage1_table(store, bank)
    gold_rows, gold = _gold_table(store, bank)
    no_glad = dataclasses.replace(quality_settings(), glad_max_decisions=0)
    posterior = reliability(table + gold_rows, gold, no_glad, reasons=False)
    verdicts: dict[str, list[str]] = {}
    for item, _, verdict, _ in table:
        verdicts.setdefault(item, []).append(verdict)
    conf_col = "d.confidence" if _has_confidence(store) else "NULL"
    decided: dict[str, dict[str, Any]] = {}
    for qid, user, stage, verdict, conf in store.db.execute(
        f"SELECT i.qid, d.user, d.stage, d.verdict, {conf_col} FROM decisions d JOIN items i ON i.id = d.item "
        f"WHERE i.bank = ? AND i.gold = 0 AND d.verdict NOT IN ('retract', 'skip') AND {EFFECTIVE} ORDER BY d.id",
        [bank],
    ):
        row = decided.setdefault(qid, {"people": set(), "stage2": None, 1: {}, 2: {}})
        row["people"].add(user)
        if stage == 2:
            row["stage2"] = verdict
        if conf:
            row[stage][conf] = row[stage].get(conf, 0) + 1
    drafted = {
        r[0]
        for r in store.db.execute(
            "SELECT DISTINCT i.qid FROM events e JOIN items i ON i.id = e.item WHERE i.bank = ? "
            "AND e.action = 'draft_correct'",
            [bank],
        )
    }
    levels = quality_settings().confidence
    out = {}
    for qid in qids:
        d = decided.get(qid, {"people": set(), "stage2": None, 1: {}, 2: {}})
        v = verdicts.get(qid, [])
        if d["stage2"] == "correct":
            settled = "corrected"
        elif qid in drafted:
            settled = "drafted-then-corrected"
        elif "flag" in v:
            settled = "adjudicated"
        else:
            settled = "unanimous"
        p = posterior["items"].get(qid, {}).get("posterior_acceptable")
        out[qid] = {
            "settled": settled,
            "stage1": {"decisions": len(v), "accepts": v.count("accept"), "agreement": stage1_agreement(v)},
            "posterior_acceptable": None if p is None else round(p, 6),
            "confidence": {
                who: {c: d[stage][c] for c in levels if c in d[stage]} for who, stage in (("stage1", 1), ("expert", 2))
            },
            "people": len(d["people"]),
        }
    return out


# ----------------------------------------------------------------------------- routing by these figures


def weak_annotators(report: dict[str, Any], settings: QualitySettings | None = None) -> list[dict[str, Any]]:
    """Annotators under the reliability threshold, or under the gold-accuracy threshold on enough gold items."""
    s = settings or quality_settings()
    out = []
    for a in report["annotators"]:
        why = []
        if a["reliability"] is not None and a["reliability"] < s.min_reliability:
            why.append(f"reliability {a['reliability']:.2f} under {s.min_reliability}")
        if a["gold_decided"] >= s.min_gold_items and a["gold_accuracy"] < s.min_gold_accuracy:
            why.append(
                f"gold accuracy {a['gold_accuracy']:.2f} on {a['gold_decided']} gold items under {s.min_gold_accuracy}"
            )
        if why:
            out.append({"annotator": a["annotator"], "reliability": a["reliability"], "gold_accuracy": a["gold_accuracy"],
                        "gold_decided": a["gold_decided"], "why": "; ".join(why)})  # fmt: skip
    return out


def open_items(store: Any, bank: str, user: str) -> list[str]:
    """A user's assigned items in a bank they have not decided yet (open, item still in stage 1), in their order."""
    return [
        r[0]
        for r in store.db.execute(
            "SELECT i.qid FROM assignments a JOIN items i ON i.id = a.item WHERE a.user = ? AND i.bank = ? "
            "AND a.open = 1 AND i.state = 'in_review' ORDER BY a.rank",
            [user, bank],
        )
    ]


def route(store: Any, bank: str, *, user: str | None, apply: bool = False) -> dict[str, Any]:
    """Routing by the reliability model (maintainer).

    Consensus-accepted items whose posterior that the reference is acceptable lies in the uncertain band go to an
    expert (their audit flag, one event each `route_uncertain`) -- with `apply` and only when the bank's setting is on
    (`reviewer review rule BANK --route-uncertain on`). Annotators under the reliability or gold threshold are listed
    with their open items, to reassign (`reassign`); nobody's decisions change.
    """
    from reviewer.review.ledger import get_user, item_by_id, record_event
    from reviewer.review.rules import workflow
    from reviewer.review.stage1 import settings as bank_settings

    actor = get_user(store, user)
    workflow().require("settings", actor.role, actor.name)
    s = quality_settings()
    report = quality_report(store, bank, user=actor.name, reasons=False)
    cfg = bank_settings(store, bank) or {}
    low, high = s.uncertain_posterior
    uncertain = [
        i
        for i in report["items"]
        if i["state"] == "consensus_accepted"
        and i["posterior_acceptable"] is not None
        and low <= i["posterior_acceptable"] <= high
    ]
    audited = dict(store.db.execute("SELECT qid, audit FROM items WHERE bank = ? AND gold = 0", [bank]).fetchall())
    todo = [i for i in uncertain if not audited.get(i["item"])]
    out: dict[str, Any] = {
        "bank": bank,
        "route_uncertain": bool(cfg.get("route_uncertain")),
        "uncertain_posterior": [low, high],
        "uncertain": [{k: i[k] for k in ("item", "posterior_acceptable", "accepts", "decisions")} for i in todo],
        "sent": 0,
        "weak_annotators": [
            {**w, "open_items": open_items(store, bank, w["annotator"])} for w in weak_annotators(report, s)
        ],
    }
    if apply and todo:
        if not cfg.get("route_uncertain"):
            raise ReviewError(
                f"routing by the reliability model is off for bank {bank}: "
                f"`reviewer review rule {bank} --route-uncertain on` first"
            )
        with store.transaction() as db:
            ids = dict(db.execute("SELECT qid, id FROM items WHERE bank = ? AND gold = 0", [bank]).fetchall())
            for i in todo:
                item = item_by_id(store, ids[i["item"]])
                if item.state != "consensus_accepted" or item.audit:
                    continue  # changed since the model ran
                db.execute("UPDATE items SET audit = 1 WHERE id = ?", [item.id])
                record_event(store, actor.name, "route_uncertain", bank=bank, item=item.id, version=item.version,
                             before="audit 0", after="audit 1",
                             detail={"posterior_acceptable": i["posterior_acceptable"], "band": [low, high]})  # fmt: skip
                out["sent"] += 1
    return out


def reassign(store: Any, bank: str, *, source: str, target: str, reason: str, user: str | None) -> dict[str, Any]:
    """Move a user's open items in a bank (assigned, not decided by them, still in stage 1) to another annotator
    (maintainer). Items the target already has stay. Each move is an event; no decision changes."""
    from reviewer.review.ledger import get_user, now, record_event
    from reviewer.review.rules import workflow

    actor = get_user(store, user)
    workflow().require("assign", actor.role, actor.name)
    to = get_user(store, target)
    get_user(store, source)
    if not workflow().allowed("annotate", to.role):
        raise ReviewError(f"user {to.name} is {to.role}: cannot review in stage 1")
    if to.name == source:
        raise ReviewError("reassign to someone else")
    if not reason.strip():
        raise ReviewError("a reassignment needs a reason")
    moved, kept = [], []
    with store.transaction() as db:
        base = db.execute("SELECT coalesce(max(rank), 0) FROM assignments WHERE user = ?", [to.name]).fetchone()[0]
        for qid in open_items(store, bank, source):
            item_id, version = db.execute(
                "SELECT id, current_version FROM items WHERE bank = ? AND qid = ?", [bank, qid]
            ).fetchone()
            if db.execute("SELECT 1 FROM assignments WHERE item = ? AND user = ?", [item_id, to.name]).fetchone():
                kept.append(qid)
                continue
            db.execute("DELETE FROM assignments WHERE item = ? AND user = ?", [item_id, source])
            db.execute(
                "INSERT INTO assignments (item, user, rank, created) VALUES (?, ?, ?, ?)",
                [item_id, to.name, float(int(base) + 1 + len(moved)), now()],
            )
            record_event(store, actor.name, "reassign", bank=bank, item=item_id, version=version, before=source,
                         after=to.name, detail={"reason": reason})  # fmt: skip
            moved.append(qid)
    return {"bank": bank, "from": source, "to": to.name, "moved": moved, "kept": kept}
