"""The commands the user runs with `!` in one session: their shell (`$SHELL -c`) in the
session's root, with the world of the client that typed them and no input, each in a
process group of its own. Its row is stored before it starts, grows with its output a few
times a second, and says how it ended; the user (Esc, Ctrl+C) or the session's end kills
it. What the user's own terminal would show is what it shows, the values of secret-named
variables masked (`cockpit.engine.shell_output`)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import pty
import secrets
import signal
import struct
import sys
import termios
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.schema import TextContentBlock

from cockpit.api import ATTACHMENT_META, Row, ShellRun, read_shell_run
from cockpit.engine.inbox import SessionInbox
from cockpit.engine.processes import end_group, group_mark, signal_group
from cockpit.engine.shell_output import ShellOutput, attachment_text, mask, secret_values
from cockpit.engine.worktrees.ports import port_variables
from cockpit.environment import Environment
from cockpit.spawning import spawn
from cockpit.text.command_line import readable_command
from cockpit.text.textout import shell_ending
from store import Chunk, shell_run
from store.fold_rules import shell_key

log = logging.getLogger(__name__)

SHELL_REFRESH = 0.3
"""Seconds between updates of a running command's row (a crash loses at most that)."""
TERMINAL_ROWS, TERMINAL_COLUMNS = 24, 80
"""The size of the terminal a login runs in."""
OWN_TERMINAL = """\
import fcntl, os, sys, termios
try:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
except OSError:
    pass
try:
    os.execvp(sys.argv[1], sys.argv[1:])
except OSError as error:
    print(f"Cockpit could not run {sys.argv[1]}: {error.strerror}", flush=True)
    sys.exit(127)
"""
"""Run by the process that becomes the login, in its new session: its input's terminal
becomes its controlling terminal (a program that asks on `/dev/tty`, as a password
prompt does, reads it there), then it becomes the login."""
TYPED_MASKED = 8
"""A line the user sends to a run at least this long (a code, not a word) is masked if
the run prints it."""
LINGER = 1.0
"""Seconds a command's output may stay open after its shell exited (a child it left
running holds it): the row then says how the shell ended, and the child goes on."""
FALLBACK_SHELL = "/bin/sh"
"""The shell when the user's `SHELL` is unset or not a full path."""


def user_shell(variables: Mapping[str, str]) -> str:
    """The user's shell, from their `SHELL`: a full path, else `/bin/sh`."""
    shell = variables.get("SHELL", "")
    return shell if os.path.isabs(shell) else FALLBACK_SHELL


@dataclass
class _Run:
    """One command the user ran."""

    id: str
    command: str
    """As typed, masked: what the row shows."""
    process: asyncio.subprocess.Process
    output: ShellOutput
    group: dict[str, int | str] | None
    """What tells its process group from a later one (`group_mark`), kept in its row
    while it runs: the next Cockpit ends the group when this one crashed."""
    stream: asyncio.StreamReader
    """Its output: its pipe, or its terminal's for a run that takes input."""
    terminal: int | None = None
    """The descriptor its input is written to (`run_with_input`), None for a `!command`."""
    pipe: asyncio.BaseTransport | None = field(default=None, repr=False)
    """What reads its terminal (closed once it ended), None for a `!command`."""
    then: Callable[[int | None], Awaitable[None]] | None = field(default=None, repr=False)
    """What its caller does once it ended and its row is stored, given its exit code."""
    killed: bool = False
    """True once the user or the session's end killed it."""
    follower: asyncio.Task[None] | None = field(default=None, repr=False)


