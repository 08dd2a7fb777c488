"""The engine a client uses (the TUI, the command line), built in one place: in its own
process (`--local`), or the store's service, reached over its socket (started, detached,
when none runs) or through a command that speaks to a service elsewhere (`--remote`,
`--via`). Whatever it builds is typed as the contract (`cockpit.api.EngineAPI`, or
`ReaderAPI` for what only reads), so the clients import no engine, no service and no
client of the service: this module does it for them. It also answers what a client asks
of this side without an engine (the agents `agents.toml` names here) and starts, asks
and stops the service."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from cockpit.api import (
    AgentInfo,
    AgentSpec,
    EngineAPI,
    LinkEvent,
    ReaderAPI,
)
from cockpit.engine.core import Engine
from cockpit.engine.reading import StoreReader
from cockpit.engine.registry import (
    Registry,
    agent_from_command,
    executable,
    load_registry,
)
from cockpit.paths import private_dir, ssh_control_path
from cockpit.protocol import STATUS, STOP
from cockpit.remote.bridge import bridge
from cockpit.remote.engine import RemoteEngine
from cockpit.remote.last_words import hear
from cockpit.remote.launch import (
    GONE_TIMEOUT,
    BridgeUnusable,
    Streams,
    connect_or_start,
    end_command,
    open_command,
    query_service,
    service_pid,
    wait_gone,
)
from cockpit.remote.link import ProtocolMismatch, ServiceFull
from cockpit.service import daemon

LOCAL_ENV = "COCKPIT_LOCAL"
"""Set to 1: every command runs the engine in its own process, as `--local` does."""

SSH_ENV = "COCKPIT_SSH"
"""The ssh command `--remote` runs (split as a shell would), "ssh" when unset: another
client, or options of the user's own (`ssh -J jump`)."""

BRIDGE_HELLO_TIMEOUT = 180.0
"""Seconds a service reached through a bridge command may take to answer: the first
answer waits for the command to connect, a password or passphrase typed included."""

BRIDGE_PATIENCE = 3.0
"""Seconds a bridge command may stay silent before the user is told what is awaited."""

SERVICE_READ_TIMEOUT = 3.0
"""Seconds `ls` and `show` wait for the store's service before they read the store
without it."""

T = TypeVar("T")

SSH_PERSIST = 60
"""Seconds the connection `--remote` shares stays open after its last use."""


def remote_bridge(
    host: str, environ: Mapping[str, str] | None = None, *, ask: bool = True
) -> tuple[str, ...]:
    """The bridge command of `--remote HOST`: `cockpit service --stdio` on HOST through the
    user's ssh, with their config and keys. Its runs share one connection (a control
    socket, owner-only): the user authenticates once, as the command starts on a plain
    terminal, and each later run (the screen opening, attaching again after a cut) goes
    through that connection. Not `ask`: ssh fails rather than ask for a password (the
    screen's runs: a prompt under the screen would fight it for the keyboard). The control
    socket's folder is checked as the service's socket's is: a link, or a folder of
    another user's, is refused (ForeignFolder), never handed to ssh."""
    env = os.environ if environ is None else environ
    control = ssh_control_path(env)
    private_dir(control.parent, follow=False)
    return (
        *ssh_command(env),
        "-T",
        "-o",
        "ControlMaster=auto",
        "-o",
        f"ControlPath={control}",
        "-o",
        f"ControlPersist={SSH_PERSIST}",
        *(() if ask else ("-o", "BatchMode=yes")),
        host,
        *REMOTE_SERVICE,
    )


REMOTE_SERVICE = ("cockpit", "service", "--stdio")
"""What `--remote` runs on the host."""


def ssh_command(environ: Mapping[str, str]) -> list[str]:
    """The user's ssh: COCKPIT_SSH (`ssh -J jump`, say) or plain `ssh`."""
    return shlex.split(environ.get(SSH_ENV) or "ssh")


Connector = Callable[[], Awaitable[Streams]]
"""What opens a connection to the service (each time a client attaches)."""


