"""The session of `captures/gemini-cli-load-replay-late.jsonl`, as Cockpit stored it.

gemini-cli 0.61.0 reloads a session of six turns in that capture, and replays them:
the first replayed update before it answers `session/load`, the rest after the client's
next prompt. `store_history` writes those six turns as a live Cockpit stored them when
gemini streamed them (4-character chunks, a shell call asked for and then completed,
the answer recorded): 16 rows, which a reload must leave as they are.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from cockpit.api import AgentSpec
from store import Row, chunk_from_update, note
from store.store import Store
from store.workload import text_update

CAPTURES = Path(__file__).parents[1] / "captures"
LATE_CAPTURE = CAPTURES / "gemini-cli-load-replay-late.jsonl"
PLAYER = Path(__file__).with_name("capture_agent.py")

SESSION_ID = "a62513a2-5d73-4319-b215-109dc00d35e1"
"""The agent's own id of the session in the capture."""

LIVE_PROMPT = "romeo after close [scenario:echo]"
LIVE_REPLY = "You said: romeo after close [scenario:echo]"
"""The turn the capture runs after the load, and what gemini answers."""

TABLE = (
    "Here is a short comparison of a few sorting algorithms:\n\n"
    "| Algorithm | Average | Worst | Stable |\n"
    "|-----------|---------|-------|--------|\n"
    "| Quicksort | O(n log n) | O(n^2) | no |\n"
    "| Mergesort | O(n log n) | O(n log n) | yes |\n"
    "| Heapsort  | O(n log n) | O(n log n) | no |\n\n"
    "**Summary:** use *mergesort* when stability matters; otherwise `quicksort` is usually "
    "fastest in practice."
)
SHELL_REPLY = "The command printed `hello-from-mock` and listed the directory."
SHELL_TITLE = "echo hello-from-mock && ls"

TURNS: tuple[tuple[str, str, str | None], ...] = (
    ("hello first [scenario:echo]", "You said: hello first [scenario:echo]", None),
    ("kilo slow reply [scenario:text]", TABLE, None),
    ("quebec slow reply [scenario:text]", TABLE, None),
    (
        "papa run it [scenario:tool-shell]",
        SHELL_REPLY,
        "run_shell_command__run_shell_command_1796528970535_0",
    ),
    (
        "alfa run it [scenario:tool-shell]",
        SHELL_REPLY,
        "run_shell_command__run_shell_command_1796528985432_0",
    ),
    ("sierra send wait [scenario:text]", TABLE, None),
)
"""Each earlier turn: its prompt, gemini's reply, and the id of the shell call it ran."""

STORED_ROWS = 16


def player(late: float, capture: Path = LATE_CAPTURE) -> AgentSpec:
    """The capture played as an agent, its history's late part `late` seconds after the
    prompt that follows the load."""
    command = (sys.executable, str(PLAYER), str(capture), "--late", str(late))
    return AgentSpec(name="gemini-replay", command=command, title="gemini (recorded)")


def shell_updates(tool_call_id: str) -> list[dict[str, Any]]:
    """A shell call as gemini streams it: asked for first (the permission request's tool
    call, which Cockpit folds as an update), then completed."""
    fields = {"toolCallId": tool_call_id, "title": SHELL_TITLE, "kind": "execute"}
    return [
        {"sessionUpdate": "tool_call_update", **fields, "status": "pending"},
        {"sessionUpdate": "tool_call_update", **fields, "status": "completed", "content": []},
    ]


async def store_history(store: Store, session: str) -> list[Row]:
    """Write the six turns as Cockpit stored them live; return the rows."""
    for prompt, reply, tool_call_id in TURNS:
        await store.begin_turn(session, prompt)
        if tool_call_id is not None:
            pending, completed = shell_updates(tool_call_id)
            await store.apply(chunk_from_update(session, pending))
            decision = note(
                session, "permission", f"Allowed once: {SHELL_TITLE}", toolCallId=tool_call_id
            )
            await store.apply(decision)
            await store.apply(chunk_from_update(session, completed))
        for start in range(0, len(reply), 4):
            piece = reply[start : start + 4]
            await store.apply(chunk_from_update(session, text_update("agent_message_chunk", piece)))
        await store.end_turn(session)
    rows = await store.all_rows(session)
    assert len(rows) == STORED_ROWS
    return rows


def replayed_updates() -> list[dict[str, Any]]:
    """Every `session/update` the capture's agent sends, in order."""
    updates = []
    for line in LATE_CAPTURE.read_text(encoding="utf-8").splitlines():
        frame = json.loads(line)["frame"]
        if frame.get("method") == "session/update":
            updates.append(frame["params"]["update"])
    return updates
