"""One running session: the engine's one object per session, composed of one part per job.

- `lifecycle` (`AgentLifecycle`): the agent process and the SDK connection, from spawn and
  handshake (or reload) to stop;
- `tap` (`AgentTap`) and `inbox` (`SessionInbox`): every update the agent sends is tapped by
  the transport, in arrival order, into the session's inbox; ONE consumer applies the inbox
  to the store and emits the frames;
- `turns` (`Turns`): prompts, their cancel and their end;
- `broker` (`PermissionBroker`): the agent's permission requests and their answers;
- `requests` (`AgentRequests`): the agent's `fs/*` and `terminal/*` requests;
- `checkpoints` (`Checkpoints`, a worktree session's only): its files as each turn starts
  and ends, and putting them back.

The turn, permission answers and cancel go through the same inbox, so a decision row always
lands in order, and is committed before the agent hears the answer.

No part holds this object: each takes a frozen set of what it reads and callbacks for what
it changes (`LifecycleNeeds`, `TurnNeeds`, the broker's `SessionState`), which this object
wires, so that each part can be read and tested alone. The session's status, its record
and its agent spec are this object's, changed through those callbacks (and by the
engine); the agent's process, its connection and the agent's own session id are the
lifecycle's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from acp.core import ClientSideConnection

from cockpit.acp_types import ContentBlock
from cockpit.api import (
    AgentSpec,
    EngineEvent,
    SessionEvent,
    Status,
    StatusEvent,
    read_worktree,
)
from cockpit.engine.agent_process import AgentProcess
from cockpit.engine.agent_requests import AgentRequests
from cockpit.engine.checkpoints import Checkpoints
from cockpit.engine.checkpoints.rules import restore_refusal
from cockpit.engine.client_adapter import ClientAdapter
from cockpit.engine.errors import describe
from cockpit.engine.inbox import SessionInbox
from cockpit.engine.lifecycle import AgentLifecycle, LifecycleNeeds, sdk_connection
from cockpit.engine.permission_broker import AutoAnswer, PermissionBroker, SessionState
from cockpit.engine.plans.keeper import McpServer
from cockpit.engine.policy import Policy
from cockpit.engine.questions import PendingRequest
from cockpit.engine.shell_runs import ShellRuns
from cockpit.engine.sign_in import SessionSignIn
from cockpit.engine.stall import STALL_LIMIT
from cockpit.engine.tap import AgentTap
from cockpit.engine.turns import TurnNeeds, Turns
from cockpit.engine.worktrees.ports import with_ports
from cockpit.environment import Environment
from store import Chunk, SessionRecord, note
from store.store import Store

log = logging.getLogger(__name__)


class LiveSession:
    """A stored session with an agent process attached."""

    def __init__(
        self,
        record: SessionRecord,
        spec: AgentSpec,
        store: Store,
        emit: Callable[[EngineEvent], None],
        *,
        data_dir: Path,
        handshake_timeout: float,
        stall_limit: float = STALL_LIMIT,
        auto_answer: AutoAnswer | None = None,
        policy: Callable[[], Policy] | None = None,
        environment: Callable[[], Environment | None] = lambda: None,
        mcp_servers: Callable[[Mapping[str, Any]], Awaitable[list[McpServer]]] | None = None,
    ) -> None:
        self.id = record.id
        self.record = record
        self.spec = spec
        self.root = Path(record.cwd)
        self.emit = emit
        self.handshake_timeout = handshake_timeout
        """Seconds its agent may take to start, at most."""
        self.status = Status.CLOSED
        self.detail = ""
        """What the last status change said (why the agent failed to start...)."""
        self.inbox = SessionInbox(self.id, store, emit)
        self.broker = PermissionBroker(
            self.id,
            store,
            emit,
            self.inbox,
            self.root,
            SessionState(
                status=lambda: self.status,
                set_status=self.set_status,
                closing=self.closing,
                agent_gone=self.agent_gone,
            ),
            auto_answer=auto_answer,
            policy=policy,
        )
        made = read_worktree(record.info)
        self.ports = made.ports if made is not None else ()
        """The free ports of a worktree session: its agent, terminals and `!commands` are
        told them (`COCKPIT_PORT`)."""
        self.shells = ShellRuns(self.id, self.root, self.inbox, self.ports)
        """The commands the user runs in this session with `!`."""
        self.requests = AgentRequests(
            self.id,
            self.root,
            lambda: self.spec,
            data_dir,
            self.inbox,
            self.broker,
            in_worktree=_in_worktree(record),
        )
        self.sign_in = SessionSignIn(self.id)
        """How its agent signs in (in memory only: a key typed for it is never stored)."""
        self.tap = AgentTap(
            self.id, self.inbox, self.broker, lambda: self.lifecycle.agent_session_id
        )
        self.lifecycle = AgentLifecycle(
            LifecycleNeeds(
                session_id=self.id,
                root=self.root,
                store=store,
                emit=emit,
                inbox=self.inbox,
                data_dir=data_dir,
                spec=lambda: self.spec,
                environment=lambda: with_ports(environment(), self.ports),
                handshake_timeout=lambda: self.handshake_timeout,
                stall_limit=stall_limit,
                status=lambda: self.status,
                set_status=self.set_status,
                connect=functools.partial(
                    sdk_connection,
                    tap=self.tap,
                    screen=self.tap.screen,
                    on_dropped=self.inbox.dropped,
                    client=ClientAdapter(self.broker, self.requests),
                ),
                use_environment=self.requests.use_environment,
                close_open=self.close_open,
                release_questions=self.broker.release_all,
                close_terminals=self.requests.close,
                turn=lambda: self.turns,
                mcp_servers=mcp_servers or _none,
                sign_in=self.sign_in,
            ),
            record.agent_session_id,
        )
        self.checkpoints = (
            Checkpoints(self.id, Path(made.path), made.copied) if made is not None else None
        )
        """The session's checkpoints: a session in its own worktree keeps them."""
        self.turns = Turns(
            TurnNeeds(
                session_id=self.id,
                root=self.root,
                store=store,
                emit=emit,
                inbox=self.inbox,
                agent=self.lifecycle,
                status=lambda: self.status,
                set_status=self.set_status,
                titled=self._titled,
                new_turn=self.broker.new_turn,
                close_unanswered=self.broker.close_unanswered,
                close_open=self.close_open,
                checkpoint=self._checkpoint if self.checkpoints is not None else None,
            )
        )

    # -- status -------------------------------------------------------------------------------

    def set_status(self, status: str, detail: str = "", *, turn_ended: bool = False) -> None:
        """Change the live status and tell the clients."""
        self.status = status
        self.detail = detail
        self.emit(StatusEvent(self.id, status, detail, turn_ended))

    def _titled(self, title: str) -> None:
        """The first prompt titled the session: `service status` reads it from memory."""
        self.record = dataclasses.replace(self.record, title=title)

    # -- the agent (the lifecycle's) ----------------------------------------------------------

    @property
    def running(self) -> bool:
        """True while an agent process is attached and alive."""
        return self.lifecycle.running

    @property
    def process(self) -> AgentProcess | None:
        """The agent's process (None before the first start)."""
        return self.lifecycle.process

    @property
    def conn(self) -> ClientSideConnection | None:
        """The SDK's connection to the agent (None when none runs)."""
        return self.lifecycle.conn

    @property
    def agent_session_id(self) -> str | None:
        """The agent's own id of this session."""
        return self.lifecycle.agent_session_id

    def closing(self) -> bool:
        """True while a cancel or a stop is under way: the agent is asked nothing more."""
        return self.turns.cancelling or self.lifecycle.stopping

    def agent_gone(self) -> bool:
        """True once the agent exited (or none runs): nobody would hear an answer."""
        return self.lifecycle.exit_reported or not self.running

    @property
    def pending(self) -> dict[str, PendingRequest]:
        """Permission requests waiting for the user, oldest first."""
        return self.broker.pending

    # -- starting and stopping ----------------------------------------------------------------

    async def start(self) -> None:
        """Start the agent unless it is up (see `AgentLifecycle.start`)."""
        await self.lifecycle.start()

    async def stop(self, reason: str = "the session was closed") -> None:
        """Stop the agent (a running turn ends with a row saying `reason`) and kill the
        commands the user runs: they die with their session."""
        await asyncio.gather(self.lifecycle.stop(reason), self.shells.close())

    def connect(
        self, stdout: asyncio.StreamReader, stdin: asyncio.StreamWriter
    ) -> ClientSideConnection:
        """The SDK's connection to an agent on these streams (see `AgentLifecycle.connect`)."""
        return self.lifecycle.connect(stdout, stdin)

    def discard(self) -> None:
        """Cancel what still runs for a session that is gone (deleted after its stop, or
        the engine closed): nothing is written for it from now on."""
        self.inbox.discard()
        self.broker.discard()
        self.requests.discard()
        self.shells.discard()

    async def close_open(self, decided_by: str, reason: str | None, tool_status: str) -> None:
        """Answer every pending permission request `cancelled` (saying why) and mark every
        open tool call `tool_status`: nothing stays waiting on an agent that will not go on."""
        await self.broker.decide_pending(decided_by, reason)
        await self.inbox.settle()
        for tool_call_id in list(self.inbox.open_tools):
            self.inbox.put(
                Chunk(
                    self.id,
                    "tool_call_update",
                    data={"toolCallId": tool_call_id, "status": tool_status},
                    from_cockpit=True,
                )
            )
        await self.inbox.settle()

    # -- turns and settings -------------------------------------------------------------------

    async def prompt(
        self, text: str, blocks: Sequence[ContentBlock] = (), *, then_stop: bool = False
    ) -> str:
        """Run one turn; returns its stop reason (see `Turns.prompt`)."""
        return await self.turns.prompt(text, blocks, then_stop=then_stop)

    async def cancel(self) -> bool:
        """Cancel the running turn; False when none runs."""
        return await self.turns.cancel()

    async def set_mode(self, mode_id: str) -> None:
        """Switch the agent's session mode."""
        assert self.conn is not None
        assert self.agent_session_id is not None
        await self.conn.set_session_mode(session_id=self.agent_session_id, mode_id=mode_id)
        self.inbox.put(Chunk(self.id, "current_mode_update", data={"currentModeId": mode_id}))
        await self.inbox.settle()
        self.emit(SessionEvent(self.id))

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """Set a config option (the model is one); the agent answers with the full list."""
        assert self.conn is not None
        assert self.agent_session_id is not None
        response = await self.conn.set_config_option(
            config_id=config_id, session_id=self.agent_session_id, value=value
        )
        options = [o.model_dump(by_alias=True, exclude_none=True) for o in response.config_options]
        self.inbox.put(Chunk(self.id, "config_option_update", data={"configOptions": options}))
        await self.inbox.settle()
        self.emit(SessionEvent(self.id))

    # -- checkpoints --------------------------------------------------------------------------

    async def _checkpoint(self, turn: int, phase: str) -> None:
        """Checkpoint the files at `phase` of `turn`; a failure is a notice in the
        transcript, and the turn goes on."""
        assert self.checkpoints is not None
        try:
            await self.checkpoints.take(turn, phase)
        except Exception as error:
            log.warning("session %s: no checkpoint at the %s of turn %s", self.id, phase, turn)
            said = (
                f"Cockpit could not checkpoint the files at the {phase} of this turn: "
                f"{describe(error)}. The turn goes on; what it changes cannot be shown apart."
            )
            await self.inbox.tell(note(self.id, "notice", said))

    def restore_refusal(self) -> str | None:
        """Why the files cannot be put back now (a turn or a command runs), else None."""
        return restore_refusal(
            self.turns.running, self.requests.terminals_running(), self.shells.running()
        )

    # -- permissions and files ----------------------------------------------------------------

    async def answer(
        self, request_id: str, option_id: str | None, decided_by: str = "user"
    ) -> None:
        """The user's answer to a pending request (None cancels it)."""
        await self.broker.answer(request_id, option_id, decided_by)

    async def read_file(self, path: str, line: int | None, limit: int | None) -> str:
        """The agent's `fs/read_text_file` (see `AgentRequests.read_file`)."""
        return await self.requests.read_file(path, line, limit)


async def _none(capabilities: Mapping[str, Any]) -> list[McpServer]:
    return []


def _in_worktree(record: SessionRecord) -> bool:
    """True when the session works in the worktree Cockpit made for it (its root is that
    worktree, which is then the agent's although it lies in Cockpit's data folder)."""
    worktree = read_worktree(record.info)
    return worktree is not None and worktree.path == record.cwd
