"""`cockpit` commands for tests, each in a process of its own that starts with the command
line already imported.

A test's `cockpit ARGS` used to be `python -m cockpit ARGS`: a fresh interpreter that spent
0.3 s of CPU importing the command line (the ACP SDK's schema alone is 0.1 s) before doing
anything, and the suite runs about 300 of them. Here one server per test process imports
the command line once (`multiprocessing`'s forkserver, preloaded with this module), and each
command is a fork of it: its own pid, its own stdin, stdout and stderr (files), its own
environment and folder, and its exit status, as a `subprocess.CompletedProcess`. What it
runs is `cockpit.cli.main.main`, as `python -m cockpit` does.

Commands that need a terminal, a pipe read while they run, or a signal still start with
`subprocess`, as do the tests of `python -m cockpit` itself (the tmux tests, CI's wheel turn).
"""

from __future__ import annotations

import locale
import logging
import multiprocessing
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from cockpit.cli.main import main
from tests.support import agent_forks

SERVER = multiprocessing.get_context("forkserver")
SERVER.set_forkserver_preload([__name__])

STREAMS = ("stdin", "stdout", "stderr")


def start_server() -> None:
    """Start the server (and multiprocessing's resource tracker beside it) now, with this
    process's environment as it is: both keep it for good, and a test that looks for the
    processes whose environment names its store must not find them."""
    process = SERVER.Process(target=os.getpid, name="start the command server")
    process.start()
    process.join()
    process.close()


def run_command(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float,
    stdin: str = "",
) -> subprocess.CompletedProcess[str]:
    """Run `cockpit ARGS` with this environment, in this folder, `stdin` as its input, to
    its end; like `subprocess.run(..., capture_output=True, text=True, timeout=timeout)`,
    it raises `subprocess.TimeoutExpired` (after killing it) when it outlasts `timeout`."""
    command = [sys.executable, "-m", "cockpit", *args]
    with tempfile.TemporaryDirectory(prefix="cockpit-command-") as folder:
        paths = {name: os.path.join(folder, name) for name in STREAMS}
        for name in STREAMS:
            Path(paths[name]).write_text(
                stdin if name == "stdin" else "", encoding=locale.getpreferredencoding(False)
            )
        process = SERVER.Process(
            target=command_in_child,
            args=(list(args), dict(env), str(cwd), paths),
            name=" ".join(command),
        )
        process.start()
        try:
            process.join(timeout)
            if process.exitcode is None:
                process.kill()
                process.join()
                raise subprocess.TimeoutExpired(
                    command, timeout, read_text(paths["stdout"]), read_text(paths["stderr"])
                )
            return subprocess.CompletedProcess(
                command, process.exitcode, read_text(paths["stdout"]), read_text(paths["stderr"])
            )
        finally:
            process.close()


def read_text(path: str) -> str:
    """What a command wrote, decoded as `subprocess.run(text=True)` decodes it."""
    with open(path, encoding=locale.getpreferredencoding(False)) as text:
        return text.read()


def command_in_child(args: list[str], env: dict[str, str], cwd: str, paths: dict[str, str]) -> None:
    """In the forked process: become the command (environment, folder, standard streams,
    arguments), run it, and exit with its status. Its bundled agents and the service it
    starts go through the agent fork server when its environment names one, as a test's
    own do."""
    agent_forks.route_through_forks()
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = None  # read from TMPDIR again, as a fresh interpreter does
    os.chdir(cwd)
    for fd, name in enumerate(STREAMS):
        opened = os.open(paths[name], os.O_RDONLY if fd == 0 else os.O_WRONLY)
        os.dup2(opened, fd)
        os.close(opened)
    encoding = locale.getpreferredencoding(False)
    sys.stdin = open(0, encoding=encoding, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding=encoding, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding=encoding, errors="backslashreplace", closefd=False)  # noqa: SIM115
    sys.argv = [sys.executable, *args]
    try:
        status = main(args)
    finally:
        logging.shutdown()  # what the interpreter's exit does; a fork's `os._exit` does not
        sys.stdout.flush()
        sys.stderr.flush()
    sys.exit(status)
