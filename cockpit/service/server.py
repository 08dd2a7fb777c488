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
import traceback
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.connection import Connection

from cockpit import __version__, protocol
from cockpit.api import EngineEvent, FramesEvent, ProblemEvent, ServiceStopped, Status
from cockpit.bounds import REQUEST_BYTES, request_refusal
from cockpit.channel.peer import foreign_peer
from cockpit.channel.transport import OVERSIZED, LineTransport
from cockpit.engine.core import Engine
from cockpit.engine.wire import MAX_DEPTH, envelope_problem, nested_deeper
from cockpit.environment import Environment
from cockpit.service.calls import call_engine, snapshot
from cockpit.service.link import ClientLink

log = logging.getLogger(__name__)

TURNS = frozenset({Status.WORKING, Status.WAITING, Status.CANCELLING, Status.STARTING})
"""A session in one of these states is doing something the service must not cut short."""

STOPPED_BY_THE_USER = "stopped by `cockpit service stop`"
"""What the clients of a service the user stopped are told (they start none by themselves)."""

TELL_TIMEOUT = 2.0
"""Seconds the service waits, as it stops, for the news to leave in its turn among what it
sends a client; past them it goes ahead of the rest (a client that does not read at all
hears nothing, and sees its connection end)."""

ANSWER_TIMEOUT = 2.0
"""Seconds a stopped service waits for the answers to the stop requests to go out."""

MAX_CLIENTS = 64
"""Clients the service serves at once. Each costs it a connection, an outbox and the state
it attached with: 5,000 connections at once took it from 45 to 150 MB, never given back.
One more is refused in words it can print, and `status` and `stop` still work."""

OVER_THE_CAP = 16
"""Connections past MAX_CLIENTS read at once, for the `status` and `stop` a full service
must still answer (a hello there is refused). Past those, a connection is told why
(`protocol.FULL`) and closed unread: its `status` or `stop` tries again."""

OVER_THE_CAP_GRACE = 2.0
"""Seconds a connection past the cap has to ask before it is closed."""

HELLO_GRACE = 15.0
"""Seconds a connection under the cap may stay without saying hello (a `status` asks and
leaves at once): past them it is closed, so that connections that say nothing cannot hold
the places of the clients that would."""

BACKLOG = 1024
"""Connections the kernel holds for the service until it takes them (the system may allow
fewer): a burst of connections waits there rather than being refused, and the service
takes each at once, to serve it or to turn it away."""

READ_BUFFER = 1024 * 1024
"""What the service buffers of a client's socket at once (a longer line is read in pieces,
and past `REQUEST_BYTES` let go as it comes)."""


