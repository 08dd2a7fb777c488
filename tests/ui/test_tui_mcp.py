"""`/mcp`, typed as a user does, against the engine in the test's process and through a
service: once the agent opened its session, the servers it was handed (the plan tool, and
the user's from `mcp.toml`) and those left out with why; Esc closes it."""

from __future__ import annotations

from cockpit.paths import config_dir
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.reading import TextScreen
from tests.support.ui_helpers import burst, focused_composer, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (100, 30)


def shown(app: CockpitApp) -> str:
    """The text of the text screen on top, if one is."""
    screen = app.screen
    return screen.text if isinstance(screen, TextScreen) else ""


async def test_slash_mcp_lists_what_the_agent_was_handed(engines: Engines) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "mcp.toml").write_text(
        '[servers.files]\ncommand = "files-mcp"\n\n'
        '[servers.events]\nurl = "https://events.example.com/sse"\ntransport = "sse"\n'
    )
    app = engines.app()
    async with app.run_test(size=SIZE):
        await focused_composer(app)  # the agent is ready: it opened its session
        burst(app, *"/mcp", "enter")
        await wait_until(lambda: "Handed to the agent" in shown(app), what="/mcp's list")
        assert shown(app).splitlines() == [
            "Handed to the agent:",
            "  cockpit-plan (stdio)",
            "  files (stdio)",
            "",
            "Left out:",
            "  events (sse): this agent takes no SSE servers",
        ]
        burst(app, "escape")
        await wait_until(lambda: not isinstance(app.screen, TextScreen))
