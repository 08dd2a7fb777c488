"""The service reached through a command (`--via`, `--remote`): `cockpit service --stdio`
copies the protocol between its stdin/stdout and the store's service, so the agents belong
to the service and outlive the bridge; a client whose bridge dies runs the command again and
reads what it missed. With an sshd of its own, the same over a real SSH connection."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from cockpit.api import EngineAPI, ResyncEvent, StatusEvent
from cockpit.cli.arguments import reach_of
from cockpit.cli.exits import INTERRUPTED
from cockpit.client import (
    BRIDGE_PATIENCE,
    LOCAL_ENV,
    SSH_ENV,
    Bridges,
    Reach,
    open_engine,
)
from cockpit.paths import ssh_control_path
from cockpit.remote import link as remote_link
from cockpit.remote.launch import BridgeUnusable
from tests.support.checkout import TREE
from tests.support.engine_helpers import Recorder, assert_live_equals_stored
from tests.support.service_helpers import (
    cockpit,
    cockpit_command,
    cockpit_env,
    pid_alive,
    service_pid,
    services_stopped,
)
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SSHD = Path("/usr/sbin/sshd")


@pytest.fixture
def elsewhere(tmp_path: Path) -> Iterator[Path]:
    """The client's own home: empty, and no service ever runs for it (a command that used
    it rather than the bridge would see no session)."""
    own = tmp_path / "client-home"
    own.mkdir()
    with services_stopped(own):
        yield own


def bridge_command(home: Path) -> list[str]:
    """`cockpit service --stdio` on the store in `home`."""
    return cockpit_command("--data-dir", str(home), "service", "--stdio")


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def test_remote_runs_the_bridge_over_ssh_and_via_runs_any_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LOCAL_ENV)

    def reach(**given: object) -> Reach:
        args = argparse.Namespace(local=False, remote=None, via=None)
        vars(args).update(given)
        return reach_of(args)

    remote = reach(remote="me@build-box")
    control = ssh_control_path()
    shared = ("-o", "ControlMaster=auto", "-o", f"ControlPath={control}", "-o", "ControlPersist=60")
    tail = ("me@build-box", "cockpit", "service", "--stdio")
    batch = ("-o", "BatchMode=yes")
    assert remote == Reach(via=("ssh", "-T", *shared, *tail), remote="me@build-box")
    assert remote.where == "ssh me@build-box cockpit service --stdio"
    # under the screen the same ssh asks for nothing; a `--via` command stays the user's own;
    # what either says on stderr is read by the client, not written over the screen
    quiet = Reach(via=("ssh", "-T", *shared, *batch, *tail), remote="me@build-box", screen=True)
    assert remote.under_screen() == quiet
    assert control.parent.stat().st_mode & 0o777 == 0o700, "the shared connection is the user's"
    monkeypatch.setenv(SSH_ENV, "ssh -J 'jump host'")
    jumping = reach(remote="me@build-box")
    assert jumping.via == ("ssh", "-J", "jump host", "-T", *shared, *tail)
    assert jumping.where == "ssh -J 'jump host' me@build-box cockpit service --stdio"
    monkeypatch.delenv(SSH_ENV)
    via = reach(via="ssh -p 2222 box 'env COCKPIT_HOME=/srv/c cockpit service --stdio'")
    assert via.via == (
        "ssh",
        "-p",
        "2222",
        "box",
        "env COCKPIT_HOME=/srv/c cockpit service --stdio",
    )
    assert via.under_screen() == replace(via, screen=True)
    assert reach() == Reach()
    assert reach(local=True) == Reach(local=True)
    monkeypatch.setenv(LOCAL_ENV, "1")
    assert reach() == Reach(local=True)
    assert not remote.local and not reach(remote="box").local, "COCKPIT_LOCAL beat --remote"
    monkeypatch.setenv(LOCAL_ENV, "0")
    assert reach() == Reach()


def test_commands_through_the_bridge_reach_the_store_it_serves(
    service_home: Path, elsewhere: Path
) -> None:
    via = ("--via", shlex.join(bridge_command(service_home)))
    empty = ok(cockpit(*via, "ls", home=elsewhere))
    assert empty.stdout.startswith("No sessions yet")
    assert service_pid(service_home) is not None, "the bridge started no service for its store"

    ran = ok(cockpit(*via, "run", "--agent", "demo", "--yes", "hello", home=elsewhere))
    assert ran.stdout.startswith("# Welcome to Cockpit")
    listed = json.loads(ok(cockpit(*via, "ls", "--json", home=elsewhere)).stdout)
    # the run's agent stopped with its turn, and the run is marked, across the bridge too
    assert [(s["status"], s["title"], s["run"]) for s in listed] == [("closed", "hello", True)]
    assert ok(cockpit("ls", home=service_home)).stdout.split()[0] == listed[0]["id"]
    assert service_pid(elsewhere) is None, "a command through the bridge used its own store"

    broken = cockpit("--via", "false", "ls", home=elsewhere)
    assert broken.returncode == 6
    assert broken.stderr.startswith("cockpit: no Cockpit service answered through `false`")
    assert "Traceback" not in broken.stderr


def test_a_bridge_that_fails_is_run_once_and_says_why(elsewhere: Path, tmp_path: Path) -> None:
    """ssh that finds no host fails at once: the command says so with ssh's own words and
    its exit code, and does not run it again for seconds (nor ask for a password again)."""
    runs = tmp_path / "runs"
    failing = f"echo run >> {shlex.quote(str(runs))}; echo 'ssh: no such host' >&2; exit 255"
    broken = cockpit("--via", shlex.join(["sh", "-c", failing]), "ls", home=elsewhere)
    assert broken.returncode == 6
    assert "ssh: no such host" in broken.stderr
    assert broken.stderr.rstrip().endswith("(the command ended with exit code 255)")
    assert runs.read_text() == "run\n", "the failing bridge was run again"


def test_a_bridge_that_ends_cleanly_before_the_answer_is_a_service_going_away(
    service_home: Path, elsewhere: Path, tmp_path: Path
) -> None:
    """A bridge that ends with exit code 0 before the service answered relayed a service
    that went away: the client waits for the next one, running the bridge again."""
    first = tmp_path / "first-run"
    bridge = shlex.join(bridge_command(service_home))
    quoted = shlex.quote(str(first))
    command = f"if [ -e {quoted} ]; then exec {bridge}; else touch {quoted}; fi"
    listed = ok(cockpit("--via", shlex.join(["sh", "-c", command]), "ls", home=elsewhere))
    assert first.exists() and listed.stdout.startswith("No sessions yet")


@pytest.fixture
async def bridged(service_home: Path, tmp_path: Path) -> AsyncIterator[tuple[EngineAPI, Path]]:
    """A client in this process reaching the service through a bridge command that notes
    each pid it runs as (the file it writes them to)."""
    pids = tmp_path / "bridge-pids"
    command = (
        f"echo $$ >> {shlex.quote(str(pids))}; exec {shlex.join(bridge_command(service_home))}"
    )
    engine = await open_engine(tmp_path, reach=Reach(via=("sh", "-c", command)))
    try:
        yield engine, pids
    finally:
        await engine.close()


def bridge_pids(pids: Path) -> list[int]:
    return [int(line) for line in pids.read_text().split()] if pids.exists() else []


async def test_a_bridge_that_takes_its_time_to_connect_is_waited_for(
    service_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bridge's first answer includes its own start (ssh connecting, a password typed):
    it gets BRIDGE_HELLO_TIMEOUT, not the socket's HELLO_TIMEOUT."""
    monkeypatch.setattr(remote_link, "HELLO_TIMEOUT", 0.3)
    slow = ("sh", "-c", f"sleep 1.5; exec {shlex.join(bridge_command(service_home))}")
    engine = await open_engine(service_home, reach=Reach(via=slow))
    try:
        assert await engine.sessions() == []
    finally:
        await engine.close()


