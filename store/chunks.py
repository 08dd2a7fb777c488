"""Normalised chunks: one `session/update` (or one Cockpit event) in the store's terms.

The engine hands the store the wire JSON of each ACP update (`model_dump(by_alias=True)`),
and `chunk_from_update` turns it into a `Chunk` with no SDK types, so the store stays
free of the SDK and recorded captures replay through exactly the same path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from store.text import clean_data, clean_text

TEXT_UPDATES: Mapping[str, str] = {
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "user_message_chunk": "user",
}
"""ACP text updates and the row kind each streams into."""

TOOL_UPDATES = frozenset({"tool_call", "tool_call_update"})
PLAN_UPDATE = "plan"
META_UPDATES = frozenset(
    {
        "available_commands_update",
        "current_mode_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
    }
)
"""Updates that change the session, not the transcript."""

NOTE_KINDS = frozenset({"notice", "error", "permission"})
"""Rows Cockpit itself writes: notices, errors and permission decisions."""

SHELL_UPDATE = "shell"
"""A command the user ran with `!` (its row's kind too): Cockpit writes it, the text is the
command's output so far and the payload what ran and how it ended (`shell_run`)."""

ASIDE_KINDS = NOTE_KINDS | {SHELL_UPDATE}
"""Rows that are not the agent's stream: one of them never ends the message it streams."""

MAX_UNKNOWN_PAYLOAD = 64 * 1024
"""An unknown update is kept as a notice, its JSON capped at this many characters."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One normalised update for one session.

    `update` is the ACP `sessionUpdate` name, or one of NOTE_KINDS for rows Cockpit
    writes itself; `text` is the streamed text (clean UTF-8); `data` the structured
    part (tool call fields, plan entries, session metadata, a decision).
    """

    session: str
    update: str
    text: str = ""
    message_id: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    from_cockpit: bool = False
    """True for a tool call update Cockpit makes itself (a command's output, the state it
    gives open calls when a turn is cancelled): the agent's stream has not moved on, so
    the open message stays open."""

    @property
    def tool_call_id(self) -> str | None:
        """The tool call this chunk is about, when it is one."""
        value = self.data.get("toolCallId")
        return value if isinstance(value, str) else None


def content_text(block: Any) -> str:
    """The text a content block contributes to a message.

    Text is itself; a resource link becomes a Markdown link; an embedded text resource
    its text; media become a short placeholder naming their type, so nothing the agent
    sent vanishes silently.
    """
    if not isinstance(block, Mapping):
        return ""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    if kind == "resource_link":
        name = block.get("title") or block.get("name") or block.get("uri") or "resource"
        return f"[{name}]({block.get('uri', '')})"
    if kind == "resource":
        resource = block.get("resource")
        if isinstance(resource, Mapping):
            text = resource.get("text")
            if isinstance(text, str):
                return text
            return f"[{resource.get('mimeType') or 'binary'} resource {resource.get('uri', '')}]"
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType') or ''}]".replace(" ]", "]")
    return f"[{kind or 'unknown'} content]"


def _unknown(session: str, update: Mapping[str, Any], name: str) -> Chunk:
    raw = json.dumps(update, default=repr)
    if len(raw) > MAX_UNKNOWN_PAYLOAD:
        data: dict[str, Any] = {"truncated": raw[:MAX_UNKNOWN_PAYLOAD]}
    else:
        data = {"update": update}
    return Chunk(session, name, data=data)


def chunk_from_update(session: str, update: Mapping[str, Any]) -> Chunk:
    """Normalise one ACP `session/update` (wire JSON) into a Chunk.

    Anything this function does not understand comes back as a Chunk whose `update`
    is the name it saw (or `"malformed"`), which the store keeps as a notice row.
    """
    name = update.get("sessionUpdate")
    if isinstance(name, str) and name in TEXT_UPDATES:
        message_id = update.get("messageId")
        return Chunk(
            session,
            name,
            text=clean_text(content_text(update.get("content"))),
            message_id=clean_text(message_id)
            if isinstance(message_id, str) and message_id
            else None,
        )
    # Ids, titles and every other string become keys and columns, which must be UTF-8:
    # an agent's lone surrogates become U+FFFD there as they do in its text.
    update = clean_data(update)
    name = update.get("sessionUpdate")
    if not isinstance(name, str):
        return _unknown(session, update, "malformed")
    if name in TOOL_UPDATES:
        if not isinstance(update.get("toolCallId"), str):
            return _unknown(session, update, "malformed")
        return Chunk(session, name, data=update)
    if name == PLAN_UPDATE:
        entries = update.get("entries")
        if not isinstance(entries, list):
            return _unknown(session, update, "malformed")
        return Chunk(session, name, data={"entries": entries})
    if name in META_UPDATES:
        return Chunk(session, name, data=update)
    return _unknown(session, update, name)


def shell_run(session: str, run_id: str, output: str, **data: Any) -> Chunk:
    """The row of the user's command `run_id` as it stands: its output so far and what the
    payload says (the command, its state, how it ended). Each one replaces the last."""
    return Chunk(
        session, SHELL_UPDATE, text=clean_text(output), message_id=run_id, data=clean_data(data),
        from_cockpit=True,
    )  # fmt: skip


def note(
    session: str, kind: str, text: str, *, message_id: str | None = None, **data: Any
) -> Chunk:
    """A row Cockpit writes itself: a notice, an error or a permission decision. With a
    `message_id`, it is one row per turn that a later note with that id replaces (a count
    that grows, kept in one row)."""
    if kind not in NOTE_KINDS:
        raise ValueError(f"not a note kind: {kind!r}")
    return Chunk(session, kind, text=clean_text(text), message_id=message_id, data=data)
