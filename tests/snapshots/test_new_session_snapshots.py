"""A picture of the new-session dialog completing its folder (issue 33, item 8) at 80x24:
`~/co` typed, the first folder that fits greyed after it, and the line under the field
listing the folders it may go on to, with how many more there are. HOME is a folder the
test fills, so every run lists the same folders."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cockpit.ui.folder_field import FolderCandidates
from cockpit.ui.screens.new_session import NewSessionScreen
from cockpit.ui.screens.questions import ConfirmScreen
from tests.snapshots.test_tui_snapshots import app_with, one_existing_session, settle
from tests.support.git_repos import git, make_repo
from tests.support.snapshot_folders import snapshot_folder
from tests.support.ui_helpers import burst, wait_until

Snap = Callable[..., bool]

FOLDERS = ("cobra", "cockpit", "cockroach", "code", "colours", "compose", "configs", "courses")


def test_the_folder_completion_at_80x24(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "user-home"
    for name in (*FOLDERS, "docs", ".config"):
        (home / name).mkdir(parents=True)
    (home / "coffee.txt").write_text("a file")
    monkeypatch.setenv("HOME", str(home))
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # the same agents missing everywhere
    app = app_with(tmp_path, one_existing_session)

    async def type_a_folder(pilot: Any) -> None:
        await settle(pilot)
        burst(app, "ctrl+n", "tab", *"~/co")
        await wait_until(
            lambda: (
                bool(app.screen.query(FolderCandidates))
                and app.screen.query_one(FolderCandidates).names == FOLDERS
            ),
            what="the folders listed",
        )
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=type_a_folder)


def only_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git on the PATH, and no agent but the bundled ones: the same agents missing
    everywhere."""
    (tmp_path / "bin").mkdir()
    git_command = shutil.which("git")
    assert git_command is not None
    (tmp_path / "bin" / "git").symlink_to(git_command)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))


def fresh(name: str) -> Path:
    """A folder for a repository the picture shows: the same path every run."""
    return snapshot_folder(name, made=False)


def test_the_worktree_choice_at_80x24(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder is a git repository with uncommitted changes and a second branch: under
    the folder, the box for a worktree of its own, its base (HEAD, on `main`), the box to
    work on an existing branch (disabled on HEAD) and the box to carry the changes; the
    whole dialog still fits 80x24."""
    repo = fresh("repo")
    make_repo(repo)
    git(repo, "branch", "feature")
    (repo / "README.md").write_text("changed\n")
    only_git(tmp_path, monkeypatch)
    app = app_with(tmp_path, one_existing_session)

    async def in_a_repository(pilot: Any) -> None:
        await settle(pilot)
        burst(app, "ctrl+n", "tab", "ctrl+u", *str(repo), "shift+tab")
        await settle(pilot)
        await wait_until(
            lambda: (
                isinstance(app.screen, NewSessionScreen)
                and app.screen.query_one("#carry-row").display
            ),
            what="the worktree rows",
        )
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=in_a_repository)


def test_a_session_on_an_existing_branch_at_80x24(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base stepped down to the branch `feature` and the box under it ticked: the
    worktree box now says it is on the branch (no "from"), the box names the branch, and
    the carry box stays; the whole dialog still fits 80x24."""
    repo = fresh("branch-repo")
    make_repo(repo)
    git(repo, "branch", "feature")
    (repo / "README.md").write_text("changed\n")
    only_git(tmp_path, monkeypatch)
    app = app_with(tmp_path, one_existing_session)

    async def on_the_branch(pilot: Any) -> None:
        await settle(pilot)
        burst(app, "ctrl+n", "tab", "ctrl+u", *str(repo), "shift+tab")
        await wait_until(
            lambda: (
                isinstance(app.screen, NewSessionScreen)
                and app.screen.query_one("#carry-row").display
            ),
            what="the worktree rows",
        )
        app.screen.query_one("#worktree-base").focus()
        await settle(pilot)
        burst(app, "alt+w", "down", "tab", "space")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=on_the_branch)


def test_the_setup_question_at_80x24(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worktree asked for in a repository whose `.cockpit.toml` has a setup command not
    approved yet: the command shown whole, and Not now holding the keyboard."""
    repo = fresh("setup-repo")
    make_repo(repo, {".cockpit.toml": 'setup = "npm ci && npm run build"\n'})
    only_git(tmp_path, monkeypatch)
    app = app_with(tmp_path, one_existing_session)

    async def asked(pilot: Any) -> None:
        await settle(pilot)
        burst(app, "ctrl+n", "tab", "ctrl+u", *str(repo), "shift+tab")
        await wait_until(
            lambda: (
                isinstance(app.screen, NewSessionScreen)
                and app.screen.query_one("#worktree-row").display
            ),
            what="the worktree row",
        )
        burst(app, "alt+w", "enter")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=asked)
