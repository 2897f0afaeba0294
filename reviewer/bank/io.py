"""Bank folders on disk: JSON Lines with a schema per line, a sha256 manifest, byte-stable round trips.

A bank folder holds questions.jsonl, sites.jsonl, pairs.jsonl and manifest.json. Every line is checked
against its schema and against the rules a schema cannot express; every problem names file, line and
field. Files are written to a temporary file and renamed, so a failed write leaves nothing half-written.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer import schemas
from reviewer.bank.model import (
    INSUFFICIENT,
    Field,
    fields_of,
    is_insufficient,
    multi_sensor_of,
    range_problem,
    value_problem,
)
from reviewer.errors import BankError, SchemaError, SiteError
from reviewer.fileio import StrictJSONError, atomic_write, json_problem, loads_strict, output_folder, read_bounded

#: Largest bank or run file read (a bound on every read; a real bank is far smaller).
MAX_FILE_BYTES = 2 << 30
#: Largest single JSON document read (manifest.json, site.json).
MAX_DOC_BYTES = 16 << 20

logger = logging.getLogger(__name__)

FILES = {"questions": "questions.jsonl", "sites": "sites.jsonl", "pairs": "pairs.jsonl"}
MANIFEST = "manifest.json"
#: the review's quality-control record of a frozen bank, pinned by the manifest when present
QC = "qc.json"
SCHEMA_VERSION = "1"
#: The entries of a bank folder as the tool writes it: a bank is written into a folder that is new, empty or
#: holds only these (an earlier bank; reviewer.fileio's one rule for output folders)
BANK_ENTRIES = frozenset({MANIFEST, QC, *FILES.values()})
KIND_SCHEMA = {"questions": "question", "sites": "site", "pairs": "pair"}

#: One fixed key order per record kind, so serialisation never depends on how a dict was built.
KEY_ORDER = {
    "question": [
        "id",
        "site",
        "class",
        "task",
        "period",
        "text",
        "fields",
        "conclusion",
        "reference",
        "reference_range",
        "accept",
        "no_change",
        "reference_source",
        "sensors",
        "multi_sensor",
        "provenance",
    ],
    "site": ["id", "name", "kind", "theme", "role", "bbox", "crs", "boundary", "resolution", "shape"],
    "pair": [
        "id",
        "question",
        "kind",
        "satellite",
        "variable",
        "alteration",
        "factor",
        "from",
        "to",
        "fraction",
        "seed",
        "replacement",
        "pushes_toward",
        "description",
    ],
    "manifest": ["name", "version", "created", "schema_version", "frozen", "counts", "files"],
    "run": [
        "model",
        "question",
        "condition",
        "pair",
        "pass",
        "answer",
        "confidence",
        "method",
        "caveats",
        "tool_calls",
        "minutes",
        "image_views",
        "messages",
        "error",
    ],
}
_FIELD_KEYS = ["name", "type", "unit", "options"]
_PROVENANCE_KEYS = ["generator", "template", "phrasing", "seed", "methods"]


@dataclass(frozen=True)
class Problem:
    """One problem of a bank or run file, located for the user."""

    path: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.path + (f":{self.line}" if self.line is not None else "")
        return f"{where}: {self.field + ': ' if self.field else ''}{self.message}"


@dataclass
class Bank:
    """A loaded bank folder."""

    path: Path
    manifest: dict[str, Any]
    questions: list[dict[str, Any]]
    sites: list[dict[str, Any]]
    pairs: list[dict[str, Any]]
    sha256: str = ""
    _by_id: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.manifest["name"]

    @property
    def version(self) -> str:
        return self.manifest["version"]

    @property
    def frozen(self) -> bool:
        return bool(self.manifest["frozen"])

    def _index(self, kind: str) -> dict[str, dict[str, Any]]:
        if kind not in self._by_id:
            self._by_id[kind] = {r["id"]: r for r in getattr(self, kind)}
        return self._by_id[kind]

    def question(self, qid: str) -> dict[str, Any]:
        return self._index("questions")[qid]

    def site(self, sid: str) -> dict[str, Any]:
        return self._index("sites")[sid]

    def pair(self, pid: str) -> dict[str, Any]:
        return self._index("pairs")[pid]

    def has(self, kind: str, rid: str) -> bool:
        return rid in self._index(kind)


# ----------------------------------------------------------------------------- serialisation


def _ordered(d: dict[str, Any], order: list[str]) -> dict[str, Any]:
    out = {k: d[k] for k in order if k in d}
    for k in sorted(set(d) - set(order)):
        out[k] = d[k]
    return out


def canonical(record: dict[str, Any], kind: str) -> dict[str, Any]:
    """The record with the fixed key order of its kind (nested question parts ordered too)."""
    out = _ordered(record, KEY_ORDER[kind])
    if kind == "question":
        if isinstance(out.get("period"), dict):
            out["period"] = _ordered(out["period"], ["start", "end"])
        if isinstance(out.get("fields"), list):
            out["fields"] = [_ordered(f, _FIELD_KEYS) if isinstance(f, dict) else f for f in out["fields"]]
            names = [f.get("name") for f in out["fields"] if isinstance(f, dict)]
            for key in ("reference", "reference_range", "accept"):
                if isinstance(out.get(key), dict):
                    out[key] = _ordered(out[key], names)
        if isinstance(out.get("provenance"), dict):
            out["provenance"] = _ordered(out["provenance"], _PROVENANCE_KEYS)
    return out


def dumps_line(record: dict[str, Any], kind: str) -> str:
    """One JSON line (no newline), deterministic for equal content."""
    return json.dumps(canonical(record, kind), ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


def dumps_manifest(manifest: dict[str, Any]) -> str:
    """manifest.json text: indented, fixed key order, trailing newline."""
    return json.dumps(canonical(manifest, "manifest"), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def parse_line(text: str, *, path: str | Path, line: int) -> Any:
    """Parse one JSON line (or document) strictly; malformed JSON, NaN/Infinity, numbers out of range,
    duplicate keys and too deep nesting raise SchemaError with file and line."""
    try:
        return loads_strict(text)
    except StrictJSONError as exc:
        raise SchemaError(str(exc), path=path, line=line) from exc
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise SchemaError(json_problem(exc, one_line=True), path=path, line=line) from exc


def read_text(path: str | Path, limit: int = MAX_FILE_BYTES) -> str:
    """A bank, run or site file as text: regular files only, at most `limit` bytes, UTF-8."""
    return read_bounded(path, limit).decode("utf-8")


def sha256_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    """'sha256:<hex>' of a file's exact bytes."""
    return sha256_bytes(Path(path).read_bytes())


