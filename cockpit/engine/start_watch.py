"""Watching an agent while it starts: its start ends when the agent stalls (it used no CPU
time and wrote nothing for the stall limit: `cockpit.engine.stall`) or at the hard
ceiling, whichever comes first.

The agent is sampled about once a second (a scan of `/proc`, a millisecond or so, done in
a thread) and only while its start is under way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType

from cockpit.engine.group_cpu import group_cpu
from cockpit.engine.stall import Sample, quiet_since, stalled

SAMPLE_EVERY = 1.0
"""Seconds between two samples (less when the stall limit is shorter than four of them)."""


def _retrieve(task: asyncio.Future[None]) -> None:
    if not task.cancelled():
        task.exception()


class StartWatch:
    """`async with StartWatch(...)` around a start: the block ends with TimeoutError when
    the agent stalls (`stalled` is then True) or when the ceiling passes."""

    def __init__(
        self,
        pgid: int,
        written: Callable[[], int],
        *,
        ceiling: float,
        stall_limit: float,
    ) -> None:
        self._pgid = pgid
        self._written = written
        self._ceiling = ceiling
        self.ceiling = ceiling
        """Seconds the start may take in all, from the watch's beginning."""
        self.stall_limit = stall_limit
        """Seconds the agent may do nothing (no CPU time, no output) before it has failed."""
        self.stalled = False
        """True once the start ended because the agent did nothing."""
        self.user_waited_on = False
        """True while the agent waits on the user (a browser sign-in): doing nothing then
        is no stall, and only the ceiling ends the start."""
        self._began = 0.0
        self._timeout: asyncio.Timeout | None = None
        self._sampler: asyncio.Task[None] | None = None

    async def __aenter__(self) -> StartWatch:
        loop = asyncio.get_running_loop()
        self._began = loop.time()
        self._timeout = asyncio.timeout_at(self._began + self.ceiling)
        await self._timeout.__aenter__()
        self._sampler = asyncio.create_task(self._sample(), name="start-watch")
        self._sampler.add_done_callback(_retrieve)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._sampler is not None:
            self._sampler.cancel()  # a scan of /proc in its thread may finish: harmless
        assert self._timeout is not None
        await self._timeout.__aexit__(kind, error, traceback)

    def allow(self, times: float) -> None:
        """Let the start take `times` its ceiling in all (a session/load replays a long
        history). The stall limit does not change."""
        self.ceiling = self._ceiling * times
        if self._timeout is not None:
            self._timeout.reschedule(self._began + self.ceiling)

    async def _probe(self, loop: asyncio.AbstractEventLoop) -> Sample:
        written = self._written()
        cpu = await asyncio.to_thread(group_cpu, self._pgid)
        return Sample(loop.time(), cpu, written)

    async def _sample(self) -> None:
        loop = asyncio.get_running_loop()
        every = min(SAMPLE_EVERY, self.stall_limit / 4)
        anchor = await self._probe(loop)
        while True:
            await asyncio.sleep(every)
            sample = await self._probe(loop)
            if self.user_waited_on:
                anchor = sample
                continue
            if stalled([anchor, sample], self.stall_limit):
                assert self._timeout is not None
                if not self._timeout.expired():  # else the ceiling came first
                    self.stalled = True
                    self._timeout.reschedule(loop.time())  # ends the start now
                return
            anchor = quiet_since([anchor, sample])
