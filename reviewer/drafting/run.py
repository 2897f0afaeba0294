"""Drafting a bank's items: which items, concurrency, retries, resume, cancel, and Message Batches.

Worker threads render an item's evidence and call the API; every store write happens on the calling thread, one
transaction per draft, so a cancelled or stopped job keeps every draft it finished and a second run skips them
(resume). 429 (honouring retry-after), 529, other retryable statuses and timeouts are retried with exponential
backoff; 401/403 and a connection failure (offline) stop the whole job at once with one clear message. A batch job
is recorded in the store's event log when sent, so a later run collects it instead of sending it again.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from reviewer.bank.evidence import evidence_for
from reviewer.drafting import draft as D
from reviewer.drafting.config import HOW_TO_SET_KEY, settings
from reviewer.drafting.images import Image, render_evidence
from reviewer.drafting.options import DraftOptions
from reviewer.errors import Cancelled, DraftingError, ReviewerError

logger = logging.getLogger(__name__)

DRAFTABLE_STATES = ("generated", "drafted", "redraft")
Progress = Callable[[int, int, str], None]


class Stop(DraftingError):
    """The job cannot go on (the key was refused, or the API cannot be reached): nothing more is sent."""


@dataclass
class Outcome:
    key: str
    status: str  # drafted | skipped | invalid | failed | not_done
    message: str = ""
    version: int | None = None
    cost_usd: float | None = None
    usage: dict[str, int] = field(default_factory=dict)


@dataclass
class Summary:
    bank: str
    outcomes: list[Outcome] = field(default_factory=list)
    stopped: str | None = None
    cancelled: bool = False
    batch_id: str | None = None
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    def to_json(self) -> dict[str, Any]:
        cost = [o.cost_usd for o in self.outcomes if o.cost_usd is not None]
        return {
            "bank": self.bank,
            "drafted": self.count("drafted"),
            "skipped": self.count("skipped"),
            "invalid": self.count("invalid"),
            "failed": self.count("failed"),
            "not_done": self.count("not_done"),
            "cost_usd": round(sum(cost), 6) if cost else 0.0,
            "stopped": self.stopped,
            "cancelled": self.cancelled,
            "batch_id": self.batch_id,
            "seconds": round(self.seconds, 2),
            "items": [o.__dict__ for o in self.outcomes],
        }


# ----------------------------------------------------------------------------- calling the API


def _retry_after(exc: Any) -> float | None:
    """Seconds the server asked to wait (retry-after-ms, then retry-after), if it said."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


def call(client: Any, params: dict[str, Any], cancel: threading.Event, *, what: str = "messages.create") -> Any:
    """One API request with the settings' retry policy; returns the response (raises Stop, Cancelled or
    DraftingError)."""
    import anthropic

    policy = settings()["retry"]
    last = ""
    for attempt in range(1, policy["max_attempts"] + 1):
        if cancel.is_set():
            raise Cancelled("cancelled")
        wait_s: float | None = None
        try:
            if what == "messages.create":
                return client.messages.create(**params)
            return getattr(client.messages.batches, what)(**params)
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
            raise Stop(f"the Anthropic API refused the key ({exc.status_code}): {HOW_TO_SET_KEY}") from exc
        except anthropic.APITimeoutError:
            last = "the request timed out"
        except anthropic.APIConnectionError as exc:
            raise Stop(f"cannot reach the Anthropic API (offline?): {exc}") from exc
        except anthropic.APIStatusError as exc:
            if exc.status_code not in policy["statuses"]:
                raise DraftingError(f"the API answered {exc.status_code}: {exc.message}") from exc
            last = f"the API answered {exc.status_code}"
            wait_s = _retry_after(exc)
        if attempt == policy["max_attempts"]:
            break
        if wait_s is None:
            wait_s = min(policy["backoff_max_s"], policy["backoff_s"] * 2 ** (attempt - 1))
        logger.info("%s: %s; retrying in %.1f s (attempt %d)", what, last, wait_s, attempt + 1)
        if cancel.wait(wait_s):
            raise Cancelled("cancelled")
    raise DraftingError(f"gave up after {policy['max_attempts']} attempts: {last}")


