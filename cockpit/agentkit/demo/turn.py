"""One demo turn: the primitives every scenario streams with (text pieces, tool calls,
permission requests, reads and writes through the client, raw protocol lines), the pace
and cancel checks between them, and the record of the reply for the session's history.

A turn gets what it needs of the agent that runs it (`TurnNeeds`), never the agent: the
scenarios it runs are in `replies.py` and `tools.py`, which the agent's handler table
imports."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sys
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from acp.core import AgentSideConnection, RequestError
from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    ToolKind,
    UserMessageChunk,
)

from cockpit.agentkit.demo.history import Session, save_session
from cockpit.agentkit.demo.prompts import turn_seed
from cockpit.agentkit.permission_options import PERMISSION_OPTIONS
from store.workload import token_pieces

SLOW_DELAY = 0.05
"""Seconds between chunks in a slow turn: long enough for a client to cancel mid-stream
(`COCKPIT_DEMO_SLOW_DELAY` sets another: the test suite streams faster)."""


def slow_delay() -> float:
    """The delay between chunks of a slow turn: SLOW_DELAY, or the environment's."""
    try:
        return max(0.0, float(os.environ.get("COCKPIT_DEMO_SLOW_DELAY", SLOW_DELAY)))
    except ValueError:
        return SLOW_DELAY


PERMISSION_GRACE = 1.0
"""Seconds a cancelled turn still waits for the client to answer a pending permission."""
PARAGRAPH_BREAK = "\n\n"

Update = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
)
TextKind = Literal["agent", "thought"]
Ability = Literal["read", "write", "terminal"]
"""What a client may advertise in `initialize` that a scenario needs."""


class TurnCancelled(Exception):
    """Raised between chunks and steps once the client cancelled the turn."""


def text_chunk(kind: TextKind, text: str, message_id: str | None) -> Update:
    """One text chunk of a reply or a thought (the SDK builders take no message id)."""
    chunk: Update
    if kind == "thought":
        chunk = update_agent_thought_text(text)
    else:
        chunk = update_agent_message_text(text)
    if message_id is not None:
        chunk.message_id = message_id
    return chunk


def write_stderr(text: str) -> None:
    """Write `text` to stderr and flush, so it reaches the client before anything else."""
    sys.stderr.write(text)
    sys.stderr.flush()


async def flush_protocol(writer: asyncio.StreamWriter) -> None:
    """Wait until everything written to the protocol stream has left the process."""
    await writer.drain()
    for _ in range(200):
        if writer.transport.get_write_buffer_size() == 0:
            return
        await asyncio.sleep(0.01)


@dataclass(frozen=True)
class TurnNeeds:
    """What a turn needs of the agent that runs it."""

    conn: AgentSideConnection
    """The client connection."""
    writer: asyncio.StreamWriter
    """The protocol stream itself, for the scenarios that write raw lines on it."""
    can: Callable[[Ability], bool]
    """Whether the client advertised an ability in `initialize`."""
    scenarios: dict[str, str]
    """The scenario words and what each does, in running order (the tour lists them)."""
    slow: bool
    """True when every turn streams slowly (the agent's `--slow`)."""


