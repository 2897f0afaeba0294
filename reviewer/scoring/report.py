"""The report of a scoring run, built from scores.json alone: CSV tables, report.md, report.html, figures.

Tables follow seed 001 (Tab. 2-4, 6-10, 12, 14, 17); models are sorted by overall pass^k and the
baselines are the last rows. The HTML is self-contained (figures embedded as base64 PNG). Figures are built with matplotlib's
object API (no pyplot), so they render in a worker thread and never touch the app's backend.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import logging
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from reviewer.fileio import atomic_write

logger = logging.getLogger(__name__)

BASELINE_LABELS = {"majority_class": "Majority class", "always_no_change": "Always no change"}
SOURCE_LABELS = {
    "method": "Method",
    "record_product": "Record product",
    "withheld_product": "Mapping",
    "visual": "Visual",
    "observations": "Observations",
}
OUTCOME_COLORS = {
    "moved": "#d62728",
    "held": "#9ecae1",
    "beyond": "#08519c",
    "wrong_on_original": "#d9d9d9",
    None: "#ffffff",
}
OUTCOME_LABELS = {
    "moved": "moved",
    "held": "held: prior or default",
    "beyond": "held: beyond",
    "wrong_on_original": "wrong on the original",
}


@dataclass
class Table:
    """One report table: rendered as CSV, Markdown and HTML from the same cells."""

    name: str
    title: str
    caption: str
    header: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    baseline_from: int | None = None  # index of the first baseline row (rendered in italics)
    empty: str = ""  # why the table has no rows, shown in place of them


def fmt(v: Any, digits: int = 1) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    if isinstance(v, list) and len(v) == 2 and all(isinstance(x, float) for x in v):
        return f"[{v[0]:.{digits}f}, {v[1]:.{digits}f}]"
    return str(v)


def _signed(v: float | None) -> str:
    return "–" if v is None else f"{v:+.1f}"


def _frac(num: int | None, den: int | None) -> str:
    """ "moved of right": a dash when there is nothing to count (no pair runs, or none right), for agents
    and baselines alike."""
    return "–" if num is None or not den else f"{num}/{den}"


def _pass_name(scores: dict[str, Any]) -> str:
    return f"pass^{scores['passes']}"


# ----------------------------------------------------------------------------- tables


def tables(scores: dict[str, Any]) -> list[Table]:
    """Every table of the report, in report order (seed 001's numbering in each builder's docstring)."""
    return [
        _results_by_task(scores),
        _behaviour_effort(scores),
        _closed_book_pairs(scores),
        _results_by_class_theme(scores),
        _results_by_class_condition(scores),
        _results_by_reference_source(scores),
        _regression(scores),
        _consistency(scores),
        _confidence(scores),
        _transitions(scores),
        _results_by_pair(scores),
        _results_by_role_sensors(scores),
        _paired(scores),
        _problems(scores),
    ]


def _everyone(scores: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The rows of a table that shows baselines: the models, then the baselines under their labels."""
    return [*scores["models"].items(), *((BASELINE_LABELS[b], v) for b, v in scores["baselines"].items())]


def _classes(qc: dict[str, Any]) -> list[str]:
    """The question classes the bank has, in report order."""
    return [c for c in ("computable", "recognition") if c in qc["by_class"]]


def _results_by_task(scores: dict[str, Any]) -> Table:
    """Tab. 2: by analysis task, tasks from lowest to highest median score."""
    models, qc, pk = scores["models"], scores["questions"], _pass_name(scores)
    tasks = list(qc["by_task"])
    med = {
        t: statistics.median([m["record"]["by_task"].get(t, {}).get("pass3") or 0.0 for m in models.values()])
        if models
        else 0.0
        for t in tasks
    }
    tasks.sort(key=lambda t: (med[t], t))
    t = Table(
        "results_by_task",
        "Results by analysis task",
        f"{pk} (%) on the {qc['scored']} computable and recognition questions, question counts in parentheses, "
        "95% bootstrap interval of the overall score.",
        ["Model", f"Overall ({qc['scored']})", "95% interval"] + [f"{x} ({qc['by_task'][x]})" for x in tasks],
    )
    for name, m in _everyone(scores):
        r = m["record"]
        t.rows.append(
            [name, fmt(r["pass3"]), fmt(r["pass3_ci"])] + [fmt(r["by_task"].get(x, {}).get("pass3")) for x in tasks]
        )
    t.baseline_from = len(models)
    return t