@dataclass(frozen=True)
class Reach:
    """How a command reaches the engine."""

    local: bool = False
    """The engine in this process: its agents stop when the command ends."""
    via: tuple[str, ...] = ()
    """A command whose stdin and stdout speak to a service (`ssh HOST cockpit service
    --stdio`); empty: the service of the local store."""
    remote: str | None = None
    """The host of `--remote` (`via` is its ssh); None: `via` is the user's own command."""
    screen: bool = False
    """The client runs under the screen: what a bridge command says on stderr is read by
    it (the status line shows it while the link is cut) rather than written over the
    screen."""

    @classmethod
    def chosen(
        cls, *, local: bool = False, via: str | None = None, remote: str | None = None
    ) -> Reach:
        """What `--local`, `--remote HOST`, `--via CMD` and COCKPIT_LOCAL say: `via` is the
        user's command (split as a shell would), `remote` a host reached with their ssh."""
        command: tuple[str, ...] = ()
        if via:
            command, remote = tuple(shlex.split(via)), None
        elif remote:
            command = remote_bridge(remote)
        local = local or (not command and os.environ.get(LOCAL_ENV, "") not in ("", "0"))
        return cls(local=local, via=command, remote=remote or None)

    def under_screen(self) -> Reach:
        """This reach for a client that runs under the screen: a bridge's stderr is read,
        not written over the screen, and `--remote`'s ssh asks nothing (the user logged in
        as the command started; a connection that has died since says so on the status
        line rather than prompting under the screen). A `--via` command is the user's own,
        run as it is."""
        if self.remote is None:
            return replace(self, screen=bool(self.via))
        return replace(self, via=remote_bridge(self.remote, ask=False), screen=True)

    @property
    def where(self) -> str:
        """The service this reach attaches to, in words: for `--remote`, the command a user
        would type to try it (the shared connection's options left out)."""
        if self.local:
            return "this process"
        if self.remote is not None:
            return shlex.join((*ssh_command(os.environ), self.remote, *REMOTE_SERVICE))
        return shlex.join(self.via) if self.via else "here"


async def open_engine(
    home: Path,
    *,
    reach: Reach | None = None,
    start: bool = True,
    on_cut: Callable[[], None] | None = None,
) -> EngineAPI:
    """The engine of the store in `home`: in this process (`reach.local`), else its
    service, started when none runs and `start` (ConnectionError when none can be reached;
    ProtocolMismatch when it speaks another version). The engine reads its own config
    (`agents.toml`, `policy.toml`) when it uses it: in this process, or the service's.

    A client of the service attaches again when its connection is cut (the service
    restarted, an SSH link dropped); with `on_cut` it does not: `on_cut` is called instead,
    once (a command that follows the service ends rather than start a new one)."""
    reach = reach or Reach()
    if reach.local:
        return await Engine.open(home)
    bridges = Bridges(reach.via, hear_stderr=reach.screen) if reach.via else None
    connector: Connector = (
        bridges.connect if bridges else lambda: connect_or_start(home, start=start)
    )
    if on_cut is not None:
        connector = _once(connector, on_cut)
    attaching = ServiceEngine.attach(
        connector,
        name=f"cockpit-{os.getpid()}",
        hello_timeout=BRIDGE_HELLO_TIMEOUT if bridges else None,
        send_environment=bridges is None,  # the far side's bridge puts in its own
    )
    if bridges is None:
        engine = await attaching
        assert isinstance(engine, ServiceEngine)
    else:
        engine = await _through_bridges(attaching, bridges, reach)
    if on_cut is not None:  # a service stopped for good is not attached again to find out
        cut = on_cut
        engine.subscribe(
            lambda event: (
                cut()
                if isinstance(event, LinkEvent) and engine.service_stopped is not None
                else None
            )
        )
    return engine


async def _through_bridges(
    attaching: Awaitable[RemoteEngine], bridges: Bridges, reach: Reach
) -> ServiceEngine:
    """The client attaching through a bridge command, or why it cannot: a command that
    cannot run, a service of another protocol, a silence broken by Ctrl+C (each ending
    the command)."""
    try:
        engine = await (attaching if reach.screen else _patiently(attaching, reach.where))
        assert isinstance(engine, ServiceEngine)
    except BridgeUnusable as error:
        await bridges.end()
        if reach.remote is None:
            raise
        raise BridgeUnusable(f"{error} ({SSH_ENV} names the ssh `--remote` runs)") from None
    except (ProtocolMismatch, ServiceFull):  # the service answered, and said why
        await bridges.end()
        raise
    except ConnectionError as error:
        await bridges.end()
        message = f"no Cockpit service answered through `{reach.where}` ({error})"
        raise ConnectionError(message) from error
    except BaseException:  # Ctrl+C while the command connects: it ends too
        await bridges.end(at_once=True)
        raise
    engine.bridges = bridges
    bridges.answered = True
    bridges.listener = engine.link_said
    return engine


