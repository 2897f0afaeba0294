"""LLM pre-coding of a coding set through the drafting machinery: a proposed code, its quote, an uncertain flag.

The client is reviewer.drafting.config.make_client (the key from ANTHROPIC_API_KEY or the keyring, never stored),
each request goes through reviewer.drafting.run.call (retries honouring retry-after, 401/403 and offline stop the
job), an invalid reply is asked for once more with the error (drafting.draft.retry_params). Workers only call the
API; every code is written on the calling thread with its event, so a stopped job keeps what it finished and a
second run skips the runs coded already (resume). Provenance: model, prompt version and sha256, codebook sha256,
request id, tokens, cost, attempts.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

from reviewer.drafting.config import Prompt, load_prompt
from reviewer.errors import Cancelled, DraftingError, ReviewerError
from reviewer.failures.codebook import FAILURES_DIR, codebook, mark
from reviewer.failures.coding import FailureCode, insert_code, latest, require_role, scheme_of

PROMPT_FILE = "precode-1.json"
#: codes whose meaning is that the report has nothing to quote
NO_QUOTE = frozenset({"nothing"})


@cache
def prompt() -> Prompt:
    """assets/failures/precode-1.json, validated, with the sha256 of its bytes for the provenance."""
    return load_prompt(FAILURES_DIR / PROMPT_FILE, "failure_prompt")


def reply_schema(scheme: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["code", "quote", "uncertain", "why"],
        "additionalProperties": False,
        "properties": {
            "code": {"type": "string", "enum": list(codebook().schemes[scheme].names)},
            "quote": {"type": "string"},
            "uncertain": {"type": "boolean"},
            "why": {"type": "string"},
        },
    }


def item_text(doc: dict[str, Any], run: dict[str, Any]) -> str:
    scheme = codebook().schemes[scheme_of(run)]
    q = doc["questions"][run["question"]]
    name = q["conclusion"]
    rng = (q.get("reference_range") or {}).get(name)
    cands = [s["text"] for part in ("method", "caveats") for s in mark(run.get(part)) if s["candidate"]]
    return prompt().item.format(
        scheme_label=scheme.label,
        scheme_question=scheme.question,
        codes="\n".join(f"- {c.code}: {c.definition}. Example: {c.example}" for c in scheme.codes),
        rule=f"Rule: {scheme.real_event_rule}" if scheme.real_event_rule else "",
        question=q["text"],
        conclusion=name,
        reference=json.dumps(q["reference"].get(name), ensure_ascii=False),
        range=f" (accepted range {rng[0]} to {rng[1]})" if rng else "",
        answer=json.dumps(run["conclusion"], ensure_ascii=False),
        verdict="right" if run["right"] else "wrong",
        outcome=f"; on the altered version of pair {run['pair']} ({run.get('outcome')})" if run["pair"] else "",
        method=run.get("method") or "(none)",
        caveats=run.get("caveats") or "(none)",
        candidates="\n".join(f"- {c}" for c in cands) or "(none)",
    )


def build_params(doc: dict[str, Any], run: dict[str, Any], *, model: str) -> dict[str, Any]:
    """The Messages API request: fixed system text and instructions cached, the run's text, structured output."""
    from anthropic import transform_schema

    from reviewer.drafting.draft import CACHED

    p = prompt()
    content = [
        {"type": "text", "text": p.instructions, "cache_control": CACHED},
        {"type": "text", "text": item_text(doc, run)},
    ]
    return {
        "model": model,
        "max_tokens": 1024,
        "system": [{"type": "text", "text": p.system, "cache_control": CACHED}],
        "messages": [{"role": "user", "content": content}],
        "output_config": {"format": {"type": "json_schema", "schema": transform_schema(reply_schema(scheme_of(run)))}},
    }


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def check_reply(reply: Any, run: dict[str, Any]) -> dict[str, Any]:
    """The reply, or InvalidReply naming every problem: a code of the run's scheme, a quote found in the run's
    method summary or caveats (empty only for a code that means there is nothing to quote), a boolean flag."""
    from reviewer.drafting.draft import InvalidReply

    if not isinstance(reply, dict):
        raise InvalidReply("the reply is not a JSON object", field="(reply)")
    problems = []
    scheme = codebook().schemes[scheme_of(run)]
    code = reply.get("code")
    if code not in scheme.names:
        problems.append(f"code {code!r} is not one of {', '.join(scheme.names)}")
    quote = reply.get("quote")
    if not isinstance(quote, str):
        problems.append("quote must be a string")
    elif quote.strip() and _norm(quote.strip(" .\u2026\"'")) not in _norm(
        f"{run.get('method') or ''} {run.get('caveats') or ''}"
    ):
        problems.append("quote is not a passage of the run's method summary or caveats")
    elif not quote.strip() and code not in NO_QUOTE:
        problems.append(f"quote is empty, but code {code!r} needs a supporting passage")
    if not isinstance(reply.get("uncertain"), bool):
        problems.append("uncertain must be true or false")
    if problems:
        raise InvalidReply("; ".join(problems), field="(reply)")
    return {"code": code, "quote": quote.strip(), "uncertain": reply["uncertain"], "why": str(reply.get("why", ""))}


