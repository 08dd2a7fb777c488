"""Snapshot pictures of a worktree session's changes screen at 80x24 and 160x48: the list
of changed files (an edit, a new file, a deletion, a binary) and the first one's diff,
unified in the narrow terminal and side by side in the wide one, with a comment noted on
its line. The session works on an existing branch, so no random name shows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import WorktreeRequest
from cockpit.engine.core import Engine
from cockpit.ui.screens.changes import ChangesScreen
from tests.snapshots.test_tui_snapshots import project_of, settle
from tests.support.git_repos import commit, git, make_repo
from tests.support.ui_helpers import fill_now, make_app, wait_until

Snap = Callable[..., bool]

OLD = "".join(f"line {n}: the {n}th thing the module does\n" for n in range(1, 31))


def changes_app(tmp_path: Path) -> Any:
    repo = make_repo(tmp_path / "repo", {"app.py": OLD, "gone.txt": "bye\n"})
    git(repo, "branch", "feature")
    home = tmp_path / "home"

    async def build(engine: Engine) -> None:
        await engine.create_session(
            "demo", repo, "Review", worktree=WorktreeRequest(branch="feature")
        )

    fill_now(home, build)
    (path,) = (home / "worktrees" / "repo").iterdir()
    edited = OLD.replace("line 5: the 5th", "line 5: the fifth").replace("line 20:", "line XX:")
    commit(path, {"app.py": edited, "notes.md": "# Notes\n\nWhat the session did.\n"}, "work")
    (path / "gone.txt").unlink()
    (path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    return make_app(tmp_path, project_of(tmp_path))


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_the_changes_screen(snap_compare: Snap, tmp_path: Path, size: tuple[int, int]) -> None:
    app = changes_app(tmp_path)

    async def opened(pilot: Any) -> None:
        await wait_until(lambda: app.current is not None)
        await pilot.press("f6")
        await wait_until(lambda: isinstance(app.screen, ChangesScreen) and app.screen.changes)
        await pilot.press("c", *"Say fifth as 5th, as elsewhere.", "enter")
        await wait_until(lambda: isinstance(app.screen, ChangesScreen) and app.screen.comments)
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=opened)


def turns_app(tmp_path: Path) -> Any:
    """A worktree session on `feature` whose first turn wrote the demo notes, with app.py
    edited by hand before its second turn."""
    repo = make_repo(tmp_path / "repo", {"app.py": OLD})
    git(repo, "branch", "feature")
    home = tmp_path / "home"

    async def build(engine: Engine) -> None:
        record = await engine.create_session(
            "demo", repo, "Review", worktree=WorktreeRequest(branch="feature")
        )
        engine.allow_automatically(record.id)
        await engine.prompt(record.id, "tools")
        (path,) = (home / "worktrees" / "repo").iterdir()
        (path / "app.py").write_text(OLD.replace("line 3: the 3rd", "line 3: the third"))
        await engine.prompt(record.id, "hello")

    fill_now(home, build)
    return make_app(tmp_path, project_of(tmp_path))


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
def test_one_turns_changes(snap_compare: Snap, tmp_path: Path, size: tuple[int, int]) -> None:
    """Turn 1's own change with a comment on its third line and the cursor on its fourth;
    the hand edit between the turns is not in it."""
    app = turns_app(tmp_path)

    async def opened(pilot: Any) -> None:
        await wait_until(lambda: app.current is not None)
        await pilot.press("f6")
        await wait_until(lambda: isinstance(app.screen, ChangesScreen) and app.screen.changes)
        await pilot.press("t", "j", "j", "j", "c", *"Who reads this line?", "enter", "j")
        await wait_until(lambda: isinstance(app.screen, ChangesScreen) and app.screen.comments)
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=opened)
