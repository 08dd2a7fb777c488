"""Bundled agents and services for tests, forked from a server that has imported them.

The suite starts about 250 bundled agents (the demo agent, the Claude agent, the tests'
tiny agent) and about 60 services, and each real start is a fresh interpreter that
imports the ACP SDK and pydantic (0.3 CPU s), the Claude agent the Anthropic SDK on top
(1.2 CPU s): a fifth of the suite's CPU. Here one server per test process imports them
once, and each of them is a fork of it.

The engine's side does not change: `AgentProcess.spawn` (and `start_detached` for a
service) still starts a real process in its own session, with its pipes, its lowered
priority and its drained stderr. Only the command changes, to `agent_fork_shim.py`
(about 15 ms of CPU): the shim hands those very pipes, its folder, environment and
priority to the server, and stands in for the fork until it ends (see its docstring).
Anything else (hostile agents, a command a test writes, the agents of a service or of a
`python -m cockpit` started fresh) starts as before, and so does everything a test
marked `real_spawn` starts.

The server runs as `python -m tests.support.agent_forks SOCKET` and ends when its stdin closes
(the test process ended, or let it go), removing its socket and folder.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import gc
import importlib
import io
import json
import os
import random
import runpy
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from cockpit.api import AgentSpec
from cockpit.engine.agent_process import AgentProcess
from cockpit.engine.priority import autogroup_nice
from cockpit.paths import agents_dir
from cockpit.remote import launch
from tests.support.proc_stat import parent_of

ENV = "COCKPIT_TEST_AGENT_FORKS"
"""The server's socket, for the tests whose bundled agents go through it."""

SHIM = Path(__file__).with_name("agent_fork_shim.py")

AVAILABLE = hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")
"""Whether this system can run the server: a fork learns of its stand-in's death through
a pidfd (Linux). Elsewhere every agent starts fresh."""

SCRIPTS = {
    (agents_dir() / "demo_agent.py").resolve(): "cockpit.agentkit.demo.main",
    (agents_dir() / "claude_agent.py").resolve(): "cockpit.agentkit.claude.main",
    Path(__file__).with_name("tiny_agent.py").resolve(): "tests.support.tiny_agent",
}
"""The agent programs the server can fork, and the module each one's import starts from."""

MODULES = {("-m", "cockpit"): "cockpit.cli.main"}
"""The modules run with `-m` that the server can fork (a `cockpit service`, mostly)."""

PRELOADED = (*SCRIPTS.values(), *MODULES.values(), "anthropic")
"""What the server imports before it forks anything (the Claude agent imports the
Anthropic SDK at its first model call)."""


# The test process's side.


def children_by_parent() -> dict[int, list[int]]:
    """Every process's children, by the parent's pid."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            children.setdefault(parent_of(entry.name), []).append(int(entry.name))
    return children


class Server:
    """A running server, owned by the test process that started it."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="cockpit-agent-forks-")  # a socket path is short
        self.socket = os.path.join(self.folder, "agents.sock")
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__, self.socket],
            stdin=subprocess.PIPE,
            cwd=Path(__file__).resolve().parents[2],
            env=import_environment(os.environ),
            start_new_session=True,  # a signal to the test process's group spares its forks
        )

    def wait_ready(self, timeout: float = 30) -> None:
        """Return once it listens (TimeoutError if it does not within `timeout` s)."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(self.socket):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise TimeoutError(f"the agent fork server is not listening on {self.socket}")
            time.sleep(0.02)

    def waiters(self) -> set[int]:
        """Its waiters now: one per shim connected."""
        return set(children_by_parent().get(self.process.pid, []))

    def agents(self) -> set[int]:
        """The agents and services it runs now: the children of its waiters."""
        children = children_by_parent()
        waiters = children.get(self.process.pid, [])
        return {agent for waiter in waiters for agent in children.get(waiter, [])}

    def close(self) -> None:
        """Close its stdin (it ends) and reap it."""
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def import_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: this one without Cockpit's and the model APIs' variables.
    A fork runs in its shim's environment, but what a module read from the environment as
    it was imported (the Claude agent's step and token limits) was read here, where the
    tests' defaults are the code's."""
    return {
        key: value
        for key, value in environ.items()
        if not key.startswith(("COCKPIT_", "ANTHROPIC_", "CLAUDE_"))
    }


def forked_command(command: Sequence[str], socket_path: str) -> list[str] | None:
    """`command` run through the shim, if it runs, with this interpreter, an agent program
    or a module the server has preloaded; None otherwise."""
    if len(command) < 2 or command[0] != sys.executable:
        return None
    if tuple(command[1:3]) not in MODULES and Path(command[1]).resolve() not in SCRIPTS:
        return None
    return [sys.executable, "-I", "-S", str(SHIM), socket_path, *command[1:]]


def through_server(command: Sequence[str]) -> list[str]:
    """`command` through the server when the environment names one and it can fork it."""
    socket_path = os.environ.get(ENV)
    routed = forked_command(command, socket_path) if socket_path else None
    return routed or list(command)


_spawn = AgentProcess.spawn.__func__  # type: ignore[attr-defined]
_service_command = launch.service_command


