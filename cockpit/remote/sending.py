"""Sending to the service in order: what a client sends without waiting (a notification, a
draft, a prompt sent with `send`) goes after what it sent before, and every request made
later waits for it. So a page read after a `watch` cannot overtake it (the frames between
the two would be missed), nor a prompt the `allow_automatically` before it. And a send on a
connection that has ended fails at once (`before_the_end`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class Sending:
    """The work a client runs in the background: in order, or on its own."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Future[Any]] = set()
        """Every task not done yet (the client cancels them as it detaches)."""
        self.last: asyncio.Future[None] | None = None
        """The last work sent in order (the next one, or a request, goes after it)."""
        self._ordered: set[asyncio.Future[Any]] = set()
        """The tasks of `in_order` not done yet."""

    def in_order(
        self, work: Callable[[], Awaitable[Any]], failed: Callable[[Exception], None] | None = None
    ) -> None:
        """Run `work` (a notification, or a request no one waits for) after what was sent
        before it in the same way; `failed` hears its error (else it is logged)."""
        previous = self.last

        async def run() -> None:
            if previous is not None:
                with contextlib.suppress(Exception):
                    await previous
            try:
                await work()
            except Exception as error:
                if failed is None:
                    raise
                failed(error)

        self.last = task = asyncio.ensure_future(run())
        self._ordered.add(task)
        task.add_done_callback(self._ordered.discard)
        self.tasks.add(task)
        task.add_done_callback(self._finished)

    def in_turn(self) -> bool:
        """True inside work sent in order: it goes in its turn already."""
        return asyncio.current_task() in self._ordered

    def background(self, work: Awaitable[Any]) -> None:
        """Run `work` on its own; its failure is logged."""
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self._finished)

    def keep(self, task: asyncio.Future[Any]) -> None:
        """Hold `task` until it is done (cancelled as the client detaches)."""
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def cancel(self) -> None:
        """Cancel every task not done yet."""
        for task in list(self.tasks):
            task.cancel()

    def _finished(self, task: asyncio.Future[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a request to the service failed", exc_info=task.exception())


async def before_the_end(ended: asyncio.Event, work: Awaitable[T]) -> T:
    """`work` (a send on a connection, or a wait for what it brings), abandoned with a
    ConnectionError once the connection has ended. The SDK's sends wait on its sending
    task, which the first failed write ends for good: a send queued behind that write
    waited forever, and every request after it too (a screen stuck reading its session)."""
    task = asyncio.ensure_future(work)
    end = asyncio.ensure_future(ended.wait())
    try:
        await asyncio.wait((task, end), return_when=asyncio.FIRST_COMPLETED)
    finally:
        end.cancel()
        if not task.done():
            task.cancel()
    if task.done() and not task.cancelled():
        return task.result()
    raise ConnectionError("the connection to the Cockpit service ended")
