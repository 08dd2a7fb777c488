"""The new-session dialog's worktree choice (issue 34): in a git repository a box asks
for a worktree of its own, from HEAD or a branch, carrying the uncommitted changes or
not; outside one the dialog is as before. The choice is remembered per repository. Keys
come in bursts, against both engines, in real repositories."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Checkbox, Select

from cockpit.records import read_worktree
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.new_session import NewSessionScreen
from tests.support.git_repos import git, make_repo
from tests.support.ui_helpers import burst, ready, settled, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (80, 24)


async def dialog_with_row(app: CockpitApp, shown: bool = True) -> NewSessionScreen:
    """Ctrl+N, and the dialog once it knows whether the folder is in a repository."""
    burst(app, "ctrl+n")
    await wait_until(  # pushed, then composed: its rows come a moment later
        lambda: (
            isinstance(app.screen, NewSessionScreen) and bool(app.screen.query("#worktree-row"))
        ),
        what="the dialog",
    )
    screen = app.screen
    assert isinstance(screen, NewSessionScreen)
    row = screen.query_one("#worktree-row")
    if shown:
        await wait_until(lambda: row.display, what="the worktree row")
    return screen


async def at_the_base(app: CockpitApp, screen: NewSessionScreen, pilot: object) -> None:
    """Tab from the agents to the base of the worktree (the folder may complete first)."""
    base = screen.query_one("#worktree-base")
    for _ in range(5):
        burst(app, "tab")
        await settled(pilot)
        if base.has_focus:
            return
    raise AssertionError("Tab never reached the base")


def notices(app: CockpitApp) -> list[str]:
    return [str(notification.message) for notification in app._notifications]


async def created(app: CockpitApp, first: str) -> str:
    await wait_until(lambda: len(app.records) == 2 and app.current not in (None, first))
    return app.current or ""


async def test_a_ticked_box_makes_a_worktree_session(engines: Engines, tmp_path: Path) -> None:
    """Alt+W ticks the box, Enter creates: the session has a worktree of its own, on a new
    branch from HEAD, and works in it. The choice is kept for the repository."""
    repo = make_repo(tmp_path / "repo")
    app = engines.app(repo)
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        screen = await dialog_with_row(app)
        assert not screen.query_one("#carry-row").display  # a clean checkout
        burst(app, "alt+w", "enter")
        session = await created(app, first)
        record = app.records[session]
        worktree = read_worktree(record.info)
        assert worktree is not None and worktree.base == "HEAD"
        assert Path(worktree.repo) == repo
        assert record.cwd == worktree.path != str(repo)
        await ready(app)
        await settled(pilot)
    saved = json.loads((engines.home / "config" / "settings.json").read_text())
    assert saved["worktrees"] == {str(repo): True}


async def test_the_last_choice_is_preselected_and_space_unticks_it(
    engines: Engines, tmp_path: Path
) -> None:
    """A repository where a worktree was asked for last time: the box starts ticked; Tab
    to it, Space unticks it, Enter creates a plain session in the checkout."""
    repo = make_repo(tmp_path / "repo")
    settings = engines.home / "config" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"theme": "x", "worktrees": {str(repo): True}}))
    app = engines.app(repo)
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        screen = await dialog_with_row(app)
        box = screen.query_one("#worktree", Checkbox)
        assert box.value
        for _ in range(4):  # the folder, where Tab may complete first, then the box
            burst(app, "tab")
            await settled(pilot)
            if box.has_focus:
                break
        assert box.has_focus
        burst(app, "space", "enter")
        session = await created(app, first)
        record = app.records[session]
        assert read_worktree(record.info) is None and record.cwd == str(repo)
        await ready(app)
        await settled(pilot)
    saved = json.loads(settings.read_text())
    assert saved["theme"] == "x" and saved["worktrees"] == {str(repo): False}


async def test_uncommitted_changes_may_be_carried(engines: Engines, tmp_path: Path) -> None:
    """A checkout with changes: a second box carries them into the worktree."""
    repo = make_repo(tmp_path / "repo")
    (repo / "README.md").write_text("changed\n")
    app = engines.app(repo)
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        screen = await dialog_with_row(app)
        carry = screen.query_one("#carry-row")
        await wait_until(lambda: carry.display, what="the carry row")
        burst(app, "alt+w")
        screen.query_one("#carry", Checkbox).value = True
        burst(app, "enter")
        session = await created(app, first)
        worktree = read_worktree(app.records[session].info)
        assert worktree is not None
        assert (Path(worktree.path) / "README.md").read_text() == "changed\n"
        await ready(app)
        await settled(pilot)


async def test_a_session_on_an_existing_branch_from_one_burst(
    engines: Engines, tmp_path: Path
) -> None:
    """On the base, Alt+W, Down (the branch `feature`), Tab (the box that shows for a
    branch), Space and Enter in one burst: the session works on `feature` itself, in a
    worktree of its own, and no new branch is made."""
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "feature")
    app = engines.app(repo)
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        screen = await dialog_with_row(app)
        assert screen.query_one("#on-branch", Checkbox).disabled  # HEAD: a new branch only
        await at_the_base(app, screen, pilot)
        burst(app, "alt+w", "down", "tab", "space", "enter")
        session = await created(app, first)
        record = app.records[session]
        worktree = read_worktree(record.info)
        assert worktree is not None and worktree.branch == "feature"
        assert record.cwd == worktree.path != str(repo)
        assert git(Path(record.cwd), "branch", "--show-current") == "feature"
        assert git(repo, "branch", "--format=%(refname:short)").split() == ["feature", "main"]
        await ready(app)
        await settled(pilot)


async def test_the_checkouts_own_branch_is_refused_and_the_dialog_reopens_as_chosen(
    engines: Engines, tmp_path: Path
) -> None:
    """Working on `main`, the branch the user's checkout is on: the engine's refusal is
    one sentence saying what to do, no session and no worktree are made, and the dialog
    opens again with the worktree choices as they were (fix one, press Enter)."""
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "feature")
    app = engines.app(repo)
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        screen = await dialog_with_row(app)
        await at_the_base(app, screen, pilot)
        burst(app, "alt+w", "down", "down", "tab", "space", "enter")
        await wait_until(lambda: bool(notices(app)), what="the refusal")
        assert notices(app) == [
            f"The branch 'main' is already checked out in your checkout at {repo}, and git"
            " checks a branch out in one place only: switch that one to another branch, or"
            " start a new branch from 'main' instead."
        ]
        await wait_until(
            lambda: isinstance(app.screen, NewSessionScreen) and app.screen is not screen,
            what="the dialog again",
        )
        again = app.screen
        assert isinstance(again, NewSessionScreen)
        await wait_until(lambda: again.query_one("#worktree", Checkbox).value, what="the choices")
        assert again.query_one("#worktree", Checkbox).value
        assert again.query_one("#worktree-base", Select).value == "main"
        assert again.query_one("#on-branch", Checkbox).value
        assert list(app.records) == [first]
        assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
        assert again.query_one("#on-branch").has_focus  # what to change
        burst(app, "space", "enter")  # untick it: a new branch from main
        session = await created(app, first)
        worktree = read_worktree(app.records[session].info)
        assert worktree is not None and worktree.base == "main"
        assert worktree.branch.startswith("cockpit/")
        await ready(app)
        await settled(pilot)


async def test_outside_a_repository_there_is_no_row(engines: Engines) -> None:
    """Not in a git repository: no worktree row, and Enter makes a plain session."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        screen = await dialog_with_row(app, shown=False)
        await settled(pilot)
        assert not screen.query_one("#worktree-row").display
        assert screen.repository is None
        burst(app, "alt+w", "enter")
        session = await created(app, first)
        assert read_worktree(app.records[session].info) is None
        await ready(app)
        await settled(pilot)
