"""Trust in daily use, at the engine: a prompt typed while the agent starts is sent once it
is ready, every failure is a row that says why, a session that did something while the
user looked elsewhere is unread, a turn cut by a quit or a crash says so, and a permission
decision reaches the agent only once it is committed."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import AgentSpec, AttentionEvent, StartError, Status
from cockpit.engine.agent_process import AgentProcess
from cockpit.engine.core import Engine
from cockpit.engine.recovery import CUT_BY_A_STOP
from cockpit.engine.session import LiveSession
from store import Chunk, Frame
from store.store import Store
from tests.support.engine_helpers import (
    Recorder,
    allow_all,
    assert_live_equals_stored,
    demo,
    open_engine,
    rows_of,
)
from tests.support.helpers import reply
from tests.support.waiting import eventually

TINY = str(Path(__file__).parents[1] / "support" / "tiny_agent.py")


async def turn_over(engine: Engine, session: str, timeout: float = 20) -> None:
    """Wait until every prompt sent with `send` has been answered."""
    await eventually(
        lambda: (
            all(task.done() for task in engine._tasks) and engine.status(session) == Status.READY
        ),
        timeout,
        "every prompt sent to be answered",
    )


# -- a prompt typed while the agent starts ----------------------------------------------------


async def test_a_prompt_sent_while_the_agent_starts_waits_and_is_answered(
    data_home: Path, project_dir: Path
) -> None:
    """Opening a session starts its agent; a prompt typed within the second it takes to
    shake hands used to fail with an empty reason (an assertion deep in the engine)."""
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session(demo("--start-delay", "1"), project_dir)
        starting = asyncio.ensure_future(engine.start(record.id))  # the screen opens it
        await recorder.wait_for(lambda: engine.status(record.id) == Status.STARTING)
        engine.send(record.id, "hello")  # typed at once
        engine.send(record.id, "again")  # and another, before anything answered
        await starting
        await turn_over(engine, record.id)
        rows = await rows_of(engine, record.id)
        assert [r.kind for r in rows] == ["user", "agent", "user", "agent"]
        assert [r.text for r in rows if r.kind == "user"] == ["hello", "again"]
        assert not [r for r in rows if r.kind == "error"]
        assert_live_equals_stored(recorder, record.id, rows)


@pytest.mark.parametrize("delete", [False, True], ids=["closed", "deleted"])
async def test_a_session_stopped_while_its_agent_starts_leaves_no_agent_running(
    data_home: Path, project_dir: Path, delete: bool
) -> None:
    """A close or delete that came before the agent's process was up let the start go on:
    the agent ran on, ready, for a session closed or gone."""
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session(demo(), project_dir)
        starting = asyncio.ensure_future(engine.start(record.id))  # the screen opens it
        await recorder.wait_for(lambda: engine.status(record.id) == Status.STARTING)
        live = engine._live[record.id]
        if delete:
            await engine.delete(record.id)
        else:
            await engine.stop(record.id)
        with pytest.raises(StartError, match="stopped while its agent started"):
            await starting
        await asyncio.wait_for(live.lifecycle.not_starting.wait(), 30)  # the start is over
        assert not live.running
        assert live.process is None or live.process.returncode is not None
        if delete:
            assert await engine.store.get_session(record.id) is None
        else:
            assert engine.status(record.id) == Status.CLOSED
            rows = await rows_of(engine, record.id)
            assert [r.text for r in rows] == [
                "The agent was stopped while it started: the session was closed."
            ]


async def test_a_prompt_and_the_screen_opening_a_session_at_once_start_one_agent(
    data_home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both asked for the session's live state while its record was read: each made its
    own, and two agents ran for one session, one of them never stopped."""
    spawned: list[str] = []
    spawn = AgentProcess.spawn

    async def counted(spec: AgentSpec, *args: Any, **kwargs: Any) -> AgentProcess:
        spawned.append(spec.name)
        return await spawn(spec, *args, **kwargs)

    monkeypatch.setattr(AgentProcess, "spawn", counted)
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session(demo(), project_dir)
        engine.send(record.id, "hello")
        await engine.start(record.id)
        await turn_over(engine, record.id)
        assert spawned == ["demo"]
        rows = await rows_of(engine, record.id)
        assert [r.kind for r in rows] == ["user", "agent"]
        assert not [r for r in rows if r.kind == "error"]


