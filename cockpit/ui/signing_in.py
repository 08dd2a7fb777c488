"""`/login` and `/logout`: signing a session's agent in from the screen, and out.

A way that needs a key takes it in the sign-in dialog's masked field and hands it to the
engine for this session only. A terminal way runs the agent's own login in the user's
terminal, the screen handed over meanwhile (`App.suspend`), on this machine only: when
the agents run on another one, the user is told to sign in there.
"""

from __future__ import annotations

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

LOGIN_ELSEWHERE = (
    "This way runs the agent's own login where the agents run, on another machine: run "
    "`cockpit` there to sign in, or pick another way."
)


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

    def session_title(self, session: str) -> str: ...


def run_login(app: SigningTarget, method: SignInMethod, spec: AgentSpec, cwd: str) -> str | None:
    """Run a terminal way's login in the user's terminal, the screen handed over until it
    ends; None when it ran, else why not."""
    if app.agents_elsewhere:
        return LOGIN_ELSEWHERE
    command = method.login(spec.command)
    env = {**os.environ, **spec.env, **(method.env or {})}
    try:
        with app.suspend():
            print(f"Cockpit runs the agent's login: {readable_command(command)}\n", flush=True)
            try:
                code = subprocess.run(command, cwd=cwd, env=env, check=False).returncode
            except OSError as error:
                return f"The login could not run: {error}"
    except SuspendNotSupported:
        return (
            "This terminal cannot be handed over to the agent's login: run `cockpit run` "
            "in a terminal to sign in."
        )
    return None if code == 0 else f"The agent's login ended with exit code {code}."


def signed_in_with(app: SigningTarget, session: str) -> Callable[[SignInAnswer | None], Any]:
    """What the sign-in dialog's answer does: the login first for a terminal way, then
    the engine signs the agent in (it restarts, and the session says so)."""

    async def answered(answer: SignInAnswer | None) -> None:
        if answer is None:
            return
        if answer.method.kind == "terminal":
            record = await app.engine.session(session)
            refused = run_login(app, answer.method, app.engine.agent_of(record), record.cwd)
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
