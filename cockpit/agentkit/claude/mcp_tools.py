"""The MCP servers a Claude session was handed (ACP `mcpServers`): each stdio server
started as an MCP client at the session's first turn and kept until the session ends, its
tools offered to the model under names of their own (`mcp__<server>__<tool>`), and a call
routed to the server that has the tool.

A server's environment (the plan tool's token) stays with the server's process: it is
never part of a tool, a result, a notice or a log line. The mcp SDK loads at the first
turn of a session that was handed a server, so a session without one starts as fast as
before."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp.schema import McpServerStdio

from cockpit.agentkit.mcp_stdio import first_error, stdio_parameters
from cockpit.plan_protocol import SERVER_NAME

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger("claude-agent")

PREFIX = "mcp__"
"""How the name of every tool of a server starts: the agent's own tools never do."""
MOST_NAME = 64
"""Characters a tool name may have in a Messages API request."""
START_SECONDS = float(os.environ.get("COCKPIT_CLAUDE_MCP_START_SECONDS") or 30)
"""Seconds a server has to start and list its tools."""
CLOSE_SECONDS = 5.0
"""Seconds a server has to exit once its stdin closes (the SDK then ends it)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def wire_name(server: str, tool: str) -> str:
    """The name the model calls a server's tool by: `mcp__<server>__<tool>`, with what the
    API refuses replaced by `_`; a name too long is cut and ends in a hash of the whole, so
    two tools never share one."""
    name = f"{PREFIX}{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= MOST_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MOST_NAME - 9]}_{digest}"


def hidden(text: str, secrets: Sequence[str]) -> str:
    """`text` with every value of a server's environment cut out: an error from a server
    that could not start may quote how it was started."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, "[hidden]")
    return text


@dataclass(frozen=True)
class McpTool:
    """One tool of one server, as the model sees it."""

    server: str
    name: str
    wire: str
    definition: Mapping[str, Any]
    """The tool as the Messages API takes it: its name, description and input schema."""

    @property
    def asks(self) -> bool:
        """Whether the user is asked before a call: for every server's tool but the plan
        tool's, which only writes the session's own plan in Cockpit."""
        return self.server != SERVER_NAME

    @property
    def title(self) -> str:
        """The call's title in the transcript."""
        return f"{self.name} ({self.server})"


@dataclass(frozen=True)
class McpResult:
    """What a call returned: its text for the model, and whether it failed."""

    text: str
    is_error: bool


def result_text(result: Any) -> str:
    """A CallToolResult as text: its text blocks, a line for each block of another kind,
    and the structured content when there is nothing else."""
    from mcp.types import TextContent

    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content not included]")
    if not parts and result.structured_content is not None:
        import json

        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def definition(wire: str, tool: Any) -> dict[str, Any]:
    """A listed MCP tool as the Messages API takes it."""
    schema = dict(tool.input_schema or {})
    schema.setdefault("type", "object")
    return {
        "name": wire,
        "description": tool.description or tool.title or tool.name,
        "input_schema": schema,
    }


class Connection:
    """One stdio server, connected as an MCP client in a task of its own: the SDK's client
    must be entered and left in one task, and a turn is a task that ends."""

    def __init__(self, server: McpServerStdio) -> None:
        self.server = server
        self.client: Client | None = None
        self._listed: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def secrets(self) -> list[str]:
        """The values of the server's environment."""
        return [entry.value for entry in self.server.env]

    async def start(self, seconds: float) -> list[Any]:
        """Start the server and list its tools; its error when it could not in time."""
        self._task = asyncio.create_task(self._serve(), name=f"mcp {self.server.name}")
        async with asyncio.timeout(seconds):
            return await asyncio.shield(self._listed)

    async def _serve(self) -> None:
        """Hold the client open until the session closes it."""
        from mcp import Client

        try:
            async with Client(stdio_parameters(self.server)) as client:
                tools: list[Any] = []
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    tools += page.tools
                    cursor = page.next_cursor
                    if not cursor:
                        break
                self.client = client
                self._listed.set_result(tools)
                await self._closing.wait()
        except Exception as error:
            if not self._listed.done():
                self._listed.set_exception(error)
            else:
                why = hidden(str(first_error(error)), self.secrets)
                log.warning("the MCP server %s stopped: %s", self.server.name, why)
        finally:
            self.client = None
            if not self._listed.done():
                self._listed.cancel()

    async def call(self, tool: str, arguments: dict[str, Any]) -> McpResult:
        """Call `tool`; an error result when the server is gone or refuses the call."""
        from mcp import MCPError

        client = self.client
        if client is None:
            return McpResult(f"The {self.server.name} server is not running.", True)
        try:
            result = await client.call_tool(tool, arguments)
        except (MCPError, OSError) as error:
            why = hidden(str(first_error(error)), self.secrets)
            return McpResult(f"The {self.server.name} server failed the call: {why}", True)
        return McpResult(result_text(result), bool(result.is_error))

    async def close(self) -> None:
        """Close the server's stdin and wait for it to exit (the SDK ends it if it lingers)."""
        self._closing.set()
        task = self._task
        if task is None or task.done():
            return
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                await asyncio.shield(task)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


