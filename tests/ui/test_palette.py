"""The command palette as a user types into it: Ctrl+P, a word and Enter in one burst,
against the engine in process and against the service. Its entries are Cockpit's (none of
Textual's stock ones) and the word typed chooses the entry it names."""

from __future__ import annotations

from textual.command import CommandInput, CommandList

from cockpit.ui.app import CockpitApp
from cockpit.ui.dialog import Palette
from cockpit.ui.screens.help import HelpScreen
from tests.support.ui_helpers import burst, ready, settled, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (80, 24)

TEXTUAL_TITLES = {"Keys", "Maximize", "Minimize", "Screenshot", "Theme", "Quit"}
"""Textual's stock entries (Cockpit's "Quit" is offered only in process: checked apart)."""
TEXTUAL_HELP = ("application", "widget", "'screenshot'", "Change the current theme")


def entries_shown(app: CockpitApp) -> list[tuple[str, str]]:
    """The palette's entries on top, as (title, help)."""
    lists = app.screen.query(CommandList)
    if not lists:
        return []
    shown = [str(option.prompt) for option in lists.first().options]
    return [(title, help_line) for title, _, help_line in (s.partition("\n") for s in shown)]


def placeholder_of(app: CockpitApp) -> str:
    fields = app.screen.query(CommandInput)
    return str(fields.first().placeholder) if fields else ""


async def test_the_palette_offers_cockpits_entries_in_its_words(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        await pilot.press("ctrl+p")
        await wait_until(lambda: len(entries_shown(app)) > 10, what="the entries")
        await settled(pilot)
        entries = entries_shown(app)
        titles = [title for title, _ in entries]
        helps = " ".join(help_line for _, help_line in entries)
        quit_entry = "Detach and quit" if engines.kind == "service" else "Quit"
        assert quit_entry in titles
        assert set(titles) & TEXTUAL_TITLES <= {quit_entry}
        assert not [stock for stock in TEXTUAL_HELP if stock in helps]
        assert {"Change theme", "Keys and help", "Inbox", "New session…"} <= set(titles)
        assert titles[0] == "New session…"


async def test_theme_and_enter_in_the_burst_of_ctrl_p_open_the_themes(engines: Engines) -> None:
    """Enter came before the search for "theme" ended, and ran the entry first on the list
    found before (Textual's key panel): it waits for the search now."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        burst(app, "ctrl+p", *"theme", "enter")
        await wait_until(lambda: "Search for themes" in placeholder_of(app), what="the themes")
        await settled(pilot)
        assert len(app.screen_stack) == 2 and isinstance(app.screen, Palette)
        await wait_until(lambda: len(entries_shown(app)) > 3, what="the themes listed")
        burst(app, *"dracula", "enter")
        await wait_until(lambda: len(app.screen_stack) == 1, what="the themes closed")
        await settled(pilot)
        assert app.theme == "dracula"


async def test_keys_and_enter_in_one_burst_show_every_key(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        burst(app, "ctrl+p", *"keys", "enter")
        await wait_until(lambda: isinstance(app.screen, HelpScreen), what="the keys")
        await settled(pilot)
        assert len(app.screen_stack) == 2


async def test_quit_and_enter_in_one_burst_leave_cockpit(engines: Engines) -> None:
    """Attached to the service it detaches; in process, with nothing running, it quits."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        burst(app, "ctrl+p", *"quit", "enter")
        await wait_until(lambda: not app.is_running, what="the app to exit")
        del pilot


async def test_keys_after_a_waiting_enter_change_nothing(engines: Engines) -> None:
    """Letters in the burst after Enter are dropped, as once the palette is closed: they
    neither change the query Enter chose from nor start a new search."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        burst(app, "ctrl+p", *"keys", "enter", *"xyz")
        await wait_until(lambda: isinstance(app.screen, HelpScreen), what="the keys")
        await settled(pilot)
        assert len(app.screen_stack) == 2 and app.is_running


async def test_a_word_matching_nothing_and_enter_keep_the_palette_open(
    engines: Engines,
) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        burst(app, "ctrl+p", *"zzqq", "enter")
        await wait_until(lambda: isinstance(app.screen, Palette))
        await settled(pilot)
        assert isinstance(app.screen, Palette) and app.is_running
        assert app.screen.query_one(CommandInput).value == "zzqq"
        await pilot.press("escape")
        await wait_until(lambda: len(app.screen_stack) == 1)