async def test_the_turn_outlives_its_bridge_and_the_client_reattaches(
    service_home: Path, tmp_path: Path, bridged: tuple[EngineAPI, Path]
) -> None:
    engine, pids = bridged
    recorder = Recorder()
    resyncs: list[str] = []
    ends: list[str] = []

    def listen(event: object) -> None:
        if isinstance(event, ResyncEvent):
            resyncs.append(event.reason)
        elif isinstance(event, StatusEvent) and event.turn_ended:
            ends.append(event.detail)

    engine.subscribe(recorder)
    engine.subscribe(listen)
    session = (await engine.create_session("demo", tmp_path)).id
    engine.show(session)
    engine.send(session, "slow")
    await eventually(lambda: recorder.frames > 20, 30, "the slow reply to stream")
    (first,) = bridge_pids(pids)
    os.kill(first, 9)  # the SSH connection drops mid-turn

    await eventually(lambda: resyncs, 30, "the client to attach again")
    assert len(bridge_pids(pids)) == 2 and not pid_alive(first)
    assert engine.status(session) == "working", "the turn died with its bridge"
    assert not ends
    # what the client shows is read again, as the TUI does on a resync, and frames go on
    view = recorder.view(session)
    view.merge_page(await engine.rows(session))
    since = recorder.frames
    await eventually(lambda: ends, 60, "the end of the turn")
    assert ends == ["end_turn"]
    assert recorder.frames > since + 20, "no frames came through the second bridge"
    for bubble in [bubble for bubble in view if bubble.stale]:  # as the TUI does too
        row = await engine.row(session, bubble.key)
        assert row is not None
        view.reread(row)
    rows = await engine.rows(session)
    assert rows[-1].kind == "agent" and rows[-1].text.startswith("# A slow reply")
    assert_live_equals_stored(recorder, session, rows)