async def _patiently(attaching: Awaitable[T], where: str) -> T:
    """Wait for a bridge command's first answer, telling the user once, after
    BRIDGE_PATIENCE seconds of silence, what is awaited and how to give up."""
    said = asyncio.get_running_loop().call_later(
        BRIDGE_PATIENCE,
        note,
        f"waiting for `{where}` to answer (a password, a slow login?); Ctrl+C gives up",
    )
    try:
        return await attaching
    finally:
        said.cancel()


def note(text: str) -> None:
    """Tell the user something on stderr, where the command line's words go."""
    print(f"cockpit: {text}", file=sys.stderr, flush=True)


def _once(connect: Connector, on_cut: Callable[[], None]) -> Connector:
    """A connector that connects the first time only; each later call (the client
    attaching again after a cut) fails, and the first of them calls `on_cut`."""
    calls = 0

    async def first_only() -> Streams:
        nonlocal calls
        calls += 1
        if calls == 1:
            return await connect()
        if calls == 2:
            on_cut()
        raise ConnectionError("the connection to the Cockpit service was cut")

    return first_only


class Bridges:
    """The bridge command of `--via` or `--remote`, run again each time the client
    attaches (its connection is the command's stdin and stdout).

    Until a service has answered through one, a bridge that fails (ends with an exit code
    other than 0: ssh found no host or was refused, `cockpit` is not installed there, the
    service could not start) ends the attempt at once, saying so, rather than being run
    again while the client waits for a successor service: only a bridge that ends
    cleanly before the answer stands for a service going away. Once one has answered, a
    bridge that fails is a dropped link, and the client attaches again as after any cut.

    With `hear_stderr` (under the screen) what the commands say on stderr is read here: the
    last line is kept, and handed to `listener` as it comes."""

    def __init__(self, command: tuple[str, ...], *, hear_stderr: bool = False) -> None:
        self.command = command
        self.hear_stderr = hear_stderr
        self.answered = False
        """A service has answered through one of them."""
        self.said: str | None = None
        """The last line a command said on stderr (heard only with `hear_stderr`)."""
        self.listener: Callable[[str], None] | None = None
        self._running: list[asyncio.subprocess.Process] = []
        self._hearing: set[asyncio.Task[None]] = set()

    async def connect(self) -> Streams:
        failed = [code for code in await self.end() if code > 0]  # the last one has ended
        if failed and not self.answered:
            said = f": {self.said}" if self.said else ""
            raise ConnectionError(f"the command ended with exit code {failed[-1]}{said}")
        try:
            streams, process = await open_command(self.command, hear_stderr=self.hear_stderr)
        except BridgeUnusable as error:  # gone since the last run: the status line says so
            self._heard(str(error))
            raise
        self._running.append(process)
        if process.stderr is not None:
            hearing = asyncio.ensure_future(hear(process.stderr, self._heard))
            self._hearing.add(hearing)
            hearing.add_done_callback(self._hearing.discard)
        return streams

    def _heard(self, line: str) -> None:
        self.said = line
        if self.listener is not None:
            self.listener(line)

    async def end(self, *, at_once: bool = False) -> list[int]:
        """Let the bridges run so far go (`at_once`: tell them to end now), and wait for
        them to end: their exit codes. What they said last is heard to its end."""
        codes = []
        while self._running:
            codes.append(await end_command(self._running.pop(), at_once=at_once))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self._hearing, return_exceptions=True), 1)
        return codes


class ServiceEngine(RemoteEngine):
    """A client of the service; one reached through a bridge command ends it on close."""

    bridges: Bridges | None = None

    async def close(self, reason: str = "Cockpit quit") -> None:
        await super().close(reason)
        if self.bridges is not None:
            await self.bridges.end()


