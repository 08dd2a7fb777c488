"""The changes screen of a worktree session, typed in bursts, in the engine's own process
and through the service: F6 opens it on the demo agent's change, comments gathered on
hunks go to the agent as one prompt, a commit from a message typed in the screen, a merge
confirmed into the user's checkout, the `!` that leaves a `!command` prompt in the
worktree, and a session in no worktree told why there is nothing to show."""

from __future__ import annotations

from pathlib import Path

from cockpit.api import read_worktree
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.screens.changes import ChangesScreen
from tests.support.git_repos import git, make_repo
from tests.support.ui_helpers import ready, send, wait_until
from tests.support.ui_service_helpers import Engines


def on_changes(app: CockpitApp) -> ChangesScreen | None:
    screen = app.screen
    return screen if isinstance(screen, ChangesScreen) and screen.changes else None


async def test_review_commit_and_merge_from_the_changes_screen(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "one\ntwo\nthree\n"})
    app = engines.app(repo)
    app.worktree = True
    async with app.run_test(size=(100, 30)) as pilot:
        session = await ready(app)
        worktree = read_worktree(app.sessions.records[session].info)
        assert worktree is not None
        path = Path(worktree.path)
        app.engine.allow_automatically(session)
        await send(app, pilot, "tools")
        await wait_until(lambda: (path / "demo-notes.md").exists(), what="the agent's edit")
        (path / "README.md").write_text("one\nTWO\nthree\n")
        await wait_until(lambda: app.engine.status(session) == "ready", what="the turn's end")
        await pilot.press("f6")
        await wait_until(lambda: on_changes(app) is not None, what="the changes")
        screen = on_changes(app)
        assert screen is not None
        assert [c.path for c in screen.changes] == ["README.md", "demo-notes.md"]
        await pilot.press("c", *"Why capitals?", "enter", "down", "c", *"Shorter.", "enter")
        await wait_until(lambda: len(screen.comments) == 2, what="two comments")
        await pilot.press("s")
        await wait_until(lambda: app.screen is not screen, what="the screen closing")

        async def reviewed() -> bool:
            users = [r for r in await app.engine.rows(session) if r.kind == "user"]
            return len(users) == 2 and users[-1].text.startswith("review:\n- README.md:2: ")

        await wait_until(reviewed, what="the review prompt")
        prompt = [r for r in await app.engine.rows(session) if r.kind == "user"][-1].text
        assert prompt == (
            "review:\n- README.md:2: Why capitals?\n  > TWO\n- demo-notes.md:1-"
            + prompt.split("demo-notes.md:1-", 1)[1]
        )
        assert prompt.count("\n- ") == 2
        await wait_until(lambda: app.engine.status(session) == "ready", what="the review turn")
        await pilot.press("f6")
        await wait_until(lambda: on_changes(app) is not None, what="the changes again")
        await pilot.press("C", *"Notes and capitals", "enter")
        await wait_until(
            lambda: git(path, "log", "-1", "--format=%s") == "Notes and capitals", what="commit"
        )
        await pilot.press("m")
        await wait_until(lambda: app.screen.__class__.__name__ == "ConfirmScreen", what="plan")
        await pilot.press("y")
        await wait_until(lambda: (repo / "demo-notes.md").exists(), what="the merge")
        assert git(repo, "rev-parse", "HEAD") == git(path, "rev-parse", "HEAD")
        await pilot.press("!")
        composer = app.query_one(Composer)
        await wait_until(lambda: composer.text == "!", what="a !command prompt")


async def test_a_session_in_no_worktree_has_no_changes_screen(
    engines: Engines, tmp_path: Path
) -> None:
    app = engines.app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app)
        await pilot.press("f6")
        await pilot.pause()
        assert not isinstance(app.screen, ChangesScreen)
        assert any("no worktree of its own" in str(n.message) for n in app._notifications)
