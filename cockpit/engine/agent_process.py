"""One agent subprocess: spawned in its own process group with the user's environment,
at a lower CPU priority than Cockpit (`cockpit/priority.py`), its stderr drained
continuously into a log file and a bounded tail for error messages, and every byte it
writes counted (a starting agent that writes is not stalled: `cockpit.engine.stall`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cockpit.api import AgentSpec
from cockpit.engine.priority import lower_priority
from cockpit.engine.processes import GRACE, end_group, signal_group
from cockpit.spawning import created

STDOUT_LIMIT = 1024 * 1024
"""StreamReader buffer for the agent's stdout; longer lines are read in parts."""

TAIL_BYTES = 8 * 1024
TAIL_LINES = 20


class AgentNotFound(FileNotFoundError):
    """The agent's program is not installed."""


class CountingProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's own protocol for a child's pipes, counting the bytes the child writes to
    its stdout and stderr as they arrive, before anyone reads them."""

    written = 0

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self.written += len(data)
        super().pipe_data_received(fd, data)


async def create_counted_subprocess(
    *command: str, limit: int, **options: Any
) -> tuple[asyncio.subprocess.Process, CountingProtocol]:
    """`asyncio.create_subprocess_exec`, with the protocol that counts the child's output
    (safe to cancel: `created`)."""
    loop = asyncio.get_running_loop()

    async def create() -> tuple[asyncio.subprocess.Process, CountingProtocol]:
        transport, protocol = await loop.subprocess_exec(
            lambda: CountingProtocol(limit=limit, loop=loop), *command, **options
        )
        return asyncio.subprocess.Process(transport, protocol, loop), protocol

    async def end(made: tuple[asyncio.subprocess.Process, CountingProtocol]) -> None:
        await end_group(made[0], grace=0)

    return await created(create(), end)


class AgentProcess:
    """A running agent and the last things it wrote to stderr."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        spec: AgentSpec,
        log_path: Path,
        output: CountingProtocol,
    ) -> None:
        self.process = process
        self._output = output
        self.spec = spec
        self.log_path = log_path
        self._tail = bytearray()
        self._log = open(log_path, "ab", buffering=0)  # noqa: SIM115 - closed by the drain task
        assert process.stderr is not None
        self._drain = asyncio.create_task(self._read_stderr(process.stderr))

    @classmethod
    async def spawn(
        cls,
        spec: AgentSpec,
        cwd: Path,
        log_path: Path,
        env: Mapping[str, str] | None = None,
        umask: int | None = None,
    ) -> AgentProcess:
        """Start the agent with `env` (the user's, as the request that starts it has it: see
        `cockpit.environment`) and `umask`. Without `env`, this process's own plus the
        entry's `env` (a test, or a tool that runs an agent by hand)."""
        env = {**os.environ, **spec.env} if env is None else dict(env)
        log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.close(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        try:
            process, output = await create_counted_subprocess(
                *spec.command,
                cwd=cwd,
                env=env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                limit=STDOUT_LIMIT,
                umask=-1 if umask is None else umask,
            )
        except FileNotFoundError as error:
            hint = f" To install it: {spec.install}" if spec.install else ""
            raise AgentNotFound(
                f"The agent program {spec.command[0]!r} was not found.{hint}"
            ) from error
        except PermissionError as error:
            raise AgentNotFound(
                f"The agent program {spec.command[0]!r} cannot be run: {error}"
            ) from error
        lower_priority(process.pid, spec.nice)  # the screen stays ahead of busy agents
        return cls(process, spec, log_path, output)

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.process.stdout is not None
        return self.process.stdout

    @property
    def pid(self) -> int:
        """The agent's pid, which is also its process group's id."""
        return self.process.pid

    @property
    def written(self) -> int:
        """Bytes the agent has written to its stdout and stderr so far."""
        return self._output.written

    @property
    def returncode(self) -> int | None:
        """The exit code once the agent has exited and was reaped."""
        return self.process.returncode

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        try:
            while chunk := await stream.read(65536):
                self._log.write(chunk)
                self._tail += chunk
                if len(self._tail) > TAIL_BYTES:
                    del self._tail[: len(self._tail) - TAIL_BYTES]
        finally:
            self._log.close()

    def stderr_tail(self, lines: int = TAIL_LINES) -> str:
        """The last lines the agent wrote to stderr."""
        text = self._tail.decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:])

    async def wait(self) -> int:
        """Wait for the agent to exit (and its stderr to be read to the end)."""
        code = await self.process.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(self._drain), 1)
        return code

    def kill(self) -> None:
        """SIGKILL the agent's whole group now, if it was not reaped yet (a reaped leader's
        pid may name someone else's group by now; `stop` ends the group before it reaps)."""
        if self.process.returncode is None:
            signal_group(self.process.pid, signal.SIGKILL)

    async def stop(self, grace: float = GRACE) -> int:
        """Close stdin, then SIGTERM the whole group, then SIGKILL after `grace`."""
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), min(0.5, grace))
        code = await end_group(self.process, grace)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(self._drain), 1)
        return code
