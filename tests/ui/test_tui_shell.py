"""Pilot tests of the app shell: untrusted names never read as markup nor reaching the
screen raw, Esc from anywhere, where the keyboard lands after switching sessions, the
inbox following events while open, and `--agent` with sessions stored."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandList, CommandPalette
from textual.widget import Widget
from textual.widgets import Label, OptionList

from cockpit.api import Status
from cockpit.compat.textual_private import screen_strips
from cockpit.engine.core import Engine
from cockpit.ui.agent_options import OptionChoice
from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import BubbleWidget
from cockpit.ui.composer import CompletionMenu, Composer
from cockpit.ui.one_line import clean_line
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.screens.help import HelpScreen
from cockpit.ui.screens.inbox import InboxScreen
from cockpit.ui.screens.questions import ConfirmScreen, OptionsScreen, RenameScreen
from cockpit.ui.screens.reading import PlanScreen
from cockpit.ui.transcript import TranscriptView
from tests.support.ui_helpers import (
    NOW,
    add_session,
    fill,
    make_app,
    ready,
    send,
    settled,
    ticking,
    wait_until,
)

SIZE = (260, 50)


def names(word: str) -> dict[str, Any]:
    """Modes, a model and a Thinking option whose names all hold `word`."""
    return {
        "modes": {
            "currentModeId": "m",
            "availableModes": [
                {"id": "m", "name": f"Plan {word} mode"},
                {"id": "n", "name": f"Other {word}"},
            ],
        },
        "config_options": [
            {
                "id": "model",
                "name": "Model",
                "type": "select",
                "category": "model",
                "currentValue": "x",
                "options": [{"value": "x", "name": f"Model {word}"}],
            },
            {
                "id": "thinking",
                "name": f"Thinking {word}",
                "type": "select",
                "category": "thought_level",
                "currentValue": "h",
                "options": [{"value": "h", "name": f"High {word}"}],
            },
        ],
    }


async def stored_sessions(tmp_path: Path, word: str) -> CockpitApp:
    """Two stored sessions (no agent) titled with `word`, their modes, model and option
    named with it; the one not shown has a turn unread."""
    project = tmp_path / "project"
    project.mkdir()

    async def build(engine: Engine) -> None:
        for title in (f"other {word}", word):
            session = await add_session(engine, project, title, [("one", "reply one")])
            await engine.store.update_session(session, **names(word))

    await fill(tmp_path / "home", build)
    return make_app(tmp_path, project)


def focused(app: CockpitApp) -> Widget | None:
    return app.focused


def status_of(app: CockpitApp) -> str:
    return str(app.query_one("#status").render())


def shown_text(app: CockpitApp) -> str:
    """The screen as exported (SVG) and as the compositor renders it, line by line."""
    strips = screen_strips(app.screen)
    lines = "\n".join(strip.text for strip in strips)
    return app.export_screenshot().replace("&#160;", " ") + "\n" + lines


async def visit_every_place_a_name_shows(app: CockpitApp, pilot: Any, word: str) -> list[str]:
    """Open every screen that shows the session's title or the agent's names: the status
    line, F8, the palette searching "Session", the mode notifications, the plan, the
    options, the inbox and rename. Returns a screenshot of each."""
    await wait_until(lambda: app.current is not None)
    await pilot.pause()
    seen = [shown_text(app)]

    await pilot.press("f8")
    await wait_until(lambda: isinstance(app.screen, ConfirmScreen))
    await pilot.pause()
    seen.append(shown_text(app))
    assert clean_line(word) in str(app.screen.query_one(Label).render())
    await pilot.press("n")

    await pilot.press("ctrl+p")
    await wait_until(lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*"Session")
    palette = app.screen
    await wait_until(
        lambda: any(
            clean_line(word) in str(option.prompt)
            for option in palette.query_one(CommandList).options
        )
    )
    await pilot.pause()
    seen.append(shown_text(app))
    await pilot.press("escape")
    await wait_until(lambda: not isinstance(app.screen, CommandPalette))

    await app.set_mode_named(app.current or "", "no such mode")  # lists the modes in a notification
    modes = [c for c in app.modes.choices(app.records[app.current or ""]) if c.config_id is None]

    async def accepted(session_id: str, mode_id: str) -> None:
        return None

    app.engine.set_mode = accepted  # type: ignore[method-assign]
    await app.modes.apply_choice(app.current or "", OptionChoice(None, "n", modes[1].label, False))
    await wait_until(lambda: len(app.screen.query("Toast")) == 2)
    await pilot.pause()
    seen.append(shown_text(app))
    assert f"Mode: Other {clean_line(word)}" in seen[-1]
    # read now: the toast only confirms, and is gone after two seconds
    assert f"Mode: Other {clean_line(word)}" in [n.message for n in app._notifications]

    await app.action_show_plan()
    await wait_until(lambda: isinstance(app.screen, PlanScreen))
    await pilot.pause()
    seen.append(shown_text(app))
    await pilot.press("escape")

    for key, screen in (("ctrl+t", OptionsScreen), ("ctrl+o", InboxScreen), ("f2", RenameScreen)):
        await pilot.press(key)
        await wait_until(lambda screen=screen: isinstance(app.screen, screen))  # type: ignore[misc]
        await pilot.pause()
        seen.append(shown_text(app))
        await pilot.press("escape")
        await wait_until(lambda screen=screen: not isinstance(app.screen, screen))  # type: ignore[misc]
    return seen


@pytest.mark.parametrize(
    "word", ["why does [/] break", "[bold]loud[/bold] [link=x]click[/link]", "a [/b] [Plan] [$x]"]
)
async def test_names_that_look_like_markup_show_as_written(tmp_path: Path, word: str) -> None:
    """A title, mode, model and option named with markup never stop the app (before, F8 on
    `why does [/] break` died with MarkupError) and show as written."""
    app = await stored_sessions(tmp_path, word)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        seen = await visit_every_place_a_name_shows(app, pilot, word)
        status = status_of(app)
        for part in (f"Plan {word} mode", f"Model {word}", f"Thinking {word}: High {word}"):
            assert part in status
        messages = [n.message for n in app._notifications]
        assert f"Modes: Mode: Plan {word} mode, Mode: Other {word}" in messages
        assert word in seen[1]  # the delete dialog


ESCAPED = "Plan \x1b]0;pwned\x07 \x1b[31mred\x1b[0m mode"


async def test_escape_sequences_in_names_never_reach_the_screen(tmp_path: Path) -> None:
    """A mode named with an OSC title sequence and colours, and a title holding them too:
    no ESC and nothing of the sequence in any rendered screen."""
    app = await stored_sessions(tmp_path, ESCAPED)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        seen = await visit_every_place_a_name_shows(app, pilot, ESCAPED)
        assert "Plan  red mode" not in status_of(app)  # runs of spaces made one
        assert "mode: Plan Plan red mode mode" in status_of(app)
        assert len(seen) == 8
        for screen in seen:
            assert "\x1b" not in screen and "pwned" not in screen and "\x07" not in screen


# -- Esc ------------------------------------------------------------------------------------


async def test_escape_cancels_from_the_transcript_and_returns_to_the_composer(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        session = await ready(app)
        await send(app, pilot, "slow")
        view = app.query_one(TranscriptView)
        await wait_until(lambda: any(b.kind == "agent" and len(b.text) > 20 for b in view.model))
        # Esc closes a dialog and nothing else: the turn goes on.
        await pilot.press("f1")
        await wait_until(lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await wait_until(lambda: not isinstance(app.screen, HelpScreen))
        await settled(pilot)
        assert app.engine.status(session) == Status.WORKING
        # Esc closes the composer's completion menu, and only that.
        composer = app.query_one(Composer)
        composer.focus()
        await pilot.press("/")
        menu = app.query_one(CompletionMenu)
        await wait_until(lambda: bool(menu.display))
        await pilot.press("escape")
        await settled(pilot)
        assert not menu.display and composer.text == "/"
        assert app.engine.status(session) == Status.WORKING
        composer.text = ""
        # With the keyboard on the transcript, Esc cancels the turn.
        view.focus()
        await pilot.pause()
        assert app.focused is view
        await pilot.press("escape")
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        rows = await app.engine.rows(session)
        assert [r.kind for r in rows] == ["user", "agent", "notice"]
        # No turn runs: Esc on a bubble goes back to the composer.
        bubble = app.query(BubbleWidget).last()
        bubble.focus()
        await pilot.pause()
        assert focused(app) is bubble
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.focused, Composer)
        assert app.engine.status(session) == Status.READY


# -- focus after switching ------------------------------------------------------------------


async def test_ctrl_g_to_a_waiting_session_then_1_answers_its_request(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        first = await ready(app)
        other = await app.engine.create_session("demo", app.folder, title="elsewhere")
        await app.sessions.reload()
        turn = asyncio.create_task(app.engine.prompt(other.id, "permission"))
        await wait_until(lambda: len(app.engine.pending_permissions(other.id)) == 1)
        assert app.current == first
        app.query_one(Composer).focus()
        await pilot.press("ctrl+g")
        await wait_until(lambda: app.current == other.id and bool(app.query(PermissionPrompt)))
        await pilot.pause()
        assert isinstance(app.focused, PermissionPrompt)
        await pilot.press("1")
        await asyncio.wait_for(turn, 10)
        assert not app.engine.pending_permissions(other.id)
        rows = await app.engine.rows(other.id)
        assert [r.text for r in rows if r.kind == "permission"] == [
            "Allowed once: Write demo-notes.md"
        ]
        assert app.query_one(Composer).text == ""
        # Leaving a focused request for another session: typing reaches the composer.
        turn = asyncio.create_task(app.engine.prompt(other.id, "permission"))
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        await pilot.pause()
        assert isinstance(app.focused, PermissionPrompt)
        await pilot.press("ctrl+up")
        await wait_until(lambda: app.current == first)
        await pilot.pause()
        await pilot.press(*"hi")
        assert app.query_one(Composer).text == "hi"
        await app.engine.cancel(other.id)
        await asyncio.wait_for(turn, 10)


async def test_typing_after_ctrl_n_reaches_the_new_sessions_composer(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        first = await ready(app)
        app.query_one(TranscriptView).focus()  # the keyboard somewhere else than the prompt
        await pilot.press("ctrl+n")
        await pilot.pause()
        await pilot.press("enter")  # the demo agent, in the start folder
        await wait_until(lambda: app.current not in (None, first))
        await pilot.pause()
        await pilot.press(*"hello")
        assert app.query_one(Composer).text == "hello"


# -- the inbox ------------------------------------------------------------------------------


async def test_the_open_inbox_follows_new_requests_and_keeps_its_highlight(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path, engine_clock=ticking())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app)
        sessions = []
        for title in ("one", "two", "three"):
            record = await app.engine.create_session("demo", app.folder, title=title)
            sessions.append(record.id)
        await app.sessions.reload()
        turns = [asyncio.create_task(app.engine.prompt(s, "permission")) for s in sessions[:2]]
        await wait_until(lambda: len(app.engine.pending_permissions()) == 2)
        await pilot.press("ctrl+o")
        await wait_until(lambda: isinstance(app.screen, InboxScreen))
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        await pilot.press("down")
        first, second = inbox.items  # in the order the two agents asked
        # A new request arrives while the inbox is open: it shows, the highlight stays.
        turns.append(asyncio.create_task(app.engine.prompt(sessions[2], "permission")))
        await wait_until(lambda: len(inbox.items) == 3)
        listing = inbox.query_one("#inbox-items", OptionList)
        assert [i.key for i in inbox.items] == [first.key, second.key, inbox.items[2].key]
        assert inbox.items[2].session_title == "three"
        assert inbox.items[listing.highlighted or 0].key == second.key
        # Answering the highlighted one moves the highlight to the next, not to the top.
        await pilot.press("3")
        await wait_until(lambda: len(app.engine.pending_permissions()) == 2)
        # the inbox follows at its next refresh (a loaded machine may take a while)
        await wait_until(
            lambda: (
                [i.session_title for i in inbox.items if i.request is not None]
                == [first.session_title, "three"]
            )
        )
        await pilot.pause()
        highlighted = inbox.items[listing.highlighted or 0]
        assert highlighted.session_title == "three" and highlighted.request is not None
        await pilot.press("escape")
        for session in sessions:
            await app.engine.cancel(session)
        await asyncio.wait_for(asyncio.gather(*turns), 10)


async def test_a_finished_turn_sorts_by_when_it_ended(tmp_path: Path) -> None:
    """A turn that ended after a request was asked comes after it in the inbox, aged from
    its end (before, it took the session's `updated` time: older than the request)."""
    app = make_app(tmp_path, engine_clock=ticking())
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app)
        slow = await app.engine.create_session("demo", app.folder, title="slow one")
        asking = await app.engine.create_session("demo", app.folder, title="asking")
        await app.sessions.reload()
        slow_turn = asyncio.create_task(app.engine.prompt(slow.id, "slow"))
        await wait_until(lambda: app.engine.status(slow.id) == Status.WORKING)
        await wait_until(lambda: app.engine.unread(slow.id))  # the reply has begun
        ask_turn = asyncio.create_task(app.engine.prompt(asking.id, "permission"))
        await wait_until(lambda: len(app.engine.pending_permissions(asking.id)) == 1)
        requested = app.engine.pending_permissions(asking.id)[0].created
        await app.engine.cancel(slow.id)  # the slow turn ends now, after the request
        await asyncio.wait_for(slow_turn, 10)
        await wait_until(lambda: len(app.inbox_items()) == 2)
        items = app.inbox_items()
        assert [(i.session_title, i.request is not None) for i in items] == [
            ("asking", True),
            ("slow one", False),
        ]
        assert items[1].since > requested
        await pilot.pause()
        await app.engine.cancel(asking.id)
        await asyncio.wait_for(ask_turn, 10)


