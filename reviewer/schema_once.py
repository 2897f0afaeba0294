"""Schema checks remembered by content: a document that passed its schema is not checked again.

A success is remembered by the sha256 of the document's bytes and its schema's (a stamp file in the user cache
folder); any change to either checks it again, and a document that fails is never stamped. jsonschema is
imported only when a check runs: importing it and building a validator cost 0.1-0.3 s, and checking the product
catalogue 10 ms of every `reviewer scan` (a sixth of a Sentinel-2 tile's).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any


def stamp_dir() -> Path:
    import platformdirs

    from reviewer import APP_NAME

    return Path(platformdirs.user_cache_dir(APP_NAME)) / "validated"


def validate_once(doc: Any, raw: bytes, schema: str, *, path: str | Path | None = None) -> None:
    """reviewer.schemas.validate of `doc` (parsed from `raw`) against schemas/`schema`.schema.json, unless these
    very bytes passed before; raises SchemaError as validate does."""
    from reviewer import SCHEMAS_DIR

    schema_raw = (SCHEMAS_DIR / f"{schema}.schema.json").read_bytes()
    stamp = stamp_dir() / hashlib.sha256(schema.encode() + b"\0" + schema_raw + b"\0" + raw).hexdigest()
    if stamp.exists():
        return
    from reviewer.schemas import validate

    validate(doc, schema, path=path)
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:
        pass  # no cache folder: validate every time
