"""History an agent replays after it answered `session/load`, through the real engine and
a real agent process that plays the recorded gemini-cli capture (tests/support/capture_agent.py):
in this process (`--local`) and through the service, with the late part of the replay 0,
0.5 and 3 s after the prompt; with nothing stored (rule 5 keeps the replay); and the demo
agent, which replays on time, still reloads and answers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from cockpit.paths import database_path
from store import Row
from store.store import Store
from tests.support.engine_helpers import Recorder, open_engine, rows_of
from tests.support.helpers import texts
from tests.support.late_replay import (
    LIVE_PROMPT,
    LIVE_REPLY,
    SESSION_ID,
    STORED_ROWS,
    TURNS,
    player,
    store_history,
)
from tests.support.service_helpers import cockpit, services_stopped

RELOADED = "Reconnected: the agent reloaded its session; the transcript is Cockpit's own record."


def live_view(recorder: Recorder, session: str) -> list[tuple[str, str, str]]:
    return [(b.key, b.kind, b.text) for b in recorder.view(session)]


def keyed(rows: list[Row]) -> list[tuple[str, str, str]]:
    return [(r.key, r.kind, r.text) for r in rows]


@pytest.mark.parametrize("late", [0, 0.5, 3])
@pytest.mark.parametrize("started", [False, True], ids=["the-prompt-starts-it", "started-first"])
async def test_a_late_replay_leaves_the_transcript_as_it_was(
    data_home: Path, project_dir: Path, late: float, started: bool
) -> None:
    """The reload of the capture's session (16 rows) adds the notice, the prompt and one
    reply: not a replayed prompt, not a copied reply, not a tool title changed."""
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session(player(late), project_dir)
        await engine.store.update_session(record.id, agent_session_id=SESSION_ID)
        before = await store_history(engine.store, record.id)
        if started:
            await engine.start(record.id)
        assert await engine.prompt(record.id, LIVE_PROMPT) == "end_turn"
        after = await rows_of(engine, record.id)
        assert after[:STORED_ROWS] == before
        added = [("user", LIVE_PROMPT), ("notice", RELOADED)]
        if started:
            added.reverse()
        assert texts(after[STORED_ROWS:]) == [*added, ("agent", LIVE_REPLY)]
        assert live_view(recorder, record.id) == keyed(after[STORED_ROWS:])


async def test_with_nothing_stored_the_replay_is_kept(data_home: Path, project_dir: Path) -> None:
    """Rule 5: a session imported by the agent's id holds no transcript, so what the agent
    replays is kept, the late part included."""
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session(player(0.5), project_dir)
        await engine.store.update_session(record.id, agent_session_id=SESSION_ID)
        await engine.start(record.id)
        assert await engine.prompt(record.id, LIVE_PROMPT) == "end_turn"
        rows = await rows_of(engine, record.id)
        kept = "\n".join(row.text for row in rows)
        assert rows[0].text.startswith("<session_context>")
        for prompt, reply, _ in TURNS:
            assert prompt in kept and reply in kept
        assert LIVE_PROMPT in kept and rows[-1].text.endswith(LIVE_REPLY)
        assert live_view(recorder, record.id) == keyed(rows)


@pytest.mark.parametrize("started", [False, True], ids=["the-prompt-starts-it", "started-first"])
async def test_an_agent_that_replays_on_time_still_answers_a_prompt_it_answered_before(
    data_home: Path, project_dir: Path, started: bool
) -> None:
    """The demo agent replays its whole history before it answers the load. The same
    prompt again gets the same reply, which is live: the recital is over by then."""
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("demo", project_dir)
        assert await engine.prompt(record.id, "table") == "end_turn"
        assert await engine.prompt(record.id, "think") == "end_turn"
        before = await rows_of(engine, record.id)
        await engine.stop(record.id)
        first_turn = [r for r in before if r.turn == 1]
        if started:
            await engine.start(record.id)
        assert await engine.prompt(record.id, "table") == "end_turn"
        after = await rows_of(engine, record.id)
        assert after[: len(before)] == before
        added = [r for r in after[len(before) :] if r.kind != "notice"]
        assert texts(added) == texts(first_turn)
        assert [r.text for r in after[len(before) :] if r.kind == "notice"] == [RELOADED]


# Through the service ---------------------------------------------------------------------------


@pytest.fixture
def service_home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home whose commands attach to its service; no process of it survives the test."""
    monkeypatch.delenv("COCKPIT_LOCAL")
    isolated_home.mkdir(parents=True, exist_ok=True)
    with services_stopped(isolated_home):
        yield isolated_home


async def stored_session(project: Path, late: float) -> tuple[str, list[Row]]:
    """The capture's session stored as Cockpit left it, with no service running yet."""
    async with await Store.open(database_path()) as store:
        spec = player(late)
        record = await store.create_session(agent=spec.name, command=spec.command, cwd=str(project))
        await store.update_session(record.id, agent_session_id=SESSION_ID, status="closed")
        rows = await store_history(store, record.id)
        await store.release(record.id)
    return record.id, rows


@pytest.mark.parametrize("late", [0, 3])
async def test_a_late_replay_through_the_service_leaves_the_transcript_as_it_was(
    service_home: Path, project_dir: Path, late: float
) -> None:
    session, before = await stored_session(project_dir, late)
    sent = await asyncio.to_thread(
        cockpit, "send", session, LIVE_PROMPT, "--wait", home=service_home
    )
    assert sent.returncode == 0, sent.stderr
    assert LIVE_REPLY in sent.stdout
    assert "hello first" not in sent.stdout  # the replay is not shown as the reply
    async with await Store.open(database_path()) as store:
        after = await store.all_rows(session)
    assert after[:STORED_ROWS] == before
    assert texts(after[STORED_ROWS:]) == [
        ("user", LIVE_PROMPT),
        ("notice", RELOADED),
        ("agent", LIVE_REPLY),
    ]
