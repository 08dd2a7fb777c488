"""A first start: the transcript's space says what Cockpit is and what to do first (the
keys, the demo's scenario words, how to run another agent), and the prompt has a
placeholder. Nothing of it is stored, and it goes once the session has a message. Through
the service and with the engine in process."""

from __future__ import annotations

from cockpit.agentkit.scenarios import read_scenarios
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.transcript import TranscriptView
from cockpit.ui.welcome import PLACEHOLDER, Welcome
from tests.support.ui_helpers import burst, focused_composer, wait_until
from tests.support.ui_service_helpers import Engines


def welcome_shown(app: CockpitApp) -> str:
    """The welcome's text while it is on screen, else ""."""
    welcome = app.query_one(Welcome)
    return str(welcome.render()) if welcome.display else ""


async def test_a_first_start_welcomes_until_the_first_message(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=(80, 24)) as pilot:
        session, composer = await focused_composer(app)
        await wait_until(lambda: welcome_shown(app), what="the welcome")
        shown = welcome_shown(app)
        for key in ("Enter", "Ctrl+O", "F1", "Ctrl+N"):
            assert key in shown
        words = list(read_scenarios())
        assert " ".join(words) in " ".join(shown.split())  # every word, in the file's order
        assert composer.placeholder == PLACEHOLDER
        assert await app.engine.rows(session) == []  # the welcome is no row
        # typed as a burst: the letters and Enter, no pause between them
        burst(app, *"think", "enter")
        await wait_until(lambda: not welcome_shown(app), what="the welcome gone")
        await wait_until(lambda: app.query_one(TranscriptView).model, what="the prompt shown")
        assert composer.placeholder == ""
        await pilot.pause()
        rows = await app.engine.rows(session)
        assert rows and rows[0].kind == "user" and rows[0].text == "think"
        assert all("Ctrl+O" not in row.text for row in rows)


async def test_a_session_with_messages_shows_no_welcome(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await focused_composer(app)
        burst(app, *"hello", "enter")
        await wait_until(lambda: not welcome_shown(app), what="the welcome gone")
    again = engines.app()
    async with again.run_test(size=(80, 24)) as pilot:
        await focused_composer(again, ready_first=False)
        await wait_until(lambda: again.query_one(TranscriptView).model, what="the rows read")
        await pilot.pause()
        assert not welcome_shown(again)
        assert again.query_one(Composer).placeholder == ""
