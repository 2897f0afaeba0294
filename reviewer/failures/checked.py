"""Schema checks of the failure files, remembered by content.

`reviewer failures code` is scripted in loops (one call per run): validating the coding set (300 kB at the
paper's scale) and the codebook with jsonschema cost ~0.3 s a call, most of it importing jsonschema and building
its validators. A successful check is remembered by the sha256 of the document's bytes and its schema's (a stamp
in the user cache folder, as reviewer.review.rules does for the rules files), so a set already checked is not
checked again; any change to the file or its schema checks it again, and a file that fails is never stamped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def stamp_dir() -> Path:
    from reviewer.schema_once import stamp_dir as where

    return where()


def check_once(doc: Any, raw: bytes, schema: str, *, path: str | Path | None = None) -> None:
    """Validate `doc` (parsed from `raw`) against schemas/`schema`.schema.json unless these very bytes passed
    before; raises SchemaError as reviewer.schemas.validate does (reviewer.schema_once.validate_once)."""
    from reviewer.schema_once import validate_once

    validate_once(doc, raw, schema, path=path)
