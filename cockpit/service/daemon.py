"""`cockpit service`: the service's process, from its lock to its last client.

One service per store: it holds the store's lock (`flock`, released by the kernel however
the process dies) for as long as it runs, so a second one started at the same moment finds
the lock taken and leaves at once, and a socket left by a dead service is known stale and
replaced. SIGHUP is ignored (a service started from a terminal outlives it); SIGTERM and
SIGINT stop it: the engine stops its agents, whose sessions resume on their next prompt.
With no client attached and nothing running or waiting for IDLE seconds, it stops by
itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from cockpit.engine.core import Engine
from cockpit.paths import private_dir, service_lock, service_socket
from cockpit.remote.launch import ALREADY_RUNNING
from cockpit.remote.startup import Reporter
from cockpit.service.server import Service

log = logging.getLogger(__name__)

IDLE_DEFAULT = 900.0
"""Seconds the service waits, with no client and nothing running or waiting, before it
stops (`--idle`, or COCKPIT_SERVICE_IDLE for a service started in the background)."""

STOPPED = "the Cockpit service stopped"
"""Why a turn that ran when the service stopped was cut (its row says so)."""


class ServiceRunning(RuntimeError):
    """Another service holds the store's lock."""


@contextlib.contextmanager
def store_lock(data: Path) -> Iterator[None]:
    """Hold the store's service lock (ServiceRunning when another service holds it)."""
    private_dir(data)
    descriptor = os.open(service_lock(data), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ServiceRunning(f"a Cockpit service already runs for {data}") from None
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(descriptor)


async def serve(
    data: Path, idle: float = IDLE_DEFAULT, ready: Callable[[], None] = lambda: None
) -> int:
    """Run the service of the store in `data` until it is stopped or idle; its exit code.
    `ready` is called once it listens."""
    with store_lock(data):
        path = service_socket(data)
        # The socket's folder, owner-only, checked without following a link: a link or a
        # folder of another user's (planted under the temporary folder, where a deep data
        # folder puts the socket) is refused (ForeignFolder) before the store is opened.
        private_dir(path.parent, follow=False)
        engine = await Engine.open(data)
        stopping = asyncio.Event()
        service = Service(engine, on_stop=stopping.set)
        try:
            await service.listen(path)
            loop = asyncio.get_running_loop()
            for number in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(number, stopping.set)
            loop.add_signal_handler(signal.SIGHUP, lambda: None)
            _say(f"cockpit service: pid {os.getpid()}, listening on {path}")
            ready()
            watcher = asyncio.ensure_future(_stop_when_idle(service, idle, stopping))
            try:
                await stopping.wait()
            finally:
                watcher.cancel()
        finally:  # whatever failed, the agents are stopped and the store closed
            await service.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            await engine.close(STOPPED)
            _say("cockpit service: stopped")
    return 0


def _say(line: str) -> None:
    """A line on the service's output, which may be a terminal closed since (SIGHUP is
    ignored: the service outlives its terminal, and its words are lost)."""
    with contextlib.suppress(OSError):
        print(line, flush=True)


async def _stop_when_idle(service: Service, idle: float, stopping: asyncio.Event) -> None:
    step = max(0.05, min(idle / 4, 5.0))
    while not stopping.is_set():
        await asyncio.sleep(step)
        if service.idle_for() >= idle:
            log.info("no client for %.0f s and nothing running: stopping", idle)
            stopping.set()


class _Output(logging.StreamHandler[TextIO]):
    """The service's output, as a log handler."""


def log_to_output() -> None:
    """The service's own records (clients that come, go or are refused; its start and
    stop) go to its output: its log when it runs detached, the journal under systemd, the
    terminal in the foreground. Cockpit's log file keeps everything else."""
    records = logging.getLogger("cockpit.service")
    if any(isinstance(handler, _Output) for handler in records.handlers):
        return
    handler = _Output(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    records.addHandler(handler)
    records.setLevel(logging.INFO)
    records.propagate = False


def run(data: Path, idle: float = IDLE_DEFAULT) -> int:
    """`cockpit service` in the foreground (the detached start runs this too, and tells
    the client that started it whether it came up, or why not: the error goes on to the
    command line, which says it in one line)."""
    log_to_output()
    reporter = Reporter.claim(os.environ)
    try:
        return asyncio.run(serve(data, idle, reporter.ready))
    except ServiceRunning as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return ALREADY_RUNNING
    except BaseException as error:
        reporter.failed(error)
        raise
    finally:
        reporter.close()
