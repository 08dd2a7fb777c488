"""Trust in daily use, driven as a user types: keys sent together, a prompt typed before the
agent is ready, a session left while it streams, a draft per session, a quit that asks, Ctrl+C
as Claude Code users expect it, exports that never replace a file unasked, the session the
user was on reopened."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from textual.widgets._toast import Toast
from textual.widgets.text_area import Selection

from cockpit.api import Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.screens.inbox import InboxScreen
from cockpit.ui.screens.questions import ConfirmScreen
from cockpit.ui.transcript import TranscriptView
from tests.support.ui_helpers import (
    add_session,
    fill,
    focused_composer,
    make_app,
    ready,
    send,
    settled,
    wait_until,
)

SIZE = (100, 30)


def slow_starting_agent(home: Path) -> None:
    """An agent entry whose start takes a second, as Claude Code's does."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "agents.toml").write_text(
        '[agents.slowstart]\ncommand = ["{python}", "{agents}/demo_agent.py", "--start-delay", "1"]\n'
    )


def shown(app: CockpitApp) -> list[tuple[str, str]]:
    return [(b.kind, b.text) for b in app.query_one(TranscriptView).model]


async def six_sessions(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()

    async def build(engine: Any) -> None:
        for number in range(6):
            await add_session(engine, project, f"session {number}", [("hi", f"reply {number}")])

    await fill(tmp_path / "home", build)
    return project


# -- keys sent together ----------------------------------------------------------------------


async def test_ctrl_down_twice_at_once_with_six_sessions_keeps_the_app_and_its_reader(
    tmp_path: Path,
) -> None:
    """Sent together (as tmux does, as a held key does), two Ctrl+Down cancelled a page read
    inside its transaction and the next read killed the app."""
    project = await six_sessions(tmp_path)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        order = [r.id for r in app.sessions.ordered()]
        start = order.index(app.current or "")
        for presses in (2, 2, 5, 12):
            before = order.index(app.current or "")
            await pilot.press(*["ctrl+down"] * presses)
            wanted = order[(before + presses) % len(order)]
            await wait_until(lambda wanted=wanted: app.current == wanted)  # type: ignore[misc]
            await wait_until(
                lambda wanted=wanted: app.query_one(TranscriptView).session == wanted  # type: ignore[misc]
            )
            rows = await app.engine.rows(wanted)
            await wait_until(lambda rows=rows: shown(app) == [(r.kind, r.text) for r in rows])  # type: ignore[misc]
        assert app.is_running
        assert order.index(app.current or "") == (start + 21) % len(order)


async def test_a_new_session_right_after_a_long_reply(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        await send(app, pilot, "table")
        await wait_until(lambda: app.engine.status(first) == Status.READY, 30)
        composer = app.query_one(Composer)
        composer.focus()
        await pilot.press(*"/new demo", "enter", *"hello", "enter")
        await wait_until(lambda: app.current not in (None, first))
        second = app.current or ""
        await wait_until(
            lambda: (
                [k for k, _ in shown(app)] == ["user", "agent"]
                and app.engine.status(second) == Status.READY
            ),
            30,
        )
        assert app.is_running


# -- a prompt typed before the agent is ready ------------------------------------------------


async def test_a_prompt_typed_before_the_agent_is_ready_is_sent_once_it_is(tmp_path: Path) -> None:
    slow_starting_agent(tmp_path / "home")
    app = make_app(tmp_path, agent="slowstart")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        session = app.current or ""
        assert app.engine.status(session) in (Status.CLOSED, Status.STARTING)
        await pilot.press(*"hello", "enter")
        await wait_until(lambda: [k for k, _ in shown(app)] == ["user", "agent"], 30)
        await wait_until(lambda: app.engine.status(session) == Status.READY, 30)
        rows = await app.engine.rows(session)
        assert [r.kind for r in rows] == ["user", "agent"]
        await wait_until(lambda: shown(app) == [(r.kind, r.text) for r in rows])


# -- unread ------------------------------------------------------------------------------------


async def test_a_turn_that_ends_after_the_user_left_is_unread_in_rail_inbox_and_title(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        first = await ready(app)
        other = await app.engine.create_session("demo", app.folder, title="elsewhere")
        await app.sessions.reload()
        await send(app, pilot, "slow")
        await wait_until(lambda: any(k == "agent" for k, _ in shown(app)))
        await pilot.press("ctrl+down")  # away, while the reply streams
        await wait_until(lambda: app.current == other.id)
        app.app_focus = False  # and to another window
        await wait_until(lambda: app.engine.status(first) == Status.READY, 60)
        await pilot.pause()
        assert any("finished a turn" in s for s in app.sent_sequences)  # a notification
        app.app_focus = True
        assert app.overview.entry(app.records[first]).state == "unread"
        assert app.query_one("#rail").border_title == "Sessions ◆1"
        assert any("Cockpit (1 unread)" in s for s in app.sent_sequences)
        await pilot.press("ctrl+o")
        await wait_until(lambda: isinstance(app.screen, InboxScreen))
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        assert [(i.session, i.request) for i in inbox.items] == [(first, None)]
        await pilot.press("enter")  # open it: read
        await wait_until(lambda: app.current == first)
        await pilot.press("ctrl+down")
        await wait_until(lambda: app.current == other.id)
        await pilot.pause()
        assert app.overview.entry(app.records[first]).state == "idle"
        assert app.query_one("#rail").border_title == "Sessions"


# -- drafts ------------------------------------------------------------------------------------


async def test_each_session_keeps_its_own_draft_across_switches_and_restarts(
    tmp_path: Path,
) -> None:
    project = await six_sessions(tmp_path)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE) as pilot:
        first, composer = await focused_composer(app, ready_first=False)
        await pilot.press(*"for the first", "ctrl+down", *"for the second")
        await wait_until(lambda: app.current != first)
        second = app.current or ""
        assert composer.text == "for the second"
        await pilot.press("ctrl+up")
        await wait_until(lambda: app.current == first)
        assert composer.text == "for the first"
        await pilot.press("enter")  # sent to the first, and only there
        await wait_until(lambda: any(t == "for the first" for _, t in shown(app)))
        assert composer.text == ""
        await pilot.press("ctrl+down")
        await wait_until(lambda: app.current == second)
        assert composer.text == "for the second"
        await wait_until(lambda: app.engine.status(first) == Status.READY, 30)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        assert app.current == second  # the session the user was on
        await pilot.pause()
        assert app.query_one(Composer).text == "for the second"
        rows = await app.engine.rows(second)
        assert all(r.text != "for the second" for r in rows)  # a draft, never sent
        assert any(r.text == "for the first" for r in await app.engine.rows(first))


async def test_a_session_with_the_same_draft_gets_no_undo_of_the_one_before(
    tmp_path: Path,
) -> None:
    """Switching to a session whose draft equals what the composer holds keeps the
    document, but not the other session's undo history or cursor."""
    project = await six_sessions(tmp_path)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE) as pilot:
        first, composer = await focused_composer(app, ready_first=False)
        await pilot.press(*"same", "ctrl+down")
        await wait_until(lambda: app.current != first)
        await pilot.press(*"same", "home", "ctrl+up")  # the same draft, the cursor first
        await wait_until(lambda: app.current == first)
        assert composer.text == "same"
        assert composer.selection == Selection.cursor(composer.document.end)
        await pilot.press("ctrl+z")  # nothing of the other session's typing to undo
        assert composer.text == "same"


# -- quitting and Ctrl+C -----------------------------------------------------------------------


async def test_ctrl_q_asks_while_a_turn_runs_and_quits_at_once_when_nothing_does(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "permission")
        await wait_until(lambda: bool(app.engine.pending_permissions(session)))
        await pilot.press("ctrl+q")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen))
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        assert screen.question == (
            "Quit Cockpit? 1 turn is running and 1 question waits for you; every agent stops "
            "with it."
        )
        await pilot.press("n")
        await wait_until(lambda: not isinstance(app.screen, ConfirmScreen))
        assert app.is_running and app.engine.pending_permissions(session)
        await pilot.press("ctrl+q", "enter")  # Enter on the question keeps Cockpit open
        await wait_until(lambda: not isinstance(app.screen, ConfirmScreen))
        await pilot.pause()
        assert app.is_running and app.engine.pending_permissions(session)
        await pilot.press("escape")  # leave the question for the prompt
        await wait_until(lambda: isinstance(app.focused, Composer))
        await pilot.press("escape")  # and cancel the turn
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        await pilot.press("ctrl+q")
        await wait_until(lambda: not app.is_running)


