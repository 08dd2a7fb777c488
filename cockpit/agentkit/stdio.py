"""The protocol streams of an agent run over stdio, hardened against stray output.

An agent's stdout IS the protocol: one `print` from the agent or a library it loads would
corrupt it. So the protocol gets a private duplicate of fd 1, and fd 1 and `sys.stdout`
are pointed at stderr, where stray output is only noise in a log. The writer on that
duplicate needs a private asyncio class: `cockpit.compat.acp_private` builds it.
"""

from __future__ import annotations

import asyncio
import os
import selectors
import sys
import threading
from typing import Any, cast

from acp.core import Agent, run_agent

from cockpit.compat.acp_private import agent_stdout_writer

READ_LIMIT = 50 * 1024 * 1024
"""The longest line the agent reads from the client (a prompt holding big files)."""


async def protocol_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams on stdin and a private copy of stdout; fd 1 and sys.stdout then point at
    stderr, so a stray print (ours or a library's) can never corrupt the protocol."""
    loop = asyncio.get_running_loop()
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=READ_LIMIT)
    if pollable(sys.stdin.fileno()):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:
        pump = threading.Thread(target=pump_file, args=(loop, reader), daemon=True)
        pump.start()
    writer = await agent_stdout_writer(protocol_out)
    return reader, writer


def pollable(fd: int) -> bool:
    """Whether the event loop can wait on `fd`: a pipe, a socket or a terminal can; a
    regular file or /dev/null cannot (epoll refuses them, and asyncio only logs that,
    leaving the agent waiting for good)."""
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(fd, selectors.EVENT_READ)
        except (PermissionError, ValueError):
            return False
    return True


def pump_file(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    """Feed `reader` from a stdin the loop cannot wait on (a file, or /dev/null), then end
    it: at the end of the file the agent stops, as when a client leaves."""
    while chunk := os.read(sys.stdin.fileno(), 65536):
        loop.call_soon_threadsafe(reader.feed_data, chunk)
    loop.call_soon_threadsafe(reader.feed_eof)


async def serve_agent(
    agent: Any, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Serve ACP to the client on the protocol streams until it closes stdin.

    The agents are plain classes on purpose: `acp.Agent` is a Protocol whose stubs would
    answer the methods an agent does not implement with null instead of "method not
    found", so the agent is only cast to it. (The SDK names the streams from the client's
    side: its input is what the agent writes.)"""
    await run_agent(
        cast(Agent, agent), input_stream=writer, output_stream=reader, use_unstable_protocol=True
    )