async def open_reader(home: Path, reach: Reach) -> ReaderAPI:
    """What reads the store (`ls`, `show`, `inspect`): the service when one runs (it knows
    what runs live; through `--via` or `--remote`, only that service), else the store
    itself, read-only. A read starts no service and writes nothing. A service that does
    not answer within SERVICE_READ_TIMEOUT is left alone, saying so, and the store read
    without it."""
    if reach.via:
        return await open_engine(home, reach=reach, start=False)
    if not reach.local:
        try:
            async with asyncio.timeout(SERVICE_READ_TIMEOUT):
                return await open_engine(home, reach=reach, start=False)
        except TimeoutError:
            note(service_silent(home))
        except ConnectionError:
            pass  # none runs (or not ours, or of another version): read the store
    return await StoreReader.open(home)


def service_silent(home: Path) -> str:
    """Why a read went around the store's service, in words."""
    pid = service_pid(home)
    who = f"the Cockpit service (pid {pid})" if pid else "the Cockpit service"
    return (
        f"{who} did not answer within {SERVICE_READ_TIMEOUT:g} s; read from the store without"
        " it (no live states)"
    )


async def read_store(home: Path, reach: Reach, read: Callable[[ReaderAPI], Awaitable[T]]) -> T:
    """`read` through `open_reader`'s reader. A service that stops answering midway is
    left, saying so, and the store read without it (not through a bridge: only its
    service is asked)."""
    reader = await open_reader(home, reach)
    try:
        if reach.via or isinstance(reader, StoreReader):
            return await read(reader)
        try:
            async with asyncio.timeout(SERVICE_READ_TIMEOUT):
                return await read(reader)
        except TimeoutError:
            note(service_silent(home))
    finally:
        await reader.close()
    alone = await StoreReader.open(home)
    try:
        return await read(alone)
    finally:
        await alone.close()


async def service_status(home: Path) -> dict[str, object] | None:
    """What the store's service runs (None: no service runs)."""
    return await query_service(home, STATUS)


async def stop_service(home: Path, *, restart: bool = False) -> tuple[int, int] | None:
    """Stop the store's service and wait until it has let go of the store: the messages
    and characters it could not save, None when none ran. Its clients are told it stopped
    for good, unless it is to be `restart`ed."""
    answer = await query_service(home, STOP, {"restart": restart}, answer_within=GONE_TIMEOUT)
    if answer is None:
        return None
    await wait_gone(home)
    return counted(answer.get("lost"))


def counted(value: object) -> tuple[int, int]:
    """Messages and characters, as the service counts them ((0, 0) when it does not)."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(n, int) for n in value):
        return value[0], value[1]
    return 0, 0


async def start_service(home: Path) -> None:
    """Start the store's service, detached, and wait until it listens."""
    _reader, writer = await connect_or_start(home)
    writer.close()


def run_service(home: Path, idle: float | None) -> int:
    """`cockpit service` in the foreground."""
    return daemon.run(home, daemon.IDLE_DEFAULT if idle is None else idle)


def bridge_service(home: Path, idle: float | None) -> int:
    """`cockpit service --stdio`."""
    return asyncio.run(bridge(home, idle))


def local_agents() -> tuple[list[AgentInfo], list[str]]:
    """The agents this side's `agents.toml` names (over the bundled ones), whether each
    one's program is installed here, and the problems met reading the file."""
    registry = load_registry()
    infos = [AgentInfo(spec, executable(spec) is not None) for spec in registry.agents.values()]
    return infos, list(registry.problems)


def agent_command(command: str, *, missing_file: str | None = None) -> AgentSpec:
    """An agent given as a command (`--agent-cmd "CMD ARGS"`): how it runs, with the settings
    of the entry of this side's `agents.toml` whose program it runs, and `missing_file`.
    ValueError, saying why, when the command is wrong."""
    agents = load_registry().agents
    return agent_from_command(command, agents, missing_file=missing_file)


def agent_named(name: str, agents: Sequence[AgentInfo]) -> AgentSpec:
    """The agent called `name` among those an engine knows; a KeyError that lists the known
    names otherwise."""
    return Registry({info.spec.name: info.spec for info in agents}).get(name)
