"""Vectorised metrics over a (model, question, pass) cube of judged runs.

Each condition becomes boolean arrays of shape (models, questions, passes); pass^k is `all` over the
pass axis, and the bootstrap multiplies one shared matrix of resampled question counts with the
per-question results of every model and baseline at once, so every model sees the same resamples.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import rankdata

from reviewer.bank.io import Bank
from reviewer.bank.model import INSUFFICIENT
from reviewer.errors import Cancelled
from reviewer.scoring import BOOTSTRAP_RESAMPLES
from reviewer.scoring.judge import Judge, value_key
from reviewer.scoring.runs import RunSet

logger = logging.getLogger(__name__)

SCORED_CLASSES = ("computable", "recognition")
CHUNK = 1000


def pct(num: float, den: float) -> float | None:
    """Percentage, or None when there is nothing to divide by."""
    return None if den == 0 else 100.0 * float(num) / float(den)


@dataclass
class Questions:
    """Per-question attributes in bank order, as arrays for grouping."""

    ids: list[str]
    index: dict[str, int]
    cls: np.ndarray
    task: np.ndarray
    theme: np.ndarray
    role: np.ndarray
    source: np.ndarray
    multi: np.ndarray
    decades: np.ndarray
    scored: np.ndarray
    insufficient: np.ndarray
    no_change_ref: np.ndarray
    judges: list[Judge]

    @classmethod
    def of(cls, bank: Bank) -> Questions:
        qs = bank.questions

        def arr(get: Callable[[dict], Any]) -> np.ndarray:
            return np.array([get(q) for q in qs], dtype=object)

        def decades(q: dict) -> float:
            start = dt.date.fromisoformat(q["period"]["start"])
            end = dt.date.fromisoformat(q["period"]["end"])
            return (end - start).days / 3652.425

        klass = arr(lambda q: q["class"])
        judges = [Judge(q) for q in qs]
        return cls(
            ids=[q["id"] for q in qs],
            index={q["id"]: i for i, q in enumerate(qs)},
            cls=klass,
            task=arr(lambda q: q["task"] or "none"),
            theme=arr(lambda q: bank.site(q["site"])["theme"]),
            role=arr(lambda q: bank.site(q["site"])["role"]),
            source=arr(lambda q: q["reference_source"]),
            multi=np.array([bool(q["multi_sensor"]) for q in qs]),
            decades=np.array([decades(q) for q in qs], dtype=float),
            scored=np.isin(klass, SCORED_CLASSES),
            insufficient=klass == "insufficient",
            no_change_ref=np.array([j.reference_is_no_change for j in judges]),
            judges=judges,
        )


@dataclass
class Cube:
    """Runs of one condition: arrays (models, items, passes); items are questions or pairs."""

    right: np.ndarray
    present: np.ndarray
    abstained: np.ndarray
    errored: np.ndarray
    confidence: np.ndarray
    tool_calls: np.ndarray
    minutes: np.ndarray
    image_views: np.ndarray
    messages: np.ndarray
    values: np.ndarray  # object: value_key of the conclusion, None when absent/invalid
    has_model: np.ndarray  # (models,) the model has any run in this condition

    @property
    def all_right(self) -> np.ndarray:
        """pass^k per (model, item): right in every one of the k passes (a missing pass is wrong)."""
        return self.right.all(axis=2)


def build_cube(
    runs: list[dict[str, Any]], models: list[str], items: dict[str, int], item_key: str, passes: int
) -> Cube:
    """Scatter judged runs into arrays with fancy indexing."""
    m_index = {m: i for i, m in enumerate(models)}
    shape = (len(models), len(items), passes)
    mi = np.fromiter((m_index[r["model"]] for r in runs), dtype=np.intp, count=len(runs))
    ii = np.fromiter((items[r[item_key]] for r in runs), dtype=np.intp, count=len(runs))
    pi = np.fromiter((r["pass"] - 1 for r in runs), dtype=np.intp, count=len(runs))

    def put(values: Any, dtype: Any, fill: Any) -> np.ndarray:
        out = np.full(shape, fill, dtype=dtype)
        if len(runs):
            out[mi, ii, pi] = values
        return out

    def num(name: str) -> list[float]:
        return [np.nan if r.get(name) is None else float(r[name]) for r in runs]

    vals = np.empty(len(runs), dtype=object)
    for n, r in enumerate(runs):
        answer = r.get("answer")
        ok = r["_valid"] and r.get("error") is None and isinstance(answer, dict)
        vals[n] = value_key(answer.get(r["_conclusion"])) if ok else None
    has_model = np.zeros(len(models), dtype=bool)
    has_model[np.unique(mi)] = True
    return Cube(
        right=put([r["_right"] for r in runs], bool, False),
        present=put(True, bool, False),
        abstained=put([r["_abstained"] for r in runs], bool, False),
        errored=put([r.get("error") is not None for r in runs], bool, False),
        confidence=put(num("confidence"), float, np.nan),
        tool_calls=put(num("tool_calls"), float, np.nan),
        minutes=put(num("minutes"), float, np.nan),
        image_views=put(num("image_views"), float, np.nan),
        messages=put(num("messages"), float, np.nan),
        values=put(vals, object, None),
        has_model=has_model,
    )


# ----------------------------------------------------------------------------- bootstrap


def bootstrap_means(
    x: np.ndarray,
    resamples: int,
    seed: int,
    *,
    cancel: Callable[[], bool] | None = None,
    progress: Callable[[float], None] | None = None,
) -> np.ndarray:
    """Means of `x` (questions, columns) over seeded resamples of the questions: (resamples, columns).

    One index matrix per chunk of 1000 resamples, turned into per-question draw counts W, so the
    means of every column are W @ x / n, and every column sees the same resampled question sets.
    """
    n, cols = x.shape
    rng = np.random.default_rng(seed)
    out = np.empty((resamples, cols))
    if n == 0:
        out.fill(np.nan)
        return out
    for start in range(0, resamples, CHUNK):
        if cancel is not None and cancel():
            raise Cancelled("scoring cancelled")
        b = min(CHUNK, resamples - start)
        idx = rng.integers(0, n, size=(b, n))
        counts = np.bincount((idx + (np.arange(b) * n)[:, None]).ravel(), minlength=b * n).reshape(b, n)
        out[start : start + b] = counts @ x / n
        if progress is not None:
            progress((start + b) / resamples)
    return out


def percentile_ci(means: np.ndarray) -> np.ndarray:
    """95% percentile interval (2, columns) in percent, of bootstrap means (or of paired differences of them):
    the one place the interval's percentiles are written."""
    return np.percentile(means, [2.5, 97.5], axis=0) * 100.0


