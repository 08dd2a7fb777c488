"""The ACP client side that the SDK calls, as a thin adapter onto a session's permission
broker and its file and terminal handlers.

It is a plain class that implements the SDK's `acp.interfaces.Client` protocol by shape,
checked by mypy where the connection is made (`client: Client = ClientAdapter(...)`). It
does not subclass the protocol: a method it lacked would then be inherited as a stub that
answers the agent with null instead of "method not found".
"""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.interfaces import Agent
from acp.meta import CLIENT_METHODS
from acp.schema import (
    CreateElicitationResponse,
    CreateTerminalResponse,
    ElicitationMode,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from cockpit.engine.agent_requests import AgentRequests
from cockpit.engine.permission_broker import PermissionBroker


class ClientAdapter:
    """What the SDK calls for the agent's requests to the client."""

    def __init__(self, broker: PermissionBroker, requests: AgentRequests) -> None:
        self._broker = broker
        self._requests = requests

    def on_connect(self, conn: Agent) -> None:
        """The SDK hands over its connection; the session holds it already."""

    async def session_update(self, session_id: str, update: object, **kwargs: Any) -> None:
        """Updates are taken, in order, from the transport tap; nothing to do here."""

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        """`session/request_permission`: the broker answers, once its row is stored."""
        return await self._broker.ask(
            tool_call.model_dump(by_alias=True, exclude_none=True),
            [option.model_dump(by_alias=True, exclude_none=True) for option in options],
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        """`fs/read_text_file`."""
        return ReadTextFileResponse(content=await self._requests.read_file(path, line, limit))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        """`fs/write_text_file`."""
        await self._requests.write_file(path, content)
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        """`terminal/create`."""
        variables = {item.name: item.value for item in env or ()}
        terminal_id = await self._requests.create_terminal(
            command, list(args or ()), variables, cwd, output_byte_limit
        )
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        """`terminal/output`: what the command wrote so far, and its exit once it exited."""
        terminal = await self._requests.terminal(terminal_id, CLIENT_METHODS["terminal_output"])
        status = terminal.exit_status()
        return TerminalOutputResponse(
            output=terminal.text(),
            truncated=terminal.truncated,
            exit_status=TerminalExitStatus(exit_code=status[0], signal=status[1])
            if status
            else None,
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        """`terminal/wait_for_exit`."""
        terminal = await self._requests.wait_terminal(terminal_id)
        code, signal_name = terminal.exit_status() or (None, None)
        return WaitForTerminalExitResponse(exit_code=code, signal=signal_name)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        """`terminal/kill`."""
        await self._requests.kill_terminal(terminal_id)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        """`terminal/release`."""
        await self._requests.release_terminal(terminal_id)
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """An extension request (`_name`): Cockpit serves none."""
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """An extension notification: ignored."""
        return None

    async def create_elicitation(
        self, message: str, mode: ElicitationMode, **kwargs: Any
    ) -> CreateElicitationResponse:
        """`elicitation/create`: a form for the user to fill, or a link to open."""
        return await self._broker.forms.ask(message, mode.model_dump(by_alias=True, mode="json"))

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        """`elicitation/complete`: the agent says the task behind a link is done."""
        await self._broker.forms.completed(elicitation_id)
