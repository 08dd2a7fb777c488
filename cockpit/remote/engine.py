"""`RemoteEngine`: the contract (`cockpit.api.EngineAPI`) over the service's socket.

Requests go to the service as `cockpit/call`; the questions the contract answers at once
(a session's status, what waits, what is unread) are answered from a mirror of the service's
state, taken when the client attaches and kept current by the events that follow. When the
connection drops (the service restarted, an SSH link blinked) the client attaches again,
takes the state afresh and tells its listeners to read again (`ResyncEvent`): a read
replaces what they hold, and the frames after it are guarded by length, so nothing is lost
or doubled across the cut. A read the cut cut short is sent again on the next connection
(`protocol.READS`): the screen gets its page, not an error.

The mirror is `cockpit.remote.mirror`, the sending in order `cockpit.remote.sending`; this
module holds the connection, attaching again, and the contract's methods, each request a
`cockpit/call` of its own name (`cockpit.api.METHODS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.connection import Connection

from cockpit import __version__, protocol
from cockpit.api import (
    AgentInfo,
    AgentSpec,
    EngineAPI,
    EngineEvent,
    FileMatch,
    LinkEvent,
    Listener,
    ModelCalls,
    Page,
    PermissionRequest,
    ProblemEvent,
    ResyncEvent,
    Row,
    ServiceStopped,
    SessionRecord,
    Status,
)
from cockpit.bounds import REQUEST_BYTES
from cockpit.channel.transport import LineTransport
from cockpit.environment import current
from cockpit.listeners import Listeners
from cockpit.pending import first_waiting, waiting, waiting_count
from cockpit.remote.launch import Streams
from cockpit.remote.mirror import Mirror
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


class RemoteEngine:
    """The engine of a Cockpit service, reached over a connection."""

    detaches = True
    """Quitting the client leaves the agents running in the service."""

    def __init__(
        self,
        connector: Connector,
        *,
        name: str = "cockpit",
        hello_timeout: float | None = None,
        send_environment: bool = True,
    ) -> None:
        self._connector = connector
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
        self._listeners = Listeners()
        self._sending = Sending()
        self._mirror = Mirror()
        self._shown: str | None = None
        self._watched: frozenset[str] = frozenset()
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
        self._asking_agents = False
        self._unwritten = (0, 0)
        self.service: dict[str, Any] = {}
        """What the service said of itself when this client attached (pid, version)."""
        self.links_lost = 0
        """Connections lost while attached; each is told by one ResyncEvent once attached
        again (a cut while attaching again only costs a try)."""

    @classmethod
    async def attach(
        cls,
        connector: Connector,
        *,
        name: str = "cockpit",
        hello_timeout: float | None = None,
        send_environment: bool = True,
    ) -> RemoteEngine:
        """Attach to the service `connector` reaches (ProtocolMismatch, ConnectionError). One
        that stops as this client comes is waited out: the connector starts the next."""
        engine = cls(
            connector, name=name, hello_timeout=hello_timeout, send_environment=send_environment
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SUCCESSOR_WAIT
        while True:
            try:
                await engine._attach()
            except ServiceLeft:
                if loop.time() >= deadline:
                    raise
                await asyncio.sleep(RECONNECT_DELAYS[2])
                continue
            return engine

    # -- the connection -----------------------------------------------------------------------

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
        self._send_watch()
        if self._shown is not None:
            self._notify(protocol.SHOW, {"session": self._shown})

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
        self._sending.keep(asyncio.ensure_future(self._reattach()))

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

    def _set_link_problem(self, problem: str | None) -> None:
        if problem != self._link_problem:
            self._link_problem = problem
            self._emit(LinkEvent(self.link_problem))

    def link_said(self, words: str) -> None:
        """The link's own command said `words` (one clean line): while the link is cut, they
        say why better than LINK_CUT does."""
        self._link_words = words
        if self._link_problem == LINK_CUT:
            self._emit(LinkEvent(self.link_problem))

    async def _on_message(self, method: str, params: Any, is_notification: bool) -> Any:
        """The service's notifications. Handled at once, in the order they came (nothing
        is awaited before an event is applied and told)."""
        if method == protocol.EVENT and isinstance(params, dict):
            event = protocol.decode(params.get("event"))
            unknown = self._mirror.apply(event)
            if unknown is not None:
                self._sending.background(self._learn_spec(unknown))
            self._emit(event)
        elif method == protocol.STATE and isinstance(params, dict):
            self._mirror.take(params)
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

    async def _learn_spec(self, session_id: str) -> None:
        try:
            record = await self.session(session_id)
        except KeyError:
            self._mirror.specs.pop(session_id, None)  # deleted
            return
        self._mirror.specs[session_id] = await self._call("agent_of", record=record)

    def _emit(self, event: EngineEvent) -> None:
        self._listeners.emit(event)

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

    async def _call(self, name: str, **args: Any) -> Any:
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

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification without waiting for it (dropped while detached: attaching
        again sends what it must)."""
        conn, ended = self._conn, self._conn_ended
        if conn is None or not self._attached.is_set():
            return

        async def send() -> None:
            with contextlib.suppress(ConnectionError, OSError):
                await before_the_end(ended, conn.send_notification(method, params))

        self._sending.in_order(send)

    # -- the contract: state ------------------------------------------------------------------

    @property
    def problems(self) -> Sequence[str]:
        return self._mirror.problems

    @property
    def saving_problem(self) -> str | None:
        return self._mirror.saving_problem

    @property
    def saving_failure(self) -> str | None:
        return self._mirror.saving_failure

    @property
    def link_problem(self) -> str | None:
        if self._link_problem == LINK_CUT and self._link_words:
            return self._link_words
        return self._link_problem

    @property
    def service_stopped(self) -> ServiceStopped | None:
        return self._stopped

    async def reattach(self) -> None:
        """Attach again to a service that stopped for good: the connector starts one."""
        if self._stopped is None or self._attached.is_set() or self._closing:
            return
        await self._attach()
        self._stopped = None
        self._set_link_problem(None)
        self._emit(ResyncEvent("attached to the Cockpit service started again"))

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self._listeners.subscribe(listener)

    async def close(self, reason: str = "Cockpit quit") -> None:
        """Detach: the service and its agents go on."""
        if self._closing:
            return
        with contextlib.suppress(Exception):
            if self._attached.is_set():
                self._unwritten = await asyncio.wait_for(self._call("unwritten"), 2)
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

    def now(self) -> float:
        return time.time() + self._mirror.clock_offset

    def unwritten(self) -> tuple[int, int]:
        return tuple(self._unwritten)  # type: ignore[return-value]

    def agents(self) -> list[AgentInfo]:
        """The agents the service knew when last asked. Each call asks again, in the
        background (the service reads its `agents.toml` when it is used), so a list
        shown again shows what the file says now."""
        if self._attached.is_set() and not self._asking_agents and _loop_runs():
            self._asking_agents = True
            self._sending.background(self._ask_agents())
        return list(self._mirror.agents)

    async def _ask_agents(self) -> None:
        try:
            self._mirror.agents = list(await self._call("agents"))
        except (ConnectionError, OSError):  # cut: attaching again brings the list
            pass
        finally:
            self._asking_agents = False

    def agent_of(self, record: SessionRecord) -> AgentSpec:
        known = self._mirror.specs.get(record.id)
        if known is not None:
            return known
        return AgentSpec(record.agent, tuple(record.command), source="stored session")

    def show(self, session_id: str | None) -> None:
        self._shown = session_id
        self._send_watch()
        self._notify(protocol.SHOW, {"session": session_id})
        if session_id is not None:
            self._mirror.unread.discard(session_id)

    def watch(self, session_ids: Collection[str]) -> None:
        self._watched = frozenset(session_ids)
        self._send_watch()

    def _send_watch(self) -> None:
        """Ask for the frames of what is shown and watched, and of nothing else."""
        sessions = set(self._watched) | ({self._shown} if self._shown else set())
        self._notify(protocol.WATCH, {"sessions": sorted(sessions)})

    def unread(self, session_id: str) -> bool:
        return session_id in self._mirror.unread

    def status(self, session_id: str) -> str:
        return self._mirror.statuses.get(session_id, Status.CLOSED)

    def pending_permissions(self, session_id: str | None = None) -> list[PermissionRequest]:
        return waiting(self._mirror.pending.values(), session_id)

    def pending_count(self, session_id: str | None = None) -> int:
        return waiting_count(self._mirror.pending.values(), session_id)

    def first_pending(self, session_id: str) -> PermissionRequest | None:
        return first_waiting(self._mirror.pending.values(), session_id)

    # -- the contract: requests ---------------------------------------------------------------

    async def create_session(
        self,
        agent: str | AgentSpec,
        cwd: str | Path,
        title: str | None = None,
        *,
        run: bool = False,
    ) -> SessionRecord:
        record: SessionRecord = await self._call(
            "create_session", agent=agent, cwd=str(cwd), title=title, run=run
        )
        if isinstance(agent, AgentSpec):
            self._mirror.specs[record.id] = agent
        return record

    async def sessions(self) -> list[SessionRecord]:
        return list(await self._call("sessions"))

    async def session(self, session_id: str) -> SessionRecord:
        record: SessionRecord = await self._call("session", session_id=session_id)
        return record

    async def find_session(self, prefix: str) -> SessionRecord:
        record: SessionRecord = await self._call("find_session", prefix=prefix)
        return record

    async def rename(self, session_id: str, title: str) -> None:
        await self._call("rename", session_id=session_id, title=title)

    async def delete(self, session_id: str) -> None:
        await self._call("delete", session_id=session_id)

    async def set_session_policy(self, session_id: str, kind: str, action: str | None) -> str:
        return str(
            await self._call("set_session_policy", session_id=session_id, kind=kind, action=action)
        )

    async def session_policy(self, session_id: str) -> str:
        return str(await self._call("session_policy", session_id=session_id))

    async def export(self, session_id: str, target: str = "", replace: bool = False) -> Path:
        return Path(
            await self._call("export", session_id=session_id, target=target, replace=replace)
        )

    async def find_files(self, session_id: str, query: str, limit: int = 8) -> list[FileMatch]:
        return list(await self._call("find_files", session_id=session_id, query=query, limit=limit))

    def save_draft(self, session_id: str, text: str) -> None:
        self._sending.in_order(lambda: self._call("save_draft", session_id=session_id, text=text))

    async def add_notice(self, session_id: str, text: str) -> None:
        await self._call("add_notice", session_id=session_id, text=text)

    async def report(self, session_id: str | None, message: str) -> None:
        try:
            await self._call("report", session_id=session_id, message=message)
        except Exception:
            self._emit(ProblemEvent(session_id, message))

    async def running_elsewhere(self, session_ids: Sequence[str]) -> list[str]:
        return list(await self._call("running_elsewhere", session_ids=list(session_ids)))

    async def start(self, session_id: str, handshake_timeout: float | None = None) -> None:
        await self._call("start", session_id=session_id, handshake_timeout=handshake_timeout)

    async def stop(self, session_id: str, reason: str = "the session was closed") -> None:
        await self._call("stop", session_id=session_id, reason=reason)

    async def prompt(self, session_id: str, text: str, *, then_stop: bool = False) -> str:
        return str(
            await self._call("prompt", session_id=session_id, text=text, then_stop=then_stop)
        )

    def send(self, session_id: str, text: str) -> None:
        def failed(error: Exception) -> None:
            self._emit(ProblemEvent(session_id, f"The prompt could not be sent: {error}"))

        self._sending.in_order(lambda: self._call("send", session_id=session_id, text=text), failed)

    async def cancel(self, session_id: str) -> bool:
        return bool(await self._call("cancel", session_id=session_id))

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        await self._call("set_mode", session_id=session_id, mode_id=mode_id)

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> None:
        await self._call(
            "set_config_option", session_id=session_id, config_id=config_id, value=value
        )

    def allow_automatically(self, session_id: str, kinds: Sequence[str] | None = None) -> None:
        kinds_sent = list(kinds) if kinds is not None else None
        self._sending.in_order(
            lambda: self._call("allow_automatically", session_id=session_id, kinds=kinds_sent)
        )

    async def answer_permission(
        self, request_id: str, option_id: str | None, decided_by: str = "user"
    ) -> None:
        await self._call(
            "answer_permission", request_id=request_id, option_id=option_id, decided_by=decided_by
        )

    async def page(self, session_id: str, before_seq: int | None = None) -> Page:
        page: Page = await self._call("page", session_id=session_id, before_seq=before_seq)
        return page

    async def rows_after(self, session_id: str, seq: int) -> Page:
        page: Page = await self._call("rows_after", session_id=session_id, seq=seq)
        return page

    async def rows(self, session_id: str) -> list[Row]:
        return list(await self._call("rows", session_id=session_id))

    async def model_calls(self, session: str, call: int | None = None) -> ModelCalls:
        calls: ModelCalls = await self._call("model_calls", session=session, call=call)
        return calls

    async def row(self, session_id: str, key: str) -> Row | None:
        row: Row | None = await self._call("row", session_id=session_id, key=key)
        return row

    async def last_row(self, session_id: str, kind: str) -> Row | None:
        row: Row | None = await self._call("last_row", session_id=session_id, kind=kind)
        return row


def _meets_the_contract(engine: RemoteEngine) -> EngineAPI:
    """Never called: mypy checks here that `RemoteEngine` is an `EngineAPI`."""
    return engine


def _loop_runs() -> bool:
    """True when called inside a running event loop (work can go to the background)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