def _behaviour_effort(scores: dict[str, Any]) -> Table:
    """Tab. 3: behaviour and effort."""
    qc, k, pk = scores["questions"], scores["passes"], _pass_name(scores)
    t = Table(
        "behaviour_effort",
        "Agent behaviour and effort",
        f"Computable and recognition questions except the last abstention column (runs on the "
        f"{qc['insufficient']} insufficient-evidence questions). AUROC rates how well confidence separates "
        "right from wrong conclusions.",
        [
            "Model",
            "One run",
            pk,
            f"Right in 1..{k - 1} passes (of {qc['scored']})",
            "AUROC",
            "Recognition abstention runs (%)",
            "Insufficient-evidence abstentions (runs)",
            "Tool calls (median)",
            "Minutes (median)",
            "Image views (median)",
        ],
    )
    for name, m in scores["models"].items():
        r = m["record"]
        mixed = sum(r["passes_right"][str(j)] for j in range(1, k))
        ab = m["abstention"]
        t.rows.append(
            [
                name,
                fmt(r["one_run"]),
                fmt(r["pass3"]),
                mixed,
                fmt(m["confidence"]["auroc"], 2),
                fmt(ab["by_class"]["recognition"]["share"]),
                f"{m['insufficient']['abstained_runs']}/{m['insufficient']['runs']}",
                fmt(m["work"]["tool_calls"]),
                fmt(m["work"]["minutes"]),
                fmt(m["work"]["image_views"], 2),
            ]
        )
    return t


def _closed_book_pairs(scores: dict[str, Any]) -> Table:
    """Tab. 4: closed book and pairs."""
    ci, pk = scores["questions"]["by_class"], _pass_name(scores)
    t = Table(
        "closed_book_pairs",
        "Answer sources and outcomes on instrument pairs",
        f"{pk} (%) in the closed book and with the record, the gain in points; pair columns count model-pair "
        "cases right on the original in all passes: moved (of those right), held (right in the closed book "
        "or no-change reference), beyond (held otherwise), and moved placebo cases.",
        [
            "Model",
            f"Computable ({ci.get('computable', 0)}) closed",
            "record",
            "gain",
            f"Recognition ({ci.get('recognition', 0)}) closed",
            "record",
            "gain",
            "Instrument moved",
            "held",
            "beyond",
            "Placebo moved",
        ],
    )
    for name, m in _everyone(scores):
        cb = (m.get("closed_book") or {}).get("by_class", {})
        row = [name]
        for klass in ("computable", "recognition"):
            c = cb.get(klass)
            rec = m["record"]["by_class"].get(klass, {}).get("pass3")
            row += [fmt(c["closed_pass3"]) if c else "–", fmt(rec), _signed(c["gain"]) if c else "–"]
        ins, pla = (m.get("pairs") or {}).get("instrument"), (m.get("pairs") or {}).get("placebo")
        row += [
            _frac(ins["moved"], ins["right"]) if ins else "–",
            ins["held"] if ins and ins["right"] else "–",
            ins.get("beyond", "–") if ins and ins["right"] else "–",
            _frac(pla["moved"], pla["right"]) if pla else "–",
        ]
        t.rows.append(row)
    t.baseline_from = len(scores["models"])
    return t


def _results_by_class_theme(scores: dict[str, Any]) -> Table:
    """Tab. 6: class and theme."""
    qc = scores["questions"]
    ci, themes, classes = qc["by_class"], list(qc["by_theme"]), _classes(qc)
    t = Table(
        "results_by_class_theme",
        "Results by class and theme",
        f"{_pass_name(scores)} (%), question counts in parentheses.",
        ["Model"] + [f"{c} ({ci[c]})" for c in classes] + [f"{x} ({qc['by_theme'][x]})" for x in themes],
    )
    for name, m in _everyone(scores):
        r = m["record"]
        t.rows.append(
            [name]
            + [fmt(r["by_class"].get(c, {}).get("pass3")) for c in classes]
            + [fmt(r["by_theme"].get(x, {}).get("pass3")) for x in themes]
        )
    t.baseline_from = len(scores["models"])
    return t


