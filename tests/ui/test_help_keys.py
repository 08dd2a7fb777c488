"""F1 says what Ctrl+Q does in this Cockpit: attached to the service it detaches (the
agents go on), with the agents in Cockpit (`--local`) it quits. It said "quit" in both."""

from __future__ import annotations

from collections import defaultdict

from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.help import HelpScreen
from tests.support.screen_colours import screen_cells
from tests.support.ui_helpers import ready, wait_until
from tests.support.ui_service_helpers import Engines


def screen_lines(app: CockpitApp) -> list[str]:
    """The screen's text, one string a line."""
    rows: dict[int, list[str]] = defaultdict(list)
    for cell in screen_cells(app):
        rows[cell.y].append(cell.char)
    return ["".join(rows[y]).rstrip() for y in sorted(rows)]


async def test_f1_says_what_ctrl_q_does_here(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(app)
        await pilot.press("f1")
        await wait_until(lambda: isinstance(app.screen, HelpScreen), what="the help")
        await pilot.pause()
        assert any("again, as Ctrl+Q" in line for line in screen_lines(app))
        app.screen.query_one("#dialog").scroll_end(animate=False, immediate=True)
        await pilot.pause()
        (line,) = [line for line in screen_lines(app) if "Ctrl+Q" in line and "again" not in line]
        if engines.kind == "local":
            assert "quit: every agent stops" in line
        else:
            assert "detach: the agents go on in the Cockpit" in line
