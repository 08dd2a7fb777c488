"""A stand-in for the engine's end of the plan socket: an asyncio Unix socket server
speaking `cockpit.plan_protocol` in a private temporary folder, which records every call
and answers as a test tells it (by default it keeps one plan, as the engine would)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cockpit.plan_protocol import (
    MOST_LINE_BYTES,
    SESSION_VARIABLE,
    SOCKET_VARIABLE,
    TOKEN_VARIABLE,
    UPDATE,
    answer_line,
    plan_to_wire,
    progress,
    read_items,
    read_line,
)

HANG = b""
"""An answer that is never sent: the call waits until the server gives up."""


@dataclass
class PlanSocket:
    """The socket's path, the calls it got (each request as read), the answer lines still
    to send in order (HANG for none), and the plan it keeps when none are queued."""

    path: Path
    calls: list[dict[str, Any]] = field(default_factory=list)
    answers: list[bytes] = field(default_factory=list)
    plan: dict[str, Any] | None = None
    hanging: set[asyncio.Task[Any]] = field(default_factory=set)
    held: asyncio.Event | None = None
    """When given, every answer waits until it is set."""

    def environment(self, session: str = "s-1", token: str = "secret-1") -> dict[str, str]:
        """The variables the engine hands the plan server for `session`."""
        return {SOCKET_VARIABLE: str(self.path), SESSION_VARIABLE: session, TOKEN_VARIABLE: token}

    def methods(self) -> list[str]:
        """The methods called, in order."""
        return [str(call.get("method")) for call in self.calls]

    def keep(self, asked: dict[str, Any]) -> bytes:
        """The engine's answer in short: save an update as a new revision, read it back."""
        if asked.get("method") == UPDATE:
            params = asked.get("params") or {}
            items = read_items(params.get("items"))
            if isinstance(items, str):
                return answer_line(False, items, self.plan)
            revision = (self.plan or {}).get("revision", 0) + 1
            self.plan = plan_to_wire(revision, "tool", items, params.get("explanation"))
            return answer_line(True, f"Saved revision {revision}: {progress(items)}.", self.plan)
        return answer_line(True, "The plan as it stands.", self.plan)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One call: read the request line, record it, answer as told."""
        try:
            asked = read_line(await reader.readline()) or {}
            self.calls.append(asked)
            if self.held is not None:
                await self.held.wait()
            line = self.answers.pop(0) if self.answers else self.keep(asked)
            if line == HANG:
                task = asyncio.current_task()
                if task is not None:
                    self.hanging.add(task)
                await asyncio.Event().wait()
            writer.write(line)
            await writer.drain()
        finally:
            writer.close()


@contextlib.asynccontextmanager
async def plan_socket() -> AsyncIterator[PlanSocket]:
    """A PlanSocket listening in a fresh owner-only folder (short, as socket paths must
    be), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="cockpit-plan-"))
    socket = PlanSocket(folder / "plan.sock")
    server = await asyncio.start_unix_server(socket.serve, path=socket.path, limit=MOST_LINE_BYTES)
    try:
        yield socket
    finally:
        server.close()
        for task in socket.hanging:
            task.cancel()
        shutil.rmtree(folder, ignore_errors=True)
