"""Ctrl-C while Cockpit starts ends the command in one line, with exit 130. Raised as a
KeyboardInterrupt in the middle of an import, it printed a traceback, or a library caught it
and Cockpit went on as if nothing was typed: while Cockpit imports itself, a Ctrl-C is only
noted, and the command ends once the import is done. In a command's event loop it cancels
the command's work, which then ends as interrupted whatever it raised as it was cut short."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

from cockpit.cli.exits import EXIT_CANCELLED, INTERRUPTED


def say_interrupted() -> int:
    """Say that Ctrl-C ended the command; its exit code."""
    print(f"cockpit: {INTERRUPTED}", file=sys.stderr)
    return EXIT_CANCELLED


T = TypeVar("T")


def run(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)`, where a Ctrl-C cancels `work` and the command then ends as
    interrupted (KeyboardInterrupt) whatever `work` raised as it was cut short: a service
    started at that instant dies of the same Ctrl-C (it is still in the terminal's process
    group), and the command said the service "did not start". A second Ctrl-C ends it at
    once, as asyncio's own handling does; a command that handles Ctrl-C itself (`run`
    cancels its turn) puts its own handler in place of this one."""
    interrupted: list[int] = []

    async def cancellable() -> T:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()

        def on_interrupt(number: int, _frame: FrameType | None) -> None:
            if interrupted or task is None:
                raise KeyboardInterrupt
            interrupted.append(number)
            task.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wake the loop from its wait

        previous = signal.signal(signal.SIGINT, on_interrupt)
        try:
            return await work
        finally:
            signal.signal(signal.SIGINT, previous)

    try:
        return asyncio.run(cancellable())
    except BaseException:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
