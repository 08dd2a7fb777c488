"""The same pictures through a Cockpit service: the app attached over the socket to a real
`cockpit service` on the store (a `RemoteEngine`), each scene the one its in-process test
pictures, each picture equal to the in-process one, byte for byte.

Only scenes of stored rows are pictured here: their times are stamped when the store is
filled (the tests' fixed clock), so a service, whose clock is the real one, shows them as
the engine in process does. A scene where the engine stamps something new while it is
pictured (a session it creates, frames it streams) stays in process."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import EngineAPI
from cockpit.engine.core import Engine
from cockpit.remote.engine import RemoteEngine
from cockpit.ui.app import CockpitApp
from tests.bench.service_procs import ServiceProcess
from tests.snapshots.test_tui_snapshots import (
    AppMaker,
    Snap,
    a_reply_on_the_page_edge,
    conversation,
    expand_the_thought,
    new_session_dialog,
    page_in_the_reply,
    project_of,
    runs_beside_a_session,
    settle,
    show_the_rail,
    thought_session,
    three_statuses,
)
from tests.support.ui_helpers import fill_now, make_app

SNAPSHOTS = Path(__file__).parent / "__snapshots__"
IN_PROCESS = SNAPSHOTS / "test_tui_snapshots"
THROUGH_THE_SERVICE = SNAPSHOTS / "test_service_snapshots"


@pytest.fixture
def served() -> Iterator[AppMaker]:
    """Makes apps attached to a service on their test's store, filled first; stops every
    service it started when the test ends."""
    services: list[ServiceProcess] = []

    def make(tmp_path: Path, build: Callable[[Engine, Path], Any]) -> CockpitApp:
        project = project_of(tmp_path)
        home = tmp_path / "home"
        fill_now(home, lambda engine: build(engine, project))
        service = ServiceProcess(home)
        services.append(service)
        asyncio.run(service.start())
        connect = service.connector()

        async def attach() -> EngineAPI:
            return await RemoteEngine.attach(connect, name="snapshots")

        return make_app(tmp_path, project, engine=attach)

    try:
        yield make
    finally:
        for service in services:
            asyncio.run(service.stop())


def test_a_small_terminal(snap_compare: Snap, tmp_path: Path, served: AppMaker) -> None:
    """A turn with a table, a tool call and a permission decision, at 80x24."""
    app = served(tmp_path, conversation())
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


def test_a_thought_expanded(snap_compare: Snap, tmp_path: Path, served: AppMaker) -> None:
    app = served(tmp_path, thought_session())
    assert snap_compare(app, terminal_size=(100, 24), run_before=expand_the_thought)


def test_sessions_with_different_statuses(
    snap_compare: Snap, tmp_path: Path, served: AppMaker
) -> None:
    """The rail's statuses and unread marks come from the service's state."""
    app = served(tmp_path, three_statuses)
    assert snap_compare(app, terminal_size=(100, 24), run_before=show_the_rail)


def test_runs_on_a_small_terminal(snap_compare: Snap, tmp_path: Path, served: AppMaker) -> None:
    """The mark of a run comes with the session's record over the wire."""
    app = served(tmp_path, runs_beside_a_session)
    assert snap_compare(app, terminal_size=(80, 24), run_before=show_the_rail)


def test_an_earlier_page_with_a_message_straddling_the_edge(
    snap_compare: Snap, tmp_path: Path, served: AppMaker
) -> None:
    """The earlier page read over the wire joins the tail page as it does in process."""
    app = served(tmp_path, a_reply_on_the_page_edge)
    assert snap_compare(app, terminal_size=(100, 30), run_before=page_in_the_reply)


def test_the_new_session_dialog(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, served: AppMaker
) -> None:
    """The agents the dialog lists, installed or not, are the service's."""
    assert new_session_dialog(snap_compare, tmp_path, (100, 30), monkeypatch, make=served)


PICTURES = (
    test_a_small_terminal,
    test_a_thought_expanded,
    test_sessions_with_different_statuses,
    test_runs_on_a_small_terminal,
    test_an_earlier_page_with_a_message_straddling_the_edge,
    test_the_new_session_dialog,
)


def test_each_picture_through_the_service_is_the_one_in_process() -> None:
    """The pictures this module keeps are copies of the in-process ones: a screen drawn
    through the service differs from the screen drawn in process in nothing."""
    pictures = sorted(THROUGH_THE_SERVICE.glob("*.svg"))
    assert {picture.name for picture in pictures} == {f"{t.__name__}.svg" for t in PICTURES}
    for picture in pictures:
        twin = IN_PROCESS / picture.name
        assert twin.read_text() == picture.read_text(), f"{picture.name} differs in process"
