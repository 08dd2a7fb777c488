"""`cockpit service --stdio`: the store's service, reached through this process's stdin and
stdout (what `ssh HOST cockpit service --stdio` gives a client on another machine).

It does not serve anything itself: it is a client that attaches to the store's service
(starting it, detached, when none runs) and copies bytes both ways. So the agents belong to
the service, not to this bridge: when the SSH connection drops, the bridge ends and the
agents go on.

One thing it changes on the way: the client's hello goes on with THIS machine's environment
in it. The client on the other machine sends none (its variables are not this machine's,
and its secrets must not cross the link), and a client that sent one anyway has it replaced.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

from cockpit import protocol
from cockpit.compat.acp_private import agent_stdout_writer
from cockpit.environment import Environment, current
from cockpit.remote.launch import STREAM_LIMIT, connect_or_start

CHUNK = 256 * 1024
"""Bytes copied at once."""

UNREACHABLE = 6
"""The exit code when no service can be reached or started (the command line's
EXIT_SERVICE: the client on the other end sees the bridge end)."""


async def _pump(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
    """Copy until `source` ends (or `target` goes away), waiting for `target` to take
    each piece."""
    with contextlib.suppress(ConnectionError, OSError):
        while chunk := await source.read(CHUNK):
            target.write(chunk)
            await target.drain()


def with_environment(line: bytes, environment: Environment) -> tuple[bytes, bool]:
    """`line` with `environment` put into it when it is a hello (and whether it was one);
    any other line as it is."""
    try:
        message = json.loads(line)
    except ValueError:
        return line, False
    if not isinstance(message, dict) or message.get("method") != protocol.HELLO:
        return line, False
    params = message.get("params")
    params = dict(params) if isinstance(params, dict) else {}
    params["environment"] = environment.to_wire()
    message["params"] = params
    return json.dumps(message, separators=(",", ":")).encode() + b"\n", True


async def _pump_to_service(
    source: asyncio.StreamReader, target: asyncio.StreamWriter, environment: Environment
) -> None:
    """Copy the client's lines to the service, its first hello with `environment` in it,
    then the rest as it comes."""
    with contextlib.suppress(ConnectionError, OSError, ValueError):
        while line := await source.readline():
            line, was_hello = with_environment(line, environment)
            target.write(line)
            await target.drain()
            if was_hello:
                break
    await _pump(source, target)


async def bridge(data: Path, idle: float | None = None) -> int:
    """Copy stdin to the service's socket and the socket to stdout until either ends."""
    loop = asyncio.get_running_loop()
    try:
        service_reader, service_writer = await connect_or_start(data, idle=idle)
    except ConnectionError as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return UNREACHABLE
    stdin = asyncio.StreamReader(limit=STREAM_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin.buffer)
    stdout = await agent_stdout_writer(sys.stdout.buffer)
    pumps = [
        asyncio.ensure_future(_pump_to_service(stdin, service_writer, current())),
        asyncio.ensure_future(_pump(service_reader, stdout)),
    ]
    try:
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pump in pumps:
            pump.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
        for writer in (service_writer, stdout):
            with contextlib.suppress(Exception):
                writer.close()
    return 0
