"""Keys typed in the same burst as the new-session dialog's Enter (issue 33, "test as a
user types"): they belong to the new session, never to the dialog as it closes nor to the
session left behind. Against both engines."""

from __future__ import annotations

from cockpit.ui.composer import Composer
from cockpit.ui.screens.new_session import NewSessionScreen
from tests.support.ui_helpers import burst, ready, settled, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (80, 24)


async def test_a_prompt_typed_with_the_dialogs_enter_goes_to_the_new_session(
    engines: Engines,
) -> None:
    """Ctrl+N, then Enter, `tools` and Enter in one burst: the new session is sent
    `tools`; the session left keeps an empty composer and no prompt."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        await pilot.press("ctrl+n")
        await wait_until(lambda: isinstance(app.screen, NewSessionScreen), what="the dialog")
        burst(app, "enter", *"tools", "enter")
        await wait_until(lambda: len(app.records) == 2 and app.current not in (None, first))
        created = app.current or ""

        async def users(session: str) -> list[str]:
            rows = await app.engine.rows(session)
            return [row.text for row in rows if row.kind == "user"]

        for _ in range(200):
            if await users(created) == ["tools"]:
                break
            await pilot.pause(0.05)
        assert await users(created) == ["tools"]
        await settled(pilot)
        assert await users(first) == []
        assert app.drafts.get(first) == ""
        assert app.query_one(Composer).text == ""


async def test_letters_typed_with_the_dialogs_enter_wait_in_the_new_composer(
    engines: Engines,
) -> None:
    """Ctrl+N, then Enter and `abc` in one burst: `abc` is in the new session's
    composer."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        await pilot.press("ctrl+n")
        await wait_until(lambda: isinstance(app.screen, NewSessionScreen), what="the dialog")
        burst(app, "enter", *"abc")
        await wait_until(lambda: len(app.records) == 2 and app.current not in (None, first))
        composer = app.query_one(Composer)
        await wait_until(lambda: composer.text == "abc", what="abc in the new composer")
        await settled(pilot)
        assert composer.text == "abc" and app.current != first


async def test_an_enter_after_the_dialogs_esc_in_one_burst_leaves_the_keyboard_free(
    engines: Engines,
) -> None:
    """Ctrl+N, then Esc and Enter in one burst (the monkey found it): the Esc closed the
    dialog, so the Enter makes no session, and what is typed next reaches the prompt
    (the Enter held the keys for a session that never came)."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        await pilot.press("ctrl+n")
        await wait_until(lambda: isinstance(app.screen, NewSessionScreen), what="the dialog")
        burst(app, "escape", "enter")
        await wait_until(lambda: not isinstance(app.screen, NewSessionScreen), what="closed")
        await settled(pilot)
        composer = app.query_one(Composer)
        composer.focus()
        await pilot.pause()
        burst(app, *"zq")
        await wait_until(lambda: composer.text == "zq", what="zq in the prompt")
        assert list(app.records) == [first] and app.current == first


async def test_esc_typed_with_the_key_that_opens_a_dialog_closes_it_once_up(
    engines: Engines,
) -> None:
    """Ctrl+N, Esc and Enter in one burst: the dialog closes as soon as it is up (closed
    before its mount ended, it took the app down), and the Enter makes no session."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        burst(app, "ctrl+n", "escape", "enter")
        await settled(pilot)
        await wait_until(lambda: len(app.screen_stack) == 1, what="the dialog closed")
        assert app.is_running
        composer = app.query_one(Composer)
        composer.focus()
        await pilot.pause()
        burst(app, *"zq")
        await wait_until(lambda: composer.text == "zq", what="zq in the prompt")
        assert list(app.records) == [first]
