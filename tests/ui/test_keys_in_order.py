"""Editing keys typed in one burst act in the order typed: the prompt and the dialogs' fields
end as they do when the same keys come one at a time (Textual runs Backspace, the arrows
or Ctrl+W only once the key has bubbled up to the app, after the letters typed behind it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Input

from cockpit.api import EngineAPI, Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.dialog import PaletteInput
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.screens.inbox import InboxScreen
from cockpit.ui.screens.questions import RenameScreen
from cockpit.ui.settings import save_settings
from tests.support.ui_helpers import (
    burst,
    engine_factory,
    fill,
    focused_composer,
    make_app,
    steady,
    wait_until,
)
from tests.support.waiting import eventually

SIZE = (100, 30)

EDITS = [
    pytest.param([*"ab", "backspace", "c"], id="backspace"),
    pytest.param([*"abc", "left", "left", "x", "end", "y"], id="arrows"),
    pytest.param([*"one two", "ctrl+w", *"three"], id="word"),
    pytest.param([*"abc", "home", "delete", "x", "ctrl+e", "backspace", "z"], id="home-delete"),
    pytest.param([*"first", "ctrl+j", *"second", "up", "ctrl+k", *"s"], id="lines"),
    pytest.param([*"abc", "shift+left", "shift+left", "x"], id="selection"),
]


@pytest.mark.parametrize("keys", EDITS)
async def test_the_prompt_ends_as_it_does_with_the_keys_one_at_a_time(
    tmp_path: Path, keys: list[str]
) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        _, composer = await focused_composer(app)
        for key in keys:
            await pilot.press(key)
        paced = (composer.text, composer.cursor_location)
        composer.clear()
        await pilot.pause()
        burst(app, *keys)
        assert await steady(pilot, lambda: (composer.text, composer.cursor_location)) == paced


async def test_a_title_typed_with_corrections_in_one_burst_is_the_title_as_typed(
    tmp_path: Path,
) -> None:
    """F2, the old title cleared, a title typed with a Backspace, Enter: in one burst."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session, _ = await focused_composer(app)
        burst(app, "f2")
        await wait_until(lambda: isinstance(app.focused, Input))
        assert isinstance(app.screen, RenameScreen)
        burst(app, "ctrl+u", *"Plam", "backspace", *"n B", "left", "backspace", "left", "enter")
        await wait_until(lambda: not isinstance(app.screen, RenameScreen))
        await wait_until(lambda: app.records[session].title is not None)
        assert app.records[session].title == "PlanB"
        await pilot.pause()
        assert isinstance(app.focused, Composer) and app.focused.text == ""


async def test_under_a_dialog_the_main_screens_keys_do_nothing(tmp_path: Path) -> None:
    """Ctrl+Down, F1 and Ctrl+O come first as they arrive on the main screen; under the
    inbox they neither switch the session nor open a dialog on top."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session, _ = await focused_composer(app)
        await app.engine.create_session("demo", app.folder, title="other")
        await app.sessions.reload()
        burst(app, "ctrl+o", "ctrl+down", "f1", "ctrl+t", "f2")
        await wait_until(lambda: isinstance(app.screen, InboxScreen))
        await steady(pilot, lambda: (len(app.screen_stack), app.current))
        assert len(app.screen_stack) == 2 and isinstance(app.screen, InboxScreen)
        assert app.current == session


async def test_keys_typed_while_cockpit_starts_reach_the_prompt_in_order(tmp_path: Path) -> None:
    """Keys typed before the screen is ready (the engine still opening) are neither lost to
    the rail nor reordered: the prompt sent with Enter goes to the session, and what
    follows is the draft."""
    opened: list[CockpitApp] = []

    async def open_while_typing() -> EngineAPI:
        burst(opened[0], *"fix the tst", "backspace", "backspace", *"est", "enter", *"and so")
        return await engine_factory(tmp_path / "home")()

    app = make_app(tmp_path, engine=open_while_typing)
    opened.append(app)
    async with app.run_test(size=SIZE) as pilot:
        composer = app.query_one(Composer)
        await wait_until(lambda: composer.text == "and so")
        session = app.current or ""
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        await steady(pilot, lambda: composer.text)
        sent = [row.text for row in await app.engine.rows(session) if row.kind == "user"]
        assert sent == ["fix the test"]
        assert composer.text == "and so" and app.focused is composer


async def test_a_search_typed_with_corrections_in_one_burst_is_the_search_as_typed(
    tmp_path: Path,
) -> None:
    """The command palette's field, in its place, takes a burst with Backspaces and arrows
    as the same keys one at a time."""
    keys = [*"hepl", "backspace", "backspace", *"lp", "home", "delete", "h", "end", "s"]
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await focused_composer(app)
        await pilot.press("ctrl+p")
        await wait_until(lambda: isinstance(app.focused, PaletteInput))
        field = app.focused
        assert isinstance(field, PaletteInput) and field.parent is not None
        assert field.parent.id == "--input"
        for key in keys:
            await pilot.press(key)
        paced = field.value
        await pilot.press("ctrl+u")
        burst(app, *keys)
        assert await steady(pilot, lambda: field.value) == paced == "helps"


async def test_a_digit_right_after_ctrl_g_answers_the_question_it_goes_to(tmp_path: Path) -> None:
    """Ctrl+G and 1 in one burst, with a question waiting in another session: the 1 waits
    for the question to take the keyboard and answers it (before, it went to the
    composer of the session switched to, the question still waiting)."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        first, composer = await focused_composer(app)
        asking = (await app.engine.create_session("demo", app.folder, title="asking")).id
        await app.sessions.reload()
        turn = asyncio.create_task(app.engine.prompt(asking, "permission"))
        await wait_until(lambda: app.engine.pending_count(asking) == 1)
        await pilot.pause()
        assert app.current == first
        burst(app, "ctrl+g", "1", *"ok")
        await wait_until(lambda: app.engine.pending_count(asking) == 0, what="the answer")
        assert await asyncio.wait_for(turn, 10) == "end_turn"
        rows = await app.engine.rows(asking)
        assert [r.text for r in rows if r.kind == "permission"] == [
            "Allowed once: Write demo-notes.md"
        ]
        await wait_until(lambda: composer.text == "ok", what="the letters after it")
        assert app.current == asking and app.drafts.get(first) == ""


