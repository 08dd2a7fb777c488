"""`/mcp`: the MCP servers a session's agent was handed, in words, and approving those its
repository asks for (`/mcp approve`)."""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.api import EngineAPI, McpServerState, Status
from cockpit.ui.screens.questions import ConfirmScreen

RESTARTED = "restarted to hand it the MCP servers you approved"


def mcp_lines(servers: Sequence[McpServerState]) -> str:
    """The MCP servers a session's agent was handed, and those left out with why."""
    if not servers:
        return (
            "The agent has not opened its session since Cockpit started: the MCP servers"
            " it is handed show here once it has (the plan tool, yours from mcp.toml and"
            " the repository's from its .cockpit.toml)."
        )
    handed = [f"  {_named(s)} ({s.transport})" for s in servers if s.handed]
    left = [f"  {_named(s)} ({s.transport}): {s.why}" for s in servers if not s.handed]
    lines = ["Handed to the agent:", *(handed or ["  none"])]
    if left:
        lines += ["", "Left out:", *left]
    return "\n".join(lines)


def _named(server: McpServerState) -> str:
    return f"{server.name}, the repository's" if server.repository else server.name


def approval_question(asked: Sequence[McpServerState]) -> ConfirmScreen:
    """Ask before a repository's MCP servers are handed: each is a program of someone
    else's choosing that runs as the user, shown whole."""
    where = ", ".join(sorted({server.repository for server in asked}))
    return ConfirmScreen(
        f"{where} asks, in its .cockpit.toml, that agents be handed these MCP servers. They"
        " run as you, with your files and network: Cockpit does not confine them. Approve?",
        yes="Approve",
        no="Not now",
        details=(
            *(f"• {server.approval}" for server in asked),
            "Approved, each is handed to agents in this repository until its text changes.",
        ),
    )


async def approve_servers(engine: EngineAPI, session: str, asked: Sequence[McpServerState]) -> None:
    """Approve `asked`, then start the session's agent again when it is idle, so that it
    is handed them now (OSError: an approval could not be kept)."""
    for server in asked:
        await engine.approve_command(server.repository, "mcp", server.approval)
    if engine.status(session) == Status.READY:
        await engine.stop(session, RESTARTED)
        await engine.start(session)


def approved_note(status: str) -> str:
    """What the user reads once servers are approved, the session's agent in `status`."""
    if status in (Status.READY, Status.STARTING):
        return "Approved: the agent was started again with them."
    return "Approved: the agent is handed them when it next starts."
