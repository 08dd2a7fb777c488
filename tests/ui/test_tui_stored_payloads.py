"""A store written before the UI read typed records may hold payloads that do not fit them
(fields of the wrong type from an agent the SDK let through, a payload that is not even an
object): the transcript shows them, an unreadable one as an unknown card, and never
fails."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.widget import Widget

from cockpit.paths import DATABASE_NAME
from cockpit.ui.bubbles import PlanBubble
from cockpit.ui.composer import CompletionMenu, Composer
from cockpit.ui.status_line import StatusLine
from cockpit.ui.tool_card import ToolCard
from store import chunk_from_update
from tests.support.ui_helpers import add_session, fill, make_app, wait_until

SIZE = (120, 40)

ODD_TOOL_CALLS: list[dict[str, Any]] = [
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "odd-fields",
        "title": "Odd fields",
        "status": "failed",
        "content": [7, {"type": "diff", "path": 3, "oldText": 4}, {"type": "terminal"}],
        "locations": "nowhere",
        "terminalOutput": [1, 2],
        "rawOutput": {"exitCode": "two"},
        "rawInput": {"command": 5},
    },
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "odd-terminal",
        "title": "Odd terminal",
        "status": "completed",
        "content": [{"type": "terminal", "terminalId": "t"}],
        "terminalOutput": {"t": {"output": 12, "exitStatus": {"exitCode": "x", "signal": 9}}},
    },
    {"sessionUpdate": "tool_call", "toolCallId": "not-an-object", "title": "soon a list"},
]


def plain(widget: Widget) -> str:
    """What a widget draws, as plain text."""
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(widget.render())
    return console.export_text()


async def write_odd_store(home: Path, project: Path) -> str:
    """A session with odd tool calls, an odd plan and odd session fields, written through
    the store; then (as an older writer or a hand edit could) a tool payload and the plan's
    payload that are not objects."""
    session = ""

    async def build(engine: object) -> None:
        nonlocal session
        session = await add_session(engine, project, "odd", [("p", "r")])  # type: ignore[arg-type]
        store = engine.store  # type: ignore[attr-defined]
        for update in ODD_TOOL_CALLS:
            await store.apply(chunk_from_update(session, update))
        await store.apply(chunk_from_update(session, {"sessionUpdate": "plan", "entries": []}))
        await store.update_session(
            session,
            modes=[1, 2],
            config_options=["junk", {"id": "m", "options": 5, "currentValue": {"a": 1}}],
            commands=["junk", {"name": "go", "input": "junk"}, {"description": "nameless"}],
            usage={"used": "lots", "cost": [1], "lastTurn": 3},
        )

    await fill(home, build)
    with sqlite3.connect(home / DATABASE_NAME) as db:
        db.execute("UPDATE messages SET payload = '[1, 2]' WHERE key = 'tool:not-an-object'")
        db.execute("UPDATE messages SET payload = '\"a plan\"' WHERE kind = 'plan'")
    return session


async def test_payloads_that_do_not_fit_their_records_show_and_never_fail(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    session = await write_odd_store(tmp_path / "home", project)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current == session and len(app.query(ToolCard)) == 3)
        cards = {card.key: card for card in app.query(ToolCard)}
        unknown = cards["tool:not-an-object"]
        assert (
            plain(unknown)
            .rstrip()
            .endswith("[unknown] Cockpit cannot read this tool call: it was stored as a list.")
        )
        for card in cards.values():
            card.expanded = True
        await pilot.pause()
        assert "Odd fields" in cards["tool:odd-fields"].copy_text()
        assert "[killed by 9]" in plain(cards["tool:odd-terminal"])
        plan = app.query_one(PlanBubble)
        assert "Cockpit cannot read this plan: it was stored as a text." in plain(plan)
        assert plain(app.query_one(StatusLine)).startswith("stopped")
        app.query_one(Composer).focus()
        await pilot.press("/")  # the agent's commands: the readable one is offered
        menu = app.query_one(CompletionMenu)
        await wait_until(
            lambda: any(
                str(menu.get_option_at_index(i).prompt).startswith("/go")
                for i in range(menu.option_count)
            ),
            what="the agent's readable command offered",
        )
