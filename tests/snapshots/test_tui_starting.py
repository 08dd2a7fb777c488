"""While an agent starts, the status line says for how long ("starting (12 s)"), counting
up each second, and nothing ticks once no agent starts. The agent is the tiny test agent
sleeping before it answers `initialize`."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.status_line import StatusLine
from tests.engine.test_engine_restart import TINY
from tests.snapshots.test_tui_snapshots import project_of
from tests.support.ui_helpers import make_app, repaints_done, wait_until
from tests.support.ui_service_helpers import ENGINES, Engines, engines_of

Snap = Callable[..., bool]


def slow_agent(home: Path, sleep: float) -> None:
    """Register `slow`: the tiny agent, sleeping `sleep` seconds before it answers."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, TINY, "--start", f"sleep={sleep:g}"]
    quoted = ", ".join(f'"{part}"' for part in command)
    (config / "agents.toml").write_text(f'[agents.slow]\ntitle = "Slow"\ncommand = [{quoted}]\n')


def turn_shown(app: CockpitApp) -> str:
    """What the status line says the session is doing (its first piece)."""
    parts = app.query_one("#status", StatusLine).parts
    return parts[0][0] if parts else ""


def test_a_slow_agent_starting_at_80x24(snap_compare: Snap, tmp_path: Path) -> None:
    """The first session's agent takes its time: the status line says it is starting and
    for how long (the app's clock is fixed: 0 s), the rail marks it starting."""
    slow_agent(tmp_path / "home", 300)
    app = make_app(tmp_path, project_of(tmp_path), agent="slow")

    async def starting(pilot: Any) -> None:
        await wait_until(lambda: turn_shown(app) == "starting (0 s)", 30, "the start shown")
        await repaints_done(app)
        for _ in range(3):
            await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=starting)


@pytest.fixture(params=ENGINES)
async def engines(
    request: pytest.FixtureRequest,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Engines]:
    monkeypatch.delenv("COCKPIT_LOCAL", raising=False)
    slow_agent(isolated_home, 6)
    async with engines_of(str(request.param), isolated_home, tmp_path / "project") as made:
        yield made


async def test_the_count_goes_up_while_the_agent_starts_and_stops_after(
    engines: Engines,
) -> None:
    now = [1_800_000_000.0]
    app = engines.app(agent="slow")
    app.clock = lambda: now[0]
    async with app.run_test(size=(100, 30)):
        await wait_until(lambda: turn_shown(app) == "starting (0 s)", 30, "the start shown")
        assert app.overview.counting_starts
        now[0] += 7
        await wait_until(lambda: turn_shown(app) == "starting (7 s)", 5, "the next second")
        now[0] += 1
        await wait_until(lambda: turn_shown(app) == "starting (8 s)", 5, "the one after")
        session = app.current
        assert session is not None
        # The start ends: the agent is up (or, on a machine too busy for the test engine's
        # 15 s, it failed); either way nothing counts any more.
        ended = (Status.READY, Status.ERROR)
        await wait_until(lambda: app.engine.status(session) in ended, 60, "the start's end")
        await wait_until(lambda: not turn_shown(app).startswith("starting"), 5, "the end shown")
        assert not app.overview.counting_starts, "a timer ticks with nothing starting"
        assert app.overview.starting() == {}
