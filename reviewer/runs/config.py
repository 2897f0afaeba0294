"""`reviewer run`'s settings and its versioned agent prompt (assets/runs, checked against their schemas on load).

The key comes from the provider's environment variable or, for Anthropic, the OS keyring as drafting takes it
(reviewer.drafting.config.api_key); it is handed to Inspect's provider through this process's environment only,
never written to the runs, the logs' model arguments, the summary or the store.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from reviewer import ASSETS_DIR
from reviewer.errors import ReviewerError
from reviewer.schemas import load, validate

RUNS_DIR = ASSETS_DIR / "runs"
SETTINGS_PATH = RUNS_DIR / "settings.json"
SANDBOX_DIR = RUNS_DIR / "sandbox"

#: the environment variable each provider of Inspect reads its key from (providers that need none are absent)
KEY_ENV = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "google": "GOOGLE_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "grok": "XAI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "together": "TOGETHER_API_KEY",
    "groq": "GROQ_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}


class RunError(ReviewerError):
    """Raised when a run cannot start (bank not frozen, hashes, missing record, no key, bad options)."""


@cache
def settings() -> dict[str, Any]:
    """assets/runs/settings.json, validated on load."""
    return load(SETTINGS_PATH, "runs_settings")


@dataclass(frozen=True)
class AgentPrompt:
    version: str
    sha256: str
    system: str
    record: str
    closed_book: str
    continue_text: str
    item: str

    def system_for(self, condition: str) -> str:
        """The system message: the shared text and what this condition gives."""
        return f"{self.system}\n\n{self.closed_book if condition == 'closed_book' else self.record}"


@cache
def agent_prompt(name: str | None = None) -> AgentPrompt:
    path = RUNS_DIR / (name or settings()["prompt"])
    raw = path.read_bytes()
    doc = json.loads(raw.decode("utf-8"))
    validate(doc, "runs_prompt", path=path)
    return AgentPrompt(
        doc["version"],
        hashlib.sha256(raw).hexdigest(),
        doc["system"],
        doc["record"],
        doc["closed_book"],
        doc["continue"],
        doc["item"],
    )


def provide_key(model: str) -> None:
    """Make the provider's key available to Inspect in this process's environment (from the keyring for Anthropic
    when the environment has none); refuse with the way to set it when there is none."""
    provider = model.split("/", 1)[0]
    env = KEY_ENV.get(provider)
    if env is None or os.environ.get(env, "").strip():
        return
    if provider == "anthropic":
        from reviewer.drafting.config import HOW_TO_SET_KEY, api_key

        key = api_key()
        if not key:
            raise RunError(f"no Anthropic API key for {model}: {HOW_TO_SET_KEY}")
        os.environ[env] = key
        return
    raise RunError(f"no API key for {model}: set {env}")


def cost_usd(model: str, usage: dict[str, int]) -> float | None:
    """A cost estimate from the list prices in the settings (None for a model without prices)."""
    price = settings()["prices_usd_per_mtok"].get(model)
    if price is None:
        return None
    total = (
        usage.get("input_tokens", 0) * price["input"]
        + usage.get("output_tokens", 0) * price["output"]
        + usage.get("input_tokens_cache_write", 0) * price.get("cache_write", price["input"])
        + usage.get("input_tokens_cache_read", 0) * price.get("cache_read", price["input"])
    ) / 1e6
    return round(total, 6)


def sandbox_file(name: str) -> Path:
    return SANDBOX_DIR / name
