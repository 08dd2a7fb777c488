"""The Claude agent's settings: who it says it is, the API key it needs, the models and
thinking levels it offers, and the limits of a turn and of its tools (some read from the
environment, so tests and users can tighten them)."""

from __future__ import annotations

import os

from acp.core import RequestError

AGENT_NAME = "cockpit-claude"
AGENT_TITLE = "Claude (built-in)"
AGENT_VERSION = "1.0"

KEY_VARIABLE = "ANTHROPIC_API_KEY"
NO_KEY = (
    "Set ANTHROPIC_API_KEY to an Anthropic API key (and ANTHROPIC_BASE_URL to use a "
    "gateway), then start the session again."
)
BLANK_PROMPT = "The prompt has no text to send to the model: write something and send it again."

DEFAULT_MODELS = {
    "claude-sonnet-4-6": "Claude Sonnet 4.6",
    "claude-opus-4-6": "Claude Opus 4.6",
    "claude-haiku-4-5": "Claude Haiku 4.5",
}
THINKING = {"off": "Off", "adaptive": "On"}
"""Thinking settings: "adaptive" turns thinking on, as the model takes it (adaptive on the
newest models, a token budget on older ones: `store.requests.thinking_config`)."""
MODEL_OPTION, THINKING_OPTION = "model", "thinking"

MAX_TOKENS = int(os.environ.get("COCKPIT_CLAUDE_MAX_TOKENS") or 16000)
MAX_STEPS = int(os.environ.get("COCKPIT_CLAUDE_MAX_STEPS") or 60)
"""Model calls one turn may make before it stops with `max_turn_requests`."""
READ_LIMIT = 100_000
"""Characters of a file, or of a command's output, handed to the model."""
READ_LINES = 2000
OUTPUT_BYTES = 256 * 1024
COMMAND_TIMEOUT = 120
LIST_ENTRIES = 500
LIST_SKIP = (".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache")


def models() -> dict[str, str]:
    """The model choices, the first the default; ANTHROPIC_MODEL, when set, comes first."""
    chosen = os.environ.get("ANTHROPIC_MODEL", "").strip()
    if chosen and chosen not in DEFAULT_MODELS:
        return {chosen: chosen, **DEFAULT_MODELS}
    if chosen:
        return {chosen: DEFAULT_MODELS[chosen], **DEFAULT_MODELS}
    return dict(DEFAULT_MODELS)


def no_key() -> RequestError:
    """The auth-required error that says which variable to set."""
    return RequestError.auth_required({"message": NO_KEY, "variable": KEY_VARIABLE})


def api_key() -> str:
    """The API key, or the auth-required error saying what to set."""
    key = os.environ.get(KEY_VARIABLE, "").strip()
    if not key:
        raise no_key()
    return key
