"""Reaching the service of a store: its socket, or a command whose stdin and stdout speak
the protocol (`ssh HOST cockpit service --stdio`); and starting the service, detached,
when none runs.

A service started here runs in a session of its own with no terminal (SIGHUP from a closed
terminal or a dropped SSH connection never reaches it), its output in its log. Two clients
starting at once both may launch one; the store's lock lets one of them run and the other
exits at once, so both clients end up on the same service.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import socket
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeGuard

from acp.connection import Connection

from cockpit import protocol
from cockpit.api import NotSaved, SchemaError
from cockpit.channel.peer import foreign_peer
from cockpit.channel.startup import ALREADY_RUNNING, ReportPipe
from cockpit.channel.transport import LineTransport
from cockpit.paths import (
    FULL_OR_READ_ONLY,
    ForeignFolder,
    private_dir,
    service_lock,
    service_log,
    service_socket,
)
from cockpit.spawning import spawn

START_TIMEOUT = 15.0
"""Seconds a service started here may take to listen."""

IDLE_ENV = "COCKPIT_SERVICE_IDLE"
"""Seconds a service started in the background waits idle before it stops (its default
when unset: `cockpit.service.daemon.IDLE_DEFAULT`)."""

Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]

STREAM_LIMIT = 64 * 1024 * 1024
"""The longest line a client reads at once (a page of rows is one line)."""


class ServiceUnavailable(ConnectionError):
    """No service answers for the store: none could be started, or one hangs."""


class ForeignService(ConnectionError):
    """What listens on the store's socket runs as another user, or the socket's folder is
    not the user's own (a link, another user's folder): nothing is said to it (it would
    read the prompts, and answer with anything)."""


def socket_folder(path: Path, *, create: bool = True) -> None:
    """Make the folder of the socket `path` owner-only (created when missing and
    `create`); ForeignService, naming it and its owner, when it is a link or another
    user's."""
    if not create and not os.path.lexists(path.parent):
        return
    try:
        private_dir(path.parent, follow=False)
    except ForeignFolder as error:
        raise ForeignService(str(error)) from None


QUEUE_WAIT = 5.0
"""Seconds a client waits for room in the queue of connections of a service that is
flooded with them, before it says the service takes no more."""


class ServiceBusy(ServiceUnavailable):
    """A service listens, but its queue of connections stayed full (a flood of them)."""


async def open_socket(data: Path) -> Streams:
    """The service's socket for the store in `data` (ConnectionError when none listens;
    ForeignService when another user's process does, or the socket's folder is not the
    user's own; ServiceBusy when one listens and its queue of connections stays full)."""
    path = service_socket(data)
    socket_folder(path, create=False)
    try:
        connected = await _connect(path)
    except (FileNotFoundError, ConnectionRefusedError) as error:
        raise ConnectionError(f"no Cockpit service listens on {path}") from error
    reader, writer = await asyncio.open_unix_connection(sock=connected, limit=STREAM_LIMIT)
    foreign = foreign_peer(writer.get_extra_info("socket"))
    if foreign is not None:
        writer.close()
        raise ForeignService(f"{path} is served by {foreign}, not by Cockpit")
    return reader, writer


