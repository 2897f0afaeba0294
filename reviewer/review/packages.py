"""Review packages: one annotator's open items as a store file of its own, worked on another machine, merged back.

`export_package` writes a package: a store file (SQLite, the same migrations, opened with `Store(path)`) holding
only the annotator's user row, the items assigned to them that are still open (their current versions, renumbered
in queue order), their assignments (ranks and skip flags kept), the bank's row and the site records of those items
(the bank's sites, and the `sites` scene index by the folder paths the team store knows), and the package record
(table `packages`, kind 'self'). Blinding: nothing of other annotators' decisions, assignments or identities, no
gold or audit flags, no item states beyond 'in_review', no stage-2 outcomes, no shown times.

The review verbs work on a package as on any store (`reviewer review ... --package FILE`). Every decision written
in a package is signed in its own transaction (signing.sign_decision, called by ledger.write_decision): HMAC-SHA256 with
the package's secret over a canonical JSON of the package id, the key id, the decision's columns (DECISION_COLS, its
confidence among them), its item's bank, question id, version and content sha256, and the previous signature (a
chain: a removed or reordered decision breaks it). A package made before the confidence was signed still verifies
(its signatures over the columns without it); such a decision's confidence is not merged.

`import_package` checks the package against the team store's record of what it issued (id, key id, bank,
annotator, item versions) and every signature with the team store's copy of the secret, before anything is
written; a package edited by hand, replayed for another annotator or another bank is refused whole. Then, in one
transaction, each decision not imported before is written through the core (stage1.decide / stage1.undo, so
routing, events and the append-only rules apply) with its own time, seconds, reasons, comment, correction, view
and confidence; a decision on an item version that changed since export (or that the core refuses) is a conflict, listed
and recorded, and the rest still merge. `package_decisions` records each outcome, so importing twice changes
nothing.

The secret is a review-package signing key, not an API key: it is never logged, printed or put in an event.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reviewer import __version__
from reviewer.errors import ReviewError
from reviewer.review.ledger import User, find_user, get_user, now, record_event, require_bank
from reviewer.review.signing import Package, decision_rows, package_record, signature, without_confidence
from reviewer.store import Store

_STAGE1 = ("accept", "flag", "skip")


def open_package(path: str | Path) -> Store:
    """Open a review package as the store (`--package FILE`); refuses a file that is not one, unchanged."""
    path = Path(path)
    try:
        size = path.stat().st_size if path.is_file() else None
    except OSError:
        size = None
    if not size:
        raise ReviewError(f"{path}: no review package there (a maintainer writes one with `reviewer package export`)")
    store = Store(path)
    try:
        if package_record(store) is None:
            raise ReviewError(f"{path}: is a review store, not a review package (no package record in it)")
    except BaseException:
        store.close()
        raise
    return store


# ----------------------------------------------------------------------------- export


def _require_maintainer(actor: User) -> None:
    from reviewer.review.rules import workflow

    if not workflow().allowed("assign", actor.role):
        who = " or ".join(sorted(workflow().permissions["assign"]))
        raise ReviewError(f"user {actor.name} is {actor.role}: only {who} may export or import review packages")


def _remove_db(path: Path) -> None:
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        p.unlink(missing_ok=True)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def export_package(
    store: Store,
    bank: str,
    *,
    annotator: str,
    out: str | Path,
    user: str | None,
    with_record: bool = False,
    progress: Callable[[float, str], None] | None = None,
) -> dict[str, Any]:
    """Write one annotator's open items of a bank as a package file (maintainer); returns what was written.

    The team store keeps the package's record (kind 'issued', with its secret) and a `package_export` event;
    the file appears whole or not at all, and is never written over (an old package may hold decisions not yet
    imported). `with_record`: the package also carries the files of the scenes its items need, rasters clipped
    to the site (clipped before the team store is locked; the export is refused if the assignments changed
    meanwhile).
    """
    from reviewer.fileio import check_output_file, os_error_text
    from reviewer.review.rules import workflow
    from reviewer.review.stage1 import annotator_queue

    actor = get_user(store, user)
    _require_maintainer(actor)
    require_bank(store, bank)
    person = find_user(store, annotator)
    if not workflow().allowed("annotate", person.role):
        raise ReviewError(f"user {person.name} is {person.role}: has no stage-1 items to take away in a package")
    target = check_output_file(out)
    if os.path.lexists(target):
        raise ReviewError(
            f"{target}: exists already; a package is written to a new file (an old one may hold decisions "
            "not yet imported)"
        )
    package_id, key_id, secret = secrets.token_hex(16), "k" + secrets.token_hex(8), secrets.token_hex(32)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)  # mode 0600: the package holds its signing key
    except OSError as exc:
        raise ReviewError(f"cannot write the package: {os_error_text(exc, target)}") from exc
    tmp = Path(tmp_name)
    record_files: list[dict[str, Any]] = []
    clipped_ids: list[int] | None = None
    try:
        if with_record:
            clipped_ids = annotator_queue(store, bank, person)
            record_files = _clip_needed(store, _gather(store, bank, person, clipped_ids), progress)
        with store.transaction():
            ids = annotator_queue(store, bank, person)
            if not ids:
                raise ReviewError(f"{person.name} has no open items in bank {bank}: nothing to put in a package")
            if clipped_ids is not None and ids != clipped_ids:
                raise ReviewError(
                    f"{person.name}'s assignments in bank {bank} changed while the record was clipped: export again"
                )
            content = _gather(store, bank, person, ids)
            content["files"] = record_files
            items = [{"qid": r["qid"], "version": r["version"], "sha256": r["sha256"]} for r in content["items"]]
            stamp = now()
            record = Package(package_id, "issued", bank, person.name, key_id, secret, (), actor.name, stamp)
            _insert_package(store, record, items)
            record_event(
                store,
                actor.name,
                "package_export",
                bank=bank,
                detail={"package": package_id, "key_id": key_id, "annotator": person.name, "items": len(items)},
            )
            own = Package(package_id, "self", bank, person.name, key_id, secret, (), actor.name, stamp)
            _write_package(tmp, content, own, items)
    except OSError as exc:
        _remove_db(tmp)
        raise ReviewError(f"cannot write the package: {os_error_text(exc, target)}; nothing was issued") from exc
    except BaseException:
        _remove_db(tmp)
        raise
    try:
        os.replace(tmp, target)
    except OSError as exc:
        _remove_db(tmp)
        raise ReviewError(
            f"package {package_id} was issued, but its file could not be written: {os_error_text(exc, target)}; "
            "export again (the issued record is never used)"
        ) from exc
    _fsync_dir(target.parent)
    return {
        "package": package_id,
        "key_id": key_id,
        "file": str(target),
        "bank": bank,
        "annotator": person.name,
        "items": len(items),
        "sites": len(content["sites"]),
        "record_files": len(record_files),
        "record_bytes": sum(len(f["bytes"]) for f in record_files),
    }


def _insert_package(store: Store, pkg: Package, items: list[dict[str, Any]]) -> None:
    store.db.execute(
        "INSERT INTO packages (id, kind, bank, annotator, key_id, secret, items, issued_by, issued_at, tool_version) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            pkg.id,
            pkg.kind,
            pkg.bank,
            pkg.annotator,
            pkg.key_id,
            pkg.secret,
            json.dumps(items, sort_keys=True, separators=(",", ":")),
            pkg.issued_by,
            pkg.issued_at,
            __version__,
        ],
    )


def _gather(store: Store, bank: str, person: User, ids: list[int]) -> dict[str, Any]:
    """What goes into the package, read in the export's transaction (queue order: skipped items last)."""
    db = store.db
    marks = ", ".join("?" * len(ids))
    rows = {
        r["id"]: r
        for r in db.query(
            "SELECT i.id, i.qid, i.site, i.class, i.task, i.reference_source, i.current_version AS version, "
            "v.json, v.sha256, v.created AS version_created, a.rank, a.skipped, a.created AS assigned "
            "FROM items i JOIN item_versions v ON v.item = i.id AND v.version = i.current_version "
            f"JOIN assignments a ON a.item = i.id AND a.user = ? WHERE i.id IN ({marks})",
            [person.name, *ids],
        )
    }
    items = [rows[i] for i in ids]
    user_row = db.execute("SELECT name, role, created FROM users WHERE name = ?", [person.name]).fetchone()
    site_ids = sorted({r["site"] for r in items})
    site_marks = ", ".join("?" * len(site_ids))
    bank_row = next(
        iter(db.query("SELECT * FROM banks WHERE name = ? ORDER BY imported_at DESC, rowid DESC LIMIT 1", [bank])),
        None,
    )
    bank_sites = (
        list(
            db.query(
                f"SELECT * FROM bank_sites WHERE bank = ? AND version = ? AND id IN ({site_marks}) ORDER BY position",
                [bank, bank_row["version"], *site_ids],
            )
        )
        if bank_row
        else []
    )
    sites = list(db.query(f"SELECT * FROM sites WHERE site_id IN ({site_marks}) ORDER BY site_dir", site_ids))
    dirs = [s["site_dir"] for s in sites]
    dir_marks = ", ".join("?" * len(dirs))
    scenes = list(db.query(f"SELECT * FROM scenes WHERE site_dir IN ({dir_marks})", dirs)) if dirs else []
    problems = list(db.query(f"SELECT * FROM scan_problems WHERE site_dir IN ({dir_marks})", dirs)) if dirs else []
    return {
        "items": items,
        "user": user_row,
        "bank": bank_row,
        "bank_sites": bank_sites,
        "sites": sites,
        "scenes": scenes,
        "scan_problems": problems,
    }


