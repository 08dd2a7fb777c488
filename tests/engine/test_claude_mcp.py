"""The built-in Claude agent as an MCP client of the servers it is handed: real agent and
MCP server processes over real stdio, the real SDKs, and the fake Messages API on
127.0.0.1 (`tests/support/fake_anthropic.py`).

The plan tool is run through the engine, in process (`--local`) and in the service, which
hands it to every session. The
engine cannot hand a user's server yet, so those tests drive the agent over ACP with a
small client of their own, against a stand-in for the engine's plan socket."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from acp import Client, spawn_agent_process
from acp.core import ClientSideConnection
from acp.schema import (
    EnvVariable,
    HttpMcpServer,
    McpServerStdio,
    TextContentBlock,
)

from cockpit.agentkit.claude.mcp_tools import wire_name
from cockpit.api import EngineAPI, PermissionEvent
from cockpit.engine.core import Engine
from cockpit.plan_protocol import SERVER_NAME
from cockpit.remote.engine import RemoteEngine
from cockpit.service.server import Service
from store.requests import without_breakpoints
from tests.support.acp_client import RecordingClient
from tests.support.checkout import TREE, tree_first
from tests.support.engine_helpers import open_engine
from tests.support.fake_anthropic import FakeAnthropic, reply, text, tool
from tests.support.plan_socket import plan_socket
from tests.support.waiting import eventually

UPDATE = wire_name(SERVER_NAME, "update_plan")
READ = wire_name(SERVER_NAME, "read_plan")
ECHO = wire_name("echo", "echo")
FAIL = wire_name("echo", "fail")
TOKEN = "plan-token-7f3a9c1e5b"
ITEMS = [
    {"content": "read the code", "status": "in_progress"},
    {"content": "write the test", "status": "pending"},
]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The fake API, and the environment that points the agent at it."""
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        for name in ("ANTHROPIC_MODEL", "COCKPIT_CLAUDE_MAX_STEPS", "COCKPIT_CLAUDE_MAX_TOKENS"):
            monkeypatch.delenv(name, raising=False)
        yield server


def result_of(body: dict[str, Any], index: int = 0) -> dict[str, Any]:
    """The tool_result block a request's last message opens with (its cache breakpoint
    left out)."""
    return cast(dict[str, Any], without_breakpoints(body["messages"][-1]["content"][index]))


# -- through the engine: the plan tool ----------------------------------------------------------


async def claude_plans(engine: EngineAPI, project: Path, fake: FakeAnthropic) -> list[Any]:
    """The model writes a two-step plan with the tool, reads it back and ends, then
    advances it after its agent restarted (session/load hands the tool again); returns the
    events the engine sent meanwhile. Any permission question is rejected (and fails the
    test): the plan tool runs unasked."""
    events: list[Any] = []

    def listen(event: Any) -> None:
        events.append(event)
        if isinstance(event, PermissionEvent) and not event.resolved:
            answer = engine.answer_permission(event.request.id, "reject")
            asyncio.get_running_loop().create_task(answer)

    engine.subscribe(listen)
    fake.script(
        reply(text("Planning."), tool(UPDATE, {"items": ITEMS})),
        reply(tool(READ, {})),
        reply(text("The plan is saved.")),
    )
    record = await engine.create_session("claude", project)
    assert await engine.prompt(record.id, "plan the work") == "end_turn"
    assert not [event for event in events if isinstance(event, PermissionEvent)]
    plan = await engine.read_plan(record.id)
    assert plan is not None and (plan.revision, plan.author) == (1, "tool")
    assert [(e.content, e.status) for e in plan.entries] == [
        ("read the code", "in_progress"),
        ("write the test", "pending"),
    ]
    tools = [row.payload or {} for row in await engine.rows(record.id) if row.kind == "tool"]
    assert [(t["title"], t["status"]) for t in tools] == [
        ("update_plan (cockpit-plan)", "completed"),
        ("read_plan (cockpit-plan)", "completed"),
    ]
    assert "write the test" in json.dumps(tools[1].get("content"))  # the result is shown
    bodies = fake.bodies()
    offered = [t["name"] for t in bodies[0]["tools"]]
    assert offered[-2:] == [UPDATE, READ] and "read_file" in offered
    saved = result_of(bodies[1])
    assert saved["content"] == "Saved revision 1: 0 of 2 done; in progress: read the code."
    assert "is_error" not in saved
    read = result_of(bodies[2])  # what read_plan returned reached the model
    assert read["content"].startswith("Plan revision 1, written by update_plan: 0 of 2 done")
    assert "2. [ ] write the test" in read["content"]

    await engine.stop(record.id)  # the agent and its servers exit; a new start loads it
    done = [{**ITEMS[0], "status": "completed"}, {**ITEMS[1], "status": "in_progress"}]
    fake.script(reply(tool(UPDATE, {"items": done})), reply(text("Advanced.")))
    assert await engine.prompt(record.id, "go on") == "end_turn"
    plan = await engine.read_plan(record.id)
    assert plan is not None and (plan.revision, plan.author) == (2, "tool")
    assert result_of(fake.bodies()[-1])["content"].startswith("Saved revision 2: 1 of 2 done")
    assert not [event for event in events if isinstance(event, PermissionEvent)]
    return events


