"""A repository's setup command in the new-session dialog (issue 34): a worktree session in
a repository whose `.cockpit.toml` asks for a setup not approved yet shows the command
whole and asks; `y` approves it and it runs as a `!command` card in the new worktree, `n`
(or Enter) makes the session without it. Against both engines, in real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.records import read_worktree
from cockpit.ui import switching
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.questions import ConfirmScreen
from tests.support.git_repos import make_repo
from tests.support.ui_helpers import burst, ready, settled, wait_until
from tests.support.ui_service_helpers import Engines
from tests.ui.test_new_session_worktree import created, dialog_with_row

SIZE = (80, 24)
SETUP = "echo ready > setup.txt"


def repository(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {".cockpit.toml": f'setup = "{SETUP}"\n'})


async def asked(app: CockpitApp) -> ConfirmScreen:
    await wait_until(lambda: isinstance(app.screen, ConfirmScreen), what="the setup question")
    screen = app.screen
    assert isinstance(screen, ConfirmScreen)
    return screen


async def test_y_approves_the_setup_and_it_runs_in_the_worktree(
    engines: Engines, tmp_path: Path
) -> None:
    repo = repository(tmp_path)
    app = engines.app(repo)
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        await dialog_with_row(app)
        burst(app, "alt+w", "enter")
        question = await asked(app)
        assert SETUP in " ".join(question.details)
        burst(app, "y")
        session = await created(app, first)
        made = read_worktree(app.records[session].info)
        assert made is not None
        await wait_until(lambda: (Path(made.path) / "setup.txt").exists(), what="the setup")
        assert (await app.engine.project(str(repo))).setup_approved
        await settled(pilot)


async def test_n_makes_the_session_without_running_it(engines: Engines, tmp_path: Path) -> None:
    repo = repository(tmp_path)
    app = engines.app(repo)
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        await dialog_with_row(app)
        burst(app, "alt+w", "enter")
        await asked(app)
        burst(app, "enter")  # the button with the keyboard: Not now
        session = await created(app, first)
        made = read_worktree(app.records[session].info)
        assert made is not None
        await settled(pilot)
        rows = await app.engine.rows(session)
        assert any("was not run" in row.text for row in rows if row.kind == "notice")
        assert not (Path(made.path) / "setup.txt").exists()
        assert not (await app.engine.project(str(repo))).setup_approved


async def test_a_slow_worktree_says_it_is_on_its_way(
    engines: Engines, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worktree that takes longer than SLOW_WORKTREE to make (a big repository) is told;
    a quick one is not (the refusal tests count every notice)."""
    monkeypatch.setattr(switching, "SLOW_WORKTREE", 0.0)
    repo = make_repo(tmp_path / "repo")
    app = engines.app(repo)
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        await dialog_with_row(app)
        burst(app, "alt+w", "enter")
        await created(app, first)
        await settled(pilot)
        shown = [str(n.message) for n in app._notifications]
        assert "Making the worktree: git is checking out its files…" in shown
