"""A form the agent asks, answered in the TUI as a user types: every kind of field filled
in one burst of keys (Tab between fields, Space to tick, Enter to send), Esc to cancel, a
value the form refuses said in the form, a secret typed masked, and forms of several
sessions in the inbox. Through the engine in process and the service (`engines`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from textual.widgets import Input, OptionList, Static

from cockpit.form_rules import MASK
from cockpit.ui.app import CockpitApp
from cockpit.ui.form_prompt import FormPrompt
from cockpit.ui.screens.inbox import InboxScreen, preview
from tests.support.ui_helpers import burst, ready, send, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (100, 40)


async def form_on_screen(app: CockpitApp) -> FormPrompt:
    """The form the session on screen asks, once its first field has the keyboard."""
    await wait_until(lambda: len(app.query(FormPrompt)) == 1, 30, "the form")
    prompt = app.query_one(FormPrompt)
    await wait_until(
        lambda: bool(prompt.parts()) and app.focused is prompt.parts()[0], 15, "the first field"
    )
    return prompt


async def agent_said(app: CockpitApp, session: str, text: str) -> str:
    """The agent's last reply once it holds `text`."""
    found = ""

    async def said() -> bool:
        nonlocal found
        rows = [r for r in await app.engine.rows(session) if r.kind == "agent"]
        found = rows[-1].text if rows else ""
        return text in found

    for _ in range(300):
        if await said():
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"the agent never said {text!r}: {found!r}")


async def test_every_kind_of_field_filled_in_one_burst(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "form")
        prompt = await form_on_screen(app)
        token = prompt.query_one("#field-1", Input)
        assert token.password, "a field named like a secret is masked"
        burst(
            app,
            *["backspace"] * 4, "a", "t", "l", "a", "s", "tab",  # name: "demo" -> "atlas"
            "s", "3", "c", "r", "e", "t", "tab",                 # api_token
            "backspace", "8", "tab",                              # workers: 4 -> 8
            "0", ".", "5", "tab",                                 # ratio
            "space", "tab",                                       # tests: yes -> no
            "down", "space", "tab",                               # licence: Apache
            "down", "space",                                      # targets: + macos
            "enter",
        )  # fmt: skip
        said = await agent_said(app, session, '"workers": 8}')  # the whole reply
        content = json.loads(said.split("Form answered: ")[1])
        assert content == {
            "api_token": "<6 characters>",
            "licence": "apache",
            "name": "atlas",
            "ratio": 0.5,
            "targets": ["linux", "macos"],
            "tests": False,
            "workers": 8,
        }
        await wait_until(lambda: not app.query(FormPrompt), 15, "the form gone")
        rows = [r for r in await app.engine.rows(session) if r.kind == "permission"]
        assert f"api_token={MASK}" in rows[-1].text and "s3cret" not in rows[-1].text


async def test_esc_cancels_the_form(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "form")
        await form_on_screen(app)
        burst(app, "x", "escape")
        said = await agent_said(app, session, "Form cancel.")
        assert said.endswith("Form cancel.")
        await wait_until(lambda: not app.query(FormPrompt), 15, "the form gone")


async def test_a_value_the_form_refuses_is_said_and_the_form_stays(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "form")
        prompt = await form_on_screen(app)
        burst(app, "tab", "tab", "backspace", "9", "9", "enter")  # workers: 99 > 16
        problem = prompt.query_one(".problem", Static)
        await wait_until(lambda: "Workers is at most 16" in str(problem.render()), 15)
        assert app.engine.first_pending(session) is not None
        burst(app, "backspace", "enter")  # 9 fits, but no licence is chosen yet
        await wait_until(lambda: "Licence is required" in str(problem.render()), 15)
        burst(app, "tab", "tab", "tab", "space", "enter")  # the first licence
        said = await agent_said(app, session, '"workers": 9}')
        assert '"licence": "mit"' in said and '"licence": "mit"' in said


async def open_inbox_with_two_forms(app: CockpitApp, pilot: Any) -> tuple[str, str, InboxScreen]:
    """Two sessions, one asking the demo's form and the other its link; the inbox open."""
    first = await ready(app)
    second = (await app.engine.create_session("demo", app.folder, title="beta")).id
    await app.sessions.reload()
    for session, word in ((first, "form"), (second, "link")):
        app.engine.send(session, word)
        await wait_until(lambda: app.engine.first_pending(session) is not None, 30, word)  # noqa: B023
    await pilot.press("ctrl+o")
    await wait_until(lambda: isinstance(app.screen, InboxScreen), 15, "the inbox")
    assert isinstance(app.screen, InboxScreen)
    return first, second, app.screen


