"""What the service's benchmarks and wire tests are made of: a Cockpit service in its own
process on a store of their own, a relay between a client and it that can cut every
connection on command, and what /proc says of a process (its CPU time, its memory).

The relay stands in for the network: an SSH link that blinks, a laptop that sleeps. It
copies bytes both ways and, on `cut()`, closes both ends of every connection it carries;
whatever it held in flight is lost, as it would be on a real link."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from cockpit.paths import service_socket
from cockpit.remote.launch import STREAM_LIMIT, Streams
from tests.support.agent_forks import through_server

START_TIMEOUT = 30.0
"""Seconds a service may take to listen (a loaded machine, cold caches)."""


class ServiceProcess:
    """`cockpit service` in the foreground, in a process of this one's, on the store in
    `home` (which is also its COCKPIT_HOME: its config and its socket live there). In a
    test, unless it is marked `real_spawn`, that process is a stand-in for a fork of the
    agent fork server (`tests/support/agent_forks.py`): `pid` is not the service's own there."""

    def __init__(self, home: Path, idle: float = 60.0) -> None:
        self.home = home
        self.idle = idle
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def socket(self) -> Path:
        return service_socket(self.home, {"COCKPIT_HOME": str(self.home)})

    def launch(self) -> None:
        """Start the service's process (`start` waits for it to listen)."""
        self.home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "COCKPIT_HOME": str(self.home)}
        env.pop("COCKPIT_LOCAL", None)
        command = [sys.executable, "-m", "cockpit", "--data-dir", str(self.home), "service"]
        with open(self.home / "service-test.log", "ab") as log:
            self.process = subprocess.Popen(
                through_server([*command, "--idle", str(self.idle)]),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # as `cockpit` starts it: a scheduling group of its own
            )

    async def start(self) -> ServiceProcess:
        """Start the service and wait until it listens."""
        self.launch()
        assert self.process is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while True:
            with contextlib.suppress(ConnectionError, OSError):
                _reader, writer = await asyncio.open_unix_connection(str(self.socket))
                writer.close()
                return self
            if self.process.poll() is not None or loop.time() > deadline:
                raise RuntimeError(f"the service did not start: {self.log_tail()}")
            await asyncio.sleep(0.02)

    def connector(self) -> Callable[[], Awaitable[Streams]]:
        """What a `RemoteEngine` attaches with, straight to the service's socket."""
        home = self.home
        socket = self.socket

        async def connect() -> Streams:
            try:
                return await asyncio.open_unix_connection(str(socket), limit=STREAM_LIMIT)
            except (FileNotFoundError, ConnectionRefusedError) as error:
                raise ConnectionError(f"no service for {home}") from error

        return connect

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            text = (self.home / "service-test.log").read_text(errors="replace")
            return "\n".join(text.splitlines()[-lines:])
        return ""

    async def stop(self) -> None:
        """Stop it (SIGTERM: its agents stop) and wait; kill it if it does not go."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGCONT)  # in case a test left it stopped
            process.terminate()
        for _ in range(300):
            if process.poll() is not None:
                return
            await asyncio.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()


@contextlib.asynccontextmanager
async def running_service(home: Path, idle: float = 60.0) -> AsyncIterator[ServiceProcess]:
    """A service on the store in `home` for the time of the block; stopped after it,
    whatever happens."""
    service = ServiceProcess(home, idle)
    try:
        yield await service.start()
    except BaseException:
        print(f"the service's log ends with:\n{service.log_tail()}", file=sys.stderr)
        raise
    finally:
        await service.stop()


class Relay:
    """A Unix socket that forwards every connection to `target`, and drops them all on
    `cut()`."""

    def __init__(self, target: Path, path: Path) -> None:
        self.target = target
        self.path = path
        self.cuts = 0
        self.connections = 0
        self._ends: set[asyncio.StreamWriter] = set()
        self._pumps: set[asyncio.Task[None]] = set()
        self._server: asyncio.AbstractServer | None = None

    async def __aenter__(self) -> Relay:
        self._server = await asyncio.start_unix_server(
            self._accept, path=str(self.path), limit=STREAM_LIMIT
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        self.cut()
        for pump in list(self._pumps):
            pump.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*self._pumps, return_exceptions=True)

    async def connect(self) -> Streams:
        """A client's connection through the relay (what a `RemoteEngine` attaches with)."""
        try:
            return await asyncio.open_unix_connection(str(self.path), limit=STREAM_LIMIT)
        except (FileNotFoundError, ConnectionRefusedError) as error:
            raise ConnectionError("the relay is closed") from error

    def cut(self) -> None:
        """Drop every connection now, both ends, and what was in flight."""
        if self._ends:
            self.cuts += 1
        for end in list(self._ends):
            transport = end.transport
            with contextlib.suppress(Exception):
                transport.abort()
        self._ends.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            far_reader, far_writer = await asyncio.open_unix_connection(
                str(self.target), limit=STREAM_LIMIT
            )
        except OSError:
            writer.transport.abort()
            return
        self.connections += 1
        self._ends.update((writer, far_writer))
        pumps = [
            asyncio.ensure_future(self._pump(reader, far_writer)),
            asyncio.ensure_future(self._pump(far_reader, writer)),
        ]
        self._pumps.update(pumps)
        try:
            await asyncio.gather(*pumps, return_exceptions=True)
        finally:
            self._pumps.difference_update(pumps)
            for end in (writer, far_writer):
                self._ends.discard(end)
                end.transport.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Copy until either side ends; then end both."""
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.transport.abort()


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """A process's resident memory in MB (`VmRSS`; `VmHWM` for its peak), from /proc."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    raise LookupError(f"no {field} for process {pid}")
