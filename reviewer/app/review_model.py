"""The review session's rules as plain evented Python (psygnal, which napari brings): no Qt here, so every rule is
tested without a display (tests/unit/test_review_model.py), and the review dock's widgets only subscribe and call.

- `ReviewQueue`: the list a person works through, the item shown and where it stands; N / P go exactly one item
  in the list's order, also when the shown item has just left a filtered list.
- `Progress` / `progress`: what the person still has to do; an item someone else closed (adjudicated, corrected)
  counts as done for them, so the count never goes backwards when another person acts.
- `ExpertKeys`: what a key does in the expert's mode: A / R save at once with a rationale typed, else ask for it;
  Enter in the rationale field saves the verdict asked for, Esc leaves the field, 1-9 pick the reject reason.
- `after_refusal`: what a dock does once the store refused a save because someone else acted on the item meanwhile
  (another expert decided it, a maintainer reopened it): the next item, the item's new version, or stay;
  `refused_line`: the line that says it.
- `first_mode`: the mode a role opens on (the first of its queues that has work).
- `evidence_line`: what a dock says of the evidence in the viewer: the item's own, never another's as current.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from psygnal import evented

#: an annotator's verdicts that settle an item for them (a skip brings it back at the end)
DECIDED = ("accept", "flag")


@dataclass(frozen=True)
class Progress:
    """How far one person is through their queue: `left` is what they still have to do."""

    total: int
    left: int

    @property
    def done(self) -> int:
        return self.total - self.left

    def text(self) -> str:
        if not self.total:
            return "nothing assigned to you in this bank"
        if not self.left:
            return f"all {self.total} done: nothing left for you to review"
        return f"{self.done} of {self.total} done, {self.left} left"


def still_to_do(row: Mapping[str, Any]) -> bool:
    """An annotator's row (reviewer.review.api.my_items) they can still decide: open and not decided by them."""
    return bool(row.get("open")) and row.get("mine") not in DECIDED


def progress(rows: Iterable[Mapping[str, Any]]) -> Progress:
    """The annotator's progress over their rows. An item closed by someone else (an expert's correction makes a new
    version, on which the annotator has no decision) is not open any more: done for them, not undone."""
    rows = list(rows)
    return Progress(total=len(rows), left=sum(still_to_do(r) for r in rows))


@dataclass(frozen=True)
class Refusal:
    """What follows a refused save, from the person's queue as the store has it now (read after the refusal)."""

    action: str  # "next": the item left the queue; "reload": it has a new version; "stay": mend and save again
    why: str  # the words added to the dock's "NOT saved" line


def after_refusal(key: str, version: int | None, rows: Iterable[Mapping[str, Any]], typed: str = "") -> Refusal:
    """Another process may have acted on the item while it was on screen. An item gone from the person's queue (or no
    longer open for them) gives way to the next, the text they typed for it named in the line so it is not lost
    unseen; an item with a new version is shown again; otherwise it stays with what was typed, to be mended."""
    row = next((r for r in rows if r.get("item") == key), None)
    kept = f'; typed, not saved: "{typed}"' if typed else ""
    if row is None or row.get("open") is False:
        return Refusal("next", f"next item shown{kept}")
    if version is not None and row.get("version", version) != version:
        return Refusal("reload", f"shown again at its new version {row.get('version')}{kept}")
    return Refusal("stay", "")


def refused_line(verdict: str, key: str, reason: str, why: str = "") -> str:
    """A dock's line for a refused save: the verdict, the item by its id (the bank is the dock's) named once, the
    store's reason and what follows (`Refusal.why`, with what was typed). The store names the item by its whole key
    ("item BANK/ID: ..." or "item BANK/ID is accepted by fay (decision 45, 2026-12-05 02:30 UTC): an adjudicated
    item is final ..."): said once, by its id. When the item gave way (someone else settled it meanwhile) the line
    keeps the fact, who and when, and leaves the rule after it (the CLI says it): `why` says what follows instead.
    The line had named the item's whole key twice, the rule and what followed at length: 6 lines in a review dock
    at 1366 x 768, the question and the decision table squeezed to a line and a half."""
    qid, named = key.rsplit("/", 1)[-1], f"item {key}"
    if reason.startswith(f"{named} "):  # the item is the sentence's subject: "item K is accepted by fay (...): rule"
        fact = reason[len(named) + 1 :]
        line = f"NOT saved: {verdict}; {qid} {fact.split(': ', 1)[0] if why else fact}"
    else:
        line = f"NOT saved: {verdict} {qid}: {reason.removeprefix(f'{named}: ')}"
    return f"{line}; {why}" if why else line


