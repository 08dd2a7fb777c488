"""`/mcp`: the MCP servers a session's agent was handed, in words."""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.api import McpServerState


def mcp_lines(servers: Sequence[McpServerState]) -> str:
    """The MCP servers a session's agent was handed, and those left out with why."""
    if not servers:
        return (
            "The agent has not opened its session since Cockpit started: the MCP servers"
            " it is handed show here once it has (the plan tool, and yours from mcp.toml)."
        )
    handed = [f"  {s.name} ({s.transport})" for s in servers if s.handed]
    left = [f"  {s.name} ({s.transport}): {s.why}" for s in servers if not s.handed]
    lines = ["Handed to the agent:", *(handed or ["  none"])]
    if left:
        lines += ["", "Left out:", *left]
    return "\n".join(lines)
