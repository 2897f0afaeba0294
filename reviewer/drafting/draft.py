"""Drafting one item: the request (question, site facts, the evidence images), the structured reply checked
against schemas/draft_reply.schema.json filled for the question and against its fields, the provenance, and the
draft stored as a new item version (origin 'drafted') through the review core. Nothing is overwritten.
"""

from __future__ import annotations

import base64
import copy
import datetime as dt
import json
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jsonschema

from reviewer import SCHEMAS_DIR
from reviewer.bank.evidence import EvidenceView
from reviewer.bank.model import INSUFFICIENT
from reviewer.drafting.config import Prompt, cost_usd, prompt, settings
from reviewer.drafting.images import Image
from reviewer.errors import DraftingError
from reviewer.schemas import validate

QUADRANT_NAMES = ["north-west", "north-east", "south-west", "south-east"]
CACHED = {"type": "ephemeral"}


class InvalidReply(DraftingError):
    """The model's reply does not fit the output schema or the question's fields."""


@dataclass
class Job:
    """One item to draft: its question, evidence view, images and the request built from them."""

    key: str  # BANK/QID
    item_id: int
    version: int
    question: dict[str, Any]
    view: EvidenceView
    images: list[Image] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- the reply schema


@cache
def _base_reply_schema() -> dict[str, Any]:
    return json.loads((SCHEMAS_DIR / "draft_reply.schema.json").read_text(encoding="utf-8"))


def _field_schema(f: dict[str, Any], period: tuple[int, int]) -> dict[str, Any]:
    """One answer field's value: its type, or exactly 'insufficient evidence'."""
    t = f["type"]
    if t == "category":
        return {"type": "string", "enum": [*f["options"], INSUFFICIENT]}
    if t == "quadrant":
        return {"type": "string", "enum": [*QUADRANT_NAMES, INSUFFICIENT]}
    if t == "year":
        value = {"type": "integer", "minimum": period[0], "maximum": period[1]}
    elif t == "month":
        value = {"type": "integer", "minimum": 1, "maximum": 12}
    elif t == "years":
        value = {"type": "array", "items": {"type": "integer", "minimum": period[0], "maximum": period[1]}}
    elif t == "number":
        value = {"type": "number", "description": f"in {f['unit']}"}
    else:
        return {"type": "string", "minLength": 1}
    return {"anyOf": [value, {"type": "string", "enum": [INSUFFICIENT]}]}


def reply_schema(question: dict[str, Any]) -> dict[str, Any]:
    """draft_reply.schema.json with one required answer property per field of the question."""
    schema = copy.deepcopy(_base_reply_schema())
    period = period_years(question)
    answer = schema["properties"]["answer"]
    answer["properties"] = {f["name"]: _field_schema(f, period) for f in question["fields"]}
    answer["required"] = [f["name"] for f in question["fields"]]
    for key in ("$schema", "$id", "title", "description"):
        schema.pop(key, None)
    return schema


def period_years(question: dict[str, Any]) -> tuple[int, int]:
    return int(question["period"]["start"][:4]), int(question["period"]["end"][:4])


