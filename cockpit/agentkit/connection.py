"""The agent's end of the connection: the client link, what the client advertised, the
live sessions, the capabilities every bundled agent announces in `initialize`, and the
confirmation of a mode change."""

from __future__ import annotations

from typing import Generic, TypeVar

from acp.core import AgentSideConnection, RequestError
from acp.helpers import update_current_mode
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    PromptCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
)

SessionT = TypeVar("SessionT")


def agent_capabilities() -> AgentCapabilities:
    """What the bundled agents support: session/load, session/close, prompts with embedded
    files (no images)."""
    return AgentCapabilities(
        load_session=True,
        prompt_capabilities=PromptCapabilities(image=False, embedded_context=True),
        session_capabilities=SessionCapabilities(close=SessionCloseCapabilities()),
    )


class ConnectedAgent(Generic[SessionT]):
    """The state every bundled agent keeps about its client: the connection the SDK hands
    it, the capabilities the client advertised, and the sessions it serves."""

    def __init__(self) -> None:
        self.sessions: dict[str, SessionT] = {}
        self.client_caps: ClientCapabilities | None = None
        self._conn: AgentSideConnection | None = None

    def on_connect(self, conn: AgentSideConnection) -> None:
        """Keep the connection: it is how the agent calls the client."""
        self._conn = conn

    def connection(self) -> AgentSideConnection:
        """The client connection (set by the SDK before any request arrives)."""
        if self._conn is None:
            raise RequestError.internal_error({"details": "no client connection yet"})
        return self._conn

    def session(self, session_id: str) -> SessionT:
        """The live session `session_id`; an invalid-params error when it is unknown."""
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "reason": "unknown session: create or load it first"}
            )
        return session

    async def announce_mode(self, session_id: str, mode_id: str) -> None:
        """Confirm a mode change to the client with a `current_mode_update`."""
        await self.connection().session_update(
            session_id=session_id, update=update_current_mode(mode_id)
        )
