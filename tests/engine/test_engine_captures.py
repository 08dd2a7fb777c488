"""The recorded sessions of real agents through the engine's own chunk path: the transport's
screen of requests and its tap, the session inbox and its single consumer, into the store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cockpit.api import AgentSpec, FramesEvent
from cockpit.engine.session import LiveSession
from store.store import Store
from tests.store.test_captures import CAPTURES, expected_messages, frames_of
from tests.support.engine_helpers import Recorder, assert_live_equals_stored


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.stem for c in CAPTURES])
async def test_captures_through_the_tap_and_inbox(
    store: Store, capture: Path, tmp_path: Path
) -> None:
    records = frames_of(capture)
    session = await store.create_session(agent=capture.stem, command=["x"], cwd=str(tmp_path))
    recorder = Recorder()
    live = LiveSession(
        session,
        AgentSpec(name="x", command=("x",)),
        store,
        recorder,
        data_dir=tmp_path,
        handshake_timeout=1,
    )
    live.inbox.consumer = asyncio.create_task(live.inbox.consume())
    for record in records:
        frame = record["frame"]
        if record["dir"] == "client->agent" and frame.get("method") == "session/prompt":
            await live.inbox.settle()
            text = "".join(block.get("text", "") for block in frame["params"]["prompt"])
            _, frames = await store.begin_turn(session.id, text)
            recorder(FramesEvent(session.id, tuple(frames)))
        elif record["dir"] == "agent->client":
            if "sessionId" in frame.get("result", {}):
                live.lifecycle.agent_session_id = frame["result"]["sessionId"]
            if "id" in frame and "method" in frame:  # a request: screened as the transport does
                assert not await live.tap.screen(frame), "a valid request was refused"
            live.tap(frame)
    await live.inbox.settle()
    await store.end_turn(session.id)
    live.inbox.consumer.cancel()
    rows = await store.all_rows(session.id)
    expected = expected_messages(records)
    assert [(r.kind, r.text if r.kind != "tool" else "") for r in rows] == expected
    assert_live_equals_stored(recorder, session.id, rows)
    tools = [r.payload for r in rows if r.kind == "tool"]
    assert all(t and t.get("title") for t in tools), "every tool row has its title"
