"""A review package's signatures: every decision written in a package store is signed in its own transaction
(`sign_decision`, called by ledger.write_decision) with HMAC-SHA256 and the package's secret, over a canonical JSON
of the package id, the key id, the decision's signed columns (DECISION_COLS), its item's bank, question id, version and content
sha256, and the previous signature (a chain). reviewer.review.packages checks them on import.

Below the ledger (which signs through it) and the packages (which export, check and merge): it reads only the
store.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from reviewer.store import Store, sha256_text

#: the columns of a decision as a review package signs them (a package of an earlier version is still checked
#: against these, so they never change); reviewer.review.packages signs with them
SIGNED_COLS = (
    "id",
    "item",
    "version",
    "user",
    "stage",
    "verdict",
    "reasons",
    "comment",
    "correction",
    "rationale",
    "view",
    "seconds",
    "retracts",
    "created",
)

#: the columns of a decision as a package of this version signs them: SIGNED_COLS and the decision's confidence
#: (issue 30). A package signed before the confidence was (its signatures cover SIGNED_COLS only) still verifies;
#: the confidence of such a decision is covered by nothing, so reviewer.review.packages does not merge it
DECISION_COLS = (*SIGNED_COLS, "confidence")


@dataclass(frozen=True)
class Package:
    """A row of `packages` (kind 'self' in a package, 'issued' in the team store)."""

    id: str
    kind: str
    bank: str
    annotator: str
    key_id: str
    secret: str
    items: tuple[tuple[str, int, str], ...]  # (qid, version, sha256) as exported
    issued_by: str
    issued_at: str

    def __repr__(self) -> str:  # never show the secret
        return f"Package(id={self.id!r}, kind={self.kind!r}, bank={self.bank!r}, annotator={self.annotator!r})"


_PACKAGE_COLS = "id, kind, bank, annotator, key_id, secret, items, issued_by, issued_at"


def _package(row: Any) -> Package:
    try:
        items = tuple((i["qid"], int(i["version"]), i["sha256"]) for i in json.loads(row[6]))
    except (ValueError, TypeError, KeyError):
        items = ()  # a package's own copy edited by hand: the import reads the team store's copy
    return Package(row[0], row[1], row[2], row[3], row[4], row[5], items, row[7], row[8])


def package_record(store: Store, issued: str | None = None) -> Package | None:
    """The package a store is (its 'self' record), or None for a team store; with `issued`, the team store's
    record of the package of that id it issued, or None."""
    if issued is None:
        row = store.db.execute(f"SELECT {_PACKAGE_COLS} FROM packages WHERE kind = 'self'").fetchone()
    else:
        row = store.db.execute(
            f"SELECT {_PACKAGE_COLS} FROM packages WHERE id = ? AND kind = 'issued'", [issued]
        ).fetchone()
    return _package(row) if row else None


def canonical(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")


def signature(secret: str, package: str, key_id: str, decision: dict[str, Any], item: dict[str, Any], prev: str) -> str:
    body = canonical({"package": package, "key_id": key_id, "decision": decision, "item": item, "prev": prev})
    return hmac.new(bytes.fromhex(secret), body, hashlib.sha256).hexdigest()


def without_confidence(decision: dict[str, Any]) -> dict[str, Any]:
    """The decision as a package made before issue 30 signed it (SIGNED_COLS: no confidence)."""
    return {c: decision[c] for c in SIGNED_COLS}


def decision_rows(store: Store, where: str = "", args: list[Any] | None = None) -> list[dict[str, Any]]:
    """Decisions with what their signature covers of their item: bank, question id, version and content sha256."""
    cols = ", ".join(f"d.{c}" for c in DECISION_COLS)
    rows = store.db.execute(
        f"SELECT {cols}, i.bank, i.qid, v.json FROM decisions d LEFT JOIN items i ON i.id = d.item "
        f"LEFT JOIN item_versions v ON v.item = d.item AND v.version = d.version {where} ORDER BY d.id",
        args or [],
    ).fetchall()
    out = []
    for r in rows:
        decision = dict(zip(DECISION_COLS, r[: len(DECISION_COLS)], strict=True))
        bank, qid, text = r[len(DECISION_COLS) :]
        item = {
            "bank": bank,
            "qid": qid,
            "version": decision["version"],
            "sha256": sha256_text(text) if text is not None else None,
        }
        out.append({"decision": decision, "item": item})
    return out


def sign_decision(store: Store, decision_id: int) -> None:
    """Sign a decision just written in a package (ledger.write_decision calls this inside its transaction)."""
    pkg = package_record(store)
    if pkg is None:
        return
    row = decision_rows(store, "WHERE d.id = ?", [decision_id])[0]
    prev = store.db.execute("SELECT hmac FROM package_signatures ORDER BY decision DESC LIMIT 1").fetchone()
    mac = signature(pkg.secret, pkg.id, pkg.key_id, row["decision"], row["item"], prev[0] if prev else "")
    store.db.execute(
        "INSERT INTO package_signatures (decision, package, hmac) VALUES (?, ?, ?)", [decision_id, pkg.id, mac]
    )
