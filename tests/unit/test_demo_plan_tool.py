"""The demo agent's `mcp` scenario, the agent run for real over ACP: it starts the
`cockpit-plan` server it was handed (real MCP stdio), publishes a plan, advances it and
reads it back, each call a tool call in the transcript, against a stand-in for the
engine's plan socket."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from acp import Client, spawn_agent_process
from acp.core import ClientSideConnection
from acp.schema import (
    EnvVariable,
    McpServerStdio,
    TextContentBlock,
)

from cockpit.plan_protocol import SERVER_NAME, answer_line
from tests.support.acp_client import RecordingClient
from tests.support.checkout import TREE, tree_first
from tests.support.plan_socket import plan_socket


def plan_tool(env: Mapping[str, str]) -> McpServerStdio:
    """The plan server as the engine hands it to an agent."""
    given = tree_first({**env, "COCKPIT_PLAN_TIMEOUT": "1"})
    return McpServerStdio(
        name=SERVER_NAME,
        command=sys.executable,
        args=["-m", "cockpit.plan_server"],
        env=[EnvVariable(name=name, value=value) for name, value in given.items()],
    )


@asynccontextmanager
async def demo_agent(home: Path) -> AsyncIterator[tuple[ClientSideConnection, RecordingClient]]:
    transcript = RecordingClient()
    env = tree_first({"HOME": str(home), "COCKPIT_DATA_DIR": str(home / "data")})
    async with spawn_agent_process(
        cast(Client, transcript),
        sys.executable,
        str(TREE / "acp" / "demo_agent.py"),
        env=env,
        transport_kwargs={"stderr": None},
    ) as (conn, _process):
        await conn.initialize(protocol_version=1)
        yield conn, transcript


async def run_prompt(
    conn: ClientSideConnection, folder: Path, servers: list[Any], text: str = "mcp"
) -> str:
    session = await conn.new_session(cwd=str(folder), mcp_servers=servers)
    response = await asyncio.wait_for(
        conn.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text=text)]
        ),
        60,
    )
    return response.stop_reason


async def test_the_demo_publishes_advances_and_reads_its_plan_through_the_tool(
    tmp_path: Path,
) -> None:
    async with plan_socket() as socket, demo_agent(tmp_path) as (conn, transcript):
        env = socket.environment(session="cockpit-session-3", token="token-3")
        assert await run_prompt(conn, tmp_path, [plan_tool(env)]) == "end_turn"
    assert socket.methods() == ["update_plan", "update_plan", "read_plan"]
    assert {(c["session"], c["token"]) for c in socket.calls} == {("cockpit-session-3", "token-3")}
    first, second = (call["params"]["items"] for call in socket.calls[:2])
    assert [item["status"] for item in first] == ["in_progress", "pending", "pending"]
    assert [item["status"] for item in second] == ["completed", "in_progress", "pending"]
    assert transcript.tool_calls() == [
        (
            "Publish the plan",
            "completed",
            "Saved revision 1: 0 of 3 done; in progress: Read the task.",
        ),
        (
            "Advance the plan",
            "completed",
            "Saved revision 2: 1 of 3 done; in progress: Make the change.",
        ),
        ("Read the plan back", "completed", transcript.reply()),
    ]
    assert transcript.reply().splitlines() == [
        "Plan revision 2, written by update_plan: 1 of 3 done; in progress: Make the change.",
        "Explanation: The first step is done.",
        "1. [x] Read the task",
        "2. [~] Make the change",
        "3. [ ] Check the result",
    ]


async def test_a_refused_call_is_a_failed_tool_call_and_the_turn_ends(tmp_path: Path) -> None:
    async with plan_socket() as socket, demo_agent(tmp_path) as (conn, transcript):
        socket.answers.append(answer_line(False, "Refused: this session was deleted."))
        assert await run_prompt(conn, tmp_path, [plan_tool(socket.environment())]) == "end_turn"
    assert socket.methods() == ["update_plan"]
    assert transcript.tool_calls() == [
        ("Publish the plan", "failed", "Refused: this session was deleted.")
    ]
    assert "The plan tool failed" in transcript.reply()


async def test_without_a_plan_server_the_demo_says_so(tmp_path: Path) -> None:
    async with demo_agent(tmp_path) as (conn, transcript):
        assert await run_prompt(conn, tmp_path, []) == "end_turn"
    assert transcript.tool_calls() == []
    assert "handed no cockpit-plan server" in transcript.reply()


async def test_a_plan_server_that_cannot_start_is_said_and_the_turn_ends(tmp_path: Path) -> None:
    broken = McpServerStdio(name=SERVER_NAME, command=str(tmp_path / "missing"), args=[], env=[])
    async with demo_agent(tmp_path) as (conn, transcript):
        assert await run_prompt(conn, tmp_path, [broken]) == "end_turn"
    assert "server could not be started" in transcript.reply()


async def test_a_plan_server_that_ends_at_once_is_said_and_the_turn_ends(tmp_path: Path) -> None:
    gone = McpServerStdio(name=SERVER_NAME, command="/bin/false", args=[], env=[])
    async with demo_agent(tmp_path) as (conn, transcript):
        assert await run_prompt(conn, tmp_path, [gone]) == "end_turn"
    assert "server could not be started: Connection closed." in transcript.reply()


async def test_a_cancel_while_a_call_waits_ends_the_turn_cancelled(tmp_path: Path) -> None:
    """The call answered after the cancel ends as it went; no other call is made."""
    async with plan_socket() as socket, demo_agent(tmp_path) as (conn, transcript):
        socket.held = asyncio.Event()
        session = await conn.new_session(
            cwd=str(tmp_path), mcp_servers=[plan_tool(socket.environment())]
        )
        prompt = asyncio.ensure_future(
            conn.prompt(
                session_id=session.session_id, prompt=[TextContentBlock(type="text", text="mcp")]
            )
        )
        while not socket.calls:
            await asyncio.sleep(0.05)
        await conn.cancel(session_id=session.session_id)
        await asyncio.sleep(0.2)
        socket.held.set()
        response = await asyncio.wait_for(prompt, 30)
    assert response.stop_reason == "cancelled"
    assert socket.methods() == ["update_plan"]
    [(title, status, _)] = transcript.tool_calls()
    assert (title, status) == ("Publish the plan", "completed")
    assert "could not be started" not in transcript.reply()
