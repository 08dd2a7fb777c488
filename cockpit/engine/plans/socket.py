"""The engine's socket for the plan tool: one call per connection, one JSON line asked and
one answered (`cockpit.plan_protocol`), from a process of this user only."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from cockpit.channel.peer import foreign_peer
from cockpit.paths import private_dir
from cockpit.plan_protocol import MOST_LINE_BYTES, answer_line, read_line

log = logging.getLogger(__name__)

READ_TIMEOUT = 10.0
"""Seconds a plan server has to send its call once connected."""

UNREADABLE = "Not done: Cockpit could not read the call (one JSON object on one line)."


class PlanSocket:
    """A Unix socket in a private folder that hands each call to `answer`."""

    def __init__(self, answer: Callable[[dict[str, Any]], Awaitable[bytes]]) -> None:
        self._answer = answer
        self._server: asyncio.base_events.Server | None = None
        self.path: Path | None = None

    async def open(self, path: Path) -> None:
        """Listen at `path` (its folder made owner-only first; a link there is refused)."""
        await asyncio.to_thread(private_dir, path.parent, follow=False)
        self._server = await asyncio.start_unix_server(
            self._serve, path=os.fspath(path), limit=MOST_LINE_BYTES + 1
        )
        os.chmod(path, 0o600)
        self.path = path

    async def close(self) -> None:
        """Stop listening and take the socket away."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        if self.path is not None:
            await asyncio.to_thread(self.path.unlink, missing_ok=True)
            self.path = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            foreign = foreign_peer(writer.get_extra_info("socket"))
            if foreign is not None:
                log.warning("A plan call from %s was refused.", foreign)
                return
            try:
                async with asyncio.timeout(READ_TIMEOUT):
                    line = await reader.readline()
            except (ValueError, asyncio.LimitOverrunError):  # longer than any call may be
                writer.write(answer_line(False, "Not done: the call was too long."))
                return
            request = read_line(line)
            reply = await self._answer(request) if request else answer_line(False, UNREADABLE)
            writer.write(reply)
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        except Exception:  # never the engine's end: the plan server hears nothing
            log.exception("A plan call could not be answered.")
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