# -- over a real SSH connection ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """An sshd of the test's own on 127.0.0.1 (a random port, a host key made now) that
    lets in this user with a key made now: its port and the client's key."""
    if not SSHD.exists() or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.skip("needs OpenSSH's sshd and ssh (Debian: openssh-server)")
    keys = tmp_path / "ssh"
    keys.mkdir(mode=0o700)
    for name in ("host", "client"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True
        )
    authorized = keys / "authorized_keys"
    authorized.write_text((keys / "client.pub").read_text())
    authorized.chmod(0o600)
    port = free_port()
    config = keys / "sshd_config"
    config.write_text(
        "\n".join(
            [
                "ListenAddress 127.0.0.1",
                f"Port {port}",
                f"HostKey {keys / 'host'}",
                f"AuthorizedKeysFile {authorized}",
                f"PidFile {keys / 'sshd.pid'}",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PermitRootLogin prohibit-password",
                "StrictModes no",
                "UsePAM no",
                "AcceptEnv COCKPIT_HOME",  # the store a test names
                # its `cockpit`, importing the tree under test
                f"SetEnv PATH={Path(sys.executable).parent}:/usr/bin:/bin PYTHONPATH={TREE}",
                "",
            ]
        )
    )
    with contextlib.suppress(OSError):  # its privilege separation folder (made as root)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    log = keys / "sshd.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [str(SSHD), "-f", str(config), "-D", "-e"],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
        )
    try:
        started = lambda: listening(port) or server.poll() is not None  # noqa: E731
        asyncio.run(eventually(started, 15, f"sshd to listen on port {port}"))
        if server.poll() is not None:
            pytest.fail(f"sshd did not start: {log.read_text()}")
        yield port, keys / "client"
    finally:
        server.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(10)
        if server.poll() is None:
            server.kill()
            server.wait()


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def ssh_to(port: int, key: Path) -> list[str]:
    """ssh to the test's sshd with its key, asking nothing (the host key is new)."""
    return [
        "ssh",
        "-p",
        str(port),
        "-i",
        str(key),
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "BatchMode=yes",
        "-o",
        "LogLevel=ERROR",
    ]


def test_run_over_a_real_ssh_connection(
    service_home: Path, elsewhere: Path, sshd: tuple[int, Path]
) -> None:
    port, key = sshd
    ssh = [*ssh_to(port, key), "127.0.0.1"]
    remote = [
        "env",
        f"COCKPIT_HOME={service_home}",
        sys.executable,
        "-m",
        "cockpit",
        "service",
        "--stdio",
    ]
    via = shlex.join([*ssh, *remote])
    ran = cockpit("--via", via, "run", "--agent", "demo", "--yes", "hello", home=elsewhere)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("# Welcome to Cockpit")
    assert service_pid(service_home) is not None, "no service runs for the store ssh reached"
    assert service_pid(elsewhere) is None
    listed = json.loads(ok(cockpit("--via", via, "ls", "--json", home=elsewhere)).stdout)
    assert [s["title"] for s in listed] == ["hello"]


def logins(sshd_log: Path) -> int:
    """The logins the test's sshd has let in so far."""
    return sshd_log.read_text(errors="replace").count("Accepted publickey")


def test_remote_logs_in_once_and_its_later_runs_share_that_connection(
    service_home: Path, elsewhere: Path, sshd: tuple[int, Path]
) -> None:
    """`cockpit --remote HOST` through the user's ssh (COCKPIT_SSH: this test's port and
    key; the store on HOST passed in the environment sshd accepts, its `cockpit` on the
    PATH sshd sets): a run and an `ls` after it reach HOST's store, and the second logs
    in no more (a password would be asked once, not under the screen)."""
    port, key = sshd
    sshd_log = key.parent / "sshd.log"
    assert (Path(sys.executable).parent / "cockpit").exists(), "no `cockpit` for sshd's PATH"
    ssh = [*ssh_to(port, key), "-o", f"SetEnv=COCKPIT_HOME={service_home}"]
    env = {"COCKPIT_SSH": shlex.join(ssh)}
    control = ssh_control_path({"COCKPIT_HOME": str(elsewhere)})
    try:
        remote = ("--remote", "127.0.0.1")
        ran = cockpit(
            *remote, "run", "--agent", "demo", "--yes", "hello", home=elsewhere, env_extra=env
        )
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.startswith("# Welcome to Cockpit")
        assert logins(sshd_log) == 1
        listed = cockpit(*remote, "ls", "--json", home=elsewhere, env_extra=env)
        assert [s["title"] for s in json.loads(ok(listed).stdout)] == ["hello"]
        assert logins(sshd_log) == 1, "the second run logged in again"
        assert service_pid(service_home) is not None and service_pid(elsewhere) is None
    finally:  # the shared connection would outlive the test by SSH_PERSIST seconds
        subprocess.run(
            [*ssh, "-o", f"ControlPath={control}", "-O", "exit", "127.0.0.1"],
            capture_output=True,
            timeout=30,
            check=False,
        )


