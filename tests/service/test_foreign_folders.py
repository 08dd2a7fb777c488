"""Folders that belong to someone else: the runtime folders Cockpit makes or uses (the
socket's, its fallback under the temporary folder, ssh's control folder) are the user's
own, checked without following a link; a link or another user's folder is refused with
a sentence naming it and its owner, and nothing is chmodded. And why a service started
in the background did not come up reaches the client that started it."""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import sqlite3
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp.connection import Connection
from hypothesis import given
from hypothesis import strategies as st

from cockpit import protocol
from cockpit.channel.startup import REPORT_ENV, Reporter, ReportPipe
from cockpit.channel.transport import LineTransport
from cockpit.paths import ForeignFolder, owner_name, private_dir, service_log, service_socket
from cockpit.remote import launch
from cockpit.remote.launch import ServiceUnavailable, connect_or_start
from tests.support import agent_forks
from tests.support.service_helpers import cockpit, pids_of, service_pid, services_stopped
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

ROOT = hasattr(os, "getuid") and os.getuid() == 0
as_root = pytest.mark.skipif(not ROOT, reason="needs root: another user's folder is chowned")

HELLO = ("run", "--agent", "demo", "--yes", "hello")


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def one_line(stderr: str) -> str:
    """The one line a command said on stderr (failing when it said more, or a traceback)."""
    assert "Traceback" not in stderr, stderr
    assert stderr.count("\n") == 1 and stderr.startswith("cockpit: "), stderr
    return stderr


def nobody() -> pwd.struct_passwd:
    return pwd.getpwnam("nobody")