def paired_comparisons(right: np.ndarray, means: np.ndarray, models: list[str]) -> list[dict[str, Any]]:
    """Every pair of models on the same questions: the difference in pass^k (points, first minus second), its 95%
    paired bootstrap interval, and the discordant counts.

    `right` is (questions, models) 0/1 per question; `means` (resamples, models) the bootstrap means of those columns
    from `bootstrap_means`, whose resamples every column shares: a pair's difference on a resample is the difference
    of its two columns there, so every pair is compared on the same resampled question sets. McNemar's exact test
    (statsmodels) on the discordant questions is given beside it.
    """
    from statsmodels.stats.contingency_tables import mcnemar

    n = right.shape[0]
    out = []
    for a in range(len(models)):
        for b in range(a + 1, len(models)):
            ra, rb = right[:, a].astype(bool), right[:, b].astype(bool)
            a_only, b_only = int((ra & ~rb).sum()), int((~ra & rb).sum())
            ci = None
            if len(means) and n:
                lo, hi = percentile_ci(means[:, a] - means[:, b])
                ci = [float(lo), float(hi)]
            table = [[int((ra & rb).sum()), a_only], [b_only, int((~ra & ~rb).sum())]]
            out.append(
                {
                    "a": models[a],
                    "b": models[b],
                    "questions": n,
                    "difference": pct(ra.sum() - rb.sum(), n),
                    "ci": ci,
                    "a_only": a_only,
                    "b_only": b_only,
                    "both": table[0][0],
                    "neither": table[1][1],
                    "mcnemar_p": float(mcnemar(table, exact=True).pvalue) if a_only + b_only else None,
                }
            )
    return out