def check_reply(reply: Any, question: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The reply when it fits the filled schema, names every image once in order, and answers the conclusion."""
    errors = sorted(
        jsonschema.Draft202012Validator(reply_schema(question)).iter_errors(reply), key=lambda e: list(e.absolute_path)
    )
    if errors:  # every problem, so one retry can fix them all
        said = [f"{'.'.join(map(str, e.absolute_path)) or '(reply)'}: {e.message}" for e in errors[:8]]
        raise InvalidReply("; ".join(said), field=".".join(map(str, errors[0].absolute_path)) or None)
    seen = [v["image"].strip().lower() for v in reply["visible"]]
    if seen != names:
        raise InvalidReply(f"visible must describe each image in order, named {names}; got {seen}", field="visible")
    return reply


# ----------------------------------------------------------------------------- the request


def _fields_text(question: dict[str, Any]) -> str:
    lines = []
    for f in question["fields"]:
        kind = {"category": f"one of {', '.join(f.get('options', []))}", "number": f"number in {f.get('unit')}"}
        lines.append(f'- {f["name"]}: {kind.get(f["type"], f["type"])} (or "{INSUFFICIENT}")')
    return "\n".join(lines) + "\n"


def _caveats(sensors: list[str]) -> str:
    known = settings()["sensor_caveats"]
    said = [f"{s}: {known[s]}" for s in sensors if s in known]
    return " ".join(said) if said else "none recorded."


def item_text(
    question: dict[str, Any], site: dict[str, Any], view: EvidenceView, images: list[Image], p: Prompt
) -> str:
    """The per-item part of the prompt: the question, its fields, the site facts and the images' labels."""
    y0, y1 = period_years(question)
    region = {"site": "the whole site", "quadrant": f"the {view.region.quadrant} quadrant"}.get(
        view.region.kind, "the polygon " + json.dumps([list(c) for c in view.region.coordinates])
    )
    values = {
        "text": question["text"],
        "fields": _fields_text(question),
        "conclusion": question["conclusion"],
        "site_name": site.get("name", question["site"]),
        "site_id": question["site"],
        "theme": site.get("theme", "unknown"),
        "bbox": json.dumps(site.get("bbox")),
        "crs": site.get("crs", "the site CRS"),
        "resolution": site.get("resolution", "unknown"),
        "period": f"{y0}-{y1}",
        "sensors": ", ".join(question.get("sensors", [])) or "unknown",
        "caveats": _caveats(question.get("sensors", [])),
        "region": region,
        "n_images": len(images),
        "images": "\n".join(f"- {im.name}: {im.label}" for im in images),
    }
    return p.item.format(**values)


def build_params(job: Job, site: dict[str, Any], *, model: str, p: Prompt | None = None) -> dict[str, Any]:
    """The Messages API request: the fixed system text and instructions marked for prompt caching, then the images
    (each after a text block naming it) and the item's text; structured output by the filled reply schema."""
    from anthropic import transform_schema

    p = p or prompt()
    s = settings()
    content: list[dict[str, Any]] = [{"type": "text", "text": p.instructions, "cache_control": CACHED}]
    for im in job.images:
        content.append({"type": "text", "text": f"{im.name}: {im.label}"})
        content.append(
            {
                "type": "image",
                "source": {"type": "base64", "media_type": im.media_type, "data": base64.b64encode(im.data).decode()},
            }
        )
    content.append({"type": "text", "text": item_text(job.question, site, job.view, job.images, p)})
    params: dict[str, Any] = {"model": model, "max_tokens": s["max_tokens"]}
    if s["temperature"] is not None:
        params["temperature"] = s["temperature"]
    return params | {
        "system": [{"type": "text", "text": p.system, "cache_control": CACHED}],
        "messages": [{"role": "user", "content": content}],
        "output_config": {"format": {"type": "json_schema", "schema": transform_schema(reply_schema(job.question))}},
    }


def reply_of(message: Any) -> Any:
    """The JSON object of a Messages API reply (InvalidReply when it was cut off, refused or is not JSON)."""
    if message.stop_reason in ("max_tokens", "refusal"):
        raise InvalidReply(f"the reply stopped early ({message.stop_reason})", field="stop_reason")
    text = "".join(b.text for b in message.content if getattr(b, "type", None) == "text")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidReply(f"the reply is not JSON: {exc}", field="(reply)") from exc


def retry_params(params: dict[str, Any], message: Any, error: str) -> dict[str, Any]:
    """The same request followed by the invalid reply and the validation error, asking once more."""
    text = "".join(b.text for b in message.content if getattr(b, "type", None) == "text") or "(no text)"
    again = dict(params)
    again["messages"] = [
        *params["messages"],
        {"role": "assistant", "content": [{"type": "text", "text": text}]},
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": f"That reply failed validation: {error}. Reply again with one JSON object that "
                    "follows the output format and the rules above.",
                }
            ],
        },
    ]
    return again


def usage_of(message: Any) -> dict[str, int]:
    u = message.usage
    return {
        "input_tokens": int(u.input_tokens or 0),
        "output_tokens": int(u.output_tokens or 0),
        "cache_creation_input_tokens": int(getattr(u, "cache_creation_input_tokens", 0) or 0),
        "cache_read_input_tokens": int(getattr(u, "cache_read_input_tokens", 0) or 0),
    }


def add_usage(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in b}


# ----------------------------------------------------------------------------- the stored draft


@dataclass(frozen=True)
class ModelCall:
    """How a reply was obtained, for its provenance: the model, the API's request id, the token usage, the
    seconds it took, the requests made (2 when the first reply did not validate) and its batch, if any."""

    model: str
    request_id: str | None
    usage: dict[str, int]
    latency_s: float
    attempts: int
    batch_id: str | None = None


def draft_record(
    job: Job,
    reply: dict[str, Any],
    call: ModelCall,
    *,
    image_records: list[dict[str, Any]] | None = None,
    p: Prompt | None = None,
) -> dict[str, Any]:
    """The draft with its provenance, as kept in the new version's provenance.draft (checked: draft.schema.json)."""
    p = p or prompt()
    model, usage, batch_id = call.model, call.usage, call.batch_id
    prov: dict[str, Any] = {
        "model": model,
        "prompt_version": p.version,
        "prompt_sha256": p.sha256,
        "images": image_records if image_records is not None else [im.record() for im in job.images],
        "stretch": job.view.stretch.to_json(),
        "evidence": job.view.to_json(),
        "request_id": call.request_id,
        "usage": usage,
        "cost_usd": cost_usd(model, usage, batch=batch_id is not None),
        "latency_s": round(call.latency_s, 3),
        "created": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "mode": "batch" if batch_id else "messages",
        "attempts": call.attempts,
    }
    if batch_id:
        prov["batch_id"] = batch_id
    record = {"reply": reply, "provenance": prov}
    validate(record, "draft")
    return record


