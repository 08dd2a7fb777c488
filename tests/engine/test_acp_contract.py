"""The contract between the ACP SDK and Cockpit's side of it, checked with the recorded
traffic of real agents (`tests/captures`, see `tests/store/test_captures.py`).

Each capture goes through a REAL `acp.ClientSideConnection`, wired as Cockpit wires every
agent (`LiveSession.connect`: Cockpit's transport, its tap into the session's inbox, and
its client adapter), on one end of a socket pair. The test plays the agent on the other
end: it sends the capture's agent->client frames in order, and before each client->agent
frame of the capture it waits for Cockpit to send it (answering Cockpit's requests under
the ids Cockpit gave them). The session must end up with the rows the capture implies
(one row per message, its text the concatenated chunks, one row per tool call), and every
permission request answered as it was, its decision row stored before the answer left.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import AgentSpec, PermissionRequest
from cockpit.engine.session import LiveSession
from store.store import Store
from tests.store.test_captures import CAPTURES, expected_messages, frames_of
from tests.support.engine_helpers import Recorder, assert_live_equals_stored
from tests.support.waiting import eventually

Record = dict[str, Any]
AnswerCheck = Callable[[Record, Record], Awaitable[None]]

CLOSED_BY_COCKPIT = "session/close"
"""The capture's client closed the agent's session here; Cockpit closes its own way."""


@dataclass
class RecordedAgent:
    """The agent's end of the wire, played from a capture."""

    records: list[Record]
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    on_answer: AnswerCheck
    expecting: str | None = None
    """What the capture says Cockpit sends next (a method, or an answer), while waiting."""
    answers: list[tuple[Record, Record]] = field(default_factory=list)
    """The agent's requests as recorded, with Cockpit's answers to them."""

    async def play(self) -> None:
        """Play the capture to its end (or to where its client closed the session)."""
        ids: dict[Any, Any] = {}  # the recorded id of a client request -> Cockpit's id for it
        asked: dict[Any, Record] = {}  # the agent's own requests, by id
        for record in self.records:
            frame = record["frame"]
            if record["dir"] == "agent->client":
                if "method" not in frame:  # the answer to one of Cockpit's requests
                    frame = {**frame, "id": ids[frame["id"]]}
                elif "id" in frame:
                    asked[frame["id"]] = frame
                self.writer.write(json.dumps(frame).encode() + b"\n")
                await self.writer.drain()
                continue
            method = frame.get("method")
            if method == CLOSED_BY_COCKPIT:
                break
            self.expecting = method or f"the answer to request {frame['id']!r}"
            line = await self.reader.readline()
            self.expecting = None
            assert line, f"Cockpit closed the connection where the capture has {frame}"
            sent = json.loads(line)
            if method is not None:
                assert sent.get("method") == method, f"Cockpit sent {sent}, the capture {frame}"
                if "id" in frame:
                    ids[frame["id"]] = sent["id"]
            else:
                assert sent.get("id") == frame["id"] and "result" in sent, (
                    f"Cockpit answered {sent}, the capture {frame}"
                )
                await self.on_answer(asked[frame["id"]], sent)
                self.answers.append((frame, sent))


@dataclass
class Turn:
    """A prompt of the capture, and how its turn ended."""

    text: str
    stop_reason: str
    cancelled: bool
    """True when the capture's client cancelled the turn."""


def turns_of(records: list[Record]) -> list[Turn]:
    """The prompts of a capture, in order."""
    turns: list[Turn] = []
    for index, record in enumerate(records):
        frame = record["frame"]
        if record["dir"] != "client->agent" or frame.get("method") != "session/prompt":
            continue
        text = "".join(block.get("text", "") for block in frame["params"]["prompt"])
        rest = records[index + 1 :]
        end = next(
            i
            for i, later in enumerate(rest)
            if later["dir"] == "agent->client"
            and later["frame"].get("id") == frame["id"]
            and "method" not in later["frame"]
        )
        cancelled = any(later["frame"].get("method") == "session/cancel" for later in rest[:end])
        turns.append(Turn(text, rest[end]["frame"]["result"]["stopReason"], cancelled))
    return turns


def recorded_choices(records: list[Record]) -> dict[str, str]:
    """The option the capture's client chose for each permission request, by tool call."""
    asked = {
        r["frame"]["id"]: r["frame"]["params"]["toolCall"]["toolCallId"]
        for r in records
        if r["dir"] == "agent->client" and r["frame"].get("method") == "session/request_permission"
    }
    return {
        asked[r["frame"]["id"]]: r["frame"]["result"]["outcome"]["optionId"]
        for r in records
        if r["dir"] == "client->agent" and r["frame"].get("id") in asked and "result" in r["frame"]
    }


async def cancel_as_recorded(
    agent: RecordedAgent, live: LiveSession, running: asyncio.Future[str]
) -> None:
    """Cancel the turn where the capture's client did: once the agent has sent all it
    sent before the cancel, and waits for it."""
    await eventually(lambda: agent.expecting == "session/cancel" or running.done())
    assert await live.cancel(), "the turn ended before the capture's client cancelled it"


