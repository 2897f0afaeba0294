"""JSON Schemas (2020-12) from schemas/: loaded once, enforced on every read and write."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from reviewer import SCHEMAS_DIR
from reviewer.errors import SchemaError


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    """`name` is the file stem, e.g. 'question' for schemas/question.schema.json. The schema files themselves
    are checked against the metaschema by tests/unit/test_schema_files.py, not at every start (a third of
    a `reviewer scan`'s fixed cost: 0.1-0.2 s for products.schema.json)."""
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
