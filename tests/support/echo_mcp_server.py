"""A user's MCP server for the tests (`python -m tests.support.echo_mcp_server`): an
`echo` tool that writes each call to the file ECHO_CALLS names, so a test sees whether it
ran, and a `fail` tool whose result is an error. It writes its process id to ECHO_PID at
start, so a test can see it exit."""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("echo", log_level="WARNING")


@server.tool(description="Say the text back.")
def echo(text: str) -> str:
    """Say `text` back, noting the call."""
    with Path(os.environ["ECHO_CALLS"]).open("a") as calls:
        calls.write(text + "\n")
    return f"echo: {text}"


@server.tool(description="Always fails.")
def fail() -> str:
    """Fail, as a tool does whose work went wrong."""
    raise ToolError("the fail tool always fails")


if __name__ == "__main__":
    if "ECHO_PID" in os.environ:
        Path(os.environ["ECHO_PID"]).write_text(str(os.getpid()))
    server.run("stdio")
