"""Snapshots of the focused bubble (the one `c` copies) in each bundled theme: Tab from
the prompt into the transcript, then Up to the agent's reply above the last tool card.
The focused bubble has a bar down its left edge and a lighter background."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cockpit.engine.core import Engine
from cockpit.ui.bubbles import AgentBubble
from store import chunk_from_update, note
from store.workload import text_update
from tests.snapshots.test_tui_snapshots import app_with, settle

Snap = Callable[..., bool]

REPLY = "The fold keeps **one row per message**.\n\n- it merges recaps\n- it never guesses\n"


async def build(engine: Engine, project: Path) -> None:
    record = await engine.create_session("demo", project, title="focus")
    session = record.id
    await engine.store.begin_turn(session, "How does the fold work?")
    for kind, text in (
        ("agent_thought_chunk", "Read the rules first."),
        ("agent_message_chunk", REPLY),
    ):
        await engine.store.apply(chunk_from_update(session, text_update(kind, text)))
    await engine.store.apply(
        chunk_from_update(
            session,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Read store/fold.py",
                "kind": "read",
                "status": "completed",
            },
        )
    )
    await engine.store.apply(note(session, "notice", "The turn ended"))
    await engine.store.end_turn(session)
    await engine.store.update_session(session, status="closed")


def focused_reply(snap_compare: Snap, tmp_path: Path, theme: str, size: tuple[int, int]) -> bool:
    app = app_with(tmp_path, build)

    async def focus(pilot: Any) -> None:
        await settle(pilot)
        pilot.app.theme = theme
        await pilot.press("tab")
        await settle(pilot)
        for _ in range(5):
            if isinstance(pilot.app.focused, AgentBubble):
                break
            await pilot.press("up")
            await settle(pilot)
        assert isinstance(pilot.app.focused, AgentBubble)

    return snap_compare(app, terminal_size=size, run_before=focus)


@pytest.mark.parametrize("theme", ["cockpit-dark", "cockpit-light", "cockpit-ansi"])
def test_the_focused_bubble_in_each_theme(snap_compare: Snap, tmp_path: Path, theme: str) -> None:
    assert focused_reply(snap_compare, tmp_path, theme, (100, 26))


def test_the_focused_bubble_at_80x24(snap_compare: Snap, tmp_path: Path) -> None:
    assert focused_reply(snap_compare, tmp_path, "cockpit-dark", (80, 24))