@evented
@dataclass
class ReviewQueue:
    """The ids of the list shown, in its order, and the item shown.

    `position` is where the shown item stands (or stood, when a filter or a decision took it out of the list): N
    then goes to the item now in its place, P to the one before, so a key always moves exactly one item and
    never wraps to the list's start.
    """

    items: tuple[str, ...] = ()
    current: str | None = None
    position: int = 0

    def set_items(self, items: Sequence[str]) -> None:
        self.items = tuple(items)
        if self.current in self.items:
            self.position = self.items.index(self.current)

    def show(self, item: str | None) -> None:
        self.current = item
        if item in self.items:
            self.position = self.items.index(item)

    def neighbour(self, by: int) -> str | None:
        """The item `by` places from the one shown (held at the list's ends); None for an empty list."""
        if not self.items:
            return None
        last = len(self.items) - 1
        if self.current in self.items:
            at = self.items.index(self.current) + by
        else:  # the shown item left the list: the item now in its place is the next one
            at = self.position + (by if by < 0 else by - 1)
        return self.items[max(0, min(last, at))]

    def step(self, by: int) -> str | None:
        """Move `by` items and return the item to show (the same one at an end of the list)."""
        target = self.neighbour(by)
        if target is not None:
            self.show(target)
        return target


@dataclass(frozen=True)
class KeyAction:
    """What a key asks for: `kind` is one of save, ask_rationale, leave_field, pick_reason, correct, step, say,
    cancel, confidence, none; `verdict`, `reason`, `by` and `message` as the kind needs."""

    kind: str
    verdict: str | None = None
    reason: str | None = None
    by: int = 0
    message: str = ""


NOTHING = KeyAction("none")


@evented
@dataclass
class ExpertKeys:
    """The expert's keys (adjudication and AI-draft review). `typing`: the rationale field has the keyboard (Qt
    gives it every printable key then; only Enter and Esc reach the dock). `reasons`: the reject reasons' codes in
    the order shown (1-9 pick one)."""

    pending: str | None = None  # the verdict asked for, waiting for its rationale
    reason: str | None = None
    rationale: str = ""
    typing: bool = False
    reasons: tuple[str, ...] = ()
    needs_rationale: bool = True  # an adjudication needs one; an AI draft's review takes one if typed
    confidence: str | None = None  # the expert's low / medium / high for this item's adjudication, or not given
    levels: tuple[tuple[str, str], ...] = ()  # (key, level) pairs that set it (L / M / H); none: no confidence keys
    words: dict[str, str] = field(default_factory=dict)  # the reasons' codes -> their words, for the hints

    def reset(self, reasons: Sequence[str], words: dict[str, str] | None = None) -> None:
        """A new item: nothing pending, its own reasons (the first picked), an empty rationale, no confidence;
        `words`: what the hints call each reason (the codebook's label; its code when not given)."""
        self.words = dict(words or {})
        self.pending, self.rationale, self.reasons = None, "", tuple(reasons)
        self.reason = self.reasons[0] if self.reasons else None
        self.confidence = None

    def key(self, key: str) -> KeyAction:
        if self.typing:
            if key == "Escape":
                return KeyAction("leave_field", message=self._hint())
            if key == "Return":
                if self.pending is None:
                    return KeyAction("leave_field", message="rationale kept: now A accept, R reject or E correct")
                return self._save(self.pending)
            return NOTHING
        if key in ("A", "R"):
            return self._save("accept" if key == "A" else "reject")
        if key == "Return" and self.pending is not None:
            return self._save(self.pending)
        if key.isdigit() and key != "0":
            n = int(key)
            if n > len(self.reasons):
                return KeyAction("say", message=f"no reject reason {n} (1-{len(self.reasons)})")
            self.reason = self.reasons[n - 1]
            said = self.words.get(self.reason, self.reason)
            return KeyAction("pick_reason", reason=self.reason, message=f"reject reason: {said} (R rejects)")
        if key == "E":
            return KeyAction("correct")
        level = dict(self.levels).get(key)
        if level is not None:  # the same key again takes it back (not given)
            self.confidence = None if self.confidence == level else level
            said = (
                f"confidence: {self.confidence} (saved with the adjudication)" if self.confidence else "no confidence"
            )
            return KeyAction("confidence", message=said)
        if key in ("N", "P"):
            return KeyAction("step", by=1 if key == "N" else -1)
        if key == "Escape" and self.pending is not None:
            self.pending = None
            return KeyAction("cancel", message="nothing saved")
        return NOTHING

    def _save(self, verdict: str) -> KeyAction:
        reason = self.reason if verdict == "reject" else None
        if verdict == "reject" and reason is None:
            return KeyAction("say", message="no reject reason to pick for this item")
        if self.needs_rationale and not self.rationale.strip():
            self.pending = verdict
            return KeyAction("ask_rationale", verdict=verdict, reason=reason, message=self._hint())
        self.pending = None
        return KeyAction("save", verdict=verdict, reason=reason)

    def _hint(self) -> str:
        if self.pending is None:
            return "A accept, R reject (1-9 pick the reason), E correct"
        said = self.words.get(self.reason or "", self.reason)
        what = self.pending + (f" ({said})" if self.pending == "reject" else "")
        return f"{what}: type the rationale, Enter saves, Esc leaves the field"


