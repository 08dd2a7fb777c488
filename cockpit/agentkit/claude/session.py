"""A Claude session: its settings, its chunk log (in memory and on disk), the running turn
and the prompts queued behind it; the options a client may change; and a prompt as the
text the model reads."""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from acp.schema import (
    EmbeddedResourceContentBlock,
    PromptResponse,
    ResourceContentBlock,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    StopReason,
    TextContentBlock,
    TextResourceContents,
)

from cockpit.acp_types import ContentBlock
from cockpit.agentkit.claude.config import (
    MAX_TOKENS,
    MODEL_OPTION,
    THINKING,
    THINKING_OPTION,
    models,
)
from cockpit.agentkit.claude.instructions import TOOLS, system_prompt
from cockpit.agentkit.claude.mcp_tools import McpServers
from cockpit.agentkit.data import configured_data_dir
from cockpit.agentkit.settings import select_option
from cockpit.paths import data_dir
from store.chunk_log import ChunkLog
from store.entries import Draft, Entry
from store.requests import RequestSpec, thinking_config


def data_root() -> Path:
    """The data dir the logs live under: COCKPIT_DATA_DIR (set by Cockpit), else COCKPIT_HOME,
    else the user data folder Cockpit itself uses."""
    return configured_data_dir() or data_dir()


@dataclass
class Queued:
    """A prompt that arrived while a turn ran, and the answer its request waits for."""

    text: str
    answer: asyncio.Future[StopReason]


@dataclass
class Session:
    """One session: its settings, its log (in memory and on disk) and the running turn."""

    id: str
    cwd: str
    log: ChunkLog
    entries: list[Entry]
    mode: str = "ask"
    model: str = ""
    thinking: str = "off"
    task: asyncio.Task[PromptResponse] | None = None
    queued: list[Queued] = field(default_factory=list)
    """Prompts that arrived while a turn ran, waiting for the next step boundary."""
    servers: McpServers = field(default_factory=McpServers)
    """The MCP servers the client handed this session (started at its first turn)."""

    def spec(self) -> RequestSpec:
        """The request settings of a turn that starts now (a turn keeps them to its end):
        the agent's own tools, then those of the MCP servers that started."""
        return RequestSpec(
            model=self.model,
            max_tokens=MAX_TOKENS,
            system=system_prompt(self.cwd),
            tools=TOOLS + self.servers.definitions(),
            thinking=thinking_config(self.model, self.thinking, MAX_TOKENS),
        )

    async def append(self, turn: str, step: int, draft: Draft) -> Entry:
        """Write a sealed block to the log (committed on return) and keep it in memory. A
        cancel cannot split the two: memory and disk always hold the same entries, which is
        what lets `cockpit inspect` rebuild exactly what was sent."""

        async def write() -> Entry:
            entry = await self.log.append(turn, step, draft)
            bisect.insort(self.entries, entry, key=lambda held: held.seq)
            return entry

        return await asyncio.shield(write())

    async def save_settings(self) -> None:
        """Store the settings in the log, so a load restores them."""
        await self.log.set_meta(
            cwd=self.cwd, mode=self.mode, model=self.model, thinking=self.thinking
        )


def config_options(
    session: Session,
) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The model selector and the thinking selector, with the session's values selected."""
    return [
        select_option(MODEL_OPTION, "Model", "model", session.model, models()),
        select_option(THINKING_OPTION, "Thinking", "thought_level", session.thinking, THINKING),
    ]


def prompt_text(blocks: Sequence[ContentBlock]) -> str:
    """A prompt as the text the model reads: text blocks, embedded files, linked files."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f'\n<file uri="{resource.uri}">\n{resource.text}\n</file>\n')
            else:
                parts.append(f"\n[binary file {resource.uri} not included]\n")
        elif isinstance(block, ResourceContentBlock):
            parts.append(f" @{block.uri} ")
        else:
            parts.append(f"\n[{block.type} not included]\n")
    return "".join(parts)
