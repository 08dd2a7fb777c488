"""The user's MCP servers (`mcp.toml`), through the engine and a real agent that says what
it was handed: only the transports it advertises, only the agents a server names, `${NAME}`
read from the environment the agent starts with, the session saying what was left out and
why, and a file that no longer parses reported by name and line while the last good
version is still handed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cockpit.api import AgentSpec, McpServerState, ProblemEvent
from cockpit.paths import config_dir
from tests.support.engine_helpers import open_engine, rows_of

TINY = str(Path(__file__).resolve().parents[1] / "support" / "tiny_agent.py")

SERVERS = """
[servers.files]
command = "files-mcp"
args = ["--root", "."]
env = { FILES_MODE = "${FILES_MODE}" }

[servers.docs]
url = "https://docs.example.com/mcp"
headers = { Authorization = "Bearer ${DOCS_KEY}" }

[servers.events]
url = "https://events.example.com/sse"
transport = "sse"

[servers.other]
command = "only-for-gemini"
agents = ["gemini"]

[servers.keyed]
command = "needs-a-key"
env = { KEY = "${NOT_SET_ANYWHERE}" }
"""


def tiny(*caps: str) -> AgentSpec:
    return AgentSpec(
        name="tiny", command=(sys.executable, TINY, "--caps", ",".join(caps) or "none"), title="t"
    )


async def handed(home: Path, project: Path, spec: AgentSpec) -> tuple[str, list[str]]:
    """What the agent says it was handed, and the notices of its session; what the engine
    says it handed (`/mcp`) agrees."""
    async with open_engine(home) as (engine, _):
        record = await engine.create_session(spec, project)
        assert await engine.mcp_servers(record.id) == []  # no agent opened it yet
        assert await engine.prompt(record.id, "mcp-servers") == "end_turn"
        rows = await rows_of(engine, record.id)
        states = await engine.mcp_servers(record.id)
    said = [row.text for row in rows if row.kind == "agent"][-1]
    assert [s.name for s in states if s.handed] == [s.split(":")[0] for s in said.split("; ")]
    return said, [row.text for row in rows if row.kind == "notice"]


async def test_an_agent_gets_the_servers_it_can_take_and_hears_why_not_the_others(
    data_home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FILES_MODE", "read-only")
    monkeypatch.setenv("DOCS_KEY", "k-123")
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "mcp.toml").write_text(SERVERS)

    said, notices = await handed(data_home, project_dir, tiny("mcp-http"))
    servers = said.split("; ")
    assert servers[0].startswith("cockpit-plan:stdio:COCKPIT_PLAN_SOCKET,")
    assert servers[1:] == [
        "files:stdio:FILES_MODE=read-only",
        "docs:http:Authorization=Bearer k-123",
    ]
    assert notices == [
        "Your MCP servers handed to the agent: files, docs. Left out: events (this agent takes"
        " no SSE servers); keyed (NOT_SET_ANYWHERE is not set where the agent starts)."
    ]

    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session(tiny("mcp-http"), project_dir)
        assert await engine.prompt(record.id, "hello") == "end_turn"
        assert await engine.mcp_servers(record.id) == [
            McpServerState("cockpit-plan", "stdio", True),
            McpServerState("files", "stdio", True),
            McpServerState("docs", "http", True),
            McpServerState("events", "sse", False, "this agent takes no SSE servers"),
            McpServerState(
                "keyed", "stdio", False, "NOT_SET_ANYWHERE is not set where the agent starts"
            ),
        ]

    said, notices = await handed(data_home, project_dir, tiny())  # stdio only, like many
    assert [s.split(":")[0] for s in said.split("; ")] == ["cockpit-plan", "files"]
    assert "docs (this agent takes no HTTP servers)" in notices[0]


async def test_a_broken_file_is_reported_and_the_last_good_one_still_handed(
    data_home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FILES_MODE", "rw")
    config = config_dir()
    config.mkdir(parents=True, exist_ok=True)
    (config / "mcp.toml").write_text('[servers.files]\ncommand = "files-mcp"\n')
    problems: list[str] = []
    async with open_engine(data_home) as (engine, _):
        engine.subscribe(
            lambda event: (
                problems.append(event.message) if isinstance(event, ProblemEvent) else None
            )
        )
        record = await engine.create_session(tiny(), project_dir)
        assert await engine.prompt(record.id, "mcp-servers") == "end_turn"
        (config / "mcp.toml").write_text('[servers.files]\ncommand = "files-mcp"\n[servers.x\n')
        await engine.stop(record.id)
        assert await engine.prompt(record.id, "mcp-servers") == "end_turn"  # a new start
        rows = await rows_of(engine, record.id)
        assert any("mcp.toml:3: not valid TOML" in problem for problem in engine.problems)
    replies = [row.text for row in rows if row.kind == "agent"]
    assert [r.split("; ")[1] for r in replies] == ["files:stdio:", "files:stdio:"]
    assert any("mcp.toml:3" in p and "the servers read before are still handed" in p
               for p in problems)  # fmt: skip


async def test_what_was_handed_is_said_again_when_the_agent_reloads_its_session(
    data_home: Path, project_dir: Path
) -> None:
    """The demo agent reloads its session (`session/load`): the notice of what it was
    handed comes before the replay window, which would drop it."""
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "mcp.toml").write_text('[servers.files]\ncommand = "files-mcp"\n')
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session("demo", project_dir)
        assert await engine.prompt(record.id, "hello") == "end_turn"
        await engine.stop(record.id)
        assert await engine.prompt(record.id, "hello") == "end_turn"
        rows = await rows_of(engine, record.id)
    told = [row.text for row in rows if row.text.startswith("Your MCP servers handed")]
    assert told == ["Your MCP servers handed to the agent: files."] * 2
    assert any(row.text.startswith("Reconnected") for row in rows)