# ----------------------------------------------------------------------------- semantic rules


def question_problems(q: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) for rules of a schema-valid question that the schema cannot express."""
    out: list[tuple[str, str]] = []
    fields = fields_of(q)
    if len(fields) != len(q["fields"]):
        out.append(("fields", "field names must be unique"))
    concl = q["conclusion"]
    cls = q["class"]
    if concl not in fields:
        out.append(("conclusion", f"names no field of the question: {concl!r}"))
        return out
    cfield = fields[concl]
    if cfield.type == "text":
        out.append(("conclusion", "a text field cannot be the conclusion"))
    if (q["task"] is None) != (cls == "insufficient"):
        out.append(("task", "task is null exactly when the class is insufficient"))
    if q["period"]["start"] > q["period"]["end"]:
        out.append(("period", "period starts after it ends"))

    reference = q["reference"]
    for name, value in reference.items():
        if name not in fields:
            out.append((f"reference.{name}", "names no field of the question"))
            continue
        problem = value_problem(fields[name], value)
        if problem:
            out.append((f"reference.{name}", problem))
    if concl not in reference:
        out.append(("reference", f"has no value for the conclusion field {concl!r}"))
    else:
        ref = reference[concl]
        if cls == "insufficient" and ref != INSUFFICIENT:
            out.append((f"reference.{concl}", f"class insufficient needs the conclusion {INSUFFICIENT!r}"))
        if cls != "insufficient" and is_insufficient(ref):
            out.append((f"reference.{concl}", f"{INSUFFICIENT!r} is the reference only for class insufficient"))

    ranges = q.get("reference_range") or {}
    for name, bounds in ranges.items():
        loc = f"reference_range.{name}"
        if name not in fields:
            out.append((loc, "names no field of the question"))
            continue
        if fields[name].type != "number":
            out.append((loc, f"a range needs a number field, {name!r} is {fields[name].type}"))
            continue
        ref = reference.get(name)
        if isinstance(ref, int | float) and not isinstance(ref, bool):
            problem = range_problem(ref, bounds[0], bounds[1])
            if problem:
                out.append((loc, problem))
        elif not is_insufficient(ref):
            out.append((loc, "has no numeric reference value to contain"))
    if cfield.type == "number" and not is_insufficient(reference.get(concl)) and concl not in ranges:
        out.append(("reference_range", f"a number conclusion needs a range for {concl!r}"))

    for name, values in (q.get("accept") or {}).items():
        if name not in fields:
            out.append((f"accept.{name}", "names no field of the question"))
            continue
        for i, value in enumerate(values):
            problem = value_problem(fields[name], value)
            if problem:
                out.append((f"accept.{name}.{i}", problem))

    if q["no_change"] is not None:
        problem = value_problem(cfield, q["no_change"])
        if problem:
            out.append(("no_change", problem))
    if q["multi_sensor"] != multi_sensor_of(q["sensors"]):
        out.append(("multi_sensor", f"must be {multi_sensor_of(q['sensors'])} for sensors {q['sensors']}"))
    return out


def site_problems(s: dict[str, Any]) -> list[tuple[str, str]]:
    for key in ("bbox", "resolution", "shape"):
        values = s.get(key)
        values = values if isinstance(values, list) else [values]
        if any(isinstance(v, float) and not math.isfinite(v) for v in values):
            return [(key, f"needs finite numbers, got {s[key]}")]
    w, south, e, n = s["bbox"]
    if w >= e or south >= n:
        return [("bbox", f"expected [west, south, east, north] with west < east and south < north, got {s['bbox']}")]
    return []


def pair_problems(p: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    if p["alteration"] == "scale" and p["factor"] is None:
        out.append(("factor", "a scale alteration needs a factor"))
    if p["alteration"] == "drop_scenes" and p["fraction"] is None:
        out.append(("fraction", "a drop_scenes alteration needs a fraction"))
    if p["from"] and p["to"] and p["from"] > p["to"]:
        out.append(("to", "the altered period ends before it starts"))
    return out


_SEMANTIC = {"question": question_problems, "site": site_problems, "pair": pair_problems}


def record_problems(record: Any, schema: str) -> list[tuple[str, str]]:
    """Schema problems first; semantic rules only once the record is schema-valid."""
    found = schemas.problems(record, schema)
    if found or schema not in _SEMANTIC:
        return found
    return _SEMANTIC[schema](record)


# ----------------------------------------------------------------------------- JSON Lines


def read_jsonl(path: str | Path, schema: str, problems: list[Problem] | None = None) -> list[dict[str, Any]]:
    """Read and check every line of a JSON Lines file.

    Without `problems` the first bad line raises SchemaError; with a list, every problem is appended
    and only the good records are returned.
    """
    path = Path(path)
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        err = SchemaError(f"cannot read: {exc}", path=path)
        if problems is None:
            raise err from exc
        problems.append(Problem(str(path), None, None, err.message))
        return []
    records = []
    for lineno, raw in enumerate(text.split("\n"), start=1):
        if raw == "" and lineno == text.count("\n") + 1:
            break  # the end of the last line
        try:
            if not raw.strip():
                raise SchemaError("blank line", path=path, line=lineno)
            record = parse_line(raw, path=path, line=lineno)
            found = record_problems(record, schema)
            if found:
                if problems is None:
                    f, msg = found[0]
                    raise SchemaError(msg, path=path, line=lineno, field=f)
                problems.extend(Problem(str(path), lineno, f, msg) for f, msg in found)
                continue
            records.append(record)
        except SchemaError as exc:
            if problems is None:
                raise
            problems.append(Problem(str(path), exc.line, exc.field, exc.message))
    return records


def jsonl_bytes(records: Iterable[dict[str, Any]], schema: str) -> bytes:
    """Check every record and serialise them, one per line with '\\n' endings."""
    lines = []
    for i, record in enumerate(records, start=1):
        found = record_problems(record, schema)
        if found:
            f, msg = found[0]
            rid = record.get("id") if isinstance(record, dict) else None
            raise SchemaError(f"{schema} {rid or ''} not written: {msg}".replace("  ", " "), line=i, field=f)
        lines.append(dumps_line(record, schema) + "\n")
    return "".join(lines).encode("utf-8")


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]], schema: str) -> str:
    """Write checked records atomically; returns the file's 'sha256:<hex>'."""
    path = Path(path)
    try:
        data = jsonl_bytes(records, schema)
    except SchemaError as exc:
        raise SchemaError(exc.message, path=path, line=exc.line, field=exc.field) from exc
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data)
    return sha256_bytes(data)


