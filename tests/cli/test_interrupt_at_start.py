"""Ctrl-C in the first second of `cockpit`, before the screen: one short line and exit 130,
no KeyboardInterrupt traceback. Each case is a real `python -m cockpit` on a terminal of its
own (a pty that is its controlling terminal), and Ctrl-C is typed on that terminal, so the
terminal sends SIGINT as it does for a user: while the command line imports itself, while it
starts the service, while it opens the store with --local."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cockpit.cli.exits import EXIT_CANCELLED, INTERRUPTED
from tests.support.service_helpers import Terminal

pytestmark = [
    pytest.mark.real_spawn,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pty of its own"),
]

MOMENT_TIMEOUT = 30.0
"""Seconds the command may take to reach the moment the test waits for."""

END_TIMEOUT = 30.0
"""Seconds the command may take to end after the Ctrl-C."""


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + MOMENT_TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {MOMENT_TIMEOUT:g} s in vain for {what}")
        time.sleep(0.002)


def loaded(pid: int, library: str) -> bool:
    """Whether the process has loaded this shared library (an import has begun)."""
    try:
        return library in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def moments(home: Path, terminal: Terminal) -> dict[str, Callable[[], bool]]:
    """When to type Ctrl-C: as the command line imports the store (SQLite's module is
    loaded, the SDK's import is still to come), as the service starts (its log is open),
    as the store opens (its file is there)."""
    return {
        "importing": lambda: loaded(terminal.process.pid, "_sqlite3"),
        "starting the service": (home / "logs" / "service.log").exists,
        "opening the store": (home / "cockpit.db").exists,
    }


@pytest.mark.parametrize(
    ("args", "moment"),
    [
        ((), "importing"),
        ((), "starting the service"),
        (("--local",), "importing"),
        (("--local",), "opening the store"),
    ],
)
def test_ctrl_c_before_the_screen_says_so_in_one_line(
    cli_home: Path, tmp_path: Path, args: tuple[str, ...], moment: str
) -> None:
    terminal = Terminal(cli_home, *args, str(tmp_path))
    wait_for(moments(cli_home, terminal)[moment], moment)
    terminal.ctrl_c()
    code, output = terminal.end(END_TIMEOUT)
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    assert code == EXIT_CANCELLED, output
    assert output.endswith(f"cockpit: {INTERRUPTED}\r\n"), output
    assert "\x1b[?1049h" not in output  # the screen never opened


@pytest.mark.parametrize("args", [(), ("--local",)])
def test_sigint_once_the_screen_is_up_ends_it_cleanly(
    cli_home: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    """A Ctrl-C typed on the screen is a key; a SIGINT sent to it (`kill -INT`) ends it as
    a quit does, the terminal given back (the screen's alternate buffer left)."""
    terminal = Terminal(cli_home, *args, str(tmp_path))
    wait_for(lambda: b"\x1b[?1049h" in terminal.output, "the screen")
    time.sleep(0.5)
    terminal.process.send_signal(signal.SIGINT)
    code, output = terminal.end(END_TIMEOUT)
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    assert code == EXIT_CANCELLED, output
    assert output.rindex("\x1b[?1049l") > output.rindex("\x1b[?1049h")
    assert output.endswith(f"cockpit: {INTERRUPTED}\r\n"), output[-300:]