# ----------------------------------------------------------------------------- record metrics


def groups(values: np.ndarray, result: np.ndarray, mask: np.ndarray) -> dict[str, dict[str, Any]]:
    """{group: {n, pass3}} of per-question 0/1 `result` over questions in `mask`."""
    out = {}
    for key in sorted({str(v) for v in values[mask]}):
        sel = mask & (values.astype(str) == key)
        out[key] = {"n": int(sel.sum()), "pass3": pct(result[sel].sum(), sel.sum())}
    return out


def record_block(right: np.ndarray, qt: Questions, passes: int, ci: list[float] | None) -> dict[str, Any]:
    """Record-condition metrics of one model (or baseline) from its (questions, passes) right array."""
    s = qt.scored
    p3 = right.all(axis=1)
    counts = right.sum(axis=1)
    return {
        "n": int(s.sum()),
        "pass3": pct(p3[s].sum(), s.sum()),
        "pass3_ci": ci,
        "one_run": pct(right[s].sum(), s.sum() * passes),
        "passes_right": {str(k): int((counts[s] == k).sum()) for k in range(passes, -1, -1)},
        "one_run_by_class": {
            c: pct(right[qt.cls == c].sum(), (qt.cls == c).sum() * passes)
            for c in SCORED_CLASSES
            if (qt.cls == c).any()
        },
        "by_task": groups(qt.task, p3, s),
        "by_class": groups(qt.cls, p3, s),
        "by_theme": groups(qt.theme, p3, s),
        "by_reference_source": groups(qt.source, p3, s),
        "by_site_role": groups(qt.role, p3, s),
        "by_multi_sensor": groups(np.where(qt.multi, "true", "false").astype(object), p3, s),
    }


def insufficient_block(cube: Cube, m: int, qt: Questions, passes: int) -> dict[str, Any]:
    ins = qt.insufficient
    right = cube.right[m][ins]
    return {
        "n": int(ins.sum()),
        "pass3": pct(right.all(axis=1).sum(), ins.sum()),
        "one_run": pct(right.sum(), ins.sum() * passes),
        "abstained_runs": int(cube.abstained[m][ins].sum()),
        "runs": int(cube.present[m][ins].sum()),
    }


def closed_block(rec: Cube, closed: Cube, m: int, qt: Questions, passes: int) -> dict[str, Any]:
    """Closed book against the record per class, with transitions by pass^k."""
    out = {}
    r3, c3 = rec.all_right[m], closed.all_right[m]
    for klass in (*SCORED_CLASSES, "insufficient"):
        sel = qt.cls == klass
        if not sel.any() or (klass == "insufficient" and not closed.present[m][sel].any()):
            continue
        n = int(sel.sum())
        rp, cp = pct(r3[sel].sum(), n), pct(c3[sel].sum(), n)
        out[klass] = {
            "n": n,
            "closed_pass3": cp,
            "record_pass3": rp,
            "gain": None if rp is None or cp is None else rp - cp,
            "closed_one_run": pct(closed.right[m][sel].sum(), n * passes),
            "record_one_run": pct(rec.right[m][sel].sum(), n * passes),
            "right_in_both": int((r3 & c3)[sel].sum()),
            "wrong_to_right": int((r3 & ~c3)[sel].sum()),
            "right_to_wrong": int((~r3 & c3)[sel].sum()),
            "wrong_in_both": int((~r3 & ~c3)[sel].sum()),
        }
    return {"by_class": out}