def _results_by_class_condition(scores: dict[str, Any]) -> Table:
    """Tab. 7: class and condition, one run and pass^k."""
    qc, pk = scores["questions"], _pass_name(scores)
    ci, classes = qc["by_class"], _classes(qc)
    t = Table(
        "results_by_class_condition",
        "Accuracy by question class and condition",
        "Scores in %; an insufficient-evidence question is right when the run answers insufficient evidence.",
        ["Model"]
        + [f"{c} ({ci[c]}) {cond} {what}" for c in classes for cond in ("closed", "record") for what in ("one run", pk)]
        + [f"insufficient ({qc['insufficient']}) record one run", f"insufficient record {pk}"],
    )
    for name, m in scores["models"].items():
        cb = (m.get("closed_book") or {}).get("by_class", {})
        row = [name]
        for c in classes:
            x = cb.get(c)
            row += [fmt(x["closed_one_run"]) if x else "–", fmt(x["closed_pass3"]) if x else "–"]
            row += [fmt(m["record"]["one_run_by_class"].get(c)), fmt(m["record"]["by_class"].get(c, {}).get("pass3"))]
        row += [fmt(m["insufficient"]["one_run"]), fmt(m["insufficient"]["pass3"])]
        t.rows.append(row)
    return t


def _results_by_reference_source(scores: dict[str, Any]) -> Table:
    """Tab. 8: by reference source."""
    qc = scores["questions"]
    sources = list(qc["by_reference_source"])
    t = Table(
        "results_by_reference_source",
        "Results by reference type",
        f"{_pass_name(scores)} (%) by the source of the reference answer; Mapping = withheld product.",
        ["Model"] + [f"{SOURCE_LABELS.get(s, s)} ({qc['by_reference_source'][s]})" for s in sources],
    )
    for name, m in _everyone(scores):
        t.rows.append([name] + [fmt(m["record"]["by_reference_source"].get(s, {}).get("pass3")) for s in sources])
    t.baseline_from = len(scores["models"])
    return t


def _regression(scores: dict[str, Any]) -> Table:
    """Tab. 9: regression, or why it was not estimable."""
    reg = scores["regression"]
    warnings = f" Fit warnings: {'; '.join(reg['fit_warnings'])}." if reg.get("fit_warnings") else ""
    if not reg.get("estimable"):
        return Table(
            "regression",
            "Predictors of question difficulty",
            "Not estimable." + warnings,
            ["Result", "Reason"],
            [["not estimable", reg.get("reason", "")]],
        )
    t = Table(
        "regression",
        "Predictors of question difficulty",
        f"Logistic regression of model-question {_pass_name(scores)} with model and task fixed effects and "
        f"standard errors clustered by question ({reg['n']} rows, {reg['clusters']} questions). Reference types "
        "are relative to method."
        + warnings
        + (
            f" Left out: {'; '.join(reg['dropped_groups'] + reg['dropped_terms'])}."
            if reg["dropped_groups"] or reg["dropped_terms"]
            else ""
        ),
        ["Term", "Odds ratio", "95% interval", "p"],
    )
    for term in reg["terms"].values():
        t.rows.append(
            [
                term["label"],
                fmt(term["odds_ratio"], 2),
                f"{term['ci'][0]:.2f}–{term['ci'][1]:.2f}",
                fmt(term["p"], 3),
            ]
        )
    return t


def _consistency(scores: dict[str, Any]) -> Table:
    """Tab. 10: consistency."""
    k = scores["passes"]
    t = Table(
        "consistency",
        "Consistency over passes",
        f"Questions by the number of passes, out of {k}, with a right conclusion.",
        ["Model"] + [str(j) for j in range(k, -1, -1)] + [f"1..{k - 1}"],
    )
    for name, m in scores["models"].items():
        pr = m["record"]["passes_right"]
        t.rows.append([name] + [pr[str(j)] for j in range(k, -1, -1)] + [sum(pr[str(j)] for j in range(1, k))])
    return t