class ShellRuns:
    """The commands the user runs in one session."""

    def __init__(
        self, session_id: str, root: Path, inbox: SessionInbox, ports: tuple[int, ...] = ()
    ) -> None:
        self.session_id = session_id
        self.root = root
        self._inbox = inbox
        self._ports = ports
        """A worktree session's free ports, told to each command (`COCKPIT_PORT`)."""
        self._runs: dict[str, _Run] = {}
        """The runs that have not ended, by id."""

    def running(self) -> bool:
        """True while a command the user ran has not ended."""
        return bool(self._runs)

    async def run(self, command: str, world: Environment) -> str:
        """Store the command's row, then start it; return the row's key. The store's error
        when the row cannot be stored (the command never runs); a shell that cannot start
        is the row's own ending."""
        run_id, hidden, shown = await self._begin(command, world)
        shell = user_shell(world.variables)
        try:
            process = await spawn(
                shell,
                "-c",
                command,
                cwd=self.root,
                env={**world.variables, **port_variables(self._ports)},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                umask=-1 if world.umask is None else world.umask,
            )
        except OSError as error:  # no such shell, the root is gone...
            return await self._not_started(run_id, shown, shell, error)
        assert process.stdout is not None
        output = ShellOutput(hidden)
        run = _Run(run_id, shown, process, output, group_mark(process.pid), process.stdout)
        return self._started(run)

    async def _begin(
        self, command: str, world: Environment, **data: Any
    ) -> tuple[str, dict[str, str], str]:
        """Store a run's row before it starts (the store's error when it cannot be: then
        nothing runs): its id, the values it masks, and its command as the row shows it."""
        run_id = f"sh-{secrets.token_hex(4)}"
        hidden = secret_values(world.variables)
        shown = mask(command, hidden)
        self._inbox.ensure_consumer()
        await self._inbox.record(
            shell_run(self.session_id, run_id, "", command=shown, state="running", **data)
        )
        return run_id, hidden, shown

    async def _not_started(self, run_id: str, shown: str, program: str, error: OSError) -> str:
        """Store why a run could not start as its ending; the key of its row."""
        why = f"Cockpit could not run {program} in {self.root}: {error.strerror or error}"
        await self._inbox.tell(
            shell_run(self.session_id, run_id, why, command=shown, state="failed")
        )
        return shell_key(run_id)

    def _started(self, run: _Run) -> str:
        """Follow a run that started; the key of its row."""
        self._runs[run.id] = run
        self._inbox.put(self._row(run))  # its group on disk: a crash leaves no orphan
        run.follower = asyncio.create_task(self._follow(run), name=f"shell {run.id}")
        return shell_key(run.id)

    async def run_with_input(
        self,
        command: Sequence[str],
        world: Environment,
        then: Callable[[int | None], Awaitable[None]],
    ) -> str:
        """Run `command` (an agent's own login) as the user would in a terminal: in a
        terminal of its own whose input is what the user sends (`send_line`), echo off, so
        that a code pasted in is not printed back. Its row is stored first, like a
        `!command`'s, and `then` gets its exit code once its ending is stored (None when
        it never started or was killed). The key of its row."""
        run_id, hidden, shown = await self._begin(readable_command(command), world, input=True)
        try:
            terminal, process, stream, pipe = await _in_terminal(command, self.root, world)
        except OSError as error:  # the root is gone...
            key = await self._not_started(run_id, shown, command[0], error)
            await then(None)
            return key
        output = ShellOutput(hidden)
        mark = group_mark(process.pid)
        run = _Run(run_id, shown, process, output, mark, stream, terminal, pipe, then)
        return self._started(run)

    def send_line(self, text: str) -> bool:
        """Send one line the user typed to the run that takes input (False when none
        does). The line is masked in what the run prints after it, in case it echoes."""
        run = next((r for r in self._runs.values() if r.terminal is not None), None)
        if run is None or run.terminal is None:
            return False
        if len(text.strip()) >= TYPED_MASKED:
            run.output.hide("input", text.strip())
        try:
            os.write(run.terminal, text.encode("utf-8", "replace") + b"\r")
        except OSError:  # it has just ended
            return False
        return True

    async def _follow(self, run: _Run) -> None:
        """Read the command's output, keep its row current while it runs, and store how it
        ended (whatever happened to the reading)."""
        reader = asyncio.create_task(self._read(run))
        try:
            shown = 0
            while not reader.done() and run.process.returncode is None:
                await asyncio.wait({reader}, timeout=SHELL_REFRESH)
                if run.output.total != shown:
                    shown = run.output.total
                    self._inbox.put(self._row(run))
            await run.process.wait()
            # A child the shell left running may hold the output open: it goes on, unread.
            await asyncio.wait({reader}, timeout=LINGER)
        except asyncio.CancelledError:
            reader.cancel()
            raise
        except Exception:
            log.exception("following a command of session %s failed", self.session_id)
        reader.cancel()
        self._runs.pop(run.id, None)
        if run.pipe is not None:
            run.pipe.close()
        if run.terminal is not None:
            with contextlib.suppress(OSError):
                os.close(run.terminal)
        run.output.add(b"", final=True)
        await self._inbox.tell(self._row(run, ended=True))
        if run.then is not None:
            await run.then(None if run.killed else run.process.returncode)

    @staticmethod
    async def _read(run: _Run) -> None:
        try:
            while chunk := await run.stream.read(65536):
                if run.terminal is not None:  # a terminal ends its lines with CR LF
                    chunk = chunk.replace(b"\r\n", b"\n")
                run.output.add(chunk)
        except OSError:  # a terminal's end: every end of it closed (EIO)
            return

    def _row(self, run: _Run, ended: bool = False) -> Chunk:
        """The run's row as it stands."""
        text, left_out = run.output.shown()
        data: dict[str, Any] = {"command": run.command, "leftOut": left_out}
        code = run.process.returncode
        if not ended:
            data["state"] = "running"
            if run.terminal is not None:
                data["input"] = True
            if run.group is not None:
                data["group"] = run.group
        elif code is None:  # reading it failed (logged): it is no longer followed
            data["state"] = "failed"
        elif code < 0 or run.killed:
            data["state"] = "killed"
            data["signal"] = _signal_name(-code) if code < 0 else None
            data["exitCode"] = code if code >= 0 else None
        else:
            data["state"] = "exited"
            data["exitCode"] = code
        return shell_run(self.session_id, run.id, text, **data)

    async def stop(self) -> bool:
        """Kill every command that runs (and what it started); False when none runs. Each
        row says it was killed once its output is read."""
        runs = list(self._runs.values())
        for run in runs:
            run.killed = True
        await asyncio.gather(*(end_group(run.process, grace=0.5) for run in runs))
        return bool(runs)

    async def close(self) -> None:
        """Kill every command that runs and wait (briefly) for their rows: the session is
        closing, and its commands die with it."""
        followers = [run.follower for run in self._runs.values() if run.follower is not None]
        await self.stop()
        if followers:
            await asyncio.wait(followers, timeout=LINGER + 1)

    def discard(self) -> None:
        """The session is gone: kill its commands at once, write nothing more."""
        for run in list(self._runs.values()):
            run.killed = True
            signal_group(run.process.pid, signal.SIGKILL)
            if run.follower is not None:
                run.follower.cancel()
        self._runs.clear()