def drafted_question(question: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """The question of the new version: the same question with the draft in provenance.draft, the evidence view
    the draft was made from on record. The reference stays until a reviewer accepts the draft."""
    q = copy.deepcopy(question)
    q.setdefault("evidence", record["provenance"]["evidence"])
    q.setdefault("provenance", {})["draft"] = record
    q["provenance"].pop("draft_review", None)  # a new draft waits for its own review
    return q


def has_draft(question: dict[str, Any]) -> bool:
    return bool((question.get("provenance") or {}).get("draft"))


def store_draft(store: Any, job: Job, record: dict[str, Any], *, user: str) -> int:
    """The draft as a new version of the item (origin 'drafted'), in one transaction with its event; the item must
    still be at the version drafted from. Returns the new version number."""
    from reviewer.bank.io import dumps_line, record_problems
    from reviewer.review.items import add_version
    from reviewer.review.ledger import get_user, item_by_id, record_event, set_state

    actor = get_user(store, user)
    q = drafted_question(job.question, record)
    found = record_problems(q, "question")
    if found:
        raise DraftingError(f"item {job.key}: the drafted question is not valid: {found[0][0]}: {found[0][1]}")
    text = dumps_line(q, "question")
    with store.transaction():
        item = item_by_id(store, job.item_id)
        if item.version != job.version:
            raise DraftingError(f"item {job.key} changed (version {item.version}) while it was drafted: run again")
        reason = f"AI draft ({record['provenance']['model']}, prompt {record['provenance']['prompt_version']})"
        version = add_version(store, item, text, origin="drafted", created_by=actor.name, reason=reason)
        detail = {"model": record["provenance"]["model"], "request_id": record["provenance"]["request_id"]}
        if item.state in ("generated", "redraft"):  # redraft: a reviewer rejected the previous draft for this one
            set_state(store, item_by_id(store, item.id), "draft", actor.role, actor.name, detail=detail)
        else:
            record_event(store, actor.name, "redraft", bank=item.bank, item=item.id, version=version, detail=detail)
    return version


def draft_display(question: dict[str, Any], *, hide_confidence: bool = False) -> dict[str, Any] | None:
    """What the review dock shows of an item's draft (None without one): the answer, conclusion, what is visible in
    each image, alternatives, caveats, confidence (hidden in an anchoring study), model and prompt version."""
    record = (question.get("provenance") or {}).get("draft")
    if not record:
        return None
    reply, prov = record["reply"], record["provenance"]
    out = {
        "answer": reply["answer"],
        "conclusion": reply["conclusion"],
        "visible": reply["visible"],
        "alternatives": reply["alternatives"],
        "caveats": reply["caveats"],
        "confidence": None if hide_confidence else reply["confidence"],
        "model": prov["model"],
        "prompt_version": prov["prompt_version"],
        "created": prov["created"],
        "images": [im["label"] for im in prov["images"]],
    }
    return out


def store_second_opinion(store: Any, job: Job, record: dict[str, Any], *, user: str) -> None:
    """A second opinion on any item: kept in the item's event log beside its reference, never as a version (it
    replaces nothing without a reviewer's decision)."""
    from reviewer.review.ledger import get_user, item_by_id, record_event

    actor = get_user(store, user)
    with store.transaction():
        item = item_by_id(store, job.item_id)
        record_event(
            store, actor.name, "second_opinion", bank=item.bank, item=item.id, version=job.version, detail=record
        )


def item_draft(store: Any, key: str, *, user: str | None = None, bank: str | None = None) -> dict[str, Any]:
    """What the review dock shows of an item's AI drafts: the current version's draft (None without one) and the
    second opinions asked for this version, with the confidence hidden from the roles the study setting names."""
    from reviewer.review.ledger import find_item, get_user, question

    item = find_item(store, key, bank)
    role = get_user(store, user).role if user or _env_user() else None
    hide = role in settings()["study"]["hide_confidence_from"]
    q = question(store, item.id, item.version)
    rows = store.db.execute(
        "SELECT detail FROM events WHERE item = ? AND version = ? AND action = 'second_opinion' ORDER BY id",
        [item.id, item.version],
    ).fetchall()
    opinions = [draft_display({"provenance": {"draft": json.loads(r[0])}}, hide_confidence=hide) for r in rows]
    return {
        "item": item.key,
        "version": item.version,
        "draft": draft_display(q, hide_confidence=hide),
        "second_opinions": opinions,
        "confidence_hidden": hide,
    }


def _env_user() -> str | None:
    import os

    from reviewer.review.ledger import USER_ENV

    return os.environ.get(USER_ENV)