class McpServers:
    """The servers a session was handed, started once, at its first turn."""

    def __init__(self, handed: Sequence[Any] = ()) -> None:
        self.handed = list(handed)
        self.tools: dict[str, McpTool] = {}
        self._connections: dict[str, Connection] = {}
        """The servers that started, by name."""
        self._started: list[Connection] = []
        """Every server this session started, running or not: all are closed with it."""
        self._opening: asyncio.Task[list[str]] | None = None

    def definitions(self) -> tuple[Mapping[str, Any], ...]:
        """The servers' tools as the model is offered them, in the order they were found."""
        return tuple(tool.definition for tool in self.tools.values())

    def find(self, wire: str) -> McpTool | None:
        """The server tool the model called by `wire`, if it is one."""
        return self.tools.get(wire)

    async def open(self) -> list[str]:
        """Start every stdio server (the first time only) and return the notices the turn
        shows: a server that could not start, one that is not stdio. A turn cancelled
        meanwhile leaves the start running for the next turn."""
        if self._opening is None:
            self._opening = asyncio.create_task(self._open())
        return await asyncio.shield(self._opening)

    async def _open(self) -> list[str]:
        notices: list[str] = []
        stdio: list[McpServerStdio] = []
        for server in self.handed:
            name = str(getattr(server, "name", "") or "unnamed")
            if not isinstance(server, McpServerStdio):
                kind = getattr(server, "type", None) or "non-stdio"
                notices.append(
                    f"The MCP server {name} was not started: this agent starts only stdio "
                    f"servers, and it is an {kind} server."
                )
            elif name in self._connections or any(s.name == name for s in stdio):
                notices.append(f"The MCP server {name} was handed twice; the first one is used.")
            else:
                stdio.append(server)
        connections = [Connection(server) for server in stdio]
        self._started += connections
        listings = await asyncio.gather(
            *(connection.start(START_SECONDS) for connection in connections),
            return_exceptions=True,
        )
        for connection, listed in zip(connections, listings, strict=True):
            name = connection.server.name
            if isinstance(listed, BaseException):
                await connection.close()
                notices.append(self._failed(connection, listed))
                continue
            self._connections[name] = connection
            for tool in listed:
                wire = wire_name(name, tool.name)
                if wire in self.tools:
                    notices.append(
                        f"The MCP server {name} has two tools named {wire}; the second is left out."
                    )
                    continue
                self.tools[wire] = McpTool(name, tool.name, wire, definition(wire, tool))
        return notices

    @staticmethod
    def _failed(connection: Connection, error: BaseException) -> str:
        """The notice for a server that could not start (its environment left out)."""
        name = connection.server.name
        if isinstance(error, TimeoutError):
            why = f"it did not answer within {START_SECONDS:g} seconds"
        elif isinstance(error, asyncio.CancelledError):
            why = "it stopped before it answered"
        else:
            why = hidden(str(first_error(error)) or type(error).__name__, connection.secrets)
        log.warning("the MCP server %s could not be started: %s", name, why)
        return f"The MCP server {name} could not be started ({why}); I go on without its tools."

    async def call(self, tool: McpTool, arguments: dict[str, Any]) -> McpResult:
        """Call `tool` on its server."""
        connection = self._connections.get(tool.server)
        if connection is None:
            return McpResult(f"The {tool.server} server is not running.", True)
        return await connection.call(tool.name, arguments)

    async def close(self) -> None:
        """Stop every server (each exits as its stdin closes)."""
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()
            with contextlib.suppress(BaseException):
                await self._opening
        connections, self._started = self._started, []
        self._connections.clear()
        self.tools.clear()
        await asyncio.gather(*(connection.close() for connection in connections))
