"""Each part of a live session built alone, from plain fakes of what it reads and the
callbacks it changes its session through: the lifecycle, the turns and the permission
broker each keep their own rules without a `LiveSession` around them. The store and the
inbox are real; the agent's side (its connection, its process) is faked at the wire. And
no part names the object that builds it: neither the session's parts nor the bundled
agents' turns."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from acp import PROTOCOL_VERSION, RequestError
from acp.core import ClientSideConnection
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
)

from cockpit.api import AgentSpec, StartError, Status
from cockpit.engine.inbox import SessionInbox
from cockpit.engine.lifecycle import NO_ENVIRONMENT, AgentLifecycle, LifecycleNeeds
from cockpit.engine.permission_broker import PermissionBroker, SessionState
from cockpit.engine.sign_in import SessionSignIn
from cockpit.engine.turns import RUN_ENDED, TurnNeeds, Turns
from store import SessionRecord
from store.store import Store
from tests.support.engine_helpers import Recorder

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class FakeSession:
    """The state a part reads of its session, and a record of what it changed there."""

    status: str = Status.READY
    statuses: list[tuple[str, str]] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    """The detail of each status change that ended a turn."""
    titles: list[str] = field(default_factory=list)
    calls: list[tuple[Any, ...]] = field(default_factory=list)

    def set_status(self, status: str, detail: str = "", *, turn_ended: bool = False) -> None:
        self.status = status
        self.statuses.append((status, detail))
        if turn_ended:
            self.ended.append(detail)

    async def close_open(self, decided_by: str, reason: str | None, tool_status: str) -> None:
        self.calls.append(("close_open", decided_by, reason, tool_status))

    def release_questions(self) -> None:
        self.calls.append(("release_questions",))

    async def close_terminals(self) -> None:
        self.calls.append(("close_terminals",))


@dataclass
class Parts:
    """A stored session, its inbox (consuming) and what its parts emit."""

    record: SessionRecord
    store: Store
    inbox: SessionInbox
    recorder: Recorder
    root: Path

    async def rows(self) -> list[tuple[str, str]]:
        await self.inbox.settle()
        return [(row.kind, row.text) for row in await self.store.all_rows(self.record.id)]


@pytest.fixture
async def parts(store: Store, tmp_path: Path) -> AsyncIterator[Parts]:
    record = await store.create_session(agent="x", command=["x"], cwd=str(tmp_path))
    recorder = Recorder()
    inbox = SessionInbox(record.id, store, recorder)
    inbox.ensure_consumer()
    try:
        yield Parts(record, store, inbox, recorder, tmp_path)
    finally:
        inbox.discard()


# -- the lifecycle ----------------------------------------------------------------------------


@dataclass
class FakeTurn:
    """A turn that runs until it is cancelled."""

    active: bool = True
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    stopped_for: str | None = None
    cancelled: bool = False

    def will_stop(self, reason: str) -> None:
        self.stopped_for = reason

    async def cancel(self) -> bool:
        self.cancelled = True
        self.active = False
        self.idle.set()
        return True


class ReloadingAgent:
    """An agent's side of the connection that says it reloads sessions, and cannot load
    the one asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def initialize(self, **kwargs: Any) -> InitializeResponse:
        self.asked.append("initialize")
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=True),
        )

    async def load_session(self, **kwargs: Any) -> None:
        self.asked.append(f"load {kwargs['session_id']}")
        raise RequestError.resource_not_found(kwargs["session_id"])

    async def new_session(self, **kwargs: Any) -> NewSessionResponse:
        self.asked.append("new")
        return NewSessionResponse(session_id="fresh")


async def no_servers(capabilities: Any) -> list[Any]:
    """The MCP servers a test's agent is handed: none."""
    return []


