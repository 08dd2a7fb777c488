"""The plan tool's MCP server: its name, its two tools, and the stdio it serves on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.tools import Tool

from cockpit.plan_protocol import READ, SERVER_NAME, UPDATE
from cockpit.plan_server.tools import READ_DESCRIPTION, UPDATE_DESCRIPTION, read_plan, update_plan

INSTRUCTIONS = (
    "Cockpit keeps this session's plan. Call read_plan when you start or resume work, and"
    " update_plan with the whole list whenever a step starts, ends or changes."
)


def tool(fn: Callable[..., Any], name: str, description: str, *required: str) -> Tool:
    """A tool whose schema requires `required`, whatever defaults its function has."""
    made = Tool.from_function(fn, name=name, description=description)
    if not required:
        return made
    return made.model_copy(update={"parameters": {**made.parameters, "required": [*required]}})


def build_server() -> MCPServer:
    """The server with its two tools; logging kept to warnings, on stderr."""
    tools = [
        tool(update_plan, UPDATE, UPDATE_DESCRIPTION, "items"),
        tool(read_plan, READ, READ_DESCRIPTION),
    ]
    return MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING", tools=tools)


def main() -> None:
    """Serve on stdio until the agent closes stdin."""
    build_server().run("stdio")
