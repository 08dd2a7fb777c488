"""The demo agent's handler table: one coroutine per scenario word of
`acp/demo_scenarios.toml` (checked against it when the agent starts), and the turn that
runs the words a prompt holds, in the file's order."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from cockpit.agentkit.demo.forms import run_form, run_link
from cockpit.agentkit.demo.plan_tool import run_plan_tool
from cockpit.agentkit.demo.replies import (
    run_bench,
    run_commands,
    run_crash,
    run_escape,
    run_garbage,
    run_huge,
    run_ids,
    run_modes,
    run_plan,
    run_resend,
    run_slow,
    run_stderr,
    run_table,
    run_think,
    run_tour,
    run_unknown,
)
from cockpit.agentkit.demo.texts import THINK_REPLY
from cockpit.agentkit.demo.tools import run_build, run_flood, run_outside, run_permission, run_tools
from cockpit.agentkit.demo.turn import Turn

HANDLERS: dict[str, Callable[[Turn], Awaitable[None]]] = {
    "tour": run_tour,
    "think": run_think,
    "plan": run_plan,
    "mcp": run_plan_tool,
    "ids": run_ids,
    "table": run_table,
    "bench": run_bench,
    "resend": run_resend,
    "tools": run_tools,
    "build": run_build,
    "flood": run_flood,
    "permission": run_permission,
    "form": run_form,
    "link": run_link,
    "commands": run_commands,
    "modes": run_modes,
    "escape": run_escape,
    "outside": run_outside,
    "unknown": run_unknown,
    "garbage": run_garbage,
    "huge": run_huge,
    "stderr": run_stderr,
    "slow": run_slow,
    "crash": run_crash,
}
"""One coroutine per word of `acp/demo_scenarios.toml`; `main` refuses to start the agent
when the two disagree."""


async def run_turn(turn: Turn, words: list[str], notes: list[str]) -> None:
    """The thought first (if asked for), then the mentioned files, then each word in order."""
    rest = [word for word in words if word != "think"]
    if "think" in words:
        await run_think(turn)
    if "slow" in words:
        turn.slow = True
    if notes:
        await turn.say(f"I received {len(notes)} mentioned file(s): {', '.join(notes)}.")
    for word in rest:
        turn.check()
        await HANDLERS[word](turn)
    if not rest:
        await turn.say(THINK_REPLY)
