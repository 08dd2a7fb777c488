"""Screens of the real app that show every colour pair Cockpit draws: a transcript with
every kind of bubble and tool card (a highlighted diff, a terminal's output, Markdown with
code, a table, a quote and links), the rail in every state, the footer, the status line,
the completion menu, toasts and every dialog. Shared by the legibility tests (colour
contrast at every depth) and by the glyph test (every character the UI draws)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from cockpit.engine.core import Engine
from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import AgentBubble, BubbleWidget, ThoughtBubble, UserBubble
from cockpit.ui.composer import CompletionMenu, Composer
from cockpit.ui.rail import RailEntry, SessionRail
from cockpit.ui.session_states import RailState
from cockpit.ui.tool_card import ToolCard
from store import chunk_from_update, note
from store.workload import text_update
from tests.support.ui_helpers import NOW, fill, make_app, wait_until

OLD_SOURCE = '''import os


def greet(name):
    """Say hello."""
    print("Hello, " + name)  # the old way
    return None
'''

NEW_SOURCE = '''import os
import sys


def greet(name: str, *, loud: bool = False) -> str:
    """Say hello, louder when asked."""
    message = f"Hello, {name}!"  # 42 times
    return message.upper() if loud else message
'''

REPLY = """# What I found

The fold keeps **one row per message**, *whatever* the agent sends; see `store/fold.py`
and [the design](https://example.org/design).

> A quote from the design: one key, one row, one bubble.

1. Read the rules
2. Write the test

| file | lines | status |
|------|------:|--------|
| store.py | 420 | ok |
| fold.py | 230 | needs work |

```python
def fold(row: str, chunk: str) -> str:
    return row + chunk  # a comment
```

---
Done.
"""


def _tool(call_id: str, kind: str, title: str, status: str, **more: Any) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "kind": kind,
        "title": title,
        "status": status,
        **more,
    }


def _updates(folder: Path) -> list[dict[str, Any]]:
    path = str(folder / "greet.py")
    output = "".join(f"test_{n:02d} ... ok\n" for n in range(1, 4)) + "3 passed in 0.42s\n"
    return [
        text_update("agent_thought_chunk", "The fold rules first.\nThen the tests."),
        text_update("agent_message_chunk", REPLY),
        _tool("t1", "read", "Read store.py", "completed", locations=[{"path": path, "line": 3}]),
        _tool("t2", "fetch", "Fetch https://example.org/spec", "cancelled"),
        _tool(
            "t3",
            "execute",
            "Run pytest -q",
            "failed",
            content=[
                {"type": "content", "content": {"type": "text", "text": "2 failed, `one` here"}}
            ],
        ),
        _tool("t4", "think", "Plan the change", "in_progress"),
        _tool("t5", "edit", "Edit fold.py", "pending"),
        _tool(
            "t6",
            "edit",
            "Edit greet.py",
            "completed",
            locations=[{"path": path, "line": 4}],
            content=[{"type": "diff", "path": path, "oldText": OLD_SOURCE, "newText": NEW_SOURCE}],
        ),
        _tool(
            "t7",
            "execute",
            "Run the tests",
            "completed",
            content=[{"type": "terminal", "terminalId": "term-1"}],
        ),
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t7",
            "terminalOutput": {
                "term-1": {
                    "output": output,
                    "truncated": False,
                    "exitStatus": {"exitCode": 1, "signal": None},
                }
            },
        },
        {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Read the fold rules", "priority": "high", "status": "completed"},
                {"content": "Write the test", "priority": "high", "status": "in_progress"},
                {"content": "Fix the rule", "priority": "medium", "status": "pending"},
            ],
        },
    ]


async def tour_app(tmp_path: Path, folder: Path) -> CockpitApp:
    """An app on one stored session whose turn has every kind of row."""

    async def build(engine: Engine) -> None:
        record = await engine.create_session("demo", folder, title="tour of every bubble")
        await engine.store.begin_turn(record.id, "Show me everything")
        for update in _updates(folder):
            await engine.store.apply(chunk_from_update(record.id, update))
        await engine.store.apply(note(record.id, "notice", "The agent started"))
        await engine.store.apply(note(record.id, "error", "The agent stopped: exit 1"))
        await engine.store.apply(note(record.id, "permission", "Allowed once: Write notes.md"))
        await engine.store.end_turn(record.id)
        await engine.store.update_session(record.id, status="closed")

    await fill(tmp_path / "home", build)
    return make_app(tmp_path, folder)


RAIL_STATES = (
    RailState.NEEDS_YOU,
    RailState.ERROR,
    RailState.UNREAD,
    RailState.WORKING,
    RailState.STARTING,
    RailState.IDLE,
    RailState.CLOSED,
)


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.app.workers.wait_for_complete()
    for _ in range(3):
        await pilot.pause(0.02)


async def show_every_rail_state(app: CockpitApp, pilot: Pilot[Any]) -> None:
    """The rail with one session in each state, the real session among them."""
    rail = app.query_one(SessionRail)
    current = app.current or ""
    entries = [
        RailEntry(
            current if index == 0 else f"s{index}",
            state,
            f"{state} session",
            "demo",
            "~/p",
            90,
            current=index == 0,
        )
        for index, state in enumerate(RAIL_STATES)
    ]
    rail.show(entries, current)
    await pilot.pause()


Step = Callable[[CockpitApp, Pilot[Any]], Awaitable[None]]


def open_cards(app: CockpitApp) -> None:
    """Open every tool card and the thought: their bodies show."""
    for card in app.query(ToolCard):
        card.expanded = True
    app.query_one(ThoughtBubble).expanded = True


async def _dialog(app: CockpitApp, pilot: Pilot[Any], *keys: str) -> None:
    await pilot.press(*keys)
    await settle(pilot)


async def _slash_menu(app: CockpitApp, pilot: Pilot[Any]) -> None:
    composer = app.query_one(Composer)
    composer.text = ""
    composer.focus()
    await pilot.press("/")
    await wait_until(lambda: app.query_one(CompletionMenu).display)
    await settle(pilot)


async def _toast(app: CockpitApp, pilot: Pilot[Any]) -> None:
    app.notify("Copied to the clipboard")
    app.notify("Could not save the theme choice", severity="warning")
    app.notify("The agent failed", severity="error")
    await settle(pilot)


async def _rail_focused(app: CockpitApp, pilot: Pilot[Any]) -> None:
    app.query_one(SessionRail).focus()
    await settle(pilot)


async def _nothing(app: CockpitApp, pilot: Pilot[Any]) -> None:
    await settle(pilot)


def _focus(chosen: Callable[[BubbleWidget], bool]) -> Step:
    """A view with the first bubble `chosen` picks focused (the one `c` copies)."""

    async def step(app: CockpitApp, pilot: Pilot[Any]) -> None:
        bubble = next(b for b in app.query(BubbleWidget) if chosen(b))
        bubble.focus()
        bubble.scroll_visible(animate=False, immediate=True)
        await settle(pilot)

    return step


def _the_edit(bubble: BubbleWidget) -> bool:
    return isinstance(bubble, ToolCard) and (bubble.payload or {}).get("title") == "Edit greet.py"


VIEWS: dict[str, Step] = {
    "main": _nothing,
    "rail-focused": _rail_focused,
    "agent-focused": _focus(lambda bubble: isinstance(bubble, AgentBubble)),
    "diff-focused": _focus(_the_edit),
    "user-focused": _focus(lambda bubble: isinstance(bubble, UserBubble)),
    "toasts": _toast,
    "slash-menu": _slash_menu,
    "new-session": lambda app, pilot: _dialog(app, pilot, "ctrl+n"),
    "help": lambda app, pilot: _dialog(app, pilot, "f1"),
    "inbox": lambda app, pilot: _dialog(app, pilot, "ctrl+o"),
    "options": lambda app, pilot: _dialog(app, pilot, "ctrl+t"),
    "rename": lambda app, pilot: _dialog(app, pilot, "f2"),
    "palette": lambda app, pilot: _dialog(app, pilot, "ctrl+p"),
}
"""Each view from the main screen; a dialog is closed again with Escape."""


async def each_view(
    app: CockpitApp, pilot: Pilot[Any], themes: tuple[str, ...]
) -> AsyncIterator[tuple[str, str]]:
    """Go through every view in every theme, yielding (theme, view) while it shows."""
    await settle(pilot)
    await show_every_rail_state(app, pilot)
    open_cards(app)
    await settle(pilot)
    for theme in themes:
        app.theme = theme
        await settle(pilot)
        await show_every_rail_state(app, pilot)
        for view, step in VIEWS.items():
            await step(app, pilot)
            yield theme, view
            while app.screen is not app.screen_stack[0]:
                await pilot.press("escape")
                await settle(pilot)
            app.clear_notifications()
            app.query_one(Composer).text = ""
            await settle(pilot)


def bubbles(app: CockpitApp) -> list[BubbleWidget]:
    """The bubbles on screen, in order."""
    return list(app.query(BubbleWidget))


__all__ = ["NOW", "RAIL_STATES", "VIEWS", "bubbles", "each_view", "settle", "tour_app"]
