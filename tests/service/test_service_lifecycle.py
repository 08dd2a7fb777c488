"""The Cockpit service's life, with real processes: started detached by a client, private
to its user, one per store, replaced when stale, stopped when idle, and what a crash
leaves (no lost row, no orphaned agent, a session that says it was cut and resumes)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import os
import pwd
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cockpit import protocol
from cockpit.cli.service import manage
from cockpit.engine.recovery import CUT_BY_A_STOP
from cockpit.paths import (
    database_path,
    private_dir,
    service_lock,
    service_log,
    service_socket,
)
from cockpit.remote import link as remote_link
from cockpit.remote.engine import RemoteEngine
from cockpit.remote.launch import connect_or_start, open_socket, query_service
from cockpit.remote.link import ProtocolMismatch
from cockpit.service import daemon
from tests.support.proc_stat import stat_fields
from tests.support.service_helpers import (
    Terminal,
    cockpit,
    cockpit_env,
    pid_alive,
    pids_of,
    service_pid,
    services_stopped,
    spawn_cockpit,
)
from tests.support.waiting import eventually

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
    pytest.mark.real_spawn,
]
"""The service and its agents start as fresh interpreters here: these tests look for them
by their command lines and environments, signal them by pid and race their starts (the
forks of tests/support/agent_forks.py would show the fork server's command line and environment)."""

HELLO = ("run", "--agent", "demo", "--yes", "hello")
"""A short turn in a new session, which starts the service when none runs."""

KEPT = ("run", "--keep", "--agent", "demo", "--yes", "hello")
"""The same turn, whose agent goes on running in the service after it."""


@pytest.fixture
def short_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home whose socket fits in its own runtime folder (`$COCKPIT_HOME/run`), not in
    the short folder under the temporary folder that the tests' deep homes share. A test
    that opens its socket's folder to another user must not open every test's, nor race
    the other test processes' services, which make that shared folder owner-only again
    as they start (a knock was refused by the folder's mode once, not by the service)."""
    with tempfile.TemporaryDirectory(prefix="ck-") as top:
        home = Path(top) / "home"
        home.mkdir()
        monkeypatch.setenv("COCKPIT_HOME", str(home))
        monkeypatch.delenv("COCKPIT_LOCAL")
        with services_stopped(home):
            yield home


@contextlib.contextmanager
def open_to_others(folder: Path) -> Iterator[Path]:
    """`folder` writable by every user, and the folders above it up to the temporary
    folder passable, for a process of another user; each mode as it was afterwards."""
    top = Path(tempfile.gettempdir())
    chain = [folder]
    while chain[-1].parent != top:
        assert chain[-1].parent != chain[-1], f"{folder} is not in {top}"
        chain.append(chain[-1].parent)
    modes = {path: stat.S_IMODE(path.stat().st_mode) for path in chain}
    try:
        for path in chain:
            path.chmod(0o777 if path == folder else modes[path] | 0o011)
        yield folder
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """`result`, once it is known to have exited 0 (else fail with its output)."""
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def proc_stat(pid: int) -> tuple[int, int]:
    """The session id and the controlling terminal (tty_nr, 0: none) of a process."""
    fields = stat_fields(pid)
    return int(fields[3]), int(fields[4])


def store_query(home: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    """Rows of the store read with sqlite3 itself, as another reader of the file would."""
    connection = sqlite3.connect(f"file:{database_path()}?mode=ro", uri=True, timeout=10)
    try:
        return connection.execute(sql, params).fetchall()
    finally:
        connection.close()


def newest_session(home: Path) -> str:
    return str(store_query(home, "SELECT id FROM sessions ORDER BY created DESC LIMIT 1")[0][0])


def rows_of(home: Path, session: str) -> dict[str, tuple[str, str]]:
    """A session's stored rows: key -> (kind, text)."""
    rows = store_query(home, "SELECT key, kind, text FROM messages WHERE session = ?", session)
    return {key: (kind, text) for key, kind, text in rows}


async def status_of(home: Path) -> dict[str, Any] | None:
    """What `cockpit service status` reads (None: no service answers)."""
    return await query_service(home, protocol.STATUS)


async def session_status(home: Path, session: str) -> str | None:
    status = await status_of(home) or {}
    for live in status.get("sessions") or ():
        if live.get("id") == session:
            return str(live.get("status"))
    return None


async def turn_running(home: Path, session: str) -> None:
    """Wait until the service runs a turn of `session`."""

    async def working() -> bool:
        return await session_status(home, session) == "working"

    await eventually(working, what=f"a turn of {session} to run in the service")


def the_service(home: Path) -> int:
    """The pid of the service of `home` (failing when none runs)."""
    pid = service_pid(home)
    assert pid is not None, "no service runs"
    return pid


def agents_of(home: Path) -> list[int]:
    """The processes of `home` that are not its service (its agents, once no command runs)."""
    return [pid for pid in pids_of(home) if pid != service_pid(home)]


# -- 1. detached -------------------------------------------------------------------------------


def umask_of(pid: int) -> str:
    """A process's umask, as /proc says it."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return line.split()[1]
    raise AssertionError(f"/proc/{pid}/status says no umask")


def run_on_a_terminal(home: Path, *args: str) -> tuple[int, int, bytes]:
    """Run `cockpit ARGS` as a user does in a terminal of its own (a pty that is its
    controlling terminal, closed when it ends); its pid, exit code and output."""
    terminal = Terminal(home, *args)
    code, output = terminal.end(60)
    return terminal.process.pid, code, output.encode()


async def test_a_service_started_by_a_client_runs_detached_and_private(service_home: Path) -> None:
    client, code, output = run_on_a_terminal(service_home, *KEPT)
    assert code == 0, output.decode(errors="replace")
    pid = the_service(service_home)
    session_id, terminal = proc_stat(pid)
    assert session_id != client, "the service runs in the client's session"
    assert session_id == pid, "the service leads no session of its own"
    assert terminal == 0, "the service has a controlling terminal"

    os.kill(pid, signal.SIGHUP)
    answered = ok(cockpit("service", "status", home=service_home))
    assert f"pid {pid}" in answered.stdout
    assert pid_alive(pid)

    log = service_log(service_home)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert f"pid {pid}, listening on" in log.read_text()
    path = service_socket(service_home)
    assert stat.S_ISSOCK(path.stat().st_mode)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    shared = [str(p) for p in service_home.rglob("*") if stat.S_IMODE(p.stat().st_mode) & 0o077]
    assert shared == [], "files of the store others may read"

    # Only the socket is made private: the agents, and the files they write in a
    # project, keep the user's umask.
    agents = agents_of(service_home)
    assert agents, "the session's agent does not run in the service"
    assert {umask_of(agent) for agent in agents} == {umask_of(os.getpid())}


# -- 2. status, stop, restart ------------------------------------------------------------------


async def test_stop_and_restart_refuse_mid_turn_without_yes_and_leave_no_process(
    service_home: Path,
) -> None:
    ok(cockpit(*KEPT, home=service_home))
    session = newest_session(service_home)
    pid = the_service(service_home)
    said = ok(cockpit("service", "status", home=service_home)).stdout
    assert f"pid {pid}" in said and session in said and "ready" in said

    ok(cockpit("send", session, "slow", home=service_home))
    await turn_running(service_home, session)
    agents = agents_of(service_home)
    assert agents, "no agent process of the home runs the turn"
    for action in ("stop", "restart"):
        refused = cockpit("service", action, home=service_home)
        assert refused.returncode == 2, refused.stderr
        assert "1 turn(s) running" in refused.stderr
        assert session in refused.stderr and "working" in refused.stderr
        assert service_pid(service_home) == pid, f"`service {action}` without --yes stopped it"

    ok(cockpit("service", "restart", "--yes", home=service_home))
    restarted = service_pid(service_home)
    assert restarted is not None and restarted != pid
    assert not pid_alive(pid)
    assert not any(pid_alive(agent) for agent in agents), "an agent outlived its service"
    cut = [text for kind, text in rows_of(service_home, session).values() if kind == "notice"]
    assert any("the Cockpit service stopped" in text for text in cut), cut

    ok(cockpit("service", "stop", "--yes", home=service_home))
    assert service_pid(service_home) is None
    # The store is let go before the service's interpreter has exited: a moment, not more.
    await eventually(
        lambda: pids_of(service_home) == [], 5, "every process of the home to end after the stop"
    )
    gone = cockpit("service", "status", home=service_home)
    assert gone.returncode == 1 and "No Cockpit service runs" in gone.stdout


def children_of(pid: int) -> dict[int, str]:
    """The child processes of `pid`: pid -> state ("Z": a zombie its parent did not reap)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found[int(entry.name)] = fields[0].decode()
    return found


async def test_an_agent_that_dies_is_reaped_by_the_service(service_home: Path) -> None:
    ok(cockpit(*KEPT, home=service_home))
    session = newest_session(service_home)
    pid = the_service(service_home)
    (agent,) = children_of(pid)
    crashed = cockpit("send", session, "crash", "--wait", home=service_home)
    assert crashed.returncode != 0, "the crash scenario did not crash"
    await eventually(lambda: not pid_alive(agent), what="the crashed agent to end")
    await eventually(lambda: agent not in children_of(pid), what="the service to reap its agent")
    assert "Z" not in children_of(pid).values()


# -- 3. one service per store ------------------------------------------------------------------


def services_of(home: Path) -> list[int]:
    """The `cockpit service` processes of `home`."""
    found = []
    for pid in pids_of(home):
        try:
            arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"service" in arguments:
            found.append(pid)
    return found


async def test_two_clients_starting_at_once_end_on_one_service(service_home: Path) -> None:
    clients = [spawn_cockpit(*HELLO, home=service_home) for _ in range(2)]
    for client in clients:
        out, err = client.communicate(timeout=60)
        assert client.returncode == 0, f"a client failed:\n{out}\n{err}"
    services = services_of(service_home)
    assert len(services) == 1, f"{len(services)} services run on one store"
    pid = service_pid(service_home)
    assert services == [pid]
    assert (await status_of(service_home) or {}).get("pid") == pid
    assert len(store_query(service_home, "SELECT id FROM sessions")) == 2


async def test_two_starts_racing_in_one_instant_leave_one_service(service_home: Path) -> None:
    """Both see no socket and both launch a service (a sure race, not a likely one)."""
    connections = await asyncio.gather(
        connect_or_start(service_home), connect_or_start(service_home)
    )
    for _reader, writer in connections:
        writer.close()
    pid = the_service(service_home)
    await eventually(
        lambda: services_of(service_home) == [pid], what="the service that lost to exit"
    )
    assert "already runs" in service_log(service_home).read_text()
    assert (await status_of(service_home) or {}).get("pid") == pid


async def test_a_client_starting_while_the_service_stops_starts_another(service_home: Path) -> None:
    """A service that stops (idle, or asked to) holds the store's lock until its agents
    have stopped, after its socket is gone: a client that comes then starts a service that
    finds the lock taken and leaves; once the lock is free, the client starts another."""
    lock = os.open(service_lock(service_home), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the stopping service's
        client = spawn_cockpit(*HELLO, home=service_home)
        await eventually(
            lambda: (
                service_log(service_home).exists()
                and "already runs" in service_log(service_home).read_text()
            ),
            what="the client's service to find the store taken",
        )
    finally:
        os.close(lock)
    out, err = client.communicate(timeout=60)
    assert client.returncode == 0, f"the client failed:\n{out}\n{err}"
    assert services_of(service_home) == [service_pid(service_home)]


# -- 4. a stale socket -------------------------------------------------------------------------


async def test_a_client_replaces_a_service_killed_with_its_socket_left_behind(
    service_home: Path,
) -> None:
    ok(cockpit(*HELLO, home=service_home))
    pid = the_service(service_home)
    os.kill(pid, signal.SIGKILL)
    await eventually(lambda: service_pid(service_home) is None, what="the killed service to let go")
    assert service_socket(service_home).exists(), (
        "the killed service's socket is gone (no stale test)"
    )

    ok(cockpit(*HELLO, home=service_home))
    again = service_pid(service_home)
    assert again is not None and again != pid
    assert (await status_of(service_home) or {}).get("pid") == again


@pytest.mark.parametrize("left", ["a file", "a socket no one listens on"])
async def test_a_client_replaces_what_is_not_a_listening_socket(
    service_home: Path, left: str
) -> None:
    path = service_socket(service_home)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if left == "a file":
        path.write_text("not a socket")
    else:
        dead = socket.socket(socket.AF_UNIX)
        dead.bind(str(path))
        dead.close()
    ok(cockpit(*HELLO, home=service_home))
    assert stat.S_ISSOCK(path.stat().st_mode)
    assert (await status_of(service_home) or {}).get("pid") == service_pid(service_home)


async def test_a_service_that_hangs_is_said_to_hang(
    service_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(cockpit(*HELLO, home=service_home))
    pid = the_service(service_home)
    monkeypatch.setattr(remote_link, "HELLO_TIMEOUT", 0.5)
    os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.raises(ConnectionError, match="did not answer"):
            async with asyncio.timeout(10):  # a client that hangs too fails, and says so
                await RemoteEngine.attach(
                    lambda: open_socket(service_home), name="a hung one's client"
                )
        hung = cockpit("service", "status", home=service_home)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert hung.returncode == 6, hung.stderr
    assert "does not answer" in hung.stderr and f"kill {pid}" in hung.stderr
    assert "Traceback" not in hung.stderr


# -- 5. another user ---------------------------------------------------------------------------

KNOCK = """
import json, os, socket, sys
name, line, user = sys.argv[1], sys.argv[2], sys.argv[3:]
if user:
    os.setgroups([])
    os.setgid(int(user[1]))
    os.setuid(int(user[0]))
client = socket.socket(socket.AF_UNIX)
client.settimeout(20)
client.connect(name)
answer = b""
try:
    client.sendall(line.encode() + b"\\n")
    while not answer.endswith(b"\\n"):
        part = client.recv(65536)
        if not part:
            break
        answer += part
except (BrokenPipeError, ConnectionResetError):
    pass  # closed by the service: as good as an end of file
print(json.dumps({"uid": os.getuid(), "answer": answer.decode()}))
"""
"""Connect to the socket (by its name in the working folder: no folder above it need be
open to the user), as another user when given one, say hello and print the answer."""


def knock(path: Path, *user: int) -> dict[str, Any]:
    """What a client (of `user`: uid, gid) hears when it says hello to the socket."""
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": protocol.HELLO,
        "params": {"protocol": protocol.PROTOCOL_VERSION, "client": "knock", "pid": 1},
    }
    result = subprocess.run(
        [sys.executable, "-I", "-c", KNOCK, path.name, json.dumps(hello), *map(str, user)],
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root")
async def test_a_client_of_another_user_is_refused_and_logged(short_home: Path) -> None:
    home = short_home
    nobody = pwd.getpwnam("nobody")
    ok(cockpit(*HELLO, home=home))
    path = service_socket(home)
    assert path.parent == home / "run", "the socket is not in the home's own folder"
    assert "result" in knock(path)["answer"], "the service does not answer its own user"
    with open_to_others(path.parent):
        path.chmod(0o777)
        heard = knock(path, nobody.pw_uid, nobody.pw_gid)
    assert heard == {"uid": nobody.pw_uid, "answer": ""}
    await eventually(
        lambda: (
            f"refused a client: it is another user (uid {nobody.pw_uid})"
            in service_log(home).read_text()
        ),
        what="the refusal in the service's log",
    )
    assert (await status_of(home) or {}).get("pid") == service_pid(home)


IMPOSTOR = """
import json, os, socket, sys
os.setgroups([])
os.setgid(int(sys.argv[3]))
os.setuid(int(sys.argv[2]))
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
server.listen()
print("listening", flush=True)
while True:
    client, _ = server.accept()
    line = client.makefile("rb").readline()
    if line:
        asked = json.loads(line)
        answer = {"pid": 4242, "version": "0", "protocol": 1, "clients": 0, "sessions": []}
        reply = {"jsonrpc": "2.0", "id": asked.get("id"), "result": answer}
        client.sendall(json.dumps(reply).encode() + b"\\n")
    client.close()
"""
"""A process of another user that listens on the store's socket and answers anything."""


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root")
def test_a_socket_served_by_another_user_is_not_talked_to(short_home: Path) -> None:
    home = short_home
    nobody = pwd.getpwnam("nobody")
    path = service_socket(home)
    assert path.parent == home / "run", "the socket is not in the home's own folder"
    folder = private_dir(path.parent)
    impostor = None
    try:
        with open_to_others(folder):
            impostor = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-c",
                    IMPOSTOR,
                    path.name,
                    str(nobody.pw_uid),
                    str(nobody.pw_gid),
                ],
                cwd=folder,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert impostor.stdout is not None and impostor.stdout.readline() == "listening\n"
        asked = cockpit("service", "status", home=home)
        assert asked.returncode == 6, asked.stdout + asked.stderr
        assert f"served by another user (uid {nobody.pw_uid})" in asked.stderr
        assert "4242" not in asked.stdout

        ok(cockpit(*HELLO, home=home))  # a service of ours replaces it
        said = ok(cockpit("service", "status", home=home)).stdout
        assert f"pid {service_pid(home)}" in said
    finally:
        if impostor is not None:
            impostor.kill()
            impostor.wait(10)


# -- 6. another protocol -----------------------------------------------------------------------


async def test_a_client_of_another_protocol_is_told_to_restart_and_restart_works(
    service_home: Path,
) -> None:
    ok(cockpit(*HELLO, home=service_home))
    pid = the_service(service_home)
    theirs = protocol.PROTOCOL_VERSION
    ours = theirs + 1
    with pytest.MonkeyPatch.context() as newer:
        newer.setattr(protocol, "PROTOCOL_VERSION", ours)
        with pytest.raises(ProtocolMismatch) as mismatch:
            await RemoteEngine.attach(lambda: open_socket(service_home), name="a newer client")
        said = str(mismatch.value)
        assert f"speaks protocol {theirs}" in said and f"speaks {ours}" in said
        assert "cockpit service restart" in said

        assert (await status_of(service_home) or {}).get("pid") == pid  # no hello needed
        code = await manage(argparse.Namespace(action="restart", yes=True), service_home)
        assert code == 0
        restarted = service_pid(service_home)
        assert restarted is not None and restarted != pid
        assert not pid_alive(pid)
    engine = await RemoteEngine.attach(
        lambda: open_socket(service_home), name="a client of its version"
    )
    try:
        assert engine.service.get("pid") == restarted
    finally:
        await engine.close()


def test_the_command_line_says_a_protocol_mismatch_plainly(service_home: Path) -> None:
    ok(cockpit(*HELLO, home=service_home))
    newer = (
        "import sys; import cockpit.protocol as p; p.PROTOCOL_VERSION += 1; "
        "from cockpit.cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", newer, *HELLO],
        env=cockpit_env(service_home),
        cwd=service_home.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 6, result.stderr
    version = protocol.PROTOCOL_VERSION
    assert f"protocol {version}" in result.stderr and f"speaks {version + 1}" in result.stderr
    assert "cockpit service restart" in result.stderr
    assert "Traceback" not in result.stderr


# -- 7. idle -----------------------------------------------------------------------------------

IDLE = 1.0
"""Seconds a test's service waits idle before it stops by itself."""

IDLE_SOON = {"COCKPIT_SERVICE_IDLE": str(IDLE)}


async def gone(pid: int, what: str, timeout: float = 10) -> None:
    await eventually(lambda: not pid_alive(pid), timeout, what)


def log_size(home: Path) -> int:
    """How much the service's log holds now (what comes after it is the next service's)."""
    log = service_log(home)
    return log.stat().st_size if log.exists() else 0


async def idle_watcher_looked(home: Path, pid: int, since: int) -> str:
    """What the service's log says once its idle watcher has looked past the idle time with
    no client (the service, not the test, says when the idle time is over): that it stays
    for what runs, or that it stops. Nothing connects meanwhile (a client's leaving starts
    the idle clock again)."""

    def said() -> str:
        with service_log(home).open("rb") as log:
            log.seek(since)
            return log.read().decode(errors="replace")

    await eventually(
        lambda: daemon.STAYING in said() or "stopping" in said() or not pid_alive(pid),
        30,
        "the idle watcher to look past the idle time",
    )
    return said()


async def test_a_service_with_no_client_and_nothing_running_stops_by_itself(
    service_home: Path,
) -> None:
    ok(cockpit(*HELLO, home=service_home, env_extra=IDLE_SOON))
    pid = the_service(service_home)
    await gone(pid, "the idle service to stop by itself")
    assert pids_of(service_home) == [], "the idle service left a process behind"
    assert not service_socket(service_home).exists()


async def test_an_idle_service_waits_for_a_waiting_question(service_home: Path) -> None:
    ok(cockpit(*HELLO, home=service_home))
    session = newest_session(service_home)
    ok(cockpit("service", "stop", "--yes", home=service_home))
    since = log_size(service_home)
    ok(cockpit("send", session, "permission", home=service_home, env_extra=IDLE_SOON))
    pid = the_service(service_home)

    async def asked() -> bool:
        return (await status_of(service_home) or {}).get("questions") == 1

    await eventually(asked, what="the permission question to wait")
    said = await idle_watcher_looked(service_home, pid, since)
    assert "and 1 question(s) wait: " in said, said
    assert pid_alive(pid), "the service stopped while a question waited"
    ok(cockpit("answer", session, "1", home=service_home))
    await gone(pid, "the service to stop once the question was answered and the turn ended")


async def test_an_idle_service_waits_for_a_running_turn(service_home: Path) -> None:
    ok(cockpit(*HELLO, home=service_home))
    session = newest_session(service_home)
    ok(cockpit("service", "stop", "--yes", home=service_home))
    since = log_size(service_home)
    ok(cockpit("send", session, "slow", home=service_home, env_extra=IDLE_SOON))
    pid = the_service(service_home)
    await turn_running(service_home, session)
    said = await idle_watcher_looked(service_home, pid, since)
    assert "1 turn(s) run and 0 question(s) wait" in said, said
    assert pid_alive(pid), "the service stopped while a turn ran"
    assert await session_status(service_home, session) == "working"


# -- 8. killed mid-turn ------------------------------------------------------------------------


async def test_a_service_killed_mid_turn_loses_no_row_orphans_no_agent_and_resumes(
    service_home: Path,
) -> None:
    ok(cockpit(*HELLO, home=service_home))
    session = newest_session(service_home)
    ok(cockpit("send", session, "slow", home=service_home))
    await turn_running(service_home, session)
    await eventually(
        lambda: any(
            "A slow reply" in text for _kind, text in rows_of(service_home, session).values()
        ),
        what="the slow reply's row to be stored",
    )
    pid = the_service(service_home)
    agents = agents_of(service_home)
    assert agents, "no agent runs the turn"
    stored = rows_of(service_home, session)
    os.kill(pid, signal.SIGKILL)
    await gone(pid, "the killed service to go")
    await eventually(
        lambda: pids_of(service_home) == [], 5, "the agents of the killed service to end with it"
    )

    ok(cockpit("service", "restart", "--yes", home=service_home))
    after = rows_of(service_home, session)
    for key, (kind, text) in stored.items():
        assert key in after, f"row {key} ({kind}) was stored, and lost"
        assert after[key][0] == kind and after[key][1].startswith(text), f"row {key} changed"
    notices = [text for kind, text in after.values() if kind == "notice"]
    assert CUT_BY_A_STOP in notices

    resumed = ok(cockpit("send", session, "hello", "--wait", home=service_home))
    assert "Welcome to Cockpit" in resumed.stdout
