"""A session's agent process from spawn to stop: the handshake, opening or reloading the
agent's own session (load, resume, or honestly a fresh one), noticing its death, and
stopping it so that what it sent is stored and a running turn says why it ended.

The SDK connection is made here, in `connect`: the agent's stdio through Cockpit's
hardened transport, and the SDK's calls into Cockpit through the client adapter.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import TYPE_CHECKING, Any, NoReturn

from acp import PROTOCOL_VERSION, RequestError
from acp.core import ClientSideConnection
from acp.interfaces import Client
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation
from pydantic import ValidationError

from cockpit import __version__
from cockpit.api import SessionEvent, StartError, Status
from cockpit.compat.acp_private import Transport
from cockpit.engine.agent_process import AgentProcess
from cockpit.engine.client_adapter import ClientAdapter
from cockpit.engine.errors import describe
from cockpit.engine.processes import describe_exit
from cockpit.engine.start_watch import StartWatch
from cockpit.engine.transport import AgentTransport
from cockpit.environment import agent_variables, runs_our_python
from store import SessionBusy, note

if TYPE_CHECKING:
    from cockpit.engine.session import LiveSession

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

LOAD_ALLOWANCE = 4
"""How many times its ceiling a start that reloads the agent's session may take in all:
the agent replays the whole history, which takes long for a long one. It writes as it
replays, so the stall rule still ends a load that hangs as soon as any other start."""


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Read a shielded task's outcome: its callers have the exception, asyncio need not warn
    that nobody did."""
    if not task.cancelled():
        task.exception()


