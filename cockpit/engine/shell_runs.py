"""The commands the user runs with `!` in one session: their shell (`$SHELL -c`) in the
session's root, with the world of the client that typed them and no input, each in a
process group of its own. Its row is stored before it starts, grows with its output a few
times a second, and says how it ended; the user (Esc, Ctrl+C) or the session's end kills
it. What the user's own terminal would show is what it shows, the values of secret-named
variables masked (`cockpit.engine.shell_output`)."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import signal
from collections.abc import Iterable, Mapping
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
from cockpit.text.textout import shell_ending
from store import Chunk, shell_run
from store.fold_rules import shell_key

log = logging.getLogger(__name__)

SHELL_REFRESH = 0.3
"""Seconds between updates of a running command's row (a crash loses at most that)."""
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
        run_id = f"sh-{secrets.token_hex(4)}"
        hidden = secret_values(world.variables)
        shown = mask(command, hidden)
        self._inbox.ensure_consumer()
        await self._inbox.record(
            shell_run(self.session_id, run_id, "", command=shown, state="running")
        )
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
            why = f"Cockpit could not run {shell} in {self.root}: {error.strerror or error}"
            await self._inbox.tell(
                shell_run(self.session_id, run_id, why, command=shown, state="failed")
            )
            return shell_key(run_id)
        run = _Run(run_id, shown, process, ShellOutput(hidden), group_mark(process.pid))
        self._runs[run_id] = run
        self._inbox.put(self._row(run))  # its group on disk: a crash leaves no orphan
        run.follower = asyncio.create_task(self._follow(run), name=f"shell {run_id}")
        return shell_key(run_id)

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
        run.output.add(b"", final=True)
        await self._inbox.tell(self._row(run, ended=True))

    @staticmethod
    async def _read(run: _Run) -> None:
        stream = run.process.stdout
        assert stream is not None
        while chunk := await stream.read(65536):
            run.output.add(chunk)

    def _row(self, run: _Run, ended: bool = False) -> Chunk:
        """The run's row as it stands."""
        text, left_out = run.output.shown()
        data: dict[str, Any] = {"command": run.command, "leftOut": left_out}
        code = run.process.returncode
        if not ended:
            data["state"] = "running"
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