async def spawn(
    cls: type[AgentProcess],
    spec: AgentSpec,
    cwd: Path,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    umask: int | None = None,
) -> AgentProcess:
    """`AgentProcess.spawn` with the command `through_server`; the process keeps the spec
    it was asked for."""
    through = dataclasses.replace(spec, command=tuple(through_server(spec.command)))
    process: AgentProcess = await _spawn(cls, through, cwd, log_path, env, umask)
    process.spec = spec
    return process


def service_command(data: Path, idle: float | None = None) -> list[str]:
    """`launch.service_command`, `through_server`."""
    return through_server(_service_command(data, idle))


def route_through_forks() -> None:
    """From now on, in this process, agents and detached services start through the server
    when the environment names one."""
    AgentProcess.spawn = classmethod(spawn)  # type: ignore[method-assign, assignment]
    launch.service_command = service_command


# The server's side.


def serve(socket_path: str) -> None:
    """Import the agents, listen, and fork one waiter per shim that connects, until stdin
    closes. Waiters are reaped by the kernel (SIGCHLD ignored). Until the socket exists
    (the imports take a second or two), shims start their agent themselves."""
    for module in PRELOADED:
        importlib.import_module(module)
    gc.collect()
    gc.freeze()  # forks share these pages instead of copying them at the first collection
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path + ".new")
    listener.listen(64)
    os.replace(socket_path + ".new", socket_path)  # the path appears only once it listens
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 4096):
            break
        if listener in ready:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                wait_for_agent(conn)
            conn.close()
    listener.close()
    os.unlink(socket_path)
    with contextlib.suppress(OSError):  # its folder: gone already if the test process closed it
        os.rmdir(os.path.dirname(socket_path))


MAX_FDS = 16
"""The most descriptors a shim hands over (its stdio, a service's report pipe)."""


def receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The shim's request and its descriptors: stdin, stdout, stderr and any other it was
    started with."""
    data, fds, _, _ = socket.recv_fds(conn, 65536, MAX_FDS)
    while len(data) < 4 or len(data) < 4 + struct.unpack("!I", data[:4])[0]:
        more = conn.recv(65536)
        if not more:  # the shim went (killed as it started): no busy loop on the closed socket
            raise ConnectionError("the shim went before its request was complete")
        data += more
    return json.loads(data[4:]), fds


def wait_for_agent(conn: socket.socket) -> NoReturn:
    """In a waiter: fork the agent, tell the shim its pid, wait for its end, tell the shim
    its status."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = 0  # told to the shim when no fork runs: it then starts the agent itself
    status = 127 << 8
    try:
        request, fds = receive(conn)
        pid = os.fork()
        if pid == 0:
            conn.close()
            run_agent(request, fds)
        for fd in fds:
            os.close(fd)
        conn.sendall(f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
    except BaseException:  # a waiter reports and goes, whatever happened
        traceback.print_exc()
    with contextlib.suppress(OSError):
        conn.sendall(f"{pid}\n{status}\n".encode() if pid == 0 else f"{status}\n".encode())
    os._exit(0)


def run_agent(request: dict[str, Any], fds: list[int]) -> NoReturn:
    """In the forked agent: become the process the shim would have started, run the
    script as `__main__`, and exit as the interpreter would."""
    os.setsid()
    take_descriptors(fds, request.get("fds") or [0, 1, 2])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    if isinstance(request.get("umask"), int):
        os.umask(request["umask"])
    tempfile.tempdir = None  # read from TMPDIR again, as a fresh interpreter does
    take_priority(request)
    random.seed()
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), errors="backslashreplace", write_through=True
    )
    die_with(request["shim"])
    code = 0
    try:
        run_program(request["argv"])
    except SystemExit as exit_:
        code = exit_code(exit_.code)
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:  # as the interpreter does: the traceback, then 1
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def take_descriptors(fds: list[int], numbers: list[int]) -> None:
    """Put each descriptor received at the number it had in the shim. They are first moved
    above every number in play, so that putting one in place never closes another."""
    floor = max([*fds, *numbers]) + 1
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, floor) for fd in fds]
    for fd in fds:
        os.close(fd)
    for fd, number in zip(moved, numbers, strict=True):
        os.dup2(fd, number)
        os.close(fd)


def run_program(argv: list[str]) -> None:
    """Run `python ARGV` here: a script by path, or `-m MODULE` (whose own agents and
    services go through the server too, as the test process's do)."""
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        sys.path[0] = os.getcwd()
        route_through_forks()
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    sys.argv = list(argv)
    sys.path[0] = str(Path(argv[0]).resolve().parent)
    runpy.run_path(argv[0], run_name="__main__")


def exit_code(code: object) -> int:
    """What the interpreter exits with for `SystemExit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def take_priority(request: dict[str, Any]) -> None:
    """The nice value and autogroup nice the engine gave the shim."""
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, int(request["nice"]))
    nice = autogroup_nice(str(request["autogroup"]))
    if nice is not None:
        with contextlib.suppress(OSError), open("/proc/self/autogroup", "w") as group:
            group.write(str(nice))


def die_with(shim: int) -> None:
    """Kill this process when the shim ends (SIGKILL to its group reaches only the shim)."""
    try:
        handle = os.pidfd_open(shim)
    except ProcessLookupError:
        os._exit(137)

    def watch() -> None:
        select.select([handle], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="shim watch", daemon=True).start()


if __name__ == "__main__":
    serve(sys.argv[1])
