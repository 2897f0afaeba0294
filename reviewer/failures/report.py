"""Outputs of a coded set: Tab. 13 (first wrong step, leading vs other models), the C.5 counts (sensor reports in
cases that moved and beyond both), a CSV of every coded run, and a stacked-bar figure (PNG and SVG).

A run's code in force is the newest expert code, else the LLM's (the paper: the LLM coded, the experts checked);
the CSV says which. Leading models: by default the top half (rounded down) of the scored models by overall pass^k,
as the set lists them; or the top N; or the models named.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from reviewer.errors import ReviewError
from reviewer.failures.codebook import codebook
from reviewer.failures.coding import latest
from reviewer.store import Store

CSV_FIELDS = (
    "run", "part", "model", "group", "question", "condition", "pair", "pass", "outcome", "code", "coded_by", "coder",
    "quote", "note", "llm_code", "llm_uncertain", "expert_code",
)  # fmt: skip

#: What `failures report` writes into its folder: a folder holding anything else is refused (reviewer.fileio).
REPORT_ENTRIES = frozenset(
    {"failures.json", "table13.csv", "c5.csv", "coded_runs.csv", "failures.md", "failures.png", "failures.svg"}
)


def leading(doc: dict[str, Any], split: str | int | None = None) -> list[str]:
    """The leading models: top half by pass^k (default), the top `split` when a number, or the names given."""
    order = [m["model"] for m in doc["models"]]
    if split is None:
        return order[: len(order) // 2]
    if isinstance(split, int) or str(split).isdigit():
        n = int(split)
        if not 0 <= n <= len(order):
            raise ReviewError(f"--leading {n}: the set has {len(order)} models", field="leading")
        return order[:n]
    names = [s.strip() for s in str(split).split(",") if s.strip()]
    unknown = [n for n in names if n not in order]
    if unknown:
        raise ReviewError(
            f"--leading names {unknown[0]!r}, not a model of the set ({', '.join(order)})", field="leading"
        )
    return names


def coded_runs(store: Store, doc: dict[str, Any], lead: list[str]) -> list[dict[str, Any]]:
    """One row per run of the set with its code in force (or none), who gave it, the LLM's quote and the note."""
    rows = []
    for r in doc["runs"]:
        llm = latest(store, doc["id"], r["id"], "llm")
        expert = latest(store, doc["id"], r["id"], "expert")
        final = expert or llm
        rows.append(
            {
                "run": r["id"], "part": r["part"], "model": r["model"],
                "group": ("lead" if r["model"] in lead else "other") if r["part"] == "steps" else None,
                "question": r["question"], "condition": r["condition"], "pair": r["pair"], "pass": r["pass"],
                "outcome": r.get("outcome"), "code": final["code"] if final else None,
                "coded_by": None if final is None else final["kind"], "coder": final["coder"] if final else None,
                "quote": llm["quote"] if llm else None, "note": expert["note"] if expert else None,
                "llm_code": llm["code"] if llm else None,
                "llm_uncertain": None if llm is None or llm["uncertain"] is None else bool(llm["uncertain"]),
                "expert_code": expert["code"] if expert else None,
            }
        )  # fmt: skip
    return rows