class Turn:
    """One prompt being answered: the streaming primitives, cancel checks and the record
    of the reply messages as a client folds them (for the session history)."""

    def __init__(self, needs: TurnNeeds, session: Session, text: str) -> None:
        self.prompt = text
        self.conn = needs.conn
        self.writer = needs.writer
        self.can = needs.can
        self.scenarios = needs.scenarios
        self.session = session
        self.session_id = session.session_id
        self.cancel = session.cancel
        self.rng = random.Random(turn_seed(text))
        self.slow = needs.slow
        self.delay = slow_delay()
        self.replies: list[str] = []
        self.reply_open = False
        """True while the last update was an id-less reply: a client appends the next one."""

    # -- pacing and cancel

    def check(self) -> None:
        """Stop the turn if the client cancelled it."""
        if self.cancel.is_set():
            raise TurnCancelled

    async def pause(self) -> None:
        """Yield between chunks (and wait in a slow turn) so a cancel can arrive."""
        if self.slow:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.cancel.wait(), self.delay)
        else:
            await asyncio.sleep(0)
        self.check()

    # -- sending

    async def update(self, update: Update) -> None:
        """Send any non-text update; it ends the open reply, as it does in a client."""
        self.reply_open = False
        await self.conn.session_update(session_id=self.session_id, update=update)

    async def chunk(self, kind: TextKind, text: str, message_id: str | None = None) -> None:
        """Send one text chunk as is, with no opener and no change to the record."""
        update = text_chunk(kind, text, message_id)
        await self.conn.session_update(session_id=self.session_id, update=update)

    async def stream(
        self,
        text: str,
        kind: TextKind = "agent",
        message_id: str | None = None,
        whole: bool = False,
        piece_size: int | None = None,
    ) -> None:
        """Stream a block: an empty opening chunk, then 3-4 character pieces (exactly
        `piece_size` when given, or the text as one chunk when `whole`), yielding between
        chunks."""
        continuing = kind == "agent" and message_id is None and self.reply_open
        if continuing and not whole:
            text = PARAGRAPH_BREAK + text  # a client glues this onto the open reply
        if kind == "agent" and not continuing:
            self.replies.append("")
        self.reply_open = False
        await self.chunk(kind, "", message_id)
        if whole:
            pieces: Iterable[str] = [text]
        elif piece_size:
            pieces = (text[i : i + piece_size] for i in range(0, len(text), piece_size))
        else:
            pieces = token_pieces(text, self.rng)
        for piece in pieces:
            await self.pause()
            await self.chunk(kind, piece, message_id)
            if kind == "agent":
                self.replies[-1] += piece
        self.reply_open = kind == "agent" and message_id is None

    async def say(self, text: str) -> None:
        """Stream an id-less reply."""
        await self.stream(text)

    async def raw_line(self, line: str) -> None:
        """Write one whole line straight onto the protocol stream, bypassing the SDK."""
        self.writer.write(line.encode("utf-8") + b"\n")
        await self.writer.drain()

    # -- tool calls

    def call_id(self) -> str:
        """A fresh tool call id."""
        return f"call_{uuid.uuid4().hex[:12]}"

    async def start_tool(
        self,
        call_id: str,
        title: str,
        kind: ToolKind,
        path: str | None = None,
        content: Sequence[Any] | None = None,
    ) -> None:
        """Report a new pending tool call."""
        locations = [ToolCallLocation(path=path)] if path else None
        raw_input = {"path": path} if path else None
        await self.update(
            start_tool_call(
                call_id,
                title,
                kind=kind,
                status="pending",
                content=content,
                locations=locations,
                raw_input=raw_input,
            )
        )

    async def finish_tool(self, call_id: str, ok: bool, text: str, *extra: Any) -> None:
        """Report a tool call completed or failed, with `extra` content and `text`."""
        content = [*extra, tool_content(text_block(text))]
        status: Literal["completed", "failed"] = "completed" if ok else "failed"
        await self.update(update_tool_call(call_id, status=status, content=content))

    async def progress(self, call_id: str, *content: Any) -> None:
        """Mark a tool call in progress, replacing its content when some is given."""
        await self.update(
            update_tool_call(call_id, status="in_progress", content=list(content) or None)
        )

    async def ask_permission(self, call: ToolCallUpdate) -> str:
        """The chosen option id (an unknown one counts as "reject"), or "cancelled". Every
        call asks: remembering "Always allow" is left to the client. After a cancel the
        client gets a short grace to answer "cancelled" (as it must) before the turn stops
        waiting."""
        request = asyncio.ensure_future(
            self.conn.request_permission(
                session_id=self.session_id, tool_call=call, options=PERMISSION_OPTIONS
            )
        )
        cancelled = asyncio.ensure_future(self.cancel.wait())
        await asyncio.wait({request, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        cancelled.cancel()
        try:
            response = await asyncio.wait_for(request, None if request.done() else PERMISSION_GRACE)
        except TimeoutError:
            return "cancelled"
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome) or self.cancel.is_set():
            return "cancelled"
        known = {option.option_id for option in PERMISSION_OPTIONS}
        return outcome.option_id if outcome.option_id in known else "reject"

    # -- client capabilities

    async def read_file(self, path: str, limit: int | None = None) -> str:
        """Read through the client (fs/read_text_file); a RequestError when it refuses."""
        if not self.can("read"):
            raise RequestError.method_not_found("fs/read_text_file")
        response = await self.conn.read_text_file(
            session_id=self.session_id, path=path, limit=limit
        )
        return response.content

    async def write_file(self, path: str, content: str) -> None:
        """Write through the client (fs/write_text_file); a RequestError when it refuses."""
        if not self.can("write"):
            raise RequestError.method_not_found("fs/write_text_file")
        await self.conn.write_text_file(session_id=self.session_id, path=path, content=content)

    # -- history

    def commit(self) -> None:
        """Append the prompt and the reply messages to the history and save it (once)."""
        if self.prompt:
            self.session.history.append({"role": "user", "text": self.prompt})
        self.prompt = ""
        self.session.history.extend(
            {"role": "agent", "text": reply} for reply in self.replies if reply
        )
        self.replies = []
        save_session(self.session)
