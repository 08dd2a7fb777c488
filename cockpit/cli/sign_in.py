"""Signing an agent in from `cockpit run`: on a terminal the user picks one of the agent's
ways, types a key unseen (it goes to this session's agent and nowhere else), or runs the
agent's own login (here, or where the agents run when that is another machine: its output
printed here, the lines typed here its input); without a terminal the run says which ways
the agent offers."""

from __future__ import annotations

import asyncio
import getpass
import os
import subprocess
import sys
from collections.abc import Callable

from cockpit.api import (
    AgentSpec,
    EngineAPI,
    ShellRun,
    SignIn,
    SignInMethod,
    StartError,
    Status,
    read_shell_run,
)
from cockpit.text.sanitize import printable
from cockpit.text.textout import shell_ending

ATTEMPTS = 3
"""How many times `cockpit run` lets the user try to sign in before it gives up."""
POLL = 0.1
"""Seconds between two looks at a login that runs where the agents run."""
SIGN_IN_WAIT = 120.0
"""Seconds a login that ended well may take to sign the agent in (it restarts)."""


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
    env = method.login_env(os.environ, spec.env)
    try:
        return subprocess.run(method.login(spec.command), cwd=cwd, env=env, check=False).returncode
    except OSError as error:
        print(f"cockpit: the login could not run: {error}", file=sys.stderr)
        return 127


class TypedLines:
    """The lines typed on this terminal, as they come, without a thread: one blocked in a
    read would keep the run from ending until the next Enter."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._buffer = b""
        self.lines: list[str] = []
        self._fd = sys.stdin.fileno()
        self._loop.add_reader(self._fd, self._read)

    def _read(self) -> None:
        try:
            data = os.read(self._fd, 4096)
        except OSError:
            data = b""
        if not data:  # the end of input: nothing more comes
            self.close()
            return
        self._buffer += data
        *complete, self._buffer = self._buffer.split(b"\n")
        self.lines += [line.decode("utf-8", "replace").rstrip("\r") for line in complete]

    def take(self) -> list[str]:
        taken, self.lines = self.lines, []
        return taken

    def close(self) -> None:
        self._loop.remove_reader(self._fd)


async def login_there(engine: EngineAPI, session: str, method: SignInMethod) -> bool:
    """Run a terminal way's login where the agents run: what it prints shows here as it
    comes, and each line typed here is its input (a code a browser page shows). True once
    it ended well and the agent signed in."""
    key = await engine.run_login(session, method.id)
    print("cockpit: the agent's login runs where the agents run:", file=sys.stderr)
    typed = TypedLines()
    shown = ""
    try:
        while True:
            for line in typed.take():
                await engine.send_input(session, line)
            row = await engine.row(session, key)
            text = row.text if row is not None else ""
            new = text[len(shown) :] if text.startswith(shown) else text
            if new:
                sys.stderr.write(printable(new))
                sys.stderr.flush()
            shown = text
            run = read_shell_run(row.payload) if row is not None else None
            if isinstance(run, ShellRun) and not run.running:
                break
            await asyncio.sleep(POLL)
    finally:
        typed.close()
    if run.state != "exited" or run.exit_code != 0:
        ending = shell_ending(run)
        print(f"cockpit: the agent's login ended ({ending}): nothing signed in", file=sys.stderr)
        return False
    return await signed_in_after_login(engine, session)


async def signed_in_after_login(engine: EngineAPI, session: str) -> bool:
    """Wait while the engine signs the agent in after its login: True once it asks no
    more; False once it failed again (it started, then stopped in error)."""
    restarted = False
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SIGN_IN_WAIT
    while loop.time() < deadline:
        if await engine.sign_in(session) is None:
            return True
        if engine.status(session) != Status.ERROR:
            restarted = True
        elif restarted:
            return False
        await asyncio.sleep(POLL)
    return False


async def sign_in_on_terminal(
    engine: EngineAPI, session: str, sign_in: SignIn, *, here: bool
) -> bool:
    """Let the user sign the session's agent in on this terminal; True once it is. `here`
    is False when the agents run on another machine: a terminal login runs there."""
    for _ in range(ATTEMPTS):
        # The user types in a thread: the link to a service stays served meanwhile.
        method = await asyncio.to_thread(ask_number, sign_in)
        if method is None:
            return False
        values: dict[str, str] = {}
        if method.kind == "terminal":
            if not here:
                if await login_there(engine, session, method):
                    return True
                again = await engine.sign_in(session)
                sign_in = again if again is not None else sign_in
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
