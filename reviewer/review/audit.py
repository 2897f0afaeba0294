"""The pilot-run audit: which questions' references look unstable after a pilot model's runs, and the
maintainer's action on it (EarthRecord Sec. 2.4: references audited by question-type rules after the
first model's run, unstable questions removed, that model rescored on the frozen bank).

The rules are data (audit_rules.json, validated against schemas/audit_rules.schema.json): each has an
id, a kind (the check below), a description and its parameters. `audit()` reads a bank and run files
(the run format of `reviewer score`), applies every rule and returns the audit.json document: the
flagged questions, each with the rules that fired and the evidence. `apply_audit()` is the maintainer's
action in the review store: send items back to expert adjudication (state `flagged`, reason
`pilot_audit`) or remove them (state `rejected`, a stage-2 reject decision with `unstable_reference`,
which `reviewer freeze` lists in qc.json's `removed`); one transaction, one event per item.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from reviewer.errors import ReviewError, SchemaError
from reviewer.review.decision import Decision
from reviewer.review.ledger import EFFECTIVE, find_item, get_user, require_bank, set_state, write_decision
from reviewer.review.rules import RULES_DIR, codebook, load_checked, workflow
from reviewer.store import Store

RULES_PATH = RULES_DIR / "audit_rules.json"
AUDIT_FILE = "audit.json"
AUDIT_VERSION = "1"
KINDS = (
    "agreeing_wrong",
    "near_range",
    "flipping_conclusion",
    "method_spread",
    "abstain_few_scenes",
    "closed_book_right",
)
#: the codebook codes the two actions record
SEND_BACK_REASON = "pilot_audit"
REMOVE_REASON = "unstable_reference"
#: the largest audit.json read
MAX_AUDIT_BYTES = 64 << 20


# ----------------------------------------------------------------------------- the rules as data


@dataclass(frozen=True)
class AuditRule:
    id: str
    kind: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class AuditRules:
    version: str
    conditions: tuple[str, ...]
    rules: tuple[AuditRule, ...]
    sha256: str


def parse_rules(doc: Any, *, path: str | Path = RULES_PATH, validate: bool = True) -> AuditRules:
    """Audit rules from a document: schema first, then what a schema cannot say (unique ids)."""
    if validate:
        from reviewer import schemas

        schemas.validate(doc, "audit_rules", path=path)
    seen: set[str] = set()
    rules = []
    for i, r in enumerate(doc["rules"]):
        if r["id"] in seen:
            raise SchemaError(f"duplicate rule id {r['id']!r}", path=path, field=f"rules.{i}.id")
        seen.add(r["id"])
        rules.append(AuditRule(r["id"], r["kind"], r["description"], dict(r["parameters"])))
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    digest = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    return AuditRules(doc["audit_rules_version"], tuple(doc["conditions"]), tuple(rules), digest)


@cache
def audit_rules() -> AuditRules:
    """The rules of assets/review/audit_rules.json, validated on load (stamped like the other rule files)."""
    return parse_rules(load_checked("audit_rules"), validate=False)  # load_checked validated it against its schema


def load_rules(path: str | Path) -> AuditRules:
    """Audit rules from another file (same schema), e.g. stricter thresholds for a second look."""
    from reviewer.bank.io import parse_line, read_text

    path = Path(path)
    try:
        doc = parse_line(read_text(path, MAX_AUDIT_BYTES), path=path, line=1)
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read audit rules: {exc}", path=path) from exc
    return parse_rules(doc, path=path)


# ----------------------------------------------------------------------------- helpers


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _show(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _years(q: dict[str, Any]) -> list[int]:
    return list(range(int(q["period"]["start"][:4]), int(q["period"]["end"][:4]) + 1))


def _evidence(rule: AuditRule, model: str | None, summary: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"rule": rule.id, "model": model, "summary": summary, "details": details}


class _Context:
    """What the checks share: the bank's clear-observation counts per site and year, and per-rule tallies."""

    def __init__(self, bank: Any) -> None:
        self.applicable: dict[str, int] = {}
        self.notes: dict[str, dict[str, int]] = {}
        #: site -> year -> (fewest clear observations any question of the site records, that question's id)
        self.site_clear: dict[str, dict[int, tuple[int, str]]] = {}
        for q in bank.questions:
            obs = (q.get("provenance") or {}).get("observations")
            counts = obs.get("clear_observations_per_year") if isinstance(obs, dict) else None
            if not isinstance(counts, dict):
                continue
            per = self.site_clear.setdefault(q["site"], {})
            for year, n in counts.items():
                if str(year).isdigit() and _num(n) and (int(year) not in per or n < per[int(year)][0]):
                    per[int(year)] = (int(n), q["id"])

    def count(self, rule: AuditRule, what: str = "applicable") -> None:
        if what == "applicable":
            self.applicable[rule.id] = self.applicable.get(rule.id, 0) + 1
        else:
            notes = self.notes.setdefault(rule.id, {})
            notes[what] = notes.get(what, 0) + 1


