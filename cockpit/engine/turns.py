"""A session's turns: a prompt stored before anything else happens, sent to the agent, and
ended with a row saying why when it did not end normally (a cancel, a limit, a refusal,
an agent that died, a stop, a failure inside Cockpit); and the cancel the spec asks for.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from acp import RequestError, text_block
from pydantic import ValidationError

from cockpit.acp_types import ContentBlock
from cockpit.api import FramesEvent, ProblemEvent, SessionEvent, StartError, Status
from cockpit.engine.errors import describe
from cockpit.text.undecodable import replace_undecodable, replaced_notice
from store import Chunk, note

if TYPE_CHECKING:
    from cockpit.engine.session import LiveSession

log = logging.getLogger(__name__)

RUN_ENDED = "the turn of `cockpit run` ended"
"""Why the agent of a run stops after its turn (said only if something was still under way)."""

EXIT_GRACE = 3.0
"""Seconds an agent whose connection broke may take to exit by itself before it is stopped."""

_STOP_WORDS = {
    "cancelled": "The turn was cancelled.",
    "max_tokens": "The agent stopped: it reached its output token limit.",
    "max_turn_requests": "The agent stopped: it reached its limit of model requests for one turn.",
    "refusal": (
        "The agent refused to continue. This prompt and what follows it will not be in its context."
    ),
}


def first_line(text: str, width: int = 60) -> str:
    """The first non-empty line of `text`, cut to `width` characters."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def _usage_of(response: Any) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    if getattr(response, "usage", None) is not None:
        usage.update(response.usage.model_dump(by_alias=True, exclude_none=True))
    meta = getattr(response, "field_meta", None)
    if meta:
        usage["_meta"] = meta
    if usage:
        usage["at"] = time.time()
    return usage


