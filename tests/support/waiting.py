"""Waiting in tests for something to become true, and saying what when it never does: a
bare `asyncio.timeout` turns a failure into a silent TimeoutError, with no word of what
the test was waiting for."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable

POLL = 0.01


def described(condition: Callable[[], object]) -> str:
    """The source line of `condition` (a lambda, usually), to name it in a failure."""
    try:
        source = inspect.getsource(condition).strip()
    except (OSError, TypeError):
        return getattr(condition, "__qualname__", repr(condition))
    return " ".join(source.split())[:300]


async def holds(condition: Callable[[], object]) -> bool:
    """Whether `condition()` is true; a condition that must read something asynchronously
    (a page from the store) returns an awaitable, which is awaited."""
    value = condition()
    if inspect.isawaitable(value):
        value = await value
    return bool(value)


async def eventually(
    condition: Callable[[], object | Awaitable[object]],
    timeout: float = 15,
    what: str | None = None,
) -> None:
    """Return once `condition()` (or what it awaits) is true; after `timeout` seconds (a
    read that hangs included) fail with an AssertionError that names what was awaited
    (`what`, else the condition's source)."""
    limit = asyncio.timeout(timeout)
    try:
        async with limit:
            while not await holds(condition):
                await asyncio.sleep(POLL)
    except TimeoutError:
        if not limit.expired():
            raise
        message = f"waited {timeout:g} s in vain for {what or described(condition)}"
        raise AssertionError(message) from None