def _confidence(scores: dict[str, Any]) -> Table:
    """Tab. 12: confidence."""
    t = Table(
        "confidence",
        "Reported confidence",
        "Answered runs on computable and recognition questions: AUROC, mean confidence of right and wrong "
        "runs, share of runs (%) at >= 0.9 and < 0.7 with their accuracy (%), and mean confidence and "
        "accuracy on method (computed) and mapping questions.",
        [
            "Model",
            "AUROC",
            "Mean right",
            "Mean wrong",
            ">=0.9 runs",
            ">=0.9 acc.",
            "<0.7 runs",
            "<0.7 acc.",
            "Computed conf.",
            "Computed acc.",
            "Mapping conf.",
            "Mapping acc.",
        ],
    )
    for name, m in scores["models"].items():
        c = m["confidence"]
        comp = c["by_reference_source"].get("method", {})
        mapp = c["by_reference_source"].get("withheld_product", {})
        t.rows.append(
            [
                name,
                fmt(c["auroc"], 2),
                fmt(c["mean_right"], 2),
                fmt(c["mean_wrong"], 2),
                fmt(c["high"]["share"]),
                fmt(c["high"]["accuracy"]),
                fmt(c["low"]["share"]),
                fmt(c["low"]["accuracy"]),
                fmt(comp.get("mean_confidence"), 2),
                fmt(comp.get("accuracy")),
                fmt(mapp.get("mean_confidence"), 2),
                fmt(mapp.get("accuracy")),
            ]
        )
    return t


def _transitions(scores: dict[str, Any]) -> Table:
    """Tab. 14: transitions from the closed book to the record."""
    qc = scores["questions"]
    ci, classes = qc["by_class"], _classes(qc)
    t = Table(
        "transitions",
        "From the closed book to the record",
        f"Questions by {_pass_name(scores)} outcome in the two conditions.",
        ["Model"]
        + [
            f"{c} ({ci[c]}) {w}"
            for c in classes
            for w in ("wrong to right", "right to wrong", "right in both", "wrong in both")
        ],
    )
    for name, m in scores["models"].items():
        cb = (m.get("closed_book") or {}).get("by_class", {})
        row = [name]
        for c in classes:
            x = cb.get(c)
            row += [x[w] if x else "–" for w in ("wrong_to_right", "right_to_wrong", "right_in_both", "wrong_in_both")]
        t.rows.append(row)
    return t


def _results_by_pair(scores: dict[str, Any]) -> Table:
    """Tab. 17: per pair, or why there are no rows."""
    t = Table(
        "results_by_pair",
        "Results by instrument pair",
        f"Right counts the models right on the original in all {scores['passes']} passes, split into moved, held "
        "(prior or default) and beyond. Shift gives the reference conclusion, the most common other answer in the "
        "altered runs of the moved models and its count over those runs (when unique and given at least twice); "
        "Toward is the share of runs whose conclusion differs between versions that moved to the pair's "
        "pushes_toward.",
        ["Pair", "Kind", "Altered", "Theme", "Right", "Moved", "Held", "Beyond", "Shift", "Toward (%)"],
    )
    pairs = _ordered_pairs(scores)
    if not pairs:
        t.empty = "The bank has no instrument or placebo pairs (reviewer alter makes them)."
    elif not any(p.get("models") for _, p in pairs):
        t.empty = (
            f"The bank has {len(pairs)} pairs but no runs on their altered records were given: run the agents "
            "on the altered and placebo records (conditions altered, placebo) and score those runs too."
        )
        pairs = []
    for pid, p in pairs:
        shift = p.get("shift")
        t.rows.append(
            [
                pid,
                p["kind"],
                f"{p['satellite']} {p['variable']} {p['alteration']}",
                p["theme"],
                p["right"],
                p["moved"],
                p["held"],
                p["beyond"] if p["kind"] == "instrument" else "–",
                f"{shift['from']} → {shift['to']} {shift['count']}/{shift['runs']}" if shift else "",
                fmt(p.get("toward_share")),
            ]
        )
    return t


def _results_by_role_sensors(scores: dict[str, Any]) -> Table:
    """Extra: by site role and by single or multiple sensors."""
    qc = scores["questions"]
    roles = list(qc["by_site_role"])
    t = Table(
        "results_by_role_sensors",
        "Results by site role and sensors",
        f"{_pass_name(scores)} (%), question counts in parentheses.",
        ["Model"]
        + [f"{r} ({qc['by_site_role'][r]})" for r in roles]
        + [
            f"multi-sensor ({qc['by_multi_sensor'].get('true', 0)})",
            f"single sensor ({qc['by_multi_sensor'].get('false', 0)})",
        ],
    )
    for name, m in _everyone(scores):
        r = m["record"]
        t.rows.append(
            [name]
            + [fmt(r["by_site_role"].get(x, {}).get("pass3")) for x in roles]
            + [fmt(r["by_multi_sensor"].get(x, {}).get("pass3")) for x in ("true", "false")]
        )
    t.baseline_from = len(scores["models"])
    return t


