"""Habits from Claude Code and the shell (issue 33, item 5): Ctrl+R searches the earlier
prompts, `/model` opens the model option, and `//name` reaches an agent command that a
Cockpit command of the same name would hide. Keys come in bursts, as a terminal delivers
them; where the engine is involved, against both engines."""

from __future__ import annotations

import sys
from pathlib import Path

from cockpit.api import Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import CompletionMenu, Composer
from cockpit.ui.screens.help import HelpScreen
from cockpit.ui.screens.questions import OptionsScreen
from tests.engine.test_engine_restart import TINY
from tests.support.ui_helpers import burst, make_app, ready, send, settled, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (100, 30)


def with_tiny_agent(home: Path, *arguments: str) -> None:
    """Register the tiny agent (`tests/support/tiny_agent.py`) as `tiny` in `home`."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    command = ", ".join(f'"{part}"' for part in [sys.executable, str(TINY), *arguments])
    (config / "agents.toml").write_text(f"[agents.tiny]\ncommand = [{command}]\n")


def menu_labels(app: CockpitApp) -> list[str]:
    menu = app.query_one(CompletionMenu)
    return [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]


# -- Ctrl+R -----------------------------------------------------------------------------------


async def test_ctrl_r_finds_an_earlier_prompt_and_enter_puts_it_in_the_composer(
    engines: Engines,
) -> None:
    """Ctrl+R and the letters in one burst choose the newest prompt that holds them; Ctrl+R
    again goes to an older one; Enter puts it in the composer without sending it."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        prompts = ("explain the table", "write a plan", "the table again please")
        for prompt in prompts:
            await send(app, pilot, prompt)
            await wait_until(lambda: app.engine.status(session) == Status.READY)
        composer = app.query_one(Composer)
        await wait_until(lambda: composer.text == "")
        burst(app, "ctrl+r", *"TABLE")
        await settled(pilot)
        assert composer.search is not None
        assert composer.search.match == "the table again please"
        assert menu_labels(app) == ["the table again please", "explain the table"]
        assert composer.text == ""  # the draft is not touched while searching
        burst(app, "ctrl+r", "enter")
        await settled(pilot)
        assert composer.search is None and not app.query_one(CompletionMenu).display
        assert composer.text == "explain the table"
        assert composer.cursor_location == composer.document.end
        sent = [r.text for r in await app.engine.rows(session) if r.kind == "user"]
        assert sent == list(prompts)  # nothing more was sent
        assert app.drafts.get(session) == "explain the table"


async def test_esc_leaves_the_search_and_the_draft_as_it_was(engines: Engines) -> None:
    """A half-typed draft, then Ctrl+R, a query, Down and Esc in one burst: the draft is
    the same, and so is what is kept of it; the letters after Esc go to the draft."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "write a plan")
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        composer = app.query_one(Composer)
        await wait_until(lambda: composer.text == "")
        burst(app, *"half a thought", "ctrl+r", *"pla")
        await settled(pilot)
        menu = app.query_one(CompletionMenu)
        assert menu.display and menu_labels(app) == ["write a plan"]  # over the draft's change
        burst(app, "n", "down", "backspace", "escape", *"!")
        await settled(pilot)
        assert composer.search is None
        assert composer.text == "half a thought!"
        assert app.drafts.get(session) == "half a thought!"
        burst(app, "ctrl+r", *"nothing like it", "enter")  # no match: Enter takes nothing
        await settled(pilot)
        assert composer.text == "half a thought!" and composer.search is None


async def test_ctrl_r_with_no_earlier_prompt_says_so_and_types_on(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        app.query_one(Composer).focus()
        burst(app, "ctrl+r", *"hi")
        await settled(pilot)
        composer = app.query_one(Composer)
        assert composer.search is None and composer.text == "hi"
        assert any("No earlier prompts" in str(n.message) for n in app._notifications)


async def test_a_key_the_search_has_no_use_for_takes_the_match_and_acts(tmp_path: Path) -> None:
    """Left in a search takes the match and moves the cursor in it, as in a shell; the
    letters after it in the burst edit the match."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        for prompt in ("first prompt", "second prompt"):
            await send(app, pilot, prompt)
            await wait_until(lambda: app.engine.status(session) == Status.READY)
        composer = app.query_one(Composer)
        await wait_until(lambda: composer.text == "")
        burst(app, "ctrl+r", "ctrl+r", "left", *"!")
        await settled(pilot)
        assert composer.search is None and composer.text == "first promp!t"


