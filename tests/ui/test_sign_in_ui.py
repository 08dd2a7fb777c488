"""Signing an agent in from the screen, typed as a user does (keys in bursts), against the
engine in the test's process and through a service: `/login`, Enter on the agent's way
and the key typed at once land in the masked field, the agent restarts signed in, and the
key is on no screen, in no draft, in no prompt history and in no file of the store."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input

from cockpit.api import AgentSpec, StartError, Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.screens.sign_in import SignInScreen
from tests.engine.test_engine_restart import TINY
from tests.support.ui_helpers import burst, focused_composer, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (80, 24)
SECRET = "sk-ui-2b6f0e9d41c7a358"
ASKING = AgentSpec("tiny", (sys.executable, TINY, "--auth", "env:TINY_KEY"), title="tiny")


def slash_command(app: CockpitApp, name: str, *then: str) -> None:
    """`/name`, Enter and the keys `then`, in one burst (a slash has no key name that
    Textual turns back into its character)."""
    app.post_message(events.Key("slash", "/"))
    burst(app, *name, "enter", *then)


def files_holding(folder: Path, secret: bytes) -> list[str]:
    return [
        str(path) for path in folder.rglob("*") if path.is_file() and secret in path.read_bytes()
    ]


async def asking_to_sign_in(app: CockpitApp) -> str:
    session, _ = await focused_composer(app, ready_first=False)
    await wait_until(lambda: app.engine.status(session) == Status.ERROR, what="the failed start")
    return session


async def test_login_with_a_key_typed_in_one_burst(engines: Engines) -> None:
    app = engines.app(agent=ASKING)
    async with app.run_test(size=SIZE) as pilot:
        session = await asking_to_sign_in(app)
        slash_command(app, "login", "enter", *SECRET, "enter")
        await wait_until(
            lambda: app.engine.status(session) == Status.READY, what="the agent signed in"
        )
        assert await app.engine.sign_in(session) is None
        assert not isinstance(app.screen, SignInScreen)
        rows = "\n".join(row.text for row in await app.engine.rows(session))
        assert "Signed in with Use TINY_KEY." in rows and SECRET not in rows
        assert all(SECRET not in box.value for box in app.query(Input))
        record = await app.engine.session(session)
        assert SECRET not in (record.draft or "")
        composer = app.query_one(Composer)
        assert composer.text == "" and all(SECRET not in e for e in composer.prompts.entries)
        await pilot.pause()
    assert files_holding(engines.home, SECRET.encode()) == []


async def test_login_when_the_agent_asks_nothing_says_so(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        await focused_composer(app)
        slash_command(app, "login")
        await wait_until(
            lambda: any(
                "does not ask you to sign in" in str(n.message) for n in app._notifications
            ),
            what="the notice",
        )
        await pilot.pause()


async def test_logout_typed_in_a_burst_signs_the_agent_out(engines: Engines) -> None:
    spec = AgentSpec(
        "tiny",
        (sys.executable, TINY, "--auth", "env:TINY_KEY", "--caps", "logout"),
        title="tiny",
    )
    app = engines.app(agent=spec)
    async with app.run_test(size=SIZE) as pilot:
        session = await asking_to_sign_in(app)
        slash_command(app, "login", "enter", *SECRET, "enter")
        await wait_until(lambda: app.engine.status(session) == Status.READY, what="signed in")
        slash_command(app, "logout")
        await wait_until(
            lambda: any("Signed out" in str(n.message) for n in app._notifications),
            what="the notice",
        )
        rows = "\n".join(row.text for row in await app.engine.rows(session))
        assert "Signed out: the agent asks you to sign in again" in rows
        await app.engine.stop(session)  # signed out, the agent asks again as it starts
        with pytest.raises(StartError):
            await app.engine.start(session)
        await pilot.pause()


async def test_a_terminal_login_in_a_card_takes_the_code_typed_in_the_prompt(
    engines: Engines,
) -> None:
    """A terminal that cannot be handed over (as here, headless; or agents on another
    machine): the login runs as a card of the session, and the code typed in the prompt
    goes to it in the same burst as its Enter, never to the agent, the prompt history, a
    draft or a row."""
    code = "TINY-5d0c-e2a8"
    spec = AgentSpec(
        "tiny",
        (sys.executable, TINY, "--auth", "terminal"),
        title="tiny",
        env={"TINY_LOGIN_CODE": code},
    )
    app = engines.app(agent=spec)
    async with app.run_test(size=SIZE) as pilot:
        session = await asking_to_sign_in(app)
        slash_command(app, "login", "enter")
        await wait_until(
            lambda: app.shell.reads_input(session), what="the login waiting for the code"
        )
        status = app.query_one("#status")
        await wait_until(
            lambda: "sends your line to the login" in str(status.render()), what="the status"
        )
        burst(app, *code, "enter")
        await wait_until(
            lambda: app.engine.status(session) == Status.READY, what="the agent signed in"
        )
        rows = await app.engine.rows(session)
        login = next(row for row in rows if row.kind == "shell")
        assert "paste the code it shows" in login.text and "logged in" in login.text
        assert code not in "\n".join(row.text for row in rows)
        composer = app.query_one(Composer)
        assert composer.text == "" and all(code not in e for e in composer.prompts.entries)
        assert code not in ((await app.engine.session(session)).draft or "")
        assert not app.shell.reads_input(session)
        await pilot.pause()
    assert files_holding(engines.home, code.encode()) == []


async def test_a_blank_enter_reaches_a_login_that_waits(engines: Engines) -> None:
    """A login may ask for Enter alone ("press Enter to go on"): a blank prompt's Enter goes
    to it too (here it takes it for a wrong code, and ends)."""
    spec = AgentSpec(
        "tiny",
        (sys.executable, TINY, "--auth", "terminal"),
        title="tiny",
        env={"TINY_LOGIN_CODE": "right"},
    )
    app = engines.app(agent=spec)
    async with app.run_test(size=SIZE) as pilot:
        session = await asking_to_sign_in(app)
        slash_command(app, "login", "enter")
        await wait_until(lambda: app.shell.reads_input(session), what="the login waiting")
        burst(app, "enter")
        await wait_until(lambda: not app.shell.reads_input(session), what="the login ended")
        rows = await app.engine.rows(session)
        login = next(row for row in rows if row.kind == "shell")
        assert "That code is wrong" in login.text
        assert await app.engine.sign_in(session) is not None
        await pilot.pause()
