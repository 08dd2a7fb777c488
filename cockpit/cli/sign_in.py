"""Signing an agent in from `cockpit run`: on a terminal the user picks one of the agent's
ways, types a key unseen (it goes to this session's agent and nowhere else), or runs the
agent's own login; without a terminal the run says which ways the agent offers."""

from __future__ import annotations

import asyncio
import getpass
import os
import subprocess
import sys
from collections.abc import Callable

from cockpit.api import AgentSpec, EngineAPI, SignIn, SignInMethod, StartError
from cockpit.text.sanitize import printable

ATTEMPTS = 3
"""How many times `cockpit run` lets the user try to sign in before it gives up."""


def ways(sign_in: SignIn) -> str:
    """The agent's ways in one line, by name and id, for a run without a terminal."""
    listed = "; ".join(f"{m.name} ({m.id}, {m.kind})" for m in sign_in.methods) or "none"
    return (
        f"the agent asks you to sign in ({sign_in.message}); it offers: {listed}. Run "
        "`cockpit run` on a terminal, or use /login in `cockpit`"
    )


def read_answer(question: str) -> str:
    """One line typed on the terminal, the question on stderr (stdout may be a pipe);
    EOFError at the end of input."""
    sys.stderr.write(question)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def ask_number(sign_in: SignIn, read: Callable[[str], str] = read_answer) -> SignInMethod | None:
    """The way the user picks on the terminal (None: Enter, or the end of input)."""
    lines = [f"? The agent asks you to sign in ({sign_in.message}). It offers:"]
    lines += [f"  {n}. {method.label}" for n, method in enumerate(sign_in.methods, start=1)]
    sys.stderr.write(printable("\n" + "\n".join(lines) + "\n"))
    while True:
        try:
            answer = read("choose a number (Enter gives up): ").strip()
        except EOFError:
            return None
        if not answer:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(sign_in.methods):
            return sign_in.methods[int(answer) - 1]


def run_login(method: SignInMethod, spec: AgentSpec, cwd: str) -> int:
    """Run a `terminal` way's login (the agent's own command with its arguments) on this
    terminal, in the session's folder, with the user's environment and the way's own
    variables; its exit code."""
    env = {**os.environ, **spec.env, **(method.env or {})}
    try:
        return subprocess.run(method.login(spec.command), cwd=cwd, env=env, check=False).returncode
    except OSError as error:
        print(f"cockpit: the login could not run: {error}", file=sys.stderr)
        return 127


async def sign_in_on_terminal(
    engine: EngineAPI, session: str, sign_in: SignIn, *, here: bool
) -> bool:
    """Let the user sign the session's agent in on this terminal; True once it is. `here`
    is False when the agents run on another machine: a terminal login cannot run there."""
    for _ in range(ATTEMPTS):
        # The user types in a thread: the link to a service stays served meanwhile.
        method = await asyncio.to_thread(ask_number, sign_in)
        if method is None:
            return False
        values: dict[str, str] = {}
        if method.kind == "terminal":
            if not here:
                print(
                    "cockpit: this way runs the agent's login where the agents run, on the "
                    "other machine: run `cockpit run` there, or pick another way",
                    file=sys.stderr,
                )
                continue
            record = await engine.session(session)
            await asyncio.to_thread(run_login, method, engine.agent_of(record), record.cwd)
        for name in method.fields:
            question = f"{name} (not shown, kept for this session only): "
            values[name] = await asyncio.to_thread(getpass.getpass, question)
        try:
            print(
                f"cockpit: {await engine.authenticate(session, method.id, values)}", file=sys.stderr
            )
            return True
        except ValueError as error:
            print(f"cockpit: {printable(str(error))}", file=sys.stderr)
        except StartError as error:
            print(f"cockpit: {printable(str(error).splitlines()[0])}", file=sys.stderr)
        again = await engine.sign_in(session)
        if again is not None:
            sign_in = again
    return False
