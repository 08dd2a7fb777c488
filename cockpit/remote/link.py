"""The client's link to the service: one connection at a time, attached again after each
cut.

Attaching says hello and waits for the service's state, which it sends in order with its
events; the link hands both on (`on_state`, `on_event`) and says when it is attached
(`on_attached`: the client then says again what it watches). When the connection drops
(the service restarted, an SSH link blinked) the link attaches again by itself and tells
the listeners to read again (`ResyncEvent`); a read the cut cut short is sent again on the
next connection (`protocol.READS`). What it says of itself (cut, attached again, the
service gone) goes out through `emit`. Requests and notifications go out through the
client's `Sending`, so they keep the order they were made in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from acp import RequestError
from acp.connection import Connection

from cockpit import __version__, protocol
from cockpit.api import EngineEvent, LinkEvent, ProblemEvent, ResyncEvent, ServiceStopped
from cockpit.bounds import REQUEST_BYTES
from cockpit.channel.transport import LineTransport
from cockpit.environment import current
from cockpit.remote.launch import Streams
from cockpit.remote.sending import Sending, before_the_end

log = logging.getLogger(__name__)

Connector = Callable[[], Awaitable[Streams]]

HELLO_TIMEOUT = 30.0
"""Seconds the service may take to answer a client that attaches (a hung one never does)."""

RECONNECT_DELAYS = (0.05, 0.1, 0.2, 0.5, 1.0)
"""Waits between attempts to attach again after a cut (the last repeats)."""


ATTACH_WAIT = 30.0
"""Seconds a request waits for this client to attach again after a cut, before it fails."""

LINK_CUT = "the Cockpit service is out of reach; attaching again"
"""What the status line says from a cut until this client is attached again."""

SUCCESSOR_WAIT = 10.0
"""Seconds a client that finds its service stopping waits for the next one."""

GONE_AFTER = 2.0
"""Seconds after a cut, attaching again failing all along, from which the service counts as
gone: a request fails at once rather than wait ATTACH_WAIT (a screen waiting on it would
take no key meanwhile); one made earlier waits (a service restarting comes back sooner)."""

RETRY_PAUSE = 0.02
"""Seconds before a read cut short is sent again while the cut is not seen yet."""


class ProtocolMismatch(ConnectionError):
    """The service speaks another version of the protocol."""


class ServiceFull(ConnectionError):
    """The service serves as many clients as it may: this one was refused (the message
    says how many, and what to do)."""


class ServiceLeft(ConnectionError):
    """The service went away as this client said hello (it was stopping: idle, or asked
    to): the next attempt reaches the next service."""


class ServiceLink:
    """A client's connection to the service, and attaching again after a cut."""

    def __init__(
        self,
        connector: Connector,
        sending: Sending,
        *,
        on_event: Callable[[EngineEvent], None],
        on_state: Callable[[dict[str, Any]], None],
        on_attached: Callable[[], None],
        emit: Callable[[EngineEvent], None],
        name: str = "cockpit",
        hello_timeout: float | None = None,
        send_environment: bool = True,
    ) -> None:
        self._connector = connector
        self._sending = sending
        self._on_event = on_event
        """Hears each event of the service, at once, in the order they came."""
        self._on_state = on_state
        """Hears the service's whole state (protocol.STATE), after each hello."""
        self._on_attached = on_attached
        """Called each time this client is attached (again), before anything else is sent."""
        self._emit = emit
        """Tells the listeners what the link says of itself (LinkEvent, ResyncEvent...)."""
        self._name = name
        self._send_environment = send_environment
        """Whether the hello carries this process's environment: the agents this client
        starts run with it. Not over a link to another machine, whose bridge puts in its
        own (this machine's variables, secrets included, must not cross)."""
        self._hello_timeout = HELLO_TIMEOUT if hello_timeout is None else hello_timeout
        """Seconds the service may take to answer an attach (through a bridge, the first
        one includes the bridge's own start: ssh connecting, a passphrase typed)."""
        self._conn: Connection | None = None
        self._conn_ended = asyncio.Event()
        """Set once `_conn` has ended (see `before_the_end`)."""
        self._greeted: Connection | None = None
        """The connection whose hello was answered: only its end is a cut to attach again
        after (one that failed before its hello is its attempt's to report)."""
        self._receiver: asyncio.Task[None] | None = None
        self._attached = asyncio.Event()
        self._settled = asyncio.Event()
        """Set once this client is attached, or has found the service gone (after a cut,
        when attaching again failed a few times): a request waits no longer than that."""
        self._state_came = asyncio.Event()
        """Set when the service's state (protocol.STATE) was taken, after each hello."""
        self._closing = False
        self._writer: asyncio.StreamWriter | None = None
        """The connection's socket (closed when this client lets go of it)."""
        self._link_problem: str | None = None
        self._stopped: ServiceStopped | None = None
        """Why the service stopped for good, when it said so: no attaching again by itself."""
        self._link_words: str | None = None
        """What the link's own command said since this client last attached (ssh's
        "Connection refused"): said in place of LINK_CUT while the link is cut."""
        self._turned_away: str | None = None
        """Why the service turned the last connection away unread (it was full), if it did."""
        self.service: dict[str, Any] = {}
        """What the service said of itself when this client attached (pid, version)."""
        self.links_lost = 0
        """Connections lost while attached; each is told by one ResyncEvent once attached
        again (a cut while attaching again only costs a try)."""
        self._reattaching: asyncio.Future[None] | None = None
        """The attaching again after the last cut, while it goes on."""

    @property
    def attached(self) -> bool:
        """Attached now (not cut off, nor attaching again)."""
        return self._attached.is_set()

    @property
    def closing(self) -> bool:
        """This client let go of the service (`close`): no attaching again."""
        return self._closing

    @property
    def problem(self) -> str | None:
        """What is wrong with the link, in words (None: nothing)."""
        if self._link_problem == LINK_CUT and self._link_words:
            return self._link_words
        return self._link_problem

    @property
    def reattaching(self) -> bool:
        """Trying to attach again by itself after a cut: False once attached again or given
        up (the service stopped for good, or speaks another protocol), and after a cut
        that does not call for it (the user stopped the service)."""
        return self._reattaching is not None and not self._reattaching.done()

    @property
    def stopped(self) -> ServiceStopped | None:
        """Why the service stopped for good, when it said so."""
        return self._stopped

    async def open(self) -> None:
        """Attach for the first time (ProtocolMismatch, ConnectionError). A service that
        stops as this client comes is waited out: the connector starts the next."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SUCCESSOR_WAIT
        while True:
            try:
                await self._attach()
            except ServiceLeft:
                if loop.time() >= deadline:
                    raise
                await asyncio.sleep(RECONNECT_DELAYS[2])
                continue
            return

    async def _attach(self) -> None:
        reader, writer = await self._connector()
        self._let_go()
        self._writer = writer
        self._turned_away = None
        transport = LineTransport(reader, writer, max_send=REQUEST_BYTES)
        conn = Connection(self._on_message, transport, listening=False)
        self._conn = conn
        self._conn_ended = ended = asyncio.Event()
        self._receiver = asyncio.ensure_future(self._receive(conn, ended))
        try:
            hello = await asyncio.wait_for(self._greet(conn, ended), self._hello_timeout)
            if ended.is_set():  # cut after the answer, before it was greeted: nothing else
                raise ConnectionError("the connection ended as it was attached")  # retries
        except TimeoutError:  # a service that hangs (stopped, or its loop blocked)
            self._conn = None  # no longer the connection to attach again after
            await conn.close()
            self._let_go()
            raise ConnectionError(
                f"the Cockpit service did not answer in {self._hello_timeout:g} s"
            ) from None
        except ConnectionError as error:  # it closed the connection: it is going away
            self._conn = None
            await conn.close()
            self._let_go()
            if self._turned_away is not None:  # or it is full
                raise ServiceFull(self._turned_away) from error
            raise ServiceLeft(f"the Cockpit service went away: {error}") from error
        except RequestError as error:
            await conn.close()
            self._let_go()
            data = error.data if isinstance(error.data, dict) else {}
            if data.get("type") == "ServiceStopping":
                raise ServiceLeft("the Cockpit service is stopping") from error
            if data.get("type") == "ServiceFull":
                raise ServiceFull(str(data.get("message") or error)) from error
            if data.get("type") == "ProtocolMismatch":
                raise ProtocolMismatch(
                    f"the Cockpit service speaks protocol {data.get('protocol')}, this "
                    f"Cockpit ({__version__}) speaks {protocol.PROTOCOL_VERSION}: restart the "
                    "service (`cockpit service restart`) when nothing runs in it"
                ) from error
            raise ConnectionError(f"the Cockpit service refused this client: {error}") from error
        self._greeted = conn
        self._link_words = None
        self.service = {key: hello.get(key) for key in ("pid", "version", "client")}
        self._attached.set()
        self._settled.set()
        self._on_attached()

    def _hello(self) -> dict[str, Any]:
        hello: dict[str, Any] = {
            "protocol": protocol.PROTOCOL_VERSION,
            "client": self._name,
            "pid": os.getpid(),
        }
        if self._send_environment:
            hello["environment"] = current().to_wire()
        return hello

    async def _greet(self, conn: Connection, ended: asyncio.Event) -> dict[str, Any]:
        """Say hello; its answer once the state it queued with the events came too
        (ConnectionError when the connection ends first)."""
        self._state_came.clear()
        hello: dict[str, Any] = await before_the_end(
            ended, conn.send_request(protocol.HELLO, self._hello())
        )
        await before_the_end(ended, self._state_came.wait())
        return hello

    def _let_go(self) -> None:
        """Close the socket of the last connection (the service then sees this client
        leave; a bridge command sees its stdin end)."""
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None

    @property
    def _lost(self) -> bool:
        """Cut off, and the service still gone after a few attempts to attach again."""
        return self._settled.is_set() and not self._attached.is_set()

    async def _receive(self, conn: Connection, ended: asyncio.Event) -> None:
        """Read until the connection ends; then attach again, unless closing (or not
        attached yet: `_attach` then sees `ended` and tries again itself)."""
        try:
            await conn.main_loop()
        except (ConnectionError, OSError) as error:  # a cut: attaching again says so
            log.info("the connection to the service ended: %s", error)
        except Exception:
            log.exception("the connection to the service failed")
        # The SDK hands each notification to a task of its own: those read before the end
        # run first (the service's last word, that it stopped for good, may be one).
        await asyncio.sleep(0)
        ended.set()
        if not self._closing and conn is self._greeted:
            self._greeted = None
            self.links_lost += 1
            self._attached.clear()
            if self._stopped is not None:  # the user stopped it: starting one would undo that
                self._settled.set()  # what waits fails now, saying why
                self._set_link_problem(self._stopped.reason)
            else:
                self._settled.clear()
                self._set_link_problem(LINK_CUT)
                self._reattach_soon()
        with contextlib.suppress(Exception):
            await conn.close()  # its sending task ends with it (left pending, it leaks)

    def _reattach_soon(self) -> None:
        self._reattaching = asyncio.ensure_future(self._reattach())
        self._sending.keep(self._reattaching)

    async def _reattach(self) -> None:
        loop = asyncio.get_running_loop()
        cut = loop.time()
        for attempt in range(1_000_000):
            if self._closing:
                return
            await asyncio.sleep(RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)])
            if self._stopped is not None:  # its word that it stopped came after the cut
                self._settled.set()
                self._set_link_problem(self._stopped.reason)
                return
            try:
                await self._attach()
            except ProtocolMismatch as error:
                self._settled.set()
                self._set_link_problem("the Cockpit service that runs now speaks another protocol")
                self._emit(ProblemEvent(None, str(error)))
                return
            except (ConnectionError, OSError) as error:
                if attempt == 2:
                    self._emit(ProblemEvent(None, f"Lost the Cockpit service: {error}; retrying"))
                if loop.time() - cut >= GONE_AFTER:
                    self._settled.set()  # what waits fails now: the screen goes on
                continue
            self._set_link_problem(None)
            self._emit(ResyncEvent("attached again to the Cockpit service"))
            return

    async def reattach(self) -> None:
        """Attach again to a service that stopped for good: the connector starts one."""
        if self._stopped is None or self._attached.is_set() or self._closing:
            return
        await self._attach()
        self._stopped = None
        self._set_link_problem(None)
        self._emit(ResyncEvent("attached to the Cockpit service started again"))

    def _set_link_problem(self, problem: str | None) -> None:
        if problem != self._link_problem:
            self._link_problem = problem
            self._emit(LinkEvent(self.problem))

    def said(self, words: str) -> None:
        """The link's own command said `words` (one clean line): while the link is cut, they
        say why better than LINK_CUT does."""
        self._link_words = words
        if self._link_problem == LINK_CUT:
            self._emit(LinkEvent(self.problem))

    async def _on_message(self, method: str, params: Any, is_notification: bool) -> Any:
        """The service's notifications. Handled at once, in the order they came (nothing
        is awaited before an event is applied and told)."""
        if method == protocol.EVENT and isinstance(params, dict):
            self._on_event(protocol.decode(params.get("event")))
        elif method == protocol.STATE and isinstance(params, dict):
            self._on_state(params)
            self._state_came.set()
        elif method == protocol.RESYNC:
            self._reread_state()
        elif method == protocol.FULL and isinstance(params, dict):
            self._turned_away = str(params.get("message") or "the Cockpit service is full")
        elif method == protocol.STOPPED and isinstance(params, dict):
            stopped = protocol.decode(params.get("stopped"))
            if isinstance(stopped, ServiceStopped):
                self._stopped = stopped
        return None

    def _reread_state(self) -> None:
        """Events were dropped (this client could not keep up): take the state afresh, then
        tell the listeners to read again."""

        async def reread() -> None:
            try:
                self._state_came.clear()
                await self._request(protocol.HELLO, self._hello())
                with contextlib.suppress(TimeoutError):  # cut meanwhile: attaching again tells
                    await asyncio.wait_for(self._state_came.wait(), self._hello_timeout)
            finally:
                self._emit(ResyncEvent("this client fell behind the Cockpit service"))

        self._sending.background(reread())

    async def _request(
        self, method: str, params: dict[str, Any], deadline: float | None = None
    ) -> Any:
        """Send a request once attached (ConnectionError when this client is not attached
        again by `deadline`, ATTACH_WAIT from now by default: a screen must not wait on
        a service that is gone)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + ATTACH_WAIT if deadline is None else deadline
        in_order = self._sending.in_turn()  # sent in its turn already
        while True:
            if not self._attached.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._settled.wait(), max(until - loop.time(), 0.0))
                if not self._attached.is_set():
                    if self._stopped is not None:
                        raise ConnectionError(f"the Cockpit service was {self._stopped.reason}")
                    raise ConnectionError("the Cockpit service cannot be reached")
            if self._closing:
                raise ConnectionError("this client has detached from the Cockpit service")
            sending = self._sending.last
            if in_order or sending is None or sending.done():
                break
            # What was sent before goes first. Then look again: attached again meanwhile,
            # the new connection has its own `watch` to send first (a page read that went
            # before it missed the frames in between), and none before its hello.
            with contextlib.suppress(Exception):
                await asyncio.shield(sending)
        conn, ended = self._conn, self._conn_ended
        assert conn is not None
        return await before_the_end(ended, conn.send_request(method, params))

    async def call(self, name: str, **args: Any) -> Any:
        """Run one of the engine's methods in the service; its result, or its error."""
        params = {
            "name": name,
            "args": {key: protocol.encode(value) for key, value in args.items()},
        }
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ATTACH_WAIT
        while True:
            conn = self._conn
            try:
                answer = await self._request(protocol.CALL, params, deadline)
            except RequestError as error:
                raise protocol.raised(error.data) from None
            except (ConnectionError, OSError):
                if (
                    name not in protocol.READS
                    or self._closing
                    or self._lost
                    or self._stopped is not None
                    or loop.time() >= deadline
                ):
                    raise
                if conn is self._conn and self._attached.is_set():
                    await asyncio.sleep(RETRY_PAUSE)  # the cut is not seen yet
                continue
            return protocol.decode((answer or {}).get("result"))

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification without waiting for it (dropped while detached: attaching
        again sends what it must)."""
        conn, ended = self._conn, self._conn_ended
        if conn is None or not self._attached.is_set():
            return

        async def send() -> None:
            with contextlib.suppress(ConnectionError, OSError):
                await before_the_end(ended, conn.send_notification(method, params))

        self._sending.in_order(send)

    async def close(self) -> None:
        """Let go of the service for good: what is still to send is dropped."""
        self._closing = True
        self._sending.cancel()
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()
        self._let_go()
        if self._receiver is not None:
            self._receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._receiver
