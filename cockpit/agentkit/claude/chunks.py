"""The session/update notifications of the Claude agent: text chunks under the messageId
they streamed with, and the replay of a stored log on session/load."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from acp.helpers import start_tool_call, text_block, update_tool_call
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCallLocation,
    ToolCallStatus,
    ToolKind,
    UserMessageChunk,
)

from store.entries import Entry


def message_chunk(text: str, message_id: str) -> AgentMessageChunk:
    """A reply chunk under `message_id`."""
    return AgentMessageChunk(
        session_update="agent_message_chunk", content=text_block(text), message_id=message_id
    )


def thought_chunk(text: str, message_id: str) -> AgentThoughtChunk:
    """A thinking chunk under `message_id`."""
    return AgentThoughtChunk(
        session_update="agent_thought_chunk", content=text_block(text), message_id=message_id
    )


def user_chunk(text: str, message_id: str) -> UserMessageChunk:
    """A user message chunk under `message_id` (a queued prompt, or a replayed one)."""
    return UserMessageChunk(
        session_update="user_message_chunk", content=text_block(text), message_id=message_id
    )


def replay_updates(entries: Sequence[Entry]) -> list[Any]:
    """The session/update notifications that show a stored log again: each message whole,
    under the messageId it streamed with, and each tool call with its final state."""
    updates: list[Any] = []
    for entry in entries:
        data = entry.data
        if entry.type == "text" and entry.role == "user":
            updates.append(user_chunk(str(data.get("text", "")), entry.message_id or ""))
        elif entry.type == "text":
            updates.append(message_chunk(str(data.get("text", "")), entry.message_id or ""))
        elif entry.type == "thinking" and data.get("thinking"):
            updates.append(thought_chunk(str(data["thinking"]), entry.message_id or ""))
        elif entry.type == "tool_call":
            display = data.get("display") or {}
            updates.append(
                start_tool_call(
                    str(data["id"]),
                    str(display.get("title") or data.get("name")),
                    kind=cast(ToolKind, display.get("kind") or "other"),
                    status="pending",
                    locations=[ToolCallLocation(path=p) for p in display.get("locations") or ()]
                    or None,
                    raw_input=data.get("input"),
                )
            )
        elif entry.type == "tool_result":
            display = data.get("display") or {}
            status = cast(
                ToolCallStatus,
                display.get("status") or ("failed" if data.get("isError") else "completed"),
            )
            updates.append(
                update_tool_call(
                    str(data["id"]), status=status, content=display.get("content") or None
                )
            )
        elif entry.type == "error" or (entry.type == "system" and data.get("text")):
            text = str(data.get("message") or data.get("text") or "")
            updates.append(message_chunk(text, entry.message_id or f"{entry.turn}-{entry.seq}"))
    return updates