def _problems(scores: dict[str, Any]) -> Table:
    """Extra: input problems, each with its count and first case."""
    pr = scores["problems"]
    t = Table(
        "problems",
        "Input problems",
        "Missing passes, invalid answers and harness errors count as wrong."
        + (" Bad lines were skipped (--lenient)." if scores["runs"].get("lenient") else ""),
        ["Problem", "Count", "First"],
    )
    for key, label in (
        ("missing_passes", "Missing passes"),
        ("invalid_answers", "Invalid answers"),
        ("errors", "Harness errors"),
        ("bad_lines", "Bad lines skipped"),
    ):
        first = pr[key][0] if pr[key] else None
        t.rows.append([label, len(pr[key]), ", ".join(f"{a}={b}" for a, b in first.items()) if first else ""])
    return t


def _paired(scores: dict[str, Any]) -> Table:
    """Extra: every pair of models on the same questions (metrics.paired_comparisons)."""
    pk = _pass_name(scores)
    b = scores["bootstrap"]
    t = Table(
        "paired",
        "Paired comparisons of models",
        f"Difference in {pk} (points, first model minus second) on the same scored questions, with a 95% paired "
        f"bootstrap interval over questions ({b['resamples']} resamples, seed {b['seed']}, the same resamples for "
        "every pair); questions only the first / only the second got right; McNemar's exact p on those.",
        [
            "First",
            "Second",
            "Questions",
            "Difference",
            "95% interval",
            "Only first right",
            "Only second right",
            "McNemar p",
        ],
        empty="fewer than two models",
    )
    for p in scores.get("paired") or []:
        ci = p["ci"]
        t.rows.append(
            [
                p["a"],
                p["b"],
                p["questions"],
                _signed(p["difference"]),
                f"[{_signed(ci[0])}, {_signed(ci[1])}]" if ci else "–",
                p["a_only"],
                p["b_only"],
                "–" if p["mcnemar_p"] is None else f"{p['mcnemar_p']:.3g}",
            ]
        )
    return t