def nowhere(tokens: list[str], home: Path, events: list[Any], fake: FakeAnthropic) -> None:
    """None of `tokens` is in a request the model got, in a file under `home` (the store,
    the agent's chunk logs that `cockpit inspect` reads), nor in any event."""
    assert len(tokens) >= 2
    written = [path.read_bytes() for path in home.rglob("*") if path.is_file()]
    for token in tokens:
        assert not any(token.encode() in recorded.raw for recorded in fake.requests)
        assert not any(token.encode() in data for data in written)
        assert token not in repr(events)


async def test_the_claude_agent_keeps_the_plan_through_the_tool_unasked(
    data_home: Path, project_dir: Path, fake: FakeAnthropic, minted: list[str]
) -> None:
    async with open_engine(data_home) as (engine, _):
        events = await claude_plans(engine, project_dir, fake)
        (live,) = engine._live.values()
        assert live.process is not None
        stderr = live.process.stderr_tail(1000)
    nowhere(minted, data_home, events, fake)
    assert not any(token in stderr for token in minted)


async def test_the_claude_agent_keeps_the_plan_through_the_tool_in_the_service(
    tmp_path: Path, project_dir: Path, fake: FakeAnthropic, minted: list[str]
) -> None:
    home = tmp_path / "home"
    folder = Path(tempfile.mkdtemp(prefix="plan-"))  # short, for the service's socket
    engine = await Engine.open(home)
    service = Service(engine, on_stop=lambda: None)
    try:
        await service.listen(folder / "s.sock")
        client = await RemoteEngine.attach(
            lambda: asyncio.open_unix_connection(str(folder / "s.sock"))
        )
        try:
            events = await claude_plans(client, project_dir, fake)
        finally:
            await client.close()
    finally:
        await service.close()
        await engine.close()
        shutil.rmtree(folder, ignore_errors=True)
    nowhere(minted, home, events, fake)


# -- over ACP: a user's server ----------------------------------------------------------------


def stdio(name: str, args: list[str], env: dict[str, str]) -> McpServerStdio:
    """A stdio server as a client hands it."""
    return McpServerStdio(
        name=name,
        command=sys.executable,
        args=args,
        env=[EnvVariable(name=key, value=value) for key, value in tree_first(env).items()],
    )


@dataclass
class Handed:
    """What a test hands the agent, and where the echo server leaves its traces."""

    home: Path
    calls: Path
    pid: Path
    stderr: Path

    def echo_server(self) -> McpServerStdio:
        env = {"ECHO_CALLS": str(self.calls), "ECHO_PID": str(self.pid)}
        return stdio("echo", ["-m", "tests.support.echo_mcp_server"], env)

    def echoed(self) -> list[str]:
        return self.calls.read_text().splitlines() if self.calls.exists() else []