# ----------------------------------------------------------------------------- bank folders


def _cross_problems(
    questions: list[tuple[int, dict]], sites: list[tuple[int, dict]], pairs: list[tuple[int, dict]], folder: Path
) -> list[Problem]:
    """Unique ids and references between files (records given with their line numbers)."""
    out: list[Problem] = []
    for kind, items in (("questions", questions), ("sites", sites), ("pairs", pairs)):
        seen: dict[str, int] = {}
        for line, r in items:
            if r["id"] in seen:
                out.append(
                    Problem(
                        str(folder / FILES[kind]),
                        line,
                        "id",
                        f"duplicate id {r['id']!r} (first on line {seen[r['id']]})",
                    )
                )
            else:
                seen[r["id"]] = line
    site_ids = {r["id"] for _, r in sites}
    question_ids = {r["id"] for _, r in questions}
    for line, q in questions:
        if q["site"] not in site_ids:
            out.append(Problem(str(folder / FILES["questions"]), line, "site", f"names a missing site {q['site']!r}"))
    for line, p in pairs:
        if p["question"] not in question_ids:
            out.append(
                Problem(str(folder / FILES["pairs"]), line, "question", f"names a missing question {p['question']!r}")
            )
    return out


def _numbered(path: Path, schema: str, problems: list[Problem]) -> list[tuple[int, dict]]:
    """Like read_jsonl(problems=...) but keeping line numbers of good records for cross checks."""
    before = len(problems)
    records = read_jsonl(path, schema, problems)
    bad_lines = {p.line for p in problems[before:]}
    lines = []
    if records:
        text = path.read_text(encoding="utf-8").split("\n")
        lines = [i for i, raw in enumerate(text, start=1) if raw.strip() and i not in bad_lines]
    return list(zip(lines, records, strict=False))


