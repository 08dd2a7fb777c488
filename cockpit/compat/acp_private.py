"""Every private part of the ACP SDK (and of asyncio, for the agents' pipes) that Cockpit
uses, and why: nothing else in Cockpit names an underscored SDK module or a private asyncio
class. `tests/test_compat_acp.py` checks each one against what is installed, so an upgrade
that moves one fails there, saying which, not as a dead session or a hung agent. Checked
with agent-client-protocol 0.12.1 (`TESTED_WITH`) and Python 3.11.
"""

from __future__ import annotations

import asyncio
from typing import Any, BinaryIO

from acp import _transport
from acp.core import ClientSideConnection

TESTED_WITH = "0.12.1"
"""The agent-client-protocol version these uses were checked against."""

Transport = _transport.Transport
"""The SDK's message-level transport protocol (`acp._transport.Transport`: `send(message)`,
`receive()` -> the next message, or None at end of stream, and `close()`). The SDK documents
passing one to `ClientSideConnection(client, transport)`, which recognises it with a runtime
`isinstance` check and then moves whole JSON-RPC messages through it instead of framing the
bytes itself; but the protocol's module is private. Cockpit's `AgentTransport` implements it
so that Cockpit frames the agent's stdout itself (a line that is valid JSON but not an
object kills the SDK's own framing) and takes every `session/update` in arrival order
before the SDK dispatches it (as one task each, which may reorder them); its
`LineTransport` (`cockpit.channel.transport`) implements it for the service's socket, whose
lines it reads with a bound and without a traceback for each one that is no message."""


async def agent_stdout_writer(pipe: BinaryIO) -> asyncio.StreamWriter:
    """A stream writer on an agent's protocol output `pipe` (its stdout, or a private
    duplicate of it), for `acp.run_agent(input_stream=...)`.

    asyncio has no public way to build a `StreamWriter` over a write pipe: the writer needs
    a protocol that implements `drain()` flow control, and the one asyncio's own streams
    use, `asyncio.streams.FlowControlMixin`, is private. Without it an agent could not wait
    for a slow client to read, and would buffer its backlog without bound.
    """
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    return asyncio.StreamWriter(transport, protocol, None, loop)


async def send_request(conn: ClientSideConnection, method: str, params: dict[str, Any]) -> Any:
    """Send a request the SDK's client connection has no method for (`logout`: ACP has it
    since 0.13.3, SDK 0.12.1 does not), through the connection's own JSON-RPC layer
    (`ClientSideConnection._conn`), so its answer and errors come back as the SDK's."""
    return await conn._conn.send_request(method, params)
