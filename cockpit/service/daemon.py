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
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from cockpit.channel.startup import ALREADY_RUNNING, Reporter
from cockpit.engine.core import Engine
from cockpit.logfiles import FORMAT, OutputLog, writes_to
from cockpit.paths import private_dir, service_lock, service_log, service_socket
from cockpit.service.server import MAX_CLIENTS, Service

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
    lock = service_lock(data)
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ServiceRunning(f"a Cockpit service already runs for {data}") from None
        try:
            os.ftruncate(descriptor, 0)
            os.write(descriptor, f"{os.getpid()}\n".encode())
        except OSError as error:  # a full disk: say which file, as open() would have
            error.filename = os.fspath(lock)
            raise
        yield
    finally:
        os.close(descriptor)


async def serve(
    data: Path,
    idle: float = IDLE_DEFAULT,
    ready: Callable[[], None] = lambda: None,
    max_clients: int = MAX_CLIENTS,
) -> int:
    """Run the service of the store in `data` until it is stopped or idle, serving at most
    `max_clients` clients at once; its exit code. `ready` is called once it listens."""
    with store_lock(data):
        path = service_socket(data)
        # The socket's folder, owner-only, checked without following a link: a link or a
        # folder of another user's (planted under the temporary folder, where a deep data
        # folder puts the socket) is refused (ForeignFolder) before the store is opened.
        private_dir(path.parent, follow=False)
        engine = await Engine.open(data)
        stopping = asyncio.Event()
        service = Service(engine, on_stop=stopping.set, max_clients=max_clients)
        try:
            await service.listen(path)
            loop = asyncio.get_running_loop()
            for number in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(number, stopping.set)
            loop.add_signal_handler(signal.SIGHUP, lambda: None)
            _say(f"cockpit service: pid {os.getpid()}, listening on {path}")
            ready()
            watchers = [
                asyncio.ensure_future(_stop_when_idle(service, idle, stopping)),
                asyncio.ensure_future(_stop_when_store_gone(service, stopping)),
            ]
            try:
                await stopping.wait()
            finally:
                for watcher in watchers:
                    watcher.cancel()
        finally:  # whatever failed, the agents are stopped and the store closed
            await shut_down(service, engine, path)
            _say("cockpit service: stopped")
    return 0


CLOSE_TIMEOUT = 30.0
"""Seconds the engine may take to stop its agents and close the store as the service
stops; past it, what still runs is killed."""


async def shut_down(service: Service, engine: Engine, path: Path) -> None:
    """Stop serving, the agents and the store, each step whatever the one before did: a
    step that fails is logged and the next one runs. A service whose socket could not be
    removed (a folder put in its place) or whose store could not be closed (read-only)
    once lingered for good with its agents, its lock already let go."""
    steps = (("tell the clients", service.tell_stopping()), ("let them go", service.close()))
    for what, step in steps:
        try:
            await step
        except Exception as error:
            log.error("stopping: could not %s: %s", what, error)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as error:
        log.error("stopping: could not remove the socket %s: %s", path, error)
    try:
        await asyncio.wait_for(engine.close(STOPPED), CLOSE_TIMEOUT)
    except Exception as error:  # a store that cannot write, or a stop that hangs
        log.error("stopping: the agents and the store did not close in order: %s", error)
        engine.kill_agents()
    lost = service.stopped.lost if service.stopped and service.stopped.store_gone else None
    await service.answer_stop(lost or engine.unwritten())


STORE_CHECK = 1.0
"""Seconds between two looks at the store's file: removed or replaced, the service stops."""


async def _stop_when_store_gone(service: Service, stopping: asyncio.Event) -> None:
    """Stop the service once its store's file is gone from its path (its folder removed or
    replaced): what it writes from then on goes to a file no one can open, so every client
    hears what was lost, and nothing more is taken."""
    store = service.engine.store
    seen = store.now()
    while not stopping.is_set():
        await asyncio.sleep(STORE_CHECK)
        looked = store.now()
        if not store.file_replaced():
            seen = looked
            continue
        try:
            written = await store.written_since(seen)
        except Exception:  # the open file cannot be read either: count what is in memory
            written = (0, 0)
        unwritten = store.unwritten()
        service.store_gone(store.path, (written[0] + unwritten[0], written[1] + unwritten[1]))
        stopping.set()


def _say(line: str) -> None:
    """A line on the service's output, which may be a terminal closed since (SIGHUP is
    ignored: the service outlives its terminal, and its words are lost)."""
    with contextlib.suppress(OSError):
        print(line, flush=True)


STAYING = "staying until they end"
"""How the service's log says that the idle watcher looked, found no client for the idle
time, and kept the service for what runs or waits (once per stretch with no client)."""


async def _stop_when_idle(service: Service, idle: float, stopping: asyncio.Event) -> None:
    """Stop the service once nothing has run and no client has come for `idle` seconds.
    When no client came for that long but a turn runs or a question waits, the log says
    once why it stays: a user who finds it running after the idle time reads why."""
    step = max(0.05, min(idle / 4, 5.0))
    said = False
    while not stopping.is_set():
        await asyncio.sleep(step)
        if service.idle_for() >= idle:
            log.info("no client for %.0f s and nothing running: stopping", idle)
            stopping.set()
        elif service.unattended_for() < idle:
            said = False  # a client came: the next stretch without one says it again
        elif not said:
            turns, questions = service.busy()
            if turns or questions:
                log.info(
                    "no client for %.0f s, but %d turn(s) run and %d question(s) wait: %s",
                    idle,
                    turns,
                    questions,
                    STAYING,
                )
                said = True


class _Output(logging.StreamHandler[TextIO]):
    """The service's output, as a log handler."""


def log_to_output(data: Path) -> None:
    """The service's own records (clients that come, go or are refused; its start and
    stop) go to its output: its log when it runs detached, the journal under systemd, the
    terminal in the foreground. Cockpit's log file keeps everything else. Its log, when
    its output is that file, is rotated by size like every log of Cockpit's (its stdout
    and stderr follow the new file)."""
    records = logging.getLogger("cockpit.service")
    if any(isinstance(handler, _Output | OutputLog) for handler in records.handlers):
        return
    log_file = service_log(data)
    handler: logging.Handler
    if writes_to(2, log_file):  # its stderr is that file
        handler = OutputLog(log_file)
    else:
        handler = _Output(sys.stderr)
        handler.setFormatter(logging.Formatter(FORMAT))
    records.addHandler(handler)
    records.setLevel(logging.INFO)
    records.propagate = False


def run(data: Path, idle: float = IDLE_DEFAULT) -> int:
    """`cockpit service` in the foreground (the detached start runs this too, and tells
    the client that started it whether it came up, or why not: the error goes on to the
    command line, which says it in one line)."""
    log_to_output(data)
    reporter = Reporter.claim(os.environ)
    try:
        code = asyncio.run(serve(data, idle, reporter.ready))
    except ServiceRunning as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return ALREADY_RUNNING
    except BaseException as error:
        reporter.failed(error)
        raise
    finally:
        reporter.close()
    end_now_if_held(code)
    return code


HELD_TIMEOUT = 2.0
"""Seconds the threads left at the end may take to end before the process exits anyway."""


def end_now_if_held(code: int) -> None:
    """Exit now when a thread would keep the stopped service alive (a database connection
    that could not be closed): a service that has stopped must end, or it lingers unseen,
    its lock let go, beside the next one."""
    deadline = time.monotonic() + HELD_TIMEOUT
    for thread in threading.enumerate():
        if thread is threading.main_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            log.error("stopped, but a thread (%s) still runs: exiting anyway", thread.name)
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