# -- /model -----------------------------------------------------------------------------------


async def test_slash_model_opens_the_model_option_and_sets_it(engines: Engines) -> None:
    """`/model` typed and sent in one burst opens the model option alone, the current
    model highlighted; Down and Enter set the other one. `/model fast` sets it at once."""
    app = engines.app()
    async with app.run_test(size=SIZE):
        session = await ready(app)
        app.query_one(Composer).focus()
        burst(app, *"/model", "enter")
        await wait_until(lambda: isinstance(app.screen, OptionsScreen), what="the model dialog")
        screen = app.screen
        assert isinstance(screen, OptionsScreen) and screen.title_text == "Model"
        assert [c.label for c in screen.choices] == ["Model: Fast", "Model: Smart"]
        burst(app, "down", "enter")
        await wait_until(lambda: "model: Smart" in str(app.query_one("#status").render()))
        burst(app, *"/model fast", "enter")
        await wait_until(lambda: "model: Fast" in str(app.query_one("#status").render()))
        assert not [r for r in await app.engine.rows(session) if r.kind == "user"]


async def test_slash_model_without_a_model_option_says_where_the_options_are(
    engines: Engines,
) -> None:
    with_tiny_agent(engines.home)
    app = engines.app(agent="tiny")
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        app.query_one(Composer).focus()
        burst(app, *"/model", "enter")
        await settled(pilot)
        assert not isinstance(app.screen, OptionsScreen)
        notices = [str(n.message) for n in app._notifications]
        assert any("offers no model" in n and "Ctrl+T" in n for n in notices)
        assert not [r for r in await app.engine.rows(session) if r.kind == "user"]


# -- an agent's command that shares a Cockpit name --------------------------------------------


async def test_double_slash_sends_the_agents_command_that_cockpit_would_hide(
    engines: Engines,
) -> None:
    """An agent that announces `/help` (as gemini does): completing `/hel` lists Cockpit's
    `/help` and the agent's as `//help`; `//help` sent reaches the agent as `/help`, while
    `/help` still opens Cockpit's help."""
    with_tiny_agent(engines.home, "--commands", "help,stats")
    app = engines.app(agent="tiny")
    async with app.run_test(size=SIZE):
        session = await ready(app)
        await wait_until(lambda: bool(app.records[session].commands), what="the commands")
        composer = app.query_one(Composer)
        composer.focus()
        burst(app, *"/hel")
        menu = app.query_one(CompletionMenu)
        await wait_until(lambda: menu.display and menu.option_count == 2, what="the menu")
        labels = menu_labels(app)
        assert labels[0].startswith("/help ") and "cockpit: every key" in labels[0]
        assert labels[1].startswith("//help ") and "the agent's help" in labels[1]
        assert "cockpit:" not in labels[1]
        burst(app, "down", "tab", "enter")

        async def said() -> list[tuple[str, str]]:
            rows = await app.engine.rows(session)
            return [(r.kind, r.text) for r in rows if r.kind in ("user", "agent")]

        async def answered() -> bool:
            return len(await said()) == 2

        await wait_until(answered, what="the agent's reply")
        assert await said() == [("user", "/help"), ("agent", "command: /help")]
        assert not isinstance(app.screen, HelpScreen)
        burst(app, *"/help", "enter")
        await wait_until(lambda: isinstance(app.screen, HelpScreen), what="Cockpit's help")
        assert len([r for r in await app.engine.rows(session) if r.kind == "user"]) == 1
