"""Archive and clean up worktrees from the screen, in the engine's own process and
through the service, on a real git repository: the palette's archive asks first and the
rail then says archived; the cleanup screen (/worktrees) chooses with Space, and its
preview names the unmerged work before anything goes."""

from __future__ import annotations

from pathlib import Path

from cockpit.ui.screens.cleanup import CleanupScreen
from cockpit.ui.screens.questions import ConfirmScreen
from tests.support.git_repos import make_repo
from tests.support.ui_helpers import ready, send, wait_until
from tests.support.ui_service_helpers import Engines
from tests.ui.test_worktree_rail import rail_text


async def test_archive_then_clean_up_from_the_screen(engines: Engines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    app = engines.app(repo)
    app.worktree = True
    async with app.run_test(size=(120, 30)) as pilot:
        session = await ready(app)
        path = Path(app.sessions.records[session].cwd)
        (path / "scratch.txt").write_text("not committed\n")
        app.action_archive_worktree()
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await wait_until(lambda: not path.exists(), what="the worktree to go")
        await wait_until(lambda: "demo · archived cock" in rail_text(app), what="the rail")
        await send(app, pilot, "/worktrees")
        await wait_until(lambda: isinstance(app.screen, CleanupScreen), what="the cleanup")
        await pilot.press("space", "d")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), what="the preview")
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        assert "Unmerged work will be lost for good" in screen.question
        assert "uncommitted work kept by its archive" in screen.question
        await pilot.press("n")
        assert (await app.engine.cleanup_plan())[0].archived  # kept: the user said no
        await send(app, pilot, "/worktrees")
        await wait_until(lambda: isinstance(app.screen, CleanupScreen), what="the cleanup")
        await pilot.press("space", "enter")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), what="the preview")
        await pilot.press("y")

        async def cleaned() -> bool:
            return await app.engine.cleanup_plan() == []

        await wait_until(cleaned, what="the cleanup to remove it")
        branches = await app.engine.repository(str(repo))
        assert branches is not None and branches.branches == ("main",)