def _item_years(item_json: str) -> set[int]:
    """The years an item's evidence needs: its period, and the evidence view's dates and periods."""
    from reviewer.bank.evidence import evidence_for

    question = json.loads(item_json)
    years = set(range(int(question["period"]["start"][:4]), int(question["period"]["end"][:4]) + 1))
    view = evidence_for(question)
    years |= {int(d[:4]) for d in view.dates}
    for y0, y1 in view.periods:
        years |= set(range(int(y0), int(y1) + 1))
    return years


def _clip_needed(
    store: Store, content: dict[str, Any], progress: Callable[[float, str], None] | None
) -> list[dict[str, Any]]:
    """The package_files rows: each site's needed scene files (and their companions), clipped to the site."""
    from reviewer.record.clip import clip_record, scene_files

    years: dict[str, set[int]] = {}
    for r in content["items"]:
        years.setdefault(r["site"], set()).update(_item_years(r["json"]))
    folders = {}
    for site in content["sites"]:
        if Path(site["site_dir"]).is_dir():
            folders.setdefault(site["site_id"], site["site_dir"])
    missing = sorted(set(years) - set(folders))
    if missing:
        raise ReviewError(
            f"--with-record: no scanned record of site(s) {', '.join(missing)} on this machine; "
            "scan them first (reviewer scan SITE_DIR)"
        )
    rows: list[dict[str, Any]] = []
    for site_id, folder in sorted(folders.items()):
        if site_id not in years:
            continue
        wanted: set[str] = set()
        for scene in content["scenes"]:
            if scene["site_dir"] != folder or int(scene["date"][:4]) not in years[site_id]:
                continue
            bands = json.loads(scene["bands"] or "{}").values()
            wanted |= scene_files(folder, scene["scene_id"], scene["product"], bands)  # + MTL, MTD_MSIL2A.xml
        with tempfile.TemporaryDirectory(prefix="package-record-") as tmp:
            clip_record(folder, wanted, tmp, progress=progress)
            for path in sorted(p for p in Path(tmp).rglob("*") if p.is_file()):
                data = path.read_bytes()
                rows.append(
                    {
                        "site": site_id,
                        "path": str(path.relative_to(tmp)),
                        "bytes": data,
                        "sha256": hashlib.sha256(data).hexdigest(),
                    }
                )
    return rows