class Turns:
    """The turns of one live session, one at a time."""

    def __init__(self, live: LiveSession) -> None:
        self._live = live
        self._lock = asyncio.Lock()
        self.active = False
        """True while a prompt is with the agent."""
        self.idle = asyncio.Event()
        """Set whenever no turn runs (a stop waits on it)."""
        self.idle.set()
        self.cancelling = False
        """True from a cancel until its turn ends."""
        self.stop_reason: str | None = None
        """Why Cockpit is stopping a turn that runs (the session closed, Cockpit quit)."""
        self._queued = 0
        """Prompts waiting for the turn that runs to end."""

    async def prompt(
        self, text: str, blocks: Sequence[ContentBlock] = (), *, then_stop: bool = False
    ) -> str:
        """Run one turn; returns its stop reason ("error" when it failed: the session then
        holds a row saying why). The prompt is stored before anything else happens, and one
        typed while the agent starts waits for it to be ready.

        `then_stop` (a `cockpit run`) stops the agent once the turn has ended and been
        stored, before the next turn may begin; a prompt already waiting for this one keeps
        the agent, which it would only start again."""
        self._queued += 1
        try:
            await self._lock.acquire()
        finally:
            self._queued -= 1
        try:
            return await self._prompt(text, blocks)
        finally:
            try:
                if then_stop and not self._queued:
                    await self._live.stop(RUN_ENDED)
            finally:
                self._lock.release()

    async def _prompt(self, text: str, blocks: Sequence[ContentBlock]) -> str:
        live = self._live
        await live.lifecycle.claim()  # SessionBusy before the prompt is stored or sent
        payload = (
            {"blocks": [b.model_dump(by_alias=True, exclude_none=True) for b in blocks]}
            if blocks
            else None
        )
        text, replaced = replace_undecodable(text)  # never stored nor sent as it came
        _, frames = await live.store.begin_turn(live.id, text, payload)
        live.emit(FramesEvent(live.id, tuple(frames)))
        if replaced:
            await live.inbox.tell(note(live.id, "notice", replaced_notice("The prompt", replaced)))
        await self._name_after(text)
        try:
            await live.start()  # the prompt is stored first: a failed start loses no word
        except StartError:
            await self._end_turn("error")
            return "error"
        return await self.run(text, blocks)

    async def run(self, text: str, blocks: Sequence[ContentBlock]) -> str:
        """Send a stored prompt to the started agent and see its turn to the end."""
        live = self._live
        conn, agent_session_id = live.conn, live.agent_session_id
        if conn is None or agent_session_id is None:  # it died between its start and now
            await live.inbox.tell(
                note(live.id, "error", "The agent stopped before the prompt went out.")
            )
            await self._end_turn("error")
            return "error"
        self.active = True
        self.idle.clear()
        self.cancelling = False
        self.stop_reason = None
        live.broker.new_turn()
        live.set_status(Status.WORKING)
        stop_reason = "error"
        try:
            await live.store.update_session(live.id, status=Status.WORKING)
            mentioned = await live._mentions(text)
            response = await conn.prompt(
                session_id=agent_session_id,
                prompt=[text_block(text), *blocks, *mentioned],
            )
            stop_reason = str(response.stop_reason)
            await live.inbox.settle()
            await live.broker.close_unanswered()
            usage = _usage_of(response)
            if usage:
                await live.inbox.tell(Chunk(live.id, "usage_update", data={"lastTurn": usage}))
                live.emit(SessionEvent(live.id))
            if self.stop_reason is not None:
                await self._tell_stopped()
            elif stop_reason != "end_turn":  # a reply cut short says so, read back too
                words = _STOP_WORDS.get(stop_reason, f"The turn stopped: {stop_reason}.")
                await live.inbox.tell(note(live.id, "notice", words))
        except ConnectionError:
            stop_reason = "error"
            code = await self._exit_code()
            await live.inbox.settle()
            if self.stop_reason is not None:
                await self._tell_stopped()
            else:
                await live.lifecycle.report_exit(code if code is not None else -1)
        except (RequestError, ValidationError) as error:
            stop_reason = "error"
            await live.inbox.settle()
            await live.inbox.tell(
                note(live.id, "error", f"The agent failed the turn: {describe(error)}")
            )
        except Exception as error:  # a store error, or a bug: the turn fails visibly
            stop_reason = "error"
            log.exception("the turn of session %s failed", live.id)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(live.inbox.settle(), 2)
            await live.inbox.tell(
                note(live.id, "error", f"The turn failed inside Cockpit: {describe(error)}")
            )
        finally:
            self.active = False
            self.idle.set()
        await self._end_turn(stop_reason)
        return stop_reason

    async def _exit_code(self) -> int | None:
        """The agent's exit code once the connection to it broke. It is given a moment to
        exit by itself, and then stopped: an agent that closed its output and lives on
        held the turn, and `cockpit run`, forever."""
        live = self._live
        process = live.process
        if process is None:
            return None
        try:
            return await asyncio.wait_for(asyncio.shield(process.wait()), EXIT_GRACE)
        except TimeoutError:
            log.warning(
                "session %s: the connection broke and the agent lives; stopping it", live.id
            )
            await live.inbox.tell(
                note(
                    live.id,
                    "notice",
                    "The connection to the agent broke while it went on running: Cockpit "
                    "stopped it.",
                )
            )
            return await process.stop()

    async def _tell_stopped(self) -> None:
        await self._live.inbox.tell(
            note(
                self._live.id,
                "notice",
                f"The turn was stopped: {self.stop_reason}. The reply above is cut short.",
            )
        )

    async def _end_turn(self, stop_reason: str) -> None:
        """Seal the turn's last message and say the session is ready again; a store that
        fails here is reported, and the session still leaves the working state."""
        live = self._live
        try:
            kept = await live.store.end_turn(live.id)  # what a late replay's window held
            if kept:
                live.emit(FramesEvent(live.id, tuple(kept)))
            if live.status not in (Status.EXITED, Status.ERROR):
                await live.store.update_session(live.id, status=Status.READY)
        except Exception as error:
            log.exception("could not end the turn of session %s", live.id)
            problem = f"Could not save the end of the turn: {describe(error)}"
            live.emit(ProblemEvent(live.id, problem))
        self.cancelling = False
        if live.status not in (Status.EXITED, Status.ERROR, Status.CLOSED):
            live.set_status(Status.READY, stop_reason, turn_ended=True)

    async def _name_after(self, prompt: str) -> None:
        """A session is titled by its first prompt line until the user or the agent names it."""
        live = self._live
        record = await live.store.get_session(live.id)
        if record is not None and record.title is None:
            title = first_line(prompt)
            await live.store.update_session(live.id, title=title)
            live.record = dataclasses.replace(live.record, title=title)  # `service status`'s
            live.emit(SessionEvent(live.id))

    async def cancel(self) -> bool:
        """Cancel the running turn as the spec says; the prompt still returns its stop reason."""
        live = self._live
        if not self.active or live.conn is None or live.agent_session_id is None:
            return False
        self.cancelling = True
        live.set_status(Status.CANCELLING)
        with contextlib.suppress(ConnectionError):
            await live.conn.cancel(session_id=live.agent_session_id)
        await live.close_open("cancel", None, "cancelled")
        return True
