"""A session's turns: a prompt stored before anything else happens, sent to the agent, and
ended with a row saying why when it did not end normally (a cancel, a limit, a refusal,
an agent that died, a stop, a failure inside Cockpit); and the cancel the spec asks for.

A turn reads its session and changes it through one `TurnNeeds`; it asks the agent's
lifecycle (`Agent`) for the connection, and to start, stop and report the agent's exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from acp import RequestError, text_block
from acp.core import ClientSideConnection
from pydantic import ValidationError

from cockpit.acp_types import ContentBlock
from cockpit.api import EngineEvent, FramesEvent, ProblemEvent, SessionEvent, StartError, Status
from cockpit.engine.agent_process import AgentProcess
from cockpit.engine.errors import describe
from cockpit.engine.inbox import SessionInbox
from cockpit.engine.mention_blocks import mention_blocks
from cockpit.engine.sign_in import asks_sign_in
from cockpit.text.mentions import find_mentions
from cockpit.text.undecodable import replace_undecodable, replaced_notice
from store import Chunk, note
from store.store import Store

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


class Agent(Protocol):
    """What a turn reads of the session's agent (`AgentLifecycle`), and asks of it."""

    @property
    def conn(self) -> ClientSideConnection | None:
        """The SDK's connection to the agent (None when none runs)."""
        ...

    @property
    def agent_session_id(self) -> str | None:
        """The agent's own id of this session."""
        ...

    @property
    def process(self) -> AgentProcess | None:
        """The agent's process (None before the first start)."""
        ...

    @property
    def capabilities(self) -> dict[str, Any]:
        """What the agent said in `initialize` it can do, as wire JSON."""
        ...

    async def claim(self) -> None:
        """Become the session's only writer (SessionBusy when another Cockpit is)."""

    def sign_in_needed(self, error: BaseException) -> str:
        """The agent refused a prompt until the user signs in: the row saying how."""
        ...

    async def start(self) -> None:
        """Start the agent unless it is up (StartError when it fails)."""

    async def stop(self, reason: str) -> None:
        """Stop the agent; a running turn ends with a row saying `reason`."""

    async def report_exit(self, code: int) -> None:
        """The agent exited by itself: close what waited on it, and say so in a row."""


class SetStatus(Protocol):
    """Changes the session's live status and tells the clients."""

    def __call__(self, status: str, detail: str = "", *, turn_ended: bool = False) -> None: ...


@dataclass(frozen=True)
class TurnNeeds:
    """What the turns read of their session, and callbacks for what they change there."""

    session_id: str
    root: Path
    """The session's folder: the files a prompt mentions are read from it."""
    store: Store
    emit: Callable[[EngineEvent], None]
    inbox: SessionInbox
    """Where the rows a turn writes go, in order with the agent's updates."""
    agent: Agent
    status: Callable[[], str]
    """The session's live status."""
    set_status: SetStatus
    titled: Callable[[str], None]
    """The session was titled after its first prompt (the stored record has the title)."""
    new_turn: Callable[[], None]
    """A turn begins: the permission answers that last one turn start again."""
    close_unanswered: Callable[[], Awaitable[None]]
    """The agent ended its turn: the questions still waiting are closed."""
    close_open: Callable[[str, str | None, str], Awaitable[None]]
    """Answer every pending question and close every open tool call (see
    `LiveSession.close_open`)."""
    checkpoint: Callable[[int, str], Awaitable[None]] | None = None
    """Checkpoint the session's files at the "start" or "end" of a turn (a worktree
    session's only); it says itself when it fails, and never fails the turn."""


