"""Making a process in a way that is safe to cancel, for every side that starts one (the
engine's agents, git and commands; the remote client's bridge).

Python 3.11's asyncio never ends a creation cancelled before the process's pipes were
connected: it kills the process, then waits for pipes that never report. A cancel as
Cockpit closes (every task cut at once) then hung the close for good; a checkpoint's
refresh of git's index, cut as a test ended, hung the test suite.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

Made = TypeVar("Made")

SPAWN_CUT_WAIT = 1.0
"""Seconds a cut creation of a process is given to end by itself."""


async def spawn(*command: str, **options: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec(*command, **options)`, safe to cancel (`created`)."""
    return await created(asyncio.create_subprocess_exec(*command, **options), _ended)


async def created(
    creation: Coroutine[Any, Any, Made], end: Callable[[Made], Awaitable[None]]
) -> Made:
    """What `creation` (of a process) makes, safe to cancel. The creation runs apart: a
    cancel of the caller lets it end and `end`s what it made, and a creation still stuck
    after SPAWN_CUT_WAIT is cancelled once more, which ends the wait (the process was
    killed already)."""
    creating = asyncio.ensure_future(creation)
    try:
        return await asyncio.shield(creating)
    except asyncio.CancelledError:
        for _ in range(2):
            await asyncio.wait({creating}, timeout=SPAWN_CUT_WAIT)
            if creating.done():
                break
            creating.cancel()
        if creating.done() and not creating.cancelled() and creating.exception() is None:
            await end(creating.result())
        raise


async def _ended(process: asyncio.subprocess.Process) -> None:
    """Kill a process made for a caller that went away, and reap it."""
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(SPAWN_CUT_WAIT):
            await process.wait()