class Service:
    """The engine, served to the clients attached to it."""

    def __init__(
        self, engine: Engine, on_stop: Callable[[], None], max_clients: int = MAX_CLIENTS
    ) -> None:
        self.engine = engine
        self.max_clients = max_clients
        self._turned = 0
        """Connections that came over the cap since the service was last not full."""
        self.started = time.time()
        self._links: dict[str, ClientLink] = {}
        self._numbers = 0
        self._on_stop = on_stop
        self._server: asyncio.AbstractServer | None = None
        self._calls: set[asyncio.Future[Any]] = set()
        """The engine calls under way (one outlives the client that asked for it)."""
        self.last_activity = time.monotonic()
        """When a client last left or anything last ran: the idle clock starts from it."""
        self.last_left = self.last_activity
        """When the last client left (or the service started): see `unattended_for`."""
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
            self._accept, sock=listener, limit=READ_BUFFER, backlog=BACKLOG
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

    def _full(self) -> str | None:
        """Why one more client cannot be served (as many are attached as the service
        serves), or None."""
        served = sum(link.refused is None for link in self._links.values())
        if served < self.max_clients:
            return None
        return (
            f"the Cockpit service has {served} clients attached, as many as it serves at "
            "once: close one (a `cockpit` screen, a `cockpit events --follow`...) and try again"
        )

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one client until it goes away (the socket, or `--stdio`'s pipes). Past
        `max_clients`, a client gets answers to `status` and `stop` only, for a moment;
        past OVER_THE_CAP more, it is turned away unread."""
        full = self._full()
        over = sum(link.refused is not None for link in self._links.values())
        if full is not None and over >= OVER_THE_CAP:
            await self._turn_away(reader, writer, full)
            return
        self._numbers += 1
        transports: list[LineTransport] = []

        def connect(link: ClientLink) -> Connection:
            transport = LineTransport(
                reader,
                writer,
                max_line=REQUEST_BYTES,
                check=request_problem,
                on_problem=link.complain,
                gate=link.in_flight,
            )
            transports.append(transport)
            return Connection(self._handler(link), transport, listening=False)

        link = ClientLink(self._numbers, connect)
        link.refused = full
        self._links[link.id] = link
        if full is None:
            log.info("%s attached (%d attached)", link.id, len(self._links))
        else:
            self._note_over_the_cap()
        grace = HELLO_GRACE if full is None else OVER_THE_CAP_GRACE
        asyncio.get_running_loop().call_later(grace, self._let_go_unless_greeted, link)
        failure = None
        try:
            await link.conn.main_loop()
        except Exception as error:  # the SDK's loop failed: said below, in a few words
            failure = type(error).__name__
        finally:
            link.gone.set()
            self._links.pop(link.id, None)
            self.engine.show(None, viewer=link.id)
            await link.close()
            with contextlib.suppress(Exception):
                writer.close()
            self.last_activity = self.last_left = time.monotonic()
            failure = failure or (transports[0].failure if transports else None)
            if full is None or failure or link.problems:
                log.info("%s left (%d attached)%s", link.id, len(self._links), _how(link, failure))
            if full is None and self._turned and self._full() is None:
                log.info("room again: %d connection(s) came over the cap meanwhile", self._turned)
                self._turned = 0

    def _note_over_the_cap(self) -> None:
        """Count a connection over the cap; say so when the service has just become full
        (one line per time it is full, not one per connection)."""
        if not self._turned:
            log.warning(
                "%d clients attached, as many as it serves: more are refused", self.max_clients
            )
        self._turned += 1

    def _let_go_unless_greeted(self, link: ClientLink) -> None:
        """End a connection that has not said hello in its time (one over the cap never is
        served), unless it waits for the answer to its stop."""
        if link.id in self._links and not link.greeted and link.id not in self._stop_answers:
            task = asyncio.ensure_future(link.close())
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)

    async def _turn_away(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, why: str
    ) -> None:
        """Tell a connection why it is not served (FULL) and close it, reading nothing."""
        self._note_over_the_cap()
        conn = Connection(_no_requests, LineTransport(reader, writer), listening=False)
        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            await asyncio.wait_for(conn.send_notification(protocol.FULL, {"message": why}), 1.0)
        await conn.close()

    def _handler(self, link: ClientLink) -> Callable[[str, Any, bool], Awaitable[Any]]:
        async def handle(method: str, params: Any, is_notification: bool) -> Any:
            try:
                return await self._handle(link, method, params if isinstance(params, dict) else {})
            except RequestError:
                raise
            except Exception as error:  # one line in the log, once per client; no traceback
                link.complain(f"a request the service failed on ({where(error)})")
                data = protocol.error_data(error)
                raise RequestError(
                    protocol.ERROR_CODE, data["message"] or data["type"], data
                ) from None
            finally:
                link.in_flight.release()

        return handle

    async def _handle(self, link: ClientLink, method: str, params: dict[str, Any]) -> Any:
        """Answer one request or notification of `link`'s."""
        if method == OVERSIZED:
            size = params.get("bytes")
            message = request_refusal(size if isinstance(size, int) else 0, "it was not read")
            raise RequestError(
                protocol.ERROR_CODE, message, {"type": "ValueError", "message": message}
            )
        if method == protocol.STATUS:  # these two work whatever the client's version
            return self.status()
        if method == protocol.STOP:
            return {"lost": list(await self._stop(link, params))}
        if link.refused is not None:  # over the cap: nothing else
            raise RequestError(
                protocol.ERROR_CODE, link.refused, {"type": "ServiceFull", "message": link.refused}
            )
        if self.stopping and method in (protocol.HELLO, protocol.CALL):
            raise RequestError(
                protocol.ERROR_CODE,
                "the Cockpit service is stopping",
                {"type": "ServiceStopping"},
            )
        if method == protocol.HELLO:
            return await self._hello(link, params)
        if not link.greeted:
            raise RequestError.invalid_request({"details": "say cockpit/hello first"})
        if method == protocol.CALL:
            return await self._call(link, params)
        if method == protocol.WATCH:
            sessions = params.get("sessions")
            link.watched = (
                {s for s in sessions if isinstance(s, str)} if isinstance(sessions, list) else set()
            )
            return None
        if method == protocol.SHOW:
            session = params.get("session")
            self.engine.show(session if isinstance(session, str) else None, viewer=link.id)
            return None
        raise RequestError.method_not_found(method)

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
        try:  # a read no one waits for any more is dropped with its request
            result = await (work if params.get("name") in protocol.READS else asyncio.shield(work))
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
        await asyncio.gather(*(tell_stopped(link, notice) for link in links))

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
        links = [link for link in self._links.values() if link.greeted]
        if links:
            encoded = {"event": protocol.encode(event)}
            for link in links:
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

    def unattended_for(self) -> float:
        """Seconds since the last client left, whatever runs; 0 while a client is attached."""
        if self._links:
            return 0.0
        return time.monotonic() - self.last_left

    def status(self) -> dict[str, Any]:
        """What `cockpit service status` shows: the service, and each live session. From
        memory alone, so that it is answered at once whatever the other clients keep the
        store reading."""
        turns, questions = self.busy()
        live = [
            {
                "id": session,
                "title": self.engine.live_title(session),
                "status": self.engine.status(session),
                "questions": self.engine.pending_count(session),
                "unwritten": list(self.unsaved(session)),
            }
            for session in self.engine.live_sessions()
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
            "unwritten": list(self.unsaved()),
            "saving_problem": self.engine.saving_problem,
        }

    def unsaved(self, session: str | None = None) -> tuple[int, int]:
        """What the store cannot write now (of every session, or of one): held in memory
        while writes fail. A reply that streams is held between two flushes too, and the
        next flush, or the last one as the service stops, writes it: that is no loss."""
        if self.engine.saving_problem is None:
            return 0, 0
        return self.engine.unwritten(session)

    async def close(self) -> None:
        """Stop serving: every client is let go (the engine is closed by the caller), but
        those waiting for the answer to their stop request (`answer_stop` lets them go)."""
        self.stopping = True
        if self._server is not None:
            self._server.close()
        for link in list(self._links.values()):
            if link.id not in self._stop_answers:
                await link.close()


def request_problem(message: Mapping[str, Any]) -> str | None:
    """What makes a client's message unusable, in a few words (none of what it holds), or
    None."""
    problem = envelope_problem(message)
    if problem is None and nested_deeper(message):
        problem = f"a message nested deeper than {MAX_DEPTH} levels"
    return problem


def where(error: BaseException) -> str:
    """An error's kind and the line that raised it, for a log line: no message (it may
    quote what the client sent)."""
    frames = traceback.extract_tb(error.__traceback__)
    place = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return type(error).__name__ + place


def _how(link: ClientLink, failure: str | None) -> str:
    """How a client's connection went, for the line that says it left."""
    said = []
    if link.refused is not None:
        said.append("it came over the cap")
    if failure:
        said.append(f"its connection failed ({failure})")
    if link.problems:
        said.append(f"{link.problems:,} line(s) of it were no usable message")
    return f": {'; '.join(said)}" if said else ""


async def _no_requests(method: str, params: Any, is_notification: bool) -> None:
    """A connection turned away takes nothing."""


async def tell_stopped(link: ClientLink, notice: dict[str, Any]) -> None:
    """Send `link` the notice in its turn, after what its outbox holds; when that does
    not go out in time (a stream keeps filling it, a busy machine keeps it from being
    sent) or the outbox dropped it, straight to the socket: the client must not take
    the stop for a crash."""
    if link.post(protocol.STOPPED, notice, 200):
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(link.drained(), TELL_TIMEOUT)
            return
    with contextlib.suppress(Exception):
        await asyncio.wait_for(link.conn.send_notification(protocol.STOPPED, notice), 1.0)
