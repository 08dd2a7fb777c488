"""The TUI in tests against either engine: the one in the test's process ("local"), or a
real `cockpit service` in a subprocess reached over its socket through a `RemoteEngine`
("service"), so that one interaction test runs against both.

Most snapshot tests stay on the engine in process: a picture of what the engine stamps
while it is taken needs the engine's fixed clock, which a service in another process
cannot have. Pictures of stored rows are taken through a service too
(`test_service_snapshots.py`). Every service started here is stopped when its test ends
(SIGTERM, then SIGKILL), whatever the test did to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from cockpit.api import AgentSpec, EngineAPI, Row
from cockpit.engine.core import Engine
from cockpit.remote.engine import RemoteEngine
from cockpit.remote.launch import open_socket
from cockpit.ui.app import CockpitApp
from cockpit.ui.transcript import TranscriptView
from tests.support.agent_forks import through_server
from tests.support.service_helpers import kill_all, pids_of
from tests.support.waiting import eventually

ENGINES = ("local", "service")
"""The engines an interaction test is parametrized over."""

SERVICE_IDLE = 30
"""Seconds a test's service waits idle before it stops by itself (a test stops it first)."""

SERVICE_START = 20.0
"""Seconds a service may take to listen (a busy machine runs two test processes)."""

SERVICE_STOP = 20.0
"""Seconds a service may take to stop its agents after SIGTERM before it is killed."""


@dataclass
class ServiceProcess:
    """One `python -m cockpit --data-dir HOME service` subprocess of a test."""

    home: Path
    process: asyncio.subprocess.Process
    log: Path

    def alive(self) -> bool:
        return self.process.returncode is None

    def output(self) -> str:
        """What the service wrote (for a failure message)."""
        try:
            return self.log.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    async def listening(self) -> None:
        """Wait until the service answers on its socket (fail, with its output, when it
        exits or does not come up)."""

        async def answers() -> bool:
            if not self.alive():
                raise AssertionError(f"the service exited at start:\n{self.output()}")
            try:
                _reader, writer = await open_socket(self.home)
            except ConnectionError:
                return False
            writer.close()
            return True

        await eventually(answers, SERVICE_START, "the service to listen on its socket")

    async def kill(self) -> None:
        """SIGKILL: the service dies at once, as after a crash or an OOM kill (its agents
        are left to notice their input closed)."""
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await self.process.wait()

    async def stop(self) -> None:
        """SIGTERM (its agents stop, its turns get a notice), SIGKILL if it lingers."""
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), SERVICE_STOP)
        except TimeoutError:
            await self.kill()


async def start_service(home: Path, idle: float = SERVICE_IDLE) -> ServiceProcess:
    """Start `cockpit service` on the store in `home` in the background, as a user does in
    a terminal (the same environment: COCKPIT_HOME says where its socket goes), and wait
    until it listens."""
    home.mkdir(parents=True, exist_ok=True)
    log = home.parent / f"service-{time.monotonic_ns()}.log"
    command = [sys.executable, "-m", "cockpit", "--data-dir", str(home), "service"]
    with log.open("wb") as output:
        process = await asyncio.create_subprocess_exec(
            *through_server([*command, "--idle", str(idle)]),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # a Ctrl+C in pytest's terminal is the test's to handle
        )
    service = ServiceProcess(home, process, log)
    try:
        await service.listening()
    except BaseException:
        await service.kill()
        raise
    return service


EngineFactory = Callable[[], Awaitable[EngineAPI]]


@dataclass
class Engines:
    """Makes apps (and bare engines) of one kind on one home; keeps the services it
    started, to stop them all at the end."""

    kind: str
    home: Path
    project: Path
    services: list[ServiceProcess] = field(default_factory=list)

    @property
    def service(self) -> ServiceProcess:
        """The service now running (the last one started)."""
        assert self.services, "no service was started"
        return self.services[-1]

    def factory(self) -> EngineFactory:
        """What opens an engine: in this process, or attached to the home's service."""
        home = self.home
        if self.kind == "local":

            async def in_process() -> EngineAPI:  # reads home/config when used, as a service
                return await Engine.open(home, config=home / "config", handshake_timeout=15)

            return in_process

        async def attached() -> EngineAPI:
            return await RemoteEngine.attach(lambda: open_socket(home), name="test-client")

        return attached

    def app(
        self, folder: Path | None = None, *, agent: str | AgentSpec | None = None
    ) -> CockpitApp:
        """An app on the home, opened in `folder` (the project by default)."""
        folder = folder or self.project
        folder.mkdir(parents=True, exist_ok=True)
        return CockpitApp(
            self.factory(),
            folder=folder,
            agent=agent,
            blink=False,
            settings_file=self.home / "config" / "settings.json",
            themes_dir=self.home / "config" / "themes",
        )

    async def start_service(self) -> ServiceProcess:
        """Start a (new) service on the home."""
        service = await start_service(self.home)
        self.services.append(service)
        return service

    async def stop(self) -> None:
        """Stop every service started, and kill what outlived them (the agents of a
        service killed by a test)."""
        for service in self.services:
            await service.stop()
        kill_all(pids_of(self.home))


@contextlib.asynccontextmanager
async def engines_of(kind: str, home: Path, project: Path) -> AsyncIterator[Engines]:
    """Apps of `kind` on `home`: for "service", a service runs on it throughout (and
    every service started meanwhile is stopped at the end)."""
    engines = Engines(kind, home, project)
    try:
        if kind == "service":
            await engines.start_service()
        yield engines
    finally:
        await engines.stop()


def screen_differences(app: CockpitApp, rows: list[Row]) -> list[str]:
    """Where the transcript on screen differs from the session's stored rows: its model,
    bubble by bubble (key, kind, text), against the rows of the same keys, and no row
    after the first one shown missing from it (the screen holds the tail page)."""
    view = app.query_one(TranscriptView)
    by_key = {row.key: (row.kind, row.text) for row in rows}
    problems = []
    for bubble in view.model:
        stored = by_key.get(bubble.key)
        if stored != (bubble.kind, bubble.text):
            seen = f"{bubble.kind} ({len(bubble.text)} characters)"
            kept = "none" if stored is None else f"{stored[0]} ({len(stored[1])} characters)"
            problems.append(f"bubble {bubble.key}: {seen} on screen, its row {kept}")
    shown = {bubble.key for bubble in view.model}
    first = min((row.seq for row in rows if row.key in shown), default=None)
    missing = [row.key for row in rows if first is None or row.seq > first]
    missing = [key for key in missing if key not in shown]
    if missing:
        problems.append(f"rows not on screen: {missing}")
    return problems


async def screen_equals_rows(app: CockpitApp, session: str, timeout: float = 15) -> None:
    """Wait until the transcript on screen shows `session` exactly as its stored rows
    (chunks still on their way through the service get there)."""
    view = app.query_one(TranscriptView)
    last: list[str] = []

    async def same() -> bool:
        nonlocal last
        if view.session != session:
            last = [f"the screen shows {view.session}, not {session}"]
            return False
        last = screen_differences(app, await app.engine.rows(session))
        return not last

    try:
        await eventually(same, timeout, f"the screen to show the rows of {session}")
    except AssertionError as error:
        raise AssertionError(f"{error}: {'; '.join(last)}") from None