@dataclass
class QueueWork:
    """How much each of a person's modes has waiting, to choose the one they open on."""

    annotate: int | None = None  # None: the role has no such mode
    adjudicate: int | None = None
    maintain: bool = False
    order: tuple[str, ...] = field(default=("annotate", "adjudicate"))


def first_mode(work: QueueWork) -> str | None:
    """The mode a person opens on: the first of their queues with work in it; a maintainer's own dock when they
    have no queue with work; else the first mode they have."""
    have = [m for m in work.order if getattr(work, m) is not None]
    for mode in have:
        if getattr(work, mode):
            return mode
    if work.maintain:
        return "maintain"
    return have[0] if have else None


@dataclass(frozen=True)
class EvidenceFocus:
    """Where an item's evidence opens: the year the canvas shows first and the pair of years compared, both on
    the dates the question turns on (never simply the stack's first date)."""

    year: int | None
    pair: tuple[str, str] | None


def evidence_focus(question: Mapping[str, Any], view: Any) -> EvidenceFocus:
    """The dates the question turns on. A view with dates or two periods names them (its last one opens: the
    'after'); else the year a year-valued reference names (the event a 'when did ...' question asks about: the pair
    is the year before and that year); else the question's period, opening on its last year, the pair its first
    and last year."""
    period = _question_span(question, view)
    if view.dates:
        return EvidenceFocus(None, None)  # the view's own dates (its pair, its last date opens)
    if len(view.periods) >= 2:
        return EvidenceFocus(int(view.periods[-1][0]), None)
    reference = question.get("reference") or {}
    for f in question.get("fields") or []:
        value = reference.get(f.get("name"))
        if f.get("type") == "year" and isinstance(value, int) and (period is None or period[0] <= value <= period[1]):
            before = max(value - 1, period[0]) if period else value - 1
            return EvidenceFocus(value, (str(before), str(value)) if before != value else None)
    if period is None:
        return EvidenceFocus(None, None)
    return EvidenceFocus(period[1], (str(period[0]), str(period[1])) if period[0] != period[1] else None)


def _question_span(question: Mapping[str, Any], view: Any) -> tuple[int, int] | None:
    if view.periods:
        years = [int(y) for p in view.periods for y in p]
        return min(years), max(years)
    p = question.get("period") or {}
    try:
        return int(str(p["start"])[:4]), int(str(p["end"])[:4])
    except (KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class EvidenceLine:
    """What a dock says of the evidence in the viewer for the item it shows: `state` opening / shown / failed."""

    state: str
    text: str


def evidence_line(item: str | None, evidence: Any, *, site: str | None = None) -> EvidenceLine:
    """The line for `item` (the one the dock shows) from the item pipeline's state (`evidence`: its `item`, `status`
    loading / shown / failed and `reason`, as `item_pipeline.ItemEvidence` holds them). Evidence is always the
    item's: while the pipeline holds another item (the one before, still on screen while this one is asked for or
    prepared), the line says this item's evidence is opening, never "evidence of" the other one (the failures dock
    had said "evidence of demo-core-seed0-18" while another run's question was loading)."""
    opening = EvidenceLine("opening", f"evidence: opening {site or item} ...")
    if item is None or evidence.item != item:
        return opening
    if evidence.status == "failed":
        return EvidenceLine("failed", f"evidence: {evidence.reason}")
    if evidence.status == "shown":
        return EvidenceLine("shown", f"evidence of {item} in the viewer")
    return opening