def tables(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Tab. 13 (step code x lead/other) and C.5 (sensor code x moved/beyond), with the runs not coded yet."""
    cb = codebook().schemes
    t13 = {c: {"lead": 0, "other": 0} for c in cb["step"].names}
    c5 = {c: {"moved": 0, "beyond": 0} for c in cb["sensor"].names}
    uncoded = {"steps": 0, "pairs": 0}
    for r in rows:
        if r["code"] is None:
            uncoded[r["part"]] += 1
        elif r["part"] == "steps":
            t13[r["code"]][r["group"]] += 1
        else:
            c5[r["code"]][r["outcome"]] += 1
    totals13 = {g: sum(v[g] for v in t13.values()) for g in ("lead", "other")}
    totals5 = {g: sum(v[g] for v in c5.values()) for g in ("moved", "beyond")}
    return {"table13": t13, "table13_totals": totals13, "c5": c5, "c5_totals": totals5, "not_coded": uncoded}


def _csv(header: list[str], body: list[list[Any]]) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(body)
    return buf.getvalue().encode("utf-8")


def markdown(doc: dict[str, Any], t: dict[str, Any], lead: list[str]) -> str:
    cb = codebook().schemes
    n13, n5 = t["table13_totals"], t["c5_totals"]
    lines = [
        f"# Failure coding of {doc['id']} ({doc['bank']['name']} {doc['bank']['version']})",
        "",
        f"Leading models: {', '.join(lead) or '(none)'}. Runs not coded yet: {t['not_coded']['steps']} step runs, "
        f"{t['not_coded']['pairs']} pair runs.",
        "",
        f"Table 13. First wrong step of {n13['lead']} failed runs of the leading models (Lead) and "
        f"{n13['other']} of the others (Other).",
        "",
        "| Step | The run | Lead | Other |",
        "|---|---|---:|---:|",
    ]
    for c in cb["step"].codes:
        v = t["table13"][c.code]
        lines.append(f"| {c.label} | {c.definition} | {v['lead']} | {v['other']} |")
    lines += [
        "",
        f"Sec. C.5. Sensor reports of {n5['moved']} wrong runs in cases that moved and {n5['beyond']} runs in cases "
        "beyond both.",
        "",
        "| Report | The run | Moved | Beyond |",
        "|---|---|---:|---:|",
    ]
    for c in cb["sensor"].codes:
        v = t["c5"][c.code]
        lines.append(f"| {c.label} | {c.definition} | {v['moved']} | {v['beyond']} |")
    return "\n".join(lines) + "\n"


def figure(t: dict[str, Any], n_lead: int | None = None, n_other: int | None = None) -> Any:
    """Stacked bars: step codes for Lead and Other, sensor codes for Moved and Beyond (run counts); the legend
    lists the codes top to bottom as they are stacked."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    cb = codebook().schemes
    fig = Figure(figsize=(9, 4.2), layout="constrained")
    axes = fig.subplots(1, 2)
    lead_name = "Lead" if n_lead is None else f"Lead ({n_lead} models)"
    other_name = "Other" if n_other is None else f"Other ({n_other} models)"
    panels = [
        (axes[0], "First wrong step", cb["step"], t["table13"], ("lead", "other"), (lead_name, other_name)),
        (axes[1], "Sensor report (pairs)", cb["sensor"], t["c5"], ("moved", "beyond"), ("Moved", "Beyond")),
    ]
    for ax, title, scheme, table, groups, names in panels:
        colors = [f"C{i}" for i in range(len(scheme.codes))]
        bottom = [0] * len(groups)
        for c, color in zip(scheme.codes, colors, strict=True):
            vals = [table[c.code][g] for g in groups]
            ax.bar(names, vals, bottom=bottom, color=color, label=c.label, width=0.6)
            for i, v in enumerate(vals):
                if v:
                    ax.text(i, bottom[i] + v / 2, str(v), ha="center", va="center", fontsize=8, color="white")
            bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
        for i, total in enumerate(bottom):
            ax.text(i, total, f"n = {total}", ha="center", va="bottom", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("runs")
        ax.set_ylim(0, max([*bottom, 1]) * 1.12)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles[::-1], labels[::-1], fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
    return fig


def write_report(
    store: Store, doc: dict[str, Any], out: str | Path, *, user: str | None, split: str | int | None = None
) -> dict[str, Any]:
    """Write OUT/failures.json, table13.csv, c5.csv, coded_runs.csv, failures.md and failures.png/.svg (whole or
    not at all); returns the tables. The CSV holds the LLM's codes: for the codebook's llm_viewers only."""
    from reviewer.failures.coding import require_role
    from reviewer.fileio import atomic_write, check_output_folder, output_folder

    require_role(store, user, codebook().llm_viewers, "see the LLM's codes")
    check_output_folder(out, ours=REPORT_ENTRIES)  # before the work: a folder holding others' files is refused

    lead = leading(doc, split)
    rows = coded_runs(store, doc, lead)
    t = tables(rows)
    result = {"set": doc["id"], "bank": doc["bank"], "leading": lead, "pools": doc["pools"], **t}
    with output_folder(out, last=["failures.json"], ours=REPORT_ENTRIES) as tmp:
        atomic_write(
            tmp / "table13.csv",
            _csv(["step", "lead", "other"], [[c, v["lead"], v["other"]] for c, v in t["table13"].items()]),
        )
        atomic_write(
            tmp / "c5.csv",
            _csv(["report", "moved", "beyond"], [[c, v["moved"], v["beyond"]] for c, v in t["c5"].items()]),
        )
        body = [[r[k] for k in CSV_FIELDS] for r in rows if r["code"] is not None]
        atomic_write(tmp / "coded_runs.csv", _csv(list(CSV_FIELDS), body))
        atomic_write(tmp / "failures.md", markdown(doc, t, lead).encode("utf-8"))
        fig = figure(t, len(lead), len(doc["models"]) - len(lead))
        for ext in ("png", "svg"):
            buf = io.BytesIO()
            fig.savefig(buf, format=ext, dpi=150 if ext == "png" else None)
            atomic_write(tmp / f"failures.{ext}", buf.getvalue())
        atomic_write(tmp / "failures.json", (json.dumps(result, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    return result


def report_section(store: Store, doc: dict[str, Any], *, user: str | None, split: str | int | None = None) -> Any:
    """The failure coding as a section of the scoring report (`reviewer score ... --failures SET`): Tab. 13 and
    the C.5 counts as tables, and the stacked-bar figure. Maintainers only, as for `failures report`."""
    import html

    from reviewer.failures.coding import require_role
    from reviewer.scoring.report import Section

    require_role(store, user, codebook().llm_viewers, "see the LLM's codes")
    lead = leading(doc, split)
    t = tables(coded_runs(store, doc, lead))
    cb = codebook().schemes

    def table(caption: str, head: tuple[str, str], rows: list[tuple[str, str, Any, Any]]) -> str:
        cells = "".join(
            f"<tr><td>{html.escape(a)}</td><td style='text-align:left;white-space:normal'>{html.escape(b)}</td>"
            f"<td>{c}</td><td>{d}</td></tr>"
            for a, b, c, d in rows
        )
        return (
            f"<table><thead><tr><th>Code</th><th style='text-align:left'>The run</th><th>{head[0]}</th><th>{head[1]}</th></tr></thead>"
            f"<tbody>{cells}</tbody></table>\n<p class='caption'>{html.escape(caption)}</p>"
        )

    n13, n5 = t["table13_totals"], t["c5_totals"]
    steps = [
        (c.label, c.definition, t["table13"][c.code]["lead"], t["table13"][c.code]["other"]) for c in cb["step"].codes
    ]
    sensor = [(c.label, c.definition, t["c5"][c.code]["moved"], t["c5"][c.code]["beyond"]) for c in cb["sensor"].codes]
    body = table(
        f"Table 13. First wrong step of {n13['lead']} failed runs of the leading models ({', '.join(lead) or 'none'}) "
        f"and {n13['other']} of the others; {t['not_coded']['steps']} step runs not coded yet.",
        ("Lead", "Other"),
        steps,
    ) + table(
        f"Sec. C.5. Sensor reports of {n5['moved']} wrong runs in cases that moved and {n5['beyond']} runs in cases "
        f"beyond both; {t['not_coded']['pairs']} pair runs not coded yet.",
        ("Moved", "Beyond"),
        sensor,
    )
    fig = figure(t, len(lead), len(doc["models"]) - len(lead))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=150)
    md = markdown(doc, t, lead).split("\n", 2)[2]  # without its own title: the report gives the section's
    return Section(f"Failure coding ({doc['id']})", md, body, {"failures": buf.getvalue()})
