"""What a client of the service holds of the service's state, to answer the contract's
immediate questions (a session's status, what waits, what is unread, how each session's
agent runs) without asking: taken whole with each hello (`protocol.STATE`, which goes out
in order with the events), and kept current by the events that follow it."""

from __future__ import annotations

import time
from typing import Any

from cockpit import protocol
from cockpit.api import (
    AgentInfo,
    AgentSpec,
    AttentionEvent,
    EngineEvent,
    PermissionEvent,
    PermissionRequest,
    SavingEvent,
    SessionEvent,
    StatusEvent,
)


class Mirror:
    """The service's state as this client last heard it."""

    def __init__(self) -> None:
        self.clock_offset = 0.0
        """The service's clock minus this machine's, in seconds."""
        self.problems: list[str] = []
        self.saving_problem: str | None = None
        self.saving_failure: str | None = None
        self.statuses: dict[str, str] = {}
        self.pending: dict[str, PermissionRequest] = {}
        """The requests waiting, by id, in the order they were asked."""
        self.unread: set[str] = set()
        self.agents: list[AgentInfo] = []
        self.specs: dict[str, AgentSpec] = {}
        """How each session's agent runs, by session."""

    def take(self, state: dict[str, Any]) -> None:
        """Take the state the service sent after a hello, whole."""
        self.clock_offset = float(state.get("now") or time.time()) - time.time()
        self.problems = [str(p) for p in state.get("problems") or ()]
        self.saving_problem = state.get("saving_problem")
        self.saving_failure = self.saving_failure or state.get("saving_failure")
        self.statuses = dict(state.get("statuses") or {})
        pending = protocol.decode(state.get("pending") or [], list[PermissionRequest])
        self.pending = {request.id: request for request in pending}
        self.unread = set(state.get("unread") or ())
        self.agents = protocol.decode(state.get("agents") or [], list[AgentInfo])
        specs = state.get("specs") or {}
        self.specs = {session: protocol.decode(spec) for session, spec in specs.items()}

    def apply(self, event: EngineEvent) -> str | None:
        """Keep the mirror current with `event`; the session whose agent this client must
        learn (a new one), if any."""
        if isinstance(event, StatusEvent):
            self.statuses[event.session] = event.status
        elif isinstance(event, PermissionEvent):
            if event.resolved:
                self.pending.pop(event.request.id, None)
            else:
                self.pending[event.request.id] = event.request
        elif isinstance(event, AttentionEvent):
            if event.unread:
                self.unread.add(event.session)
            else:
                self.unread.discard(event.session)
        elif isinstance(event, SavingEvent):
            self.saving_problem = event.problem
            self.saving_failure = self.saving_failure or event.problem
        elif isinstance(event, SessionEvent) and event.session not in self.specs:
            return event.session
        return None
