"""A session's agent process from spawn to stop: the handshake, opening or reloading the
agent's own session (load, resume, or honestly a fresh one), noticing its death, and
stopping it so that what it sent is stored and a running turn says why it ended.

The agent's process, its SDK connection (made by `sdk_connection`: the agent's stdio
through Cockpit's hardened transport, the SDK's calls into Cockpit through the client
adapter) and the agent's own session id are the lifecycle's; what it reads of its session
and the callbacks for what it changes there come in one `LifecycleNeeds`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Protocol

from acp import PROTOCOL_VERSION, RequestError
from acp.core import ClientSideConnection
from acp.interfaces import Client
from acp.schema import (
    AuthCapabilities,
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
    FileSystemCapabilities,
    Implementation,
)
from pydantic import ValidationError

from cockpit import __version__
from cockpit.api import AgentSpec, EngineEvent, SessionEvent, StartError, Status
from cockpit.compat.acp_private import Transport
from cockpit.engine.agent_process import AgentProcess
from cockpit.engine.errors import describe
from cockpit.engine.inbox import SessionInbox
from cockpit.engine.plans.keeper import McpServer
from cockpit.engine.processes import describe_exit
from cockpit.engine.sign_in import SessionSignIn, asks_sign_in, sign_in_words, web_addresses
from cockpit.engine.start_watch import StartWatch
from cockpit.engine.transport import AgentTransport
from cockpit.environment import Environment, agent_variables, runs_our_python
from store import SessionBusy, note
from store.store import Store

log = logging.getLogger(__name__)

NO_ENVIRONMENT = (
    "The agent was not started: the request that asked for it brought no environment (a "
    "client of the Cockpit service sends its own when it attaches; this one did not)."
)
"""Why a start fails in the service when no client's world came with it: the service's own
environment is a stale copy of the user's, never used for an agent."""

STOP_GRACE = 2.0
"""Seconds a stopping session gives a running turn to end (and say so) before the agent
is killed, and then to record how it ended."""

ADDRESS_POLL = 0.2
"""Seconds between two looks at what a signing-in agent printed, for an address to show."""

LOAD_ALLOWANCE = 4
"""How many times its ceiling a start that reloads the agent's session may take in all:
the agent replays the whole history, which takes long for a long one. It writes as it
replays, so the stall rule still ends a load that hangs as soon as any other start."""


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Read a shielded task's outcome: its callers have the exception, asyncio need not warn
    that nobody did."""
    if not task.cancelled():
        task.exception()


Connect = Callable[[asyncio.StreamReader, asyncio.StreamWriter], ClientSideConnection]
"""Makes the SDK's connection to an agent on its stdout and stdin."""


def sdk_connection(
    stdout: asyncio.StreamReader,
    stdin: asyncio.StreamWriter,
    *,
    tap: Callable[[dict[str, Any]], bool],
    screen: Callable[[dict[str, Any]], Awaitable[bool]],
    on_dropped: Callable[[str], None],
    client: Client,
) -> ClientSideConnection:
    """The SDK's connection to an agent on these streams: Cockpit's transport frames them
    and taps every update into the session's inbox, and `client` answers the agent's
    requests."""
    transport: Transport = AgentTransport(
        stdout, stdin, tap=tap, on_dropped=on_dropped, screen=screen
    )
    # Elicitation (the agent's forms) is still "unstable" in the SDK: Cockpit opts in, so
    # the SDK routes it instead of warning on the terminal and refusing it.
    return ClientSideConnection(client, transport, use_unstable_protocol=True)


class RunningTurn(Protocol):
    """What a stop reads of the session's turn, and asks of it: one that runs ends first."""

    @property
    def active(self) -> bool:
        """True while a prompt is with the agent."""
        ...

    @property
    def idle(self) -> asyncio.Event:
        """Set whenever no turn runs."""
        ...

    def will_stop(self, reason: str) -> None:
        """A stop comes while the turn runs: its end says `reason`."""

    async def cancel(self) -> bool:
        """Cancel the running turn; False when none runs."""
        ...


