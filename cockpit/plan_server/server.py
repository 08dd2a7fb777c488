"""The plan tool's MCP server: its name, its two tools, and the stdio it serves on."""

from __future__ import annotations

from mcp.server import MCPServer

from cockpit.plan_protocol import READ, SERVER_NAME, UPDATE
from cockpit.plan_server.tools import READ_DESCRIPTION, UPDATE_DESCRIPTION, read_plan, update_plan

INSTRUCTIONS = (
    "Cockpit keeps this session's plan. Call read_plan when you start or resume work, and"
    " update_plan with the whole list whenever a step starts, ends or changes."
)


def build_server() -> MCPServer:
    """The server with its two tools; logging kept to warnings, on stderr."""
    server: MCPServer = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    server.add_tool(update_plan, name=UPDATE, description=UPDATE_DESCRIPTION)
    server.add_tool(read_plan, name=READ, description=READ_DESCRIPTION)
    return server


def main() -> None:
    """Serve on stdio until the agent closes stdin."""
    build_server().run("stdio")