def abstention_block(cube: Cube, m: int, qt: Questions) -> dict[str, Any]:
    out: dict[str, Any] = {"by_class": {}}
    for klass in (*SCORED_CLASSES, "insufficient"):
        sel = qt.cls == klass
        runs = int(cube.present[m][sel].sum())
        abst = int(cube.abstained[m][sel].sum())
        out["by_class"][klass] = {"runs": runs, "abstained": abst, "share": pct(abst, runs)}
    ins = qt.insufficient
    out["insufficient_questions"] = {
        "n": int(ins.sum()),
        "abstained_runs": int(cube.abstained[m][ins].sum()),
        "pass3": pct(cube.all_right[m][ins].sum(), ins.sum()),
    }
    return out


def auroc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """Area under the ROC curve by the Mann-Whitney rank formula (ties count half); None if one class."""
    n1 = int(positive.sum())
    n0 = int(len(positive) - n1)
    if n1 == 0 or n0 == 0:
        return None
    ranks = rankdata(scores)
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def confidence_block(cube: Cube, m: int, qt: Questions) -> dict[str, Any]:
    """Reported confidence of answered record runs on computable and recognition questions."""
    conf = cube.confidence[m]
    sel = cube.present[m] & ~cube.abstained[m] & ~cube.errored[m] & ~np.isnan(conf) & qt.scored[:, None]
    c = conf[sel]
    ok = cube.right[m][sel]
    value = auroc(c, ok)
    high, low = c >= 0.9, c < 0.7
    out = {
        "runs": int(sel.sum()),
        "auroc": value,
        "auroc_note": None
        if value is not None
        else (
            "no answered runs with a confidence"
            if sel.sum() == 0
            else "not defined: every answered run is " + ("right" if ok.all() else "wrong")
        ),
        "mean_right": float(c[ok].mean()) if ok.any() else None,
        "mean_wrong": float(c[~ok].mean()) if (~ok).any() else None,
        "high": {"share": pct(high.sum(), len(c)), "accuracy": pct(ok[high].sum(), high.sum())},
        "low": {"share": pct(low.sum(), len(c)), "accuracy": pct(ok[low].sum(), low.sum())},
        "by_reference_source": {},
    }
    src = np.broadcast_to(qt.source[:, None], sel.shape)[sel]
    for key in sorted(set(src)):
        k = src == key
        out["by_reference_source"][key] = {
            "runs": int(k.sum()),
            "mean_confidence": float(c[k].mean()),
            "accuracy": pct(ok[k].sum(), k.sum()),
        }
    return out


def work_block(cube: Cube, m: int, qt: Questions) -> dict[str, Any]:
    sel = cube.present[m] & qt.scored[:, None]

    def med(a: np.ndarray) -> float | None:
        v = a[m][sel]
        v = v[~np.isnan(v)]
        return float(np.median(v)) if len(v) else None

    return {
        "runs": int(sel.sum()),
        "tool_calls": med(cube.tool_calls),
        "minutes": med(cube.minutes),
        "image_views": med(cube.image_views),
        "messages": med(cube.messages),
    }


# ----------------------------------------------------------------------------- baselines


def _sort_key(judge: Judge, key: Any) -> tuple:
    options = [value_key(o) for o in (judge.field.options or ())]
    rank = options.index(key) if key in options else len(options)
    if isinstance(key, int | float):
        return (rank, 0, float(key), "")
    return (rank, 1, 0.0, repr(key))


