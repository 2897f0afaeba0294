"""Coding the runs of a coding set: codes saved at once with their event, append-only, and the coder's view.

A code is a row of failure_codes (db/migrations/0006_failures.sql); a correction is a new row naming the one it
replaces, never an overwrite. Experts code (codebook.json `coders`); the LLM pre-coding is kind 'llm'. The view a
coder (or a dock) reads is `run_view`: it never holds an LLM code, quote or flag, so the expert check is blind.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reviewer.errors import ReviewError
from reviewer.failures.codebook import codebook, mark
from reviewer.store import Store

SCHEME_OF_PART = {"steps": "step", "pairs": "sensor"}


def scheme_of(run: dict[str, Any]) -> str:
    return SCHEME_OF_PART[run["part"]]


def require_role(store: Store, user: str | None, allowed: tuple[str, ...], what: str) -> Any:
    """The user, when their role is one the codebook names for `what`."""
    from reviewer.review.ledger import get_user

    actor = get_user(store, user)
    if actor.role not in allowed:
        raise ReviewError(f"user {actor.name} is {actor.role}: only {' or '.join(allowed)} may {what}")
    return actor


def latest(store: Store, set_id: str, run: str, kind: str, coder: str | None = None) -> dict[str, Any] | None:
    """The newest code of a run of one kind (and coder): the one in force."""
    sql = "SELECT * FROM failure_codes WHERE set_id = ? AND run = ? AND kind = ?"
    args: list[Any] = [set_id, run, kind]
    if coder is not None:
        sql += " AND coder = ?"
        args.append(coder)
    rows = list(store.db.query(sql + " ORDER BY id DESC LIMIT 1", args))
    return rows[0] if rows else None


@dataclass(frozen=True)
class FailureCode:
    """One code given to a run: the code, who gave it (`kind` 'expert' or 'llm', the `coder`'s name or model)
    and what came with it (an expert's note; an LLM's quote, whether it was unsure, and its provenance)."""

    code: str
    kind: str
    coder: str
    note: str | None = None
    quote: str | None = None
    uncertain: bool | None = None
    provenance: dict[str, Any] | None = None


def insert_code(
    store: Store, set_id: str, run: dict[str, Any], entry: FailureCode, *, event_user: str | None
) -> dict[str, Any]:
    """Append one code and its event in one transaction; the row and the code it replaced."""
    from reviewer.review.ledger import dumps, now, record_event

    code, kind, coder, uncertain = entry.code, entry.kind, entry.coder, entry.uncertain
    scheme = scheme_of(run)
    codebook().schemes[scheme].check(code)
    with store.transaction() as db:
        prev = latest(store, set_id, run["id"], kind, coder)
        cur = db.execute(
            "INSERT INTO failure_codes (set_id, run, scheme, code, kind, coder, note, quote, uncertain, provenance, "
            "replaces, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                set_id,
                run["id"],
                scheme,
                code,
                kind,
                coder,
                entry.note,
                entry.quote,
                None if uncertain is None else int(uncertain),
                dumps(entry.provenance),
                prev["id"] if prev else None,
                now(),
            ],
        )
        row_id = int(cur.lastrowid)
        record_event(
            store,
            event_user,
            f"failure_{'precode' if kind == 'llm' else 'code'}",
            before=prev["code"] if prev else None,
            after=code,
            detail={"set": set_id, "run": run["id"], "scheme": scheme, "code_id": row_id, "coder": coder},
        )
    return {"id": row_id, "run": run["id"], "scheme": scheme, "code": code, "replaces": prev["code"] if prev else None}


def code_run(
    store: Store, doc: dict[str, Any], run_id: str, code: str, *, user: str | None, note: str | None = None
) -> dict[str, Any]:
    """An expert's code for one run, saved at once with its event (a second code is a correction)."""
    from reviewer.failures.sample import run_of

    actor = require_role(store, user, codebook().coders, "code failure steps")
    run = run_of(doc, run_id)
    code = codebook().schemes[scheme_of(run)].by_key(code) or code  # a key picks its code, as in the panel
    note = (note or "").strip() or None
    entry = FailureCode(code, "expert", actor.name, note=note)
    return insert_code(store, doc["id"], run, entry, event_user=actor.name)


def history(store: Store, set_id: str, run_id: str, *, kind: str = "expert") -> list[dict[str, Any]]:
    """Every code a run was given of one kind, oldest first."""
    return list(
        store.db.query(
            "SELECT id, code, coder, note, replaces, created FROM failure_codes WHERE set_id = ? AND run = ? "
            "AND kind = ? ORDER BY id",
            [set_id, run_id, kind],
        )
    )


def queue(store: Store, doc: dict[str, Any], user: str, *, part: str | None = None) -> list[dict[str, Any]]:
    """The runs of the set (of one part) in set order with this user's code in force, if any: a coder's list
    (the first without a code is where a panel opens). No LLM code."""
    mine = {
        r["run"]: r["code"]
        for r in store.db.query(
            "SELECT run, code FROM failure_codes WHERE set_id = ? AND kind = 'expert' AND coder = ? ORDER BY id",
            [doc["id"], user],
        )
    }
    return [
        {
            "run": r["id"],
            "part": r["part"],
            "model": r["model"],
            "question": r["question"],
            "my_code": mine.get(r["id"]),
        }
        for r in doc["runs"]
        if part is None or r["part"] == part
    ]


def run_view(
    doc: dict[str, Any], run_id: str, *, store: Store | None = None, user: str | None = None
) -> dict[str, Any]:
    """Everything a coder reads for one run (what `reviewer failures show` prints and a dock shows).

    The question, its reference and range; the run's answer, confidence, method summary and caveats with the
    candidate statements the keyword passes mark; the same model's other passes; the work figures; the scheme's
    codes with their keys; and, with a store and user, that user's own code in force. Never the LLM's code.
    """
    from reviewer.failures.sample import run_of

    run = run_of(doc, run_id)
    q = doc["questions"][run["question"]]
    name = q["conclusion"]
    scheme = codebook().schemes[scheme_of(run)]
    view: dict[str, Any] = {
        "set": doc["id"],
        "run": run["id"],
        "scheme": scheme.name,
        "model": run["model"],
        "pass": run["pass"],
        "condition": run["condition"],
        "pair": run["pair"],
        "outcome": run.get("outcome"),
        "alteration": (doc.get("pairs") or {}).get(run["pair"]) if run["pair"] else None,
        "question": {
            "id": run["question"],
            "text": q["text"],
            "conclusion": name,
            "reference": q["reference"].get(name),
            "range": (q.get("reference_range") or {}).get(name),
            "period": q.get("period"),
            "other_fields": {  # the reference's side fields (a trend's slope, say) with their ranges
                k: {"reference": v, "range": (q.get("reference_range") or {}).get(k)}
                for k, v in q["reference"].items()
                if k != name
            },
        },
        "answer": run["conclusion"],
        "answer_fields": {k: v for k, v in (run["answer"] or {}).items() if k != name},
        "right": run["right"],
        "confidence": run.get("confidence"),
        "method": mark(run.get("method")),
        "caveats": mark(run.get("caveats")),
        "other_passes": [
            {k: o.get(k) for k in ("pass", "conclusion", "right", "confidence")} for o in run["other_passes"]
        ],
        "work": {k: run.get(k) for k in ("tool_calls", "minutes", "image_views")},
        "codes": [{"key": c.key, "code": c.code, "label": c.label, "definition": c.definition} for c in scheme.codes],
        "rule": scheme.real_event_rule,
        "my_code": None,
    }
    if store is not None and user is not None:
        mine = latest(store, doc["id"], run["id"], "expert", user)
        view["my_code"] = None if mine is None else {"code": mine["code"], "note": mine["note"]}
    return view


def alteration_text(a: dict[str, Any]) -> str:
    """What a pair altered, in words: 'terra ndvi scale x0.8 from 2018-01-01 (description)'."""
    factor = f" x{a['factor']}" if a.get("factor") is not None else ""
    when = f" from {a['from']}" if a.get("from") else ""
    when += f" to {a['to']}" if a.get("to") else ""
    why = f" ({a['description']})" if a.get("description") else ""
    return f"{a.get('satellite')} {a.get('variable')} {a.get('alteration')}{factor}{when}{why}"


def view_text(view: dict[str, Any]) -> str:
    """The view as plain text; candidate statements marked with '>>' and the passes they matched."""
    q = view["question"]
    rng = f" (range {q['range'][0]} to {q['range'][1]})" if q["range"] else ""
    lines = [
        f"{view['set']} {view['run']}: {view['model']} pass {view['pass']} ({view['condition']}"
        + (f", pair {view['pair']}, {view['outcome']}" if view["pair"] else "")
        + ")",
        *([f"altered: {alteration_text(view['alteration'])}"] if view.get("alteration") else []),
        f"question {q['id']}: {q['text']}",
        f"reference {q['conclusion']}: {json.dumps(q['reference'], ensure_ascii=False)}{rng}",
        f"answer: {json.dumps(view['answer'], ensure_ascii=False)} ({'right' if view['right'] else 'wrong'}), "
        f"confidence {view['confidence']}",
    ]
    for k, f in q["other_fields"].items():
        r = f" (range {f['range'][0]} to {f['range'][1]})" if f["range"] else ""
        lines.insert(3, f"  reference {k}: {json.dumps(f['reference'], ensure_ascii=False)}{r}")
    for k, v in view["answer_fields"].items():
        lines.append(f"  answer {k}: {json.dumps(v, ensure_ascii=False)}")
    for part in ("method", "caveats"):
        lines.append(f"{part}:")
        for s in view[part] or [{"text": "(none)", "candidate": False, "passes": {}}]:
            tag = "  >> " if s["candidate"] else "     "
            hits = "; ".join(f"{k}: {', '.join(v)}" for k, v in s["passes"].items())
            lines.append(f"{tag}{s['text']}" + (f"   [{hits}]" if hits else ""))
    for o in view["other_passes"]:
        lines.append(
            f"other pass {o['pass']}: {json.dumps(o['conclusion'], ensure_ascii=False)} "
            f"({'right' if o['right'] else 'wrong'}), confidence {o['confidence']}"
        )
    w = view["work"]
    lines.append(f"work: {w['tool_calls']} tool calls, {w['minutes']} minutes, {w['image_views']} images viewed")
    lines.append("codes: " + ", ".join(f"{c['key']} {c['code']}" for c in view["codes"]))
    if view["rule"]:
        lines.append(f"rule: {view['rule']}")
    if view["my_code"]:
        lines.append(
            f"your code: {view['my_code']['code']}"
            + (f" ({view['my_code']['note']})" if view["my_code"]["note"] else "")
        )
    return "\n".join(lines)
