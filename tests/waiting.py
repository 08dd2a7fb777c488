"""Waiting in tests for something to become true, and saying what when it never does: a
bare `asyncio.timeout` turns a failure into a silent TimeoutError, with no word of what
the test was waiting for."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable

POLL = 0.01


def described(condition: Callable[[], object]) -> str:
    """The source line of `condition` (a lambda, usually), to name it in a failure."""
    try:
        source = inspect.getsource(condition).strip()
    except (OSError, TypeError):
        return getattr(condition, "__qualname__", repr(condition))
    return " ".join(source.split())[:300]


async def eventually(
    condition: Callable[[], object], timeout: float = 15, what: str | None = None
) -> None:
    """Return once `condition()` is true; after `timeout` seconds fail with an
    AssertionError that names what was awaited (`what`, else the condition's source)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() >= deadline:
            raise AssertionError(f"waited {timeout:g} s in vain for {what or described(condition)}")
        await asyncio.sleep(POLL)