def precode_one(client: Any, doc: dict[str, Any], run: dict[str, Any], *, model: str, cancel: threading.Event) -> dict:
    """Request, check, ask once more with the error if invalid: the checked reply with its provenance."""
    from reviewer.drafting import draft as D
    from reviewer.drafting.config import cost_usd
    from reviewer.drafting.run import call

    params = build_params(doc, run, model=model)
    message = call(client, params, cancel)
    usage, attempts = D.usage_of(message), 1
    try:
        reply = check_reply(D.reply_of(message), run)
    except D.InvalidReply as first:
        message = call(client, D.retry_params(params, message, str(first)), cancel)
        usage, attempts = D.add_usage(usage, D.usage_of(message)), 2
        try:
            reply = check_reply(D.reply_of(message), run)
        except D.InvalidReply as second:
            raise D.InvalidReply(f"invalid twice: {first}; then {second}") from second
    p = prompt()
    reply["provenance"] = {
        "model": model,
        "prompt_version": p.version,
        "prompt_sha256": p.sha256,
        "codebook_sha256": codebook().sha256,
        "request_id": getattr(message, "_request_id", None),
        "usage": usage,
        "cost_usd": cost_usd(model, usage),
        "attempts": attempts,
        "why": reply.pop("why"),
    }
    return reply


def precode_set(
    store: Any,
    doc: dict[str, Any],
    client: Any,
    *,
    user: str | None,
    model: str | None = None,
    concurrency: int | None = None,
    redo: bool = False,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """Pre-code every run of the set that has no LLM code yet (all with `redo`); a summary with one outcome per
    run: precoded, skipped, invalid, failed or not_done (after a stop or cancel: run again to resume)."""
    from reviewer.drafting.config import settings
    from reviewer.drafting.run import Stop

    actor = require_role(store, user, codebook().precoders, "pre-code failure steps")
    model = model or settings()["model"]
    cancel = cancel or threading.Event()
    outcomes: list[dict[str, Any]] = []
    todo = []
    for run in doc["runs"]:
        if not redo and latest(store, doc["id"], run["id"], "llm") is not None:
            outcomes.append({"run": run["id"], "status": "skipped", "message": "pre-coded already"})
        else:
            todo.append(run)
    stopped = None
    workers = max(1, concurrency or settings()["concurrency"])
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [(run, pool.submit(precode_one, client, doc, run, model=model, cancel=cancel)) for run in todo]
        for run, fut in futures:  # in set order, on this thread: every store write happens here
            try:
                try:
                    r = fut.result()
                except KeyboardInterrupt:
                    cancel.set()  # the requests in flight end at their next attempt; what was stored is kept
                    raise
            except Stop as exc:
                stopped = stopped or str(exc)
                cancel.set()
                outcomes.append({"run": run["id"], "status": "not_done", "message": str(exc)})
                continue
            except Cancelled:
                outcomes.append({"run": run["id"], "status": "not_done", "message": "cancelled: run again to resume"})
                continue
            except DraftingError as exc:
                status = "invalid" if type(exc).__name__ == "InvalidReply" else "failed"
                outcomes.append({"run": run["id"], "status": status, "message": str(exc)})
                continue
            except ReviewerError as exc:
                outcomes.append({"run": run["id"], "status": "failed", "message": str(exc)})
                continue
            entry = FailureCode(
                r["code"], "llm", model, quote=r["quote"] or None, uncertain=r["uncertain"], provenance=r["provenance"]
            )
            insert_code(store, doc["id"], run, entry, event_user=actor.name)
            outcomes.append({"run": run["id"], "status": "precoded", "message": r["code"]})
    counts = {
        s: sum(o["status"] == s for o in outcomes) for s in ("precoded", "skipped", "invalid", "failed", "not_done")
    }
    return {"set": doc["id"], "model": model, **counts, "stopped": stopped, "runs": outcomes}