def baseline_answers(bank: Bank, qt: Questions) -> dict[str, list[Any]]:
    """The answer each baseline gives to each question (None: no answer, scored wrong).

    Majority class: within each group of scored questions whose conclusion field has the same type and
    option set, the most common reference conclusion (ties by option order, then value). Always no
    change: the question's no_change value.
    """
    # the option *set*: a generated bank shuffles each question's option order, and grouping by the order
    # made many one-question groups whose 'majority' was that question's own reference (always right)
    group_of = [
        (j.field.type, tuple(sorted(map(str, j.field.options))) if j.field.options else None) for j in qt.judges
    ]
    tallies: dict[tuple, Counter] = {}
    first_value: dict[tuple, dict[Any, Any]] = {}
    for i, q in enumerate(bank.questions):
        if not qt.scored[i]:
            continue
        ref = q["reference"][q["conclusion"]]
        key = value_key(ref)
        tallies.setdefault(group_of[i], Counter())[key] += 1
        first_value.setdefault(group_of[i], {}).setdefault(key, ref)
    majority = {}
    for g, tally in tallies.items():
        judge = next(qt.judges[i] for i in range(len(group_of)) if group_of[i] == g)
        top = max(tally.values())
        best = min((k for k, c in tally.items() if c == top), key=lambda k: _sort_key(judge, k))
        majority[g] = first_value[g][best]
    return {
        "majority_class": [majority.get(g) for g in group_of],
        "always_no_change": [q.get("no_change") for q in bank.questions],
    }


def answer_balance(bank: Bank) -> dict[str, Any]:
    """How lopsided the bank's answers are, from the bank alone: per task the count of each conclusion value
    (numbers and years are counted as one 'numeric' value: their baseline is rarely right), and the pass^k
    (%) of the majority-class and always-no-change baselines on the scored questions (a baseline answers
    the same in every pass, so its pass^k is its share right)."""
    qt = Questions.of(bank)
    answers = baseline_answers(bank, qt)
    by_task: dict[str, Counter] = {}
    for i, q in enumerate(bank.questions):
        if not qt.scored[i]:
            continue
        judge = qt.judges[i]
        ref = q["reference"][q["conclusion"]]
        value = str(ref) if judge.field.type in ("category", "quadrant", "month") else "numeric"
        by_task.setdefault(str(qt.task[i]), Counter())[value] += 1
    scored = int(qt.scored.sum())
    baselines = {}
    for name, a in answers.items():
        right = baseline_right(bank, qt, a)[qt.scored]
        baselines[name] = round(100.0 * right.mean(), 1) if scored else None
    return {
        "scored": scored,
        "by_task": {t: dict(c.most_common()) for t, c in sorted(by_task.items())},
        "baselines": baselines,
    }


def balance_lines(balance: dict[str, Any]) -> list[str]:
    """The balance as lines for a terminal: one per task, then the baselines."""
    lines = []
    for task, counts in balance["by_task"].items():
        n = sum(counts.values())
        lines.append(f"  {task}: " + ", ".join(f"{v} {c / n:.0%}" for v, c in counts.items()) + f" (of {n})")
    base = balance["baselines"]
    if not balance["scored"]:  # (a bank of insufficient-evidence questions only: "majority class None pass^k")
        return [*lines, "  no scored question: no baselines"]
    lines.append(
        f"  baselines on {balance['scored']} scored questions: majority class {base['majority_class']} pass^k, "
        f"always no change {base['always_no_change']} pass^k"
    )
    return lines


def baseline_right(bank: Bank, qt: Questions, answers: list[Any]) -> np.ndarray:
    return np.array(
        [a is not None and qt.judges[i]({bank.questions[i]["conclusion"]: a}).right for i, a in enumerate(answers)],
        dtype=bool,
    )


# ----------------------------------------------------------------------------- everything


