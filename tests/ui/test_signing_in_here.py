"""A terminal way's login run in the user's own terminal (the agents on this machine): the
screen is handed over and nothing is drawn meanwhile, but the rest of the process goes on
(with `--local`, the agents' output keeps being stored). A real login process runs; the
terminal is a stand-in that records being handed over."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from textual.app import SuspendNotSupported

from cockpit.api import AgentSpec, SignInMethod
from cockpit.ui.signing_in import CANNOT_HAND_OVER, run_login

LOGIN = "import sys, time; time.sleep(0.6); open('logged', 'w').write('yes'); sys.exit(int(sys.argv[1]))"


class Terminal:
    """What `run_login` asks of the app: a terminal handed over, and drawing held."""

    def __init__(self, can_hand_over: bool = True) -> None:
        self.can_hand_over = can_hand_over
        self.handed_over = False
        self.drawing_held = False
        self.seen: list[tuple[bool, bool]] = []

    @contextlib.contextmanager
    def suspend(self) -> Iterator[None]:
        if not self.can_hand_over:
            raise SuspendNotSupported("headless")
        self.handed_over = True
        yield
        self.handed_over = False

    @contextlib.contextmanager
    def batch_update(self) -> Iterator[None]:
        self.drawing_held = True
        yield
        self.drawing_held = False


def login_method(code: int) -> tuple[SignInMethod, AgentSpec]:
    method = SignInMethod("t", "Log in", kind="terminal", args=(str(code),))
    spec = AgentSpec("tiny", (sys.executable, "-c", LOGIN), "tiny")
    return method, spec


async def test_the_process_goes_on_while_the_login_has_the_terminal(tmp_path: Path) -> None:
    terminal = Terminal()
    method, spec = login_method(0)
    ticks = 0

    async def ticking() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1
            terminal.seen.append((terminal.handed_over, terminal.drawing_held))

    ticker = asyncio.create_task(ticking())
    try:
        refused = await run_login(terminal, method, spec, str(tmp_path))  # type: ignore[arg-type]
    finally:
        ticker.cancel()
    assert refused is None and (tmp_path / "logged").read_text() == "yes"
    assert ticks >= 10, "the event loop waited for the login"
    assert (True, True) in terminal.seen, "the login ran with the terminal handed over"
    assert not terminal.handed_over and not terminal.drawing_held


async def test_a_failed_login_says_its_exit_code(tmp_path: Path) -> None:
    method, spec = login_method(3)
    refused = await run_login(Terminal(), method, spec, str(tmp_path))  # type: ignore[arg-type]
    assert refused == "The agent's login ended with exit code 3."


async def test_a_terminal_that_cannot_be_handed_over_says_so(tmp_path: Path) -> None:
    method, spec = login_method(0)
    terminal: Any = Terminal(can_hand_over=False)
    assert await run_login(terminal, method, spec, str(tmp_path)) == CANNOT_HAND_OVER
    assert not (tmp_path / "logged").exists()
