"""The plan of each session as Cockpit keeps it, and the plan tool's calls on it.

A plan is a row of the session (kind `plan`, replaced in place within a turn); whichever
wrote it last (the agent's own ACP plan updates, the plan tool, the user) is the session's
plan, and each write takes the session's next revision (`store.session_fold`). A write
through Cockpit is answered only once its row is committed. The plan tool reaches the
keeper on the engine's plan socket with its session's token; the agent is handed the tool
(`servers`) each time it starts, with a new token.
"""

from __future__ import annotations

import logging
import os
import secrets
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from acp.schema import AcpMcpServer, EnvVariable, HttpMcpServer, McpServerStdio, SseMcpServer

import cockpit
from cockpit.api import Plan, PlanEntry, read_plan
from cockpit.engine.errors import describe
from cockpit.engine.inbox import SessionInbox
from cockpit.engine.plans.socket import PlanSocket
from cockpit.engine.plans.tokens import PlanTokens
from cockpit.paths import socket_path
from cockpit.plan_protocol import (
    METHODS,
    READ,
    SERVER_NAME,
    SESSION_VARIABLE,
    SOCKET_VARIABLE,
    TOKEN_VARIABLE,
    answer_line,
    item_to_wire,
    plan_text,
    plan_to_wire,
    progress,
    read_explanation,
    read_items,
)
from store import Chunk, UnknownSession
from store.store import Store

log = logging.getLogger(__name__)

TREE = Path(cockpit.__file__).resolve().parent.parent
"""The folder that holds the `cockpit` package: the plan server imports this same code."""

McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
"""An MCP server an agent is handed in `session/new`, `load` and `resume`."""

InboxOf = Callable[[str], Awaitable[SessionInbox]]
"""The inbox of a session's rows (UnknownSession, or ValueError saying why, when the
session cannot take one)."""


class PlanKeeper:
    """The plans of an engine's sessions, the plan tool's tokens and the socket it calls."""

    def __init__(self, store: Store, inbox_of: InboxOf) -> None:
        self._store = store
        self._inbox_of = inbox_of
        self.tokens = PlanTokens()
        self._socket = PlanSocket(self.answer)

    async def servers(self, session: str) -> list[McpServer]:
        """The MCP servers an agent of `session` is handed as it starts: the plan tool, with
        a token minted for this start (the socket opens at the first start)."""
        if self._socket.path is None:
            name = f"plan-{os.getpid()}-{secrets.token_hex(3)}.sock"
            await self._socket.open(socket_path(name))
        assert self._socket.path is not None
        variables = {
            SOCKET_VARIABLE: os.fspath(self._socket.path),
            SESSION_VARIABLE: session,
            TOKEN_VARIABLE: self.tokens.mint(session),
            "PYTHONPATH": os.fspath(TREE),
        }
        return [
            McpServerStdio(
                name=SERVER_NAME,
                command=sys.executable,
                args=["-m", "cockpit.plan_server"],
                env=[EnvVariable(name=name, value=value) for name, value in variables.items()],
            )
        ]

    def forget(self, session: str) -> None:
        """The session is gone: its plan tool can call no more."""
        self.tokens.forget(session)

    async def close(self) -> None:
        """No plan tool can call any more."""
        self.tokens.forget_all()
        await self._socket.close()

    # -- the plan -----------------------------------------------------------------------------

    async def read(self, session: str) -> Plan | None:
        """The session's plan, whoever wrote it last; None before any."""
        row = await self._store.last_of_kind(session, "plan")
        plan = read_plan(row.payload) if row is not None else None
        return plan if isinstance(plan, Plan) else None

    async def update(
        self, session: str, entries: Sequence[PlanEntry], explanation: str | None, author: str
    ) -> Plan:
        """Write the whole plan as `author` and return it as stored (its revision), once its
        row is committed. The store's error when it could not be."""
        inbox = await self._inbox_of(session)
        data = {
            "entries": [item_to_wire(entry) for entry in entries],
            "author": author,
            "explanation": explanation,
        }
        await inbox.record(Chunk(session, "plan", data=data, from_cockpit=True))
        plan = await self.read(session)
        assert plan is not None
        return plan

    # -- the plan tool's calls ----------------------------------------------------------------

    async def answer(self, request: dict[str, Any]) -> bytes:
        """The answer to one call of the plan tool, in words the model can act on."""
        session, method = request.get("session"), request.get("method")
        if method not in METHODS:
            return answer_line(False, "Not done: the plan tool can only update and read the plan.")
        if not self.tokens.admits(request.get("token"), session):
            return answer_line(
                False,
                "Not done: Cockpit does not know this plan tool's session (it was deleted, or"
                " its agent was restarted). The plan was not changed.",
            )
        assert isinstance(session, str)
        try:
            if method == READ:
                plan = await self.read(session)
                wire = _wire(plan)
                return answer_line(True, plan_text(wire), wire)
            return await self._update(session, request.get("params"))
        except UnknownSession:
            return answer_line(False, "Not done: this session is gone. The plan was not saved.")
        except Exception as error:  # the store could not: the model hears why, nothing crashes
            log.warning("A plan call of session %s failed: %s", session, describe(error))
            return answer_line(
                False, f"Not saved: Cockpit could not keep the plan ({describe(error)}). Try again."
            )

    async def _update(self, session: str, params: object) -> bytes:
        given = params if isinstance(params, dict) else {}
        entries = read_items(given.get("items"))
        if isinstance(entries, str):
            return answer_line(False, entries)
        explanation = read_explanation(given.get("explanation"))
        if explanation is False:
            return answer_line(False, "Not saved: `explanation` must be a short text.")
        plan = await self.update(session, entries, explanation or None, "tool")
        wire = _wire(plan)
        return answer_line(True, f"Saved revision {plan.revision}: {progress(entries)}.", wire)


def _wire(plan: Plan | None) -> dict[str, Any] | None:
    if plan is None:
        return None
    return plan_to_wire(plan.revision, plan.author, plan.entries, plan.explanation)
