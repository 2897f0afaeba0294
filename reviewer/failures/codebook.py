"""The failure-coding codebooks and keyword passes, as data in assets/failures (checked on load).

Two schemes: 'step' (the first wrong step of a sampled wrong run, seed 001 Tab. 13) and 'sensor' (what a run on
an instrument pair says about the sensors, Sec. C.5). The keyword passes mark candidate statements in a run's
method summary and caveats so the coder reads those first.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from reviewer import ASSETS_DIR
from reviewer.errors import ReviewError, SchemaError

FAILURES_DIR = ASSETS_DIR / "failures"
SCHEMES = ("step", "sensor")


@dataclass(frozen=True)
class Code:
    code: str
    label: str
    key: str
    definition: str
    example: str


@dataclass(frozen=True)
class Scheme:
    name: str
    label: str
    question: str
    codes: tuple[Code, ...]
    real_event_rule: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.code for c in self.codes)

    def check(self, code: str) -> str:
        """The code, or ReviewError listing the scheme's codes."""
        if code not in self.names:
            raise ReviewError(f"{code!r} is not a {self.name} code: one of {', '.join(self.names)}", field="code")
        return code

    def by_key(self, key: str) -> str | None:
        return next((c.code for c in self.codes if c.key == key), None)


@dataclass(frozen=True)
class Codebook:
    version: str
    coders: tuple[str, ...]
    precoders: tuple[str, ...]
    llm_viewers: tuple[str, ...]
    schemes: dict[str, Scheme]
    sha256: str


def _load(name: str, schema: str) -> tuple[dict[str, Any], bytes, Path]:
    from reviewer.schemas import validate_once

    path = FAILURES_DIR / name
    raw = path.read_bytes()
    doc = json.loads(raw.decode("utf-8"))
    validate_once(doc, raw, schema, path=path)
    return doc, raw, path


@cache
def codebook() -> Codebook:
    """assets/failures/codebook.json, validated; codes and keys are unique within a scheme."""
    import hashlib

    doc, raw, path = _load("codebook.json", "failure_codebook")
    schemes = {}
    for name in SCHEMES:
        s = doc["schemes"][name]
        codes = tuple(Code(**c) for c in s["codes"])
        for attr in ("code", "key"):
            values = [getattr(c, attr) for c in codes]
            dup = sorted({v for v in values if values.count(v) > 1})
            if dup:
                raise SchemaError(f"{attr} {dup[0]!r} is used twice", path=path, field=f"schemes.{name}.codes")
        schemes[name] = Scheme(name, s["label"], s["question"], codes, s.get("real_event_rule"))
    return Codebook(
        doc["version"],
        tuple(doc["coders"]),
        tuple(doc["precoders"]),
        tuple(doc["llm_viewers"]),
        schemes,
        hashlib.sha256(raw).hexdigest(),
    )


@dataclass(frozen=True)
class KeywordPass:
    name: str
    label: str
    pattern: re.Pattern[str]


def _word_pattern(words: list[str]) -> re.Pattern[str]:
    parts = []
    for w in sorted(words, key=len, reverse=True):  # longest first: OLI-2 before OLI
        stem = re.escape(w.rstrip("*"))
        parts.append(stem + (r"[\w-]*" if w.endswith("*") else ""))
    # whole words: no letter or digit right before or after (ETM+ ends in a symbol, so \b would not do)
    return re.compile(r"(?<![\w])(?:" + "|".join(parts) + r")(?![\w+])", re.IGNORECASE)


@cache
def keyword_passes() -> tuple[KeywordPass, ...]:
    """assets/failures/keywords.json, validated, each pass compiled once."""
    doc, _, _ = _load("keywords.json", "failure_keywords")
    return tuple(KeywordPass(p["name"], p["label"], _word_pattern(p["words"])) for p in doc["passes"])


_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def statements(text: str | None) -> list[str]:
    """A report split into statements (sentences, clauses after ';', lines), blanks dropped."""
    return [s.strip() for s in _SENTENCE.split(text or "") if s.strip()]


def mark(text: str | None) -> list[dict[str, Any]]:
    """Every statement of `text` with the keyword passes it matched and the words that matched them."""
    out = []
    for s in statements(text):
        hits = {}
        for p in keyword_passes():
            words = sorted({m.group(0) for m in p.pattern.finditer(s)}, key=str.lower)
            if words:
                hits[p.name] = words
        out.append({"text": s, "candidate": bool(hits), "passes": hits})
    return out
