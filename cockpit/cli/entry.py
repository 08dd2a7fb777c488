"""The `cockpit` command's entry point: importing the command line takes a few tenths of a
second (the ACP SDK, the store), and a Ctrl-C then printed a KeyboardInterrupt traceback.
This module imports nothing heavy, so that the Ctrl-C is noted from as early as it can be."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType


@contextlib.contextmanager
def noted() -> Iterator[list[int]]:
    """Within the block a SIGINT is added to the list it yields, not raised."""
    interrupted: list[int] = []

    def note(number: int, _frame: FrameType | None) -> None:
        interrupted.append(number)

    previous = signal.signal(signal.SIGINT, note)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


def main() -> int:
    with noted() as interrupted:
        from cockpit.cli.main import main as command_line
    if interrupted:
        from cockpit.cli.interrupts import say_interrupted

        return say_interrupted()
    return command_line()
