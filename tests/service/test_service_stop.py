"""How the service stops, with real processes: a stop by the user sticks and its clients say
so; a shutdown that meets a failure still ends the process and its agents; a store removed
or replaced under the service stops it, and its clients hear what was not kept; a full
disk's unsaved text is shown by `status` and counted by `stop`."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cockpit import protocol
from cockpit.api import ServiceStopped
from cockpit.cli.exits import EXIT_SERVICE, EXIT_STORE, EXIT_USAGE
from cockpit.paths import service_socket
from cockpit.remote.engine import RemoteEngine
from cockpit.service import server
from tests.support.service_helpers import (
    cockpit,
    cockpit_env,
    pid_alive,
    pids_of,
    service_pid,
    spawn_cockpit,
)
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

HELLO = ("run", "--agent", "demo", "--yes", "--keep", "hello")
"""A short turn in a new session whose agent stays up."""


def wait_for(condition: Callable[[], object], what: str, timeout: float = 30) -> None:
    """Poll `condition` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.05)


def streaming(home: Path) -> subprocess.Popen[str]:
    """`cockpit run` of the demo agent's slow reply, once its first line is out."""
    run = spawn_cockpit("run", "--agent", "demo", "--yes", "slow", home=home)
    assert run.stdout is not None
    assert run.stdout.readline().startswith("# A slow reply")
    return run


def ended(run: subprocess.Popen[str]) -> tuple[int, str]:
    """The run's exit code and its stderr, once it ended (killed after 30 s)."""
    try:
        _out, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    return run.returncode, err


def service_by_hand(home: Path, *before: str) -> subprocess.Popen[bytes]:
    """`cockpit service` on `home` in a fresh interpreter, as a user starts it in a
    terminal (not a fork: how its process ends is what some tests look at); `before` runs
    it through a wrapper module, such as `tests.support.full_disk`'s."""
    command = [sys.executable, "-m", *(before or ("cockpit",)), "--data-dir", str(home)]
    with (home / "service.out").open("wb") as output:
        service = subprocess.Popen(
            [*command, "service", "--idle", "60"],
            env=cockpit_env(home),
            cwd=Path(__file__).resolve().parents[2],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=output,
            start_new_session=True,
        )
    wait_for(lambda: service_pid(home) == service.pid, "the service to start", 30)
    return service


def test_a_run_whose_service_the_user_stops_says_so_and_no_service_comes_back(
    service_home: Path,
) -> None:
    run = streaming(service_home)
    stopped = cockpit("service", "stop", "--yes", home=service_home)
    assert stopped.returncode == 0, stopped.stderr
    code, err = ended(run)
    assert code == EXIT_SERVICE, err
    assert "the Cockpit service was stopped by `cockpit service stop`" in err
    assert "Traceback" not in err
    # A client used to start the next service about 4 s later. The run has ended: once no
    # process of the store is left (the stopped service's agents end), none can start one.
    wait_for(lambda: not pids_of(service_home), "every process of the store to end")
    assert service_pid(service_home) is None


def test_a_service_whose_socket_cannot_be_removed_still_ends_with_its_agents(
    service_home: Path,
) -> None:
    """A folder where the socket was: removing the socket fails as the service stops. It
    used to linger for good, with its agent, its lock let go."""
    service_home.mkdir(parents=True, exist_ok=True)
    pid = service_by_hand(service_home).pid
    assert cockpit(*HELLO, home=service_home).returncode == 0
    agents = [other for other in pids_of(service_home) if other != pid]
    assert agents, "the run's agent should still run in the service"
    socket = service_socket(service_home)
    socket.unlink()
    socket.mkdir()
    (socket / "in the way").write_text("")
    os.kill(pid, signal.SIGTERM)
    wait_for(lambda: not pid_alive(pid), "the service to end", 30)
    wait_for(lambda: not any(pid_alive(agent) for agent in agents), "its agents to end", 10)
    assert "could not remove the socket" in (service_home / "service.out").read_text()


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_store_removed_under_the_service_stops_it_and_says_what_was_lost(
    service_home: Path, tmp_path: Path, how: str
) -> None:
    """The store's folder removed (or moved away and another made in its place) while a
    reply streams: the run does not report success, it says how much could not be kept,
    and the service, which would write into a file no one can open, ends."""
    run = streaming(service_home)
    pid = service_pid(service_home)
    assert pid is not None
    if how == "removed":  # the service may write a log as it goes: what is left stays
        shutil.rmtree(service_home, ignore_errors=True)
        assert not (service_home / "cockpit.db").exists()
    else:
        service_home.rename(tmp_path / "moved away")
        service_home.mkdir()
    code, err = ended(run)
    assert code == EXIT_STORE, err
    assert "was removed or replaced while the Cockpit service ran" in err
    assert "could not be kept" in err
    wait_for(lambda: not pid_alive(pid), "the service to end", 30)