async def test_ctrl_c_cancels_the_turn_then_clears_the_prompt_then_twice_quits(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        session = await ready(app)
        await send(app, pilot, "slow")
        await wait_until(lambda: app.engine.status(session) == Status.WORKING)
        await pilot.press("ctrl+c")
        await wait_until(lambda: app.engine.status(session) in (Status.CANCELLING, Status.READY))
        status = str(app.query_one("#status").render())
        assert app.engine.status(session) == Status.READY or "cancelling the turn" in status
        await wait_until(lambda: app.engine.status(session) == Status.READY, 30)
        rows = await app.engine.rows(session)
        assert rows[-1].text == "The turn was cancelled."
        assert "cancelling" not in str(app.query_one("#status").render())
        composer = app.query_one(Composer)
        await pilot.press(*"half a thought", "ctrl+c")
        assert composer.text == ""
        assert app.is_running
        await pilot.press("ctrl+c")
        assert app.is_running  # the first one only says how to quit
        assert any(n.message == "Press Ctrl+C again to quit" for n in app._notifications)
        await pilot.press("ctrl+c")
        await wait_until(lambda: not app.is_running)


# -- exports -----------------------------------------------------------------------------------


async def test_export_never_replaces_the_users_file_and_says_where_it_went(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        notes = app.folder / "mynotes.md"
        notes.write_text("the user's own notes\n")
        await send(app, pilot, "/rename mynotes")
        await wait_until(lambda: app.records[session].title == "mynotes")
        await send(app, pilot, "/export")
        exported = tmp_path / "home" / "exports" / f"mynotes-{session}.md"
        await wait_until(exported.exists)
        assert notes.read_text() == "the user's own notes\n"
        assert exported.read_text().startswith("# mynotes\n")
        assert oct(exported.stat().st_mode & 0o777) == "0o600"
        await wait_until(
            lambda: shown(app)[-1] == ("notice", f"Exported this transcript to {exported}")
        )
        # To a path the user names: a file there is only replaced when they say so.
        await send(app, pilot, "/export mynotes.md")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen))
        assert app.screen.question == f"Replace {notes}?"  # type: ignore[attr-defined]
        await pilot.press("n")
        await wait_until(lambda: not isinstance(app.screen, ConfirmScreen))
        await pilot.pause()
        assert notes.read_text() == "the user's own notes\n"
        await send(app, pilot, "/export mynotes.md")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(lambda: notes.read_text().startswith("# mynotes\n"))