# -- --agent --------------------------------------------------------------------------------


async def test_agent_option_opens_a_session_with_that_agent_when_sessions_exist(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()

    async def build(engine: Engine) -> None:
        await add_session(engine, project, "with claude", [("hi", "hello")])
        await engine.store.update_session(
            (await engine.sessions())[0].id, agent="claude", command=["claude"]
        )

    await fill(tmp_path / "home", build)
    app = make_app(tmp_path, project, agent="demo", engine_clock=ticking(NOW + 10))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(lambda: len(app.records) == 2 and app.current is not None)
        await pilot.pause()
        record = app.records[app.current or ""]
        assert record.agent == "demo" and record.title is None
        assert sorted(r.agent for r in app.records.values()) == ["claude", "demo"]
        assert isinstance(app.focused, Composer)
        await ready(app)

    # The newest session already runs the agent asked for: it reopens, no new one.
    again = make_app(tmp_path, project, agent="demo", engine_clock=ticking(NOW + 20))
    async with again.run_test(size=(120, 40)) as pilot:
        await wait_until(lambda: again.current is not None)
        await pilot.pause()
        assert len(again.records) == 2 and again.current == record.id


async def test_at_80x24_the_status_line_shows_the_turn_state(tmp_path: Path) -> None:
    """The status slot of an 80-column terminal is 56 cells: the turn state comes first,
    the labels shorten, and the line never runs past the slot."""
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        session = await ready(app)
        status = app.query_one("#status")
        await pilot.pause()
        assert str(status.render()) == "ready · Ask before edits · Fast · Cockpit demo agent"
        await send(app, pilot, "slow")
        await wait_until(lambda: app.engine.status(session) == Status.WORKING)
        await pilot.pause()
        line = str(status.render())
        assert line.startswith("working (Esc cancels) · Ask before edits · Fast")
        assert len(line) <= status.content_size.width == 56
        assert "working (Esc cancels)" in shown_text(app)
        await pilot.press("escape")
        await wait_until(lambda: app.engine.status(session) == Status.READY)