def draft_one(
    client: Any, job: D.Job, site: dict[str, Any], index: Any, *, model: str, cancel: threading.Event
) -> dict:
    """Render, request, check (one more request with the validation error if the reply is invalid): the draft
    record. InvalidReply when the second reply fails too; it is never stored."""
    limits = settings()["images"]
    job.images = render_evidence(index, job.view, D.period_years(job.question), limits)
    job.params = D.build_params(job, site, model=model)
    t0 = time.perf_counter()
    message = call(client, job.params, cancel)
    usage, attempts = D.usage_of(message), 1
    names = [im.name for im in job.images]
    try:
        reply = D.check_reply(D.reply_of(message), job.question, names)
    except D.InvalidReply as first:
        if settings()["validation_retries"] < 1:
            raise
        message = call(client, D.retry_params(job.params, message, str(first)), cancel)
        usage, attempts = D.add_usage(usage, D.usage_of(message)), 2
        try:
            reply = D.check_reply(D.reply_of(message), job.question, names)
        except D.InvalidReply as second:
            raise D.InvalidReply(f"invalid twice: {first}; then {second}", field=second.field) from second
    request_id = getattr(message, "_request_id", None)  # the anthropic SDK's documented request id attribute
    return D.draft_record(job, reply, D.ModelCall(model, request_id, usage, time.perf_counter() - t0, attempts))


# ----------------------------------------------------------------------------- choosing and preparing items


def select(
    store: Any, bank: str, which: list[str] | None, *, redraft: bool, second_opinion: bool = False
) -> tuple[list[Any], list[Outcome]]:
    """The items to draft: 'visual' (default: visual-reference items), 'all', 'rejected' (the items whose draft a
    reviewer rejected for a new one: state redraft), or item ids; already drafted ones are skipped unless redraft
    (resume), an item waiting for a redraft never is, and items past drafting (under review or decided, or waiting
    for a reference set by hand) are never drafted. A second opinion may be asked for any item in any state."""
    from reviewer.review.ledger import find_item, items_of, question

    which = which or ["visual"]
    if which == ["visual"]:
        items = [i for i in items_of(store, bank) if i.reference_source == "visual"]
    elif which == ["all"]:
        items = items_of(store, bank)
    elif which == ["rejected"]:
        items = items_of(store, bank, state="redraft")
    else:
        items = [find_item(store, k, bank) for k in which]
    todo, skipped = [], []
    for item in items:
        if second_opinion:
            todo.append(item)
        elif item.state not in DRAFTABLE_STATES:
            skipped.append(Outcome(item.key, "skipped", f"{item.state}: only generated or drafted items are drafted"))
        elif not redraft and item.state != "redraft" and D.has_draft(question(store, item.id, item.version)):
            skipped.append(Outcome(item.key, "skipped", f"drafted already (version {item.version})"))
        else:
            todo.append(item)
    return todo, skipped


class Sites:
    """Site records (bank_sites rows) and their scene indexes, by site id, opened once on the calling thread."""

    def __init__(self, store: Any, bank: str, folders: dict[str, str] | None = None) -> None:
        self.store, self.bank, self.folders = store, bank, dict(folders or {})
        self._index: dict[str, Any] = {}

    def record(self, site_id: str) -> dict[str, Any]:
        row = self.store.db.execute(
            "SELECT json FROM bank_sites WHERE bank = ? AND id = ? ORDER BY version DESC LIMIT 1", [self.bank, site_id]
        ).fetchone()
        return json.loads(row[0]) if row else {"id": site_id}

    def index(self, site_id: str) -> Any:
        if site_id not in self._index:
            from reviewer.record.scan import open_index

            folder = self.folders.get(site_id)
            if folder is None:
                row = self.store.db.execute(
                    "SELECT site_dir FROM sites WHERE site_id = ? ORDER BY scanned_at DESC LIMIT 1", [site_id]
                ).fetchone()
                if row is None:
                    raise DraftingError(
                        f"no record of site {site_id} in the store: scan it (`reviewer scan SITE_DIR`) or pass --site"
                    )
                folder = row[0]
            self._index[site_id] = open_index(folder, store=self.store)
        return self._index[site_id]


def job_of(store: Any, item: Any, sites: Sites) -> D.Job:
    from reviewer.review.ledger import question

    q = question(store, item.id, item.version)
    bbox = sites.record(q["site"]).get("bbox")
    return D.Job(item.key, item.id, item.version, q, evidence_for(q, site_bbox=tuple(bbox) if bbox else None))


# ----------------------------------------------------------------------------- the job


def require_drafter(store: Any, user: str | None) -> Any:
    """The user, when their role may draft (the workflow's `draft` transition names the roles)."""
    from reviewer.review.ledger import get_user
    from reviewer.review.rules import workflow

    actor = get_user(store, user)
    workflow().target("draft", "generated", actor.role)
    return actor


