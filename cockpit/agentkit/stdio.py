"""The protocol streams of an agent run over stdio, hardened against stray output.

An agent's stdout IS the protocol: one `print` from the agent or a library it loads would
corrupt it. So the protocol gets a private duplicate of fd 1, and fd 1 and `sys.stdout`
are pointed at stderr, where stray output is only noise in a log. The writer on that
duplicate needs a private asyncio class: `cockpit.compat.acp_private` builds it.
"""

from __future__ import annotations

import asyncio
import os
import sys
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
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    writer = await agent_stdout_writer(protocol_out)
    return reader, writer


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