def unpack_record(
    package: Store, path: str | Path, *, progress: Callable[[float, str], None] | None = None
) -> list[Path]:
    """Write the site records a package carries into `<package file>.record/<site>/` (once; files are checked
    against their sha256) and scan them into the package, so the review dock finds each item's site there."""
    from reviewer.fileio import atomic_write
    from reviewer.record.scan import open_index

    rows = package.db.execute("SELECT site, path, bytes, sha256 FROM package_files ORDER BY site, path").fetchall()
    root = Path(str(path) + ".record")
    folders: list[Path] = []
    for site, rel, data, sha in rows:
        if hashlib.sha256(data).hexdigest() != sha:
            raise ReviewError(f"{path}: the packaged file {site}/{rel} is damaged (sha256 differs)")
        target = root / site / rel
        if not target.is_file() or hashlib.sha256(target.read_bytes()).hexdigest() != sha:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, data)
        if root / site not in folders:
            folders.append(root / site)
    for folder in folders:
        open_index(folder, package)
        if progress is not None:
            progress(1.0, f"record of {folder.name} ready")
    return folders


def _insert_rows(db: Any, table: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    cols = list(rows[0])
    db.conn.executemany(
        f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
        [[r[c] for c in cols] for r in rows],
    )


def _write_package(path: Path, content: dict[str, Any], pkg: Package, items: list[dict[str, Any]]) -> None:
    """Build the package store at `path` (a new, empty file) in one transaction, then sync it."""
    with Store(path) as package:
        with package.transaction() as db:
            name, role, created = content["user"]
            db.execute("INSERT INTO users (name, role, created) VALUES (?, ?, ?)", [name, role, created])
            for n, r in enumerate(content["items"], start=1):
                # renumbered in queue order: the team's item ids and positions would tell gold items apart
                db.execute(
                    "INSERT INTO items (id, bank, qid, position, site, class, task, reference_source, gold, audit, "
                    "state, current_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 'in_review', ?)",
                    [
                        n,
                        pkg.bank,
                        r["qid"],
                        n - 1,
                        r["site"],
                        r["class"],
                        r["task"],
                        r["reference_source"],
                        r["version"],
                    ],
                )
                # the exact text and hash; who made the version (an expert's correction, say) stays at home
                db.execute(
                    "INSERT INTO item_versions (item, version, json, sha256, origin, created_by, reason, created) "
                    "VALUES (?, ?, ?, ?, 'generated', 'package', NULL, ?)",
                    [n, r["version"], r["json"], r["sha256"], r["version_created"]],
                )
                db.execute(
                    "INSERT INTO assignments (item, user, rank, created, open, skipped) VALUES (?, ?, ?, ?, 1, ?)",
                    [n, name, r["rank"], r["assigned"], r["skipped"]],
                )
            if content["bank"]:
                _insert_rows(db, "banks", [content["bank"]])
            _insert_rows(db, "bank_sites", content["bank_sites"])
            _insert_rows(db, "sites", content["sites"])
            _insert_rows(db, "scenes", content["scenes"])
            _insert_rows(db, "scan_problems", content["scan_problems"])
            _insert_rows(db, "package_files", content.get("files", []))
            _insert_package(package, pkg, items)
            record_event(
                package,
                pkg.issued_by,
                "package_export",
                bank=pkg.bank,
                detail={"package": pkg.id, "key_id": pkg.key_id, "annotator": name, "items": len(items)},
            )
    # the last connection closed: SQLite checkpointed the WAL into the file and removed it
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


# ----------------------------------------------------------------------------- import


def _refuse(path: Path, pkg_id: str | None, what: str) -> ReviewError:
    name = f"package {path}" + (f" ({pkg_id})" if pkg_id else "")
    return ReviewError(f"{name}: {what}; nothing was merged")


def _verified(package: Store, path: Path, team: Store) -> tuple[Package, list[dict[str, Any]]]:
    """The issued record and the package's decisions, once every check passed; else ReviewError (nothing written)."""
    own = package_record(package)
    if own is None:
        raise _refuse(path, None, "is not a review package (no package record in it)")
    issued = package_record(team, issued=own.id)
    if issued is None:
        raise _refuse(path, own.id, "was not issued by this store (export packages and import them in the same store)")
    if own.key_id != issued.key_id:
        raise _refuse(path, own.id, f"its key id {own.key_id} is not the one issued with it ({issued.key_id})")
    banks = sorted({r[0] for r in package.db.execute("SELECT DISTINCT bank FROM items")} | {own.bank})
    if banks != [issued.bank]:
        other = ", ".join(b for b in banks if b != issued.bank)
        raise _refuse(path, own.id, f"was issued for bank {issued.bank}, but holds items of bank {other}")
    names = {r[0] for r in package.db.execute("SELECT user FROM decisions UNION SELECT name FROM users")} | {
        own.annotator
    }
    if names != {issued.annotator}:
        other = ", ".join(sorted(names - {issued.annotator}))
        raise _refuse(path, own.id, f"was issued to {issued.annotator}, but holds decisions or a profile of {other}")
    rows = decision_rows(package)
    signatures = {
        d: (p, mac) for d, p, mac in package.db.execute("SELECT decision, package, hmac FROM package_signatures")
    }
    known = {r["decision"]["id"] for r in rows}
    orphans = sorted(set(signatures) - known)
    if orphans:
        raise _refuse(path, own.id, f"decision {orphans[0]} was signed but is gone (decisions were removed by hand)")
    exported = {(qid, version): sha for qid, version, sha in issued.items}
    prev = ""
    for r in rows:
        d, item = r["decision"], r["item"]
        if d["id"] not in signatures:
            raise _refuse(path, own.id, f"decision {d['id']} is not signed (added outside the tool)")
        pkg_of, mac = signatures[d["id"]]
        expected = signature(issued.secret, issued.id, issued.key_id, d, item, prev)
        if pkg_of == issued.id and not hmac.compare_digest(mac, expected):
            # signed by an earlier version, without the confidence: it verifies, its confidence is not merged
            older = signature(issued.secret, issued.id, issued.key_id, without_confidence(d), item, prev)
            if hmac.compare_digest(mac, older):
                expected, r["confidence_unsigned"] = older, d["confidence"] is not None
        if pkg_of != issued.id or not hmac.compare_digest(mac, expected):
            raise _refuse(
                path,
                own.id,
                f"decision {d['id']} does not match its signature (changed, moved or removed by hand, or signed "
                "with another package's key)",
            )
        if exported.get((item["qid"], item["version"])) != item["sha256"]:
            raise _refuse(
                path, own.id, f"decision {d['id']} is on {item['qid']} v{item['version']}, which was not exported in it"
            )
        prev = mac
    return issued, rows


class _Conflict(ReviewError):
    """A decision of a package that is not merged (listed and recorded; the others still merge)."""


def import_package(store: Store, path: str | Path, *, user: str | None) -> dict[str, Any]:
    """Merge the decisions made in a package into the team store (maintainer); returns counts and conflicts.

    Idempotent: a decision imported before (merged or refused) is not looked at again.
    """
    actor = get_user(store, user)
    _require_maintainer(actor)
    path = Path(path)
    package = open_package(path)
    try:
        issued, rows = _verified(package, path, store)
    except sqlite3.DatabaseError as exc:  # a table dropped or changed by hand
        raise _refuse(path, None, f"cannot be read as a review package ({exc})") from exc
    finally:
        package.close()
    merged = retracted = unsigned_confidence = 0
    conflicts: list[dict[str, Any]] = []
    with store.transaction() as db:
        done = {
            source: decision
            for source, decision in db.execute(
                "SELECT source, decision FROM package_decisions WHERE package = ?", [issued.id]
            )
        }
        before = len(done)
        for r in rows:
            d, item = r["decision"], r["item"]
            if d["id"] in done:
                continue
            try:
                decision = _merge(store, issued, d, item, done, r.get("confidence_unsigned", False))
            except ReviewError as exc:
                reason = exc.message
                conflicts.append(
                    {
                        "item": f"{issued.bank}/{item['qid']}",
                        "version": d["version"],
                        "verdict": d["verdict"],
                        "reason": reason,
                    }
                )
                decision = None
            else:
                if d["verdict"] == "retract":
                    retracted += 1
                else:
                    merged += 1
                    unsigned_confidence += bool(r.get("confidence_unsigned"))
            done[d["id"]] = decision
            db.execute(
                "INSERT INTO package_decisions (package, source, decision, outcome, reason, imported_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    issued.id,
                    d["id"],
                    decision,
                    "conflict" if decision is None else "merged",
                    conflicts[-1]["reason"] if decision is None else None,
                    now(),
                ],
            )
        if merged or retracted or conflicts:
            record_event(
                store,
                actor.name,
                "package_import",
                bank=issued.bank,
                detail={
                    "package": issued.id,
                    "key_id": issued.key_id,
                    "annotator": issued.annotator,
                    "decisions": len(rows),
                    "merged": merged,
                    "retracted": retracted,
                    "conflicts": len(conflicts),
                    "already": before,
                    "confidence_unsigned": unsigned_confidence,
                },
            )
        earlier = db.execute(
            "SELECT count(*) FROM package_decisions WHERE package = ? AND outcome = 'conflict'", [issued.id]
        ).fetchone()[0] - len(conflicts)
    return {
        "package": issued.id,
        "file": str(path),
        "bank": issued.bank,
        "annotator": issued.annotator,
        "decisions": len(rows),
        "merged": merged,
        "retracted": retracted,
        "conflicts": conflicts,
        "already": before,
        "earlier_conflicts": earlier,
        "confidence_unsigned": unsigned_confidence,
    }