class AgentLifecycle:
    """Starting, reloading and stopping the agent of one live session."""

    def __init__(self, live: LiveSession) -> None:
        self._live = live
        self.ready = False
        """True once the handshake is done and the agent's session is open."""
        self.stopping = False
        """True from the moment a stop begins until the next start."""
        self.exit_reported = False
        """True once the session holds a row saying the agent exited or failed to start."""
        self._starting: asyncio.Future[None] | None = None
        self._stop_lock = asyncio.Lock()
        self._watcher: asyncio.Task[None] | None = None
        self._start_watch: StartWatch | None = None

    # -- starting -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the agent unless it is up. A call made while it starts (a prompt typed the
        moment a session opens) waits for that start instead of beginning another; a start
        that fails, or that a stop cuts, raises StartError in every caller, with a row in
        the session that says why."""
        if self._starting is None or self._starting.done():
            if self.ready and self._live.running:
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
        """Spawn the agent, shake hands, and open (or reload) its ACP session."""
        live = self._live
        async with self._stop_lock:
            # A stop under way ends first: one that went on beside this start would mark
            # the session closed, and wait for this start's agent to exit, which no one
            # stops. (A stop that begins from here on cuts this start instead.)
            pass
        self.ready = False
        await self.claim()
        self.stopping = False
        self.exit_reported = False
        live.inbox.ensure_consumer()
        live.set_status(Status.STARTING, live.spec.label)
        log_path = live.data_dir / "logs" / f"{live.id}.log"
        world = live.environment()
        if world is None:
            await self.fail(NO_ENVIRONMENT)
        spec = live.spec
        variables = agent_variables(
            world.variables,
            spec.env,
            os.environ,
            bundled=runs_our_python(spec.command),
            extra={"COCKPIT_DATA_DIR": str(live.data_dir)},
        )
        live.requests.use_environment(world)
        try:
            process = await AgentProcess.spawn(spec, live.root, log_path, variables, world.umask)
        except (FileNotFoundError, NotADirectoryError, PermissionError) as error:
            await self.fail(str(error))
        live.process = process
        self.connect(process.stdout, process.stdin)
        self._watcher = asyncio.create_task(self._watch(process), name=f"watch-{live.id}")
        watch = StartWatch(
            process.pid,
            lambda: process.written,
            ceiling=live.handshake_timeout,
            stall_limit=live.stall_limit,
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
            await self.fail(f"The agent failed while starting: {describe(error)}", stop=True)
        except Exception as error:  # a store error, or a bug: the session says so and goes on
            log.exception("session %s did not start", live.id)
            await self.fail(f"Cockpit could not start the agent: {describe(error)}", stop=True)
        finally:
            self._start_watch = None
        self.ready = True
        live.set_status(Status.READY)

    def connect(
        self, stdout: asyncio.StreamReader, stdin: asyncio.StreamWriter
    ) -> ClientSideConnection:
        """The SDK's connection to an agent on these streams: Cockpit's transport frames
        them and taps every update into the session's inbox, and the client adapter
        answers the agent's requests. It becomes the session's connection."""
        live = self._live
        transport: Transport = AgentTransport(
            stdout, stdin, tap=live.tap, on_dropped=live.inbox.dropped, screen=live.tap.screen
        )
        client: Client = ClientAdapter(live.broker, live.requests)
        live.conn = ClientSideConnection(client, transport)
        return live.conn

    async def claim(self) -> None:
        """Become the session's only writer before an agent runs for it. When another
        Cockpit writes it, SessionBusy says so on the session's status (not as a row: the
        transcript is the other Cockpit's to write)."""
        try:
            await self._live.store.claim(self._live.id)
        except SessionBusy as error:
            self._live.set_status(Status.ERROR, str(error))
            raise

    async def fail(self, message: str, *, stop: bool = False) -> NoReturn:
        """End a start that failed: an error row saying why (with the agent's last words on
        stderr), the session in error, and StartError for the callers."""
        live = self._live
        if stop:
            await self.shutdown()
        tail = live.process.stderr_tail() if live.process is not None else ""
        if tail:
            message += f"\n\nLast lines the agent wrote to stderr:\n{tail}"
        self.exit_reported = True
        await live.inbox.tell(note(live.id, "error", message))
        try:
            await live.store.update_session(live.id, status=Status.ERROR)
        except Exception:
            log.exception("could not store the status of session %s", live.id)
        live.set_status(Status.ERROR, message.splitlines()[0])
        raise StartError(message)

    async def handshake(self) -> None:
        """`initialize`, then open the agent's session: a new one, or the stored one again.
        How long it may take is the start's to watch (`StartWatch`), not each request's."""
        live = self._live
        assert live.conn is not None
        init = await live.conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                terminal=True,
            ),
            client_info=Implementation(name="cockpit", title="Cockpit", version=__version__),
        )
        if init.protocol_version != PROTOCOL_VERSION:
            await self.fail(
                f"The agent speaks ACP version {init.protocol_version}; Cockpit speaks version "
                f"{PROTOCOL_VERSION}.",
                stop=True,
            )
        live.capabilities = (
            init.agent_capabilities.model_dump(by_alias=True, exclude_none=True)
            if init.agent_capabilities
            else {}
        )
        if live.agent_session_id is None:
            await self._new_session()
        else:
            await self._reopen()

    async def _new_session(self) -> None:
        live = self._live
        assert live.conn is not None
        response = await live.conn.new_session(cwd=str(live.root), mcp_servers=[])
        live.agent_session_id = response.session_id
        await self._save_session_state(response)

    async def _save_session_state(self, response: Any) -> None:
        live = self._live
        fields: dict[str, Any] = {"agent_session_id": live.agent_session_id, "status": Status.READY}
        if getattr(response, "modes", None) is not None:
            fields["modes"] = response.modes.model_dump(by_alias=True, exclude_none=True)
        if getattr(response, "config_options", None) is not None:
            fields["config_options"] = [
                o.model_dump(by_alias=True, exclude_none=True) for o in response.config_options
            ]
        await live.store.update_session(live.id, **fields)
        live.emit(SessionEvent(live.id))

    async def _reopen(self) -> None:
        """Reconnect to the agent's own session: load it (replay), resume it, or say honestly
        that the agent starts afresh."""
        live = self._live
        assert live.conn is not None
        assert live.agent_session_id is not None
        stored = await live.store.page_before(live.id, max_rows=1)
        session_caps = live.capabilities.get("sessionCapabilities") or {}
        if live.capabilities.get("loadSession"):
            window = await live.store.begin_replay(live.id)
            live.inbox.replayed_users = 0
            try:
                if self._start_watch is not None:
                    self._start_watch.allow(LOAD_ALLOWANCE)
                response = await live.conn.load_session(
                    cwd=str(live.root), session_id=live.agent_session_id, mcp_servers=[]
                )
            except RequestError as error:
                await live.inbox.settle()
                await live.store.end_replay(live.id)
                await self._fresh_session(
                    f"the agent could not load its session ({describe(error)})"
                )
                return
            except BaseException:  # it timed out, or died: what it sends next is live again
                with contextlib.suppress(Exception):
                    await live.store.end_replay(live.id)
                raise
            await live.inbox.settle()
            # The window stays open past the answer for what a late replay still recites
            # (gemini-cli sends most of its history after the next prompt).
            await live.store.load_answered(live.id)
            turns = live.store.turn_of(live.id) or 0
            replayed = live.inbox.replayed_users
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
            await live.inbox.tell(note(live.id, "notice", message))
            await self._save_session_state(response)
        elif "resume" in session_caps:
            try:
                resumed = await live.conn.resume_session(
                    cwd=str(live.root), session_id=live.agent_session_id, mcp_servers=[]
                )
            except RequestError as error:
                await self._fresh_session(
                    f"the agent could not resume its session ({describe(error)})"
                )
                return
            await live.inbox.tell(
                note(live.id, "notice", "Reconnected: the agent resumed its session.")
            )
            await self._save_session_state(resumed)
        else:
            await self._fresh_session("the agent cannot reload sessions")

    async def _fresh_session(self, why: str) -> None:
        live = self._live
        live.agent_session_id = None
        await self._new_session()
        await live.inbox.tell(
            note(
                live.id,
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
        if self._live.turns.active:
            return  # the turn reports it, with the exit code
        await self.report_exit(code)

    async def report_exit(self, code: int) -> None:
        """The agent exited by itself: close what waited on it, and say so in a row."""
        if self.exit_reported:
            return
        live = self._live
        self.exit_reported = True
        self.ready = False
        await live.close_open("exit", "the agent exited", "failed")
        tail = live.process.stderr_tail() if live.process is not None else ""
        message = f"The agent exited with {describe_exit(code)}."
        if tail:
            message += f"\n\nLast lines the agent wrote to stderr:\n{tail}"
        message += "\n\nSend a prompt to restart it."
        await live.inbox.tell(note(live.id, "error", message))
        try:
            await live.store.update_session(live.id, status=Status.EXITED)
        except Exception:
            log.exception("could not store the status of session %s", live.id)
        live.set_status(Status.EXITED, f"exited with {describe_exit(code)}")
        if live.conn is not None:
            await live.conn.close()
        await live.requests.close()

    # -- stopping -----------------------------------------------------------------------------

    async def stop(self, reason: str = "the session was closed") -> None:
        """Stop the agent (its whole process group); the transcript stays. A turn that runs
        is cancelled first, and ends with a row saying why it stopped (`reason`). Stops
        asked for at once (a close, then a quit) run one after the other."""
        async with self._stop_lock:
            await self._stop(reason)

    async def _stop(self, reason: str) -> None:
        live = self._live
        turns = live.turns
        await self._cut_start(reason)
        if turns.active:
            turns.stop_reason = reason
            with contextlib.suppress(Exception):
                await asyncio.wait_for(live.cancel(), 2)
            with contextlib.suppress(TimeoutError):  # the agent may end the turn by itself
                await asyncio.wait_for(turns.idle.wait(), STOP_GRACE)
        await self.shutdown()
        with contextlib.suppress(TimeoutError):  # and the turn records how it ended
            await asyncio.wait_for(turns.idle.wait(), STOP_GRACE)
        if live.status not in (Status.ERROR, Status.EXITED):
            with contextlib.suppress(Exception):
                await live.store.update_session(live.id, status=Status.CLOSED)
            live.set_status(Status.CLOSED)
        # Everything the agent sent before it stopped is stored and shown before the
        # session is let go.
        await live.inbox.drain()
        with contextlib.suppress(Exception):
            await live.store.release(live.id)  # another Cockpit may continue it now

    async def _cut_start(self, reason: str) -> None:
        """End a start still under way before stopping: the agent it spawns is stopped with
        the rest (a session deleted while its agent started left that agent running,
        writing into a session that was gone)."""
        starting = self._starting
        if starting is None or starting.done() or starting is asyncio.current_task():
            return
        starting.cancel()
        await asyncio.wait({starting})
        await self._live.inbox.tell(
            note(self._live.id, "notice", f"The agent was stopped while it started: {reason}.")
        )

    async def shutdown(self) -> None:
        """Stop the agent now: close what waits on it, close its session and the
        connection, end its process group and its terminals."""
        live = self._live
        self.stopping = True
        self.ready = False
        # What is stopped is the agent of now, with its connection and its watcher, read
        # before the first await.
        conn, process, watcher = live.conn, live.process, self._watcher
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                live.close_open("stop", "the session was stopped", "cancelled"), 2
            )
        live.broker.release_all()
        if (
            conn is not None
            and process is not None
            and process.returncode is None
            and (
                "close" in (live.capabilities.get("sessionCapabilities") or {})
                and live.agent_session_id
            )
        ):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close_session(session_id=live.agent_session_id), 2)
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        if process is not None:
            await process.stop()
        if watcher is not None:
            with contextlib.suppress(BaseException):
                await watcher
        await live.requests.close()
        if live.conn is conn:
            live.conn = None
