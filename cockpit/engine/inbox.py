"""A session's ordered inbox and its one consumer: the only path from what the agent sends
(and from the rows Cockpit writes itself) to the store and the frames the views get.

Everything goes through one queue, so a decision row lands in order with the updates
around it; ONE consumer applies the queue to the store in batches and emits the frames.
Writers that must know their row is committed (a permission decision, before the agent
hears the answer) wait on it; a barrier says when everything queued before it is stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cockpit.api import EngineEvent, FramesEvent, ProblemEvent, SessionEvent
from cockpit.engine.errors import describe
from cockpit.engine.transport import preview
from cockpit.text.textout import listed
from store import Chunk, Frame, UnknownSession, chunk_from_update, note
from store.chunks import META_UPDATES
from store.store import Store

log = logging.getLogger(__name__)

FINISHED_TOOL_STATES = frozenset({"completed", "failed", "cancelled"})

DRAIN_TIMEOUT = 20.0
"""Seconds a stopping session waits for what the agent sent to be stored."""

RECEIVED_KEPT = 4096
"""Characters of a malformed update (as JSON) kept on its notice row."""


def received(value: Any) -> dict[str, Any]:
    """What a row keeps of a value the agent sent: its JSON, cut at RECEIVED_KEPT
    characters, and its whole length when it was cut."""
    raw = json.dumps(value, ensure_ascii=False, default=repr)
    kept: dict[str, Any] = {"received": raw[:RECEIVED_KEPT]}
    if len(raw) > RECEIVED_KEPT:
        kept["receivedLength"] = len(raw)
    return kept


@dataclass
class _Barrier:
    """Resolved by the consumer once everything queued before it is applied."""

    done: asyncio.Future[None]


STOP_CONSUMING = object()
"""The inbox item that ends a consumer once everything queued before it is applied."""


@dataclass
class _Durable:
    """A row Cockpit writes itself whose writer must know it is committed: the consumer
    resolves `done` once the store has it, or fails it with the store's error."""

    chunk: Chunk
    done: asyncio.Future[None]