def compute(
    bank: Bank,
    runset: RunSet,
    *,
    bootstrap: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
    cancel: Callable[[], bool] | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> dict[str, Any]:
    """All model and baseline metrics except the regression and pairs (see pairs.py)."""
    from reviewer.scoring.pairs import pair_blocks

    k = runset.passes
    qt = Questions.of(bank)
    models = runset.models
    conclusions = {q["id"]: q["conclusion"] for q in bank.questions}
    for r in runset.runs:
        r["_conclusion"] = conclusions[r["question"]]
    by_cond: dict[str, list] = {c: [] for c in ("record", "closed_book", "altered", "placebo")}
    for r in runset.runs:
        by_cond[r["condition"]].append(r)
    pair_index = {p["id"]: i for i, p in enumerate(bank.pairs)}
    cubes = {
        "record": build_cube(by_cond["record"], models, qt.index, "question", k),
        "closed_book": build_cube(by_cond["closed_book"], models, qt.index, "question", k),
        "altered": build_cube(by_cond["altered"], models, pair_index, "pair", k),
        "placebo": build_cube(by_cond["placebo"], models, pair_index, "pair", k),
    }
    rec = cubes["record"]
    answers = baseline_answers(bank, qt)
    base_right = {name: baseline_right(bank, qt, a) for name, a in answers.items()}

    # bootstrap of pass^k over scored questions: models then baselines as columns
    s = qt.scored
    columns = [rec.all_right[m][s] for m in range(len(models))] + [b[s] for b in base_right.values()]
    x = np.column_stack(columns).astype(float) if columns else np.zeros((int(s.sum()), 0))
    if progress:
        progress(0.0, "bootstrap")
    means = bootstrap_means(
        x, bootstrap, seed, cancel=cancel, progress=(lambda f: progress(f, "bootstrap")) if progress else None
    )
    ci = percentile_ci(means) if bootstrap > 0 and s.any() else np.full((2, x.shape[1]), np.nan)

    def ci_of(col: int) -> list[float] | None:
        lo, hi = ci[:, col]
        return None if np.isnan(lo) else [float(lo), float(hi)]

    out_models: dict[str, Any] = {}
    for m, model in enumerate(models):
        block: dict[str, Any] = {
            "record": record_block(rec.right[m], qt, k, ci_of(m)),
            "insufficient": insufficient_block(rec, m, qt, k),
            "closed_book": (
                closed_block(rec, cubes["closed_book"], m, qt, k) if cubes["closed_book"].has_model[m] else None
            ),
            "abstention": abstention_block(rec, m, qt),
            "confidence": confidence_block(rec, m, qt),
            "work": work_block(rec, m, qt),
        }
        out_models[model] = block
    paired = paired_comparisons(x[:, : len(models)], means[:, : len(models)], models)
    pairs = pair_blocks(bank, qt, cubes, models, base_right)
    for model in models:
        out_models[model]["pairs"] = pairs["models"][model]
    baselines = {}
    for b, (name, right) in enumerate(base_right.items()):
        cube_right = np.repeat(right[:, None], k, axis=1)
        baselines[name] = {
            "record": record_block(cube_right, qt, k, ci_of(len(models) + b)),
            "insufficient": {
                "n": int(qt.insufficient.sum()),
                "pass3": pct(right[qt.insufficient].sum(), qt.insufficient.sum()),
            },
            "pairs": pairs["baselines"][name],
            "answers": {qid: a for qid, a in zip(qt.ids, answers[name], strict=True)},
        }
    return {
        "models": out_models,
        "baselines": baselines,
        "pairs": pairs["by_pair"],
        "paired": paired,
        "questions": question_counts(qt),
        "_qt": qt,
        "_cubes": cubes,
        "_models": models,
    }


def question_counts(qt: Questions) -> dict[str, Any]:
    """Question counts of the bank by class and of the scored questions by each breakdown."""
    s = qt.scored

    def count(values: np.ndarray, mask: np.ndarray) -> dict[str, int]:
        return {str(k): int(c) for k, c in sorted(Counter(values[mask].astype(str)).items())}

    return {
        "total": len(qt.ids),
        "scored": int(s.sum()),
        "insufficient": int(qt.insufficient.sum()),
        "by_class": count(qt.cls, np.ones(len(qt.ids), bool)),
        "by_task": count(qt.task, s),
        "by_theme": count(qt.theme, s),
        "by_reference_source": count(qt.source, s),
        "by_site_role": count(qt.role, s),
        "by_multi_sensor": count(np.where(qt.multi, "true", "false").astype(object), s),
        "no_change_reference": int(qt.no_change_ref[s].sum()),
    }


__all__ = ["INSUFFICIENT", "Cube", "Questions", "auroc", "bootstrap_means", "compute"]
