"""Banks in the review store: import a folder (items and their versions), export it again.

An import keeps the exact bytes of every file (bank_files), so exporting that version gives them
back byte for byte whoever wrote them: a frozen bank's hash is what its agent runs were scored
against. Each question becomes an item of the bank (reviewer.review.items): a new item, or a new
version of an existing one when its content changed; review state and decisions are never lost.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from reviewer.bank.io import (
    BANK_ENTRIES,
    FILES,
    MANIFEST,
    QC,
    BankContent,
    dumps_line,
    load_bank,
    sha256_bytes,
    utc_now,
    write_bank,
)
from reviewer.errors import BankError
from reviewer.fileio import write_folder
from reviewer.review.items import sync_question
from reviewer.review.ledger import get_user, record_event
from reviewer.store import Store

logger = logging.getLogger(__name__)


def import_bank(store: Store, folder: str | Path, *, user: str | None = None) -> tuple[str, str]:
    """Load a checked bank folder into the store; returns (name, version).

    Importing the same name and version again updates it: questions whose content changed get a new
    item version (and go back to review if review had started); a frozen bank version already in the
    store is never replaced by different content. `user`, when given, must be a maintainer.
    """
    folder = Path(folder)
    bank = load_bank(folder)
    name, version = bank.name, bank.version
    pinned = [*FILES.values(), *([QC] if QC in bank.manifest["files"] else []), MANIFEST]
    raw = {f: (folder / f).read_bytes() for f in pinned}
    if user is not None:
        from reviewer.review.rules import workflow

        actor = get_user(store, user)
        workflow().require("settings", actor.role, actor.name)
        user = actor.name
    db = store.db
    with store.transaction():
        existing = db.execute("SELECT frozen FROM banks WHERE name = ? AND version = ?", [name, version]).fetchone()
        if existing and existing[0]:
            stored = dict(
                db.execute(
                    "SELECT file, sha256 FROM bank_files WHERE bank = ? AND version = ?", [name, version]
                ).fetchall()
            )
            if stored != {f: sha256_bytes(b) for f, b in raw.items()}:
                raise BankError(f"bank {name} {version} is frozen in the store with different content", path=folder)
            return name, version
        _store_version(store, bank, raw)
        members = []
        for i, q in enumerate(bank.questions):
            item_id, item_version = sync_question(
                store, name, i, q, dumps_line(q, "question"), user=user, frozen=bank.frozen
            )
            members.append((name, version, i, item_id, item_version))
        db.execute("DELETE FROM bank_items WHERE bank = ? AND version = ?", [name, version])
        db.conn.executemany(
            "INSERT INTO bank_items (bank, version, position, item, item_version) VALUES (?, ?, ?, ?, ?)", members
        )
        record_event(
            store,
            user,
            "bank_import",
            bank=name,
            after=version,
            detail={"folder": str(folder), "questions": len(bank.questions), "manifest_sha256": bank.sha256},
        )
    logger.info("imported bank %s %s: %d questions", name, version, len(bank.questions))
    return name, version


def _store_version(store: Store, bank: Any, raw: dict[str, bytes]) -> None:
    """The banks row, the exact file bytes, and the sites and pairs of one imported bank version."""
    store_version(store, bank.name, bank.version, bank.manifest, raw, None, sites=bank.sites, pairs=bank.pairs)


def store_version(
    store: Store,
    name: str,
    version: str,
    manifest: dict[str, Any],
    files: dict[str, bytes],
    members: list[tuple[int, int]] | None,
    *,
    sites: list[dict[str, Any]],
    pairs: list[dict[str, Any]],
) -> None:
    """Record one bank version (call inside a transaction): its row, exact bytes, sites, pairs and, when
    given, its members as (item id, item version) in line order."""
    db = store.db
    for table in ("bank_files", "bank_sites", "bank_pairs", "bank_items"):
        if table != "bank_items" or members is not None:
            db.execute(f"DELETE FROM {table} WHERE bank = ? AND version = ?", [name, version])
    db.execute(
        "INSERT INTO banks (name, version, created, schema_version, frozen, manifest, imported_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name, version) DO UPDATE SET created = excluded.created, "
        "schema_version = excluded.schema_version, frozen = excluded.frozen, manifest = excluded.manifest, "
        "imported_at = excluded.imported_at",
        [
            name,
            version,
            manifest["created"],
            manifest["schema_version"],
            int(bool(manifest["frozen"])),
            files[MANIFEST].decode("utf-8"),
            utc_now(),
        ],
    )
    db.conn.executemany(
        "INSERT INTO bank_files (bank, version, file, data, sha256) VALUES (?, ?, ?, ?, ?)",
        [(name, version, f, data, sha256_bytes(data)) for f, data in files.items()],
    )
    db.conn.executemany(
        "INSERT INTO bank_sites (bank, version, position, id, json) VALUES (?, ?, ?, ?, ?)",
        [(name, version, i, s["id"], dumps_line(s, "site")) for i, s in enumerate(sites)],
    )
    db.conn.executemany(
        "INSERT INTO bank_pairs (bank, version, position, id, question, kind, json) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(name, version, i, p["id"], p["question"], p["kind"], dumps_line(p, "pair")) for i, p in enumerate(pairs)],
    )
    if members is not None:
        db.conn.executemany(
            "INSERT INTO bank_items (bank, version, position, item, item_version) VALUES (?, ?, ?, ?, ?)",
            [(name, version, i, item, item_version) for i, (item, item_version) in enumerate(members)],
        )


def latest_rows(store: Store, name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The sites and pairs of the most recently stored version of a bank."""
    versions = bank_versions(store, name)
    if not versions:
        return [], []
    v = versions[-1]["version"]
    return _rows(store, "bank_sites", name, v), _rows(store, "bank_pairs", name, v)


