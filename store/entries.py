"""The entries of an append-only chunk log: one SEALED block of a conversation with a model.

An entry is written once, when its block seals (a user prompt, a thinking block with its
signature, a text block, a tool call, a tool result, an error, a system note), and never
changes afterwards. That immutability is what makes the wire projection in
`store.requests` byte-stable from one model call to the next. Pure data, no I/O.

Payloads by type (`data`):

| type        | role      | data |
|-------------|-----------|------|
| text        | user      | `{text, messageId}` |
| text        | assistant | `{text, messageId}` |
| thinking    | assistant | `{thinking, signature, messageId}` or `{redacted}` |
| tool_call   | assistant | `{id, name, input, display}` |
| tool_result | tool      | `{id, name, content, isError, display}` |
| error       | system    | `{message, messageId, status?}` |
| system      | system    | `{kind, text, messageId?}` |
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

ROLES: Final = frozenset({"user", "assistant", "tool", "system"})
TYPES: Final = frozenset({"text", "thinking", "tool_call", "tool_result", "error", "system"})
DISPLAY_ONLY: Final = frozenset({"error", "system"})
"""Entry types a model never sees: they exist for the transcript and for `cockpit inspect`."""

REFUSAL: Final = "refusal"
"""The system-note kind that takes a refused turn out of every later request."""


class Draft(NamedTuple):
    """An entry before the log gives it a seq: what sealed, and who said it."""

    role: str
    type: str
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Entry:
    """One sealed block, as the log stores it. `step` is the model round trip that produced
    it (0 for the prompt that opens a turn); `turn` is the opaque id of its turn."""

    seq: int
    turn: str
    step: int
    role: str
    type: str
    data: Mapping[str, Any]
    created: float = 0.0

    @property
    def message_id(self) -> str | None:
        """The ACP messageId the block streamed under, when it has one."""
        value = self.data.get("messageId")
        return value if isinstance(value, str) else None

    @property
    def is_display_only(self) -> bool:
        """True for errors and system notes: shown and replayed, never sent to the model."""
        return self.type in DISPLAY_ONLY


def canonical(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` as it reads back from the log (a JSON round trip), so an entry held in memory
    and the same entry loaded from disk serialise to the same bytes."""
    loaded = json.loads(dump(data))
    if not isinstance(loaded, dict):  # pragma: no cover - a Mapping always dumps to an object
        raise TypeError("an entry's data must be a JSON object")
    return loaded


def dump(data: Mapping[str, Any]) -> str:
    """The stored form of a payload: compact JSON, ASCII-only (lone surrogates survive)."""
    return json.dumps(data, separators=(",", ":"))


def make_entry(seq: int, turn: str, step: int, draft: Draft, created: float = 0.0) -> Entry:
    """An entry from a draft, checked and canonicalised."""
    if draft.role not in ROLES:
        raise ValueError(f"not an entry role: {draft.role!r}")
    if draft.type not in TYPES:
        raise ValueError(f"not an entry type: {draft.type!r}")
    return Entry(seq, turn, step, draft.role, draft.type, canonical(draft.data), created)


# Drafts, one constructor per kind of block --------------------------------------------------


def user_text(text: str, message_id: str) -> Draft:
    """A prompt (or a prompt that arrived mid-turn)."""
    return Draft("user", "text", {"text": text, "messageId": message_id})


def assistant_text(text: str, message_id: str) -> Draft:
    """A text block the model wrote."""
    return Draft("assistant", "text", {"text": text, "messageId": message_id})


def thinking(text: str, signature: str, message_id: str) -> Draft:
    """A thinking block with its signature (kept even when the text is empty)."""
    return Draft(
        "assistant", "thinking", {"thinking": text, "signature": signature, "messageId": message_id}
    )


def redacted_thinking(data: str) -> Draft:
    """A redacted thinking block: opaque, sent back as it came."""
    return Draft("assistant", "thinking", {"redacted": data})


def tool_call(
    call_id: str,
    name: str,
    arguments: Mapping[str, Any],
    display: Mapping[str, Any] | None = None,
) -> Draft:
    """A tool call the model made, with its parsed input; `display` is how the client was
    told about it (title, kind, locations), which the model never sees."""
    return Draft(
        "assistant",
        "tool_call",
        {"id": call_id, "name": name, "input": dict(arguments), "display": dict(display or {})},
    )


def tool_result(
    call_id: str,
    name: str,
    content: str,
    is_error: bool = False,
    display: Mapping[str, Any] | None = None,
) -> Draft:
    """What a tool returned to the model; `display` is how the client showed the call
    (title, kind, status, content, locations), so a reload can show it again."""
    return Draft(
        "tool",
        "tool_result",
        {
            "id": call_id,
            "name": name,
            "content": content,
            "isError": is_error,
            "display": dict(display or {}),
        },
    )


def error(message: str, message_id: str, status: int | None = None) -> Draft:
    """A failure the user saw (an API error): display-only."""
    data: dict[str, Any] = {"message": message, "messageId": message_id}
    if status is not None:
        data["status"] = status
    return Draft("system", "error", data)


def system_note(kind: str, text: str = "", message_id: str | None = None) -> Draft:
    """A note about the conversation (cancelled, max_tokens, refusal): display-only."""
    data: dict[str, Any] = {"kind": kind, "text": text}
    if message_id is not None:
        data["messageId"] = message_id
    return Draft("system", "system", data)
