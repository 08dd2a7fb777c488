"""Headless runs do not pile up: the agent of a `cockpit run` stops once its turn ends and
is stored (unless `--keep`), also when the run's client died mid-turn, and its session is
marked as a run in `ls`, `ls --json` and `show --json`. Through a real service, with
`--local`, and in the engine itself."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import Status, is_run
from cockpit.cli.sessions import session_line
from store import SessionRecord
from tests.service.test_service_lifecycle import children_of, rows_of, session_status
from tests.support.engine_helpers import demo, open_engine
from tests.support.service_helpers import cockpit, service_pid, spawn_cockpit
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

RUN = ("run", "--agent", "demo", "--yes")
"""`cockpit run` on the demo agent, allowing what it asks; the prompt follows."""


def ok(result: Any) -> Any:
    """`result`, once it is known to have exited 0 (else fail with its output)."""
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def listed(home: Path, *reach: str) -> dict[str, dict[str, Any]]:
    """What `cockpit ls --json` says: session id -> its record."""
    sessions = json.loads(ok(cockpit(*reach, "ls", "--json", home=home)).stdout)
    return {session["id"]: session for session in sessions}


def agents_running(home: Path) -> dict[int, str]:
    """The service's child processes: the agents it runs (none when no service runs)."""
    pid = service_pid(home)
    return children_of(pid) if pid is not None else {}


# -- through the service -------------------------------------------------------------------


async def test_a_run_stops_its_agent_when_its_turn_ends_and_is_marked(service_home: Path) -> None:
    ran = ok(cockpit(*RUN, "hello", home=service_home))
    assert ran.stdout.startswith("# Welcome to Cockpit")
    assert service_pid(service_home) is not None, "`cockpit run` started no service"
    assert agents_running(service_home) == {}, "the run left its agent running in the service"
    ((session, record),) = listed(service_home).items()
    assert record["status"] == Status.CLOSED
    assert record["run"] is True
    assert await session_status(service_home, session) == Status.CLOSED
    line = ok(cockpit("ls", home=service_home)).stdout.splitlines()[0]
    assert line.startswith(f"{session}  closed ") and "  run  hello  [" in line, line
    shown = json.loads(ok(cockpit("show", session, "--json", home=service_home)).stdout)
    assert shown["session"]["run"] is True
    kinds = [row["kind"] for row in shown["rows"]]
    assert kinds[:2] == ["user", "agent"] and "notice" not in kinds, shown["rows"]


async def test_keep_leaves_the_agent_running_and_a_later_prompt_keeps_it(
    service_home: Path,
) -> None:
    ok(cockpit(*RUN, "hello", home=service_home))
    (stopped,) = listed(service_home)
    ok(cockpit("run", "--keep", "--agent", "demo", "--yes", "hello", home=service_home))
    (kept,) = set(listed(service_home)) - {stopped}
    assert len(agents_running(service_home)) == 1, "--keep did not keep the agent"
    sessions = listed(service_home)
    assert sessions[kept]["status"] == Status.READY and sessions[kept]["run"] is True

    # A later prompt to the run that stopped starts its agent again, as usual, and that
    # turn is not the run's: its agent goes on.
    again = ok(cockpit("send", stopped, "hello", "--wait", home=service_home))
    assert "# Welcome to Cockpit" in again.stdout
    assert len(agents_running(service_home)) == 2
    assert listed(service_home)[stopped]["status"] == Status.READY


async def test_a_run_whose_client_is_killed_ends_its_turn_then_stops_its_agent(
    service_home: Path,
) -> None:
    runner = spawn_cockpit(*RUN, "slow", home=service_home)
    try:
        assert runner.stdout is not None
        assert runner.stdout.readline().startswith("# A slow reply")
        (session,) = listed(service_home)
        assert await session_status(service_home, session) == Status.WORKING
        assert len(agents_running(service_home)) == 1
    finally:
        runner.send_signal(signal.SIGKILL)  # the client dies mid-turn
        runner.wait()

    async def stopped() -> bool:
        return await session_status(service_home, session) == Status.CLOSED

    await eventually(stopped, 60, "the service to end the turn and stop the run's agent")
    assert agents_running(service_home) == {}
    rows = rows_of(service_home, session)
    (reply,) = [text for kind, text in rows.values() if kind == "agent"]
    assert reply.startswith("# A slow reply") and len(reply) >= 1200, "the reply is cut"
    assert [text for kind, text in rows.values() if kind in ("notice", "error")] == []
    assert listed(service_home)[session]["run"] is True