# -- a bridge command that cannot run, or never speaks -----------------------------------------


@pytest.mark.parametrize(
    "command", [("ls",), ("show", "abc"), ("run", "--agent", "demo", "hi"), ("send", "a", "b"), ()]
)
def test_a_bridge_command_that_is_not_there_is_one_line(
    elsewhere: Path, command: tuple[str, ...]
) -> None:
    """It used to end in a FileNotFoundError traceback. (No arguments: the TUI, which
    says so before it opens the screen.)"""
    result = cockpit("--via", "/nonexistent/cmd --stdio", *command, home=elsewhere)
    assert (result.returncode, result.stdout) == (6, "")
    assert result.stderr == "cockpit: the command `/nonexistent/cmd` was not found\n"


def test_an_ssh_that_is_not_there_says_who_named_it(elsewhere: Path, tmp_path: Path) -> None:
    plain = tmp_path / "not-a-program"
    plain.write_text("just text\n")
    for ssh, why in (
        ("/nonexistent/ssh -J jump", "the command `/nonexistent/ssh` was not found"),
        (str(plain), f"the command `{plain}` cannot be run (Permission denied)"),
    ):
        result = cockpit("--remote", "box", "ls", home=elsewhere, env_extra={SSH_ENV: ssh})
        assert (result.returncode, result.stdout) == (6, "")
        assert result.stderr == f"cockpit: {why} (COCKPIT_SSH names the ssh `--remote` runs)\n"


def started_with_ctrl_c(*args: str, home: Path, stderr: Path) -> subprocess.Popen[str]:
    """`cockpit ARGS` in a process of its own that Ctrl+C (SIGINT) reaches as it would from
    a terminal (whatever this test process does with SIGINT), its stderr into a file."""
    with stderr.open("w") as errors:
        return subprocess.Popen(
            cockpit_command(*args),
            env=cockpit_env(home),
            cwd=home.parent,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )


WAITING = (
    "cockpit: waiting for `sh -c 'echo $$ > {pid}; exec sleep 1000'` to answer"
    " (a password, a slow login?); Ctrl+C gives up\n"
)


@pytest.mark.parametrize("command", [("ls",), ()])
def test_a_bridge_that_never_speaks_is_waited_for_aloud_and_ctrl_c_ends_both(
    elsewhere: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """A bridge that never answers (ssh waiting for a password no one types): after
    BRIDGE_PATIENCE seconds the user hears once what is awaited; Ctrl+C ends the wait,
    the command (exit 130, no traceback) and the bridge with it."""
    pid_file = tmp_path / "bridge-pid"
    silent = f"echo $$ > {shlex.quote(str(pid_file))}; exec sleep 1000"
    errors = tmp_path / "stderr"
    started = time.monotonic()
    process = started_with_ctrl_c(
        "--via", shlex.join(["sh", "-c", silent]), *command, home=elsewhere, stderr=errors
    )
    try:
        said = WAITING.format(pid=shlex.quote(str(pid_file)))
        asyncio.run(eventually(lambda: errors.read_text() == said, 30, "word of the wait"))
        assert time.monotonic() - started >= BRIDGE_PATIENCE, "said before a silence"
        assert process.poll() is None, "the command gave up by itself"
        bridge = int(pid_file.read_text())
        assert pid_alive(bridge)
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 130
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert errors.read_text() == said + f"cockpit: {INTERRUPTED}\n", "a traceback, or more"
    asyncio.run(eventually(lambda: not pid_alive(bridge), 10, "the bridge to end"))


async def test_under_the_screen_a_bridge_is_heard_and_one_that_went_is_said_too() -> None:
    """Bridges read what their commands say on stderr when told to (the screen's) and hand
    each line on; a command gone since the last run is said the same way."""
    heard: list[str] = []
    bridges = Bridges(("sh", "-c", "printf 'Warning: added\\r\\n' >&2; exec cat"), hear_stderr=True)
    bridges.listener = heard.append
    _reader, writer = await bridges.connect()
    try:
        await eventually(lambda: heard == ["Warning: added"], 10, "the bridge's words")
    finally:
        writer.close()
        assert await bridges.end() == [0]
    gone = Bridges(("/nonexistent/ssh", "box"), hear_stderr=True)
    gone.listener = heard.append
    with pytest.raises(BridgeUnusable):
        await gone.connect()
    assert heard[-1] == gone.said == "the command `/nonexistent/ssh` was not found"
