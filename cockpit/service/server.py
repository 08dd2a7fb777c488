"""The service's socket: it accepts clients of the same user only, answers their requests
with the engine, and sends each the engine's events it needs.

A client gets every event but frames, and the frames of the sessions it watches (the ones
it shows): a session in the background costs it nothing per chunk, and the rail still
learns of its status, questions and unread marks. Requests run as the SDK's connection
runs them, one task each; the engine is the one that keeps them in order per session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.connection import Connection

from cockpit import __version__, protocol
from cockpit.api import EngineEvent, FramesEvent, ProblemEvent, ServiceStopped, Status
from cockpit.engine.core import Engine
from cockpit.environment import Environment
from cockpit.remote.launch import STREAM_LIMIT
from cockpit.remote.peer import foreign_peer
from cockpit.service.calls import call_engine, snapshot
from cockpit.service.link import ClientLink

log = logging.getLogger(__name__)

TURNS = frozenset({Status.WORKING, Status.WAITING, Status.CANCELLING, Status.STARTING})
"""A session in one of these states is doing something the service must not cut short."""

STOPPED_BY_THE_USER = "stopped by `cockpit service stop`"
"""What the clients of a service the user stopped are told (they start none by themselves)."""

TELL_TIMEOUT = 1.0
"""Seconds the service waits, as it stops, for its clients to take the news (one that does
not read hears nothing, and sees its connection end)."""

ANSWER_TIMEOUT = 2.0
"""Seconds a stopped service waits for the answers to the stop requests to go out."""


class Service:
    """The engine, served to the clients attached to it."""

    def __init__(self, engine: Engine, on_stop: Callable[[], None]) -> None:
        self.engine = engine
        self.started = time.time()
        self._links: dict[str, ClientLink] = {}
        self._numbers = 0
        self._on_stop = on_stop
        self._server: asyncio.AbstractServer | None = None
        self._calls: set[asyncio.Future[Any]] = set()
        """The engine calls under way (one outlives the client that asked for it)."""
        self.last_activity = time.monotonic()
        """When a client last left or anything last ran: the idle clock starts from it."""
        self.stopping = False
        """True once the service lets its clients go: a client that says hello then is told
        so (and starts the next service), not served by an engine that is closing."""
        self.stopped: ServiceStopped | None = None
        """Why the service stops for good, once it knows (the user stopped it, its store is
        gone): its clients are told so and start none by themselves."""
        self._stop_answers: dict[str, asyncio.Future[tuple[int, int]]] = {}
        """The stop requests waiting for the service to have stopped, by client: each is
        answered with what could not be saved."""
        engine.environment_required = True  # its own environment is not the user's
        engine.subscribe(self._on_event)

    # -- clients ------------------------------------------------------------------------------

    async def listen(self, path: Path) -> None:
        """Serve on the Unix socket `path` (owner-only; a stale one is replaced: the
        service's lock says no other service owns it)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        umask = os.umask(0o177)  # owner-only from its first instant, not after a chmod
        try:
            listener.bind(str(path))
        except BaseException:
            listener.close()
            raise
        finally:
            os.umask(umask)  # the agents, and the files they make, keep the user's
        self._server = await asyncio.start_unix_server(
            self._accept, sock=listener, limit=STREAM_LIMIT
        )

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        foreign = foreign_peer(writer.get_extra_info("socket"))
        if foreign is not None:
            log.warning(
                "refused a client: it is %s (the service is uid %d's)",
                foreign,
                os.getuid(),
            )
            writer.close()
            return
        await self.serve(reader, writer)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one client until it goes away (the socket, or `--stdio`'s pipes)."""
        self._numbers += 1
        link = ClientLink(
            self._numbers,
            lambda link: Connection(self._handler(link), writer, reader, listening=False),
        )
        self._links[link.id] = link
        log.info("%s attached (%d attached)", link.id, len(self._links))
        try:
            await link.conn.main_loop()
        except Exception:
            log.exception("%s: its connection failed", link.id)
        finally:
            link.gone.set()
            self._links.pop(link.id, None)
            self.engine.show(None, viewer=link.id)
            await link.close()
            with contextlib.suppress(Exception):
                writer.close()
            self.last_activity = time.monotonic()
            log.info("%s left (%d attached)", link.id, len(self._links))

    def _handler(self, link: ClientLink) -> Callable[[str, Any, bool], Awaitable[Any]]:
        async def handle(method: str, params: Any, is_notification: bool) -> Any:
            params = params if isinstance(params, dict) else {}
            if self.stopping and method in (protocol.HELLO, protocol.CALL):
                raise RequestError(
                    protocol.ERROR_CODE,
                    "the Cockpit service is stopping",
                    {"type": "ServiceStopping"},
                )
            if method == protocol.HELLO:
                return await self._hello(link, params)
            if method == protocol.STATUS:  # these two work whatever the client's version
                return await self.status()
            if method == protocol.STOP:
                return {"lost": list(await self._stop(link, params))}
            if not link.greeted:
                raise RequestError.invalid_request({"details": "say cockpit/hello first"})
            if method == protocol.CALL:
                return await self._call(link, params)
            if method == protocol.WATCH:
                sessions = params.get("sessions")
                link.watched = (
                    {s for s in sessions if isinstance(s, str)}
                    if isinstance(sessions, list)
                    else set()
                )
                return None
            if method == protocol.SHOW:
                session = params.get("session")
                self.engine.show(session if isinstance(session, str) else None, viewer=link.id)
                return None
            raise RequestError.method_not_found(method)

        return handle

    async def _hello(self, link: ClientLink, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocol")
        if asked != protocol.PROTOCOL_VERSION:
            raise RequestError(
                protocol.ERROR_CODE,
                f"this service speaks protocol {protocol.PROTOCOL_VERSION} (Cockpit "
                f"{__version__}), the client {asked}",
                {"type": "ProtocolMismatch", "protocol": protocol.PROTOCOL_VERSION},
            )
        if link.environment is None:  # once per connection: a bridge's own stays
            link.environment = Environment.from_wire(params.get("environment"))
        link.hello = {key: value for key, value in params.items() if key != "environment"}
        link.greeted = True
        state = await snapshot(self.engine)
        size = 1000 + 500 * len(state["specs"])  # about: a session weighs its spec and status
        link.post(protocol.STATE, state, size)  # nothing awaited since it was made: in order
        return {
            "protocol": protocol.PROTOCOL_VERSION,
            "version": __version__,
            "pid": os.getpid(),
            "client": link.id,
        }

    async def _call(self, link: ClientLink, params: dict[str, Any]) -> Any:
        self.last_activity = time.monotonic()
        # A client that goes away cancels its requests, not the work they started: the
        # turn of a `prompt` whose client was killed runs on and ends (else it stayed
        # "working" for good), as the agents outlive their clients.
        work = asyncio.ensure_future(call_engine(self.engine, params, link.environment))
        self._calls.add(work)
        work.add_done_callback(self._call_done)
        try:
            result = await asyncio.shield(work)
            await link.drained()
            return {"result": result}
        except RequestError:
            raise
        except Exception as error:
            data = protocol.error_data(error)
            raise RequestError(
                protocol.ERROR_CODE, data["message"] or data["type"], data
            ) from error

    def _call_done(self, work: asyncio.Future[Any]) -> None:
        """Forget a call once done; log its failure when its client has gone."""
        self._calls.discard(work)
        if not work.cancelled() and work.exception() is not None:
            log.debug("a call ended in an error", exc_info=work.exception())

    async def _stop(self, link: ClientLink, params: dict[str, Any]) -> tuple[int, int]:
        """Stop the service; once its agents have stopped and its store is closed, what it
        could not save. Unless it is stopped to be restarted, its clients are told it
        stopped for good."""
        if not params.get("restart") and self.stopped is None:
            self.stopped = ServiceStopped(STOPPED_BY_THE_USER)
        answer = self._stop_answers.get(link.id)
        if answer is None:
            answer = self._stop_answers[link.id] = asyncio.get_running_loop().create_future()
        self._on_stop()
        return await asyncio.shield(answer)

    def store_gone(self, path: Path, lost: tuple[int, int]) -> None:
        """The store was removed or replaced under the service: every client hears what was
        not kept, and that the service stops for good (the caller stops it)."""
        messages, characters = lost
        reason = (
            f"the store {path} was removed or replaced while the Cockpit service ran: "
            f"{messages} message(s) ({characters:,} characters) written since could not be "
            "kept; the service stopped"
        )
        self.stopped = ServiceStopped(reason, lost, store_gone=True)
        log.error("%s", reason)
        self._on_event(ProblemEvent(None, reason[:1].upper() + reason[1:] + "."))

    async def tell_stopping(self) -> None:
        """Tell every client the service stops for good, when it does, and give them a moment
        to take it before they are let go."""
        if self.stopped is None:
            return  # restarted, killed or idle: the clients attach again, as after any cut
        notice = {"stopped": protocol.encode(self.stopped)}
        links = [link for link in self._links.values() if link.greeted]
        for link in links:
            link.post(protocol.STOPPED, notice, 200)
        await asyncio.gather(
            *(asyncio.wait_for(link.drained(), TELL_TIMEOUT) for link in links),
            return_exceptions=True,
        )

    async def answer_stop(self, lost: tuple[int, int]) -> None:
        """Answer the stop requests with what could not be saved, and let their clients go
        once the answers are out."""
        for answer in self._stop_answers.values():
            if not answer.done():
                answer.set_result(lost)
        waiting = [self._links[client] for client in self._stop_answers if client in self._links]
        for link in waiting:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(link.gone.wait(), ANSWER_TIMEOUT)
            await link.close()

    # -- events -------------------------------------------------------------------------------

    def _on_event(self, event: EngineEvent) -> None:
        if isinstance(event, FramesEvent):  # only to the clients that show the session
            for link in list(self._links.values()):
                if event.session in link.watched:
                    link.post_frames(event)  # encoded as they are sent (see ClientLink)
            return
        if self._links:
            encoded = {"event": protocol.encode(event)}
            for link in list(self._links.values()):
                link.post(protocol.EVENT, encoded, 200)

    # -- the service as a whole ---------------------------------------------------------------

    def busy(self) -> tuple[int, int]:
        """How many turns run and how many questions wait, across every session."""
        turns = sum(self.engine.status(session) in TURNS for session in self.engine.live_sessions())
        return turns, self.engine.pending_count()

    def idle_for(self) -> float:
        """Seconds since a client last left or something last ran; 0 while a client is
        attached or anything runs or waits."""
        if self._links or any(self.busy()):
            self.last_activity = time.monotonic()
            return 0.0
        return time.monotonic() - self.last_activity

    async def status(self) -> dict[str, Any]:
        """What `cockpit service status` shows: the service, and each live session."""
        turns, questions = self.busy()
        titles = {record.id: record.title for record in await self.engine.sessions()}
        live = [
            {
                "id": session,
                "title": titles.get(session) or "",
                "status": self.engine.status(session),
                "questions": self.engine.pending_count(session),
                "unwritten": list(self.engine.unwritten(session)),
            }
            for session in self.engine.live_sessions()
            if session in titles
        ]
        return {
            "pid": os.getpid(),
            "version": __version__,
            "protocol": protocol.PROTOCOL_VERSION,
            "started": self.started,
            "clients": sum(link.greeted for link in self._links.values()),
            "sessions": live,
            "turns": turns,
            "questions": questions,
            "unwritten": list(self.engine.unwritten()),
            "saving_problem": self.engine.saving_problem,
        }

    async def close(self) -> None:
        """Stop serving: every client is let go (the engine is closed by the caller), but
        those waiting for the answer to their stop request (`answer_stop` lets them go)."""
        self.stopping = True
        if self._server is not None:
            self._server.close()
        for link in list(self._links.values()):
            if link.id not in self._stop_answers:
                await link.close()