# -- what waits, and where --------------------------------------------------------------------


async def test_ctrl_g_brings_the_keyboard_back_to_this_sessions_question(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "permission")
        await wait_until(lambda: isinstance(app.focused, PermissionPrompt))
        await pilot.press("escape")  # leave the question for the prompt
        await wait_until(lambda: isinstance(app.focused, Composer))
        await pilot.press("ctrl+g")
        await wait_until(lambda: isinstance(app.focused, PermissionPrompt))
        await pilot.press("1")
        await wait_until(lambda: app.engine.status(session) == Status.READY, 30)


async def test_toasts_never_cover_the_composer(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await ready(app)
        for number in range(3):
            app.notify(f"note {number}", timeout=30)
        await wait_until(lambda: len(app.screen.query(Toast)) == 3)
        await settled(pilot)
        composer = app.query_one(Composer).region
        toasts = [toast.region for toast in app.screen.query(Toast)]
        assert all(region.height for region in toasts)
        assert not any(region.overlaps(composer) for region in toasts)
        assert all(
            region.bottom <= app.query_one(TranscriptView).region.bottom for region in toasts
        )


async def test_a_reply_cut_by_a_quit_says_so_when_cockpit_reopens(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "slow")
        await wait_until(lambda: any(k == "agent" for k, _ in shown(app)))
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current == session and bool(shown(app)))
        await pilot.pause()
        assert shown(app)[-1] == (
            "notice",
            "The turn was stopped: Cockpit quit. The reply above is cut short.",
        )


