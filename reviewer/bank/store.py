"""Banks in the review store (tables of db/migrations/0002_bank.sql): import a folder, export it again.

Each question is kept as its JSON text with indexed columns (id, site, class, task, status), so the
review workflow can filter and update statuses while an export rewrites the same bytes.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path
from typing import Any

from reviewer.bank.io import dumps_line, dumps_manifest, load_bank, write_bank
from reviewer.errors import BankError
from reviewer.review.store import Store

logger = logging.getLogger(__name__)


def import_bank(store: Store, folder: str | Path) -> tuple[str, str]:
    """Load a checked bank folder into the store; returns (name, version).

    Importing the same name and version again replaces its records but keeps the review status of
    questions that are still there; a frozen bank already in the store is never replaced by different
    content.
    """
    bank = load_bank(folder)
    name, version = bank.name, bank.version
    db = store.db
    existing = list(db.query("SELECT frozen, manifest FROM banks WHERE name = ? AND version = ?", [name, version]))
    if existing:
        old = json.loads(existing[0]["manifest"])
        if existing[0]["frozen"] and old.get("files") != bank.manifest["files"]:
            raise BankError(f"bank {name} {version} is frozen in the store with different content", path=folder)
    statuses = {
        r["id"]: r["status"]
        for r in db.query("SELECT id, status FROM bank_questions WHERE bank = ? AND version = ?", [name, version])
    }
    now = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    with store.atomic():
        for table in ("bank_questions", "bank_sites", "bank_pairs"):
            db.execute(f"DELETE FROM {table} WHERE bank = ? AND version = ?", [name, version])
        db["banks"].upsert(
            {
                "name": name,
                "version": version,
                "created": bank.manifest["created"],
                "schema_version": bank.manifest["schema_version"],
                "frozen": int(bank.frozen),
                "manifest": dumps_manifest(bank.manifest),
                "imported_at": now,
            },
            pk=("name", "version"),
        )
        db["bank_questions"].insert_all(
            {
                "bank": name,
                "version": version,
                "position": i,
                "id": q["id"],
                "site": q["site"],
                "class": q["class"],
                "task": q["task"],
                "status": statuses.get(q["id"], "generated"),
                "json": dumps_line(q, "question"),
            }
            for i, q in enumerate(bank.questions)
        )
        db["bank_sites"].insert_all(
            {"bank": name, "version": version, "position": i, "id": s["id"], "json": dumps_line(s, "site")}
            for i, s in enumerate(bank.sites)
        )
        db["bank_pairs"].insert_all(
            {
                "bank": name,
                "version": version,
                "position": i,
                "id": p["id"],
                "question": p["question"],
                "kind": p["kind"],
                "json": dumps_line(p, "pair"),
            }
            for i, p in enumerate(bank.pairs)
        )
    logger.info("imported bank %s %s: %d questions", name, version, len(bank.questions))
    return name, version


def bank_versions(store: Store, name: str) -> list[dict[str, Any]]:
    """Stored versions of a bank, most recently imported last."""
    return list(
        store.db.query(
            "SELECT name, version, created, frozen, imported_at FROM banks WHERE name = ? ORDER BY imported_at, rowid",
            [name],
        )
    )


def _rows(store: Store, table: str, name: str, version: str) -> list[dict[str, Any]]:
    return [
        json.loads(r["json"])
        for r in store.db.query(
            f"SELECT json FROM {table} WHERE bank = ? AND version = ? ORDER BY position", [name, version]
        )
    ]


def export_bank(
    store: Store, name: str, folder: str | Path, *, version: str | None = None, frozen: bool | None = None
) -> dict[str, Any]:
    """Write a stored bank as a folder; returns its manifest.

    `version` picks the stored version (default: the most recently imported); `frozen=True` writes the
    bank frozen. With the defaults the folder is byte-identical to the one imported.
    """
    if not store.db["banks"].exists():
        raise BankError(f"no bank named {name!r} in the store")
    versions = bank_versions(store, name)
    if version is not None:
        versions = [v for v in versions if v["version"] == version]
    if not versions:
        which = f"{name!r} version {version!r}" if version is not None else repr(name)
        raise BankError(f"no bank {which} in the store")
    row = versions[-1]
    manifest = write_bank(
        folder,
        name,
        row["version"],
        questions=_rows(store, "bank_questions", name, row["version"]),
        sites=_rows(store, "bank_sites", name, row["version"]),
        pairs=_rows(store, "bank_pairs", name, row["version"]),
        frozen=bool(row["frozen"]) if frozen is None else frozen,
        created=row["created"],
    )
    logger.info("exported bank %s %s to %s", name, row["version"], folder)
    return manifest
