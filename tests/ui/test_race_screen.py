"""A race from the screen (issue 34), against both engines, in a real repository with real
demo agents: `/race demo,demo tools` and Enter typed in one burst ask to approve the
repository's test command, then `y` starts two contenders and opens the comparison, which
fills in as they work (the test passing in each worktree); `k` and `y` keep one (merged into the
checkout), and the other is archived. `/race` alone on a plain session says how to start
one."""

from __future__ import annotations

from pathlib import Path

from cockpit.records import read_worktree_archive
from cockpit.ui.screens.questions import ConfirmScreen
from cockpit.ui.screens.race import RaceScreen
from tests.support.git_repos import git, make_repo
from tests.support.ui_helpers import burst, ready, settled, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (100, 30)


async def test_a_race_is_started_compared_and_one_kept(engines: Engines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".cockpit.toml": 'test = "test -f demo-notes.md"\n'})
    policy = engines.home / "config" / "policy.toml"
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text('[permissions]\nread = "allow"\nedit = "allow"\nexecute = "allow"\n')
    app = engines.app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        burst(app, *"/race demo,demo tools", "enter")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), what="the test question")
        assert "test: $ test -f demo-notes.md" in app.screen.details  # type: ignore[attr-defined]
        burst(app, "y")
        await wait_until(lambda: isinstance(app.screen, RaceScreen), what="the comparison")
        screen = app.screen
        assert isinstance(screen, RaceScreen)
        await wait_until(
            lambda: (
                len(screen.contenders) == 2
                and all(c.test == "passed" and c.files == 1 for c in screen.contenders)
            ),
            timeout=120,
            what="both contenders done",
        )
        kept, other = (c.session for c in screen.contenders)
        burst(app, "k")
        await wait_until(lambda: not isinstance(app.screen, RaceScreen), what="asked")
        burst(app, "y")
        await wait_until(lambda: (repo / "demo-notes.md").exists(), timeout=30, what="merged")
        await wait_until(
            lambda: read_worktree_archive(app.records[other].info) is not None,
            timeout=30,
            what="the other archived",
        )
        assert git(repo, "status", "--porcelain") == ""
        assert read_worktree_archive(app.records[kept].info) is None
        await settled(pilot)


async def test_race_alone_on_a_plain_session_says_how(engines: Engines, tmp_path: Path) -> None:
    app = engines.app(make_repo(tmp_path / "repo"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        burst(app, *"/race", "enter")
        await settled(pilot)
        shown = " ".join(str(n.message) for n in app._notifications)
        assert "This session is in no race" in shown
        assert not isinstance(app.screen, RaceScreen)