def _qc_problems(folder: Path, manifest: Any, verify_hashes: bool) -> list[Problem]:
    """qc.json, when the manifest pins one: present, its hash, its schema."""
    if not (isinstance(manifest, dict) and isinstance(manifest.get("files"), dict) and QC in manifest["files"]):
        return []
    path = folder / QC
    if not path.is_file():
        return [Problem(str(path), None, None, f"missing {QC} (the manifest pins it)")]
    out = []
    if verify_hashes and manifest["files"][QC] != sha256_file(path):
        actual = sha256_file(path)
        out.append(
            Problem(
                str(path),
                None,
                None,
                f"sha256 does not match the manifest (manifest {manifest['files'][QC]}, file {actual})",
            )
        )
    try:
        doc = loads_strict(read_text(path, MAX_DOC_BYTES))
        out.extend(Problem(str(path), None, f, m) for f, m in schemas.problems(doc, "qc"))
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        out.append(Problem(str(path), None, None, getattr(exc, "message", str(exc))))
    return out


def validate_bank(folder: str | Path, *, verify_hashes: bool = True) -> list[Problem]:
    """Every problem of a bank folder (manifest, hashes, each line, cross references); empty when valid."""
    folder = Path(folder)
    out: list[Problem] = []
    if not folder.is_dir():
        return [Problem(str(folder), None, None, "not a bank folder")]
    manifest_path = folder / MANIFEST
    manifest = None
    if not manifest_path.is_file():
        out.append(Problem(str(manifest_path), None, None, "missing manifest.json"))
    else:
        try:
            manifest = parse_line(read_text(manifest_path, MAX_DOC_BYTES), path=manifest_path, line=1)
            out.extend(Problem(str(manifest_path), None, f, m) for f, m in schemas.problems(manifest, "manifest"))
        except (SchemaError, OSError, UnicodeDecodeError) as exc:
            out.append(Problem(str(manifest_path), None, None, getattr(exc, "message", str(exc))))
            manifest = None
    parsed: dict[str, list[tuple[int, dict]]] = {}
    for kind, name in FILES.items():
        path = folder / name
        if not path.is_file():
            out.append(Problem(str(path), None, None, f"missing {name}"))
            parsed[kind] = []
            continue
        if verify_hashes and isinstance(manifest, dict) and isinstance(manifest.get("files"), dict):
            expected = manifest["files"].get(name)
            actual = sha256_file(path)
            if expected is not None and expected != actual:
                out.append(
                    Problem(
                        str(path),
                        None,
                        None,
                        f"sha256 does not match the manifest (manifest {expected}, file {actual})",
                    )
                )
        parsed[kind] = _numbered(path, KIND_SCHEMA[kind], out)
    out.extend(_qc_problems(folder, manifest, verify_hashes))
    out.extend(_cross_problems(parsed["questions"], parsed["sites"], parsed["pairs"], folder))
    if isinstance(manifest, dict) and isinstance(manifest.get("counts"), dict):
        bad_kinds = {Path(p.path).name for p in out}
        for kind, name in FILES.items():
            expected = manifest["counts"].get(kind)
            if name not in bad_kinds and expected is not None and expected != len(parsed[kind]):
                out.append(
                    Problem(
                        str(manifest_path), None, f"counts.{kind}", f"says {expected}, {name} has {len(parsed[kind])}"
                    )
                )
    return out


