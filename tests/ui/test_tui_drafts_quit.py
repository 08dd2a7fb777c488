"""Ctrl+Q in one burst with typing, as a fast typist (or a slow link) delivers it: the
draft stored is what the keys before Ctrl+Q made of it, nothing typed after it, through
the service (Ctrl+Q detaches) and with the engine in the process (Ctrl+Q quits)."""

from __future__ import annotations

from cockpit.api import Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from tests.support.ui_helpers import burst, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (80, 24)


async def settled_session(engines: Engines, app: CockpitApp, reopened: bool) -> str:
    """The session on screen, once its draft is in the prompt and its agent is not
    starting (Ctrl+Q with the engine in the process would ask meanwhile): a new session's
    agent starts; with `--local`, a reopened session's starts with the next prompt."""
    status = Status.CLOSED if reopened and engines.kind == "local" else Status.READY

    def shown() -> bool:
        session = app.current
        return (
            session is not None
            and app.query_one(Composer).session == session
            and app.engine.status(session) == status
        )

    await wait_until(shown, what=f"the session shown, {status}")
    return app.current or ""


async def quit_with(engines: Engines, *keys: str, typed: str = "", reopened: bool = True) -> str:
    """Run an app until its session is settled, type `typed` a key at a time, then `keys`
    in one burst, and wait for the app to end; the session's id."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session = await settled_session(engines, app, reopened)
        await pilot.press(*typed)
        await pilot.pause()
        burst(app, *keys)
        await wait_until(lambda: not app.is_running, what="the app to end")
    return session


async def reopened_draft(engines: Engines, session: str) -> str:
    """The draft the next app shows, once it has checked the stored one says the same."""
    again = engines.app()
    async with again.run_test(size=SIZE):
        assert await settled_session(engines, again, reopened=True) == session
        stored = (await again.engine.session(session)).draft
        shown = again.query_one(Composer).text
        assert shown == stored
        return shown


async def test_keys_before_ctrl_q_in_its_burst_are_kept_and_none_after(
    engines: Engines,
) -> None:
    session = await quit_with(engines, *"abc", "ctrl+q", *"def", reopened=False)
    assert await reopened_draft(engines, session) == "abc"


async def test_a_draft_cleared_right_before_ctrl_q_stays_cleared(engines: Engines) -> None:
    """Ctrl+U then Ctrl+Q: the draft the user cleared does not come back, to be sent
    later by accident."""
    session = await quit_with(engines, "ctrl+q", typed="keep out", reopened=False)
    assert await reopened_draft(engines, session) == "keep out"
    await quit_with(engines, "ctrl+u", "ctrl+q")
    assert await reopened_draft(engines, session) == ""


async def test_a_draft_cleared_by_ctrl_c_then_quit_by_it_stays_cleared(
    engines: Engines,
) -> None:
    """Ctrl+C clears the prompt, and two more quit (when nothing runs): one burst."""
    session = await quit_with(engines, "ctrl+q", typed="typed", reopened=False)
    assert await reopened_draft(engines, session) == "typed"
    await quit_with(engines, "ctrl+c", "ctrl+c", "ctrl+c")
    assert await reopened_draft(engines, session) == ""


async def test_keys_that_reach_the_prompt_after_the_last_save_change_nothing_stored(
    engines: Engines,
) -> None:
    """The keys after Ctrl+Q in its burst may still reach the prompt while the app ends
    (its shutdown takes turns): they change neither the draft kept nor the one stored."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session = await settled_session(engines, app, reopened=False)
        await pilot.press(*"abc")
        app.drafts.close(lambda: None)  # the last save, the app left running
        await pilot.press(*"def")
        composer = app.query_one(Composer)
        await wait_until(lambda: composer.text == "abcdef", what="the keys after it typed")
        assert app.drafts.get(session) == "abc"
    assert await reopened_draft(engines, session) == "abc"
