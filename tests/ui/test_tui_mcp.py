"""`/mcp`, typed as a user does, against the engine in the test's process and through a
service: once the agent opened its session, the servers it was handed (the plan tool, the
user's from `mcp.toml`, the repository's) and those left out with why; Esc closes it.
`/mcp approve` approves the repository's."""

from __future__ import annotations

from pathlib import Path

from cockpit.paths import config_dir
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.questions import ConfirmScreen
from cockpit.ui.screens.reading import TextScreen
from tests.support.git_repos import make_repo
from tests.support.ui_helpers import burst, focused_composer, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (100, 30)
HELPER = '[mcp.servers.helper]\ncommand = "helper-mcp"\nargs = ["--quiet"]\n'


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


async def test_slash_mcp_approve_hands_the_repository_s_servers(
    engines: Engines, tmp_path: Path
) -> None:
    """A repository's server is left out until `/mcp approve` shows it whole and the user
    says yes; the idle agent is then started again, and handed it."""
    repo = make_repo(tmp_path / "repo", {".cockpit.toml": HELPER, "README.md": "hi\n"})
    app = engines.app(repo)
    async with app.run_test(size=SIZE):
        await focused_composer(app)
        burst(app, *"/mcp", "enter")
        await wait_until(lambda: "Left out" in shown(app), what="/mcp's list")
        assert shown(app).splitlines()[-1] == (
            "  helper, the repository's (stdio): not approved yet: `/mcp approve`, or"
            " `cockpit approve` in the repository"
        )
        burst(app, "escape", *"/mcp approve", "enter")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.details[0] == '• helper: command "helper-mcp" args ["--quiet"]'
        burst(app, "y")
        await wait_until(
            lambda: any("started again" in str(n.message) for n in app._notifications),
            what="the approval",
        )
        burst(app, *"/mcp", "enter")
        await wait_until(lambda: "Handed to the agent" in shown(app), what="/mcp's list")
        assert "  helper, the repository's (stdio)" in shown(app).splitlines()
        assert "Left out" not in shown(app)