def _ordered_pairs(scores: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Instrument pairs grouped by altered satellite and variable, then placebo pairs."""
    items = list(scores["pairs"].items())
    return sorted(
        items,
        key=lambda kv: (kv[1]["kind"] == "placebo", kv[1]["satellite"], kv[1]["variable"], -kv[1]["right"], kv[0]),
    )


# ----------------------------------------------------------------------------- rendering


_MD_ESCAPES = {"\\": "\\\\", "|": "\\|", "`": "\\`", "*": "\\*", "&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md_escape(value: Any) -> str:
    """A string from outside (model name, question text, bank name) as literal Markdown text on one line:
    table pipes, backticks, emphasis, backslashes and raw HTML (&, <, >) escaped, line breaks made spaces."""
    text = " ".join(str(value).splitlines())
    return "".join(_MD_ESCAPES.get(ch, ch) for ch in text)


def to_markdown(t: Table) -> str:
    esc = md_escape
    lines = [
        f"### {esc(t.title)}",
        "",
        "| " + " | ".join(esc(h) for h in t.header) + " |",
        "|" + "|".join("---" for _ in t.header) + "|",
    ]
    for i, row in enumerate(t.rows):
        cells = [esc(c) for c in row]
        if t.baseline_from is not None and i >= t.baseline_from:
            cells[0] = f"*{cells[0]}*"
        lines.append("| " + " | ".join(cells) + " |")
    if not t.rows and t.empty:
        lines.append("| " + esc(t.empty) + " |" + " |" * (len(t.header) - 1))
    return "\n".join(lines + ["", esc(t.caption), ""])


def to_html(t: Table) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in t.header)
    body = []
    for i, row in enumerate(t.rows):
        cls = ' class="baseline"' if t.baseline_from is not None and i >= t.baseline_from else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>")
    if not t.rows and t.empty:
        body.append(f'<tr><td class="empty" colspan="{len(t.header)}">{html.escape(t.empty)}</td></tr>')
    return (
        f'<h3 id="{t.name}">{html.escape(t.title)}</h3>\n<table><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(body)}</tbody></table>\n<p class="caption">{html.escape(t.caption)}</p>\n'
    )


def to_csv(t: Table) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(t.header)
    w.writerows(t.rows)
    return buf.getvalue().encode("utf-8")


# ----------------------------------------------------------------------------- figures


def _model_rows(scores: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return list(scores["models"].items())


def fig_pass3(scores: dict[str, Any]) -> Figure:
    """pass^k per model with its 95% interval; baselines as dashed lines."""
    rows = _model_rows(scores)
    fig = Figure(figsize=(7, 0.4 * len(rows) + 1.4))
    ax = fig.subplots()
    names = [n for n, _ in rows][::-1]
    vals = [m["record"]["pass3"] or 0.0 for _, m in rows][::-1]
    lo = [v - (m["record"]["pass3_ci"] or [v, v])[0] for v, (_, m) in zip(vals, rows[::-1], strict=True)]
    hi = [(m["record"]["pass3_ci"] or [v, v])[1] - v for v, (_, m) in zip(vals, rows[::-1], strict=True)]
    ax.barh(names, vals, color="#4c72b0", xerr=[lo, hi], capsize=3, error_kw={"elinewidth": 1})
    for (b, label), style in zip(BASELINE_LABELS.items(), ("--", ":"), strict=True):
        v = scores["baselines"][b]["record"]["pass3"]
        if v is not None:
            ax.axvline(v, color="#555555", linestyle=style, linewidth=1, label=f"{label} ({v:.1f})")
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"{_pass_name(scores)} (%) with 95% interval")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def fig_computed_vs_mapping(scores: dict[str, Any]) -> Figure:
    """Fig. 4 style: pass^k on questions computed from the record vs those that need mapping."""
    rows = _model_rows(scores)
    qc = scores["questions"]["by_reference_source"]
    fig = Figure(figsize=(7, 0.45 * len(rows) + 1.4))
    ax = fig.subplots()
    names = [n for n, _ in rows][::-1]
    y = range(len(names))
    series = (  # (source, label, colour, offset); a source without questions gets no bars and no legend entry
        ("method", "computed from the record", "#9e9e9e", 0.2),
        ("withheld_product", "mapping", "#d62728", -0.2),
    )
    for source, label, colour, dy in series:
        if not qc.get(source, 0):
            continue
        vals = [m["record"]["by_reference_source"].get(source, {}).get("pass3") for _, m in rows][::-1]
        ax.barh(
            [i + dy for i in y], [v or 0.0 for v in vals], height=0.4, color=colour, label=f"{label} ({qc[source]})"
        )
        for i, v in enumerate(vals):  # a value on every bar, so a 0 % bar is seen too
            ax.text((v or 0.0) + 1, i + dy, "n/a" if v is None else f"{v:.0f}", va="center", fontsize=7, color=colour)
    ax.set_yticks(list(y), names)
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"{_pass_name(scores)} (%)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 1.12), ncol=2, fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def fig_pair_grid(scores: dict[str, Any]) -> Figure:
    """Fig. 6 style: outcome of every model-pair case; columns grouped by altered satellite, then placebo."""
    rows = _model_rows(scores)
    pairs = _ordered_pairs(scores)
    fig = Figure(figsize=(max(4.0, 0.32 * len(pairs) + 2.6), 0.32 * len(rows) + 1.8))
    ax = fig.subplots()
    for r, (_, m) in enumerate(rows):
        for c, (pid, p) in enumerate(pairs):
            block = (m.get("pairs") or {}).get(p["kind"]) or {}
            outcome = block.get("by_pair", {}).get(pid, {}).get("outcome")
            ax.add_patch(Rectangle((c, r), 0.92, 0.92, color=OUTCOME_COLORS[outcome]))
    ax.set_xlim(0, max(1, len(pairs)))
    ax.set_ylim(len(rows), 0)
    ax.set_yticks([i + 0.46 for i in range(len(rows))], [n for n, _ in rows], fontsize=8)
    ax.set_xticks([i + 0.46 for i in range(len(pairs))], [pid for pid, _ in pairs], rotation=90, fontsize=7)
    groups: list[tuple[str, int, int]] = []
    for c, (_, p) in enumerate(pairs):
        label = "Placebo" if p["kind"] == "placebo" else f"{p['satellite']} {p['variable']}"
        if groups and groups[-1][0] == label:
            groups[-1] = (label, groups[-1][1], c)
        else:
            groups.append((label, c, c))
    for label, a, b in groups:
        moved = sum(scores["pairs"][pid]["moved"] for pid, _ in pairs[a : b + 1])
        right = sum(scores["pairs"][pid]["right"] for pid, _ in pairs[a : b + 1])
        ax.text((a + b + 1) / 2, -0.3, f"{label}\n{moved}/{right} moved", ha="center", va="bottom", fontsize=8)
        if a > 0:
            ax.axvline(a - 0.04, color="black", linewidth=0.8)
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    ax.legend(
        handles=[Patch(color=OUTCOME_COLORS[o], label=OUTCOME_LABELS[o]) for o in OUTCOME_LABELS],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.25 if len(pairs) < 8 else -0.12),
        ncol=2,
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout()
    return fig


def fig_paired_matrix(scores: dict[str, Any]) -> Figure:
    """Row model minus column model in pass^k (points), models in report order; a cell whose 95% paired interval
    excludes 0 is outlined and its number bold."""
    names = list(scores["models"])
    index = {n: i for i, n in enumerate(names)}
    n = len(names)
    diff = np.full((n, n), np.nan)
    sure = np.zeros((n, n), dtype=bool)
    for p in scores.get("paired") or []:
        i, j = index[p["a"]], index[p["b"]]
        if p["difference"] is None:
            continue
        diff[i, j], diff[j, i] = p["difference"], -p["difference"]
        ci = p["ci"]
        sure[i, j] = sure[j, i] = bool(ci) and (ci[0] > 0 or ci[1] < 0)
    side = 0.55 * n + 2.2
    fig = Figure(figsize=(side + 1.0, side))
    ax = fig.subplots()
    lim = max(1.0, float(np.nanmax(np.abs(diff)))) if n > 1 and not np.all(np.isnan(diff)) else 1.0
    im = ax.imshow(np.ma.masked_invalid(diff), cmap="RdBu", vmin=-lim, vmax=lim)
    for i in range(n):
        for j in range(n):
            if i != j and not np.isnan(diff[i, j]):
                ax.text(
                    j,
                    i,
                    "0" if round(diff[i, j]) == 0 else f"{diff[i, j]:+.0f}",  # no "-0" for a tie
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if abs(diff[i, j]) > 0.6 * lim else "black",  # readable on the darkest cells
                    fontweight="bold" if sure[i, j] else "normal",
                )
                if sure[i, j]:
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.2))
    ax.set_xticks(range(n), names, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(n), names, fontsize=8)
    ax.set_xlabel("second model")
    ax.set_ylabel("first model")
    fig.colorbar(im, ax=ax, shrink=0.8, label="difference (points)")
    fig.tight_layout()
    return fig


#: figure name -> (maker, caption); {pk} in a caption is the pass^k name with the actual k
FIGURES = {
    "pass3": (fig_pass3, "{pk} per model with 95% bootstrap intervals; baselines as dashed lines."),
    "computed_vs_mapping": (
        fig_computed_vs_mapping,
        "Mapping from imagery: {pk} on questions computed from the record vs those that "
        "need mapping (withheld-product references).",
    ),
    "pair_grid": (
        fig_pair_grid,
        "Outcome of each model-pair case; columns grouped by altered satellite, then placebo.",
    ),
    "paired_matrix": (
        fig_paired_matrix,
        "{pk} of the row model minus the column model on the same questions (points); outlined and bold where "
        "the 95% paired bootstrap interval excludes 0.",
    ),
}


def caption(scores: dict[str, Any], name: str) -> str:
    """A figure's caption with the actual k of pass^k."""
    return FIGURES[name][1].format(pk=_pass_name(scores))


def write_figures(scores: dict[str, Any], out: Path) -> dict[str, bytes]:
    """Write each figure as PNG and SVG into out/figures; returns the PNG bytes by name."""
    (out / "figures").mkdir(parents=True, exist_ok=True)
    pngs = {}
    for name, (make, _) in FIGURES.items():
        if name == "pair_grid" and not scores["pairs"]:
            continue
        if name == "paired_matrix" and len(scores["models"]) < 2:
            continue
        fig = make(scores)
        for ext in ("png", "svg"):
            buf = io.BytesIO()
            fig.savefig(buf, format=ext, dpi=150 if ext == "png" else None)
            atomic_write(out / "figures" / f"{name}.{ext}", buf.getvalue())
            if ext == "png":
                pngs[name] = buf.getvalue()
    return pngs


# ----------------------------------------------------------------------------- report


CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:0.5em 0;font-size:13px}th,td{border-bottom:1px solid #ddd;padding:3px 8px;
text-align:right}th:first-child,td:first-child{text-align:left}thead th{border-bottom:2px solid #444}
tr.baseline td{font-style:italic;color:#555}.caption{font-size:12px;color:#555;max-width:900px}
img{max-width:100%}figure{margin:1em 0}td{white-space:nowrap}td.empty{text-align:left;font-style:italic;
white-space:normal}table{display:block;overflow-x:auto;max-width:100%}"""


@dataclass
class Section:
    """A part of the report another module writes (the failure coding of the runs): its Markdown and HTML,
    and figures (name -> PNG bytes) saved under figures/ and shown after its text."""

    title: str
    markdown: str
    html: str
    figures: dict[str, bytes] = field(default_factory=dict)


def write_report(scores: dict[str, Any], out: str | Path, *, sections: Sequence[Section] = ()) -> list[Path]:
    """Write tables/*.csv, report.md, report.html and figures/*.png|svg; returns the paths written."""
    out = Path(out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    ts = tables(scores)
    written = []
    for t in ts:
        atomic_write(out / "tables" / f"{t.name}.csv", to_csv(t))
        written.append(out / "tables" / f"{t.name}.csv")
    pngs = write_figures(scores, out)
    bank = scores["bank"]
    facts = (
        f"{scores['questions']['total']} questions, {len(scores['models'])} models, {scores['passes']} passes, "
        f"{scores['bootstrap']['resamples']} bootstrap resamples (seed {scores['bootstrap']['seed']})."
    )
    sub = scores.get("subset")
    if sub:  # a subset: say which and how many of the bank's questions
        facts = (
            f"subset {sub['name']} (the questions the review settled that way, qc.json): {sub['questions']} of "
            f"{sub['of']} questions; " + facts
        )
    intro = f"Bank {bank['name']} version {bank['version']} ({bank['sha256']}), {facts}"
    md_intro = (
        f"Bank **{md_escape(bank['name'])}** version {md_escape(bank['version'])} ({md_escape(bank['sha256'])}), "
        f"{md_escape(facts)}"
    )
    md = [f"# Scoring report: {md_escape(bank['name'])} {md_escape(bank['version'])}", "", md_intro, ""]
    for name in pngs:
        md += [f"![{name}](figures/{name}.png)", "", f"*{md_escape(caption(scores, name))}*", ""]
    md += [to_markdown(t) for t in ts]
    for sec in sections:
        md += [f"## {md_escape(sec.title)}", "", sec.markdown, ""]
        for name, png in sec.figures.items():
            atomic_write(out / "figures" / f"{name}.png", png)
            written.append(out / "figures" / f"{name}.png")
            md += [f"![{name}](figures/{name}.png)", ""]
    atomic_write(out / "report.md", "\n".join(md).encode("utf-8"))
    body = [
        f"<h1>Scoring report: {html.escape(bank['name'])} {html.escape(bank['version'])}</h1>",
        f"<p>{html.escape(intro)}</p>",
    ]
    for name, png in pngs.items():
        b64 = base64.b64encode(png).decode("ascii")
        body.append(
            f'<figure><img alt="{name}" src="data:image/png;base64,{b64}">'
            f'<figcaption class="caption">{html.escape(caption(scores, name))}</figcaption></figure>'
        )
    body += [to_html(t) for t in ts]
    for sec in sections:
        body.append(f"<h2>{html.escape(sec.title)}</h2>\n{sec.html}")
        for name, png in sec.figures.items():
            b64 = base64.b64encode(png).decode("ascii")
            body.append(f'<figure><img alt="{name}" src="data:image/png;base64,{b64}"></figure>')
    page = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Scoring report '
        f"{html.escape(bank['name'])}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
    atomic_write(out / "report.html", page.encode("utf-8"))
    written += [out / "report.md", out / "report.html"] + [
        out / "figures" / f"{n}.{e}" for n in pngs for e in ("png", "svg")
    ]
    logger.info("report written to %s", out)
    return written