@pytest.fixture
async def socket_pair() -> AsyncIterator[
    tuple[
        tuple[asyncio.StreamReader, asyncio.StreamWriter],
        tuple[asyncio.StreamReader, asyncio.StreamWriter],
    ]
]:
    """Cockpit's end and the agent's end of one connection, as asyncio streams."""
    ours, theirs = socket.socketpair()
    cockpit_end = await asyncio.open_connection(sock=ours)
    agent_end = await asyncio.open_connection(sock=theirs)
    try:
        yield cockpit_end, agent_end
    finally:
        for _, writer in (cockpit_end, agent_end):
            writer.close()


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.stem for c in CAPTURES])
async def test_a_recorded_agent_through_the_sdk_connection_leaves_the_rows_it_implies(
    store: Store,
    capture: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    socket_pair: Any,
) -> None:
    records = frames_of(capture)
    choices = recorded_choices(records)
    (reader, writer), (agent_reader, agent_writer) = socket_pair
    session = await store.create_session(agent=capture.stem, command=["x"], cwd=str(tmp_path))
    recorder = Recorder()

    def as_recorded(request: PermissionRequest) -> str | None:
        return choices.get(request.tool_call_id)

    live = LiveSession(
        session,
        AgentSpec(name=capture.stem, command=("x",)),
        store,
        recorder,
        data_dir=tmp_path / "cockpit-data",
        handshake_timeout=10,
        auto_answer=as_recorded,
    )

    async def stored_before_answered(request: Record, answer: Record) -> None:
        tool_call_id = request["params"]["toolCall"]["toolCallId"]
        rows = await store.all_rows(session.id)
        assert any(
            row.kind == "permission" and (row.payload or {}).get("toolCallId") == tool_call_id
            for row in rows
        ), f"the answer to {tool_call_id} reached the agent before its decision row was stored"

    agent = RecordedAgent(records, agent_reader, agent_writer, stored_before_answered)
    playing = asyncio.ensure_future(agent.play())
    live.connect(reader, writer)
    try:
        await asyncio.wait_for(live.lifecycle.handshake(), 10)

        async def started() -> None:
            """The agent was started above, on the socket pair."""

        monkeypatch.setattr(live.lifecycle, "start", started)
        for turn in turns_of(records):
            running = asyncio.ensure_future(live.prompt(turn.text))
            if turn.cancelled:
                await cancel_as_recorded(agent, live, running)
            assert await asyncio.wait_for(running, 30) == turn.stop_reason
        await asyncio.wait_for(playing, 10)
    finally:
        playing.cancel()
        if live.conn is not None:
            await live.conn.close()
        await live.inbox.drain()
        live.discard()

    rows = await store.all_rows(session.id)
    messages = [row for row in rows if row.kind in {"user", "agent", "thought", "tool"}]
    assert [(r.kind, r.text if r.kind != "tool" else "") for r in messages] == expected_messages(
        records
    )
    assert_live_equals_stored(recorder, session.id, rows)
    tools = [row.payload or {} for row in rows if row.kind == "tool"]
    assert all(tool.get("title") for tool in tools), "every tool row has its title"
    assert all(tool.get("status") == "completed" for tool in tools)

    decisions = [row.payload or {} for row in rows if row.kind == "permission"]
    assert [(d.get("toolCallId"), d.get("optionId")) for d in decisions] == list(choices.items())
    assert all(d.get("decidedBy") == "policy" for d in decisions)
    assert [sent["result"] for _, sent in agent.answers] == [
        recorded["result"] for recorded, _ in agent.answers
    ], "every permission request answered as the capture's client answered it"

    cancelled = sum(turn.stop_reason == "cancelled" for turn in turns_of(records))
    notes = [(row.kind, row.text) for row in rows if row.kind in {"notice", "error"}]
    assert notes == [("notice", "The turn was cancelled.")] * cancelled, (
        "nothing the agents sent was refused or lost on the way through the SDK"
    )


@pytest.mark.filterwarnings("error")  # the SDK warns of unstable methods a client has
async def test_extensions_are_method_not_found_and_elicitation_is_served_without_a_warning(
    store: Store, tmp_path: Path, socket_pair: Any
) -> None:
    """Extension methods: the client adapter answers them "method not found", as an SDK
    client without them does. Elicitation (unstable in the SDK) is served, since Cockpit
    opts in: it reaches Cockpit (no agent runs here, so the question is cancelled at
    once), and nothing is written on the terminal (the SDK warns when a client has an
    unstable method it did not opt in to, which would land across the TUI)."""
    (reader, writer), (agent_reader, agent_writer) = socket_pair
    session = await store.create_session(agent="x", command=["x"], cwd=str(tmp_path))
    live = LiveSession(
        session,
        AgentSpec(name="x", command=("x",)),
        store,
        Recorder(),
        data_dir=tmp_path / "cockpit-data",
        handshake_timeout=10,
    )
    live.connect(reader, writer)
    elicitation = {
        "sessionId": "s",
        "mode": "url",
        "message": "Sign in",
        "url": "https://example.com",
        "elicitationId": "e",
    }
    try:
        for number, (method, params) in enumerate(
            [("elicitation/create", elicitation), ("_vendor.example/ping", {})]
        ):
            request = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
            agent_writer.write(json.dumps(request).encode() + b"\n")
            answer = json.loads(await asyncio.wait_for(agent_reader.readline(), 10))
            assert answer["id"] == number
            if method == "elicitation/create":
                assert answer.get("result") == {"action": "cancel"}, answer
            else:
                assert answer["error"]["code"] == -32601, f"{method}: {answer}"
    finally:
        assert live.conn is not None
        await live.conn.close()
        live.discard()
