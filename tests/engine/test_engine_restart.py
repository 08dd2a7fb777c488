"""Restarts and exits through a tiny real agent (tests/support/tiny_agent.py) whose capabilities each
test chooses: resume, a failed resume, a load that replays nothing, neither; an agent that
dies with a question open; what a prompt response carries (stop reason, usage)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cockpit.api import AgentSpec, Status
from store import SessionBusy
from tests.support.engine_helpers import assert_live_equals_stored, open_engine, rows_of

TINY = str(Path(__file__).resolve().parents[1] / "support" / "tiny_agent.py")


def tiny(*flags: str) -> AgentSpec:
    """The tiny test agent with command-line flags."""
    return AgentSpec(name="tiny", command=(sys.executable, TINY, *flags), title="tiny")


async def restarted_notices(home: Path, project: Path, spec: AgentSpec) -> tuple[list[str], str]:
    """Run one turn, stop the agent, start it again: the notices the restart wrote, and
    whether the agent session id changed ("same" or "new")."""
    async with open_engine(home) as (engine, _recorder):
        record = await engine.create_session(spec, project)
        assert await engine.prompt(record.id, "hello") == "end_turn"
        before = await rows_of(engine, record.id)
        first = (await engine.session(record.id)).agent_session_id
        assert first is not None
        await engine.stop(record.id)
        await engine.start(record.id)
        assert engine.status(record.id) == Status.READY
        after = await rows_of(engine, record.id)
        assert [r.text for r in after[: len(before)]] == [r.text for r in before]
        second = (await engine.session(record.id)).agent_session_id
        assert await engine.prompt(record.id, "hello") == "end_turn"  # it goes on working
        notices = [r.text for r in after[len(before) :] if r.kind == "notice"]
        assert len(after) - len(before) == len(notices)
        return notices, "same" if second == first else "new"


async def test_restart_resumes_when_the_agent_can(data_home: Path, project_dir: Path) -> None:
    notices, session = await restarted_notices(data_home, project_dir, tiny("--caps", "resume"))
    assert notices == ["Reconnected: the agent resumed its session."]
    assert session == "same"


async def test_a_failed_resume_falls_back_to_a_new_session(
    data_home: Path, project_dir: Path
) -> None:
    notices, session = await restarted_notices(
        data_home, project_dir, tiny("--caps", "resume", "--resume-fails")
    )
    (notice,) = notices
    assert notice.startswith("Started a new agent session: the agent could not resume its session")
    assert "forgot everything" in notice
    assert "does not remember the earlier turns" in notice
    assert session == "new"


async def test_a_load_that_replays_nothing_is_said_honestly(
    data_home: Path, project_dir: Path
) -> None:
    notices, session = await restarted_notices(data_home, project_dir, tiny("--caps", "load"))
    assert notices == [
        "Reconnected, but the agent replayed none of the 1 earlier turn(s): it may not "
        "remember them. The transcript above is Cockpit's own record."
    ]
    assert session == "same"


async def test_an_agent_that_can_neither_load_nor_resume_starts_afresh(
    data_home: Path, project_dir: Path
) -> None:
    notices, session = await restarted_notices(data_home, project_dir, tiny("--caps", "none"))
    (notice,) = notices
    assert notice.startswith("Started a new agent session: the agent cannot reload sessions.")
    assert session == "new"


async def test_an_agent_that_dies_while_asking_leaves_nothing_open(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session(tiny(), project_dir)
        assert await engine.prompt(record.id, "ask-and-exit") == "error"
        assert recorder.asked, "the agent asked before it died"
        assert engine.pending_permissions() == []
        assert recorder.resolved == [(recorder.asked[0].id, None)]
        rows = await rows_of(engine, record.id)
        (tool,) = [r for r in rows if r.kind == "tool"]
        assert tool.payload is not None and tool.payload["status"] == "failed"
        (decision,) = [r for r in rows if r.kind == "permission"]
        assert decision.text == "Cancelled: Delete everything (the agent exited)"
        assert decision.payload is not None and decision.payload["reason"] == "the agent exited"
        error = rows[-1]
        assert error.kind == "error" and "The agent exited with code 9." in error.text
        assert "exiting while a question is open" in error.text
        assert engine.status(record.id) == Status.EXITED
        assert_live_equals_stored(recorder, record.id, rows)


@pytest.mark.parametrize(
    ("word", "notice"),
    [
        ("max_tokens", "The agent stopped: it reached its output token limit."),
        ("refusal", "The agent refused to continue."),
    ],
)
async def test_a_stop_reason_other_than_end_turn_is_noted(
    data_home: Path, project_dir: Path, word: str, notice: str
) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session(tiny(), project_dir)
        assert await engine.prompt(record.id, word) == word
        rows = await rows_of(engine, record.id)
        assert [r.kind for r in rows] == ["user", "agent", "notice"]
        assert rows[2].text.startswith(notice)
        assert engine.status(record.id) == Status.READY


async def test_usage_from_the_prompt_response_is_stored_on_the_session(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session(tiny(), project_dir)
        assert await engine.prompt(record.id, "usage") == "end_turn"
        usage = (await engine.session(record.id)).usage
        assert usage is not None
        last = usage["lastTurn"]
        assert last["inputTokens"] == 20 and last["outputTokens"] == 10
        assert last["totalTokens"] == 30
        assert last["_meta"] == {
            "quota": {"token_count": {"input_tokens": 20, "output_tokens": 10}}
        }


async def test_a_session_another_cockpit_writes_is_refused_clearly(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home) as (first, _recorder):
        record = await first.create_session(tiny(), project_dir)
        assert await first.prompt(record.id, "hello") == "end_turn"
        async with open_engine(data_home) as (second, recorder):
            with pytest.raises(SessionBusy, match="open in another Cockpit"):
                await second.start(record.id)
            assert recorder.statuses[-1][1] == Status.ERROR
            assert "open in another Cockpit" in recorder.statuses[-1][2]
            recorder.statuses.clear()
            with pytest.raises(SessionBusy):
                await second.prompt(record.id, "mine now?")
            assert [status for _, status, _ in recorder.statuses] == [Status.ERROR]
            live = second._live[record.id]
            assert live.process is None  # no agent was started for it
            assert [r.text for r in await rows_of(second, record.id)] == ["hello", "ok"]
            await first.stop(record.id)  # the first lets go of it
            assert await second.prompt(record.id, "mine now") == "end_turn"
            texts = [r.text for r in await rows_of(second, record.id)]
            assert texts[2] == "mine now" and texts[-1] == "ok"
