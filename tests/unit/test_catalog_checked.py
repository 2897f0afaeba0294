"""products.json is checked against its schema on load, once per content: a catalogue whose bytes passed
before is not checked again (10 ms of jsonschema in every scan), any edit is checked, a bad one never passes."""

from __future__ import annotations

import json

import pytest

from reviewer.errors import SchemaError
from reviewer.record.catalog import CATALOG_PATH, Catalog


def test_catalogue_checked_once_per_content_and_an_edit_checked_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # platformdirs' user cache folder on Linux
    raw = CATALOG_PATH.read_bytes()
    Catalog(json.loads(raw), raw=raw)
    stamps = list((tmp_path / "cache").rglob("validated/*"))
    assert len(stamps) == 1, "the shipped catalogue passed and was remembered"
    doc = json.loads(raw)
    era5 = next(p for p in doc["products"] if p["id"] == "era5land_monthly")
    era5["composite_period"] = "week"  # the schema knows only "month"
    edited = json.dumps(doc).encode()
    for _ in range(2):  # refused each time: a document that fails is never remembered
        with pytest.raises(SchemaError, match="products.schema.json") as err:
            Catalog(json.loads(edited), raw=edited)
        assert "composite_period" in err.value.field
    assert len(list((tmp_path / "cache").rglob("validated/*"))) == 1
