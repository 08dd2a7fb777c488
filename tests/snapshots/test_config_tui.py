"""The TUI and config edited while it runs, against the engine in its process and against a
real service started before the edit: an agent added to `agents.toml` opens at once
(`cockpit DIR --agent NAME`, the palette), a removed one stops being offered, what is wrong
with the engine's config is shown at start, and `settings.json` is saved one key at a time
into the file as it is on disk, and read when a setting is used."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from cockpit.engine.core import Engine
from cockpit.ui.alert_sequences import notification
from cockpit.ui.app import CockpitApp
from tests.snapshots.test_tui_snapshots import one_existing_session, project_of, settle
from tests.support.ui_helpers import NOW, fill_now, make_app, ready, wait_until
from tests.support.ui_service_helpers import ENGINES, Engines, engines_of

SIZE = (100, 30)

BENCH = '[agents.bench]\ncommand = ["{python}", "{agents}/demo_agent.py"]\ntitle = "Bench"\n'
OTHER = '[agents.other]\ncommand = ["{python}", "{agents}/demo_agent.py"]\ntitle = "Other"\n'


@pytest.fixture(params=ENGINES)
async def engines(
    request: pytest.FixtureRequest,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Engines]:
    """Apps on the test's home, of the parametrized kind (a service starts first)."""
    monkeypatch.delenv("COCKPIT_LOCAL", raising=False)
    (isolated_home / "config").mkdir(parents=True, exist_ok=True)
    async with engines_of(str(request.param), isolated_home, tmp_path / "project") as made:
        yield made


def messages(app: CockpitApp) -> list[str]:
    return [str(notice.message) for notice in app._notifications]


def offered(app: CockpitApp) -> set[str]:
    return {info.spec.name for info in app.engine.agents()}


async def test_an_agent_added_while_cockpit_runs_is_known_at_once(engines: Engines) -> None:
    agents = engines.home / "config" / "agents.toml"
    agents.write_text(BENCH)  # after the service started
    app = engines.app(agent="bench")
    async with app.run_test(size=SIZE, notifications=True):
        await ready(app)
        assert app.records[app.current or ""].agent == "bench", messages(app)
        agents.write_text(OTHER)
        await wait_until(lambda: offered(app) >= {"other"} and "bench" not in offered(app))
        await app.new_session_with("other")
        await ready(app)
        assert app.records[app.current or ""].agent == "other", messages(app)


async def test_an_unknown_agent_is_said_plainly(engines: Engines) -> None:
    app = engines.app(agent="nope")
    async with app.run_test(size=SIZE, notifications=True):
        await wait_until(lambda: bool(messages(app)), what="a notice")
        assert any(m.startswith("no agent called 'nope'; known agents:") for m in messages(app))
        assert not any(record.agent == "nope" for record in app.records.values())


async def test_what_is_wrong_with_the_engines_config_is_shown_at_start(engines: Engines) -> None:
    policy = engines.home / "config" / "policy.toml"
    policy.write_text('[permissions]\nedit = "allwo"\n')  # after the service started
    app = engines.app()
    async with app.run_test(size=SIZE, notifications=True):
        await wait_until(lambda: bool(messages(app)), what="a notice")
        assert messages(app) == [
            f"{policy}:2: edit = 'allwo'; use one of allow, ask, reject (the default rules "
            "apply: anything that changes something is asked)"
        ]


def test_the_new_session_dialog_offers_an_agent_added_while_cockpit_runs(
    snap_compare: Callable[..., bool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """agents.toml gains an agent after the screen opened: Ctrl+N lists it, installed."""
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # the same agents missing everywhere
    home = tmp_path / "home"
    project = project_of(tmp_path)
    fill_now(home, lambda engine: one_existing_session(engine, project))
    (home / "config").mkdir(exist_ok=True)

    async def reading_config() -> Engine:
        return await Engine.open(home, config=home / "config", clock=lambda: NOW)

    app = make_app(tmp_path, project, engine=reading_config)

    async def add_then_open(pilot: Any) -> None:
        await settle(pilot)
        (home / "config" / "agents.toml").write_text(
            BENCH + 'description = "The demo agent, added while Cockpit ran"\n'
        )
        await pilot.press("ctrl+n")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=add_then_open)


# -- settings.json ----------------------------------------------------------------------------------


def app_on(home: Path, project: Path) -> CockpitApp:
    return Engines("local", home, project).app()


async def test_a_hand_edit_survives_a_theme_saved_by_the_tui(
    isolated_home: Path, project_dir: Path
) -> None:
    settings = isolated_home / "config" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"notify": false, "mine": 1}')
    app = app_on(isolated_home, project_dir)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        # by hand, or by another Cockpit, while this one runs
        settings.write_text('{"notify": false, "mine": 2, "tool_cards": "always"}')
        app.theme = "cockpit-light"
        await pilot.pause()
        assert json.loads(settings.read_text()) == {
            "notify": False,
            "mine": 2,
            "tool_cards": "always",
            "theme": "cockpit-light",
        }


async def test_a_settings_file_that_does_not_parse_is_not_overwritten(
    isolated_home: Path, project_dir: Path
) -> None:
    settings = isolated_home / "config" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    app = app_on(isolated_home, project_dir)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(app)
        broken = '{\n  "notify": false,\n  "theme": \n}'
        settings.write_text(broken)
        app.theme = "cockpit-light"
        await pilot.pause()
        app.theme = "cockpit-dark"
        await pilot.pause()
        assert settings.read_text() == broken
        assert app.theme == "cockpit-dark", "the choice is kept in memory"
        told = [m for m in messages(app) if str(settings) in m]
        assert told == [
            f"{settings}:4: not valid JSON: Expecting value (the settings read before stay "
            "in force)"
        ]


async def test_a_setting_edited_by_hand_counts_without_a_restart(
    isolated_home: Path, project_dir: Path
) -> None:
    settings = isolated_home / "config" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    app = app_on(isolated_home, project_dir)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        session = app.current or ""
        app.app_focus = False
        sent = notification("hello", "finished a turn", in_tmux=False)

        def notified() -> int:
            return sum(sequence.startswith(sent[:4]) for sequence in app.sent_sequences)

        app.alerts.alert(session, "finished a turn")
        assert notified() == 1
        settings.write_text('{"notify": false}')
        app.alerts.alert(session, "finished a turn")
        await pilot.pause()
        assert notified() == 1, "a notification though settings.json says notify: false"