class Turns:
    """The turns of one live session, one at a time."""

    def __init__(self, needs: TurnNeeds) -> None:
        self._needs = needs
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
        self._turn = 0
        """The number of the turn that runs or ran last."""

    @property
    def running(self) -> bool:
        """True from a prompt's arrival to its turn's end, checkpoints included."""
        return self._lock.locked()

    def will_stop(self, reason: str) -> None:
        """A stop comes while a turn runs: its end says `reason` (the session closed,
        Cockpit quit)."""
        self.stop_reason = reason

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
                    await self._needs.agent.stop(RUN_ENDED)
            finally:
                self._lock.release()

    async def _prompt(self, text: str, blocks: Sequence[ContentBlock]) -> str:
        needs = self._needs
        await needs.agent.claim()  # SessionBusy before the prompt is stored or sent
        payload = (
            {"blocks": [b.model_dump(by_alias=True, exclude_none=True) for b in blocks]}
            if blocks
            else None
        )
        text, replaced = replace_undecodable(text)  # never stored nor sent as it came
        self._turn, frames = await needs.store.begin_turn(needs.session_id, text, payload)
        needs.emit(FramesEvent(needs.session_id, tuple(frames)))
        if replaced:
            said = replaced_notice("The prompt", replaced)
            await needs.inbox.tell(note(needs.session_id, "notice", said))
        await self._name_after(text)
        await self._checkpoint("start")
        try:
            await needs.agent.start()  # the prompt is stored first: a failed start loses no word
        except StartError:
            await self._end_turn("error")
            return "error"
        return await self.run(text, blocks)

    async def run(self, text: str, blocks: Sequence[ContentBlock]) -> str:
        """Send a stored prompt to the started agent and see its turn to the end."""
        needs = self._needs
        conn, agent_session_id = needs.agent.conn, needs.agent.agent_session_id
        if conn is None or agent_session_id is None:  # it died between its start and now
            await needs.inbox.tell(
                note(needs.session_id, "error", "The agent stopped before the prompt went out.")
            )
            await self._end_turn("error")
            return "error"
        self.active = True
        self.idle.clear()
        self.cancelling = False
        self.stop_reason = None
        needs.new_turn()
        needs.set_status(Status.WORKING)
        stop_reason = "error"
        try:
            await needs.store.update_session(needs.session_id, status=Status.WORKING)
            mentioned = await self._mentions(text)
            response = await conn.prompt(
                session_id=agent_session_id,
                prompt=[text_block(text), *blocks, *mentioned],
            )
            stop_reason = str(response.stop_reason)
            await needs.inbox.settle()
            await needs.close_unanswered()
            usage = _usage_of(response)
            if usage:
                chunk = Chunk(needs.session_id, "usage_update", data={"lastTurn": usage})
                await needs.inbox.tell(chunk)
                needs.emit(SessionEvent(needs.session_id))
            if self.stop_reason is not None:
                await self._tell_stopped()
            elif stop_reason != "end_turn":  # a reply cut short says so, read back too
                words = _STOP_WORDS.get(stop_reason, f"The turn stopped: {stop_reason}.")
                await needs.inbox.tell(note(needs.session_id, "notice", words))
        except ConnectionError:
            stop_reason = "error"
            code = await self._exit_code()
            await needs.inbox.settle()
            if self.stop_reason is not None:
                await self._tell_stopped()
            else:
                await needs.agent.report_exit(code if code is not None else -1)
        except (RequestError, ValidationError) as error:
            stop_reason = "error"
            await needs.inbox.settle()
            said = (
                needs.agent.sign_in_needed(error)
                if asks_sign_in(error)
                else f"The agent failed the turn: {describe(error)}"
            )
            await needs.inbox.tell(note(needs.session_id, "error", said))
        except Exception as error:  # a store error, or a bug: the turn fails visibly
            stop_reason = "error"
            log.exception("the turn of session %s failed", needs.session_id)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(needs.inbox.settle(), 2)
            said = f"The turn failed inside Cockpit: {describe(error)}"
            await needs.inbox.tell(note(needs.session_id, "error", said))
        finally:
            self.active = False
            self.idle.set()
        await self._end_turn(stop_reason)
        return stop_reason

    async def _exit_code(self) -> int | None:
        """The agent's exit code once the connection to it broke. It is given a moment to
        exit by itself, and then stopped: an agent that closed its output and lives on
        held the turn, and `cockpit run`, forever."""
        needs = self._needs
        process = needs.agent.process
        if process is None:
            return None
        try:
            return await asyncio.wait_for(asyncio.shield(process.wait()), EXIT_GRACE)
        except TimeoutError:
            log.warning(
                "session %s: the connection broke and the agent lives; stopping it",
                needs.session_id,
            )
            await needs.inbox.tell(
                note(
                    needs.session_id,
                    "notice",
                    "The connection to the agent broke while it went on running: Cockpit "
                    "stopped it.",
                )
            )
            return await process.stop()

    async def _tell_stopped(self) -> None:
        await self._needs.inbox.tell(
            note(
                self._needs.session_id,
                "notice",
                f"The turn was stopped: {self.stop_reason}. The reply above is cut short.",
            )
        )

    async def _end_turn(self, stop_reason: str) -> None:
        """Seal the turn's last message and say the session is ready again; a store that
        fails here is reported, and the session still leaves the working state."""
        needs = self._needs
        try:
            kept = await needs.store.end_turn(needs.session_id)  # what a late replay's window held
            if kept:
                needs.emit(FramesEvent(needs.session_id, tuple(kept)))
        except Exception as error:
            self._end_not_saved(error)
        try:  # also when the seal waits for room: the status waits in line behind it
            if needs.status() not in (Status.EXITED, Status.ERROR):
                await needs.store.update_session(needs.session_id, status=Status.READY)
        except Exception as error:
            self._end_not_saved(error)
        await self._checkpoint("end")
        self.cancelling = False
        if needs.status() not in (Status.EXITED, Status.ERROR, Status.CLOSED):
            needs.set_status(Status.READY, stop_reason, turn_ended=True)

    def _end_not_saved(self, error: Exception) -> None:
        """Report a failure to store the end of the turn, unless the store keeps what
        failed and retries it (the disk is full): the engine said so once already."""
        needs = self._needs
        if error is needs.store.failure:
            return
        log.exception("could not end the turn of session %s", needs.session_id)
        problem = f"Could not save the end of the turn: {describe(error)}"
        needs.emit(ProblemEvent(needs.session_id, problem))

    async def _checkpoint(self, phase: str) -> None:
        """Checkpoint the files at `phase` of the turn, when the session keeps checkpoints;
        nothing that goes wrong there reaches the turn."""
        checkpoint = self._needs.checkpoint
        if checkpoint is None:
            return
        try:
            await checkpoint(self._turn, phase)
        except Exception:
            log.exception("the checkpoint of session %s failed", self._needs.session_id)

    async def _name_after(self, prompt: str) -> None:
        """A session is titled by its first prompt line until the user or the agent names it."""
        needs = self._needs
        record = await needs.store.get_session(needs.session_id)
        if record is not None and record.title is None:
            title = first_line(prompt)
            await needs.store.update_session(needs.session_id, title=title)
            needs.titled(title)
            needs.emit(SessionEvent(needs.session_id))

    async def cancel(self) -> bool:
        """Cancel the running turn as the spec says; the prompt still returns its stop reason."""
        needs = self._needs
        conn, agent_session_id = needs.agent.conn, needs.agent.agent_session_id
        if not self.active or conn is None or agent_session_id is None:
            return False
        self.cancelling = True
        needs.set_status(Status.CANCELLING)
        with contextlib.suppress(ConnectionError):
            await conn.cancel(session_id=agent_session_id)
        await needs.close_open("cancel", None, "cancelled")
        return True

    async def _mentions(self, text: str) -> list[ContentBlock]:
        """Files the prompt mentions with `@path`: embedded when the agent takes embedded
        context, else as links; a mention that cannot be sent becomes a notice row."""
        if not find_mentions(text):
            return []
        needs = self._needs
        prompts = needs.agent.capabilities.get("promptCapabilities") or {}
        embedded = bool(prompts.get("embeddedContext"))
        blocks, problems = await asyncio.to_thread(mention_blocks, text, needs.root, embedded)
        for problem in problems:
            await needs.inbox.tell(note(needs.session_id, "notice", problem))
        return list(blocks)