async def _connect(path: Path) -> socket.socket:
    """A socket connected to the one at `path`. A listener whose queue of connections is
    full answers EAGAIN, and the socket is then not connected at all (asyncio takes it for
    a connection under way, and the peer's uid then reads as -1): it is tried again."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + QUEUE_WAIT
    while True:
        attempt = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        attempt.setblocking(False)
        try:
            attempt.connect(str(path))
        except BlockingIOError:
            attempt.close()
            if loop.time() > deadline:
                raise ServiceBusy(
                    f"the Cockpit service on {path} takes no more connections (its queue "
                    f"stayed full for {QUEUE_WAIT:g} s)"
                ) from None
            await asyncio.sleep(0.01)
            continue
        except BaseException:
            attempt.close()
            raise
        return attempt


def service_command(data: Path, idle: float | None = None) -> list[str]:
    """The command line of `cockpit service` for the store in `data`, with this Python."""
    command = [sys.executable, "-m", "cockpit", "--data-dir", str(data), "service"]
    if idle is None and os.environ.get(IDLE_ENV):
        idle = float(os.environ[IDLE_ENV])
    if idle is not None:
        command += ["--idle", str(idle)]
    return command


class Starting:
    """A service this client started in the background, and the pipe it tells its start's
    outcome on (`cockpit.channel.startup`)."""

    def __init__(self, data: Path, idle: float | None) -> None:
        self.data = data
        self.report = ReportPipe()
        try:
            self.process = start_detached(data, idle, self.report)
        except BaseException:
            self.report.close()
            raise

    def failure(self) -> Exception | None:
        """Why the service could not start, once it has said so (`start_failure`). None
        while it starts, once it listens, or when it said nothing."""
        word = self.report.listen()
        if word is None or word.get("ready"):
            return None
        return start_failure(self.data, word)

    def close(self) -> None:
        self.report.close()


def start_failure(data: Path, word: dict[str, Any]) -> Exception:
    """The error a service that could not start said (`word`), as the command line
    reports it: a store written by a newer Cockpit as SchemaError (exit 2), a folder of
    another user's as ForeignService, a store it could not write as the error the command
    meets with --local (exit 5), anything else as ServiceUnavailable with its reason."""
    kind, message = str(word.get("type", "")), str(word.get("message", ""))
    if kind == "SchemaError":
        return SchemaError(message)
    if kind == "ForeignFolder":
        return ForeignService(message)
    error = protocol.raised(word)
    if isinstance(error, NotSaved) or _file_refused(error):  # the store cannot be written:
        return error  # the command says it as with --local, naming the file, and exits 5
    if isinstance(error, OSError) and error.strerror:  # the system's words, not "[Errno 21]"
        message = f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return ServiceUnavailable(
        f"the Cockpit service for {data} did not start: {message or kind} (see {service_log(data)})"
    )


def _file_refused(error: BaseException) -> TypeGuard[OSError]:
    """Whether the system refused the service a file it names because no one may write
    it (its lock or the store's on a full disk, a read-only folder): the trouble of the
    store's disk, not the service's."""
    return (
        isinstance(error, OSError)
        and error.errno in FULL_OR_READ_ONLY
        and error.filename is not None
    )


def start_detached(data: Path, idle: float | None, report: ReportPipe) -> subprocess.Popen[bytes]:
    """Start `cockpit service` for the store in `data`, detached from this terminal; it
    says on `report` whether it came up."""
    log = service_log(data)
    private_dir(log.parent)
    command = service_command(data, idle)
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=descriptor,
            stderr=descriptor,
            start_new_session=True,
            close_fds=True,
            pass_fds=(report.write,),
            env=report.environ(os.environ),
            cwd=data,
        )
    finally:
        os.close(descriptor)
        report.passed()


async def connect_or_start(data: Path, *, start: bool = True, idle: float | None = None) -> Streams:
    """The socket of the store's service; when none listens and `start`, start one and
    wait for it. What stopped it from coming up is raised as it said it (see
    `Starting.failure`); ServiceUnavailable, saying where its log is, when it said nothing
    and does not come up. The socket's folder is checked before anything starts: a link
    or another user's folder is ForeignService."""
    try:
        return await open_socket(data)
    except ConnectionError:
        if not start:
            raise
    socket_folder(service_socket(data))
    starting = Starting(data, idle)
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while True:
            failure = starting.failure()
            if failure is not None:
                raise failure
            try:
                return await open_socket(data)
            except ConnectionError:
                exited = starting.process.poll()
                if loop.time() > deadline or exited not in (None, 0, ALREADY_RUNNING):
                    failure = starting.failure()  # it may have said it as it exited
                    raise failure or ServiceUnavailable(_why_unavailable(data)) from None
                if exited is not None and not service_running(data):
                    # The service that held the lock was stopping (idle, or asked to): it
                    # has let go of the store now, and no one serves it. Start one again.
                    starting.close()
                    starting = Starting(data, idle)
                await asyncio.sleep(0.05)
    finally:
        starting.close()


def _why_unavailable(data: Path) -> str:
    """Why no service could be reached, in words: none started, or one holds the store
    and does not answer (its socket was removed, or it hangs)."""
    pid = service_pid(data)
    if pid is not None:
        return (
            f"a Cockpit service (pid {pid}) holds {data} but does not answer on "
            f"{service_socket(data)} (see {service_log(data)})"
        )
    return f"the Cockpit service for {data} did not start (see {service_log(data)})"


class BridgeUnusable(ConnectionError):
    """The bridge command cannot be run at all (not found, not executable)."""


async def open_command(
    argv: Sequence[str], *, hear_stderr: bool = False
) -> tuple[Streams, asyncio.subprocess.Process]:
    """Run `argv` (`ssh HOST cockpit service --stdio`) and speak the protocol over its stdin
    and stdout. Its stderr goes to ours (ssh asks for passwords there), or with
    `hear_stderr` to a pipe the caller reads (under the screen, where it would be written
    over it). BridgeUnusable, saying why, when the command cannot be run."""
    try:
        process = await spawn(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if hear_stderr else None,
            limit=STREAM_LIMIT,
        )
    except FileNotFoundError:
        raise BridgeUnusable(f"the command `{argv[0]}` was not found") from None
    except OSError as error:
        why = error.strerror or str(error)
        raise BridgeUnusable(f"the command `{argv[0]}` cannot be run ({why})") from None
    assert process.stdin is not None
    assert process.stdout is not None
    return (process.stdout, process.stdin), process


async def end_command(process: asyncio.subprocess.Process, *, at_once: bool = False) -> int:
    """Let a bridge command go (it ends when its stdin closes; `at_once`: it is told to end
    now, as when the user gave up on it); its exit code (negative: the signal that ended
    it)."""
    if process.stdin is not None:
        process.stdin.close()
    if at_once and process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
    try:
        return await asyncio.wait_for(process.wait(), 2)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        return await process.wait()


GONE_TIMEOUT = 60.0
"""Seconds a stopping service may take to stop its agents and let go of the store."""


class _OneShot:
    """What a one-shot client hears: no requests, only whether it was turned away."""

    def __init__(self) -> None:
        self.turned_away = False

    async def on_message(self, method: str, params: Any, is_notification: bool) -> None:
        if method == protocol.FULL:
            self.turned_away = True


QUERY_TIMEOUT = 5.0
"""Seconds the service may take to answer `cockpit service status` or `stop`."""

TURNED_AWAY_PAUSE = 0.05
"""Seconds before a question the service turned away unread (it was full) is asked again."""


async def query_service(
    data: Path,
    method: str,
    params: dict[str, Any] | None = None,
    answer_within: float = QUERY_TIMEOUT,
) -> dict[str, Any] | None:
    """Ask the store's service one of the questions that work whatever its version
    (STATUS, STOP: `cockpit service restart` replaces a service of another version); None
    when no service listens, ServiceUnavailable when one listens and does not answer
    within `answer_within` seconds. A service that turns the question away unread (as many
    clients as it serves are attached, and as many more wait) is asked again."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + answer_within
    while True:
        try:
            reader, writer = await open_socket(data)
        except (ForeignService, ServiceBusy):
            raise
        except ConnectionError:
            return None
        listener = _OneShot()
        conn = Connection(listener.on_message, LineTransport(reader, writer))
        try:
            answer = await asyncio.wait_for(
                conn.send_request(method, params or {}), max(deadline - loop.time(), 0.0)
            )
        except TimeoutError:
            pid = service_pid(data)
            end = f"`kill {pid}` ends it" if pid else f"its pid is in {service_lock(data)}"
            raise ServiceUnavailable(
                f"the Cockpit service for {data} does not answer in {answer_within:g} s: {end}"
            ) from None
        except ConnectionError:
            # Turned away: told so, or closed before the question was even written (a
            # flood of connections past the cap). While the service holds the store, ask
            # again until the deadline.
            if not listener.turned_away and not service_running(data):
                raise
            if loop.time() >= deadline:
                raise ServiceUnavailable(
                    f"the Cockpit service for {data} turned every question away for "
                    f"{answer_within:g} s (it serves as many clients as it may)"
                ) from None
            await asyncio.sleep(TURNED_AWAY_PAUSE)
            continue
        finally:
            await conn.close()
        return answer if isinstance(answer, dict) else {}


def service_running(data: Path) -> bool:
    """True while a service holds the store's lock (it may not listen yet, or any more)."""
    lock = service_lock(data)
    if not lock.exists():
        return False
    descriptor = os.open(lock, os.O_RDONLY)  # flock needs no write: a read-only store
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)  # closing lets go of a lock taken here
    return False


def service_pid(data: Path) -> int | None:
    """The pid of the service holding the store's lock (None when none does)."""
    if not service_running(data):
        return None
    try:
        return int(service_lock(data).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


async def wait_gone(data: Path) -> None:
    """Wait until the store's service has stopped (TimeoutError after GONE_TIMEOUT)."""
    async with asyncio.timeout(GONE_TIMEOUT):
        while service_running(data):  # noqa: ASYNC110 (a kernel lock tells no event)
            await asyncio.sleep(0.05)