def bank_versions(store: Store, name: str) -> list[dict[str, Any]]:
    """Stored versions of a bank, most recently imported last."""
    return list(
        store.db.query(
            "SELECT name, version, created, frozen, imported_at FROM banks WHERE name = ? ORDER BY imported_at, rowid",
            [name],
        )
    )


def question_count(store: Store, name: str, version: str) -> int:
    return store.db.execute(
        "SELECT count(*) FROM bank_items WHERE bank = ? AND version = ?", [name, version]
    ).fetchone()[0]


def _rows(store: Store, table: str, name: str, version: str) -> list[dict[str, Any]]:
    return [
        json.loads(r["json"])
        for r in store.db.query(
            f"SELECT json FROM {table} WHERE bank = ? AND version = ? ORDER BY position", [name, version]
        )
    ]


def _questions(store: Store, name: str, version: str) -> list[dict[str, Any]]:
    return [
        json.loads(r[0])
        for r in store.db.execute(
            "SELECT v.json FROM bank_items b JOIN item_versions v ON v.item = b.item AND v.version = b.item_version "
            "WHERE b.bank = ? AND b.version = ? ORDER BY b.position",
            [name, version],
        )
    ]


def _write_exact(folder: Path, files: dict[str, bytes]) -> None:
    """Write stored bytes as they were imported, whole or not at all; a frozen folder is left alone."""
    existing = folder / MANIFEST
    if existing.is_file() and existing.read_bytes() != files[MANIFEST]:
        try:
            frozen = json.loads(existing.read_text(encoding="utf-8")).get("frozen") is True
        except (ValueError, OSError, AttributeError):
            frozen = False
        if frozen:
            raise BankError("holds a frozen bank, which is immutable; write to a new folder", path=folder)
    write_folder(folder, files, last=[MANIFEST], ours=BANK_ENTRIES | set(files))


def export_bank(
    store: Store, name: str, folder: str | Path, *, version: str | None = None, frozen: bool | None = None
) -> dict[str, Any]:
    """Write a stored bank version as a folder; returns its manifest.

    `version` picks the stored version (default: the most recently imported). With `frozen` left as
    None the folder holds exactly the bytes imported; `frozen=True` (or False) writes this tool's
    canonical form with that flag.
    """
    folder = Path(folder)
    versions = bank_versions(store, name)
    if version is not None:
        versions = [v for v in versions if v["version"] == version]
    if not versions:
        which = f"{name!r} version {version!r}" if version is not None else repr(name)
        raise BankError(f"no bank {which} in the store")
    row = versions[-1]
    stored = {
        r[0]: (r[1], r[2])
        for r in store.db.execute(
            "SELECT file, data, sha256 FROM bank_files WHERE bank = ? AND version = ?", [name, row["version"]]
        )
    }
    if frozen is None and {MANIFEST, *FILES.values()} <= set(stored):
        for file, (data, sha) in stored.items():
            if sha256_bytes(data) != sha:
                raise BankError(f"stored copy of {file} of bank {name} {row['version']} is damaged (sha256 differs)")
        _write_exact(folder, {f: d for f, (d, _) in stored.items()})
        manifest = json.loads(stored[MANIFEST][0])
    else:
        manifest = write_bank(
            folder,
            BankContent(
                name,
                row["version"],
                questions=_questions(store, name, row["version"]),
                sites=_rows(store, "bank_sites", name, row["version"]),
                pairs=_rows(store, "bank_pairs", name, row["version"]),
                frozen=bool(row["frozen"]) if frozen is None else frozen,
                created=row["created"],
            ),
        )
    logger.info("exported bank %s %s to %s", name, row["version"], folder)
    return manifest
