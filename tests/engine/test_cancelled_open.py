"""Opening the engine cut short (a Ctrl-C as Cockpit starts cancels it, and the command's
event loop then closes) leaves no database connection behind: one that was connecting went
on in its thread and reported to the closed loop ("Exception in thread ... Event loop is
closed" as the command ended), and a store opened before the cut was never closed, its
threads waiting for good."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cockpit.engine.core
from cockpit.engine.core import Engine


def database_threads() -> set[threading.Thread]:
    """The threads aiosqlite runs a connection in."""
    return {
        thread
        for thread in threading.enumerate()
        if "_connection_worker_thread" in str(getattr(thread, "_target", ""))
    }


@pytest.fixture
def thread_errors() -> Iterator[list[threading.ExceptHookArgs]]:
    """What the threads raised and nobody caught."""
    errors: list[threading.ExceptHookArgs] = []
    hook = threading.excepthook
    threading.excepthook = errors.append
    try:
        yield errors
    finally:
        threading.excepthook = hook


def no_connection_left(before: set[threading.Thread]) -> bool:
    deadline = time.monotonic() + 10
    while database_threads() - before and time.monotonic() < deadline:
        time.sleep(0.01)
    return not database_threads() - before


async def open_and_cut(home: Path, when: asyncio.Event | None = None) -> None:
    """Open the engine and cancel the opening: at once (it is connecting), or `when` set."""
    opening = asyncio.ensure_future(Engine.open(home))
    if when is None:
        await asyncio.sleep(0)
    else:
        await when.wait()
    opening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await opening


def test_an_open_cut_while_it_connects_leaves_no_connection(
    tmp_path: Path, thread_errors: list[threading.ExceptHookArgs]
) -> None:
    before = database_threads()
    for attempt in range(5):
        asyncio.run(open_and_cut(tmp_path / f"home-{attempt}"))
    assert no_connection_left(before)
    assert [str(error.exc_value) for error in thread_errors] == []


def test_an_open_cut_once_the_store_is_open_closes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reached = asyncio.Event()

    async def recovering(*_args: Any) -> None:  # the last step of an open, held there
        reached.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(cockpit.engine.core, "recover", recovering)
    before = database_threads()
    asyncio.run(open_and_cut(tmp_path / "home", reached))
    assert no_connection_left(before)