@pytest.fixture
def handed(tmp_path: Path) -> Handed:
    return Handed(tmp_path / "home", tmp_path / "calls.txt", tmp_path / "pid", tmp_path / "err")


@asynccontextmanager
async def claude_agent(
    handed: Handed, recording: RecordingClient
) -> AsyncIterator[ClientSideConnection]:
    """The Claude agent over ACP, its stderr (and its servers') kept in a file."""
    env = tree_first(
        {
            "HOME": str(handed.home),
            "COCKPIT_DATA_DIR": str(handed.home / "data"),
            "ANTHROPIC_API_KEY": os.environ["ANTHROPIC_API_KEY"],
            "ANTHROPIC_BASE_URL": os.environ["ANTHROPIC_BASE_URL"],
        }
    )
    with handed.stderr.open("wb") as stderr:
        async with spawn_agent_process(
            cast(Client, recording),
            sys.executable,
            str(TREE / "acp" / "claude_agent.py"),
            env=env,
            transport_kwargs={"stderr": stderr},
        ) as (conn, _process):
            await conn.initialize(protocol_version=1)
            yield conn


async def prompt(conn: ClientSideConnection, session_id: str, words: str) -> str:
    response = await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[TextContentBlock(type="text", text=words)]),
        60,
    )
    return response.stop_reason


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_user_servers_tool_is_asked_about_then_called_and_its_result_sent(
    handed: Handed, project_dir: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(tool(ECHO, {"text": "hello"})),
        reply(tool(FAIL, {})),
        reply(text("Echoed.")),
    )
    recording = RecordingClient()
    async with claude_agent(handed, recording) as conn:
        session = await conn.new_session(cwd=str(project_dir), mcp_servers=[handed.echo_server()])
        assert await prompt(conn, session.session_id, "echo hello") == "end_turn"
        pid = int(handed.pid.read_text())
        assert not gone(pid)  # kept for the session
        await conn.close_session(session_id=session.session_id)
        await eventually(lambda: gone(pid), timeout=10)  # no orphan once the session ends
    assert [call.title for call in recording.asked] == ["echo (echo)", "fail (echo)"]
    assert recording.asked[0].raw_input == {"text": "hello"}
    assert handed.echoed() == ["hello"]
    bodies = fake.bodies()
    assert [t["name"] for t in bodies[0]["tools"]][-2:] == [ECHO, FAIL]
    echo_def = next(t for t in bodies[0]["tools"] if t["name"] == ECHO)
    assert echo_def["description"] == "Say the text back."
    assert echo_def["input_schema"]["required"] == ["text"]
    assert result_of(bodies[1]) == {
        "type": "tool_result",
        "tool_use_id": bodies[1]["messages"][-2]["content"][0]["id"],
        "content": "echo: hello",
    }
    failed = result_of(bodies[2])
    assert failed["is_error"] is True and "the fail tool always fails" in failed["content"]
    assert recording.tool_calls() == [
        ("echo (echo)", "completed", "echo: hello"),
        ("fail (echo)", "failed", failed["content"]),
    ]


async def test_a_refused_call_never_reaches_the_server(
    handed: Handed, project_dir: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(tool(ECHO, {"text": "no"})), reply(text("Understood.")))
    recording = RecordingClient(answer="reject")
    async with claude_agent(handed, recording) as conn:
        session = await conn.new_session(cwd=str(project_dir), mcp_servers=[handed.echo_server()])
        assert await prompt(conn, session.session_id, "echo no") == "end_turn"
    assert len(recording.asked) == 1
    assert handed.echoed() == []
    rejected = result_of(fake.bodies()[1])
    assert rejected["is_error"] is True and "rejected" in rejected["content"]