# -- with --local ---------------------------------------------------------------------------


def test_a_local_run_is_marked_and_closed(isolated_home: Path) -> None:
    """With the engine in the run's own process the agent stops with it anyway; the mark
    is stored all the same, and read back by a later `ls`."""
    ok(cockpit("--local", *RUN, "hello", home=isolated_home))
    ((session, record),) = listed(isolated_home, "--local").items()
    assert (record["status"], record["run"]) == (Status.CLOSED, True)
    line = ok(cockpit("--local", "ls", home=isolated_home)).stdout
    assert f"{session}  closed " in line and "  run  hello  [" in line, line
    assert service_pid(isolated_home) is None


# -- the engine ----------------------------------------------------------------------------


async def test_the_engine_stops_a_runs_agent_once_the_turn_is_stored(tmp_path: Path) -> None:
    async with open_engine(tmp_path / "home") as (engine, recorder):
        record = await engine.create_session(demo(), tmp_path, run=True)
        assert is_run(record) and is_run(await engine.session(record.id))
        assert await engine.prompt(record.id, "hello", then_stop=True) == "end_turn"
        process = engine._live[record.id].process
        assert process is not None and process.returncode is not None, "the agent runs"
        assert engine.status(record.id) == Status.CLOSED
        assert (await engine.session(record.id)).status == Status.CLOSED
        ended = [s for s in recorder.statuses if s[0] == record.id]
        assert ended[-2:] == [(record.id, Status.READY, "end_turn"), (record.id, "closed", "")]

        assert await engine.prompt(record.id, "hello") == "end_turn"
        assert engine.status(record.id) == Status.READY, "a later prompt stopped the agent"


async def test_a_prompt_waiting_for_the_runs_turn_keeps_the_agent(tmp_path: Path) -> None:
    """Someone prompted the run's session while its turn ran: stopping the agent in
    between would only start it again, so it is kept for that turn."""
    async with open_engine(tmp_path / "home") as (engine, recorder):
        record = await engine.create_session(demo(), tmp_path, run=True)
        session = record.id
        run = asyncio.ensure_future(engine.prompt(session, "slow", then_stop=True))
        await recorder.wait_for(lambda: engine.status(session) == Status.WORKING)
        engine.send(session, "hello")
        assert await run == "end_turn"
        ended = (session, Status.READY, "end_turn")
        await recorder.wait_for(lambda: recorder.statuses.count(ended) == 2, 60)
        assert engine.status(session) == Status.READY
        assert (session, Status.CLOSED, "") not in recorder.statuses


async def test_a_plain_session_is_not_a_run(tmp_path: Path) -> None:
    async with open_engine(tmp_path / "home") as (engine, _recorder):
        record = await engine.create_session(demo(), tmp_path)
        assert not is_run(record) and not is_run(await engine.session(record.id))


# -- ls -------------------------------------------------------------------------------------


def record_of(title: str, info: dict[str, Any] | None) -> SessionRecord:
    return SessionRecord(
        "a1b2c3d4", "demo", ("demo",), "/p", title, "closed", None, 0.0, 0.0,
        None, None, None, None, info, False, "",
    )  # fmt: skip


def test_ls_marks_a_run_in_a_column_of_its_own() -> None:
    run = session_line(record_of("nightly lint", {"run": True}), 120.0)
    plain = session_line(record_of("fix the tests", None), 120.0)
    assert run == "a1b2c3d4  closed   demo           2m  run  nightly lint  [/p]"
    assert plain == "a1b2c3d4  closed   demo           2m       fix the tests  [/p]"
    assert run.index("nightly") == plain.index("fix the")
