"""The rail shows a worktree session's branch, changed files and ahead/behind its base,
read in the background (`cockpit --worktree` opens the session), in the engine's own
process and through the service; keys typed meanwhile are not held up."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cockpit.api import WorktreeStatus, read_worktree
from cockpit.ui.app import CockpitApp
from cockpit.ui.rail import SessionRail
from tests.support.git_repos import make_repo
from tests.support.ui_helpers import ready, send, wait_until
from tests.support.ui_service_helpers import Engines


def rail_text(app: CockpitApp) -> str:
    rail = app.query_one(SessionRail)
    return "\n".join(str(rail.get_option_at_index(i).prompt) for i in range(rail.option_count))


async def test_the_rail_shows_the_worktrees_branch_and_changes(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    app = engines.app(repo)
    app.worktree = True
    async with app.run_test(size=(120, 30)) as pilot:
        session = await ready(app)
        record = app.sessions.records[session]
        worktree = read_worktree(record.info)
        assert worktree is not None and record.cwd == worktree.path
        await wait_until(lambda: "demo · +0 ↑0 ↓0 cockp" in rail_text(app), what="status")
        assert app.worktrees.statuses[session].branch == worktree.branch
        app.engine.allow_automatically(session)
        await send(app, pilot, "tools")
        await pilot.press(*"typed meanwhile")
        await wait_until(lambda: "+1 ↑0 ↓0" in rail_text(app), what="the turn's change")
        assert (Path(worktree.path) / "demo-notes.md").exists()
        assert not (repo / "demo-notes.md").exists()


def slowed(app: CockpitApp, seconds: float) -> list[str]:
    """Make each status read take `seconds` more (a big repository); the sessions read,
    in order."""
    engine = app.engine
    read = engine.worktree_status
    asked: list[str] = []

    async def slow(session_id: str) -> WorktreeStatus | None:
        asked.append(session_id)
        await asyncio.sleep(seconds)
        return await read(session_id)

    engine.worktree_status = slow  # type: ignore[method-assign]
    return asked


async def test_slow_reads_asked_again_and_again_still_show(
    engines: Engines, tmp_path: Path
) -> None:
    """A big repository: one read takes longer than the rounds are asked for. A round
    under way goes on (each new one cut off the last, and the rail showed nothing)."""
    repo = make_repo(tmp_path / "repo")
    app = engines.app(repo)
    app.worktree = True
    async with app.run_test(size=(120, 30)):
        session = await ready(app)
        slowed(app, 0.3)
        app.worktrees.statuses.clear()
        for _ in range(20):  # asked every 0.1 s, each read takes 0.3 s
            app.worktrees.refresh()
            await asyncio.sleep(0.1)
        assert session in app.worktrees.statuses
        await wait_until(lambda: "demo · +0 ↑0 ↓0 cockp" in rail_text(app), what="status")


async def test_a_costly_round_spaces_the_periodic_ones_but_a_turns_end_reads_at_once(
    engines: Engines, tmp_path: Path
) -> None:
    """After a round of every worktree, the periodic read waits IDLE_SHARE times its
    length (git off the keys' CPU on a big repository); a turn's end reads its session."""
    repo = make_repo(tmp_path / "repo")
    app = engines.app(repo)
    app.worktree = True
    async with app.run_test(size=(120, 30)):
        session = await ready(app)
        asked = slowed(app, 0.3)
        await wait_until(lambda: not app.worktrees.reading, what="no round under way")
        app.worktrees.refresh()
        await wait_until(lambda: asked == [session] and not app.worktrees.reading, what="read")
        app.worktrees.tick()  # 0.3 s of git: the next periodic round waits 2.7 s
        await asyncio.sleep(0.5)
        assert asked == [session]
        app.worktrees.refresh(session)  # as a turn's end asks
        await wait_until(lambda: asked == [session, session], what="the turn's session read")


async def test_a_tick_during_a_round_queues_no_other(engines: Engines, tmp_path: Path) -> None:
    """The periodic read that comes while a round runs is that round: the first round
    at start, longer than the interval on a big repository, ran twice."""
    repo = make_repo(tmp_path / "repo")
    app = engines.app(repo)
    app.worktree = True
    async with app.run_test(size=(120, 30)):
        session = await ready(app)
        asked = slowed(app, 0.5)
        await wait_until(lambda: not app.worktrees.reading, what="no round under way")
        app.worktrees._last_end = app.worktrees._last_took = 0.0  # as at start: none read yet
        app.worktrees.refresh()
        await wait_until(lambda: app.worktrees.reading, what="a round")
        app.worktrees.tick()
        await wait_until(lambda: not app.worktrees.reading, what="the round's end")
        await asyncio.sleep(0.3)
        assert asked == [session]
