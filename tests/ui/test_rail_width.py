"""The rail and the terminal's width, while a reply streams: below 80 columns the rail hides
by itself, Ctrl+B shows it and hides it again, and a terminal grown back to 80 or more
shows it again unless the user hid it. Through the service and in process."""

from __future__ import annotations

from cockpit.api import Status
from cockpit.ui.composer import Composer
from cockpit.ui.rail import SessionRail
from tests.support.ui_helpers import burst, ready, send, wait_until
from tests.support.ui_service_helpers import Engines, screen_equals_rows

STREAM_END = 60.0


async def test_the_rail_follows_the_width_mid_stream_unless_the_user_chose(
    engines: Engines,
) -> None:
    app = engines.app()
    async with app.run_test(size=(100, 30)) as pilot:
        session = await ready(app)
        rail = app.query_one(SessionRail)
        composer = app.query_one(Composer)
        await send(app, pilot, "slow")
        await wait_until(lambda: app.engine.status(session) == Status.WORKING, what="the turn")

        await pilot.resize_terminal(60, 24)
        await wait_until(lambda: not rail.display, what="the rail hidden at 60 columns")
        assert app.focused is composer

        burst(app, "ctrl+b")  # shown on request, compact
        await wait_until(lambda: rail.display and rail.region.width == 22, what="the rail")
        burst(app, "ctrl+b", "ctrl+b", "ctrl+b")  # hidden, shown, hidden
        await wait_until(lambda: not rail.display, what="the rail hidden again")

        await pilot.resize_terminal(100, 30)  # the user hid it where it hides anyway
        await wait_until(lambda: rail.display, what="the rail back at 100 columns")
        burst(app, "ctrl+b")  # hidden where it would show: the user's choice
        await wait_until(lambda: not rail.display, what="the rail hidden by the user")
        await pilot.resize_terminal(60, 24)
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert not rail.display

        burst(app, "ctrl+b", *"still typing")
        await wait_until(lambda: rail.display, what="the rail shown by the user")
        assert composer.text == "still typing"

        rail.focus()  # shown again where it shows anyway: the width decides once more
        await wait_until(lambda: app.focused is rail, what="the keyboard on the rail")
        await pilot.resize_terminal(70, 24)
        await wait_until(lambda: not rail.display, what="the rail hidden at 70 columns")
        await pilot.pause()
        assert app.focused is composer
        assert app.engine.status(session) == Status.WORKING, "the reply ended: nothing tested"
        await wait_until(lambda: app.engine.status(session) == Status.READY, STREAM_END)
        await screen_equals_rows(app, session)
