"""Difficulty regression: logit of model-question pass^k with model and task fixed effects.

Predictors: reference source (relative to method), multi-sensor, period length per decade; standard
errors clustered by question (statsmodels). As fixest does, fixed-effect groups whose outcome never
varies (a model right on every question) are dropped first, because they carry no information and
would make the likelihood separate. When the data still do not allow a fit the result says why.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

TERM_LABELS = {
    "record_product": "Record product",
    "withheld_product": "Mapping",
    "visual": "Visual",
    "observations": "Observations",
    "multi_sensor": "Two or more Landsat sensors",
    "decades": "Period length, per decade",
}


def not_estimable(reason: str, **extra: Any) -> dict[str, Any]:
    return {"estimable": False, "reason": reason, **extra}


def _drop_constant_groups(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Iteratively drop model and task groups whose outcome is all right or all wrong."""
    dropped: list[str] = []
    while True:
        changed = False
        for col in ("model", "task"):
            spread = df.groupby(col)["y"].agg(["min", "max"])
            const = spread.index[spread["min"] == spread["max"]].tolist()
            if const and df[col].nunique() > 0:
                dropped += [f"{col} {g} (always {'right' if spread.loc[g, 'min'] else 'wrong'})" for g in const]
                df = df[~df[col].isin(const)]
                changed = True
        if not changed or df.empty:
            return df, dropped


_TERM_NAMES = {
    "C(source, Treatment('method'))": "reference source",
    "multi_sensor": "multi-sensor",
    "decades": "period length",
}


def _rank_ok(df: pd.DataFrame, terms: list[str]) -> bool:
    from patsy import dmatrix

    x = np.asarray(dmatrix(" + ".join(terms), df))
    return np.linalg.matrix_rank(x) == x.shape[1]


def _full_rank_terms(df: pd.DataFrame, terms: list[str], fixed: list[str]) -> tuple[list[str], list[str]]:
    """Drop predictors (last first) until the design with the fixed effects has full column rank."""
    keep, dropped = list(terms), []
    for term in reversed(terms):
        if _rank_ok(df, keep + fixed):
            break
        keep.remove(term)
        dropped.append(term)
    return keep, dropped


def difficulty_regression(frame: pd.DataFrame) -> dict[str, Any]:
    """Fit the logit on rows (model, question, task, source, multi_sensor, decades, y)."""
    import statsmodels.formula.api as smf
    from statsmodels.tools.sm_exceptions import PerfectSeparationError, PerfectSeparationWarning

    if frame.empty:
        return not_estimable("no model-question results")
    df, dropped_groups = _drop_constant_groups(frame.copy())
    if df.empty or df["y"].nunique() < 2:
        return not_estimable(
            "the outcome does not vary once groups that are always right or always wrong are left out",
            dropped_groups=dropped_groups,
        )
    terms, dropped_terms = [], []
    sources = sorted(set(df["source"]))
    if "method" not in sources:
        dropped_terms.append("reference source (no questions with a method reference to compare with)")
    elif len(sources) > 1:
        terms.append("C(source, Treatment('method'))")
    else:
        dropped_terms.append("reference source (only method references)")
    for col, label in (("multi_sensor", "multi-sensor"), ("decades", "period length")):
        if df[col].nunique() > 1:
            terms.append(col)
        else:
            dropped_terms.append(f"{label} (does not vary)")
    if not terms:
        return not_estimable("no predictor varies", dropped_terms=dropped_terms, dropped_groups=dropped_groups)
    fixed = [f"C({c})" for c in ("model", "task") if df[c].nunique() > 1]
    terms, collinear = _full_rank_terms(df, terms, fixed)
    dropped_terms += [
        f"{_TERM_NAMES.get(t, t)} (collinear with the other predictors or fixed effects)" for t in collinear
    ]
    if not terms:
        return not_estimable(
            "every predictor is collinear with the fixed effects",
            dropped_terms=dropped_terms,
            dropped_groups=dropped_groups,
        )
    formula = "y ~ " + " + ".join(terms + fixed)
    groups = pd.factorize(df["question"])[0]
    n_clusters = int(groups.max()) + 1
    if n_clusters < 2:
        return not_estimable("fewer than two questions to cluster by")
    try:
        with warnings.catch_warnings(record=True) as caught:  # kept in scores.json, not printed on the terminal
            warnings.simplefilter("always")
            warnings.simplefilter("error", PerfectSeparationWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            fit = smf.logit(formula, data=df).fit(disp=0, maxiter=200, cov_type="cluster", cov_kwds={"groups": groups})
    except (PerfectSeparationError, PerfectSeparationWarning) as exc:
        return not_estimable(f"perfect separation: {exc}", formula=formula, dropped_groups=dropped_groups)
    except (np.linalg.LinAlgError, ValueError) as exc:
        return not_estimable(f"the model cannot be fitted: {exc}", formula=formula, dropped_groups=dropped_groups)
    fit_warnings = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    if not fit.mle_retvals.get("converged", True):
        return not_estimable(
            "the fit did not converge", formula=formula, dropped_groups=dropped_groups, fit_warnings=fit_warnings
        )
    params, conf, pvalues = fit.params, fit.conf_int(), fit.pvalues
    out_terms = {}
    for name in params.index:
        if name.startswith("C(source"):
            key = name.split("[T.")[1].rstrip("]")
        elif name in ("multi_sensor", "multi_sensor[T.True]"):
            key = "multi_sensor"
        elif name == "decades":
            key = "decades"
        else:
            continue
        lo, hi = conf.loc[name]
        with np.errstate(over="ignore"):
            values = np.exp([params[name], lo, hi])
        if not np.isfinite([*values, pvalues[name]]).all() or values[1] == 0:
            return not_estimable(
                f"the estimate of {key} is not finite (quasi-separation or collinearity)",
                formula=formula,
                dropped_groups=dropped_groups,
            )
        out_terms[key] = {
            "label": TERM_LABELS.get(key, key),
            "odds_ratio": float(values[0]),
            "ci": [float(values[1]), float(values[2])],
            "p": float(pvalues[name]),
        }
    return {
        "estimable": True,
        "formula": formula,
        "n": int(len(df)),
        "clusters": n_clusters,
        "terms": out_terms,
        "dropped_terms": dropped_terms,
        "dropped_groups": dropped_groups,
        "converged": True,
        "fit_warnings": fit_warnings,
    }


def regression_frame(scored: dict[str, Any]) -> pd.DataFrame:
    """Model-question rows of pass^k on computable and recognition questions from compute()'s output."""
    qt, rec, models = scored["_qt"], scored["_cubes"]["record"], scored["_models"]
    p3 = rec.all_right
    s = np.flatnonzero(qt.scored)
    rows = []
    for m, model in enumerate(models):
        if not rec.has_model[m]:
            continue
        for q in s:
            rows.append(
                (
                    model,
                    qt.ids[q],
                    str(qt.task[q]),
                    str(qt.source[q]),
                    int(qt.multi[q]),
                    float(qt.decades[q]),
                    int(p3[m, q]),
                )
            )
    return pd.DataFrame(rows, columns=["model", "question", "task", "source", "multi_sensor", "decades", "y"])
