"""The checkpoints of a worktree session at 80x24: `/checkpoints` typed in the prompt lists
them (turn, start or end, files changed), the newest highlighted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.engine.core import Engine
from cockpit.ui.screens.checkpoints import CheckpointsScreen
from tests.support.checkpoint_repos import make_repository, make_worktree
from tests.support.ui_helpers import fill_now, make_app, repaints_done, wait_until

Snap = Callable[..., bool]


async def two_turns(engine: Engine, project: Path, worktree: dict[str, Any]) -> None:
    """A worktree session whose first turn wrote a file, and an edit by hand before the
    second."""
    record = await engine.create_session("demo", project, "Two turns in a worktree")
    await engine.store.update_session(record.id, info={"worktree": worktree})
    engine.allow_automatically(record.id)
    assert await engine.prompt(record.id, "tools") == "end_turn"
    (project / "README.md").write_text("edited by hand\n")
    assert await engine.prompt(record.id, "hello") == "end_turn"


def test_the_checkpoints_list(snap_compare: Snap, tmp_path: Path) -> None:
    project = tmp_path / "project"
    worktree = make_worktree(make_repository(tmp_path / "repo"), project)

    fill_now(tmp_path / "home", lambda engine: two_turns(engine, project, worktree))

    async def listed(pilot: Any) -> None:
        app = pilot.app
        await wait_until(lambda: app.current is not None)
        await pilot.press(*"/checkpoints", "enter")
        await wait_until(lambda: isinstance(app.screen, CheckpointsScreen))
        await repaints_done(app)
        await pilot.pause(0.1)

    app = make_app(tmp_path, project)
    assert snap_compare(app, terminal_size=(80, 24), run_before=listed)
