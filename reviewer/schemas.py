"""JSON Schemas (2020-12) from schemas/: loaded once, enforced on every read and write.

jsonschema is imported only when a check runs: importing it and building a validator cost 0.1-0.3 s, so files
read by verbs scripted in loops (the product catalogue, the rules, the failure sets) are checked through
validate_once, which remembers a success by content.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewer import APP_NAME, SCHEMAS_DIR
from reviewer.errors import SchemaError

if TYPE_CHECKING:
    import jsonschema


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    """`name` is the file stem, e.g. 'question' for schemas/question.schema.json. The schema files themselves
    are checked against the metaschema by tests/unit/test_schema_files.py, not at every start (a third of
    a `reviewer scan`'s fixed cost: 0.1-0.2 s for products.schema.json)."""
    import jsonschema

    schema = json.loads((SCHEMAS_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def _field_of(error: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [r for r in error.validator_value if r not in error.instance]
        if missing:
            parts.append(missing[0])
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        if extra:
            parts.append(extra[0])
    return ".".join(parts) or "(document)"


def problems(doc: Any, name: str) -> list[tuple[str, str]]:
    """All (field, message) problems of a document; empty when it is valid."""
    errors = sorted(validator(name).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [(_field_of(e), e.message) for e in errors]


def load(path: Path, name: str) -> Any:
    """A JSON file of the tool's own (settings, rules), read and checked against schemas/<name>.schema.json."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    validate(doc, name, path=path)
    return doc


def validate(doc: Any, name: str, *, path: str | Path | None = None, line: int | None = None) -> None:
    """Raise SchemaError naming the file, line and first failing field."""
    found = problems(doc, name)
    if found:
        field, message = found[0]
        raise SchemaError(f"does not match {name}.schema.json: {message}", path=path, line=line, field=field)


def validate_once(doc: Any, raw: bytes, name: str, *, path: str | Path | None = None) -> None:
    """validate(doc, name) of `doc` parsed from `raw`, unless these very bytes passed before against this very
    schema: a success is remembered by the sha256 of both (a stamp in the user cache folder); any change to
    either checks again, and a document that fails is never stamped."""
    schema_raw = (SCHEMAS_DIR / f"{name}.schema.json").read_bytes()
    stamp = stamp_dir() / hashlib.sha256(name.encode() + b"\0" + schema_raw + b"\0" + raw).hexdigest()
    if stamp.exists():
        return
    validate(doc, name, path=path)
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:
        pass  # no cache folder: validate every time


def stamp_dir() -> Path:
    """Where validate_once keeps its stamps (under XDG_CACHE_HOME, which the test suite points elsewhere)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME)) / "validated"
