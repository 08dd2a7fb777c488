"""The demo's plan tool scenario: the agent as an MCP client of the `cockpit-plan` server
it was handed in the session, publishing a plan, advancing it and reading it back, each
call shown in the transcript as a tool call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from acp.helpers import start_tool_call
from acp.schema import McpServerStdio

from cockpit.agentkit.demo.texts import PLAN_TOOL_MISSING, PLAN_TOOL_STEPS
from cockpit.agentkit.demo.turn import Turn
from cockpit.agentkit.mcp_stdio import first_error, stdio_parameters
from cockpit.plan_protocol import READ, SERVER_NAME, UPDATE

if TYPE_CHECKING:
    from mcp import Client


def plan_server(servers: Sequence[Any]) -> McpServerStdio | None:
    """The plan tool among the MCP servers the session was handed (stdio only)."""
    for server in servers:
        if isinstance(server, McpServerStdio) and server.name == SERVER_NAME:
            return server
    return None


def plan_items(stage: int) -> list[dict[str, str]]:
    """The demo plan with its first `stage` steps completed and the next one in progress."""
    items = []
    for index, content in enumerate(PLAN_TOOL_STEPS):
        status = "completed" if index < stage else "in_progress" if index == stage else "pending"
        items.append({"content": content, "status": status})
    return items


async def call_tool(
    turn: Turn, client: Client, title: str, tool: str, arguments: dict[str, Any]
) -> str | None:
    """Call `tool`, shown as a tool call from start to end: its text, or None when it
    failed (an error result, or the server gone) or the turn was cancelled. A cancel is
    not raised here: inside the client, the SDK's task group would wrap it."""
    from mcp import MCPError
    from mcp.types import TextContent

    if turn.cancel.is_set():
        return None
    call_id = turn.call_id()
    await turn.update(
        start_tool_call(call_id, title, kind="other", status="pending", raw_input=arguments)
    )
    try:
        result = await client.call_tool(tool, arguments)
    except (MCPError, OSError) as error:
        await turn.finish_tool(call_id, False, f"The plan tool failed: {error}")
        return None
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    await turn.finish_tool(call_id, not result.is_error, text)
    return None if result.is_error else text


async def run_plan_tool(turn: Turn) -> None:
    """Publish a three-step plan through the plan tool, advance it, read it back and say
    it. Without the server, a sentence says so; a failed call ends the scenario."""
    server = plan_server(turn.session.mcp_servers)
    if server is None:
        await turn.say(PLAN_TOOL_MISSING)
        return
    # The SDK loads at the first call, so an agent that never uses the tool starts fast.
    from mcp import Client, MCPError

    try:
        async with Client(stdio_parameters(server)) as client:
            read = None
            if await call_tool(turn, client, "Publish the plan", UPDATE, {"items": plan_items(0)}):
                advanced = {"items": plan_items(1), "explanation": "The first step is done."}
                if await call_tool(turn, client, "Advance the plan", UPDATE, advanced):
                    read = await call_tool(turn, client, "Read the plan back", READ, {})
    except (OSError, MCPError, ExceptionGroup) as error:
        await turn.say(f"The {SERVER_NAME} server could not be started: {first_error(error)}.")
        return
    turn.check()
    await turn.say(read if read is not None else "The plan tool failed; see the tool call above.")
