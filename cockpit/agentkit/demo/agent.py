"""The demo agent's ACP side: each method answers one ACP request (handshake, sessions,
modes, options, prompts), and a prompt runs the scenario words it holds."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable
from typing import Any

from acp.core import RequestError
from acp.helpers import update_agent_message_text, update_user_message_text
from acp.meta import PROTOCOL_VERSION
from acp.schema import (
    ClientCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    TextContentBlock,
)

from cockpit.acp_types import ContentBlock
from cockpit.agentkit.connection import ConnectedAgent, agent_capabilities
from cockpit.agentkit.demo.handlers import run_turn
from cockpit.agentkit.demo.history import Session, not_found, read_saved, save_session
from cockpit.agentkit.demo.options import (
    COMMANDS,
    DEFAULT_MODEL,
    MODEL_OPTION_ID,
    MODELS,
    command_list,
    config_options,
)
from cockpit.agentkit.demo.prompts import mentions, prompt_text, scenario_words
from cockpit.agentkit.demo.turn import Ability, Turn, TurnCancelled, TurnNeeds, Update
from cockpit.agentkit.settings import DEFAULT_MODE, MODES, check_mode, session_modes

AGENT_NAME = "cockpit-demo"
AGENT_TITLE = "Cockpit demo agent"
AGENT_VERSION = "1.0"

COMMANDS_DELAY = 0.02
"""Seconds to wait after answering session/new before announcing the slash commands."""


class DemoAgent(ConnectedAgent[Session]):
    """The ACP agent the SDK dispatches to: each method answers one ACP request."""

    def __init__(
        self, writer: asyncio.StreamWriter, slow: bool, hang: bool, scenarios: dict[str, str]
    ) -> None:
        super().__init__()
        self.writer = writer
        self.slow = slow
        self.hang = hang
        self.protocol_version: int | None = None
        """A version to answer initialize with instead of negotiating (a test switch)."""
        self.start_delay = 0.0
        """Seconds `initialize` waits before it answers (a slow start)."""
        self.scenarios = scenarios
        """The scenario words and what each does, in running order (the tour lists them)."""
        self._tasks: set[asyncio.Task[None]] = set()

    def can(self, ability: Ability) -> bool:
        """Whether the client advertised `ability` in initialize."""
        caps = self.client_caps
        if caps is None:
            return False
        if ability == "terminal":
            return bool(caps.terminal)
        fs = caps.fs
        if fs is None:
            return False
        return bool(fs.read_text_file if ability == "read" else fs.write_text_file)

    def later(self, work: Awaitable[None]) -> None:
        """Run `work` in the background, keeping a reference until it ends."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def announce_commands(self, session_id: str) -> None:
        """Send the slash commands just after the session response went out."""
        await asyncio.sleep(COMMANDS_DELAY)
        await self.commands_if_due(session_id)

    async def commands_if_due(self, session_id: str) -> None:
        """Announce the slash commands once; a prompt calls this first, so the announcement
        never lands in the middle of a streamed reply (where it would split the reply)."""
        session = self.sessions.get(session_id)
        if session is None or not session.commands_due:
            return
        session.commands_due = False
        await self.connection().session_update(session_id=session_id, update=command_list(COMMANDS))

    # -- lifecycle

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Negotiate the version and advertise what this agent supports."""
        if self.hang:
            await asyncio.Event().wait()
        await asyncio.sleep(self.start_delay)
        self.client_caps = client_capabilities
        return InitializeResponse(
            protocol_version=self.protocol_version or min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=agent_capabilities(),
            agent_info=Implementation(name=AGENT_NAME, title=AGENT_TITLE, version=AGENT_VERSION),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        """Open a session in `cwd`, keeping the MCP servers it is handed; the slash
        commands follow the response."""
        session = Session(session_id=uuid.uuid4().hex, cwd=cwd, mcp_servers=mcp_servers)
        self.sessions[session.session_id] = session
        save_session(session)
        self.later(self.announce_commands(session.session_id))
        return NewSessionResponse(
            session_id=session.session_id,
            modes=session_modes(session.mode),
            config_options=config_options(session.model),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Replay a saved session's history, one whole-text update per message, then answer."""
        record = read_saved(session_id)
        if record is None:
            raise not_found(session_id)
        mode, model = str(record.get("mode")), str(record.get("model"))
        session = Session(
            session_id=session_id,
            cwd=cwd,
            mode=mode if mode in MODES else DEFAULT_MODE,
            model=model if model in MODELS else DEFAULT_MODEL,
            history=[entry for entry in record.get("history", []) if isinstance(entry, dict)],
            mcp_servers=mcp_servers,
        )
        self.sessions[session_id] = session
        conn = self.connection()
        for entry in session.history:
            text = str(entry.get("text", ""))
            update: Update
            if entry.get("role") == "user":
                update = update_user_message_text(text)
            else:
                update = update_agent_message_text(text)
            await conn.session_update(session_id=session_id, update=update)
        self.later(self.announce_commands(session_id))
        return LoadSessionResponse(
            modes=session_modes(session.mode), config_options=config_options(session.model)
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Forget the session (its history file stays, so it can be loaded again)."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.cancel.set()
        return CloseSessionResponse()

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """Switch mode on the client's request and confirm it with a mode update."""
        session = self.session(session_id)
        check_mode(mode_id)
        session.mode = mode_id
        save_session(session)
        await self.announce_mode(session_id, mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Change the model option; answer with the full option list."""
        session = self.session(session_id)
        if config_id != MODEL_OPTION_ID:
            raise RequestError.invalid_params({"configId": config_id, "known": ["model"]})
        if not isinstance(value, str) or value not in MODELS:
            raise RequestError.invalid_params({"value": value, "known": list(MODELS)})
        session.model = value
        save_session(session)
        return SetSessionConfigOptionResponse(config_options=config_options(session.model))

    # -- turns

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Flag the running turn of `session_id`; it stops at its next chunk or step."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel.set()

    async def prompt(
        self, prompt: list[ContentBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Answer one prompt by running its scenario words; record it in the history."""
        session = self.session(session_id)
        session.cancel = asyncio.Event()  # before any await, so an early cancel is kept
        await self.commands_if_due(session_id)
        text = prompt_text(prompt)
        needs = TurnNeeds(self.connection(), self.writer, self.can, self.scenarios, self.slow)
        turn = Turn(needs, session, text)
        texts = (block.text for block in prompt if isinstance(block, TextContentBlock))
        # joined apart: block ends are word ends
        words = scenario_words("\n".join(texts), self.scenarios)
        try:
            await run_turn(turn, words, mentions(prompt))
        except TurnCancelled:
            pass
        finally:
            turn.commit()
        stop: StopReason = "cancelled" if session.cancel.is_set() else "end_turn"
        return PromptResponse(stop_reason=stop)
