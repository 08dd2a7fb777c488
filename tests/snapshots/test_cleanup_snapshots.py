"""Snapshot of the cleanup screen at 80x24 (an SSH terminal): every worktree with its
size or state, merged or what it would lose, and its last activity; one is chosen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.api import CleanupItem
from cockpit.ui.screens.cleanup import CleanupScreen
from tests.snapshots.test_tui_interaction_snapshots import calm, live_app
from tests.support.ui_helpers import NOW, ready, wait_until

Snap = Callable[..., bool]

ITEMS = [
    CleanupItem(
        "1a2b3c4d", "Fix the flaky test", "/w/1", "cockpit/fix-the-flaky-test-1a2b3c4d",
        "main", 48_300_000, True, (), NOW - 3 * 3600,
    ),
    CleanupItem(
        "5e6f7a8b", "Add the export", "/w/2", "cockpit/add-the-export-5e6f7a8b", "main",
        2_100_000_000, False, ("2 commits not in main", "3 uncommitted files"), NOW - 600,
    ),
    CleanupItem(
        "9c0d1e2f", "Try another parser", "/w/3", "cockpit/try-another-parser-9c0d1e2f",
        "main", 4096, False, ("uncommitted work kept by its archive",), NOW - 2 * 86400,
        archived=True,
    ),
    CleanupItem(
        "3a4b5c6d", "Old spike", "/w/4", "cockpit/old-spike-3a4b5c6d", "main", 0, True, (),
        NOW - 9 * 86400, missing=True,
    ),
]  # fmt: skip


def test_the_cleanup_screen_at_80x24(snap_compare: Snap, tmp_path: Path) -> None:
    app = live_app(tmp_path, "cleanup")

    async def open_it(pilot: Any) -> None:
        await ready(app)
        app.push_screen(CleanupScreen(ITEMS, NOW))
        await wait_until(lambda: isinstance(app.screen, CleanupScreen))
        await pilot.press("down", "space", "down")
        await calm(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=open_it)