class SessionInbox:
    """The queue of one session's updates and rows, and the consumer that stores them."""

    def __init__(self, session_id: str, store: Store, emit: Callable[[EngineEvent], None]) -> None:
        self.session_id = session_id
        self._store = store
        self._emit = emit
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        """Updates (wire JSON), Cockpit's own chunks, barriers and durable rows, in order."""
        self.consumer: asyncio.Task[None] | None = None
        self.open_tools: dict[str, str] = {}
        """The status of every tool call that has not finished, by id."""
        self.terminal_tools: dict[str, str] = {}
        """The tool call each terminal is shown on, by terminal id."""
        self.replayed_users = 0
        """User messages stored since the count was last reset (a reload's replay)."""
        self.discarded = False
        """True once the session is gone: nothing is written for it any more."""

    def put(self, item: Any) -> None:
        """Queue an update or a chunk; the consumer applies it after what came before."""
        self.queue.put_nowait(item)

    def dropped(self, what: str) -> None:
        """A notice for a line the transport could not hand on."""
        self.put(note(self.session_id, "notice", f"Ignored {what} from the agent."))

    def malformed(self, what: str, value: Any) -> None:
        """A notice for an update Cockpit cannot fold, keeping (a bounded preview of) what
        the agent sent."""
        kept = received(value)
        raw = kept["received"]
        self.put(
            note(
                self.session_id,
                "notice",
                f"Ignored {what} from the agent: {preview(raw.encode('utf-8', 'replace'))}",
                **kept,
            )
        )

    async def consume(self) -> None:
        """Apply the inbox to the store, in order, and emit frames in batches, until it
        meets a stop marker: everything before the marker is applied and shown, nothing
        after it is taken (a later consumer does)."""
        stopping = False
        while not stopping:
            items: list[Any] = []
            item = await self.queue.get()
            while True:
                if item is STOP_CONSUMING:
                    stopping = True
                    break
                items.append(item)
                if self.queue.empty() or len(items) >= 512:
                    break
                item = self.queue.get_nowait()
            frames: list[Frame] = []
            changed = False
            failed: Exception | None = None
            try:
                changed, failed = await self._apply_items(items, frames)
            finally:  # a consumer cancelled mid-batch still shows what it stored
                self._flush_frames(frames)
            if changed:
                self._emit(SessionEvent(self.session_id))
            # A write the store keeps and retries (the disk is full) was reported once, by
            # the engine; a toast for each batch of a streaming reply would bury the screen.
            if failed is not None and failed is not self._store.failure:
                self._emit(
                    ProblemEvent(
                        self.session_id,
                        f"Cockpit could not store what the agent sent: {describe(failed)}",
                    )
                )

    async def _apply_items(
        self, items: list[Any], frames: list[Frame]
    ) -> tuple[bool, Exception | None]:
        """Store a batch of the inbox in order, gathering its frames into `frames` (emitted
        at once where someone waits on an item); return whether session metadata changed
        and the last failure to store an update."""
        changed = False
        failed: Exception | None = None
        for item in items:
            if isinstance(item, _Barrier):
                self._flush_frames(frames)
                frames.clear()
                if not item.done.done():
                    item.done.set_result(None)
                continue
            try:
                if isinstance(item, _Durable):
                    chunk = item.chunk
                elif isinstance(item, Chunk):
                    chunk = item
                else:
                    chunk = chunk_from_update(self.session_id, item)
                applied = await self._store.apply(chunk)
            except Exception as error:
                log.exception("could not store an update of session %s", self.session_id)
                if isinstance(item, _Durable):
                    if not item.done.done():
                        item.done.set_exception(error)
                else:
                    failed = error
                continue
            frames.extend(applied)
            if isinstance(item, _Durable):
                self._flush_frames(frames)
                frames.clear()
                if not item.done.done():
                    item.done.set_result(None)
            if chunk.update in META_UPDATES:
                changed = True
            elif chunk.update == "user_message_chunk":
                self.replayed_users += 1
            try:
                self._track_tools(applied)
            except Exception:  # a consumer that died here lost the rest of its batch
                log.exception("could not follow the tool calls of session %s", self.session_id)
        return changed, failed

    def _flush_frames(self, frames: list[Frame]) -> None:
        if frames:
            self._emit(FramesEvent(self.session_id, tuple(frames)))

    def _track_tools(self, frames: list[Frame]) -> None:
        for frame in frames:
            if frame.kind != "tool" or frame.payload is None:
                continue
            tool_call_id = str(frame.payload.get("toolCallId", ""))
            status = str(frame.payload.get("status") or "pending")
            if status in FINISHED_TOOL_STATES:
                self.open_tools.pop(tool_call_id, None)
            else:
                self.open_tools[tool_call_id] = status
            for item in listed(frame.payload.get("content")):  # a 7 there killed the consumer
                if isinstance(item, Mapping) and item.get("type") == "terminal":
                    self.terminal_tools[str(item.get("terminalId"))] = tool_call_id

    def ensure_consumer(self) -> None:
        """Start a consumer unless one runs (UnknownSession once the session is gone)."""
        if self.discarded:
            raise UnknownSession(self.session_id)
        if self.consumer is None or self.consumer.done():
            self.consumer = asyncio.create_task(self.consume(), name=f"consume-{self.session_id}")
            self.consumer.add_done_callback(self._consumer_ended)

    def _consumer_ended(self, consumer: asyncio.Task[None]) -> None:
        """A consumer that stopped at its marker leaves what came after it (a last row of
        Cockpit's own, a barrier someone waits on) to the next one, started at once."""
        if (
            consumer is self.consumer
            and not consumer.cancelled()
            and not self.queue.empty()
            and not self.discarded
        ):
            self.ensure_consumer()

    async def settle(self) -> None:
        """Wait until everything queued so far is in the store."""
        self.ensure_consumer()
        barrier = _Barrier(asyncio.get_running_loop().create_future())
        self.put(barrier)
        await barrier.done

    async def record(self, chunk: Chunk) -> None:
        """Queue a row Cockpit writes itself and wait until it is committed; raises the
        store's error when it could not be."""
        self.ensure_consumer()
        durable = _Durable(chunk, asyncio.get_running_loop().create_future())
        self.put(durable)
        await durable.done

    async def tell(self, chunk: Chunk) -> None:
        """Record a row Cockpit writes itself; when the store cannot take it, the user still
        hears of it (a problem event) and the session goes on. A session that is gone
        takes nothing."""
        if self.discarded:
            return
        try:
            await self.record(chunk)
        except Exception as error:
            log.exception("could not record a row of session %s", self.session_id)
            self._emit(
                ProblemEvent(self.session_id, f"{chunk.text} (not saved: {describe(error)})")
            )

    async def drain(self) -> None:
        """End the consumer once everything queued so far is stored and shown, before the
        session is let go: it stops at a marker after it (a loaded machine takes its time;
        only a hung store is given up on, and then cut short)."""
        consumer = self.consumer
        if consumer is not None and not consumer.done():
            self.put(STOP_CONSUMING)
            try:
                await asyncio.wait_for(asyncio.shield(consumer), DRAIN_TIMEOUT)
            except Exception:
                log.exception("session %s: what the agent sent was not all stored", self.session_id)
                consumer.cancel()
                with contextlib.suppress(BaseException):
                    await consumer
        if self.consumer is consumer:  # not one started meanwhile for a last row
            self.consumer = None

    def discard(self) -> None:
        """Stop taking anything for a session that is gone."""
        self.discarded = True
        if self.consumer is not None:
            self.consumer.cancel()
            self.consumer = None
