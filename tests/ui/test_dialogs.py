"""Dialogs and the palette under keys sent together: each answers and closes once, and the
screen under it stays (Textual's dismiss pops whatever is on top, and the palette's search
came back to a list already gone; both ended the app)."""

from __future__ import annotations

from pathlib import Path

from textual.command import CommandInput, CommandList
from textual.widgets.option_list import Option

from cockpit.compat.textual_private import run_command_list_action
from cockpit.ui.app import CockpitApp
from cockpit.ui.dialog import Palette
from cockpit.ui.screens.questions import RenameScreen
from tests.support.ui_helpers import burst, make_app, ready, settled, wait_until


async def test_two_enters_on_a_dialog_answer_once_and_keep_the_screen_under_it(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    renamed: list[str] = []
    async with app.run_test(size=(100, 30)) as pilot:
        session = await ready(app)
        engine = app.engine
        rename = engine.rename

        async def counted(session_id: str, title: str) -> None:
            renamed.append(title)
            await rename(session_id, title)

        engine.rename = counted  # type: ignore[method-assign]
        await pilot.press("f2")
        await wait_until(lambda: isinstance(app.screen, RenameScreen))
        burst(app, "x", "enter", "enter")  # the title is selected: x replaces it
        await wait_until(lambda: app.records[session].title == "x")
        await pilot.pause()
        assert app.is_running and len(app.screen_stack) == 1
        assert renamed == ["x"]


async def test_the_palette_opened_typed_in_and_closed_in_one_burst(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app)
        for keys in (
            ("ctrl+p", "s", "escape"),
            ("ctrl+p", "t", "h", "enter", "escape"),
            ("ctrl+p", "ctrl+p", "pageup", "pagedown", "escape", "escape"),
            ("ctrl+p", "n", "e", "w", "escape", "a"),
        ):
            burst(app, *keys)
            await settled(pilot)
            assert app.is_running
        await wait_until(lambda: len(app.screen_stack) == 1)


async def test_enter_held_on_a_palette_command_runs_it_once(tmp_path: Path) -> None:
    """Three Enters and two letters in one burst on "New session with demo": one new
    session, and the keys after the first Enter go to the screen under the palette."""
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app)
        before = len(app.records)
        await pilot.press("ctrl+p", *"with demo")
        await wait_until(
            lambda: any(commands.option_count for commands in app.screen.query(CommandList))
        )
        burst(app, "enter", "enter", "enter", "x", "y")
        await wait_until(lambda: len(app.records) > before)
        await settled(pilot)
        assert app.is_running and len(app.screen_stack) == 1
        assert len(app.records) == before + 1


async def test_enter_held_on_a_theme_chooses_it_once_and_the_app_lives(tmp_path: Path) -> None:
    """The palette's "Change theme" opens a palette of themes: Enter held on one chose it,
    then chose it again after that palette had closed, and the app died of closing the
    screen under it (seen under the key monkey)."""
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app)
        await pilot.press("ctrl+p", *"theme")
        await wait_until(
            lambda: options_shown(app)[:1] == ["Change theme\nthe colours of the screen"]
        )
        await pilot.press("enter")
        await wait_until(lambda: "Search for themes" in placeholder_of(app), what="the themes")
        assert isinstance(app.screen, Palette), "the themes in Textual's palette, not Cockpit's"
        await wait_until(lambda: len(options_shown(app)) > 3, what="the themes listed")
        chosen = options_shown(app)[0]
        burst(app, "enter", "enter", "enter")
        await wait_until(lambda: len(app.screen_stack) == 1, what="the palette closed")
        await settled(pilot)
        assert app.is_running and app.theme == chosen


def options_shown(app: CockpitApp) -> list[str]:
    """The options of the palette on top, as text (none when no palette is)."""
    lists = app.screen.query(CommandList)
    if not lists:
        return []
    commands = lists.first()
    return [str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)]


def placeholder_of(app: CockpitApp) -> str:
    """The search field's placeholder of the palette on top."""
    fields = app.screen.query(CommandInput)
    return str(fields.first().placeholder) if fields else ""


async def test_paging_the_palette_before_its_list_is_laid_out_does_nothing(
    tmp_path: Path,
) -> None:
    """PageDown in the burst that brought the commands raised KeyError inside Textual
    (the monkey, seed 12) and ended the app."""
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app)
        await pilot.press("ctrl+p")
        await wait_until(lambda: isinstance(app.screen, Palette))
        palette = app.screen
        assert isinstance(palette, Palette)
        commands = palette.query_one(CommandList)
        commands.set_class(False, "--visible")  # no match yet: the list is hidden
        await pilot.pause()
        commands.clear_options().add_options([Option(f"command {n}") for n in range(30)])
        commands.highlighted = 5
        commands.set_class(True, "--visible")  # the commands arrive with the key
        run_command_list_action(palette, "page_down")  # before the list is laid out
        run_command_list_action(palette, "page_up")
        await pilot.pause()
        assert app.is_running