async def test_a_prompt_whose_agent_cannot_start_says_why_in_the_transcript(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home) as (engine, _):
        spec = AgentSpec(name="gone", command=(str(project_dir / "no-such-agent"),))
        record = await engine.create_session(spec, project_dir)
        engine.send(record.id, "hello")

        async def an_error_row_and_status() -> bool:
            rows = await rows_of(engine, record.id)  # the row is told, then the status set
            return any(r.kind == "error" for r in rows) and engine.status(record.id) == Status.ERROR

        await eventually(an_error_row_and_status, 15)
        rows = await rows_of(engine, record.id)
        assert [r.kind for r in rows] == ["user", "error"]
        assert "no-such-agent" in rows[1].text
        assert engine.status(record.id) == Status.ERROR


async def test_a_failure_inside_cockpit_during_a_turn_is_a_row_and_the_session_goes_on(
    data_home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session(demo(), project_dir)
        await engine.start(record.id)
        live = engine._live[record.id]

        async def broken(text: str) -> list[Any]:
            raise RuntimeError("the mention index broke")

        monkeypatch.setattr(live.turns, "_mentions", broken)
        assert await engine.prompt(record.id, "hello") == "error"
        rows = await rows_of(engine, record.id)
        assert rows[-1].kind == "error"
        assert rows[-1].text == "The turn failed inside Cockpit: the mention index broke"
        assert engine.status(record.id) == Status.READY  # not stuck "working"
        monkeypatch.undo()
        assert await engine.prompt(record.id, "hello") == "end_turn"


async def test_a_prompt_that_fails_before_its_turn_is_a_row_too(
    data_home: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session(demo(), project_dir)

        async def broken(*args: Any, **kwargs: Any) -> None:
            raise AssertionError

        live = await engine._live_session(record.id)
        monkeypatch.setattr(live, "prompt", broken)
        engine.send(record.id, "hello")
        await eventually(lambda: rows_of(engine, record.id), 10, "a row")
        (row,) = await rows_of(engine, record.id)
        # The reason is never empty, whatever the error carries.
        assert (row.kind, row.text) == ("error", "The prompt could not be sent: AssertionError")
        assert recorder.view(record.id).texts() == [row.text]


# -- unread ------------------------------------------------------------------------------------


async def test_a_reply_that_goes_on_after_the_user_left_makes_the_session_unread(
    data_home: Path, project_dir: Path
) -> None:
    """`slow`, switch away after it began, wait for the end: the session must be unread
    (reading used to be tracked by seq, and a reply keeps its first seq while it grows)."""
    async with open_engine(data_home) as (engine, recorder):
        watched = await engine.create_session(demo(), project_dir)
        other = await engine.create_session(demo(), project_dir)
        engine.show(watched.id)
        turn = asyncio.ensure_future(engine.prompt(watched.id, "slow"))
        await recorder.wait_for(lambda: len(recorder.view(watched.id).texts()) >= 2)
        assert not engine.unread(watched.id)
        engine.show(other.id)  # the user switches away mid-reply
        assert await turn == "end_turn"
        assert engine.unread(watched.id)
        engine.show(watched.id)
        assert not engine.unread(watched.id)
        record = await engine.session(watched.id)
        assert not record.unread


async def test_the_users_own_prompt_and_the_session_on_screen_are_not_unread(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session(demo(), project_dir)
        engine.show(record.id)
        assert await engine.prompt(record.id, "hello") == "end_turn"
        assert not engine.unread(record.id)
        engine.show(None)
        await engine.store.begin_turn(record.id, "typed elsewhere")  # a user row only
        assert not engine.unread(record.id)


async def test_a_deleted_session_is_not_unread(data_home: Path, project_dir: Path) -> None:
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session(demo(), project_dir)
        await engine.add_notice(record.id, "something happened")  # not on screen: unread
        assert engine.unread(record.id)
        await engine.delete(record.id)
        assert not engine.unread(record.id)


async def test_unread_survives_a_restart(data_home: Path, project_dir: Path) -> None:
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session(demo(), project_dir)
        events: list[AttentionEvent] = []
        engine.subscribe(lambda e: events.append(e) if isinstance(e, AttentionEvent) else None)
        assert await engine.prompt(record.id, "hello") == "end_turn"
        assert events == [AttentionEvent(record.id, True)]  # once, not once per frame
    async with open_engine(data_home) as (engine, _):
        assert engine.unread(record.id)
        assert (await engine.session(record.id)).unread


# -- a turn cut by a quit or a crash -------------------------------------------------------------


async def test_quitting_during_a_turn_says_the_reply_was_cut(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session(demo("--slow"), project_dir)
        engine.send(record.id, "slow")
        await recorder.wait_for(lambda: len(recorder.view(record.id).texts()) >= 2)
    # `open_engine` closed the engine, as quitting Cockpit does.
    async with open_engine(data_home) as (engine, _):
        rows = await rows_of(engine, record.id)
        assert rows[1].kind == "agent" and rows[1].text
        assert rows[-1].kind == "notice"
        assert rows[-1].text == "The turn was stopped: Cockpit quit. The reply above is cut short."
        assert (await engine.session(record.id)).status == Status.CLOSED


async def test_a_crash_during_a_turn_is_marked_when_cockpit_reopens(
    data_home: Path, project_dir: Path
) -> None:
    """A killed Cockpit leaves the session `working` in the store: the next one to open says
    the reply may be cut short, once, and keeps every sealed row."""
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session(demo(), project_dir)
        await engine.store.begin_turn(record.id, "hello")
        await engine.store.apply(Chunk(record.id, "agent_message_chunk", text="Half a repl"))
        await engine.store.flush()
        await engine.store.update_session(record.id, status=Status.WORKING)
        before = [(r.kind, r.text) for r in await rows_of(engine, record.id)]
        engine._live.clear()  # as if the process died here: no agent is stopped
    for _ in range(2):
        async with open_engine(data_home) as (engine, _):
            rows = [(r.kind, r.text) for r in await rows_of(engine, record.id)]
            assert rows == [*before, ("notice", CUT_BY_A_STOP)]
            assert engine.unread(record.id)


async def test_a_session_another_cockpit_runs_is_not_marked_cut(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session(demo(), project_dir)
        await engine.store.update_session(record.id, status=Status.WORKING)
        await engine.store.claim(record.id)  # this Cockpit runs it, and stays open
        async with open_engine(data_home) as (other, _):
            assert await rows_of(other, record.id) == []


# -- drafts ----------------------------------------------------------------------------------------


async def test_a_draft_is_kept_across_a_restart(data_home: Path, project_dir: Path) -> None:
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session(demo(), project_dir)
        engine.save_draft(record.id, "half a prompt")
    async with open_engine(data_home) as (engine, _):
        assert (await engine.session(record.id)).draft == "half a prompt"


# -- durable before it acts ------------------------------------------------------------------------


class FailingDecisions(Store):
    """A store whose disk refuses permission decision rows (and nothing else)."""

    async def apply(self, chunk: Chunk) -> list[Frame]:
        if chunk.update == "permission":
            raise sqlite3.OperationalError("disk I/O error")
        return await super().apply(chunk)


async def engine_on(home: Path, store_class: type[Store]) -> Engine:
    engine = await Engine.open(home, auto_answer=allow_all, handshake_timeout=15)
    await engine.store.close()
    engine.store = await store_class.open(home / "cockpit.db")
    return engine


@pytest.mark.parametrize(
    ("store_class", "told", "stored", "row"),
    [
        (Store, "yes", 1, "permission"),
        (FailingDecisions, "cancelled", 0, "error"),
    ],
)
async def test_the_agent_hears_the_answer_only_once_it_is_committed(
    data_home: Path, project_dir: Path, store_class: type[Store], told: str, stored: int, row: str
) -> None:
    """The agent reads the database the instant it has its answer: the decision row is
    there. When the row cannot be written, the agent is told "cancelled" (nothing it was not
    recorded as allowed to do) and the session says why."""
    engine = await engine_on(data_home, store_class)
    try:
        spec = AgentSpec(name="tiny", command=(sys.executable, TINY))
        record = await engine.create_session(spec, project_dir)
        assert await engine.prompt(record.id, "ask-and-check") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert rows[-1].text == f"told: {told}; decisions stored: {stored}"
        (noted,) = [r for r in rows if r.kind in ("permission", "error")]
        assert noted.kind == row
        if row == "error":
            assert noted.text == (
                "Could not record the answer to Delete the notes (disk I/O error); the agent "
                "was told the request was cancelled."
            )
    finally:
        await engine.close()


async def test_stops_asked_for_at_once_run_one_after_the_other(
    data_home: Path, project_dir: Path
) -> None:
    """A close and a quit (or two closes) at the same moment: the second found the first
    had already let the consumer go, and failed."""
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session(demo(), project_dir)
        engine.send(record.id, "table")
        await recorder.wait_for(lambda: len(recorder.view(record.id).texts()) >= 2)
        results = await asyncio.gather(
            *(engine.stop(record.id) for _ in range(3)), return_exceptions=True
        )
        assert results == [None, None, None]
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        assert rows[-1].text == (
            "The turn was stopped: the session was closed. The reply above is cut short."
        )


async def test_a_consumer_cancelled_mid_batch_still_shows_what_it_stored(
    store: Store, tmp_path: Path
) -> None:
    """A stop that gives up on a slow store cancels the consumer: every chunk it stored
    before that reaches the screen too (its frames were dropped with the batch)."""
    session = await store.create_session(agent="x", command=["x"], cwd=str(tmp_path))
    recorder = Recorder()
    live = LiveSession(session, AgentSpec(name="x", command=("x",)), store, recorder,
                       data_dir=tmp_path, handshake_timeout=1)  # fmt: skip
    stuck = asyncio.Event()
    apply = store.apply

    async def slow_third(chunk: Chunk) -> list[Frame]:
        if chunk.text == "three":
            stuck.set()
            await asyncio.Event().wait()  # a store that hangs on this chunk
        return await apply(chunk)

    store.apply = slow_third  # type: ignore[method-assign]
    for text in ("one ", "two ", "three"):
        live.inbox.queue.put_nowait(reply(session.id, text))
    live.inbox.ensure_consumer()
    await asyncio.wait_for(stuck.wait(), 10)
    assert live.inbox.consumer is not None
    live.inbox.consumer.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await live.inbox.consumer
    assert [r.text for r in await store.all_rows(session.id)] == ["one two "]
    assert_live_equals_stored(recorder, session.id, await store.all_rows(session.id))


async def test_a_tool_call_whose_content_is_a_number_costs_the_consumer_nothing(
    store: Store, tmp_path: Path
) -> None:
    """Following the tool calls iterated their content: a 7 killed the consumer, and the
    rest of its batch (a reply, the barrier a turn waits on) was lost with it."""
    session = await store.create_session(agent="x", command=["x"], cwd=str(tmp_path))
    recorder = Recorder()
    live = LiveSession(session, AgentSpec(name="x", command=("x",)), store, recorder,
                       data_dir=tmp_path, handshake_timeout=1)  # fmt: skip
    live.inbox.queue.put_nowait(
        {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "content": 7}
    )
    live.inbox.queue.put_nowait(reply(session.id, "after it"))
    await asyncio.wait_for(live.inbox.settle(), 10)  # the barrier is in the same batch
    rows = await store.all_rows(session.id)
    assert [(r.kind, r.text) for r in rows][-1] == ("agent", "after it")
    assert_live_equals_stored(recorder, session.id, rows)
    live.discard()
