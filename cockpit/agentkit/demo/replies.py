"""The demo scenarios that only talk: replies, thoughts, plans, re-sends, command lists,
mode switches, protocol oddities (unknown kinds, garbage lines, a huge chunk), a slow
reply and a crash. Each takes the turn and streams through it."""

from __future__ import annotations

import json
import os
import random
import re
import sys
import time
import uuid
from typing import Literal

from acp.helpers import start_tool_call, update_current_mode, update_plan, update_tool_call
from acp.schema import AgentPlanUpdate, PlanEntry

from cockpit.agentkit.demo.history import save_session
from cockpit.agentkit.demo.options import COMMAND_HINTS, MORE_COMMANDS, command_list
from cockpit.agentkit.demo.texts import (
    CRASH_TEXT,
    ESCAPE_TEXT,
    GARBAGE_LINES,
    GARBAGE_REPLY,
    IDS_REPLY,
    IDS_THOUGHT,
    PLAN_STEPS,
    RESEND_DONE,
    RESEND_TAIL,
    RESEND_TEXT,
    THOUGHT,
    huge_text,
    respaced,
    slow_text,
    stderr_log,
    tour_text,
)
from cockpit.agentkit.demo.turn import Turn, flush_protocol, write_stderr
from cockpit.agentkit.settings import MODES
from store.workload import BENCH_SIZE, benchmark_reply, markdown_reply

CRASH_CODE = 3


async def run_tour(turn: Turn) -> None:
    """The default reply."""
    await turn.say(tour_text(turn.scenarios))


async def run_think(turn: Turn) -> None:
    """A thought block; the reply comes from the other words (or a short one of its own)."""
    await turn.stream(THOUGHT, kind="thought")


async def run_plan(turn: Turn) -> None:
    """A plan whose steps run one by one; every plan update carries the complete list."""
    statuses: list[Literal["pending", "in_progress", "completed"]] = ["pending"] * len(PLAN_STEPS)

    def plan() -> AgentPlanUpdate:
        return update_plan(
            PlanEntry(content=title, priority="medium", status=status)
            for (title, _), status in zip(PLAN_STEPS, statuses, strict=True)
        )

    await turn.update(plan())
    for index, (_, sentence) in enumerate(PLAN_STEPS):
        turn.check()
        statuses[index] = "in_progress"
        await turn.update(plan())
        await turn.say(sentence)
        statuses[index] = "completed"
        await turn.update(plan())


async def run_ids(turn: Turn) -> None:
    """A thought and a reply with a messageId on every chunk, a different id for each."""
    await turn.stream(IDS_THOUGHT, kind="thought", message_id=uuid.uuid4().hex)
    await turn.stream(IDS_REPLY, message_id=uuid.uuid4().hex)


async def run_table(turn: Turn) -> None:
    """A long markdown reply."""
    await turn.say("# A long markdown reply\n\n" + markdown_reply(random.Random(7), 6000))


async def run_resend(turn: Turn) -> None:
    """One message streamed, then re-sent exactly, re-spaced, as a snapshot, and as a recap
    after a tool call; then a short closing reply."""
    if turn.reply_open:  # so the message starts its own row instead of extending a reply
        await turn.stream("Next, the same message several times.", kind="thought")
    await turn.say(RESEND_TEXT)
    await turn.pause()
    await turn.chunk("agent", RESEND_TEXT)
    await turn.pause()
    await turn.chunk("agent", respaced(RESEND_TEXT))
    await turn.pause()
    full = RESEND_TEXT + RESEND_TAIL
    await turn.chunk("agent", full)
    turn.replies[-1] = full
    call_id = turn.call_id()
    await turn.start_tool(call_id, "Recap check", "think")
    await turn.finish_tool(call_id, True, "The next chunk repeats the whole message.")
    await turn.pause()
    await turn.chunk("agent", full)
    await turn.say(RESEND_DONE)  # a new message: the recap above belongs to the first one


async def run_commands(turn: Turn) -> None:
    """Announce a changed command list and list it."""
    await turn.update(command_list(MORE_COMMANDS))
    lines = "".join(
        f"- `/{name}`"
        + (f" `<{COMMAND_HINTS[name]}>`" if name in COMMAND_HINTS else "")
        + f": {text}\n"
        for name, text in MORE_COMMANDS.items()
    )
    await turn.say("The slash commands are now:\n\n" + lines)


async def run_modes(turn: Turn) -> None:
    """Switch the session to plan mode on the agent's own initiative."""
    turn.session.mode = "plan"
    save_session(turn.session)
    await turn.update(update_current_mode("plan"))
    await turn.say(f"I switched this session to **{MODES['plan']}** mode (`plan`).")


async def run_escape(turn: Turn) -> None:
    """A reply with colour codes, a title-setting OSC sequence and a bell."""
    await turn.say(ESCAPE_TEXT)


async def run_unknown(turn: Turn) -> None:
    """An update kind no client knows, then a tool call updated before it is started."""
    notification = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": turn.session_id,
            "update": {"sessionUpdate": "brand_new_kind", "payload": {"answer": 42}},
        },
    }
    await turn.raw_line(json.dumps(notification))
    turn.reply_open = False
    call_id = turn.call_id()
    await turn.update(update_tool_call(call_id, status="in_progress", title="Late start"))
    await turn.update(start_tool_call(call_id, "Late start", kind="other", status="in_progress"))
    await turn.finish_tool(call_id, True, "Started after its first update.")
    await turn.say(
        "I sent a `brand_new_kind` update and a tool call whose first update came before its start."
    )


async def run_garbage(turn: Turn) -> None:
    """Lines that are not protocol messages on the protocol stream, then a reply."""
    for line in GARBAGE_LINES:
        await turn.raw_line(line)
    await turn.say(GARBAGE_REPLY)


async def run_bench(turn: Turn) -> None:
    """The streaming benchmark's reply, in 4-character chunks as fast as they can go."""
    sizes = [int(number) for number in re.findall(r"\b(\d{3,7})\b", turn.prompt)]
    await turn.stream(benchmark_reply(sizes[0] if sizes else BENCH_SIZE), piece_size=4)
    await flush_protocol(turn.writer)
    write_stderr(f"demo agent: bench reply sent at {time.time():.3f}\n")  # for latency figures


async def run_huge(turn: Turn) -> None:
    """One 10 MiB message chunk after the usual empty opener."""
    await turn.stream(huge_text(), whole=True)


async def run_stderr(turn: Turn) -> None:
    """A flood of log lines on stderr, then a reply."""
    write_stderr(stderr_log())
    await turn.say("I wrote 1 MiB of log lines to stderr, and I am still answering.")


async def run_slow(turn: Turn) -> None:
    """A long reply with a pause between chunks."""
    turn.slow = True
    await turn.say(slow_text(turn.rng))


async def run_crash(turn: Turn) -> None:
    """Part of a reply, then a deliberate crash with exit code 3."""
    await turn.say(CRASH_TEXT)
    turn.commit()
    await flush_protocol(turn.writer)
    write_stderr("demo agent: crashing on purpose\n")
    sys.stdout.flush()
    os._exit(CRASH_CODE)
