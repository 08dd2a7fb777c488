"""The Claude agent's ACP side: the handshake (with the API key as its auth method),
sessions opened from and replayed out of their chunk logs, modes and options, and prompts:
one turn at a time per session, a prompt sent meanwhile joining the running turn.

The Anthropic SDK is imported at the first model call, not at start: its import is about
0.9 s of the agent's 1.2 s of start-up CPU, and the handshake, a new session and a replay
of a stored one need none of it."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from acp.core import RequestError
from acp.meta import PROTOCOL_VERSION
from acp.schema import (
    AuthenticateResponse,
    AuthEnvVar,
    ClientCapabilities,
    CloseSessionResponse,
    EnvVarAuthMethod,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
)

from cockpit.acp_types import ContentBlock
from cockpit.agentkit.claude.chunks import replay_updates
from cockpit.agentkit.claude.config import (
    AGENT_NAME,
    AGENT_TITLE,
    AGENT_VERSION,
    BLANK_PROMPT,
    KEY_VARIABLE,
    MODEL_OPTION,
    NO_KEY,
    THINKING,
    THINKING_OPTION,
    api_key,
    models,
)
from cockpit.agentkit.claude.mcp_tools import McpServers
from cockpit.agentkit.claude.session import (
    Queued,
    Session,
    config_options,
    data_root,
    prompt_text,
)
from cockpit.agentkit.claude.turn import Turn
from cockpit.agentkit.connection import ConnectedAgent, agent_capabilities
from cockpit.agentkit.errors import resource_missing
from cockpit.agentkit.settings import MODES, check_mode, session_modes
from store.chunk_log import ChunkLog, log_path

if TYPE_CHECKING:
    import anthropic


class ClaudeAgent(ConnectedAgent[Session]):
    """The ACP agent the SDK dispatches to (a plain class: acp.Agent is a Protocol whose
    stubs would answer unimplemented methods with null instead of "method not found")."""

    def __init__(self) -> None:
        super().__init__()
        self._client: anthropic.AsyncAnthropic | None = None

    def client(self) -> anthropic.AsyncAnthropic:
        """The API client (ANTHROPIC_BASE_URL is read by the SDK itself)."""
        if self._client is None:
            import anthropic  # at the first call: see the module's docstring

            self._client = anthropic.AsyncAnthropic(api_key=api_key())
        return self._client

    async def close(self) -> None:
        """Stop every turn and close every log (the process is ending)."""
        for session in list(self.sessions.values()):
            await self.forget(session)
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.close()

    async def forget(self, session: Session) -> None:
        """Stop the session's turn and its MCP servers, drop it and close its log."""
        if session.task is not None and not session.task.done():
            session.task.cancel()
            with contextlib.suppress(BaseException):
                await session.task
        self.sessions.pop(session.id, None)
        await session.servers.close()
        await session.log.close()

    # -- lifecycle ----------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Negotiate the version; advertise what this agent supports and its API-key auth."""
        self.client_caps = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=agent_capabilities(),
            auth_methods=[
                EnvVarAuthMethod(
                    type="env_var",
                    id="anthropic-api-key",
                    name="Anthropic API key",
                    description=NO_KEY,
                    vars=[AuthEnvVar(name=KEY_VARIABLE, label="Anthropic API key")],
                    link="https://console.anthropic.com/settings/keys",
                )
            ],
            agent_info=Implementation(name=AGENT_NAME, title=AGENT_TITLE, version=AGENT_VERSION),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        """Succeed when the API key is set; else the auth-required error saying what to set."""
        api_key()
        return AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        """Open a session in `cwd` with a fresh chunk log (the API key is needed first),
        keeping the MCP servers it was handed for its first turn."""
        api_key()
        session_id = uuid.uuid4().hex
        log_file = await ChunkLog.open(log_path(data_root(), session_id))
        session = Session(
            session_id,
            cwd,
            log_file,
            [],
            model=next(iter(models())),
            servers=McpServers(mcp_servers or ()),
        )
        await session.save_settings()
        self.sessions[session_id] = session
        return NewSessionResponse(
            session_id=session_id,
            modes=session_modes(session.mode),
            config_options=config_options(session),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Reopen a session from its log and replay it, message by message, with the ids it
        streamed under; the MCP servers it is handed now are the ones its turns get."""
        try:
            path = log_path(data_root(), session_id)
        except ValueError:
            raise RequestError.resource_not_found(session_id) from None
        if not await asyncio.to_thread(path.is_file):
            raise resource_missing(path.as_uri(), reason="this agent has no log of that session")
        previous = self.sessions.get(session_id)
        if previous is not None:
            await self.forget(previous)
        log_file = await ChunkLog.open(path)
        meta = await log_file.meta()
        entries = await log_file.entries()
        choices = models()
        session = Session(
            session_id,
            cwd,
            log_file,
            entries,
            mode=meta["mode"] if meta.get("mode") in MODES else "ask",
            model=meta.get("model") or next(iter(choices)),
            thinking=meta["thinking"] if meta.get("thinking") in THINKING else "off",
            servers=McpServers(mcp_servers or ()),
        )
        await session.save_settings()
        self.sessions[session_id] = session
        conn = self.connection()
        for update in replay_updates(entries):
            await conn.session_update(session_id=session_id, update=update)
        return LoadSessionResponse(
            modes=session_modes(session.mode), config_options=config_options(session)
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Stop the session's turn and close its log (the log stays, to be loaded again)."""
        session = self.sessions.get(session_id)
        if session is not None:
            await self.forget(session)
        return CloseSessionResponse()

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """Switch mode on the client's request and confirm it with a mode update."""
        session = self.session(session_id)
        check_mode(mode_id)
        session.mode = mode_id
        await session.save_settings()
        await self.announce_mode(session_id, mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Change the model or the thinking option; answer with the full option list."""
        session = self.session(session_id)
        choices = {MODEL_OPTION: models(), THINKING_OPTION: THINKING}.get(config_id)
        if choices is None:
            raise RequestError.invalid_params(
                {"configId": config_id, "known": ["model", "thinking"]}
            )
        if not isinstance(value, str) or value not in choices:
            raise RequestError.invalid_params({"value": value, "known": list(choices)})
        if config_id == MODEL_OPTION:
            session.model = value
        else:
            session.thinking = value
        await session.save_settings()
        return SetSessionConfigOptionResponse(config_options=config_options(session))

    # -- turns --------------------------------------------------------------------------------

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the running turn at once: its task is cancelled wherever it waits."""
        session = self.sessions.get(session_id)
        if session is not None and session.task is not None and not session.task.done():
            session.task.cancel()

    async def prompt(
        self, prompt: list[ContentBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Run a turn; a prompt that arrives while one runs joins it at the next step."""
        session = self.session(session_id)
        api_key()
        text = prompt_text(prompt)
        if not text.strip():  # the model refuses a request whose only text is blank
            raise RequestError.invalid_params({"message": BLANK_PROMPT})
        if session.task is not None and not session.task.done():
            answer: asyncio.Future[StopReason] = asyncio.get_running_loop().create_future()
            session.queued.append(Queued(text, answer))
            return PromptResponse(stop_reason=await answer)
        task = asyncio.ensure_future(self.run_turns(session, text))
        session.task = task
        try:
            return await task
        finally:
            if session.task is task:
                session.task = None

    async def run_turns(self, session: Session, text: str) -> PromptResponse:
        """Run a turn for `text`. When it stops short (max_tokens, a refusal, the step limit)
        with prompts still queued, the next turn answers them at once: the user asked
        something. Every prompt that joined is answered with how the last turn ended; a
        prompt left queued by a cancel or a failure was logged by the turn."""
        joined: list[Queued] = []
        usage = {"input": 0, "write": 0, "read": 0, "output": 0}
        stop: StopReason | None = None
        failure: BaseException | None = None
        prompt: str | None = text
        try:
            while True:
                turn = Turn(self.connection(), self.client, session, usage)
                try:
                    response = await turn.run(prompt)
                finally:
                    joined += turn.joined
                if not session.queued:
                    stop = response.stop_reason
                    return response
                prompt = None  # the queued prompts open the next turn
        except BaseException as error:
            failure = error
            raise
        finally:
            # A prompt still queued here arrived during a second cancel: it was not logged,
            # but its request is answered all the same.
            joined += session.queued
            session.queued = []
            answer_all(joined, stop, failure)


def answer_all(
    joined: Sequence[Queued], stop: StopReason | None, error: BaseException | None
) -> None:
    """Answer the prompts that joined a turn: with its stop reason, or its error."""
    for item in joined:
        if item.answer.done():
            continue
        if stop is not None:
            item.answer.set_result(stop)
        elif isinstance(error, Exception):
            item.answer.set_exception(error)
        else:
            item.answer.set_result("cancelled")
