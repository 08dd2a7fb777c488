"""The agent's file and terminal requests (`fs/*`, `terminal/*`), served under Cockpit's
rules: inside the session's folder, never in Cockpit's own folders, a command only once the
permission rules (or the user) allow it; each refusal is a row in the transcript, and a
command's output is kept on its tool call's row while it runs and after.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.meta import CLIENT_METHODS

from cockpit.api import AgentSpec
from cockpit.engine.files import Refused, read_text, write_text
from cockpit.engine.inbox import SessionInbox
from cockpit.engine.permission_broker import PermissionBroker
from cockpit.engine.terminals import Terminal, Terminals, shell_command, terminal_env
from cockpit.engine.transport import preview
from cockpit.environment import Environment
from cockpit.paths import own_folders
from store import Chunk, note

TERMINAL_REFRESH = 0.3
"""Seconds between live updates of a running command's output on its tool card."""


class AgentRequests:
    """What the agent may ask of the client besides permissions: files and terminals."""

    def __init__(
        self,
        session_id: str,
        root: Path,
        spec: Callable[[], AgentSpec],
        data_dir: Path,
        inbox: SessionInbox,
        broker: PermissionBroker,
        *,
        in_worktree: bool = False,
    ) -> None:
        self.session_id = session_id
        self.root = root
        self._spec = spec
        """The session's agent entry, read at each request (its `missing_file` setting)."""
        self._inbox = inbox
        self._broker = broker
        self._own = own_folders(data_dir)
        """Cockpit's folders, which no file request and no command's folder may name..."""
        self._allowed = (root,) if in_worktree else ()
        """...but a worktree session's own worktree, which Cockpit keeps in its data folder
        (unless configured elsewhere)."""
        self._terminals = Terminals(root, {}, spec().nice, self._own, self._allowed)
        self._background: set[asyncio.Future[None]] = set()
        self._umask: int | None = None
        """The umask of the command that started the agent: the files it writes get the
        modes it gives (None: Cockpit's own)."""

    def use_environment(self, world: Environment) -> None:
        """The world the agent starts with: the commands it runs start from it too, without
        its secrets unless the agent's entry keeps them (`terminal_env`)."""
        spec = self._spec()
        self._terminals.env = terminal_env(world.variables, spec.terminal_env)
        self._terminals.umask = self._umask = world.umask
        self._terminals.nice = spec.nice

    async def read_file(self, path: str, line: int | None, limit: int | None) -> str:
        """`fs/read_text_file`: the text, or an ACP error the agent can read."""
        try:
            return await asyncio.to_thread(
                read_text, self.root, path, line, limit, self._own, self._allowed
            )
        except FileNotFoundError as error:
            if self._spec().missing_file == "empty":
                return ""
            raise RequestError.resource_not_found(path) from error
        except (OSError, ValueError) as error:  # refused, too large, a folder, unreadable
            await self._refused("read", path, error)
            raise RequestError.invalid_params({"path": path, "reason": str(error)}) from error

    async def write_file(self, path: str, content: str) -> None:
        """`fs/write_text_file`, or an ACP error the agent can read."""
        try:
            await asyncio.to_thread(
                write_text, self.root, path, content, self._own, self._umask, self._allowed
            )
        except (OSError, ValueError) as error:
            await self._refused("write", path, error)
            raise RequestError.invalid_params({"path": path, "reason": str(error)}) from error

    async def _refused(self, action: str, path: str, error: Exception) -> None:
        """A row for every file request Cockpit did not carry out (some were refused in
        silence, and a NUL in a path came back as an internal error), counted with the
        turn's other refused requests."""
        shown = preview(path.encode("utf-8", "replace"))
        await self._broker.refused.tell(
            note(self.session_id, "notice", f"Refused the agent's {action} of {shown}: {error}.")
        )

    async def create_terminal(
        self, command: str, args: list[str], env: dict[str, str], cwd: str | None, limit: int | None
    ) -> str:
        """`terminal/create`, once the rules allow the command: the new terminal's id."""
        if not await self._broker.may_run(shell_command(command, args), cwd):
            raise RequestError.invalid_params(
                {"command": command, "reason": "the command was not allowed"}
            )
        try:
            terminal = await self._terminals.create(command, args, env, cwd, limit)
        except Refused as error:
            await self._refused("terminal in", cwd or "", error)
            raise RequestError.invalid_params({"cwd": cwd, "reason": str(error)}) from error
        except OSError as error:  # no such program, or not one that can run
            await self._refused("run", command, error)
            raise RequestError.invalid_params({"command": command, "reason": str(error)}) from error
        watcher = asyncio.create_task(self._watch_terminal(terminal), name=terminal.id)
        self._background.add(watcher)
        watcher.add_done_callback(self._background.discard)
        return terminal.id

    async def _watch_terminal(self, terminal: Terminal) -> None:
        """While a command runs, keep its output on its tool call row a few times a second,
        so the card shows it live (and a crash of Cockpit loses at most that interval)."""
        shown = -1
        while terminal.process.returncode is None and not terminal.released:
            await asyncio.sleep(TERMINAL_REFRESH)
            if terminal.received != shown and terminal.id in self._inbox.terminal_tools:
                shown = terminal.received
                self._attach_output(terminal)

    async def terminal(self, terminal_id: str, method: str) -> Terminal:
        """The terminal with this id, or (with a row, as every refused request has) an
        ACP error the agent can read; `method` is the request that names it."""
        try:
            return self._terminals.get(terminal_id)
        except KeyError as error:
            reason = str(error.args[0])
            shown = preview(reason.encode("utf-8", "replace"))
            await self._broker.refused.tell(
                note(self.session_id, "notice", f"Refused the agent's {method} request: {shown}.")
            )
            raise RequestError.invalid_params(
                {"terminalId": terminal_id, "reason": reason}
            ) from error

    async def wait_terminal(self, terminal_id: str) -> Terminal:
        """`terminal/wait_for_exit`: the terminal once its command exited."""
        await self.terminal(terminal_id, CLIENT_METHODS["terminal_wait_for_exit"])
        terminal = await self._terminals.wait(terminal_id)
        self._attach_output(terminal)
        return terminal

    async def kill_terminal(self, terminal_id: str) -> None:
        """`terminal/kill`: the terminal stays readable until it is released."""
        await self.terminal(terminal_id, CLIENT_METHODS["terminal_kill"])
        self._terminals.kill(terminal_id)

    async def release_terminal(self, terminal_id: str) -> None:
        """`terminal/release`: its output stays on its tool call row."""
        await self.terminal(terminal_id, CLIENT_METHODS["terminal_release"])
        terminal = await self._terminals.release(terminal_id)
        self._attach_output(terminal)

    def _attach_output(self, terminal: Terminal) -> None:
        """Keep a terminal's output on its tool call row, so it survives restarts."""
        tool_call_id = self._inbox.terminal_tools.get(terminal.id)
        if tool_call_id is None:
            return
        status = terminal.exit_status()
        output: dict[str, Any] = {
            "output": terminal.text(),
            "truncated": terminal.truncated,
            "exitStatus": {"exitCode": status[0], "signal": status[1]} if status else None,
            "command": terminal.argv,
        }
        self._inbox.put(
            Chunk(
                self.session_id,
                "tool_call_update",
                data={"toolCallId": tool_call_id, "terminalOutput": {terminal.id: output}},
                from_cockpit=True,
            )
        )

    def terminals_running(self) -> bool:
        """True while a command the agent started has not ended."""
        return self._terminals.running()

    async def close(self) -> None:
        """End every terminal (the agent is stopping)."""
        await self._terminals.close()

    def discard(self) -> None:
        """Cancel what still runs for a session that is gone."""
        for task in list(self._background):
            task.cancel()
