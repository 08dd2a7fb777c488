"""Snapshot of an agent's two hundred questions at 80x24 (an SSH terminal): the inbox
lists them (a list, not a widget each) over the session's one prompt, which counts the
rest. The agent is a real subprocess (`tests/support/tiny_agent.py`, `ask-many`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.screens.inbox import InboxScreen
from tests.snapshots.test_tui_interaction_snapshots import calm, fixed_folder
from tests.support.ui_helpers import ready, send, ticking, wait_until
from tests.ui.test_many_requests import tiny_app

Snap = Callable[..., bool]
SSH = (80, 24)
MANY = 200


def test_the_inbox_with_two_hundred_questions(snap_compare: Snap, tmp_path: Path) -> None:
    app = tiny_app(tmp_path, fixed_folder("many"), engine_clock=ticking())

    async def ask(pilot: Any) -> None:
        session = await ready(app)
        await send(app, pilot, f"ask-many n={MANY}")
        await wait_until(lambda: app.engine.pending_count(session) == MANY, timeout=60)
        await wait_until(
            lambda: bool(p := app.query(PermissionPrompt)) and p.first().waiting == MANY,
            timeout=60,
        )
        await calm(pilot)
        await pilot.press("ctrl+o")
        await wait_until(lambda: isinstance(app.screen, InboxScreen))
        await calm(pilot)
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        assert sum(item.request is not None for item in inbox.items) == MANY
        assert len(app.query(PermissionPrompt)) == 1

    assert snap_compare(app, terminal_size=SSH, run_before=ask)
