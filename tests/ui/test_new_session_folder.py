"""The new-session dialog's folder, completed as a shell completes a path (issue 33, item
8): Tab completes as far as the folders agree (one whole, with its `/`) and moves on when
there is nothing to complete; the first folder that fits shows greyed (Right or End takes
it) and the line under the field lists them; `~` is the home where the agents run. The
folders are the engine's, so the keys come in bursts, against both engines, and a slow
answer never holds a key back. A folder the engine refuses opens the dialog again on it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.widgets import Button

from cockpit.ui.app import CockpitApp
from cockpit.ui.folder_field import FolderCandidates, FolderField, FolderLookup
from cockpit.ui.screens.new_session import NewSessionScreen
from tests.support.ui_helpers import (
    burst,
    handled_so_far,
    make_app,
    ready,
    settled,
    wait_until,
)
from tests.support.ui_service_helpers import Engines

SIZE = (80, 24)


@pytest.fixture
def place(tmp_path: Path) -> Path:
    """Folders `cockpit`, `cockroach`, `docs` and a hidden `.git`, a file `notes.txt`."""
    folder = tmp_path / "place"
    for name in ("cockpit", "cockroach", "docs", ".git"):
        (folder / name).mkdir(parents=True)
    (folder / "notes.txt").write_text("a file")
    return folder


@pytest.fixture
def home_is_place(place: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME is `place`: for the engine in this process, and for a service started after it
    (a test asks for it before `engines`)."""
    monkeypatch.setenv("HOME", str(place))
    return place


async def folder_field(app: CockpitApp) -> FolderField:
    """Ctrl+N and Tab, in one burst: the dialog's folder field, focused."""
    burst(app, "ctrl+n", "tab")
    return await dialog_at_folder(app)


async def dialog_at_folder(app: CockpitApp) -> FolderField:
    """The dialog's folder field, once the dialog is up with it focused."""

    def focused() -> bool:
        screen = app.screen
        return isinstance(screen, NewSessionScreen) and isinstance(screen.focused, FolderField)

    await wait_until(focused, what="the dialog, at its folder")
    return app.screen.query_one("#folder", FolderField)


def candidates(app: CockpitApp) -> str:
    """The line under the folder field, as shown ('' when it is not)."""
    line = app.screen.query_one(FolderCandidates)
    return line.render().plain.strip() if line.display else ""


async def test_tab_completes_a_folder_typed_in_a_burst(engines: Engines, place: Path) -> None:
    """The path and Tab in one burst (the folders are not listed yet when Tab comes): it
    completes as far as `cockpit` and `cockroach` agree; then `p` and Tab complete it
    whole, with its `/`; Enter creates the session there."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        field = await folder_field(app)
        burst(app, *f"{place}/c", "tab")
        await wait_until(lambda: field.value == f"{place}/cock", what="the shared start")
        await wait_until(lambda: candidates(app) == "cockpit/  cockroach/", what="the line")
        assert field.has_focus and field.cursor_position == len(field.value)
        burst(app, "p", "tab")
        await wait_until(lambda: field.value == f"{place}/cockpit/", what="the whole folder")
        burst(app, "enter")
        await wait_until(lambda: len(app.records) == 2 and app.current not in (None, first))
        assert app.records[app.current or ""].cwd == str(place / "cockpit")
        await ready(app)
        await pilot.pause()


async def test_what_is_typed_after_tab_lands_in_the_folder(engines: Engines, place: Path) -> None:
    """Ctrl+N, Tab, a path and Tab in one burst, as a user who knows the dialog types
    them: the path lands in the folder field (Tab from the list moved on before the keys
    behind it came), and is completed."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        burst(app, "ctrl+n", "tab", *f"{place}/c", "tab")
        field = await dialog_at_folder(app)
        await wait_until(lambda: field.value == f"{place}/cock", what="the path completed")
        await pilot.pause()


async def test_tab_with_nothing_to_complete_moves_on(engines: Engines, place: Path) -> None:
    """Tab where the folders agree no further, or where none fits (a file taken for a
    folder), moves to the next control as before: no error, nothing changed."""
    app = engines.app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(app)
        field = await folder_field(app)
        burst(app, *f"{place}/cock", "tab")
        create = app.screen.query_one("#create", Button)
        await wait_until(lambda: create.has_focus, what="Tab to move on")
        assert field.value == f"{place}/cock"
        burst(app, "shift+tab")
        await wait_until(lambda: field.has_focus, what="Shift+Tab back to the folder")
        burst(app, "ctrl+u", *f"{place}/notes.txt/", "tab")
        await wait_until(
            lambda: field.value == f"{place}/notes.txt/" and create.has_focus,
            what="the path typed, and Tab to move on",
        )
        await settled(pilot)
        assert candidates(app) == ""
        assert not app._notifications
        assert isinstance(app.screen, NewSessionScreen)