def lifecycle_of(
    parts: Parts, session: FakeSession, turn: FakeTurn, agent: ReloadingAgent | None = None
) -> LifecycleNeeds:
    def connect(stdout: asyncio.StreamReader, stdin: asyncio.StreamWriter) -> ClientSideConnection:
        assert agent is not None, "this test connects no agent"
        return cast(ClientSideConnection, agent)

    return LifecycleNeeds(
        session_id=parts.record.id,
        root=parts.root,
        store=parts.store,
        emit=parts.recorder,
        inbox=parts.inbox,
        data_dir=parts.root / "data",
        spec=lambda: AgentSpec(name="x", command=("x",)),
        environment=lambda: None,
        handshake_timeout=lambda: 5.0,
        stall_limit=5.0,
        status=lambda: session.status,
        set_status=session.set_status,
        connect=connect,
        use_environment=lambda world: None,
        close_open=session.close_open,
        release_questions=session.release_questions,
        close_terminals=session.close_terminals,
        turn=lambda: turn,
        mcp_servers=no_servers,
        sign_in=SessionSignIn(parts.record.id),
    )


async def test_a_stop_ends_the_running_turn_first_and_leaves_the_session_closed(
    parts: Parts,
) -> None:
    session, turn = FakeSession(status=Status.WORKING), FakeTurn()
    lifecycle = AgentLifecycle(lifecycle_of(parts, session, turn), None)
    await lifecycle.stop("Cockpit quit")
    assert turn.stopped_for == "Cockpit quit" and turn.cancelled
    assert session.calls == [
        ("close_open", "stop", "the session was stopped", "cancelled"),
        ("release_questions",),
        ("close_terminals",),
    ]
    assert session.statuses == [(Status.CLOSED, "")]
    stored = await parts.store.get_session(parts.record.id)
    assert stored is not None and stored.status == Status.CLOSED
    assert lifecycle.stopping and not lifecycle.running


async def test_a_start_without_the_users_world_fails_with_a_row_saying_why(
    parts: Parts,
) -> None:
    session = FakeSession(status=Status.CLOSED)
    lifecycle = AgentLifecycle(lifecycle_of(parts, session, FakeTurn(active=False)), None)
    with pytest.raises(StartError, match="brought no environment"):
        await lifecycle.start()
    assert await parts.rows() == [("error", NO_ENVIRONMENT)]
    assert session.statuses == [
        (Status.STARTING, "x"),
        (Status.ERROR, NO_ENVIRONMENT.splitlines()[0]),
    ]
    assert lifecycle.exit_reported and lifecycle.process is None


async def test_a_session_the_agent_cannot_load_starts_afresh_and_says_so(
    parts: Parts,
) -> None:
    session, agent = FakeSession(status=Status.STARTING), ReloadingAgent()
    needs = lifecycle_of(parts, session, FakeTurn(active=False), agent)
    lifecycle = AgentLifecycle(needs, "earlier")
    lifecycle.connect(cast(asyncio.StreamReader, None), cast(asyncio.StreamWriter, None))
    await lifecycle.handshake()
    assert agent.asked == ["initialize", "load earlier", "new"]
    assert lifecycle.agent_session_id == "fresh"
    [(kind, text)] = await parts.rows()
    assert kind == "notice"
    assert text.startswith("Started a new agent session: the agent could not load its session")
    stored = await parts.store.get_session(parts.record.id)
    assert stored is not None and stored.agent_session_id == "fresh"


# -- the turns --------------------------------------------------------------------------------


class PromptedConnection:
    """The connection of an agent that ends every turn at its output token limit."""

    def __init__(self) -> None:
        self.prompts: list[list[Any]] = []

    async def prompt(self, session_id: str, prompt: list[Any]) -> PromptResponse:
        self.prompts.append(prompt)
        return PromptResponse(stop_reason="max_tokens")


@dataclass
class FakeAgent:
    """The agent's lifecycle as a turn sees it: up, with its connection."""

    conn: Any = field(default_factory=PromptedConnection)
    agent_session_id: str | None = "agent-session"
    process: Any = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    async def claim(self) -> None:
        self.asked.append("claim")

    async def start(self) -> None:
        self.asked.append("start")

    async def stop(self, reason: str) -> None:
        self.asked.append(f"stop: {reason}")

    async def report_exit(self, code: int) -> None:
        self.asked.append(f"exit {code}")

    def sign_in_needed(self, error: BaseException) -> str:
        self.asked.append("sign in")
        return "sign in, please"


