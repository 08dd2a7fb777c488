"""The agent's stdio as an SDK message transport, hardened against an untrusted agent.

The SDK's own newline framing dies on a line that is valid JSON but not an object
(`42`, `null`...) and drops unknown updates silently; its receive loop dies on an id it
cannot look up and on a line too deep to decode. This transport frames the same NDJSON
itself, hands the SDK only well-formed JSON-RPC objects (`cockpit.engine.wire`), reports every
line it had to drop, and taps each incoming message in arrival order before the SDK
dispatches it (the SDK runs every notification as its own task, which may reorder them).
What the tap takes (the stream of `session/update`s) is not passed on. Each request is
screened first, and waited for: one the SDK will refuse has its row stored before the SDK
sees it and answers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from cockpit.engine.wire import MAX_DEPTH, envelope_problem, may_nest_deeper, nested_deeper
from cockpit.lines import read_line

MAX_LINE = 64 * 1024 * 1024
"""A longer line from the agent is dropped, with a notice."""

PREVIEW = 120

YIELD_EVERY = 16
"""Messages read in a row before the transport lets the rest of the app run."""


def preview(line: bytes) -> str:
    """A short, printable rendering of a dropped line for a notice."""
    text = line[:PREVIEW].decode("utf-8", "replace")
    text = "".join(
        c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else "?" for c in text
    )
    return text + ("..." if len(line) > PREVIEW else "")


class AgentTransport:
    """JSON-RPC messages over an agent's stdin and stdout: the SDK's message transport
    protocol (`cockpit.compat.acp_private.Transport`), checked by mypy where the
    connection is made."""

    def __init__(
        self,
        stdout: asyncio.StreamReader,
        stdin: asyncio.StreamWriter,
        *,
        tap: Callable[[dict[str, Any]], bool],
        on_dropped: Callable[[str], None],
        screen: Callable[[dict[str, Any]], Awaitable[bool]] | None = None,
        max_line: int = MAX_LINE,
    ) -> None:
        self._stdout = stdout
        self._stdin = stdin
        self._tap = tap
        self._screen = screen
        """Awaited with each request; True when the SDK will refuse it (its row is stored)."""
        self._on_dropped = on_dropped
        self._max_line = max_line
        self._lock = asyncio.Lock()
        self._received = 0

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line."""
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "replace"
        )
        async with self._lock:
            if self._stdin.is_closing():
                raise ConnectionError("the agent's stdin is closed")
            self._stdin.write(data + b"\n")
            try:
                await self._stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as error:
                raise ConnectionError("the agent's stdin is closed") from error

    async def receive(self) -> dict[str, Any] | None:
        """The next JSON object from the agent, or None at end of stream.

        While the agent's output is buffered, reading never suspends; every
        YIELD_EVERY messages this yields to the event loop, so an agent streaming flat
        out cannot starve the screen, the keyboard or the other sessions.
        """
        while True:
            self._received += 1
            if self._received % YIELD_EVERY == 0:
                await asyncio.sleep(0)
            line = await self._read_line()
            if line is None:
                return None
            stripped = line.strip()
            if not stripped:
                continue
            try:
                message = json.loads(stripped)
            except ValueError:
                self._on_dropped(f"a line that is not JSON: {preview(stripped)}")
                continue
            except RecursionError:
                self._on_dropped(f"a line nested too deeply to read: {preview(stripped)}")
                continue
            if not isinstance(message, dict):
                self._on_dropped(f"a JSON line that is not an object: {preview(stripped)}")
                continue
            problem = envelope_problem(message)
            if problem is None and may_nest_deeper(stripped) and nested_deeper(message):
                problem = f"a message nested deeper than {MAX_DEPTH} levels"
            if problem is not None:
                self._on_dropped(f"{problem}: {preview(stripped)}")
                continue
            request = "id" in message and "method" in message
            if request and self._screen is not None and await self._screen(message):
                return message  # the SDK answers it with an error; its row is stored
            if self._tap(message):
                continue  # taken by the tap, in order; the SDK need not see it
            return message

    async def close(self) -> None:
        """Close the agent's stdin (the agent may take that as a request to exit)."""
        if not self._stdin.is_closing():
            self._stdin.close()

    async def _read_line(self) -> bytes | None:
        """One line, whatever its length; lines past `max_line` are skipped and reported."""
        line = await read_line(self._stdout, self._max_line)
        if line is None:
            return None
        if line.too_long:
            self._on_dropped(
                f"a line of {line.size:,} bytes, over the {self._max_line:,}-byte limit"
            )
            return b""
        return line.data