@dataclass(frozen=True)
class LifecycleNeeds:
    """What the lifecycle reads of its session, and callbacks for what it changes there."""

    session_id: str
    root: Path
    """The session's folder: the agent runs in it."""
    store: Store
    emit: Callable[[EngineEvent], None]
    inbox: SessionInbox
    """Where the rows it writes go, in order with the agent's updates."""
    data_dir: Path
    """Where the agent's log goes (`logs/`), handed to the agent too."""
    spec: Callable[[], AgentSpec]
    """How to run the agent, as it is at each start."""
    environment: Callable[[], Environment | None]
    """The user's world the agent starts with (None: no request brought one)."""
    handshake_timeout: Callable[[], float]
    """Seconds the agent may take to start, at most (read at each start)."""
    stall_limit: float
    """Seconds a starting agent may do nothing before it has failed."""
    status: Callable[[], str]
    """The session's live status."""
    set_status: Callable[[str, str], None]
    """Change the session's live status (and its detail) and tell the clients."""
    connect: Connect
    """The SDK's connection to an agent on its streams (see `sdk_connection`)."""
    use_environment: Callable[[Environment], None]
    """Give the agent's terminals the world the agent starts with."""
    close_open: Callable[[str, str | None, str], Awaitable[None]]
    """Answer every pending question and close every open tool call (see
    `LiveSession.close_open`)."""
    release_questions: Callable[[], None]
    """Answer every pending question "cancelled", without a row."""
    close_terminals: Callable[[], Awaitable[None]]
    """End every terminal of the agent."""
    turn: Callable[[], RunningTurn]
    """The session's turns (built after the lifecycle: a turn starts the agent)."""
    mcp_servers: Callable[[Mapping[str, Any]], Awaitable[list[McpServer]]]
    """The MCP servers the agent is handed as it opens its session, given what it
    advertised (the plan tool, with a token minted for this start; the user's servers
    it can take)."""
    sign_in: SessionSignIn
    """How the agent signs in: what it offers, and the way the user chose."""