def test_status_and_stop_say_what_a_full_disk_has_not_saved(service_home: Path) -> None:
    """Disk full: `status` shows the sessions with unsaved text; `stop` without --yes says
    how much it would lose and does not stop; with --yes it says what was lost (it once
    printed only "Stopped", having lost most of a reply)."""
    service = service_by_hand(service_home, "tests.support.full_disk", "4", "-1")
    try:
        run = cockpit("run", "--agent", "demo", "--yes", "bench 20000", home=service_home)
        assert run.returncode == EXIT_STORE, run.stderr
        status = cockpit("service", "status", home=service_home)
        assert "NOT SAVED:" in status.stdout, status.stdout
        assert "not saved" in status.stdout.split("NOT SAVED:")[1]
        refused = cockpit("service", "stop", home=service_home)
        assert refused.returncode == EXIT_USAGE, refused.stderr
        assert "not saved yet" in refused.stderr
        assert service_pid(service_home) == service.pid
        stopped = cockpit("service", "stop", "--yes", home=service_home)
        assert stopped.returncode == EXIT_STORE, stopped.stderr
        assert "could not be saved and are lost" in stopped.stderr
        assert "database or disk is full" in stopped.stderr
        service.wait(30)
    finally:
        if service.poll() is None:
            service.kill()
            service.wait()


def test_a_reply_streaming_onto_a_healthy_disk_is_not_said_unsaved(service_home: Path) -> None:
    """What waits for the next flush (a tenth of a second) is no loss: while a reply
    streams and writes work, `status` shows nothing unsaved, whatever moment it is asked
    at (it said "NOT SAVED" at almost every moment of a streaming reply)."""
    run = streaming(service_home)
    try:
        for _ in range(5):
            status = cockpit("service", "status", home=service_home)
            assert "working" in status.stdout, status.stdout
            assert "NOT SAVED" not in status.stdout
            assert "not saved" not in status.stdout
    finally:
        run.kill()
        run.wait()


def line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


async def test_a_stop_said_as_the_connection_ends_is_heard_first(tmp_path: Path) -> None:
    """The service's last word (it stopped for good) and the end of its connection can
    come in one read: the client hears the word before it takes the end for a cut (the
    SDK runs each notification as a task of its own, and the end was seen first; a run
    then said the service went away without a word)."""
    path = tmp_path / "service.sock"
    stopped = ServiceStopped("stopped by `cockpit service stop`")

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hello = json.loads(await reader.readline())
        writer.write(line({"jsonrpc": "2.0", "method": protocol.STATE, "params": {}}))
        writer.write(line({"jsonrpc": "2.0", "id": hello["id"], "result": {"pid": 1}}))
        while message := await reader.readline():
            if json.loads(message).get("method") == protocol.CALL:
                notice = {"stopped": protocol.encode(stopped)}
                writer.write(line({"jsonrpc": "2.0", "method": protocol.STOPPED, "params": notice}))
                writer.close()
                return

    server = await asyncio.start_unix_server(serve, str(path))
    engine = await RemoteEngine.attach(lambda: asyncio.open_unix_connection(str(path)))
    try:
        with pytest.raises(ConnectionError):
            await engine.prompt("a session", "hello")
        assert engine.service_stopped == stopped
        await eventually(lambda: engine.link_problem == stopped.reason, 5)
    finally:
        await engine.close()
        server.close()


class Link:
    """A client's link as `tell_stopped` sees it: an outbox that takes the notice or not,
    that empties in time or not, and the connection under it."""

    def __init__(self, *, takes: bool, empties: bool) -> None:
        self.takes, self.empties = takes, empties
        self.queued: list[str] = []
        self.sent: list[str] = []
        self.conn = self

    def post(self, method: str, params: object, size: int) -> bool:
        if self.takes:
            self.queued.append(method)
        return self.takes

    async def drained(self) -> None:
        if not self.empties:
            await asyncio.sleep(60)

    async def send_notification(self, method: str, params: object) -> None:
        self.sent.append(method)


@pytest.mark.parametrize(
    ("takes", "empties", "straight"),
    [(True, True, False), (True, False, True), (False, True, True)],
)
async def test_the_stop_goes_straight_to_a_client_whose_outbox_does_not_carry_it(
    monkeypatch: pytest.MonkeyPatch, takes: bool, empties: bool, straight: bool
) -> None:
    """In its turn when the outbox takes it and empties; else (a stream keeps the outbox
    full, or it was dropped for a resync) straight to the socket, so that the client does
    not take the stop for a crash (a run said the service went away without a word)."""
    monkeypatch.setattr(server, "TELL_TIMEOUT", 0.05)
    link = Link(takes=takes, empties=empties)
    await server.tell_stopped(link, {"stopped": {}})  # type: ignore[arg-type]
    assert link.sent == ([protocol.STOPPED] if straight else [])
