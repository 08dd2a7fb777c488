"""The service's socket (or the pipes of `--stdio`) as the ACP SDK's message transport:
JSON-RPC messages as lines, read with bounds on the side that reads someone it need not
trust.

The SDK's own framing holds a line of any length whole, logs a traceback for every line
that is not JSON (any client could grow the service's log without end) and dies on JSON
that is no object. This transport frames the same lines itself: the service reads a
client's requests up to `cockpit.bounds.REQUEST_BYTES` each, skips what is not a message
and says so once per kind to `on_problem` (never what the line held: a prompt, an
environment), and stands a line past the bound in for a request of its own (OVERSIZED)
that the service answers with an error, so the client hears why. A client refuses to send
a request past the bound at all.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from cockpit.bounds import RequestTooLarge, encoded, request_refusal
from cockpit.lines import read_line

OVERSIZED = "cockpit/oversized"
"""The method of the request that stands for a line past the bound, with `{bytes}`: its
answer (an error) goes to the id the line began with, when it began as the SDK writes one,
so the client's request fails saying why instead of waiting for good."""

YIELD_EVERY = 16
"""Messages read in a row before the transport lets the rest of the service run: a client
whose requests are all buffered cannot keep the others (and `status`) waiting."""

_LEADING_ID = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,128}")'
)
"""The id at the head of a request as the SDK writes one (`{"jsonrpc":"2.0","id":7,...`)."""

Check = Callable[[Mapping[str, Any]], str | None]
"""What makes a decoded message unusable (a sentence with none of its content), or None."""


class LineTransport:
    """JSON-RPC messages over a stream pair, one a line: the SDK's message transport
    protocol (`cockpit.compat.acp_private.Transport`), checked by mypy where the
    connection is made."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_line: int | None = None,
        max_send: int | None = None,
        check: Check | None = None,
        on_problem: Callable[[str], None] | None = None,
        gate: asyncio.Semaphore | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._max_line = max_line
        self._max_send = max_send
        self._check = check
        self._on_problem = on_problem or (lambda problem: None)
        self._gate = gate
        self._lock = asyncio.Lock()
        self._received = 0
        self._closed = False
        self.failure: str | None = None
        """How reading ended when it did not end cleanly (the name of the error)."""

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line (RequestTooLarge, before anything is written, when
        it is longer than `max_send`). An answer to a peer that has gone is dropped: no one
        is left to tell (a request or a notification raises ConnectionError)."""
        data = encoded(message)
        if self._max_send is not None and len(data) > self._max_send:
            raise RequestTooLarge(request_refusal(len(data), "it was not sent"))
        async with self._lock:
            try:
                if self._writer.is_closing():
                    raise ConnectionResetError("the connection is closed")
                self._writer.write(data)
                await self._writer.drain()
            except (BrokenPipeError, ConnectionResetError) as error:
                if "method" in message:
                    raise ConnectionError("the connection is closed") from error

    async def receive(self) -> dict[str, Any] | None:
        """The next message, or None at the end of the stream. With a `gate`, a request or
        a notification holds one of its places until whoever handles it releases it: past
        as many at once, nothing more is read."""
        while True:
            self._received += 1
            if self._received % YIELD_EVERY == 0:
                await asyncio.sleep(0)
            if self._gate is not None:
                await self._gate.acquire()
            message = await self._next()
            if message is None or self._closed:
                return None  # the end (what came after a close is not taken)
            if "method" in message:
                return message  # a request or a notification keeps its place in the gate
            if self._gate is not None:
                self._gate.release()
            if message:
                return message  # a response

    async def _next(self) -> dict[str, Any] | None:
        """The next line as a message: None at the end, {} for a line skipped."""
        try:
            line = await read_line(self._reader, self._max_line)
        except (ConnectionError, OSError) as error:
            self.failure = type(error).__name__
            return None
        if line is None:
            return None
        if line.too_long:
            self._on_problem(f"a line of {line.size:,} bytes, over the {self._max_line:,} taken")
            found = _LEADING_ID.match(line.data)
            request_id = json.loads(found.group(1)) if found else None
            return {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": OVERSIZED,
                "params": {"bytes": line.size},
            }
        text = line.data.strip()
        if not text:
            return {}
        try:
            message = json.loads(text)
        except ValueError:
            self._on_problem("a line that is not JSON")
            return {}
        except RecursionError:
            self._on_problem("a line nested too deeply to read")
            return {}
        if not isinstance(message, dict):
            self._on_problem("a JSON line that is not an object")
            return {}
        problem = self._check(message) if self._check is not None else None
        if problem is not None:
            self._on_problem(problem)
            return {}
        return message

    async def close(self) -> None:
        """Close the stream (the other end sees the connection end); nothing more is read."""
        self._closed = True
        self._writer.close()