async def test_forms_of_two_sessions_are_filled_in_the_inbox(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=(80, 24)) as pilot:
        first, second, inbox = await open_inbox_with_two_forms(app, pilot)
        assert [item.session for item in inbox.items] == [first, second]  # oldest first
        shown = [str(preview(item)) for item in inbox.items]
        assert "asks you to fill this in" in shown[0] and "open a link" in shown[1]
        await wait_until(lambda: len(inbox.query(FormPrompt)) == 1, 15, "the form shown")
        # Enter goes into the highlighted form; its fields are filled in the same burst
        burst(app, "enter", *["tab"] * 5, "space", "enter")  # the first licence
        said = await agent_said(app, first, '"workers": 4}')
        assert '"licence": "mit"' in said
        await wait_until(lambda: [i.session for i in inbox.items] == [second], 15, "one left")
        assert app.screen is inbox, "answering a form keeps the inbox open"
        # the link: into it with Tab, and Enter says it was opened
        await wait_until(lambda: len(inbox.query(FormPrompt)) == 1, 15, "the link shown")
        burst(app, "tab", "enter")
        assert (await agent_said(app, second, "Signed in.")).endswith("Signed in.")
        await wait_until(lambda: not any(i.request for i in inbox.items), 15, "none asks")
        await wait_until(lambda: not inbox.query(FormPrompt), 15, "the link gone")
        assert isinstance(app.focused, OptionList), "the keyboard is back on the list"


async def test_the_last_form_answered_in_the_inbox_leaves_nothing_behind(
    engines: Engines,
) -> None:
    app = engines.app()
    async with app.run_test(size=(80, 24)) as pilot:
        session = await ready(app)
        await send(app, pilot, "form")
        await form_on_screen(app)
        await pilot.press("ctrl+o")
        await wait_until(lambda: isinstance(app.screen, InboxScreen), 15, "the inbox")
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        await wait_until(lambda: len(inbox.query(FormPrompt)) == 1, 15, "the form shown")
        burst(app, "enter", *["tab"] * 5, "space", "enter")
        assert '"licence": "mit"' in await agent_said(app, session, '"workers": 4}')
        await wait_until(lambda: not inbox.items, 15, "nothing waits")
        await wait_until(lambda: not inbox.query(FormPrompt), 15, "the form gone")
        assert not inbox.query_one("#inbox-form").display
        assert isinstance(app.focused, OptionList)


async def test_esc_in_a_form_in_the_inbox_cancels_it_and_o_opens_a_session(
    engines: Engines,
) -> None:
    app = engines.app()
    async with app.run_test(size=(80, 24)) as pilot:
        first, second, inbox = await open_inbox_with_two_forms(app, pilot)
        await wait_until(lambda: len(inbox.query(FormPrompt)) == 1, 15, "the form shown")
        burst(app, "enter", "x", "o", "escape")  # "xo" typed in its first field, then Esc
        assert (await agent_said(app, first, "Form cancel.")).endswith("Form cancel.")
        await wait_until(lambda: [i.session for i in inbox.items] == [second], 15, "one left")
        assert app.screen is inbox, "Esc in the form cancels the form, not the inbox"
        burst(app, "o")
        await wait_until(lambda: not isinstance(app.screen, InboxScreen), 15, "the inbox closed")
        await wait_until(lambda: app.sessions.current == second, 15, "its session on screen")
        await form_on_screen(app)  # the link waits in its session, the keyboard on it


async def test_a_link_is_copied_never_opened_and_enter_says_it_was(engines: Engines) -> None:
    app = engines.app()
    opened: list[str] = []
    app.open_url = lambda url, **kwargs: opened.append(url)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "link")
        await form_on_screen(app)
        burst(app, "c")
        await wait_until(lambda: app.clipboard == "https://example.com/demo/sign-in", 15)
        burst(app, "enter")
        said = await agent_said(app, session, "Signed in.")
        assert said.endswith("Signed in.") and opened == []
