"""Real `cockpit` processes in tests: the command line run as a user runs it (attached to
the store's service, which it starts when none runs), and what is left of them when a test
ends. Whatever a test did, `services_stopped` leaves no service and no agent of its home.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from cockpit.remote.launch import service_pid as service_pid  # the tests' too
from tests.support.checkout import tree_first
from tests.support.forked_cockpit import run_command
from tests.support.proc_stat import stat_fields

COCKPIT_TIMEOUT = 60.0
"""Seconds one `cockpit` command of a test may take (a busy machine runs two test processes)."""

STOP_TIMEOUT = 30.0
"""Seconds `cockpit service stop --yes` may take at a test's end before what is left is
killed."""


def cockpit_env(home: Path, env_extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a `cockpit` command on the store in `home`, attached to its
    service (COCKPIT_LOCAL unset), plus `env_extra`, with this tree first on PYTHONPATH."""
    env = tree_first({key: value for key, value in os.environ.items() if key != "COCKPIT_LOCAL"})
    env["COCKPIT_HOME"] = str(home)
    env.update(env_extra or {})
    return env


def cockpit_command(*args: str) -> list[str]:
    """The command line of `cockpit ARGS`, run by this Python."""
    return [sys.executable, "-m", "cockpit", *args]


def cockpit(
    *args: str,
    home: Path,
    env_extra: Mapping[str, str] | None = None,
    timeout: float = COCKPIT_TIMEOUT,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `cockpit ARGS` on the store in `home` with no terminal, to its end (in a
    process of its own, forked with the command line imported: `forked_cockpit`)."""
    return run_command(
        args, env=cockpit_env(home, env_extra), cwd=cwd or home.parent, timeout=timeout
    )


def spawn_cockpit(
    *args: str,
    home: Path,
    env_extra: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[str]:
    """Start `cockpit ARGS` on the store in `home` with no terminal, its output piped."""
    return subprocess.Popen(
        cockpit_command(*args),
        env=cockpit_env(home, env_extra),
        cwd=cwd or home.parent,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists and is not a zombie."""
    try:
        return stat_fields(pid)[0] != b"Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def pids_of(home: Path) -> list[int]:
    """The live processes (but this one) whose command line or environment names `home`:
    its service, the service's agents, any `cockpit` command on it."""
    mention = re.compile(re.escape(os.fsencode(home)) + rb"(?=[\0/=]|$)")
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        texts = []
        for name in ("cmdline", "environ"):
            with contextlib.suppress(OSError):
                texts.append((entry / name).read_bytes())
        if any(mention.search(text) for text in texts) and pid_alive(int(entry.name)):
            found.append(int(entry.name))
    return sorted(found)


def kill_all(pids: list[int]) -> None:
    """SIGKILL each of `pids` (each one by its pid: their groups may hold others')."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def stop_everything(home: Path) -> list[int]:
    """Stop the store's service (`cockpit service stop --yes`), then kill any process of
    the home still alive; return the pids that had to be killed."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        cockpit("service", "stop", "--yes", home=home, timeout=STOP_TIMEOUT)
    left = pids_of(home)
    kill_all(left)
    deadline = time.monotonic() + 5
    while pids_of(home) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@contextlib.contextmanager
def services_stopped(home: Path) -> Iterator[Path]:
    """Run a block that starts services on `home`; at its end, whatever happened, no
    service and no agent of `home` remains."""
    try:
        yield home
    finally:
        stop_everything(home)


class Terminal:
    """`cockpit ARGS` on a pty of its own; what it writes is read as it comes."""

    def __init__(self, home: Path, *args: str) -> None:
        self.master, slave = pty.openpty()

        def own_terminal() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.process = subprocess.Popen(
            cockpit_command(*args),
            env=cockpit_env(home),
            cwd=home.parent,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=own_terminal,
        )
        os.close(slave)
        self.started = time.monotonic()
        self.output = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the terminal's last user has gone
                return
            if not chunk:
                return
            self.output += chunk

    def ctrl_c(self) -> None:
        os.write(self.master, b"\x03")

    def end(self, timeout: float = 30.0) -> tuple[int, str]:
        """Its exit code (killed past `timeout` seconds) and all it wrote; its terminal
        closes (its session gets SIGHUP)."""
        try:
            code = self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self._reader.join(5)
            os.close(self.master)
        return code, self.output.decode("utf-8", "replace")
