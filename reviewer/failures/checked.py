"""Schema checks of the failure files, remembered by content.

`reviewer failures code` is scripted in loops (one call per run): validating the coding set (300 kB at the
paper's scale) and the codebook with jsonschema cost ~0.3 s a call, most of it importing jsonschema and building
its validators. A successful check is remembered by the sha256 of the document's bytes and its schema's (a stamp
in the user cache folder, as reviewer.review.rules does for the rules files), so a set already checked is not
checked again; any change to the file or its schema checks it again, and a file that fails is never stamped.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any


def stamp_dir() -> Path:
    import platformdirs

    from reviewer import APP_NAME

    return Path(platformdirs.user_cache_dir(APP_NAME)) / "validated"


def check_once(doc: Any, raw: bytes, schema: str, *, path: str | Path | None = None) -> None:
    """Validate `doc` (parsed from `raw`) against schemas/`schema`.schema.json unless these very bytes passed
    before; raises SchemaError as reviewer.schemas.validate does."""
    from reviewer import SCHEMAS_DIR

    schema_raw = (SCHEMAS_DIR / f"{schema}.schema.json").read_bytes()
    key = hashlib.sha256(schema.encode() + b"\0" + schema_raw + b"\0" + raw).hexdigest()
    stamp = stamp_dir() / key
    if stamp.exists():
        return
    from reviewer.schemas import validate

    validate(doc, schema, path=path)
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:
        pass  # no cache folder: validate every time