async def _in_terminal(
    command: Sequence[str], root: Path, world: Environment
) -> tuple[int, asyncio.subprocess.Process, asyncio.StreamReader, asyncio.BaseTransport]:
    """Start `command` in a terminal of its own (a pseudo-terminal, echo off), in a
    process group of its own: the descriptor its input is written to, the process, its
    output and what reads it. OSError when it cannot start (nothing is left open then)."""
    primary, secondary = pty.openpty()
    try:
        attributes = termios.tcgetattr(secondary)
        attributes[3] &= ~termios.ECHO  # what the user pastes is not printed back
        termios.tcsetattr(secondary, termios.TCSANOW, attributes)
        size = struct.pack("HHHH", TERMINAL_ROWS, TERMINAL_COLUMNS, 0, 0)
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, size)  # a terminal of no size confuses
        process = await spawn(
            sys.executable,
            "-I",  # the user's PYTHONPATH or PYTHONHOME are for the login, not for this
            "-c",
            OWN_TERMINAL,
            *command,
            cwd=root,
            env=dict(world.variables),
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            start_new_session=True,
            umask=-1 if world.umask is None else world.umask,
        )
    except BaseException:
        os.close(primary)
        raise
    finally:
        os.close(secondary)
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader()
    reading = os.fdopen(os.dup(primary), "rb", buffering=0)
    pipe, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), reading)
    return primary, process, stream, pipe


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def attachment_blocks(rows: Iterable[Row]) -> list[TextContentBlock]:
    """The blocks that carry these commands' output to the agent with a prompt (bounded:
    `attachment_text`), each marked as a command's so its prompt's bubble can name it; a
    row that is not a command's ended run carries nothing."""
    blocks = []
    for row in rows:
        run = read_shell_run(row.payload) if row.kind == "shell" else None
        if not isinstance(run, ShellRun) or run.running:
            continue
        blocks.append(
            TextContentBlock(
                type="text",
                text=attachment_text(run.command, row.text, shell_ending(run)),
                field_meta={ATTACHMENT_META: {"shell": row.key, "command": run.command}},
            )
        )
    return blocks
