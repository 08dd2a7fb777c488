"""`/checkpoints` as a user types it: the list, Enter on a checkpoint shows what a restore
overwrites and deletes and asks; `n` changes nothing, `y` puts the files back and says how
to undo it; a session without a worktree is told it has none."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.widgets import Static

from cockpit.ui.screens.checkpoints import CheckpointsScreen
from cockpit.ui.screens.questions import ConfirmScreen
from tests.snapshots.test_checkpoint_snapshots import two_turns
from tests.support.checkpoint_repos import make_repository, make_worktree
from tests.support.ui_helpers import fill_now, make_app, wait_until

README = "# A project\n\nIt has a readme.\n"


def notes_of(app: Any) -> list[str]:
    return [str(notification.message) for notification in app._notifications]


async def test_a_checkpoint_is_restored_after_the_plan_is_read_and_agreed(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    worktree = make_worktree(make_repository(tmp_path / "repo"), project)
    await asyncio.to_thread(
        fill_now, tmp_path / "home", lambda engine: two_turns(engine, project, worktree)
    )
    app = make_app(tmp_path, project)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(lambda: app.current is not None)
        await pilot.press(*"/checkpoints", "enter")
        await wait_until(lambda: isinstance(app.screen, CheckpointsScreen))
        await pilot.press("up", "up", "up", "enter")  # #1: the start of the first turn
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen))
        details = str(app.screen.query_one(".details", Static).render())
        assert "overwrite: README.md" in details and "delete: demo-notes.md" in details
        await pilot.press("n")
        await wait_until(lambda: not isinstance(app.screen, ConfirmScreen))
        assert (project / "demo-notes.md").exists()

        await pilot.press(*"/checkpoints", "enter")
        await wait_until(lambda: isinstance(app.screen, CheckpointsScreen))
        await pilot.press("up", "up", "up", "enter", "y")
        # the restore deletes and writes files in its own order: wait for both
        await wait_until(lambda: not (project / "demo-notes.md").exists())
        await wait_until(lambda: (project / "README.md").read_text() == README)
        await wait_until(lambda: any("restore checkpoint 5 to undo" in n for n in notes_of(app)))


async def test_a_session_without_a_worktree_is_told_it_has_no_checkpoints(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(lambda: app.current is not None)
        await pilot.press(*"/checkpoints", "enter")
        await wait_until(lambda: any("No checkpoints" in n for n in notes_of(app)))
        assert not isinstance(app.screen, CheckpointsScreen)
