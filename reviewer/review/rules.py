"""The review rules as data: item states, legal transitions and roles (workflow.json), reason codes
(codebook.json), the quality models' settings, routing thresholds and confidence levels (quality.json). All are
validated on load; code asks these objects and never copies a rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from reviewer import ASSETS_DIR
from reviewer.errors import ReviewError, SchemaError

#: the review rules kept as data (DESIGN.md section 3: codebooks live in assets/)
RULES_DIR = ASSETS_DIR / "review"
ROLES = ("annotator", "expert", "maintainer")


@dataclass(frozen=True)
class Transition:
    action: str
    sources: frozenset[str]
    target: str
    roles: frozenset[str]
    needs_reason: bool
    why: str


@dataclass(frozen=True)
class Workflow:
    states: dict[str, str]
    final: frozenset[str]
    transitions: dict[str, Transition]
    permissions: dict[str, frozenset[str]]

    def target(self, action: str, state: str, role: str, *, item: str = "", reason: str | None = None) -> str:
        """The state `action` leads to from `state`, or ReviewError naming the item and the rule."""
        t = self.transitions[action]
        where = f"item {item}: " if item else ""
        if role not in t.roles:
            raise ReviewError(f"{where}{action} is for {' or '.join(sorted(t.roles))}, not {role} ({t.why})")
        if state not in t.sources:
            raise ReviewError(
                f"{where}cannot {action.replace('_', ' ')} an item that is {state} "
                f"(allowed from: {', '.join(sorted(t.sources))})"
            )
        if t.needs_reason and not (reason and reason.strip()):
            raise ReviewError(f"{where}{action} needs a reason")
        return t.target

    def allowed(self, permission: str, role: str) -> bool:
        return role in self.permissions[permission]

    def require(self, permission: str, role: str, user: str) -> None:
        if not self.allowed(permission, role):
            who = " or ".join(sorted(self.permissions[permission]))
            raise ReviewError(f"user {user} is {role}: only {who} may {permission.replace('_', ' ')}")


@dataclass(frozen=True)
class Reason:
    code: str
    label: str
    definition: str
    example: str
    roles: tuple[str, ...] = ROLES
    route: str | None = None  # draft reject reasons: redraft | manual

    def for_role(self, role: str | None) -> bool:
        return role is None or role in self.roles


@dataclass(frozen=True)
class Codebook:
    flag_reasons: tuple[Reason, ...]
    reject_reasons: tuple[Reason, ...]
    draft_reject_reasons: tuple[Reason, ...] = ()

    def flag_codes(self, role: str | None = None) -> list[str]:
        """The flag reasons a role may give (all of them when role is None)."""
        return [r.code for r in self.flag_reasons if r.for_role(role)]

    def check_flags(self, codes: list[str], *, item: str = "", role: str | None = None) -> list[str]:
        return _check_codes(codes, self.flag_codes(role), "flag reason", item)

    def check_reject(self, codes: list[str], *, item: str = "") -> list[str]:
        return _check_codes(codes, [r.code for r in self.reject_reasons], "reject reason", item)

    def draft_reason(self, code: str, *, item: str = "") -> Reason:
        """The draft reject reason of that code (its route says where the item goes), or ReviewError."""
        (code,) = _check_codes(
            [code] if code else [], [r.code for r in self.draft_reject_reasons], "draft reject reason", item
        )
        return next(r for r in self.draft_reject_reasons if r.code == code)

    def as_dict(self, role: str | None = None) -> dict[str, Any]:
        """The reasons a role may give, with their definitions and examples."""

        def public(r: Reason) -> dict[str, Any]:
            return {k: v for k, v in r.__dict__.items() if k != "roles" and not (k == "route" and v is None)}

        return {
            "flag_reasons": [public(r) for r in self.flag_reasons if r.for_role(role)],
            "reject_reasons": [public(r) for r in self.reject_reasons if r.for_role(role)],
            "draft_reject_reasons": [public(r) for r in self.draft_reject_reasons if r.for_role(role)],
        }


def _check_codes(codes: list[str], known: list[str], kind: str, item: str) -> list[str]:
    where = f"item {item}: " if item else ""
    if not codes:
        raise ReviewError(f"{where}give at least one {kind} ({', '.join(known)})")
    unknown = [c for c in codes if c not in known]
    if unknown:
        raise ReviewError(f"{where}unknown {kind} {unknown[0]!r} (the codebook has: {', '.join(known)})")
    return list(dict.fromkeys(codes))


def load_checked(name: str) -> dict[str, Any]:
    """Read a rules file, validated against its schema.

    A successful validation is remembered by the sha256 of the file and its schema (a stamp in the
    user cache folder), so verbs scripted in loops need not import jsonschema (0.1 s) each time;
    any change to either file validates again.
    """
    from reviewer.schemas import validate_once

    path = RULES_DIR / f"{name}.json"
    data = path.read_bytes()
    doc = json.loads(data)
    validate_once(doc, data, name, path=path)
    return doc


@cache
def workflow() -> Workflow:
    doc = load_checked("workflow")
    path = RULES_DIR / "workflow.json"
    states = set(doc["states"])
    transitions = {}
    for i, t in enumerate(doc["transitions"]):
        for state in [*t["from"], t["to"]]:
            if state not in states:
                raise SchemaError(f"unknown state {state!r}", path=path, field=f"transitions.{i}")
        transitions[t["action"]] = Transition(
            t["action"], frozenset(t["from"]), t["to"], frozenset(t["roles"]), t.get("needs_reason", False), t["why"]
        )
    for s in doc["final"]:
        if s not in states:
            raise SchemaError(f"unknown state {s!r}", path=path, field="final")
    return Workflow(
        dict(doc["states"]),
        frozenset(doc["final"]),
        transitions,
        {k: frozenset(v) for k, v in doc["permissions"].items()},
    )


@cache
def codebook() -> Codebook:
    doc = load_checked("codebook")
    path = RULES_DIR / "codebook.json"
    for i, r in enumerate(doc.get("draft_reject_reasons", [])):
        if r.get("route") not in ("redraft", "manual"):
            raise SchemaError(
                "a draft reject reason needs a route (redraft or manual)", path=path, field=f"draft_reject_reasons.{i}"
            )
    return Codebook(
        tuple(Reason(**r) for r in doc["flag_reasons"]),
        tuple(Reason(**r) for r in doc["reject_reasons"]),
        tuple(Reason(**r) for r in doc.get("draft_reject_reasons", [])),
    )


@dataclass(frozen=True)
class QualitySettings:
    """assets/review/quality.json: the models' settings, routing thresholds and confidence levels."""

    ds_iterations: int
    ds_tol: float
    mace_max_decisions: int
    mace_restarts: int
    mace_iterations: int
    glad_max_decisions: int
    glad_iterations: int
    uncertain_posterior: tuple[float, float]
    min_reliability: float
    min_gold_accuracy: float
    min_gold_items: int
    low_confidence_to_expert: bool
    confidence: tuple[str, ...]


@cache
def quality_settings() -> QualitySettings:
    """assets/review/quality.json, validated on load."""
    doc = load_checked("quality")
    m, r = doc["models"], doc["routing"]
    low, high = r["uncertain_posterior"]
    if low > high:
        raise SchemaError("the lower bound is above the upper", path=RULES_DIR / "quality.json", field="routing")
    return QualitySettings(
        m["dawid_skene"]["iterations"],
        m["dawid_skene"]["tol"],
        m["mace"]["max_decisions"],
        m["mace"]["restarts"],
        m["mace"]["iterations"],
        m["glad"]["max_decisions"],
        m["glad"]["iterations"],
        (low, high),
        r["min_reliability"],
        r["min_gold_accuracy"],
        r["min_gold_items"],
        r["low_confidence_to_expert"],
        tuple(doc["confidence"]),
    )


def check_confidence(value: str | None, *, item: str = "") -> str | None:
    """A decision's confidence: one of the levels of assets/review/quality.json, or None (not given)."""
    if value is None:
        return None
    levels = quality_settings().confidence
    if value not in levels:
        where = f"item {item}: " if item else ""
        raise ReviewError(f"{where}confidence must be one of {', '.join(levels)}, not {value!r}")
    return value