def load_bank(folder: str | Path, *, verify_hashes: bool = True) -> Bank:
    """Load a bank folder, refusing it (BankError) when anything is wrong, hashes included."""
    folder = Path(folder)
    found = validate_bank(folder, verify_hashes=verify_hashes)
    if found:
        first = found[0]
        more = f" (and {len(found) - 1} more problems; run `reviewer bank validate`)" if len(found) > 1 else ""
        raise BankError(first.message + more, path=first.path, line=first.line, field=first.field)
    manifest_bytes = (folder / MANIFEST).read_bytes()
    manifest = json.loads(manifest_bytes)
    records = {kind: read_jsonl(folder / name, KIND_SCHEMA[kind]) for kind, name in FILES.items()}
    logger.info("loaded bank %s %s from %s", manifest["name"], manifest["version"], folder)
    return Bank(
        folder, manifest, records["questions"], records["sites"], records["pairs"], sha256=sha256_bytes(manifest_bytes)
    )


def utc_now() -> str:
    """Now in UTC to the second, ISO 8601 with Z (manifest 'created', import times)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class BankContent:
    """A bank about to be written: its name and version, its records, and how its manifest is stamped.

    What write_bank and bank_bytes check and write, as one object (the records are read once, so a generator
    may be passed). `frozen` marks a frozen bank; `created` is the manifest's time (None: now); `qc` (the
    review's quality-control record, schemas/qc.schema.json) becomes qc.json, pinned like the other files.
    """

    name: str
    version: str
    questions: Iterable[dict[str, Any]]
    sites: Iterable[dict[str, Any]]
    pairs: Iterable[dict[str, Any]] = ()
    frozen: bool = False
    created: str | None = None
    qc: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        for kind in ("questions", "sites", "pairs"):
            object.__setattr__(self, kind, tuple(getattr(self, kind)))


def bank_bytes(content: BankContent, *, where: str | Path = ".") -> tuple[dict[str, bytes], dict[str, Any]]:
    """The checked bytes of every file of a bank folder (file name -> bytes) and its manifest. `where` names the
    folder in messages."""
    where = Path(where)
    name, version, frozen, created, qc = content.name, content.version, content.frozen, content.created, content.qc
    items = {"questions": list(content.questions), "sites": list(content.sites), "pairs": list(content.pairs)}
    data: dict[str, bytes] = {}
    for kind, records in items.items():
        try:
            data[FILES[kind]] = jsonl_bytes(records, KIND_SCHEMA[kind])
        except SchemaError as exc:
            raise SchemaError(exc.message, path=where / FILES[kind], line=exc.line, field=exc.field) from exc
    cross = _cross_problems(*(list(enumerate(items[k], start=1)) for k in ("questions", "sites", "pairs")), where)
    if cross:
        p = cross[0]
        raise BankError(p.message, path=p.path, line=p.line, field=p.field)
    if qc is not None:
        schemas.validate(qc, "qc", path=where / QC)
        data[QC] = dumps_qc(qc).encode("utf-8")
    manifest = {
        "name": name,
        "version": str(version),
        "created": created or utc_now(),
        "schema_version": SCHEMA_VERSION,
        "frozen": bool(frozen),
        "counts": {kind: len(records) for kind, records in items.items()},
        "files": {file: sha256_bytes(content) for file, content in data.items()},
    }
    schemas.validate(manifest, "manifest", path=where / MANIFEST)
    data[MANIFEST] = dumps_manifest(manifest).encode("utf-8")
    return data, manifest


def dumps_qc(qc: dict[str, Any]) -> str:
    """qc.json text: indented, keys sorted (deterministic for equal content), trailing newline."""
    return json.dumps(qc, ensure_ascii=False, indent=2, sort_keys=True, allow_nan=False) + "\n"


def refuse_frozen_folder(folder: Path, *, unless_bytes: bytes | None = None) -> None:
    """A folder holding a frozen bank is never overwritten (except by the very same manifest)."""
    existing = folder / MANIFEST
    if not existing.is_file():
        return
    try:
        raw = read_text(existing, MAX_DOC_BYTES)
        old_frozen = loads_strict(raw).get("frozen") is True
    except (ValueError, OSError, AttributeError):
        return
    if old_frozen and (unless_bytes is None or raw.encode("utf-8") != unless_bytes):
        raise BankError("holds a frozen bank, which is immutable; write to a new folder", path=folder)


def refuse_occupied_folder(folder: Path, files: dict[str, bytes]) -> None:
    """The tool never writes into a folder holding someone else's files: `folder` must be new, empty, or hold
    exactly these files with these bytes already (writing the same frozen bank again changes nothing)."""
    if not folder.is_dir():
        return
    other = []
    for entry in sorted(folder.iterdir()):
        if entry.name not in files or not entry.is_file() or entry.is_symlink():
            other.append(entry.name)
        elif entry.stat().st_size != len(files[entry.name]) or entry.read_bytes() != files[entry.name]:
            other.append(entry.name)
    if other:
        shown = ", ".join(other[:5]) + (f" and {len(other) - 5} more" if len(other) > 5 else "")
        raise BankError(
            f"holds other files ({shown}); a bank is written into a new or empty folder, nothing was written",
            path=folder,
        )


def write_bank(
    folder: str | Path, content: BankContent, *, extra_files: dict[str, bytes] | None = None
) -> dict[str, Any]:
    """Check and write a whole bank folder; returns the manifest written.

    Everything is checked before the first byte is written. The folder is written whole into a temporary
    folder beside it and renamed into place (reviewer.fileio.output_folder): a new folder appears complete
    or not at all, an existing one is changed only once every file was written (the manifest last). A folder
    holding anything but a bank's files and `extra_files` is refused, nothing written.
    `extra_files` (name -> bytes) are written with it, unpinned; `content.qc` becomes a pinned qc.json. A
    folder holding a frozen bank is never overwritten.
    """
    folder = Path(folder)
    refuse_frozen_folder(folder)
    data, manifest = bank_bytes(content, where=folder)
    with output_folder(folder, last=[MANIFEST], ours=BANK_ENTRIES | set(extra_files or ())) as tmp:
        for file, body in {**(extra_files or {}), **data}.items():
            atomic_write(tmp / file, body)
    logger.info("wrote bank %s %s to %s", content.name, content.version, folder)
    return manifest


def add_pairs(folder: str | Path, pairs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Append pairs to an existing (valid, unfrozen) bank folder; returns the new manifest.

    Every new pair is schema-checked, names a question of the bank and has an id unused in the bank.
    pairs.jsonl is rewritten atomically, then the manifest (hash and count of pairs; other files and keys
    untouched).
    """
    folder = Path(folder)
    bank = load_bank(folder)
    if bank.frozen:
        raise BankError("holds a frozen bank, which is immutable; pairs cannot be added", path=folder)
    new = list(pairs)
    items = list(bank.pairs) + new
    try:
        data = jsonl_bytes(items, "pair")
    except SchemaError as exc:
        raise SchemaError(exc.message, path=folder / FILES["pairs"], line=exc.line, field=exc.field) from exc
    cross = _cross_problems(
        list(enumerate(bank.questions, start=1)),
        list(enumerate(bank.sites, start=1)),
        list(enumerate(items, start=1)),
        folder,
    )
    if cross:
        p = cross[0]
        raise BankError(p.message, path=p.path, line=p.line, field=p.field)
    manifest = json.loads(json.dumps(bank.manifest))
    manifest["counts"]["pairs"] = len(items)
    manifest["files"][FILES["pairs"]] = sha256_bytes(data)
    schemas.validate(manifest, "manifest", path=folder / MANIFEST)
    atomic_write(folder / FILES["pairs"], data)
    atomic_write(folder / MANIFEST, dumps_manifest(manifest).encode("utf-8"))
    logger.info("added %d pairs to bank %s at %s", len(new), bank.name, folder)
    return manifest


def load_site_json(path: str | Path) -> dict[str, Any]:
    """Read a site folder's site.json (or a site.json path), checked against site.schema.json."""
    path = Path(path)
    if path.is_dir():
        path = path / "site.json"
    try:
        site = parse_line(read_text(path, MAX_DOC_BYTES), path=path, line=1)
    except (OSError, UnicodeDecodeError) as exc:
        raise SiteError(f"unreadable site: {exc}", path=path) from exc
    except SchemaError as exc:
        raise SiteError(f"unreadable site: {exc.message}", path=path) from exc
    found = record_problems(site, "site")
    if found:
        raise SiteError(found[0][1], path=path, field=found[0][0])
    return site


__all__ = [
    "Bank",
    "Field",
    "Problem",
    "INSUFFICIENT",
    "add_pairs",
    "canonical",
    "dumps_line",
    "load_bank",
    "load_site_json",
    "read_jsonl",
    "sha256_file",
    "validate_bank",
    "write_bank",
    "write_jsonl",
]
