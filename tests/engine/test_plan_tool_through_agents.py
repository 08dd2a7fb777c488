"""The whole plan path with real processes: the engine hands the demo agent the plan tool,
the agent starts it as an MCP server over stdio, and the tool's calls reach the engine's
plan socket. The plan is stored with its revisions, goes on after the agent restarts, and
the tool's token is never written anywhere: not in the store, the logs, nor any event."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import EngineAPI, PlanEntry
from cockpit.engine.core import Engine
from cockpit.remote.engine import RemoteEngine
from cockpit.service.server import Service
from tests.support.engine_helpers import open_engine


async def plan_rows(engine: EngineAPI, session: str) -> list[Mapping[str, Any]]:
    return [row.payload or {} for row in await engine.rows(session) if row.kind == "plan"]


async def run_the_scenario_twice(engine: EngineAPI, project: Path) -> str:
    """The demo's `mcp` scenario, then again after its agent was stopped."""
    record = await engine.create_session("demo", project)
    assert await engine.prompt(record.id, "mcp") == "end_turn"
    plan = await engine.read_plan(record.id)
    assert plan is not None and (plan.revision, plan.author) == (2, "tool")
    assert [entry.status for entry in plan.entries] == ["completed", "in_progress", "pending"]
    assert plan.explanation == "The first step is done."
    tools = [row for row in await engine.rows(record.id) if row.kind == "tool"]
    assert [(row.payload or {}).get("status") for row in tools] == ["completed"] * 3
    replies = [row.text for row in await engine.rows(record.id) if row.kind == "agent"]
    assert replies[-1].startswith("Plan revision 2, written by update_plan: 1 of 3 done")

    await engine.stop(record.id)  # the agent and its plan server exit
    await engine.update_plan(record.id, [PlanEntry("the user's own step", "in_progress")])
    assert await engine.prompt(record.id, "mcp") == "end_turn"  # a new agent, a new token
    replies = [row.text for row in await engine.rows(record.id) if row.kind == "agent"]
    assert replies[-1].startswith("Plan revision 5, written by update_plan")
    # The user's plan replaced the first turn's in place; the second turn has its own.
    assert [p.get("revision") for p in await plan_rows(engine, record.id)] == [3, 5]
    return record.id


def nowhere(tokens: list[str], home: Path, events: list[Any]) -> None:
    """None of `tokens` is in a file under `home` (the store, its log, the agents' logs)
    nor in any event the engine sent."""
    assert len(tokens) >= 2
    written = [path.read_bytes() for path in home.rglob("*") if path.is_file()]
    said = repr(events)
    for token in tokens:
        assert not any(token.encode() in data for data in written)
        assert token not in said


async def test_the_demo_agent_keeps_its_plan_through_the_tool(
    data_home: Path, project_dir: Path, minted: list[str]
) -> None:
    events: list[Any] = []
    async with open_engine(data_home) as (engine, _):
        engine.subscribe(events.append)
        await run_the_scenario_twice(engine, project_dir)
    nowhere(minted, data_home, events)


@pytest.fixture
def short_folder() -> Iterator[Path]:
    """A folder with a short path, for the service's socket."""
    folder = Path(tempfile.mkdtemp(prefix="plan-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_the_plan_tool_reaches_the_engine_in_the_service(
    tmp_path: Path, project_dir: Path, short_folder: Path, minted: list[str]
) -> None:
    home = tmp_path / "home"
    engine = await Engine.open(home)
    service = Service(engine, on_stop=lambda: None)
    await service.listen(short_folder / "s.sock")
    events: list[Any] = []
    try:
        client = await RemoteEngine.attach(
            lambda: asyncio.open_unix_connection(str(short_folder / "s.sock"))
        )
        client.subscribe(events.append)
        try:
            await run_the_scenario_twice(client, project_dir)
        finally:
            await client.close()
    finally:
        await service.close()
        await engine.close()
    nowhere(minted, home, events)
