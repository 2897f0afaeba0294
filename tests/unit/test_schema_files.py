"""Every schema file is a valid JSON Schema 2020-12 (checked here once, not at every start of the tool)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from reviewer import SCHEMAS_DIR

FILES = sorted(SCHEMAS_DIR.glob("*.schema.json"))


def test_the_schemas_folder_is_found():
    assert len(FILES) >= 20 and any(f.name == "products.schema.json" for f in FILES)


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_schema_file_is_valid_against_the_metaschema(path):
    jsonschema.Draft202012Validator.check_schema(json.loads(path.read_text(encoding="utf-8")))


def test_a_broken_schema_is_caught_by_the_check():
    with pytest.raises(jsonschema.SchemaError):
        jsonschema.Draft202012Validator.check_schema({"type": "objekt"})