async def test_a_switch_among_the_keys_held_at_start_holds_the_keys_after_it(
    tmp_path: Path,
) -> None:
    """Ctrl+G, 1 and two letters typed while Cockpit starts on one session, a question
    waiting in another: the Ctrl+G, handled once the screen is ready, holds the keys after
    it again until the question has the keyboard; the 1 answers it and the letters are
    the draft of the session with the question."""
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    ids: dict[str, str] = {}

    async def two_sessions(engine: EngineAPI) -> None:
        for title in ("plain", "asking"):
            ids[title] = (await engine.create_session("demo", project, title=title)).id

    await fill(home, two_sessions)
    save_settings(home / "config" / "settings.json", {"last_session": ids["plain"]})
    opened: list[CockpitApp] = []
    turns: list[asyncio.Task[str]] = []

    async def ask_then_open() -> EngineAPI:
        engine = await engine_factory(home)()
        turns.append(asyncio.create_task(engine.prompt(ids["asking"], "permission")))
        await eventually(lambda: engine.pending_count(ids["asking"]) == 1, 15, "the question")
        burst(opened[0], "ctrl+g", "1", *"ok")
        return engine

    app = make_app(tmp_path, engine=ask_then_open)
    opened.append(app)
    async with app.run_test(size=SIZE):
        assert await asyncio.wait_for(turns[0], 15) == "end_turn"
        composer = app.query_one(Composer)
        await wait_until(lambda: composer.text == "ok", what="the letters after the answer")
        assert app.current == ids["asking"] and composer.session == ids["asking"]
        rows = await app.engine.rows(ids["asking"])
        assert [r.text for r in rows if r.kind == "permission"] == [
            "Allowed once: Write demo-notes.md"
        ]


async def test_a_question_whose_answer_failed_can_be_answered_again(tmp_path: Path) -> None:
    """The engine fails to take the answer (a service gone for a moment): the error is
    reported, the question stays and a second 1 answers it."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session, _ = await focused_composer(app)
        turn = asyncio.create_task(app.engine.prompt(session, "permission"))
        await wait_until(lambda: isinstance(app.focused, PermissionPrompt), what="the question")
        answer = app.engine.answer_permission
        failures = [RuntimeError("the service went away")]

        async def failing_once(
            request_id: str, option_id: str | None, decided_by: str = "user"
        ) -> None:
            if failures:
                raise failures.pop()
            await answer(request_id, option_id, decided_by)

        app.engine.answer_permission = failing_once  # type: ignore[method-assign]
        await pilot.press("1")
        await wait_until(lambda: not failures)
        await pilot.pause()
        assert app.engine.pending_count(session) == 1 and app.is_running
        prompt = app.query_one(PermissionPrompt)
        prompt.focus()
        await pilot.press("1")
        assert await asyncio.wait_for(turn, 10) == "end_turn"
        assert app.engine.pending_count(session) == 0
