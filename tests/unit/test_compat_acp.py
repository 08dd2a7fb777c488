"""Every private part of the ACP SDK and of asyncio that Cockpit uses
(`cockpit.compat.acp_private`) still exists and behaves as Cockpit expects: when the SDK or
Python moves, a test here fails saying which item changed and what to re-check, not a
session that never starts or an agent that hangs."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.core import ClientSideConnection

from cockpit.compat.acp_private import TESTED_WITH, Transport, agent_stdout_writer, send_request
from cockpit.engine.transport import AgentTransport

WHERE = "see cockpit/compat/acp_private.py"
RECHECK = (
    "re-check every item in cockpit/compat/acp_private.py against the new SDK (each "
    "docstring says what Cockpit relies on), then set TESTED_WITH"
)


def test_the_installed_sdk_is_the_one_every_item_was_checked_with() -> None:
    installed = version("agent-client-protocol")
    assert installed == TESTED_WITH, (
        f"agent-client-protocol is {installed}, not {TESTED_WITH}: {RECHECK}"
    )


# -- acp._transport.Transport ------------------------------------------------------------------


def test_the_sdk_still_defines_its_transport_protocol_where_cockpit_imports_it() -> None:
    module = importlib.import_module("acp._transport")
    assert getattr(module, "Transport", None) is Transport, (
        f"acp._transport no longer defines Transport: Cockpit's AgentTransport implements it; {WHERE}"
    )
    assert getattr(Transport, "_is_protocol", False), (
        f"acp._transport.Transport is no longer a Protocol; {WHERE}"
    )
    assert getattr(Transport, "_is_runtime_protocol", False), (
        "acp._transport.Transport is no longer runtime-checkable: ClientSideConnection may no "
        f"longer recognise Cockpit's AgentTransport as a transport; {WHERE}"
    )


@pytest.mark.parametrize(
    ("name", "parameters"),
    [("send", ("self", "message")), ("receive", ("self",)), ("close", ("self",))],
)
def test_the_transport_protocol_still_has_the_methods_cockpit_implements(
    name: str, parameters: tuple[str, ...]
) -> None:
    method = getattr(Transport, name, None)
    assert method is not None, (
        f"acp._transport.Transport no longer has {name}(): Cockpit's AgentTransport implements "
        f"it; {WHERE}"
    )
    assert inspect.iscoroutinefunction(method), (
        f"acp._transport.Transport.{name} is no longer a coroutine; {WHERE}"
    )
    assert tuple(inspect.signature(method).parameters) == parameters, (
        f"acp._transport.Transport.{name} now takes {inspect.signature(method)}, where "
        f"Cockpit's AgentTransport implements {name}{parameters}; {WHERE}"
    )


def test_the_transport_protocol_asks_for_nothing_more() -> None:
    members = {m for m in dir(Transport) if not m.startswith("_")}
    assert members == {"send", "receive", "close"}, (
        f"acp._transport.Transport now asks for {sorted(members)}, where Cockpit's "
        f"AgentTransport implements send, receive and close; {WHERE}"
    )


async def streams_on(sock: socket.socket) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(sock=sock)


@pytest.fixture
async def wire() -> AsyncIterator[
    tuple[AgentTransport, asyncio.StreamReader, asyncio.StreamWriter]
]:
    """Cockpit's transport on one end of a socket pair, and the far (the agent's) end."""
    ours, theirs = socket.socketpair()
    reader, writer = await streams_on(ours)
    agent_reader, agent_writer = await streams_on(theirs)
    transport = AgentTransport(reader, writer, tap=lambda message: False, on_dropped=print)
    try:
        yield transport, agent_reader, agent_writer
    finally:
        await transport.close()
        agent_writer.close()


async def test_cockpits_transport_is_a_transport_to_the_sdk_at_run_time(
    wire: tuple[AgentTransport, asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    transport, _, _ = wire
    assert isinstance(transport, Transport), (
        "Cockpit's AgentTransport no longer passes the SDK's isinstance(..., Transport) check: "
        f"ClientSideConnection would refuse it; {WHERE}"
    )


async def test_a_client_connection_on_a_transport_moves_whole_messages_through_it(
    wire: tuple[AgentTransport, asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    """`ClientSideConnection(client, transport)`: what Cockpit makes for every agent. The
    request goes out through the transport as one line, and the answer read back through
    it resolves the call."""
    transport, agent_reader, agent_writer = wire

    class Nobody:
        """A client the agent never calls."""

    try:
        conn = ClientSideConnection(Nobody(), transport)  # type: ignore[arg-type]
    except TypeError as error:
        raise AssertionError(
            f"ClientSideConnection no longer takes a Transport as its only stream ({error}); {WHERE}"
        ) from None
    try:
        answer = asyncio.ensure_future(conn.initialize(protocol_version=PROTOCOL_VERSION))
        request = json.loads(await asyncio.wait_for(agent_reader.readline(), 10))
        assert request["method"] == "initialize", (
            f"a request through the connection reached the agent as {request!r}; {WHERE}"
        )
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": {"protocolVersion": 1}}
        agent_writer.write(json.dumps(reply).encode() + b"\n")
        response = await asyncio.wait_for(answer, 10)
        assert response.protocol_version == 1, (
            f"the agent's answer read through Cockpit's transport came back as {response!r}; "
            f"{WHERE}"
        )
    finally:
        await conn.close()


# -- asyncio.streams.FlowControlMixin -----------------------------------------------------------


def test_asyncio_still_has_the_flow_control_protocol_its_streams_use() -> None:
    mixin: Any = getattr(asyncio.streams, "FlowControlMixin", None)
    assert mixin is not None, (
        "asyncio.streams no longer defines FlowControlMixin: agent_stdout_writer (the bundled "
        f"agents' protocol output) needs another protocol that implements drain(); {WHERE}"
    )
    assert issubclass(mixin, asyncio.Protocol)
    assert hasattr(mixin, "_drain_helper"), (
        "asyncio.streams.FlowControlMixin no longer has _drain_helper, which "
        f"StreamWriter.drain() awaits: agent_stdout_writer's drain() would fail; {WHERE}"
    )


async def test_an_agents_stdout_writer_writes_and_drains_through_a_pipe() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "wb", buffering=0) as pipe, os.fdopen(read_end, "rb") as out:
        writer = await agent_stdout_writer(pipe)
        line = b'{"jsonrpc":"2.0","method":"x"}\n' * 4096  # past a pipe buffer: drain waits
        reading = asyncio.ensure_future(asyncio.to_thread(out.read, len(line)))
        writer.write(line)
        try:
            await asyncio.wait_for(writer.drain(), 10)
        except Exception as error:
            raise AssertionError(
                f"agent_stdout_writer's StreamWriter could not drain ({error!r}): asyncio's "
                f"FlowControlMixin changed; {WHERE}"
            ) from error
        assert await asyncio.wait_for(reading, 10) == line
        writer.close()


# -- ClientSideConnection._conn.send_request (logout) -------------------------------------------


async def test_a_request_the_sdk_has_no_method_for_still_reaches_the_agent() -> None:
    """`logout` goes out through the connection's JSON-RPC layer: the tiny agent (whose SDK
    routes no `logout`) answers it "method not found", naming it."""
    tiny = Path(__file__).parents[1] / "support" / "tiny_agent.py"

    class Quiet:
        def __getattr__(self, name: str) -> Any:
            raise AttributeError(name)

    async with spawn_agent_process(Quiet(), sys.executable, str(tiny)) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        with pytest.raises(RequestError) as refused:
            await send_request(conn, "logout", {})
    assert refused.value.code == -32601, f"logout did not reach the agent; {WHERE}"
    assert "logout" in str(refused.value.data)
