"""Reviewing a worktree session turn by turn and line by line, typed in bursts, in the
engine's own process and through the service: `t` shows one turn's changes, `j` picks a
changed line, comments made in either view survive the screen closing and a refresh
while one is typed, and `s` sends them all as ONE prompt naming each file:line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import OptionList

from cockpit.agentkit.demo.tools import NOTES_FILE, NOTES_TEXT
from cockpit.api import read_worktree
from cockpit.text.review import short_quote
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.changes import ChangesScreen
from tests.support.git_repos import make_repo
from tests.support.ui_helpers import burst, ready, send, wait_until
from tests.support.ui_service_helpers import Engines


def on_changes(app: CockpitApp) -> ChangesScreen | None:
    screen = app.screen
    return screen if isinstance(screen, ChangesScreen) and screen.changes else None


def worktree_app(engines: Engines, tmp_path: Path) -> CockpitApp:
    """An app on a new repository whose sessions each work in a worktree."""
    app = engines.app(make_repo(tmp_path / "repo", {"README.md": "one\ntwo\nthree\n"}))
    app.worktree = True
    return app


async def two_turns(app: CockpitApp, pilot: Any) -> tuple[str, Path]:
    """A worktree session whose first turn wrote the notes; README.md edited by hand
    between it and a second turn that changed nothing."""
    session = await ready(app)
    worktree = read_worktree(app.sessions.records[session].info)
    assert worktree is not None
    path = Path(worktree.path)
    app.engine.allow_automatically(session)
    await send(app, pilot, "tools")
    await wait_until(lambda: app.engine.status(session) == "ready", what="turn 1")

    async def turn_kept() -> bool:  # its end's checkpoint is made once the turn is over
        return len(await app.engine.checkpoints(session)) == 2

    await wait_until(turn_kept, what="turn 1's checkpoints")
    (path / "README.md").write_text("one\nTWO\nthree\nfour\n")
    await send(app, pilot, "hello")

    async def two_users() -> bool:
        rows = await app.engine.rows(session)
        return sum(r.kind == "user" for r in rows) == 2 and app.engine.status(session) == "ready"

    await wait_until(two_users, what="turn 2")
    return session, path


async def users(app: CockpitApp, session: str) -> list[str]:
    return [r.text for r in await app.engine.rows(session) if r.kind == "user"]


async def test_comments_per_turn_and_per_line_go_as_one_prompt(
    engines: Engines, tmp_path: Path
) -> None:
    app = worktree_app(engines, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        session, _ = await two_turns(app, pilot)
        await pilot.press("f6")
        await wait_until(lambda: on_changes(app) is not None, what="the changes")
        screen = on_changes(app)
        assert screen is not None
        assert screen.turns == [1, 2]
        await wait_until(lambda: len(screen.views) == 3, what="each turn's changes read")
        assert [c.path for c in screen.changes] == ["README.md", NOTES_FILE]

        # Turn 1 alone, then a comment on its hunk, typed in the same burst.
        await pilot.press("t", "c", *"Say who reads these.", "enter")
        await wait_until(lambda: len(screen.comments) == 1, what="the turn's comment")
        assert screen.turn == 1 and [c.path for c in screen.changes] == [NOTES_FILE]
        # Turn 2 shows the hand edit as made between turns; back to every change, then
        # a comment on the removed line and one on the line that replaced it.
        await pilot.press("t")
        await wait_until(lambda: screen.turn == 2, what="turn 2")
        assert [c.path for c in screen.changes] == ["README.md"]
        assert "(between turns)" in str(
            screen.query_one("#files", OptionList).get_option_at_index(0).prompt
        )
        await pilot.press("t", "j", "c", *"Why drop it?", "enter")
        await wait_until(lambda: len(screen.comments) == 2, what="the removed line's comment")
        await pilot.press("j", "c", *"Capitals?", "enter")
        await wait_until(lambda: len(screen.comments) == 3, what="the added line's comment")
        assert screen.turn is None

        # Closing the screen keeps them; the screen opened again still has them.
        await pilot.press("escape")
        await wait_until(lambda: not isinstance(app.screen, ChangesScreen), what="closed")
        assert any("3 review comment(s) kept" in str(n.message) for n in app._notifications)
        before = await users(app, session)
        await pilot.press("f6", "s")
        await wait_until(lambda: len(app.reviews[session]) == 0, what="the comments sent")

        async def reviewed() -> bool:
            return len(await users(app, session)) == len(before) + 1

        await wait_until(reviewed, what="the review prompt")
        lines = NOTES_TEXT.splitlines()
        assert (await users(app, session))[-1] == (
            f"review:\n- {NOTES_FILE}:1-{len(lines)} (turn 1): Say who reads these.\n"
            f"  > {short_quote(lines[0])}\n"
            "- README.md:2 (removed line): Why drop it?\n  > two\n"
            "- README.md:2: Capitals?\n  > TWO"
        )
        await wait_until(lambda: app.engine.status(session) == "ready", what="the review turn")
        assert len(await users(app, session)) == len(before) + 1


async def test_a_refresh_while_a_comment_is_typed_loses_nothing(
    engines: Engines, tmp_path: Path
) -> None:
    app = worktree_app(engines, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        session, path = await two_turns(app, pilot)
        await pilot.press("f6")
        await wait_until(lambda: on_changes(app) is not None, what="the changes")
        screen = on_changes(app)
        assert screen is not None
        await pilot.press("down", "r")
        await pilot.pause()
        await wait_until(lambda: screen.chosen is not None, what="the reread")
        assert screen.chosen is not None and screen.chosen.path == NOTES_FILE
        # A comment half typed on README.md's added line while the changes are read again
        # (a file the agent writes meanwhile too) lands where it was begun, whole.
        # A reread that lands after a key moved the highlight, before the move was
        # answered, stays on the file the key chose.
        screen.query_one("#files", OptionList).highlighted = 0
        screen.fill()
        assert screen.chosen is not None and screen.chosen.path == "README.md"
        await pilot.press("j", "j", "c", *"Keep ")
        (path / "later.txt").write_text("written meanwhile\n")
        screen.load()
        await wait_until(lambda: "later.txt" in [c.path for c in screen.changes], what="reread")
        await pilot.press(*"this.", "enter")
        await wait_until(lambda: len(screen.comments) == 1, what="the comment")
        (comment,) = screen.comments
        assert (comment.path, comment.first, comment.text) == ("README.md", 2, "Keep this.")
        assert not comment.removed and comment.turn is None
        assert screen.chosen is not None and screen.chosen.path == "README.md"
        assert "✎1" in str(screen.query_one("#files", OptionList).get_option_at_index(0).prompt)
        await pilot.press("s")
        await wait_until(lambda: app.screen is not screen, what="sent")

        async def reviewed() -> bool:
            said = await users(app, session)
            return said[-1] == "review:\n- README.md:2: Keep this.\n  > TWO"

        await wait_until(reviewed, what="the review prompt")


async def test_a_t_typed_as_the_changes_open_shows_the_first_turn(
    engines: Engines, tmp_path: Path
) -> None:
    """F6 then t at once: the `t` waits for the turns to be read instead of finding none."""
    app = worktree_app(engines, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await two_turns(app, pilot)
        burst(app, "f6", "t", "c", *"Who reads it?", "enter")
        await wait_until(lambda: on_changes(app) is not None, what="the changes")
        screen = on_changes(app)
        assert screen is not None
        await wait_until(lambda: len(screen.comments) == 1, what="the comment")
        assert screen.turn == 1 and [c.path for c in screen.changes] == [NOTES_FILE]
        assert screen.comments[0].turn == 1 and screen.comments[0].path == NOTES_FILE
        assert not any("No turn of this session" in str(n.message) for n in app._notifications)