async def test_the_status_line_says_why_an_agent_did_not_start(tmp_path: Path) -> None:
    config = tmp_path / "home" / "config"
    config.mkdir(parents=True)
    (config / "agents.toml").write_text('[agents.gone]\ncommand = ["/no/such/agent-program"]\n')
    app = make_app(tmp_path, agent="gone")
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(lambda: app.current is not None)
        session = app.current or ""
        await wait_until(lambda: app.engine.status(session) == Status.ERROR)
        await pilot.pause()
        status = str(app.query_one("#status").render())
        assert status.startswith("the agent failed to start: ")
        assert "/no/such/agent-program" in status and "a prompt tries again" in status
        assert "stopped: a prompt starts it" not in status


def test_settings_remember_the_last_session(tmp_path: Path) -> None:
    """The session to reopen is kept in settings.json beside the theme."""

    async def scenario() -> str:
        app = make_app(tmp_path)
        async with app.run_test(size=SIZE):
            return await ready(app)

    session = asyncio.run(scenario())
    settings = json.loads((tmp_path / "home" / "config" / "settings.json").read_text())
    assert settings["last_session"] == session


async def test_a_store_that_fails_a_read_is_reported_in_the_session_and_the_app_goes_on(
    tmp_path: Path,
) -> None:
    project = await six_sessions(tmp_path)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        engine = app.engine
        reads = engine.page

        async def failing(*args: Any, **kwargs: Any) -> Any:
            raise sqlite3.OperationalError("disk I/O error")

        engine.page = failing  # type: ignore[method-assign]
        await pilot.press("ctrl+down", "ctrl+down")
        broken = app.current or ""
        await wait_until(
            lambda: ("error", "Cockpit could not show the session: disk I/O error") in shown(app)
        )
        assert app.is_running
        engine.page = reads  # type: ignore[method-assign]
        await pilot.press("ctrl+down", "ctrl+up")  # and back: it reads again
        await wait_until(lambda: app.current == broken and len(shown(app)) >= 3)
        rows = await engine.rows(broken)
        assert shown(app) == [(r.kind, r.text) for r in rows]
        assert rows[-1].text == "Cockpit could not show the session: disk I/O error"


async def test_a_store_that_fails_a_delete_or_a_rename_is_reported_and_the_app_goes_on(
    tmp_path: Path,
) -> None:
    """Dialogs' callbacks call the engine too: a delete that failed in the store killed
    the app (its handler's guard took the dialog's answer for the app)."""
    project = await six_sessions(tmp_path)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(lambda: app.current is not None)
        session = app.current or ""
        engine = app.engine

        async def failing(*args: Any, **kwargs: Any) -> Any:
            raise sqlite3.OperationalError("disk I/O error")

        engine.delete = failing  # type: ignore[method-assign]
        engine.rename = failing  # type: ignore[method-assign]
        await pilot.press("f8", "y")
        await wait_until(
            lambda: ("error", "Cockpit could not delete the session: disk I/O error") in shown(app)
        )
        assert app.is_running and session in app.records
        await pilot.press("f2")
        await pilot.pause()
        await pilot.press(*"new name", "enter")
        await wait_until(
            lambda: (
                ("error", "Cockpit could not do what the dialog asked: disk I/O error")
                in shown(app)
            )
        )
        assert app.is_running