def _merge(
    store: Store,
    issued: Package,
    d: dict[str, Any],
    item: dict[str, Any],
    done: dict[int, int | None],
    unsigned: bool = False,
) -> int:
    """Write one package decision through the core; returns the team decision id, or raises ReviewError (a conflict).
    `unsigned`: its confidence is not covered by its signature (an older package's): not merged."""
    from reviewer.review.decision import Decision
    from reviewer.review.stage1 import decide, undo

    if d["stage"] != 1 or d["verdict"] not in (*_STAGE1, "retract"):
        raise _Conflict(f"a stage-{d['stage']} {d['verdict']} decision: only stage-1 decisions come from a package")
    if d["verdict"] == "retract":
        target = done.get(d["retracts"])
        if target is None:
            raise _Conflict("takes back a decision that was not merged")
        with store.transaction() as db:
            out = undo(store, issued.bank, user=issued.annotator, created=d["created"])
            if out["undone"] != target:
                raise _Conflict(
                    f"takes back decision {target}, but {issued.annotator}'s last decision in bank {issued.bank} "
                    f"in the team store is decision {out['undone']}"
                )
            return int(db.execute("SELECT max(id) FROM decisions WHERE retracts = ?", [target]).fetchone()[0])
    row = store.db.execute(
        "SELECT i.current_version, v.sha256 FROM items i JOIN item_versions v ON v.item = i.id AND v.version = ? "
        "WHERE i.bank = ? AND i.qid = ?",
        [d["version"], issued.bank, item["qid"]],
    ).fetchone()
    if row is None or row[1] != item["sha256"]:
        raise _Conflict(f"version {d['version']} is not in the team store as it was exported")
    if row[0] != d["version"]:
        raise _Conflict(f"the item changed since export (version {d['version']} exported, now version {row[0]})")
    decision = Decision(
        d["verdict"],
        reasons=json.loads(d["reasons"]),
        comment=d["comment"],
        correction=json.loads(d["correction"]) if d["correction"] else None,
        seconds=d["seconds"],
        view=json.loads(d["view"]) if d["view"] else None,
        created=d["created"],
        confidence=None if unsigned else d["confidence"],
    )
    out = decide(store, item["qid"], decision, bank=issued.bank, user=issued.annotator, version=d["version"])
    return int(out["decision"])
