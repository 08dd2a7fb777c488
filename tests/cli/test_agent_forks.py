"""The agent fork server the suite starts bundled agents through (`tests/support/agent_forks.py`)
stands in for a fresh interpreter: a turn through it is a real turn, the engine's process
ends with the agent's code or signal, and a stop or a kill of that process ends the forked
agent too. Tests of these rules run the real start (`real_spawn`) where it matters."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import struct
import sys
from pathlib import Path

import pytest

from cockpit.engine.agent_process import AgentProcess
from cockpit.engine.processes import end_group
from tests.support import agent_forks
from tests.support.engine_helpers import DEMO, demo, open_engine, rows_of
from tests.support.service_helpers import service_pid
from tests.support.ui_service_helpers import start_service
from tests.support.waiting import eventually


@pytest.fixture
def server(agent_fork_server: agent_forks.Server) -> agent_forks.Server:
    if not agent_forks.AVAILABLE:
        pytest.skip("the agent fork server needs pidfds (Linux)")
    agent_fork_server.wait_ready()
    return agent_fork_server


async def command_line(pid: int) -> str:
    """The process's command line, once it has one: the engine's start returns when the
    exec is under way, and the kernel shows the new program's arguments a moment later."""

    def read() -> str:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()

    await eventually(read, what=f"a command line for process {pid}")
    return read()


async def test_a_turn_through_a_forked_demo_agent_is_a_real_turn(
    tmp_path: Path, server: agent_forks.Server
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    before = server.agents()
    async with open_engine(tmp_path / "home") as (engine, _recorder):
        record = await engine.create_session("demo", project)
        assert await engine.prompt(record.id, "hello there") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert [row.kind for row in rows] == ["user", "agent"]
        assert "cockpit agents" in rows[1].text
        process = engine._live[record.id].process
        assert process is not None
        assert "agent_fork_shim.py" in await command_line(process.process.pid)
        assert process.spec.command[1:] == (DEMO,)  # the engine keeps the spec it asked for
        forked = server.agents() - before
        assert len(forked) == 1, forked
        await engine.stop(record.id)
    await eventually(lambda: not forked & server.agents(), what="the forked agent to end")


async def test_the_engines_process_exits_with_the_agents_code_and_stderr(
    tmp_path: Path, server: agent_forks.Server
) -> None:
    agent = await AgentProcess.spawn(demo("--exit-on-start", "3"), tmp_path, tmp_path / "log")
    assert "agent_fork_shim.py" in await command_line(agent.process.pid)
    assert await agent.wait() == 3
    assert agent.stderr_tail() == "demo agent: exiting at start"


async def hanging_agent(
    tmp_path: Path, server: agent_forks.Server
) -> tuple[AgentProcess, set[int]]:
    """A demo agent that never answers, started through the server, and its fork's pid."""
    before = server.agents()
    agent = await AgentProcess.spawn(demo("--hang-initialize"), tmp_path, tmp_path / "log")
    await eventually(lambda: server.agents() - before, what="the agent's fork")
    return agent, server.agents() - before


async def test_the_groups_sigterm_ends_the_forked_agent_with_that_signal(
    tmp_path: Path, server: agent_forks.Server
) -> None:
    agent, forked = await hanging_agent(tmp_path, server)
    assert await end_group(agent.process, grace=10) == -signal.SIGTERM  # stdin still open
    await eventually(lambda: not forked & server.agents(), what="the forked agent to end")


async def test_a_killed_stand_in_takes_the_forked_agent_with_it(
    tmp_path: Path, server: agent_forks.Server
) -> None:
    agent, forked = await hanging_agent(tmp_path, server)
    os.killpg(agent.process.pid, signal.SIGKILL)
    # The engine's wait ends when the pipes close: while the fork lives, it would not.
    assert await asyncio.wait_for(agent.wait(), 10) == -signal.SIGKILL
    await eventually(lambda: not forked & server.agents(), what="the forked agent to end")


@pytest.mark.parametrize(
    "sent", [b"", b"\x00\x00", struct.pack("!I", 100) + b"{}"], ids=["nothing", "half", "cut"]
)
async def test_a_stand_in_gone_before_its_request_is_whole_leaves_no_waiter(
    server: agent_forks.Server, sent: bytes
) -> None:
    """A stand-in killed as it starts: its waiter ends. It used to read the closed socket
    in a loop for good, a core busy until the machine restarted."""
    before = server.waiters()
    with socket.socket(socket.AF_UNIX) as shim:
        shim.connect(server.socket)
        shim.sendall(sent)
        await eventually(lambda: server.waiters() - before, what="the waiter of the connection")
        (waiter,) = server.waiters() - before
    await eventually(lambda: waiter not in server.waiters(), what=f"waiter {waiter} to end")


async def test_without_a_server_the_stand_in_runs_the_agent_itself(
    tmp_path: Path, server: agent_forks.Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(agent_forks.ENV, str(tmp_path / "nobody.sock"))
    before = server.agents()
    agent = await AgentProcess.spawn(demo("--exit-on-start", "4"), tmp_path, tmp_path / "log")
    assert await agent.wait() == 4
    assert agent.stderr_tail() == "demo agent: exiting at start"
    assert server.agents() == before


@pytest.mark.real_spawn
async def test_a_real_spawn_test_starts_a_fresh_interpreter(tmp_path: Path) -> None:
    agent = await AgentProcess.spawn(demo("--hang-initialize"), tmp_path, tmp_path / "log")
    try:
        assert (
            await command_line(agent.process.pid) == f"{sys.executable} {DEMO} --hang-initialize "
        )
    finally:
        await agent.stop()


def test_only_the_preloaded_programs_of_this_interpreter_are_forked() -> None:
    def routed(*command: str) -> bool:
        return agent_forks.forked_command(command, "/s.sock") is not None

    tests = Path(agent_forks.__file__).parent
    assert routed(sys.executable, DEMO, "--slow")
    assert routed(sys.executable, str(Path(DEMO).with_name("claude_agent.py")))
    assert routed(sys.executable, str(tests / "tiny_agent.py"))
    assert routed(sys.executable, "-m", "cockpit", "--data-dir", "/d", "service")
    assert not routed("/usr/bin/python3.9", DEMO)
    assert not routed(sys.executable, "-c", "print(1)")
    assert not routed(sys.executable, "-m", "cockpit.cli.main")
    assert not routed(sys.executable, str(tests / "hostile.py"))
    assert not routed(sys.executable)


async def test_a_service_started_through_the_server_is_a_fork_that_serves(
    tmp_path: Path, server: agent_forks.Server
) -> None:
    before = server.agents()
    service = await start_service(tmp_path / "home")  # it waits for the service to answer
    try:
        assert "agent_fork_shim.py" in await command_line(service.process.pid)
        assert service_pid(tmp_path / "home") in server.agents() - before
    finally:
        await service.stop()
    assert service.process.returncode == 0
    await eventually(lambda: server.agents() == before, what="the forked service to end")


def test_the_server_imports_without_cockpits_or_the_model_apis_variables() -> None:
    environ = {
        "PATH": "/bin",
        "COCKPIT_CLAUDE_MAX_STEPS": "2",
        "ANTHROPIC_MODEL": "m",
        "HOME": "/h",
    }
    assert agent_forks.import_environment(environ) == {"PATH": "/bin", "HOME": "/h"}
