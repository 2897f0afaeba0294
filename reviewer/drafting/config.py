"""Drafting settings, the versioned prompt template and the API key.

Settings and the prompt are data in assets/drafting (schemas draft_settings / draft_prompt, checked on load); the
prompt's version and the sha256 of its file go into every draft's provenance. The key comes from ANTHROPIC_API_KEY
or the OS keyring and is only ever handed to the SDK client: never written to the store, logs, reports or packages.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from reviewer import APP_NAME, ASSETS_DIR
from reviewer.errors import DraftingError
from reviewer.schemas import load, validate

DRAFTING_DIR = ASSETS_DIR / "drafting"
SETTINGS_PATH = DRAFTING_DIR / "settings.json"
KEY_ENV = "ANTHROPIC_API_KEY"
#: the keyring entry: service APP_NAME, this user name (`keyring set earthrecord-reviewer anthropic`)
KEYRING_USER = "anthropic"
HOW_TO_SET_KEY = (
    f"set {KEY_ENV} or store the key in the OS keyring: keyring set {APP_NAME} {KEYRING_USER} "
    "(the app and every other verb work without one)"
)


@cache
def settings() -> dict[str, Any]:
    """assets/drafting/settings.json, validated on load."""
    return load(SETTINGS_PATH, "draft_settings")


@dataclass(frozen=True)
class Prompt:
    version: str
    sha256: str
    system: str
    instructions: str
    item: str
    path: str


@cache
def prompt(name: str | None = None) -> Prompt:
    """The prompt template named in the settings (or `name`), validated, with the sha256 of its file's bytes."""
    return load_prompt(DRAFTING_DIR / (name or settings()["prompt"]), "draft_prompt")


def load_prompt(path: Path, schema: str) -> Prompt:
    """A versioned prompt template (drafting's, failure pre-coding's), validated against its schema, with the
    sha256 of its file's bytes for the provenance."""
    raw = path.read_bytes()
    doc = json.loads(raw.decode("utf-8"))
    validate(doc, schema, path=path)
    return Prompt(
        doc["version"], hashlib.sha256(raw).hexdigest(), doc["system"], doc["instructions"], doc["item"], path.name
    )


def api_key() -> str | None:
    """The key from the environment, else the OS keyring; None when neither has one (or there is no keyring)."""
    key = os.environ.get(KEY_ENV, "").strip()
    if key:
        return key
    try:
        import keyring
        from keyring.errors import KeyringError

        try:
            return keyring.get_password(APP_NAME, KEYRING_USER) or None
        except KeyringError:
            return None
    except Exception:  # noqa: BLE001 - a broken keyring backend means no key, not a crash
        return None


def require_key() -> str:
    key = api_key()
    if not key:
        raise DraftingError(f"no Anthropic API key: {HOW_TO_SET_KEY}")
    return key


def make_client(*, key: str | None = None, http_client: Any = None, timeout: float | None = None) -> Any:
    """The real anthropic.Anthropic client; its own retries are off (the drafting job retries, so it can honour
    retry-after, report each wait and be cancelled). `http_client` is an httpx2.Client (tests pass a mock transport)."""
    import anthropic

    return anthropic.Anthropic(
        api_key=key or require_key(),
        max_retries=0,
        timeout=timeout if timeout is not None else settings()["timeout_s"],
        http_client=http_client,
    )


def cost_usd(model: str, usage: dict[str, int], *, batch: bool = False) -> float | None:
    """A cost estimate from the list prices in the settings (None for a model without prices)."""
    price = settings()["prices_usd_per_mtok"].get(model)
    if price is None:
        return None
    total = (
        usage["input_tokens"] * price["input"]
        + usage["output_tokens"] * price["output"]
        + usage["cache_creation_input_tokens"] * price["cache_write"]
        + usage["cache_read_input_tokens"] * price["cache_read"]
    ) / 1e6
    if batch:
        total *= settings()["batch_discount"]
    return round(total, 6)


def settings_path() -> Path:
    return SETTINGS_PATH
