"""Terminals an agent runs through `terminal/*`: a command in the session's root, its
output kept within the agent's byte limit, killed with its whole process group."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import shutil
import signal
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cockpit.engine.files import confine
from cockpit.engine.priority import lower_priority
from cockpit.engine.processes import end_group, signal_group
from cockpit.spawning import spawn
from cockpit.text.command_line import readable_command
from cockpit.text.secret_names import is_secret

UNBOUNDED_OUTPUT = 8 * 1024 * 1024
"""Output kept when the agent sets no limit, so a chatty command cannot fill memory."""


def trim_output(output: bytes, limit: int) -> tuple[bytes, bool]:
    """Keep the newest `limit` bytes of `output`, cut at a UTF-8 character boundary.

    Returns the kept bytes and whether anything was dropped. The oldest output goes
    first, as the ACP spec asks, and no character is ever split in half.
    """
    if len(output) <= limit:
        return output, False
    start = len(output) - limit
    while start < len(output) and (output[start] & 0xC0) == 0x80:
        start += 1
    return output[start:], True


def shell_command(command: str, args: Sequence[str]) -> list[str]:
    """The argv to run. An agent that sends a whole command line as `command` with no
    `args` (and no such program exists) gets it run by `/bin/sh -c`, as a terminal would."""
    if not args and shutil.which(command) is None and any(c.isspace() for c in command):
        return ["/bin/sh", "-c", command]
    return [command, *args]


SHELLS = frozenset({"sh", "bash", "dash", "zsh"})


def command_lines(argv: Sequence[str]) -> list[str]:
    """The ways an agent may have written this command when it asked to run it: the
    whole argv as a shell line (exactly quoted, or as Cockpit shows it), and for
    `sh -c LINE` the line itself."""
    lines = [shlex.join(argv)]
    if (shown := readable_command(argv)) not in lines:
        lines.append(shown)
    if len(argv) == 3 and os.path.basename(argv[0]) in SHELLS and argv[1] == "-c":
        lines.append(argv[2])
    return lines


@dataclass
class Terminal:
    """One command started for an agent."""

    id: str
    argv: list[str]
    process: asyncio.subprocess.Process
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    received: int = 0
    """Bytes read in all, kept or not: tells a watcher that new output arrived."""
    reader: asyncio.Task[None] | None = None
    released: bool = False

    def text(self) -> str:
        """The kept output as text."""
        return self.output.decode("utf-8", "replace")

    def exit_status(self) -> tuple[int | None, str | None] | None:
        """(exit code, signal name) once the command ended, else None."""
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            try:
                return None, signal.Signals(-code).name
            except ValueError:
                return None, str(-code)
        return code, None

    async def _read(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.received += len(chunk)
            self.output += chunk
            if len(self.output) > self.limit:
                kept, _ = trim_output(bytes(self.output), self.limit)
                self.output = bytearray(kept)
                self.truncated = True


class Terminals:
    """The terminals of one session."""

    def __init__(
        self,
        root: Path,
        env: Mapping[str, str],
        nice: int = 0,
        own: Sequence[Path] = (),
        allowed: Sequence[Path] = (),
    ) -> None:
        self.root = root
        self.env = dict(env)
        self.own = tuple(own)
        """Cockpit's own folders: no command starts in one..."""
        self.allowed = tuple(allowed)
        """...but in these (a worktree session's worktree, in Cockpit's data folder)."""
        self.nice = nice
        """How much lower than Cockpit's the commands' CPU priority is (the agent's)."""
        self.umask: int | None = None
        """The umask the commands start with (the agent's; None: Cockpit's own)."""
        self._terminals: dict[str, Terminal] = {}

    async def create(
        self,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> Terminal:
        """Start a command; its working folder must lie inside the session's root."""
        folder = confine(self.root, cwd, self.own, self.allowed) if cwd else self.root
        argv = shell_command(command, args)
        process = await spawn(
            *argv,
            cwd=folder,
            env={**self.env, **(env or {})},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            umask=-1 if self.umask is None else self.umask,
        )
        lower_priority(process.pid, self.nice)
        limit = output_byte_limit if output_byte_limit is not None else UNBOUNDED_OUTPUT
        terminal = Terminal(f"term-{secrets.token_hex(4)}", argv, process, max(limit, 0))
        assert process.stdout is not None
        terminal.reader = asyncio.create_task(terminal._read(process.stdout))
        self._terminals[terminal.id] = terminal
        return terminal

    def running(self) -> bool:
        """True while a command started for the agent has not ended."""
        return any(t.process.returncode is None for t in self._terminals.values())

    def get(self, terminal_id: str) -> Terminal:
        """The terminal with this id (KeyError for an unknown or released one)."""
        terminal = self._terminals.get(terminal_id)
        if terminal is None or terminal.released:
            raise KeyError(f"no terminal {terminal_id!r} in this session")
        return terminal

    async def wait(self, terminal_id: str) -> Terminal:
        """Wait until the command exits and its output is read."""
        terminal = self.get(terminal_id)
        await terminal.process.wait()
        if terminal.reader is not None:
            await terminal.reader
        return terminal

    def kill(self, terminal_id: str) -> Terminal:
        """Kill the command and its children; the terminal stays readable until released."""
        terminal = self.get(terminal_id)
        if terminal.process.returncode is None:
            signal_group(terminal.process.pid, signal.SIGKILL)
        return terminal

    async def release(self, terminal_id: str) -> Terminal:
        """Kill the command if it still runs and free the terminal."""
        terminal = self.get(terminal_id)
        await self._end(terminal)
        terminal.released = True
        return terminal

    async def _end(self, terminal: Terminal) -> None:
        if terminal.process.returncode is None:
            await end_group(terminal.process, grace=0.5)
        else:
            signal_group(terminal.process.pid, signal.SIGKILL)  # children it left behind
        if terminal.reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(terminal.reader, 1)

    async def close(self) -> None:
        """End every terminal (the session is stopping)."""
        for terminal in list(self._terminals.values()):
            if not terminal.released:
                await self._end(terminal)
        self._terminals.clear()


def terminal_env(environ: Mapping[str, str], keep: Collection[str] = ()) -> dict[str, str]:
    """The environment commands run for an agent start from: the user's (`environ`, the
    world the agent was started with), without the secrets in it unless the agent's entry
    names them in `keep` (what the agent passes in its request is added on top: that is its
    own choice)."""
    return {k: v for k, v in environ.items() if k in keep or not is_secret(k)}