def theirs(folder: Path) -> Path:
    """`folder` made (if missing) as another user's, open to everyone, as one planted in a
    shared temporary folder would be."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chown(folder, nobody().pw_uid, nobody().pw_gid)
    folder.chmod(0o777)
    return folder


# -- the rule ----------------------------------------------------------------------------------


@pytest.mark.parametrize("follow", [False, True], ids=["runtime", "data"])
def test_a_missing_folder_is_made_owner_only(tmp_path: Path, follow: bool) -> None:
    old = os.umask(0o022)
    try:
        made = private_dir(tmp_path / "a" / "b", follow=follow)
    finally:
        os.umask(old)
    assert made == tmp_path / "a" / "b" and mode_of(made) == 0o700


@given(st.integers(min_value=0, max_value=0o077))
def test_a_wider_mode_of_the_users_own_folder_is_tightened(wider: int) -> None:
    with tempfile.TemporaryDirectory() as top:
        folder = Path(top) / "run"
        folder.mkdir()
        folder.chmod(0o700 | wider)
        private_dir(folder, follow=False)
        assert mode_of(folder) == 0o700


def test_a_link_is_refused_and_what_it_leads_to_is_left_as_it_was(tmp_path: Path) -> None:
    """Another user planted `$TMPDIR/cockpit-0 -> /some/dir`: Cockpit chmodded that folder
    0700 and bound its socket in it."""
    target = tmp_path / "some-dir"
    target.mkdir()
    target.chmod(0o755)
    link = tmp_path / "cockpit-0"
    link.symlink_to(target)
    with pytest.raises(ForeignFolder) as refused:
        private_dir(link, follow=False)
    said = str(refused.value)
    assert said.startswith(f"{link} is a symbolic link owned by {owner_name(os.getuid())}")
    assert mode_of(target) == 0o755 and link.is_symlink()

    dangling = tmp_path / "cockpit-1"
    dangling.symlink_to(tmp_path / "not-yet")
    with pytest.raises(ForeignFolder, match="symbolic link"):
        private_dir(dangling, follow=False)
    assert not (tmp_path / "not-yet").exists()


def test_the_data_folder_may_be_the_users_link_to_a_folder_of_theirs(tmp_path: Path) -> None:
    """A data folder on another disk, reached by a link the user made, is theirs."""
    elsewhere = tmp_path / "disk" / "cockpit"
    elsewhere.mkdir(parents=True)
    elsewhere.chmod(0o755)
    link = tmp_path / "home"
    link.symlink_to(elsewhere)
    assert private_dir(link) == link
    assert mode_of(elsewhere) == 0o700 and link.is_symlink()


def test_something_that_is_not_a_folder_is_said_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError):
        private_dir(tmp_path / "file", follow=False)


def test_a_user_without_a_name_is_named_by_uid() -> None:
    uid = next(n for n in range(40000, 50000) if not any(u.pw_uid == n for u in pwd.getpwall()))
    assert owner_name(uid) == f"uid {uid}"
    assert owner_name(os.getuid()) == f"{pwd.getpwuid(os.getuid()).pw_name} (uid {os.getuid()})"


@as_root
@pytest.mark.parametrize("follow", [False, True], ids=["runtime", "data"])
def test_another_users_folder_is_refused_and_left_as_it_was(tmp_path: Path, follow: bool) -> None:
    folder = theirs(tmp_path / "cockpit-0")
    with pytest.raises(ForeignFolder) as refused:
        private_dir(folder, follow=follow)
    assert str(refused.value).startswith(
        f"{folder} belongs to nobody (uid {nobody().pw_uid}), not a folder of yours"
    )
    assert mode_of(folder) == 0o777 and folder.stat().st_uid == nobody().pw_uid
    link = tmp_path / "home"
    link.symlink_to(folder)
    with pytest.raises(ForeignFolder, match="belongs to nobody"):
        private_dir(link)  # followed, as a data folder's link is: still not theirs


# -- the word a starting service sends ---------------------------------------------------------


def the_services_end(pipe: ReportPipe) -> dict[str, str]:
    """The environment a service gets from `pipe`, the writing end its own copy (as a
    process started with it has), which this process then lets go of."""
    environ = pipe.environ({"HOME": "/home/u"})
    assert environ == {"HOME": "/home/u", REPORT_ENV: str(pipe.write)}
    environ[REPORT_ENV] = str(os.dup(pipe.write))
    pipe.passed()
    return environ


def test_a_service_tells_its_client_once_and_drops_the_variable() -> None:
    pipe = ReportPipe()
    try:
        environ = the_services_end(pipe)
        reporter = Reporter.claim(environ)
        assert environ == {"HOME": "/home/u"}, "the agents the service starts would see it"
        assert pipe.listen() is None and not pipe.ended
        reporter.ready()
        reporter.failed(RuntimeError("too late: it listens"))
        assert pipe.listen() == {"ready": True} and pipe.ended
    finally:
        pipe.close()


def test_a_client_hears_the_error_or_the_silence_of_a_service_that_ends() -> None:
    pipe = ReportPipe()
    try:
        Reporter.claim(the_services_end(pipe)).failed(FileNotFoundError(2, "No such file", "x"))
        word = pipe.listen()
        assert word is not None and word["type"] == "FileNotFoundError"
        assert "No such file" in word["message"]
    finally:
        pipe.close()
    silent = ReportPipe()
    try:
        os.close(int(the_services_end(silent)[REPORT_ENV]))  # it ended without a word
        assert silent.listen() is None and silent.ended
    finally:
        silent.close()


def test_a_variable_left_set_by_hand_is_never_written_to(tmp_path: Path) -> None:
    """Only a pipe is a client's: stdout or a file named by the variable is not."""
    with open(tmp_path / "file", "w") as file:
        for value in ("1", str(file.fileno()), "nonsense", "99999"):
            environ = {REPORT_ENV: value}
            Reporter.claim(environ).failed(RuntimeError("boom"))
            assert environ == {}
    assert (tmp_path / "file").read_text() == ""


# -- through the service -----------------------------------------------------------------------


@pytest.fixture
def temp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The temporary folder of the test and of the commands it runs (TMPDIR): a short one
    of its own, so that a socket fits under it and the shared one is never touched."""
    folder = Path(tempfile.mkdtemp(prefix="ck-"))
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def deep_home(tmp_path: Path, temp: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home too deep for a socket: the service's goes to `$TMPDIR/cockpit-UID/`."""
    home = tmp_path / ("d" * 80) / "home"
    home.mkdir(parents=True)
    monkeypatch.setenv("COCKPIT_HOME", str(home))
    monkeypatch.delenv("COCKPIT_LOCAL")
    assert service_socket(home).parent == temp / f"cockpit-{os.getuid()}"
    with services_stopped(home):
        yield home