async def test_plan_mode_refuses_a_user_servers_tool_without_asking(
    handed: Handed, project_dir: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(tool(ECHO, {"text": "no"})), reply(text("I would echo it.")))
    recording = RecordingClient()
    async with claude_agent(handed, recording) as conn:
        session = await conn.new_session(cwd=str(project_dir), mcp_servers=[handed.echo_server()])
        await conn.set_session_mode(mode_id="plan", session_id=session.session_id)
        assert await prompt(conn, session.session_id, "echo no") == "end_turn"
    assert recording.asked == [] and handed.echoed() == []
    refused = result_of(fake.bodies()[1])
    assert refused["is_error"] is True and "plan mode" in refused["content"]


async def test_a_server_that_cannot_start_gives_a_notice_and_the_turn_goes_on(
    handed: Handed, project_dir: Path, fake: FakeAnthropic
) -> None:
    (project_dir / "notes.txt").write_text("hi\n")
    broken = McpServerStdio(
        name="broken", command=str(project_dir / "no-such-server"), args=[], env=[]
    )
    remote = HttpMcpServer(type="http", name="remote", url="http://127.0.0.1:9/mcp", headers=[])
    fake.script(reply(tool("list_files", {})), reply(text("One file.")))
    recording = RecordingClient()
    async with claude_agent(handed, recording) as conn:
        session = await conn.new_session(
            cwd=str(project_dir), mcp_servers=[broken, remote, handed.echo_server()]
        )
        assert await prompt(conn, session.session_id, "what is here?") == "end_turn"
    said = recording.reply()
    assert "The MCP server broken could not be started" in said
    assert "The MCP server remote was not started: this agent starts only stdio" in said
    assert said.endswith("One file.")
    bodies = fake.bodies()
    offered = [t["name"] for t in bodies[0]["tools"]]
    assert offered[-2:] == [ECHO, FAIL]  # the server that started is offered all the same
    assert not any(name.startswith("mcp__broken") for name in offered)
    assert "notes.txt" in result_of(bodies[1])["content"]
    assert "could not be started" not in json.dumps(bodies)  # a notice, not for the model


async def test_the_plan_token_reaches_neither_the_model_nor_a_log(
    handed: Handed, project_dir: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(tool(UPDATE, {"items": ITEMS})), reply(tool(READ, {})), reply(text("Done.")))
    recording = RecordingClient()
    async with plan_socket() as socket:
        env = {**socket.environment(session="s-9", token=TOKEN), "COCKPIT_PLAN_TIMEOUT": "5"}
        plan = stdio(SERVER_NAME, ["-m", "cockpit.plan_server"], env)
        async with claude_agent(handed, recording) as conn:
            session = await conn.new_session(cwd=str(project_dir), mcp_servers=[plan])
            assert await prompt(conn, session.session_id, "plan it") == "end_turn"
    assert socket.methods() == ["update_plan", "read_plan"]
    assert {call["token"] for call in socket.calls} == {TOKEN}  # the server had it
    assert recording.asked == []
    assert [status for _, status, _ in recording.tool_calls()] == ["completed", "completed"]
    secret = TOKEN.encode()
    assert all(secret not in recorded.raw for recorded in fake.requests)
    assert secret not in handed.stderr.read_bytes()
    for path in (handed.home / "data").rglob("*"):  # the chunk logs `cockpit inspect` reads
        if path.is_file():
            assert secret not in path.read_bytes(), path


def test_tool_names_are_what_the_api_takes_and_never_collide() -> None:
    assert wire_name("cockpit-plan", "update_plan") == "mcp__cockpit-plan__update_plan"
    assert wire_name("my server", "do.it") == "mcp__my_server__do_it"
    long_a, long_b = wire_name("s", "x" * 80 + "a"), wire_name("s", "x" * 80 + "b")
    assert len(long_a) == len(long_b) == 64 and long_a != long_b
    assert all(c.isalnum() or c in "_-" for c in wire_name("é/ü", "a b"))