async def test_the_first_folder_shows_greyed_and_right_or_end_takes_it(
    engines: Engines, place: Path
) -> None:
    """As it is typed, the first folder that fits is suggested after the text; End (or
    Right, at the end) takes it whole. Hidden folders only once a dot is typed."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        field = await folder_field(app)
        burst(app, *f"{place}/d")
        await settled(pilot)
        assert candidates(app) == "docs/"
        burst(app, "end")
        await settled(pilot)
        assert field.value == f"{place}/docs/"
        burst(app, "ctrl+u", *f"{place}/cockr")
        await settled(pilot)
        assert candidates(app) == "cockroach/"
        burst(app, "right")
        await settled(pilot)
        assert field.value == f"{place}/cockroach/"
        burst(app, "ctrl+u", *f"{place}/")
        await wait_until(lambda: candidates(app).startswith("cockpit/"), what="the line")
        assert candidates(app) == "cockpit/  cockroach/  docs/"
        burst(app, ".")
        await wait_until(lambda: candidates(app) == ".git/", what="the hidden folder")
        await pilot.pause()


async def test_the_home_is_the_one_where_the_agents_run(
    home_is_place: Path, engines: Engines, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~` completes to the home folder and `~/...` within it, shown as typed; the session
    is created in the folder it names. With a service, the screen's own home is another
    folder (as over `--remote`): the service's is the one that counts."""
    if engines.kind == "service":
        (tmp_path / "screen-home").mkdir()
        monkeypatch.setenv("HOME", str(tmp_path / "screen-home"))
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        field = await folder_field(app)
        burst(app, "~", "tab")
        await wait_until(lambda: field.value == "~/", what="the home")
        burst(app, "d", "tab")
        await wait_until(lambda: field.value == "~/docs/", what="a folder in the home")
        burst(app, "enter")
        await wait_until(lambda: len(app.records) == 2 and app.current not in (None, first))
        assert app.records[app.current or ""].cwd == str(home_is_place / "docs")
        await ready(app)
        await pilot.pause()


async def test_a_relative_path_is_under_the_folder_the_dialog_opened_with(
    engines: Engines,
) -> None:
    """A path that starts neither at `/` nor at `~` is under the folder Cockpit was
    opened on (the one the field shows first), not the engine's own working folder."""
    (engines.project / "subdir-a").mkdir(parents=True)
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        field = await folder_field(app)
        burst(app, *"su", "tab")
        await wait_until(lambda: field.value == "subdir-a/", what="the relative folder")
        burst(app, "enter")
        await wait_until(lambda: len(app.records) == 2 and app.current not in (None, first))
        assert app.records[app.current or ""].cwd == str(engines.project / "subdir-a")
        await ready(app)
        await pilot.pause()


async def test_a_folder_the_engine_refuses_opens_the_dialog_again_on_it(
    engines: Engines, place: Path
) -> None:
    """Whether the folder is one is the engine's to say (it is on the agents' machine): a
    folder that is not there creates nothing, says so, and the dialog is back with what
    was typed, at the folder, to fix it."""
    app = engines.app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(app)
        await folder_field(app)
        burst(app, *f"{place}/nowhere", "enter")
        await wait_until(
            lambda: any("is not a folder" in str(n.message) for n in app._notifications),
            what="the refusal",
        )
        field = await dialog_at_folder(app)
        assert field.value == f"{place}/nowhere"
        assert len(app.records) == 1
        burst(app, "backspace", "backspace", "backspace", "backspace", "tab")
        await wait_until(lambda: field.value == f"{place}/nowhere"[:-4], what="no change")
        await pilot.pause()


async def test_an_engine_that_cannot_answer_lists_nothing() -> None:
    """The link to the service cut, or a service without the call: no folders, no error
    (completion has nothing to offer; the dialog goes on)."""

    async def cut(partial: str) -> list[str]:
        raise ConnectionError("the connection to the Cockpit service was cut")

    lookup = FolderLookup(cut, "/home/u")
    assert await lookup.names("/home/u/pro") == []
    assert lookup.known("/home/u/pro") == []
    assert lookup.known("/home/u/p") is None


# -- a slow engine (in process: the answer is held back by the test) ---------------------


def held_back(
    ask: Callable[[str], Awaitable[list[str]]],
) -> tuple[asyncio.Event, Callable[[str], Awaitable[list[str]]]]:
    """`ask`, answering only once the event is set."""
    gate = asyncio.Event()

    async def slow(partial: str) -> list[str]:
        await gate.wait()
        return await ask(partial)

    return gate, slow


async def test_a_slow_answer_holds_no_key_back_and_is_dropped_when_the_text_changed(
    tmp_path: Path, place: Path
) -> None:
    """Tab then a letter in one burst while the folders are not listed: the letter is in
    at once, and the completion that comes later is dropped (the text is not the one it
    completes). With the text unchanged, the completion comes with the answer."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        field = await folder_field(app)
        screen = app.screen
        assert isinstance(screen, NewSessionScreen)
        gate, screen.lookup.ask = held_back(screen.lookup.ask)
        burst(app, *f"{place}/c", "tab", "x")
        await handled_so_far(app, rounds=5)  # every key handled; the answer held back
        assert field.value == f"{place}/cx" and field.has_focus
        gate.set()
        await settled(pilot)
        assert field.value == f"{place}/cx" and field.has_focus
        gate.clear()
        burst(app, "backspace", "tab")
        await handled_so_far(app, rounds=5)
        assert field.value == f"{place}/c"
        gate.set()
        await wait_until(lambda: field.value == f"{place}/cock", what="the late completion")


async def test_a_burst_asks_the_engine_about_the_text_it_leaves(
    tmp_path: Path, place: Path
) -> None:
    """A path typed in one burst asks for the folders of the text it ends with, not of
    each key's: over `--remote` each question crosses the link."""
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        await folder_field(app)
        screen = app.screen
        assert isinstance(screen, NewSessionScreen)
        asked: list[str] = []
        ask = screen.lookup.ask

        async def counted(partial: str) -> list[str]:
            asked.append(partial)
            return await ask(partial)

        screen.lookup.ask = counted
        burst(app, *f"{place}/cockr")
        await settled(pilot)
        assert asked == [f"{place}/cockr"]
        assert candidates(app) == "cockroach/"