async def test_a_turn_cut_at_the_token_limit_says_so_and_the_session_is_ready_again(
    parts: Parts,
) -> None:
    session, agent = FakeSession(), FakeAgent()
    new_turns: list[str] = []

    async def close_unanswered() -> None:
        session.calls.append(("close_unanswered",))

    turns = Turns(
        TurnNeeds(
            session_id=parts.record.id,
            root=parts.root,
            store=parts.store,
            emit=parts.recorder,
            inbox=parts.inbox,
            agent=agent,
            status=lambda: session.status,
            set_status=session.set_status,
            titled=session.titles.append,
            new_turn=lambda: new_turns.append("new"),
            close_unanswered=close_unanswered,
            close_open=session.close_open,
        )
    )
    assert await turns.prompt("Write the notes\nand more", then_stop=True) == "max_tokens"
    assert await parts.rows() == [
        ("user", "Write the notes\nand more"),
        ("notice", "The agent stopped: it reached its output token limit."),
    ]
    assert agent.asked == ["claim", "start", f"stop: {RUN_ENDED}"]
    assert len(agent.conn.prompts) == 1 and new_turns == ["new"]
    assert session.titles == ["Write the notes"]
    assert [status for status, _ in session.statuses] == [Status.WORKING, Status.READY]
    assert session.ended == ["max_tokens"]
    assert session.calls == [("close_unanswered",)]
    assert not turns.active and turns.idle.is_set()


# -- the permission broker --------------------------------------------------------------------


async def test_a_question_waits_for_the_user_and_its_row_is_stored_before_the_answer(
    parts: Parts,
) -> None:
    session = FakeSession(status=Status.WORKING)
    broker = PermissionBroker(
        parts.record.id,
        parts.store,
        parts.recorder,
        parts.inbox,
        parts.root,
        SessionState(
            status=lambda: session.status,
            set_status=session.set_status,
            closing=lambda: False,
            agent_gone=lambda: False,
        ),
    )
    asking = asyncio.ensure_future(
        broker.ask(
            {"toolCallId": "t1", "title": "Edit notes.md", "kind": "edit"},
            [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ],
        )
    )
    await parts.recorder.wait_for(lambda: parts.recorder.asked, 10)
    [request] = parts.recorder.asked
    assert list(broker.pending) == [request.id] and not asking.done()
    assert session.statuses == [(Status.WAITING, "Edit notes.md")]
    await broker.answer(request.id, "yes")
    assert (await parts.rows())[-1][0] == "permission"
    response = await asyncio.wait_for(asking, 10)
    assert response.outcome.outcome == "selected"
    assert not broker.pending
    assert session.statuses[-1] == (Status.WORKING, "")


# -- none holds its owner ---------------------------------------------------------------------

PARTS_AND_OWNERS = {
    "cockpit/engine/lifecycle.py": ("cockpit.engine.session", "LiveSession"),
    "cockpit/engine/turns.py": ("cockpit.engine.session", "LiveSession"),
    "cockpit/engine/permission_broker.py": ("cockpit.engine.session", "LiveSession"),
    "cockpit/agentkit/claude/turn.py": ("cockpit.agentkit.claude.agent", "ClaudeAgent"),
    "cockpit/agentkit/demo/turn.py": ("cockpit.agentkit.demo.agent", "DemoAgent"),
    "cockpit/agentkit/demo/replies.py": ("cockpit.agentkit.demo.agent", "DemoAgent"),
    "cockpit/agentkit/demo/tools.py": ("cockpit.agentkit.demo.agent", "DemoAgent"),
}
"""Each part, and the object that builds it, which it must not reach back into."""


@pytest.mark.parametrize("path", sorted(PARTS_AND_OWNERS))
def test_a_part_neither_imports_nor_names_its_owner(path: str) -> None:
    """Not even for type checking: a part that names its owner can reach all of it."""
    module, owner = PARTS_AND_OWNERS[path]
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    named = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert module not in imported
    assert owner not in named