class AgentLifecycle:
    """Starting, reloading and stopping the agent of one live session."""

    def __init__(self, needs: LifecycleNeeds, agent_session_id: str | None) -> None:
        self._needs = needs
        self.process: AgentProcess | None = None
        self.conn: ClientSideConnection | None = None
        self.agent_session_id = agent_session_id
        """The agent's own id of this session (the stored one until the agent gives one)."""
        self.capabilities: dict[str, Any] = {}
        """What the agent said in `initialize` it can do, as wire JSON."""
        self.ready = False
        """True once the handshake is done and the agent's session is open."""
        self.stopping = False
        """True from the moment a stop begins until the next start."""
        self.exit_reported = False
        """True once the session holds a row saying the agent exited or failed to start."""
        self.not_starting = asyncio.Event()
        """Set whenever no start of the agent runs (a stop waits for one it cuts; what
        asserts that a cut start did nothing more waits for this)."""
        self.not_starting.set()
        self._starting: asyncio.Future[None] | None = None
        self._stop_lock = asyncio.Lock()
        self._watcher: asyncio.Task[None] | None = None
        self._start_watch: StartWatch | None = None
        self._addresses: set[str] = set()
        """The sign-in addresses the session was shown already."""

    @property
    def running(self) -> bool:
        """True while an agent process is attached and alive."""
        return (
            self.process is not None and self.process.returncode is None and self.conn is not None
        )

    # -- starting -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the agent unless it is up. A call made while it starts (a prompt typed the
        moment a session opens) waits for that start instead of beginning another; a start
        that fails, or that a stop cuts, raises StartError in every caller, with a row in
        the session that says why."""
        if self._starting is None or self._starting.done():
            if self.ready and self.running:
                return
            self._starting = asyncio.ensure_future(self._start())
            self._starting.add_done_callback(_retrieve)
        starting = self._starting
        try:
            # Shielded: a caller that goes away (a closed screen) does not cut the handshake.
            await asyncio.shield(starting)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if starting.cancelled() and (current is None or not current.cancelling()):
                raise StartError("The session was stopped while its agent started.") from None
            raise

    async def _start(self) -> None:
        """Run one start of the agent; `not_starting` is clear meanwhile."""
        self.not_starting.clear()
        try:
            await self._spawn_and_open()
        finally:
            self.not_starting.set()

    async def _spawn_and_open(self) -> None:
        """Spawn the agent, shake hands, and open (or reload) its ACP session."""
        needs = self._needs
        async with self._stop_lock:
            # A stop under way ends first: one that went on beside this start would mark
            # the session closed, and wait for this start's agent to exit, which no one
            # stops. (A stop that begins from here on cuts this start instead.)
            pass
        self.ready = False
        await self.claim()
        self.stopping = False
        self.exit_reported = False
        needs.inbox.ensure_consumer()
        needs.set_status(Status.STARTING, needs.spec().label)
        log_path = needs.data_dir / "logs" / f"{needs.session_id}.log"
        world = needs.environment()
        if world is None:
            await self.fail(NO_ENVIRONMENT)
        spec = needs.spec()
        variables = agent_variables(
            world.variables,
            spec.env,
            os.environ,
            bundled=runs_our_python(spec.command),
            extra={"COCKPIT_DATA_DIR": str(needs.data_dir)},
        )
        # A key the user typed to sign in reaches the agent alone, not its terminals.
        variables.update(needs.sign_in.variables)
        needs.use_environment(world)
        try:
            process = await AgentProcess.spawn(spec, needs.root, log_path, variables, world.umask)
        except (FileNotFoundError, NotADirectoryError, PermissionError) as error:
            await self.fail(str(error))
        self.process = process
        self.connect(process.stdout, process.stdin)
        self._watcher = asyncio.create_task(self._watch(process), name=f"watch-{needs.session_id}")
        watch = StartWatch(
            process.pid,
            lambda: process.written,
            ceiling=needs.handshake_timeout(),
            stall_limit=needs.stall_limit,
        )
        try:
            async with watch:
                self._start_watch = watch
                await self.handshake()
        except StartError:
            raise
        except TimeoutError:
            if watch.stalled:
                message = (
                    f"The agent did not answer and did nothing for {watch.stall_limit:g} s "
                    "while starting: it used no CPU time and wrote nothing."
                )
            else:
                message = f"The agent did not answer within {watch.ceiling:g} s while starting."
            await self.fail(message, stop=True)
        except (RequestError, ValidationError, ConnectionError, OSError) as error:
            if asks_sign_in(error):
                await self.fail(sign_in_words(needs.sign_in.need(describe(error))), stop=True)
            await self.fail(f"The agent failed while starting: {describe(error)}", stop=True)
        except Exception as error:  # a store error, or a bug: the session says so and goes on
            log.exception("session %s did not start", needs.session_id)
            await self.fail(f"Cockpit could not start the agent: {describe(error)}", stop=True)
        finally:
            self._start_watch = None
        self.ready = True
        needs.sign_in.signed_in()
        needs.set_status(Status.READY, "")

    def connect(
        self, stdout: asyncio.StreamReader, stdin: asyncio.StreamWriter
    ) -> ClientSideConnection:
        """The SDK's connection to an agent on these streams (see `sdk_connection`). It
        becomes the session's connection."""
        self.conn = self._needs.connect(stdout, stdin)
        return self.conn

    async def claim(self) -> None:
        """Become the session's only writer before an agent runs for it. When another
        Cockpit writes it, SessionBusy says so on the session's status (not as a row: the
        transcript is the other Cockpit's to write)."""
        try:
            await self._needs.store.claim(self._needs.session_id)
        except SessionBusy as error:
            self._needs.set_status(Status.ERROR, str(error))
            raise

    async def fail(self, message: str, *, stop: bool = False) -> NoReturn:
        """End a start that failed: an error row saying why (with the agent's last words on
        stderr), the session in error, and StartError for the callers."""
        needs = self._needs
        if stop:
            await self.shutdown()
        tail = self.process.stderr_tail() if self.process is not None else ""
        if tail:
            message += f"\n\nLast lines the agent wrote to stderr:\n{tail}"
        self.exit_reported = True
        await needs.inbox.tell(note(needs.session_id, "error", message))
        try:
            await needs.store.update_session(needs.session_id, status=Status.ERROR)
        except Exception:
            log.exception("could not store the status of session %s", needs.session_id)
        needs.set_status(Status.ERROR, message.splitlines()[0])
        raise StartError(message)

    async def handshake(self) -> None:
        """`initialize`, then open the agent's session: a new one, or the stored one again.
        How long it may take is the start's to watch (`StartWatch`), not each request's."""
        assert self.conn is not None
        init = await self.conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                terminal=True,
                elicitation=ElicitationCapabilities(
                    form=ElicitationFormCapabilities(), url=ElicitationUrlCapabilities()
                ),
                # Cockpit runs an agent's own login command (a `terminal` sign-in method):
                # claude-agent-acp offers its methods only to a client that says so.
                auth=AuthCapabilities(terminal=True),
                field_meta={"terminal-auth": True},
            ),
            client_info=Implementation(name="cockpit", title="Cockpit", version=__version__),
        )
        if init.protocol_version != PROTOCOL_VERSION:
            await self.fail(
                f"The agent speaks ACP version {init.protocol_version}; Cockpit speaks version "
                f"{PROTOCOL_VERSION}.",
                stop=True,
            )
        self.capabilities = (
            init.agent_capabilities.model_dump(by_alias=True, exclude_none=True)
            if init.agent_capabilities
            else {}
        )
        self._needs.sign_in.offer(init.auth_methods, self.capabilities)
        await self._sign_in()
        # Once a start, and before a load's replay window: what it says is not a replay.
        servers = await self._needs.mcp_servers(self.capabilities)
        if self.agent_session_id is None:
            await self._new_session(servers)
        else:
            await self._reopen(servers)

    async def _sign_in(self) -> None:
        """Sign in the way the user chose, if they chose one (each start does: a key lives
        in the agent's environment, which a new process has anew). A refusal ends the
        start, and the agent asks again."""
        sign_in = self._needs.sign_in
        method = sign_in.chosen
        if method is None:
            return
        assert self.conn is not None
        watch = self._start_watch
        if watch is not None and method.kind == "agent":  # the user signs in meanwhile
            watch.allow(LOAD_ALLOWANCE)
            watch.user_waited_on = True
        if self.process is not None:  # what it printed before it signs in is no sign-in's
            self._addresses.update(web_addresses(self.process.stderr_tail()))
        watching = asyncio.create_task(self._show_addresses())
        try:
            await self.conn.authenticate(method_id=method.id, **sign_in.request_meta())
        except RequestError as error:
            sign_in.forget()
            sign_in.need(f"signing in with {method.name} failed: {describe(error)}")
            await self.fail(
                f"Signing in with {method.name} failed: {describe(error)}. Choose a way "
                "again with /login.",
                stop=True,
            )
        finally:
            if watch is not None:
                watch.user_waited_on = False
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching
            await self._tell_addresses()

    async def _show_addresses(self) -> None:
        """While the agent signs in, show each web address it prints (a browser sign-in
        asks the user to open one): Cockpit never opens it itself."""
        while True:
            await self._tell_addresses()
            await asyncio.sleep(ADDRESS_POLL)

    async def _tell_addresses(self) -> None:
        process = self.process
        if process is None:
            return
        for address in web_addresses(process.stderr_tail()):
            if address not in self._addresses:
                self._addresses.add(address)
                said = (
                    f"To sign in, open this address in your browser: {address}\n\n"
                    "Cockpit does not open it for you."
                )
                await self._needs.inbox.tell(note(self._needs.session_id, "notice", said))

    def sign_in_needed(self, error: BaseException) -> str:
        """A prompt was refused because the user must sign in: the row that says so and
        how (the session waits for /login)."""
        return sign_in_words(self._needs.sign_in.need(describe(error)))

    async def _new_session(self, servers: list[McpServer]) -> None:
        needs = self._needs
        assert self.conn is not None
        response = await self.conn.new_session(cwd=str(needs.root), mcp_servers=servers)
        self.agent_session_id = response.session_id
        await self._save_session_state(response)

    async def _save_session_state(self, response: Any) -> None:
        needs = self._needs
        fields: dict[str, Any] = {"agent_session_id": self.agent_session_id, "status": Status.READY}
        if getattr(response, "modes", None) is not None:
            fields["modes"] = response.modes.model_dump(by_alias=True, exclude_none=True)
        if getattr(response, "config_options", None) is not None:
            fields["config_options"] = [
                o.model_dump(by_alias=True, exclude_none=True) for o in response.config_options
            ]
        await needs.store.update_session(needs.session_id, **fields)
        needs.emit(SessionEvent(needs.session_id))

    async def _reopen(self, servers: list[McpServer]) -> None:
        """Reconnect to the agent's own session: load it (replay), resume it, or say honestly
        that the agent starts afresh."""
        needs = self._needs
        assert self.conn is not None
        assert self.agent_session_id is not None
        stored = await needs.store.page_before(needs.session_id, max_rows=1)
        session_caps = self.capabilities.get("sessionCapabilities") or {}
        if self.capabilities.get("loadSession"):
            window = await needs.store.begin_replay(needs.session_id)
            needs.inbox.replayed_users = 0
            try:
                if self._start_watch is not None:
                    self._start_watch.allow(LOAD_ALLOWANCE)
                response = await self.conn.load_session(
                    cwd=str(needs.root),
                    session_id=self.agent_session_id,
                    mcp_servers=servers,
                )
            except RequestError as error:
                await needs.inbox.settle()
                await needs.store.end_replay(needs.session_id)
                await self._fresh_session(
                    f"the agent could not load its session ({describe(error)})", servers
                )
                return
            except BaseException:  # it timed out, or died: what it sends next is live again
                with contextlib.suppress(Exception):
                    await needs.store.end_replay(needs.session_id)
                raise
            await needs.inbox.settle()
            # The window stays open past the answer for what a late replay still recites
            # (gemini-cli sends most of its history after the next prompt).
            await needs.store.load_answered(needs.session_id)
            turns = needs.store.turn_of(needs.session_id) or 0
            replayed = needs.inbox.replayed_users
            if window.keep:
                message = (
                    "Reconnected: the agent reloaded its session and replayed "
                    f"{replayed} turn(s) into the transcript."
                )
            elif stored.rows and turns > 0 and replayed == 0:
                message = (
                    f"Reconnected, but the agent replayed none of the {turns} earlier turn(s): it "
                    "may not remember them. The transcript above is Cockpit's own record."
                )
            else:
                message = (
                    "Reconnected: the agent reloaded its session; the transcript is "
                    "Cockpit's own record."
                )
            await needs.inbox.tell(note(needs.session_id, "notice", message))
            await self._save_session_state(response)
        elif "resume" in session_caps:
            try:
                resumed = await self.conn.resume_session(
                    cwd=str(needs.root),
                    session_id=self.agent_session_id,
                    mcp_servers=servers,
                )
            except RequestError as error:
                await self._fresh_session(
                    f"the agent could not resume its session ({describe(error)})", servers
                )
                return
            await needs.inbox.tell(
                note(needs.session_id, "notice", "Reconnected: the agent resumed its session.")
            )
            await self._save_session_state(resumed)
        else:
            await self._fresh_session("the agent cannot reload sessions", servers)

    async def _fresh_session(self, why: str, servers: list[McpServer]) -> None:
        needs = self._needs
        self.agent_session_id = None
        await self._new_session(servers)
        await needs.inbox.tell(
            note(
                needs.session_id,
                "notice",
                f"Started a new agent session: {why}. The agent does not remember the earlier "
                "turns; the transcript above is Cockpit's own record.",
            )
        )

    # -- the agent's death --------------------------------------------------------------------

    async def _watch(self, process: AgentProcess) -> None:
        """Notice the agent's death even when no call is pending."""
        code = await process.wait()
        if self.stopping or self.exit_reported:
            return
        if self._needs.turn().active:
            return  # the turn reports it, with the exit code
        await self.report_exit(code)

    async def report_exit(self, code: int) -> None:
        """The agent exited by itself: close what waited on it, and say so in a row."""
        if self.exit_reported:
            return
        needs = self._needs
        self.exit_reported = True
        self.ready = False
        await needs.close_open("exit", "the agent exited", "failed")
        tail = self.process.stderr_tail() if self.process is not None else ""
        message = f"The agent exited with {describe_exit(code)}."
        if tail:
            message += f"\n\nLast lines the agent wrote to stderr:\n{tail}"
        message += "\n\nSend a prompt to restart it."
        await needs.inbox.tell(note(needs.session_id, "error", message))
        try:
            await needs.store.update_session(needs.session_id, status=Status.EXITED)
        except Exception:
            log.exception("could not store the status of session %s", needs.session_id)
        needs.set_status(Status.EXITED, f"exited with {describe_exit(code)}")
        if self.conn is not None:
            await self.conn.close()
        await needs.close_terminals()

    # -- stopping -----------------------------------------------------------------------------

    async def stop(self, reason: str = "the session was closed") -> None:
        """Stop the agent (its whole process group); the transcript stays. A turn that runs
        is cancelled first, and ends with a row saying why it stopped (`reason`). Stops
        asked for at once (a close, then a quit) run one after the other."""
        async with self._stop_lock:
            await self._stop(reason)

    async def _stop(self, reason: str) -> None:
        needs = self._needs
        turn = needs.turn()
        await self._cut_start(reason)
        if turn.active:
            turn.will_stop(reason)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(turn.cancel(), 2)
            with contextlib.suppress(TimeoutError):  # the agent may end the turn by itself
                await asyncio.wait_for(turn.idle.wait(), STOP_GRACE)
        await self.shutdown()
        with contextlib.suppress(TimeoutError):  # and the turn records how it ended
            await asyncio.wait_for(turn.idle.wait(), STOP_GRACE)
        if needs.status() not in (Status.ERROR, Status.EXITED):
            with contextlib.suppress(Exception):
                await needs.store.update_session(needs.session_id, status=Status.CLOSED)
            needs.set_status(Status.CLOSED, "")
        # Everything the agent sent before it stopped is stored and shown before the
        # session is let go.
        await needs.inbox.drain()
        with contextlib.suppress(Exception):
            await needs.store.release(needs.session_id)  # another Cockpit may continue it now

    async def _cut_start(self, reason: str) -> None:
        """End a start still under way before stopping: the agent it spawns is stopped with
        the rest (a session deleted while its agent started left that agent running,
        writing into a session that was gone)."""
        starting = self._starting
        if starting is None or starting.done() or starting is asyncio.current_task():
            return
        starting.cancel()
        await asyncio.wait({starting})
        said = f"The agent was stopped while it started: {reason}."
        await self._needs.inbox.tell(note(self._needs.session_id, "notice", said))

    async def shutdown(self) -> None:
        """Stop the agent now: close what waits on it, close its session and the
        connection, end its process group and its terminals."""
        needs = self._needs
        self.stopping = True
        self.ready = False
        # What is stopped is the agent of now, with its connection and its watcher, read
        # before the first await.
        conn, process, watcher = self.conn, self.process, self._watcher
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                needs.close_open("stop", "the session was stopped", "cancelled"), 2
            )
        needs.release_questions()
        if (
            conn is not None
            and process is not None
            and process.returncode is None
            and (
                "close" in (self.capabilities.get("sessionCapabilities") or {})
                and self.agent_session_id
            )
        ):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close_session(session_id=self.agent_session_id), 2)
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        if process is not None:
            await process.stop()
        if watcher is not None:
            with contextlib.suppress(BaseException):
                await watcher
        await needs.close_terminals()
        if self.conn is conn:
            self.conn = None
