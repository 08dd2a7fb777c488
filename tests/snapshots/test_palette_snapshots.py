"""The command palette at 80x24: Cockpit's entries in its words, each with its key, and
the entry a typed word names first, highlighted where the word matched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.command import CommandInput, CommandList

from cockpit.ui.dialog import Palette
from tests.snapshots.test_tui_snapshots import Snap, app_with, settle
from tests.support.ui_helpers import burst, ready, wait_until

SIZE = (80, 24)


def test_the_palette_on_opening(snap_compare: Snap, tmp_path: Path) -> None:
    app = app_with(tmp_path)

    async def opened(pilot: Any) -> None:
        await ready(app)  # the status line under the palette says so
        await settle(pilot)
        burst(app, "ctrl+p")
        await wait_until(lambda: any(c.option_count > 10 for c in app.screen.query(CommandList)))
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=opened)


def test_the_palette_ranks_the_entry_a_word_begins_first(
    snap_compare: Snap, tmp_path: Path
) -> None:
    """ "ren" begins "Rename session": first, highlighted at the word's start."""
    app = app_with(tmp_path)

    async def typed(pilot: Any) -> None:
        await ready(app)  # the status line under the palette says so
        await settle(pilot)
        burst(app, "ctrl+p", *"ren")
        await wait_until(lambda: [f.value for f in app.screen.query(CommandInput)] == ["ren"])
        palette = app.screen
        assert isinstance(palette, Palette)
        await wait_until(lambda: not palette.searching(), what="the search for ren")
        for _ in range(3):
            await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=typed)