@pytest.fixture
def short_home(temp: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home whose socket fits in its own runtime folder, `$COCKPIT_HOME/run`."""
    home = temp / "home"
    home.mkdir()
    monkeypatch.setenv("COCKPIT_HOME", str(home))
    monkeypatch.delenv("COCKPIT_LOCAL")
    assert service_socket(home).parent == home / "run"
    with services_stopped(home):
        yield home


def planted(temp: Path) -> tuple[Path, Path]:
    """`$TMPDIR/cockpit-UID -> some/dir`, as another user would plant it; the link and the
    folder it leads to (0755, with a file of its owner's in it)."""
    target = temp / "some-dir"
    target.mkdir()
    target.chmod(0o755)
    (target / "keep.txt").write_text("theirs")
    link = temp / f"cockpit-{os.getuid()}"
    link.symlink_to(target)
    return link, target


def test_a_link_planted_for_the_sockets_folder_is_refused_plainly(
    deep_home: Path, temp: Path, project_dir: Path
) -> None:
    home = deep_home
    link, target = planted(temp)
    owner = owner_name(os.getuid())
    for args in (HELLO, (), ("service", "status"), ("service", "--idle", "1")):
        said = cockpit(*args, home=home, cwd=project_dir)  # () opens the TUI: its pre-check
        assert said.returncode == 6, (args, said.stderr)
        line = one_line(said.stderr)
        assert f"{link} is a symbolic link owned by {owner}" in line, (args, line)
        assert "did not start" not in line
    assert mode_of(target) == 0o755, "the folder the link leads to was chmodded"
    assert [p.name for p in target.iterdir()] == ["keep.txt"]
    assert not service_log(home).exists() or "Traceback" not in service_log(home).read_text()
    # The engine in this process needs no socket of the service: --local runs as before,
    # its agent without the plan tool, whose socket would go there too, saying why.
    local = cockpit("--local", *HELLO, home=home, cwd=project_dir)
    assert local.returncode == 0, local.stderr
    assert f"The plan tool is off for this start of the agent: {link} is a symbolic" in (
        local.stdout
    )


@as_root
@pytest.mark.parametrize("where", ["the temporary folder's", "the runtime folder"])
def test_a_socket_folder_of_another_user_is_refused_plainly(
    where: str, request: pytest.FixtureRequest, project_dir: Path
) -> None:
    home: Path = request.getfixturevalue("deep_home" if "temporary" in where else "short_home")
    folder = theirs(service_socket(home).parent)
    said = cockpit(*HELLO, home=home, cwd=project_dir)
    assert said.returncode == 6, said.stderr
    assert f"{folder} belongs to nobody (uid {nobody().pw_uid})" in one_line(said.stderr)
    assert mode_of(folder) == 0o777 and folder.stat().st_uid == nobody().pw_uid
    assert list(folder.iterdir()) == [], "the service bound its socket in another's folder"
    assert service_pid(home) is None, "a service runs without a socket of its own"


@pytest.mark.parametrize("whose", ["a link", "another user's folder"])
def test_the_ssh_control_folder_is_the_users_own(
    whose: str, deep_home: Path, temp: Path, project_dir: Path
) -> None:
    """The ssh of `--remote` shared its connection through a socket in any folder there."""
    if whose == "another user's folder" and not ROOT:
        pytest.skip("needs root: another user's folder is chowned")
    home = deep_home
    ran = temp / "ssh-ran"
    ssh = f"sh -c 'touch {ran}'"
    if whose == "a link":
        folder, target = planted(temp)
        expected = f"{folder} is a symbolic link owned by {owner_name(os.getuid())}"
    else:
        folder = target = theirs(temp / f"cockpit-{os.getuid()}")
        expected = f"{folder} belongs to nobody (uid {nobody().pw_uid})"
    before = mode_of(target)
    for args in (("--remote", "box", "ls"), ("--remote", "box", *HELLO)):
        said = cockpit(*args, home=home, cwd=project_dir, env_extra={"COCKPIT_SSH": ssh})
        assert said.returncode == 6, (args, said.stderr)
        assert expected in one_line(said.stderr), args
    assert not ran.exists(), "ssh was run with its control socket in that folder"
    assert mode_of(target) == before


def test_the_users_own_socket_folder_is_tightened_by_the_service(
    deep_home: Path, temp: Path, project_dir: Path
) -> None:
    folder = service_socket(deep_home).parent
    folder.mkdir()
    folder.chmod(0o755)
    said = cockpit(*HELLO, home=deep_home, cwd=project_dir)
    assert said.returncode == 0, said.stderr
    assert mode_of(folder) == 0o700
    assert stat.S_ISSOCK(service_socket(deep_home).stat().st_mode)


@as_root
def test_a_data_folder_of_another_user_is_refused_by_the_service_it_would_start(
    short_home: Path, project_dir: Path
) -> None:
    """The client finds the socket's folder its own; the service it starts refuses the
    store's folder, and says so to the client (not "see the log")."""
    home = short_home
    theirs(home)
    said = cockpit(*HELLO, home=home, cwd=project_dir)
    assert said.returncode == 6, said.stderr
    assert f"{home} belongs to nobody (uid {nobody().pw_uid})" in one_line(said.stderr)
    assert "Traceback" not in service_log(home).read_text()


# -- why a service did not start ---------------------------------------------------------------


@pytest.mark.parametrize("spawn", ["forked", pytest.param("fresh", marks=pytest.mark.real_spawn)])
async def test_a_store_from_a_newer_cockpit_is_said_through_the_service(
    spawn: str, service_home: Path, project_dir: Path, request: pytest.FixtureRequest
) -> None:
    """`ls` explained it; `cockpit` and `cockpit run` said "the Cockpit service did not
    start (see service.log)" with exit 6. The service's word reaches the client whether
    it is a fresh interpreter or a fork of the tests' server (its pipe passes the shim)."""
    if spawn == "forked":
        if not agent_forks.AVAILABLE:
            pytest.skip("the agent fork server needs pidfds (Linux)")
        request.getfixturevalue("agent_fork_server").wait_ready()  # else the shim execs
    assert cockpit("ls", home=service_home).returncode == 0
    with sqlite3.connect(service_home / "cockpit.db") as db:
        db.execute("PRAGMA user_version = 999")
    for args in (HELLO, ()):  # () opens the TUI: its pre-check attaches first
        said = cockpit(*args, home=service_home, cwd=project_dir)
        assert said.returncode == 2, (args, said.stderr)
        line = one_line(said.stderr)
        assert "was written by a newer Cockpit (schema version 999" in line, line
        assert said.stdout == ""
    await eventually(
        lambda: not pids_of(service_home), 10, "the services that refused the store to end"
    )
    assert "Traceback" not in service_log(service_home).read_text()


def test_any_other_reason_reaches_the_client(service_home: Path, project_dir: Path) -> None:
    """A folder where the socket goes: the service fails to listen, and says why."""
    path = service_socket(service_home)
    path.mkdir(parents=True)
    said = cockpit(*HELLO, home=service_home, cwd=project_dir)
    assert said.returncode == 6, said.stderr
    line = one_line(said.stderr)
    assert f"the Cockpit service for {service_home} did not start: " in line
    assert "Is a directory" in line and str(path) in line


async def no_requests(method: str, params: object, is_notification: bool) -> None:
    """A client of one question takes no requests."""


async def test_the_connection_a_starting_client_gets_is_its_own(service_home: Path) -> None:
    """The client's copy of the report pipe is let go of once: closed again at the end of
    the start, its number, reused meanwhile by the socket, cut the new connection."""
    reader, writer = await connect_or_start(service_home)
    conn = Connection(no_requests, LineTransport(reader, writer))
    try:
        answer = await asyncio.wait_for(conn.send_request(protocol.STATUS, {}), 20)
    finally:
        await conn.close()
    assert answer["pid"] == service_pid(service_home)


async def test_a_service_that_says_nothing_is_still_reported(
    service_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One that dies without a word, and one that never listens (the timeout)."""
    monkeypatch.setattr(launch, "service_command", lambda data, idle=None: ["sh", "-c", "exit 1"])
    with pytest.raises(ServiceUnavailable, match=r"did not start \(see .*service\.log\)"):
        await connect_or_start(service_home)

    pid_file = tmp_path / "pid"
    hang = ["sh", "-c", f"echo $$ > {pid_file}; exec sleep 60"]
    monkeypatch.setattr(launch, "service_command", lambda data, idle=None: hang)
    monkeypatch.setattr(launch, "START_TIMEOUT", 0.5)
    try:
        with pytest.raises(ServiceUnavailable, match="did not start"):
            await asyncio.wait_for(connect_or_start(service_home), 20)
    finally:
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), 9)
