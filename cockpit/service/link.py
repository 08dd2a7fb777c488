"""One client attached to the service: its connection, the sessions it watches, and an outbox
that bounds what a slow client costs.

Events go out through the outbox, never straight to the socket: a client that stops reading
(a laptop lid closed, a terminal stopped with SIGSTOP) fills its own outbox and nothing else.
Past OUTBOX_BYTES the outbox is dropped and the client is told to read again (`resync`)
as soon as it reads at all: the service's memory stays bounded whatever a client does, and
the client loses nothing, because a read replaces what it holds.

Frames wait in the outbox as the engine made them, and are encoded only as they are sent:
frames of one session queued one after another go out as one event, each run of them that
continues one row joined into one frame (`store.view.coalesce`), so a client that falls
behind catches up in a few messages, not thousands, and a stopped one costs no encoding at
all. A stream's first frame waits FRAME_GATHER for the next ones to join it: a reply
streamed flat out crosses in at most a hundred messages a second, not one frame per token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from acp.connection import Connection

from cockpit import protocol
from cockpit.api import FramesEvent
from cockpit.environment import Environment
from store.model import Frame
from store.view import coalesce

log = logging.getLogger(__name__)

OUTBOX_BYTES = 4 * 1024 * 1024
"""What a client's outbox may hold (in memory, about) before it is dropped for a resync."""

FRAME_BYTES = 200
"""About what a frame waiting in an outbox holds in memory besides its text (the tuple, its
length, the list's slot): a 4-character chunk weighs about 200 bytes there, not 4."""

FRAME_GATHER = 0.01
"""Seconds queued frames wait for more to join them before they are sent. A screen shows
at most 60 frames a second, so 10 ms is not seen; a reply streamed flat out (12,476
chunks of 4 characters in about a second) crosses as 400 to 1,000 frames instead of
12,476, which brought the attached TUI's CPU to the in-process one's or below
(BENCHMARKS.md). Other events (a status, a question) go at once."""

DRAIN_TIMEOUT = 5.0
"""Seconds an answer waits for the events before it to be written."""

MAX_IN_FLIGHT = 256
"""Requests and notifications of one client the service handles at once. Past it, nothing
more of that client is read until one ends: a client that floods the service with calls
fills its own socket, not the service's memory, and `status` does not wait behind it. A
screen has a few at once (a prompt, a page, a start per session)."""


@dataclass
class _Frames:
    """Frames of one session waiting to be sent, more of which may join them."""

    session: str
    frames: list[Frame]
    size: int


_Notification = tuple[str, Any, int]
"""A notification waiting to be sent: its method, its params (encoded), its weight."""


class ClientLink:
    """A client of the service."""

    def __init__(self, number: int, conn_factory: Callable[[ClientLink], Connection]) -> None:
        self.id = f"client-{number}"
        self.watched: set[str] = set()
        """The sessions whose frames this client asked for (the ones it shows)."""
        self.hello: dict[str, Any] = {}
        """What the client said of itself when it attached (its environment left out)."""
        self.environment: Environment | None = None
        """The client's world, from its first hello that brought one: the agents its
        requests start run with it. In memory only."""
        self.greeted = False
        self.gone = asyncio.Event()
        """Set once the client has gone (its connection ended)."""
        self._outbox: deque[_Frames | _Notification] = deque()
        self._outbox_bytes = 0
        self._resync = False
        self._ready = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self._closed = False
        self.resyncs = 0
        """How many times this client's outbox was dropped for a resync."""
        self.in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)
        """A place for each request or notification read from the client and not yet
        handled (the handler gives it back)."""
        self.refused: str | None = None
        """Why this client is not served (the service had as many as it serves): it gets
        answers to `status` and `stop` only."""
        self.problems = 0
        """Lines of this client's that were no usable message (only the first is logged)."""
        self.conn = conn_factory(self)
        self._sender = asyncio.ensure_future(self._send_loop())

    def complain(self, problem: str) -> None:
        """Count a line of this client's that was no usable message; log the first, in a
        few words (never what it held: a prompt, an environment)."""
        self.problems += 1
        if self.problems == 1:
            log.warning("%s sent %s (more such lines are counted, not logged)", self.id, problem)

    def post(self, method: str, params: Any, size: int) -> bool:
        """Queue a notification; `size` is about what it weighs in memory. False when it
        was dropped (the client is let go, or will read everything again)."""
        if not self._room(size):
            return False
        self._outbox.append((method, params, size))
        self._queued(size)
        return True

    def post_frames(self, event: FramesEvent) -> None:
        """Queue the frames of an event, joined to the frames of the same session queued
        just before them if those are not sent yet."""
        size = sum(FRAME_BYTES + len(frame.part) for frame in event.frames)
        if not self._room(size):
            return
        last = self._outbox[-1] if self._outbox else None
        if isinstance(last, _Frames) and last.session == event.session:
            last.frames.extend(event.frames)
            last.size += size
        else:
            self._outbox.append(_Frames(event.session, list(event.frames), size))
        self._queued(size)

    def _room(self, size: int) -> bool:
        """Whether `size` more bytes may be queued; past the bound, the outbox is dropped
        and a resync queued in its place (False: drop what was to be queued)."""
        if self._closed or self._resync:
            return False  # dropped: the resync that is queued makes the client read again
        if self._outbox_bytes + size <= OUTBOX_BYTES:
            return True
        log.warning(
            "%s does not keep up: %d bytes queued, it will read again", self.id, self._outbox_bytes
        )
        self._outbox.clear()
        self._outbox_bytes = 0
        self._resync = True
        self.resyncs += 1
        self._outbox.append((protocol.RESYNC, {}, 0))
        self._queued(0)
        return False

    def _queued(self, size: int) -> None:
        self._outbox_bytes += size
        self._drained.clear()
        self._ready.set()

    @property
    def queued_bytes(self) -> int:
        """What waits in the outbox (for the service's status and the tests)."""
        return self._outbox_bytes

    async def _send_loop(self) -> None:
        try:
            while True:
                await self._ready.wait()
                if self._outbox and isinstance(self._outbox[0], _Frames):
                    await asyncio.sleep(FRAME_GATHER)  # let the stream's next frames join
                self._ready.clear()
                while self._outbox:
                    item = self._outbox.popleft()
                    if isinstance(item, _Frames):
                        self._outbox_bytes -= item.size
                        event = protocol.encode_frames_event(item.session, coalesce(item.frames))
                        await self.conn.send_notification(protocol.EVENT, {"event": event})
                        continue
                    method, params, size = item
                    self._outbox_bytes -= size
                    if method == protocol.RESYNC:
                        self._resync = False
                    await self.conn.send_notification(method, params)
                if not self._outbox:
                    self._drained.set()
        except (ConnectionError, OSError):
            return  # the client went away: its link closes
        except asyncio.CancelledError:
            return

    async def drained(self) -> None:
        """Wait until every event queued so far is written (so that the answer to a request
        comes after the events its work caused: `cockpit run` reads the status its turn
        ended with), or DRAIN_TIMEOUT passes (the client does not read)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._drained.wait(), DRAIN_TIMEOUT)

    async def close(self) -> None:
        """Let go of the client (it went away, or the service stops)."""
        if self._closed:
            return
        self._closed = True
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._sender
        with contextlib.suppress(Exception):
            await self.conn.close()
