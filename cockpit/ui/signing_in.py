"""`/login` and `/logout`: signing a session's agent in from the screen, and out.

A way that needs a key takes it in the sign-in dialog's masked field and hands it to the
engine for this session only. A terminal way runs the agent's own login in the user's
terminal, the screen handed over meanwhile (`App.suspend`, the screen's other work going
on unseen), when the agents run on this machine. When they run on another one, or this
terminal cannot be handed over, the engine runs the login there as a card in the session,
and the lines the user sends from the prompt are its input (a code a browser page shows).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from textual.app import SuspendNotSupported
from textual.notifications import SeverityLevel
from textual.screen import Screen

from cockpit.api import AgentSpec, EngineAPI, SignInMethod, StartError
from cockpit.text.command_line import readable_command
from cockpit.ui.screens.sign_in import SignInAnswer, SignInScreen

LOGIN_IN_CARD = (
    "The agent's login runs in the session, where the agents run. When it asks for a code, "
    "paste it in the prompt: Enter sends it to the login, not the agent. Esc stops it."
)
CANNOT_HAND_OVER = "cannot hand over"
"""`run_login`'s answer when this terminal cannot be handed to the login."""


class SigningTarget(Protocol):
    """What signing in asks of the app."""

    @property
    def engine(self) -> EngineAPI: ...

    agents_elsewhere: bool

    def notify(
        self,
        message: str,
        *,
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def open_screen(self, screen: Screen[Any], callback: Any = None) -> Awaitable[Any] | None: ...

    def suspend(self) -> AbstractContextManager[None]: ...

    def batch_update(self) -> AbstractContextManager[None]: ...

    def session_title(self, session: str) -> str: ...


async def run_login(
    app: SigningTarget, method: SignInMethod, spec: AgentSpec, cwd: str
) -> str | None:
    """Run a terminal way's login in the user's terminal, the screen handed over until it
    ends (in a thread: the engine's work in this process goes on meanwhile, and nothing is
    drawn over the login); None when it ran, else why not (`CANNOT_HAND_OVER`)."""
    command = method.login(spec.command)
    env = method.login_env(os.environ, spec.env)

    def login() -> int:
        print(f"Cockpit runs the agent's login: {readable_command(command)}\n", flush=True)
        return subprocess.run(command, cwd=cwd, env=env, check=False).returncode

    try:
        with app.batch_update(), app.suspend():
            try:
                code = await asyncio.to_thread(login)
            except OSError as error:
                return f"The login could not run: {error}"
    except SuspendNotSupported:
        return CANNOT_HAND_OVER
    return None if code == 0 else f"The agent's login ended with exit code {code}."


async def login_in_card(app: SigningTarget, session: str, method: SignInMethod) -> None:
    """Have the engine run the login where the agents run, as a card of the session."""
    try:
        await app.engine.run_login(session, method.id)
    except ValueError as error:
        app.notify(str(error), severity="error", markup=False)
        return
    app.notify(LOGIN_IN_CARD, timeout=10, markup=False)


def signed_in_with(app: SigningTarget, session: str) -> Callable[[SignInAnswer | None], Any]:
    """What the sign-in dialog's answer does: the login first for a terminal way, then
    the engine signs the agent in (it restarts, and the session says so)."""

    async def answered(answer: SignInAnswer | None) -> None:
        if answer is None:
            return
        if answer.method.kind == "terminal":
            if app.agents_elsewhere:
                await login_in_card(app, session, answer.method)
                return
            record = await app.engine.session(session)
            spec = app.engine.agent_of(record)
            refused = await run_login(app, answer.method, spec, record.cwd)
            if refused == CANNOT_HAND_OVER:
                await login_in_card(app, session, answer.method)
                return
            if refused is not None:
                app.notify(refused, severity="error", markup=False)
                return
        try:
            said = await app.engine.authenticate(session, answer.method.id, answer.values)
        except ValueError as error:
            app.notify(str(error), severity="error", markup=False)
            return
        except StartError:
            app.notify("Signing in failed: the session says why.", severity="error")
            return
        app.notify(said, timeout=3, markup=False)

    return answered


async def login(app: SigningTarget, session: str, arguments: str) -> None:
    """`/login`: the agent's ways, while it asks to sign in."""
    needed = await app.engine.sign_in(session)
    if needed is None:
        app.notify("This session's agent does not ask you to sign in now.", markup=False)
        return
    screen = SignInScreen(needed, app.session_title(session))
    mounted = app.open_screen(screen, signed_in_with(app, session))
    if mounted is not None:
        await mounted  # the keys typed behind `/login` go to the dialog, once it is up


async def logout(app: SigningTarget, session: str, arguments: str) -> None:
    """`/logout`: sign the agent out, where it offers that."""
    try:
        said = await app.engine.logout(session)
    except ValueError as error:
        app.notify(str(error), severity="warning", markup=False)
        return
    app.notify(said, timeout=3, markup=False)