def _usable(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A model's runs on a question without harness errors, in pass order."""
    return sorted((r for r in runs if r.get("error") is None), key=lambda r: r["pass"])


def _value(run: dict[str, Any], name: str) -> Any:
    answer = run.get("answer")
    return answer.get(name) if isinstance(answer, dict) else None


# ----------------------------------------------------------------------------- the checks


def check_agreeing_wrong(q, per_model, rule, ctx) -> list[dict[str, Any]]:
    """Every pass wrong, all on one other answer (the same value key)."""
    from reviewer.scoring.judge import value_key

    p = rule.parameters
    concl = q["conclusion"]
    ref = q["reference"][concl]
    out = []
    if per_model:
        ctx.count(rule)
    for model, runs in sorted(per_model.items()):
        ok = _usable(runs)
        if len(ok) < p["min_passes"] or not all(r["_valid"] and not r["_right"] for r in ok):
            continue
        if not p["count_abstentions"] and any(r["_abstained"] for r in ok):
            continue
        keys = {value_key(_value(r, concl)) for r in ok}
        if len(keys) != 1:
            continue
        value = _value(ok[0], concl)
        accepted = [v for v in (q.get("accept") or {}).get(concl, []) if v != ref]
        also = f", also accepted {_show(accepted)}" if accepted else ""
        out.append(
            _evidence(
                rule,
                model,
                f"{model}: all {len(ok)} passes answered {_show(value)} (reference {_show(ref)}{also})",
                {"field": concl, "passes": len(ok), "answer": value, "reference": ref, "accepted": accepted},
            )
        )
    return out


def check_near_range(q, per_model, rule, ctx) -> list[dict[str, Any]]:
    """Numeric answers just outside a reference range (at most share_of_width x its width beyond it)."""
    p = rule.parameters
    ranges = q.get("reference_range") or {}
    names = [n for n in ranges if p["fields"] == "all" or n == q["conclusion"]]
    out = []
    if names and per_model:
        ctx.count(rule)
    for name in names:
        lo, hi = (float(x) for x in ranges[name])
        width = hi - lo
        if width <= 0:
            continue
        for model, runs in sorted(per_model.items()):
            near = []
            for r in _usable(runs):
                v = _value(r, name)
                if not _num(v):
                    continue
                beyond = (lo - v) / width if v < lo else (v - hi) / width if v > hi else None
                if beyond is not None and beyond <= p["share_of_width"]:
                    near.append({"pass": r["pass"], "value": v, "beyond_share_of_width": round(beyond, 4)})
            if len(near) >= p["min_runs"]:
                values = ", ".join(_fmt(n["value"]) for n in near)
                side = "the conclusion" if name == q["conclusion"] else "a side field"
                out.append(
                    _evidence(
                        rule,
                        model,
                        f"{model}: {len(near)} answer(s) of {name} ({side}) just outside [{_fmt(lo)}, {_fmt(hi)}]: "
                        f"{values} (within {p['share_of_width']:.0%} of the range width {_fmt(width)})",
                        {"field": name, "range": [lo, hi], "width": width, "near": near},
                    )
                )
    return out


def check_flipping_conclusion(q, per_model, rule, ctx) -> list[dict[str, Any]]:
    """The conclusion differs between passes (a number by its side of the range; every value the reference
    accepts counts as one)."""
    from reviewer.bank.model import conclusion_field
    from reviewer.scoring.judge import value_key

    p = rule.parameters
    concl = q["conclusion"]
    number = conclusion_field(q).type == "number"
    bounds = (q.get("reference_range") or {}).get(concl)
    # every value the reference accepts is one conclusion (a tie is not a flip)
    right = {value_key(v) for v in [q["reference"][concl], *(q.get("accept") or {}).get(concl, [])]}
    out = []
    if per_model:
        ctx.count(rule)
    for model, runs in sorted(per_model.items()):
        answers, classes = [], []
        for r in _usable(runs):
            if not r["_valid"]:
                continue
            v = _value(r, concl)
            if r["_abstained"]:
                if not p["count_abstentions"]:
                    continue
                c: Any = "insufficient evidence"
            elif number:
                if bounds is None:
                    c = "a number"
                else:
                    c = "below the range" if v < bounds[0] else "inside the range"
                    c = "above the range" if v > bounds[1] else c
            else:
                c = "the reference" if value_key(v) in right else value_key(v)
            answers.append({"pass": r["pass"], "answer": v, "class": c if isinstance(c, str) else _show(c)})
            classes.append(c)
        distinct = list(dict.fromkeys(classes))
        if len(distinct) >= p["min_values"]:
            shown = ", ".join(f"pass {a['pass']} {_show(a['answer'])}" for a in answers)
            what = "sides of the range" if number and bounds is not None else "conclusions"
            out.append(
                _evidence(
                    rule,
                    model,
                    f"{model}: {len(distinct)} different {what} over {len(answers)} passes ({shown})",
                    {"field": concl, "answers": answers, "distinct": len(distinct)},
                )
            )
    return out


def _path_value(prov: dict[str, Any], path: Any) -> float | None:
    if _num(path):
        return float(path)
    part, name = str(path).split(".", 1)
    holder = prov.get(part)
    v = holder.get(name) if isinstance(holder, dict) else None
    return float(v) if _num(v) else None


def _decision_values(spec: dict[str, Any], prov: dict[str, Any]) -> dict[str, float]:
    """method -> the value the question's threshold decides on, from the provenance."""
    methods = prov.get("methods") if isinstance(prov.get("methods"), dict) else {}
    how = spec["values"]
    if "methods" in how:
        got = methods.get(how["methods"])
    elif "provenance" in how:
        got = prov.get(how["provenance"])
    else:
        start, end = (methods.get(k) if isinstance(methods.get(k), dict) else {} for k in how["relative_change_pct"])
        got = {
            m: 100.0 * (end[m] - a) / abs(a)
            for m, a in start.items()
            if _num(a) and a != 0 and m in end and _num(end[m])
        }
    if isinstance(got, list):
        got = {f"#{i + 1}": v for i, v in enumerate(got)}
    if not isinstance(got, dict):
        return {}
    return {str(m): float(v) for m, v in got.items() if _num(v)}


def _in_text(value: float, text: str) -> bool:
    shown = str(int(value)) if float(value).is_integer() else repr(float(value)).rstrip("0")
    return re.search(rf"(?<![\d.]){re.escape(shown)}(?![\d])", text) is not None


def check_method_spread(q, per_model, rule, ctx) -> list[dict[str, Any]]:
    """The methods' spread nearly reaches the stated threshold, or the methods split on the conclusion."""
    from reviewer.bank.model import conclusion_field, is_insufficient
    from reviewer.scoring.judge import value_key

    p = rule.parameters
    prov = q.get("provenance") if isinstance(q.get("provenance"), dict) else {}
    concl = q["conclusion"]
    ref = q["reference"][concl]
    if is_insufficient(ref):
        return []
    out = []
    spec = p["decisions"].get(prov.get("template"))
    values = _decision_values(spec, prov) if spec else {}
    threshold = _path_value(prov, spec["threshold"]) if spec else None
    methods = prov.get("methods") if isinstance(prov.get("methods"), dict) else {}
    votes = methods.get(concl) if conclusion_field(q).type != "number" else None
    votes = {m: v for m, v in votes.items() if v is not None} if isinstance(votes, dict) else {}
    if (values and threshold is not None) or votes:
        ctx.count(rule)
    if values and threshold is not None:
        shown = {m: (abs(v) if spec["absolute"] else v) for m, v in values.items()}
        log = spec["scale"] == "log"
        if not log or (threshold > 0 and all(v > 0 for v in shown.values())):
            f = (lambda x: math.log10(x)) if log else (lambda x: x)
            scaled = [f(v) for v in shown.values()]
            lo, hi, t = min(scaled), max(scaled), f(threshold)
            reach = p["reach_share"] * (hi - lo)
            if lo - reach <= t <= hi + reach:
                low, high = min(shown.values()), max(shown.values())
                gap = 0.0 if low <= threshold <= high else min(abs(low - threshold), abs(high - threshold))
                side = "|value|" if spec["absolute"] else "value"
                scale = " (log10 scale)" if log else ""
                straddle = "straddle" if gap == 0 else f"come within {_fmt(gap)} of"
                out.append(
                    _evidence(
                        rule,
                        None,
                        f"{len(shown)} methods' {spec['field']} decision {side}s span [{_fmt(low)}, {_fmt(high)}] and "
                        f"{straddle} the threshold {_fmt(threshold)} ({spec['threshold']}); reach "
                        f"{p['reach_share']:.0%} of the spread{scale}",
                        {
                            "check": "threshold",
                            "field": spec["field"],
                            "template": prov.get("template"),
                            "values": values,
                            "absolute": spec["absolute"],
                            "scale": spec["scale"],
                            "threshold": threshold,
                            "threshold_from": spec["threshold"],
                            "threshold_in_text": _in_text(threshold, q["text"]),
                            "span": [low, high],
                            "gap": gap,
                        },
                    )
                )
    if votes:
        right = {value_key(v) for v in [ref, *(q.get("accept") or {}).get(concl, [])]}
        dissent = {m: v for m, v in votes.items() if value_key(v) not in right}
        share = 1 - len(dissent) / len(votes)
        if share < p["min_agreement"]:
            out.append(
                _evidence(
                    rule,
                    None,
                    f"{len(dissent)} of {len(votes)} methods do not give the reference {_show(ref)} for {concl}: "
                    + ", ".join(f"{m} {_show(v)}" for m, v in dissent.items()),
                    {"check": "split", "field": concl, "agreement": round(share, 4), "dissent": dissent},
                )
            )
    return out


def _few_scenes(q: dict[str, Any], p: dict[str, Any], ctx: _Context) -> dict[str, Any]:
    """What the bank says about clear scenes in the question's period: years with few clear observations
    (counts kept in the provenance of the site's questions, years the generator marked sparse) and
    whether only thin sensors cover it; `note` says when no count was there and only the sensors were read."""
    prov = q.get("provenance") if isinstance(q.get("provenance"), dict) else {}
    years = _years(q)
    found: dict[str, Any] = {"few_years": {}, "sources": []}
    known = ctx.site_clear.get(q["site"], {})
    counted = {y: known[y] for y in years if y in known}
    if counted:
        found["sources"].append("provenance.observations.clear_observations_per_year (questions of the site)")
    for y, (n, qid) in counted.items():
        if n <= p["max_clear_per_year"]:
            found["few_years"][str(y)] = {"clear": n, "from": f"{qid} provenance.observations"}
    sparse = prov.get("sparse_years")
    if isinstance(sparse, dict) and isinstance(sparse.get("years"), list):
        found["sources"].append("provenance.sparse_years")
        for y in sparse["years"]:
            if isinstance(y, int) and y in years and str(y) not in found["few_years"]:
                floor = sparse.get("min_clear_growing_obs")
                found["few_years"][str(y)] = {"clear": f"fewer than {floor}", "from": "provenance.sparse_years"}
    sensors = set(q.get("sensors") or [])
    found["sensors"] = sorted(sensors)
    found["thin_sensors"] = bool(sensors) and any(sensors <= set(s) for s in p["thin_sensor_sets"])
    found["sources"].append("sensors")
    if not counted and not isinstance(sparse, dict):
        found["note"] = "the bank carries no clear-scene count for these years; only the sensors were read"
    return found


def check_abstain_few_scenes(q, per_model, rule, ctx) -> list[dict[str, Any]]:
    """`insufficient evidence` answered on a question with a reference, in a period with few clear scenes."""
    from reviewer.bank.model import is_insufficient

    p = rule.parameters
    concl = q["conclusion"]
    if is_insufficient(q["reference"][concl]):
        return []
    abstained = {m: [r["pass"] for r in _usable(runs) if r["_abstained"]] for m, runs in sorted(per_model.items())}
    abstained = {m: ps for m, ps in abstained.items() if len(ps) >= p["min_runs"]}
    if not abstained:
        return []
    ctx.count(rule)
    scenes = _few_scenes(q, p, ctx)
    if "note" in scenes:
        ctx.count(rule, "abstentions without a clear-scene count in the bank")
    if not scenes["few_years"] and not scenes["thin_sensors"]:
        return []
    parts = [f"{y} ({v['clear']} clear, {v['from']})" for y, v in scenes["few_years"].items()]
    if scenes["thin_sensors"]:
        parts.append(f"only {', '.join(scenes['sensors'])} cover the period")
    out = []
    for model, passes in abstained.items():
        out.append(
            _evidence(
                rule,
                model,
                f"{model}: answered insufficient evidence in {len(passes)} pass(es) (reference "
                f"{_show(q['reference'][concl])}); few clear scenes: " + "; ".join(parts),
                {"field": concl, "passes": passes, **scenes},
            )
        )
    return out


def check_closed_book_right(q, per_model, rule, ctx) -> list[dict[str, Any]]:
    """Right in every closed-book pass (at least min_passes, no harness errors): the record may not be needed."""
    concl = q["conclusion"]
    out = []
    if per_model:
        ctx.count(rule)
    for model, runs in sorted(per_model.items()):
        ok = _usable(runs)
        if len(ok) < rule.parameters["min_passes"] or not all(r["_right"] for r in ok):
            continue
        answers = [_value(r, concl) for r in ok]
        out.append(
            _evidence(
                rule,
                model,
                f"{model}: right in all {len(ok)} closed-book passes without the record ({', '.join(map(_show, answers))})",
                {"field": concl, "passes": len(ok), "answers": answers, "reference": q["reference"][concl]},
            )
        )
    return out


CHECKS = {
    "closed_book_right": check_closed_book_right,
    "agreeing_wrong": check_agreeing_wrong,
    "near_range": check_near_range,
    "flipping_conclusion": check_flipping_conclusion,
    "method_spread": check_method_spread,
    "abstain_few_scenes": check_abstain_few_scenes,
}


# ----------------------------------------------------------------------------- the audit


def question_sha256(q: dict[str, Any]) -> str:
    """The hash the review store keeps for an item version holding this question."""
    from reviewer.bank.io import dumps_line
    from reviewer.store import sha256_text

    return sha256_text(dumps_line(q, "question"))


def audit(
    bank_dir: str | Path,
    run_paths: Sequence[str | Path],
    *,
    passes: int = 3,
    lenient: bool = False,
    rules: AuditRules | None = None,
) -> dict[str, Any]:
    """The audit.json document of a pilot's runs on a bank (draft or frozen); writes nothing.

    Runs are read and judged as `reviewer score` reads them (bad lines stop it unless `lenient`).
    """
    from reviewer.bank.io import load_bank
    from reviewer.errors import ScoringError
    from reviewer.scoring.runs import load_runs

    rules = rules or audit_rules()
    if not run_paths:
        raise ScoringError("no run files given")
    bank = load_bank(bank_dir, verify_hashes=True)
    runset = load_runs(run_paths, bank, passes=passes, lenient=lenient)
    # a rule naming its own condition (the closed-book screening) reads those runs; the others read rules.conditions
    own = {r.parameters["condition"] for r in rules.rules if "condition" in r.parameters}
    used = [r for r in runset.runs if r["condition"] in rules.conditions or r["condition"] in own]
    by_question: dict[str, dict[str, list[dict[str, Any]]]] = {}
    by_condition: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = {}
    for r in used:
        if r["condition"] in rules.conditions:
            by_question.setdefault(r["question"], {}).setdefault(r["model"], []).append(r)
        if r["condition"] in own:
            by_condition.setdefault((r["question"], r["condition"]), {}).setdefault(r["model"], []).append(r)
    ctx = _Context(bank)
    flagged_by: dict[str, int] = {r.id: 0 for r in rules.rules}
    questions = []
    for q in bank.questions:
        per_model = by_question.get(q["id"], {})
        evidence = []
        for rule in rules.rules:
            cond = rule.parameters.get("condition")
            runs_of = per_model if cond is None else by_condition.get((q["id"], cond), {})
            evidence += CHECKS[rule.kind](q, runs_of, rule, ctx)
        if not evidence:
            continue
        fired = list(dict.fromkeys(e["rule"] for e in evidence))
        for rid in fired:
            flagged_by[rid] += 1
        prov = q.get("provenance") if isinstance(q.get("provenance"), dict) else {}
        questions.append(
            {
                "id": q["id"],
                "sha256": question_sha256(q),
                "template": prov.get("template"),
                "class": q["class"],
                "task": q["task"],
                "reference": q["reference"][q["conclusion"]],
                "rules": fired,
                "evidence": evidence,
            }
        )
    rule_rows = []
    for r in rules.rules:
        row = {
            "id": r.id,
            "kind": r.kind,
            "description": r.description,
            "parameters": r.parameters,
            "applicable": ctx.applicable.get(r.id, 0),
            "flagged": flagged_by[r.id],
        }
        if r.id in ctx.notes:
            row["note"] = "; ".join(f"{what}: {n}" for what, n in sorted(ctx.notes[r.id].items()))
        rule_rows.append(row)
    doc = {
        "audit_version": AUDIT_VERSION,
        "bank": {
            "name": bank.name,
            "version": bank.version,
            "sha256": bank.sha256,
            "frozen": bank.frozen,
            "path": str(bank_dir),
        },
        "runs": {
            "files": [str(p) for p in run_paths],
            "models": sorted({r["model"] for r in used}),
            "conditions": list(dict.fromkeys([*rules.conditions, *sorted(own)])),
            "used": len(used),
            "bad_lines": len(runset.bad_lines),
        },
        "rules": {"version": rules.version, "sha256": rules.sha256, "rules": rule_rows},
        "counts": {
            "questions": len(bank.questions),
            "answered": len({r["question"] for r in used}),
            "flagged": len(questions),
        },
        "questions": questions,
    }
    return json.loads(json.dumps(doc, allow_nan=False))


def dumps_audit(doc: dict[str, Any]) -> bytes:
    """audit.json bytes: indented, in the document's key order, trailing newline."""
    return (json.dumps(doc, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8")


def write_audit(doc: dict[str, Any], out_dir: str | Path) -> Path:
    """Check the document against its schema and write OUT_DIR/audit.json whole or not at all."""
    from reviewer import schemas
    from reviewer.fileio import atomic_write, output_folder

    out_dir = Path(out_dir)
    schemas.validate(doc, "audit", path=out_dir / AUDIT_FILE)
    with output_folder(out_dir, last=[AUDIT_FILE], ours={AUDIT_FILE}) as tmp:
        atomic_write(tmp / AUDIT_FILE, dumps_audit(doc))
    return out_dir / AUDIT_FILE


def load_audit(path: str | Path) -> dict[str, Any]:
    """An audit.json (or a folder holding one), checked against schemas/audit.schema.json."""
    from reviewer import schemas
    from reviewer.bank.io import parse_line, read_text

    path = Path(path)
    if path.is_dir():
        path = path / AUDIT_FILE
    try:
        doc = parse_line(read_text(path, MAX_AUDIT_BYTES), path=path, line=1)
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read the audit: {exc}", path=path) from exc
    schemas.validate(doc, "audit", path=path)
    return doc


def table_lines(doc: dict[str, Any]) -> list[str]:
    """The audit as a table for a terminal: question id, rule ids, evidence (one line per piece)."""
    rows = doc["questions"]
    qw = max([len("question")] + [len(q["id"]) for q in rows])
    rw = max([len("rules")] + [len(", ".join(q["rules"])) for q in rows])
    lines = [f"{'question':<{qw}}  {'rules':<{rw}}  evidence"]
    for q in rows:
        first = True
        for e in q["evidence"]:
            lead = f"{q['id']:<{qw}}  {', '.join(q['rules']):<{rw}}" if first else " " * (qw + 2 + rw)
            lines.append(f"{lead}  {e['rule']}: {' '.join(e['summary'].split())}")
            first = False
    c = doc["counts"]
    per = ", ".join(f"{r['id']} {r['flagged']}" for r in doc["rules"]["rules"])
    lines.append(
        f"{c['flagged']} of {c['questions']} questions flagged ({c['answered']} answered by "
        f"{', '.join(doc['runs']['models']) or 'no model'}); per rule: {per}"
    )
    return lines


# ----------------------------------------------------------------------------- the maintainer's action


def _ids(values: Iterable[str] | str | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return list(dict.fromkeys(v.strip() for text in values for v in text.split(",") if v.strip()))


def _send_back(store, db, actor, item, action, flag_codes, note, audit_ref, evidence) -> dict[str, Any]:
    """An item back to an expert: its standing adjudication retracted, state flagged, marked as audited."""
    live = db.execute(
        "SELECT d.id FROM decisions d WHERE d.item = ? AND d.version = ? AND d.stage = 2 "
        f"AND d.verdict != 'retract' AND {EFFECTIVE}",
        [item.id, item.version],
    ).fetchall()
    for (decision_id,) in live:  # the earlier adjudication no longer stands (the event below says so)
        write_decision(
            store,
            item,
            actor.name,
            Decision("retract", retracts=decision_id, rationale="pilot audit"),
            stage=2,
            action=None,
        )
    set_state(
        store,
        item,
        action,
        actor.role,
        actor.name,
        detail={
            "reason": "pilot audit",
            "reasons": flag_codes,
            "comment": note,
            "retracted": [d for (d,) in live],
            "audit": audit_ref,
            **evidence,
        },
    )
    # marked for an expert: in the adjudication queue whatever the sample, never decided by the rule
    db.execute("UPDATE items SET audit = 1 WHERE id = ?", [item.id])
    return {"item": item.key, "from": item.state, "retracted": len(live)}


def _remove(store, actor, item, action, reject_codes, note, audit_ref, entry, evidence) -> dict[str, Any]:
    """An item out of the bank: a stage-2 reject decision (unstable reference) and the rejected state."""
    why = note or f"pilot audit: unstable reference ({', '.join(entry['rules'])})"
    decision_id = write_decision(
        store,
        item,
        actor.name,
        Decision("reject", reasons=tuple(reject_codes), rationale=why, view={"pilot_audit": {**audit_ref, **evidence}}),
        stage=2,
        action=None,
    )
    set_state(
        store,
        item,
        action,
        actor.role,
        actor.name,
        detail={
            "reason": why,
            "reasons": reject_codes,
            "decision": decision_id,
            "stage": 2,
            "audit": audit_ref,
            **evidence,
        },
    )
    return {"item": item.key, "from": item.state, "decision": decision_id}


def apply_audit(
    store: Store,
    audit_doc: dict[str, Any] | str | Path,
    *,
    user: str | None,
    send_back: Iterable[str] | str | None = None,
    remove: Iterable[str] | str | None = None,
    bank: str | None = None,
    rationale: str | None = None,
) -> dict[str, Any]:
    """A maintainer acts on an audit: items sent back go to `flagged` (reason pilot_audit) for an expert to
    adjudicate again; removed items end `rejected` by a stage-2 reject decision (unstable_reference).

    Every named id must be flagged in the audit and its item still hold the audited question (same
    sha256); roles, legal transitions and these checks come first, then everything is written in one
    transaction with one event per item. Returns what was done.
    """
    actor = get_user(store, user)
    wf = workflow()
    back, gone = _ids(send_back), _ids(remove)
    for action, ids in (("audit_send_back", back), ("audit_remove", gone)):
        t = wf.transitions[action]
        if ids and actor.role not in t.roles:
            raise ReviewError(
                f"user {actor.name} is {actor.role}: {action.replace('_', ' ')} is for "
                f"{' or '.join(sorted(t.roles))} ({t.why})"
            )
    if not back and not gone:
        raise ReviewError("name the items to act on: --send-back ID[,ID] and/or --remove ID[,ID]")
    both = [i for i in back if i in gone]
    if both:
        raise ReviewError(f"{len(both)} item(s) both sent back and removed: {', '.join(both)}")
    doc = audit_doc if isinstance(audit_doc, dict) else load_audit(audit_doc)
    bank = bank or doc["bank"]["name"]
    require_bank(store, bank)
    flagged = {q["id"]: q for q in doc["questions"]}
    unknown = [i for i in [*back, *gone] if i not in flagged]
    if unknown:
        raise ReviewError(f"{len(unknown)} id(s) the audit does not flag: {', '.join(unknown)}")
    flag_codes = codebook().check_flags([SEND_BACK_REASON])
    reject_codes = codebook().check_reject([REMOVE_REASON])
    audit_ref = {
        "bank_version": doc["bank"]["version"],
        "bank_sha256": doc["bank"]["sha256"],
        "rules_sha256": doc["rules"]["sha256"],
    }
    note = rationale.strip() if rationale and rationale.strip() else None
    done: dict[str, list[dict[str, Any]]] = {"sent_back": [], "removed": []}
    with store.transaction() as db:
        plan = []
        for action, ids in (("audit_send_back", back), ("audit_remove", gone)):
            for qid in ids:
                item = find_item(store, qid, bank)
                if item.gold:
                    raise ReviewError(f"item {item.key} is a gold item: the audit does not act on it")
                sha = db.execute(
                    "SELECT sha256 FROM item_versions WHERE item = ? AND version = ?", [item.id, item.version]
                ).fetchone()[0]
                if sha != flagged[qid]["sha256"]:
                    raise ReviewError(
                        f"item {item.key} changed since the audit (audited {flagged[qid]['sha256'][:19]}..., "
                        f"current version {item.version} is {sha[:19]}...): audit the current bank again"
                    )
                wf.target(action, item.state, actor.role, item=item.key, reason="pilot audit")
                plan.append((action, item, flagged[qid]))
        for action, item, entry in plan:
            evidence = {"rules": entry["rules"], "evidence": [e["summary"] for e in entry["evidence"]]}
            if action == "audit_send_back":
                done["sent_back"].append(
                    _send_back(store, db, actor, item, action, flag_codes, note, audit_ref, evidence)
                )
            else:
                done["removed"].append(
                    _remove(store, actor, item, action, reject_codes, note, audit_ref, entry, evidence)
                )
    return {"bank": bank, **done}


__all__ = [
    "AuditRule",
    "AuditRules",
    "apply_audit",
    "audit",
    "audit_rules",
    "load_audit",
    "load_rules",
    "parse_rules",
    "table_lines",
    "write_audit",
]
