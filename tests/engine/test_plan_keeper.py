"""The engine's side of the plan tool, through its real socket: the calls a plan server
makes with its session's token, the refusals of every other, and the plan the user writes
through the contract, read back by the tool."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import PlanEntry
from cockpit.plan_protocol import (
    MOST_ITEMS,
    MOST_LINE_BYTES,
    SESSION_VARIABLE,
    SOCKET_VARIABLE,
    TOKEN_VARIABLE,
    read_line,
    request_line,
)
from tests.support.engine_helpers import open_engine


async def call(socket: str, line: bytes) -> dict[str, Any]:
    """One call on the plan socket, as the plan server makes it."""
    reader, writer = await asyncio.open_unix_connection(socket, limit=MOST_LINE_BYTES * 2)
    writer.write(line)
    await writer.drain()
    answer = await reader.readline()
    writer.close()
    found = read_line(answer)
    assert found is not None, answer
    return found


def handed(servers: list[Any]) -> dict[str, str]:
    """The environment the plan server is handed, by name."""
    (server,) = servers
    assert server.name == "cockpit-plan" and server.args == ["-m", "cockpit.plan_server"]
    return {variable.name: variable.value for variable in server.env}


async def test_the_plan_tool_writes_its_sessions_plan_and_reads_what_the_user_wrote(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session("demo", project_dir)
        env = handed(await engine.plans.servers(record.id))
        socket, token = env[SOCKET_VARIABLE], env[TOKEN_VARIABLE]
        assert env[SESSION_VARIABLE] == record.id
        assert stat.S_IMODE(os.stat(socket).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(Path(socket).parent).st_mode) == 0o700

        items = [
            {"content": "read the code", "status": "completed"},
            {"content": "write the tests", "status": "in_progress", "priority": "high"},
            {"content": "ship", "status": "pending"},
        ]
        params = {"items": items, "explanation": "tests first"}
        saved = await call(socket, request_line(token, record.id, "update_plan", params))
        assert saved["ok"] and saved["text"] == (
            "Saved revision 1: 1 of 3 done; in progress: write the tests."
        )
        assert saved["plan"]["author"] == "tool" and saved["plan"]["items"] == items

        plan = await engine.read_plan(record.id)
        assert plan is not None and (plan.revision, plan.author) == (1, "tool")
        assert plan.entries[1] == PlanEntry("write the tests", "in_progress", "high")
        assert plan.explanation == "tests first"

        mine = await engine.update_plan(record.id, [PlanEntry("ship", "completed")])
        assert (mine.revision, mine.author) == (2, "user")
        read = await call(socket, request_line(token, record.id, "read_plan", {}))
        assert read["ok"] and read["plan"]["author"] == "user"
        assert read["text"].startswith("Plan revision 2, written by the user: 1 of 1 done.")
        rows = [r for r in await engine.store.all_rows(record.id) if r.kind == "plan"]
        assert [r.payload["revision"] for r in rows if r.payload] == [2]  # one row, in place


async def test_every_other_call_is_refused_and_changes_nothing(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home) as (engine, _):
        first = await engine.create_session("demo", project_dir)
        second = await engine.create_session("demo", project_dir)
        env = handed(await engine.plans.servers(first.id))
        socket, token = env[SOCKET_VARIABLE], env[TOKEN_VARIABLE]
        handed(await engine.plans.servers(second.id))
        one = {"items": [{"content": "mine", "status": "pending"}]}

        other = await call(socket, request_line(token, second.id, "update_plan", one))
        assert not other["ok"] and "does not know this plan tool's session" in other["text"]
        wrong = await call(socket, request_line("guess", first.id, "update_plan", one))
        assert not wrong["ok"]
        method = await call(socket, request_line(token, first.id, "delete", {}))
        assert not method["ok"] and "only update and read" in method["text"]
        many = {"items": [{"content": f"step {n}", "status": "pending"} for n in range(99)]}
        bound = await call(socket, request_line(token, first.id, "update_plan", many))
        assert not bound["ok"] and f"at most {MOST_ITEMS} items" in bound["text"]
        status = {"items": [{"content": "x", "status": "done"}]}
        assert (
            "use one of pending"
            in (await call(socket, request_line(token, first.id, "update_plan", status)))["text"]
        )
        assert not (await call(socket, b"not json\n"))["ok"]
        huge = await call(socket, b"x" * (MOST_LINE_BYTES + 10) + b"\n")
        assert not huge["ok"] and "too long" in huge["text"]
        assert await engine.read_plan(first.id) is None
        assert await engine.read_plan(second.id) is None

        fresh = handed(await engine.plans.servers(first.id))[TOKEN_VARIABLE]
        stale = await call(socket, request_line(token, first.id, "update_plan", one))
        assert not stale["ok"]  # an agent restart mints a new token: the old one is dead
        assert (await call(socket, request_line(fresh, first.id, "update_plan", one)))["ok"]

        await engine.delete(first.id)
        gone = await call(socket, request_line(fresh, first.id, "update_plan", one))
        assert not gone["ok"] and "The plan was not changed" in gone["text"]


async def test_a_plan_past_the_bounds_from_the_user_says_why(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session("demo", project_dir)
        with pytest.raises(ValueError, match="The plan was not saved: item 1 needs"):
            await engine.update_plan(record.id, [PlanEntry("  ")])
        assert await engine.read_plan(record.id) is None


async def test_the_socket_goes_with_the_engine(data_home: Path, project_dir: Path) -> None:
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session("demo", project_dir)
        socket = handed(await engine.plans.servers(record.id))[SOCKET_VARIABLE]
        assert Path(socket).exists()
    assert not Path(socket).exists()
