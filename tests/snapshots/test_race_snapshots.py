"""Pictures of a race's comparison (issue 34) at 80x24 and 160x48: three contenders, one
still working, one whose test failed, one that passed with its tokens and cost. The
standings are fixed here (session ids are random in a real race); the race itself is
tested end to end in tests/ui/test_race_screen.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import Contender
from cockpit.ui.screens.race import RaceScreen
from tests.snapshots.test_tui_snapshots import app_with, one_existing_session, settle
from tests.support.ui_helpers import wait_until

Snap = Callable[..., bool]

STANDINGS = [
    Contender("a1b2c3d4", "claude-code", "ready", 3, 42, 7, "passed", 95.0, 18234, 0.41),
    Contender("e5f6a7b8", "codex", "ready", 5, 120, 31, "failed", 131.0, 25410),
    Contender("c9d0e1f2", "gemini", "working", 1, 4, 0, "waiting"),
]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_the_race_comparison(snap_compare: Snap, tmp_path: Path, size: tuple[int, int]) -> None:
    app = app_with(tmp_path, one_existing_session)

    async def standings() -> list[Contender]:
        return STANDINGS

    async def compared(pilot: Any) -> None:
        await settle(pilot)
        app.push_screen(RaceScreen("make the failing tests pass", standings))
        await wait_until(
            lambda: isinstance(app.screen, RaceScreen) and len(app.screen.contenders) == 3,
            what="the contenders",
        )
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=compared)
