"""The client's end of a test's ACP connection to a bundled agent: every session update
as it arrives, and each permission asked, answered with the option `answer`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)


@dataclass
class RecordingClient:
    """What the agent sent the client, and the permissions it asked."""

    answer: str = "allow"
    updates: list[Any] = field(default_factory=list)
    asked: list[ToolCallUpdate] = field(default_factory=list)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, options: Any, session_id: str, tool_call: ToolCallUpdate, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append(tool_call)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    def reply(self) -> str:
        """The agent's message text, all chunks joined."""
        return "".join(
            u.content.text
            for u in self.updates
            if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock)
        )

    def tool_calls(self) -> list[tuple[str, str, str]]:
        """Each tool call as (title, final status, final text), in the order started."""
        titles = {u.tool_call_id: u.title for u in self.updates if isinstance(u, ToolCallStart)}
        ends: dict[str, tuple[str, str]] = {}
        for update in self.updates:
            if isinstance(update, ToolCallProgress) and update.status in ("completed", "failed"):
                block = (update.content or [])[-1]
                ends[update.tool_call_id] = (update.status, block.content.text)
        return [(title, *ends[call_id]) for call_id, title in titles.items()]
