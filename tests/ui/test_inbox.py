"""The inbox as a user works it: a digit answers the highlighted question, Up moves, Enter
opens the session of the row highlighted, whatever the list did meanwhile; and each
question shows what its keys answer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual.app import App
from textual.widgets import OptionList

from cockpit.api import PermissionRequest
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.inbox import InboxItem, InboxScreen, preview
from cockpit.ui.transcript import TranscriptView
from tests.support.ui_helpers import burst, ready, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (80, 24)


async def asking(app: CockpitApp, titles: tuple[str, ...]) -> list[asyncio.Task[object]]:
    """Besides the session on screen (which asks nothing), a session per title, each
    asked the demo's `permission`, in that order; the turns, waiting on their questions."""
    await ready(app)
    sessions = []
    for title in titles:
        sessions.append((await app.engine.create_session("demo", app.folder, title=title)).id)
    await app.sessions.reload()
    turns: list[asyncio.Task[object]] = []
    for count, session in enumerate(sessions, 1):
        turns.append(asyncio.create_task(app.engine.prompt(session, "permission")))
        await wait_until(lambda: len(app.engine.pending_permissions()) == count)  # noqa: B023
    return turns


async def open_inbox(app: CockpitApp, pilot: object) -> tuple[InboxScreen, OptionList]:
    await pilot.press("ctrl+o")  # type: ignore[attr-defined]
    await wait_until(lambda: isinstance(app.screen, InboxScreen), what="the inbox")
    inbox = app.screen
    assert isinstance(inbox, InboxScreen)
    return inbox, inbox.query_one("#inbox-items", OptionList)


async def stopped(app: CockpitApp, turns: list[asyncio.Task[object]]) -> None:
    for record in app.sessions.ordered():
        await app.engine.cancel(record.id)
    await asyncio.wait_for(asyncio.gather(*turns, return_exceptions=True), 15)


async def opened(app: CockpitApp, home: str) -> None:
    """Until the inbox has closed on another session than `home`, and shows it."""
    await wait_until(lambda: not isinstance(app.screen, InboxScreen), what="the inbox gone")
    await wait_until(
        lambda: app.current != home and app.query_one(TranscriptView).session == app.current,
        what="a session opened",
    )


def titles_of(inbox: InboxScreen) -> list[str]:
    return [item.session_title for item in inbox.items if item.request is not None]


@pytest.mark.parametrize("paced", [False, True], ids=["one burst", "with pauses"])
async def test_answer_up_enter_opens_the_row_shown(engines: Engines, paced: bool) -> None:
    """`3` answers beta (the middle row) and the highlight moves on to gamma; Up goes to
    alpha, and Enter opens alpha: typed in one burst, or with a pause after each key."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        home = await ready(app)
        turns = await asking(app, ("alpha", "beta", "gamma"))
        by_title = {record.title: record.id for record in app.sessions.ordered()}
        inbox, listing = await open_inbox(app, pilot)
        assert titles_of(inbox) == ["alpha", "beta", "gamma"]
        await pilot.press("down")
        await wait_until(lambda: listing.highlighted == 1)
        if paced:
            await pilot.press("3")
            await wait_until(lambda: titles_of(inbox) == ["alpha", "gamma"], what="beta gone")
            await pilot.pause(0.2)
            assert inbox.items[listing.highlighted or 0].session_title == "gamma"
            await pilot.press("up")
            await pilot.pause(0.2)
            assert inbox.items[listing.highlighted or 0].session_title == "alpha"
            await pilot.press("enter")
        else:
            burst(app, "3", "up", "enter")
        await opened(app, home)
        assert app.current == by_title["alpha"]
        assert [
            r.text for r in await app.engine.rows(by_title["beta"]) if r.kind == "permission"
        ] == ["Rejected: Write demo-notes.md"]
        await stopped(app, turns)


def question(session: str, created: float) -> InboxItem:
    """The demo's `permission` question, as the inbox lists it."""
    request = PermissionRequest(
        f"q-{session}",
        session,
        {"toolCallId": f"call-{session}", "kind": "edit", "title": "Write demo-notes.md"},
        tuple(
            {"optionId": option_id, "name": name, "kind": kind}
            for option_id, name, kind in DEMO_OPTIONS
        ),
        created=created,
    )
    return InboxItem(session, session, created, request)


DEMO_OPTIONS = (
    ("allow", "Allow once", "allow_once"),
    ("allow-always", "Always allow", "allow_always"),
    ("reject", "Reject", "reject_once"),
)


class InboxHost(App[None]):
    """The inbox over an empty screen, listing `waiting` as it is when read."""

    def __init__(self, waiting: list[InboxItem]) -> None:
        super().__init__()
        self.waiting = waiting
        self.opened: list[str | None] = []

    def on_mount(self) -> None:
        async def answer(request: PermissionRequest, option_id: str) -> None:
            self.waiting[:] = [i for i in self.waiting if i.request is not request]

        async def answer_form(
            request: PermissionRequest, action: str, content: dict[str, Any] | None
        ) -> str | None:
            raise AssertionError("no form here")

        screen = InboxScreen(lambda: list(self.waiting), answer, answer_form, lambda: 60.0)
        self.push_screen(screen, self.opened.append)


async def test_enter_opens_the_row_it_was_pressed_on_though_rows_moved_since() -> None:
    """Enter on gamma; before the inbox handles it, the list is read again and alpha's
    row has gone (its turn was cancelled): gamma opens, not the row now in gamma's
    place (nor nothing, when gamma's old place is past the end)."""
    waiting = [question(title, n) for n, title in enumerate(("alpha", "beta", "gamma"))]
    app = InboxHost(waiting)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: isinstance(app.screen, InboxScreen))
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        listing = inbox.query_one("#inbox-items", OptionList)
        await pilot.press("down", "down")
        assert inbox.items[listing.highlighted or 0].session == "gamma"
        listing.action_select()  # Enter, handled: the selection is on its way
        del waiting[0]
        inbox.refresh_items()  # the engine's news, read before the inbox gets it
        await pilot.pause()
        assert app.opened == ["gamma"]


async def test_a_finished_turn_in_the_row_s_old_place_does_not_open_instead() -> None:
    """As above, and a turn finished meanwhile is listed third, where gamma was: still
    gamma opens."""
    waiting = [question(title, n) for n, title in enumerate(("alpha", "beta", "gamma"))]
    app = InboxHost(waiting)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: isinstance(app.screen, InboxScreen))
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        listing = inbox.query_one("#inbox-items", OptionList)
        await pilot.press("down", "down")
        listing.action_select()
        waiting[:] = [waiting[1], waiting[2], InboxItem("delta", "delta", 5.0)]
        inbox.refresh_items()
        await pilot.pause()
        assert app.opened == ["gamma"]


def test_the_preview_says_whose_question_and_what_each_key_answers() -> None:
    shown = preview(question("beta", 1.0)).plain
    assert shown.splitlines() == [
        "beta asks: Write demo-notes.md",
        " 1  Allow once   2  Always allow   3  Reject",
    ]
    assert preview(InboxItem("s1", "alpha", 1.0)).plain == "alpha finished a turn: Enter opens it."