def draft_bank(
    store: Any,
    bank: str,
    client: Any,
    options: DraftOptions | None = None,
    *,
    user: str,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Summary:
    """Draft the chosen items of a bank with `options.concurrency` requests in flight (reviewer.drafting.options;
    the defaults when None); see the module docstring. With second_opinion the drafts go to the items' event logs
    (D.store_second_opinion), not into new versions."""
    opts = options or DraftOptions()
    actor = require_drafter(store, user)
    model = opts.model or settings()["model"]
    cancel = cancel or threading.Event()
    t0 = time.perf_counter()
    todo, skipped = select(store, bank, list(opts.which), redraft=opts.redraft, second_opinion=opts.second_opinion)
    summary = Summary(bank, list(skipped))
    sites = Sites(store, bank, dict(opts.site_folders))
    keep = D.store_second_opinion if opts.second_opinion else D.store_draft
    total, done = len(todo), 0
    pending: dict[Future, D.Job] = {}
    queue = list(todo)
    in_flight = max(1, opts.concurrency or settings()["concurrency"])
    with ThreadPoolExecutor(max_workers=in_flight) as pool:
        try:
            while queue or pending:
                while queue and len(pending) < in_flight and not cancel.is_set():
                    item = queue.pop(0)
                    try:
                        job = job_of(store, item, sites)
                        index = sites.index(job.question["site"])
                    except ReviewerError as exc:
                        summary.outcomes.append(Outcome(item.key, "failed", str(exc)))
                        done += 1
                        continue
                    site = sites.record(job.question["site"])
                    pending[pool.submit(draft_one, client, job, site, index, model=model, cancel=cancel)] = job
                if not pending:
                    break
                finished, _ = wait(list(pending), timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in finished:
                    job = pending.pop(fut)
                    done += 1
                    summary.outcomes.append(
                        _finish(store, fut, job, user=actor.name, summary=summary, cancel=cancel, keep=keep)
                    )
                    if progress is not None:
                        progress(done, total, f"{job.key}: {summary.outcomes[-1].status}")
                if cancel.is_set() and not pending:
                    break
        except KeyboardInterrupt:
            cancel.set()
            summary.cancelled = True
            for fut in list(pending):
                fut.cancel()
            for fut, job in pending.items():  # the requests in flight end quickly: their drafts are kept
                if not fut.cancelled():
                    summary.outcomes.append(
                        _finish(store, fut, job, user=actor.name, summary=summary, cancel=cancel, keep=keep)
                    )
            pending.clear()
    for item in queue:
        summary.outcomes.append(Outcome(item.key, "not_done", "not sent (stopped or cancelled): run again to resume"))
    summary.cancelled = summary.cancelled or (cancel.is_set() and summary.stopped is None)
    summary.seconds = time.perf_counter() - t0
    return summary


def _finish(
    store: Any, fut: Future, job: D.Job, *, user: str, summary: Summary, cancel: threading.Event, keep: Any
) -> Outcome:
    """Store a finished request's draft (on this thread), or say why there is none; a Stop stops the job."""
    try:
        record = fut.result()
    except Stop as exc:
        summary.stopped = summary.stopped or str(exc)
        cancel.set()
        return Outcome(job.key, "not_done", str(exc))
    except Cancelled:
        return Outcome(job.key, "not_done", "cancelled: run again to resume")
    except D.InvalidReply as exc:
        return Outcome(job.key, "invalid", f"the model's reply did not validate: {exc}")
    except ReviewerError as exc:
        return Outcome(job.key, "failed", str(exc))
    try:
        version = keep(store, job, record, user=user)
    except ReviewerError as exc:
        return Outcome(job.key, "failed", str(exc))
    prov = record["provenance"]
    return Outcome(job.key, "drafted", "", version, prov["cost_usd"], prov["usage"])


# ----------------------------------------------------------------------------- Message Batches


def _open_batch(store: Any, bank: str) -> dict[str, Any] | None:
    """The last batch sent for this bank whose results were not collected yet (from the event log)."""
    rows = store.db.execute(
        "SELECT action, detail FROM events WHERE bank = ? AND item IS NULL AND action IN "
        "('draft_batch_sent', 'draft_batch_collected') ORDER BY id",
        [bank],
    ).fetchall()
    open_: dict[str, dict] = {}
    for action, detail in rows:
        d = json.loads(detail)
        if action == "draft_batch_sent":
            open_[d["batch_id"]] = d
        else:
            open_.pop(d["batch_id"], None)
    return list(open_.values())[-1] if open_ else None


def draft_bank_batch(
    store: Any,
    bank: str,
    client: Any,
    options: DraftOptions | None = None,
    *,
    user: str,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Summary:
    """The same job through the Message Batches API (half the price): send one batch (or collect the one a
    previous run sent), poll it every `options.poll_s` until it ended, store each succeeded draft; the rest are
    drafted on the next run. A second opinion goes through the Messages API only (draft_bank)."""
    from reviewer.review.ledger import record_event

    opts = options or DraftOptions()
    opts.check_batch()
    actor = require_drafter(store, user)
    model = opts.model or settings()["model"]
    cancel = cancel or threading.Event()
    poll_s = settings()["batch"]["poll_s"] if opts.poll_s is None else opts.poll_s
    t0 = time.perf_counter()
    sent = _open_batch(store, bank)
    summary = Summary(bank)
    if sent is None:
        todo, skipped = select(store, bank, list(opts.which), redraft=opts.redraft)
        summary.outcomes += skipped
        if not todo:
            summary.seconds = time.perf_counter() - t0
            return summary
        sites = Sites(store, bank, dict(opts.site_folders))
        requests, meta = [], {}
        for item in todo:
            try:
                job = job_of(store, item, sites)
                index = sites.index(job.question["site"])
                job.images = render_evidence(index, job.view, D.period_years(job.question), settings()["images"])
            except ReviewerError as exc:
                summary.outcomes.append(Outcome(item.key, "failed", str(exc)))
                continue
            custom_id = f"item{item.id}-v{item.version}"
            requests.append(
                {"custom_id": custom_id, "params": D.build_params(job, sites.record(job.question["site"]), model=model)}
            )
            meta[custom_id] = {
                "key": item.key,
                "item_id": item.id,
                "version": item.version,
                "images": [im.record() for im in job.images],
                "evidence": job.view.to_json(),
            }
        if not requests:
            summary.seconds = time.perf_counter() - t0
            return summary
        batch = call(client, {"requests": requests}, cancel, what="create")
        sent = {"batch_id": batch.id, "model": model, "requests": meta, "sent": time.time()}
        with store.transaction():
            record_event(store, actor.name, "draft_batch_sent", bank=bank, detail=sent)
    summary.batch_id = sent["batch_id"]
    total = len(sent["requests"])
    while True:
        batch = call(client, {"message_batch_id": sent["batch_id"]}, cancel, what="retrieve")
        c = batch.request_counts
        if progress is not None:
            progress(c.succeeded + c.errored + c.canceled + c.expired, total, f"batch {batch.processing_status}")
        if batch.processing_status == "ended":
            break
        if cancel.wait(poll_s):
            summary.cancelled = True
            summary.outcomes += [
                Outcome(m["key"], "not_done", f"batch {sent['batch_id']} still running: run again")
                for m in sent["requests"].values()
            ]
            summary.seconds = time.perf_counter() - t0
            return summary
    _collect(store, client, sent, summary, user=actor.name, cancel=cancel)
    with store.transaction():
        record_event(
            store,
            actor.name,
            "draft_batch_collected",
            bank=bank,
            detail={"batch_id": sent["batch_id"], **summary.to_json()} | {"items": None},
        )
    summary.seconds = time.perf_counter() - t0
    return summary


def _collect(
    store: Any, client: Any, sent: dict[str, Any], summary: Summary, *, user: str, cancel: threading.Event
) -> None:
    """Store every succeeded result of an ended batch; others are reported (and drafted again on the next run)."""
    from reviewer.review.ledger import item_by_id, question

    results = call(client, {"message_batch_id": sent["batch_id"]}, cancel, what="results")
    seen = set()
    for entry in results:
        meta = sent["requests"].get(entry.custom_id)
        if meta is None:
            continue
        seen.add(entry.custom_id)
        result = entry.result
        if result.type != "succeeded":
            summary.outcomes.append(Outcome(meta["key"], "not_done", f"batch request {result.type}: run again"))
            continue
        item = item_by_id(store, meta["item_id"])
        q = question(store, item.id, meta["version"])
        job = D.Job(meta["key"], item.id, meta["version"], q, evidence_for(q))
        from reviewer.bank.evidence import EvidenceView

        job.view = EvidenceView.from_json(meta["evidence"])
        job.images = [
            Image(r["name"], r["label"], b"", r["width"], r["height"], r["media_type"]) for r in meta["images"]
        ]
        message = result.message
        try:
            reply = D.check_reply(D.reply_of(message), q, [r["name"] for r in meta["images"]])
            usage = D.usage_of(message)
            made = D.ModelCall(sent["model"], message.id, usage, time.time() - sent["sent"], 1, sent["batch_id"])
            record = D.draft_record(job, reply, made, image_records=meta["images"])
            version = D.store_draft(store, job, record, user=user)
        except D.InvalidReply as exc:
            summary.outcomes.append(Outcome(meta["key"], "invalid", f"the model's reply did not validate: {exc}"))
            continue
        except ReviewerError as exc:
            summary.outcomes.append(Outcome(meta["key"], "failed", str(exc)))
            continue
        summary.outcomes.append(Outcome(meta["key"], "drafted", "", version, record["provenance"]["cost_usd"], usage))
    for cid, meta in sent["requests"].items():
        if cid not in seen:
            summary.outcomes.append(Outcome(meta["key"], "not_done", "no result in the batch: run again"))
