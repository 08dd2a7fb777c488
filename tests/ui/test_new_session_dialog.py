"""The new-session dialog: every agent listed with how to install the missing ones, one
Enter creates the session, and the whole dialog fits 80x24. Pilot tests drive the real
app, store and demo agent; the pure rules are tested apart."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from textual import events
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList

from cockpit.api import AgentSpec
from cockpit.compat.textual_private import terminal_driver
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.screens.new_session import (
    NEW_SESSION_ROWS,
    AgentDetail,
    NewSessionScreen,
    agent_detail,
    agent_line,
    agent_order,
    clamped,
    list_height,
)
from tests.engine.test_engine_restart import TINY
from tests.support.ui_helpers import local, make_app, ready, wait_until

LONG_DESCRIPTION = " ".join(["An agent with a very long description that goes on."] * 12)
LONG_INSTALL = "curl -fsSL https://example.invalid/a/very/long/path/to/the/installer.sh | sh"


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH is one empty folder: which agents are installed is the same on every machine
    (the bundled demo and Claude run by path with this interpreter; the others are
    missing)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


def user_agents(tmp_path: Path, text: str) -> None:
    config = tmp_path / "home" / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "agents.toml").write_text(text)


def press_fast(app: CockpitApp, *keys: str) -> None:
    """Keys as a terminal delivers them when the user types quickly: all of them queued
    at once, no waiting for the app between them (Pilot's `press` waits)."""
    driver = terminal_driver(app)
    assert driver is not None
    for key in keys:
        driver.process_message(events.Key(key, "\r" if key == "enter" else None))


def dialog(app: CockpitApp) -> NewSessionScreen:
    screen = app.screen
    assert isinstance(screen, NewSessionScreen)
    return screen


def fully_shown(app: CockpitApp, widget: Widget) -> bool:
    """The whole widget is on the screen and nothing covers or clips it."""
    region = widget.region
    if region.area == 0 or not app.screen.region.contains_region(region):
        return False
    corners = [(region.x, region.y), (region.right - 1, region.bottom - 1)]
    return all(
        app.screen.get_widget_at(x, y)[0] in (widget, *widget.walk_children()) for x, y in corners
    )


# -- the pure rules -----------------------------------------------------------------------


def spec(name: str, **fields: object) -> AgentSpec:
    return AgentSpec(name=name, command=(name,), **fields)  # type: ignore[arg-type]


def test_every_agent_is_listed_installed_ones_first_in_registry_order() -> None:
    agents = [spec("a"), spec("b"), spec("c"), spec("d")]
    ordered = agent_order(agents, {"b": True, "d": True})
    assert [a.name for a in ordered] == ["b", "d", "a", "c"]


def test_a_missing_agent_is_marked_and_its_install_command_comes_first() -> None:
    codex = spec("codex", title="Codex", description="Needs a key.", install="npm i -g codex")
    assert agent_line(codex, False, 8).plain == "Codex     not installed"
    assert agent_line(codex, True, 8).plain == "Codex     codex"
    missing = agent_detail(codex, ready=False).plain.splitlines()
    assert missing == [
        "Not installed. To install it (F3 copies this):",
        "npm i -g codex",
        "Needs a key.",
    ]
    refused = agent_detail(codex, ready=False, refused=True).plain.splitlines()
    assert refused[0] == "Install it first (F3 copies this), then press Enter again:"
    assert refused[1] == "npm i -g codex"
    assert agent_detail(codex, ready=True).plain == "Needs a key."
    assert agent_detail(spec("mine"), ready=False).plain.splitlines()[1] == "mine was not found."


def test_a_title_longer_than_its_column_is_cut() -> None:
    line = agent_line(spec("x", title="A title far too long"), True, 8)
    assert line.plain == "A title…  x"


@given(
    text=st.text(alphabet=st.sampled_from("ab 界\n…"), max_size=300),
    width=st.integers(1, 80),
    lines=st.integers(1, 6),
)
def test_a_clamped_detail_never_has_more_lines_or_cells_than_its_room(
    text: str, width: int, lines: int
) -> None:
    content = Content(text)
    shown = clamped(content, width, lines).plain.split("\n")
    wrapped = [line.plain for line in content.wrap(width)]
    assert len(shown) <= lines
    assert all(cell_len(line) <= max(width, 1) for line in shown)
    if len(wrapped) <= lines:
        assert shown == wrapped
    else:
        assert shown[:-1] == wrapped[: lines - 1]
        assert shown[-1].endswith("…")


def test_the_list_takes_what_the_rest_of_the_dialog_leaves() -> None:
    assert list_height(24, 7) == 7
    assert list_height(24, 30) == 24 - NEW_SESSION_ROWS
    assert list_height(12, 7) == 3


# -- the dialog ----------------------------------------------------------------------------


async def test_enter_on_the_list_creates_the_session_at_once(
    tmp_path: Path, bare_path: Path
) -> None:
    """Ctrl+N then Enter, typed in one go (both keys queued before the dialog is up): a
    new demo session in the start folder, and the Enter never reaches the prompt behind
    the dialog, whose draft stays unsent."""
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        first = await ready(app)
        app.query_one(Composer).text = "a draft"
        press_fast(app, "ctrl+n", "enter")
        await wait_until(lambda: len(app.records) == 2 and app.current not in (None, first))
        created = app.records[app.current or ""]
        assert created.agent == "demo"
        assert created.cwd == str(app.folder)
        assert not isinstance(app.screen, NewSessionScreen)
        await ready(app)
        await pilot.pause()
        assert [row.kind for row in await app.engine.rows(first)] == []


async def test_the_folder_is_one_tab_away_and_enter_there_creates(
    tmp_path: Path, bare_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        first = await ready(app)
        await pilot.press("ctrl+n", "tab")
        folder = dialog(app).query_one("#folder", Input)
        assert folder.has_focus and folder.value == str(app.folder)
        folder.value = str(other)
        await pilot.press("enter")
        await wait_until(lambda: len(app.records) == 2 and app.current not in (None, first))
        assert app.records[app.current or ""].cwd == str(other)
        await ready(app)


async def test_a_missing_agent_is_refused_in_the_dialog_until_it_is_installed(
    tmp_path: Path, bare_path: Path
) -> None:
    """Enter on an agent that is not installed creates nothing and says so in the dialog,
    next to the install command (F3 copies it); installed meanwhile, Enter creates."""
    user_agents(
        tmp_path,
        '[agents.mine]\ntitle = "Mine"\ncommand = ["mine-acp"]\n'
        'install = "pip install mine-acp"\ndescription = "My own agent."\n',
    )
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        first = await ready(app)
        await pilot.press("ctrl+n")
        screen = dialog(app)
        agents = screen.query_one("#agents", OptionList)
        names = [spec.name for spec in screen.agents]
        assert names[:2] == ["demo", "claude"]  # installed first
        assert set(names) == set(local(app).registry.agents)  # and every other one
        agents.highlighted = names.index("mine")
        await pilot.pause()
        detail = screen.query_one(AgentDetail).detail.plain
        assert "Not installed" in detail and "pip install mine-acp" in detail
        await pilot.press("enter")
        assert isinstance(app.screen, NewSessionScreen)
        assert "Install it first" in screen.query_one(AgentDetail).detail.plain
        assert len(app.records) == 1
        await pilot.press("f3")
        assert app.clipboard == "pip install mine-acp"
        program = bare_path / "mine-acp"
        program.write_text(f'#!/bin/sh\nexec {sys.executable} {TINY} "$@"\n')
        program.chmod(0o755)
        await pilot.press("enter")
        await wait_until(lambda: len(app.records) == 2 and app.current not in (None, first))
        assert app.records[app.current or ""].agent == "mine"
        await ready(app)


async def test_the_whole_dialog_fits_80x24_whatever_the_agent_highlighted(
    tmp_path: Path, bare_path: Path
) -> None:
    """Every agent highlighted in turn, the missing ones also after a refused Enter, with
    a user agent whose description and install command are very long: the list, the
    detail, the folder and both buttons stay on the screen."""
    user_agents(
        tmp_path,
        f'[agents.long]\ntitle = "A long one"\ncommand = ["long-acp"]\n'
        f'install = "{LONG_INSTALL}"\ndescription = "{LONG_DESCRIPTION}"\n',
    )
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app)
        await pilot.press("ctrl+n")
        screen = dialog(app)
        agents = screen.query_one("#agents", OptionList)
        parts: list[Widget] = [
            agents,
            screen.query_one(AgentDetail),
            screen.query_one("#folder", Input),
            *screen.query(Button),
        ]
        for index, agent in enumerate(screen.agents):
            agents.highlighted = index
            await pilot.pause()
            for refused in (False, True):
                if refused:
                    if screen._ready(agent):
                        continue
                    await pilot.press("enter")
                hidden = [part for part in parts if not fully_shown(app, part)]
                assert not hidden, (agent.name, refused, hidden)
            assert agents.scrollable_content_region.height == len(screen.agents)
