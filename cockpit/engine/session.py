"""One running session: its agent process, the ACP connection, and the ordered path from
what the agent sends to rows in the store.

Every update the agent sends is tapped by the transport, in arrival order, into this
session's inbox; ONE consumer applies the inbox to the store and emits the frames. The
turn, permission answers and cancel go through the same inbox, so a decision row always
lands in order, and is committed before the agent hears the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, cast

from acp import PROTOCOL_VERSION, RequestError, text_block
from acp.core import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from pydantic import ValidationError

from cockpit import __version__
from cockpit.acp_types import ContentBlock
from cockpit.api import (
    AgentSpec,
    EngineEvent,
    FramesEvent,
    PermissionEvent,
    PermissionRequest,
    ProblemEvent,
    SessionEvent,
    Status,
    StatusEvent,
)
from cockpit.engine.agent_process import AgentProcess
from cockpit.engine.files import Refused, read_text, write_text
from cockpit.engine.mentions import mention_blocks
from cockpit.engine.permissions import (
    REFUSED,
    UNANSWERED,
    ambiguity,
    decision_text,
    find_option,
    option_of_kind,
    policy_choice,
    remembered_key,
)
from cockpit.engine.policy import Policy, decide
from cockpit.engine.processes import describe_exit
from cockpit.engine.terminals import Terminals, command_lines, default_env, shell_command
from cockpit.engine.transport import AgentTransport, preview
from cockpit.engine.wire import BadUpdate, checked_update, permission_request_problem
from cockpit.paths import own_folders
from cockpit.text.mentions import find_mentions
from cockpit.text.textout import command_of, describe_error, listed
from store import (
    Chunk,
    Frame,
    SessionBusy,
    SessionRecord,
    UnknownSession,
    chunk_from_update,
    note,
)
from store.chunks import META_UPDATES, TEXT_UPDATES
from store.store import Store

log = logging.getLogger(__name__)

PermissionPolicy = Callable[[PermissionRequest], str | None]
"""Given a request, the optionId to answer without asking, or None to ask the user."""

FINISHED_TOOL_STATES = frozenset({"completed", "failed", "cancelled"})

DRAIN_TIMEOUT = 20.0
"""Seconds a stopping session waits for what the agent sent to be stored."""

EXIT_GRACE = 3.0
"""Seconds an agent whose connection broke may take to exit by itself before it is stopped."""

STOP_GRACE = 2.0
"""Seconds a stopping session gives a running turn to end (and say so) before the agent
is killed, and then to record how it ended."""

TERMINAL_REFRESH = 0.3
"""Seconds between live updates of a running command's output on its tool card."""

RECEIVED_KEPT = 4096
"""Characters of a malformed update (as JSON) kept on its notice row."""


class StartError(RuntimeError):
    """The agent could not be started; the session holds an error row saying why."""


@dataclass
class _Pending:
    request: PermissionRequest
    answer: asyncio.Future[str | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    deciding: bool = False
    """True once an answer is being recorded: a second one (a cancel meanwhile) waits out."""


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


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Read a shielded task's outcome: its callers have the exception, asyncio need not warn
    that nobody did."""
    if not task.cancelled():
        task.exception()


class _Client:
    """The ACP client side the SDK calls: a thin adapter onto the live session."""

    def __init__(self, live: LiveSession) -> None:
        self._live = live

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Updates are taken, in order, from the transport tap; nothing to do here."""

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Sequence[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        return await self._live.ask_permission(
            tool_call.model_dump(by_alias=True, exclude_none=True),
            [option.model_dump(by_alias=True, exclude_none=True) for option in options],
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=await self._live.read_file(path, line, limit))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        await self._live.write_file(path, content)
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] | None = None,
        env: Sequence[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        variables = {item.name: item.value for item in env or ()}
        terminal_id = await self._live.create_terminal(
            command, list(args or ()), variables, cwd, output_byte_limit
        )
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        terminal = self._live.terminal(terminal_id)
        status = terminal.exit_status()
        return TerminalOutputResponse(
            output=terminal.text(),
            truncated=terminal.truncated,
            exit_status=TerminalExitStatus(exit_code=status[0], signal=status[1])
            if status
            else None,
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = await self._live.wait_terminal(terminal_id)
        code, signal_name = terminal.exit_status() or (None, None)
        return WaitForTerminalExitResponse(exit_code=code, signal=signal_name)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        self._live.kill_terminal(terminal_id)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        await self._live.release_terminal(terminal_id)
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


class LiveSession:
    """A stored session with an agent process attached."""

    def __init__(
        self,
        record: SessionRecord,
        spec: AgentSpec,
        store: Store,
        emit: Callable[[EngineEvent], None],
        *,
        data_dir: Path,
        handshake_timeout: float,
        policy: PermissionPolicy | None = None,
        permissions: Policy | None = None,
    ) -> None:
        self.id = record.id
        self.record = record
        self.spec = spec
        self.root = Path(record.cwd)
        self._store = store
        self._emit = emit
        self._data_dir = data_dir
        self._handshake_timeout = handshake_timeout
        self.policy = policy
        self.permissions = permissions or Policy()
        self.status = Status.CLOSED
        self.process: AgentProcess | None = None
        self.conn: ClientSideConnection | None = None
        self.agent_session_id: str | None = record.agent_session_id
        self.capabilities: dict[str, Any] = {}
        self._inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._consumer: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self.pending: dict[str, _Pending] = {}
        """Requests waiting for the user, by id, in the order they came (the oldest first)."""
        self._pending_by_tool: dict[str, dict[str, _Pending]] = {}
        """The same requests by the tool call they are about, so that the agent's cancel of
        one finds it without looking through all of them."""
        self._always: set[tuple[str, str]] = set()
        self._own = own_folders(data_dir)
        """Cockpit's folders, which no file request and no command's folder may name."""
        self._terminals = Terminals(self.root, default_env(spec.terminal_env), spec.nice, self._own)
        self._allowed_commands: list[str] = []
        """Command lines the agent asked to run and was allowed, this turn: its
        `terminal/create` for one of them needs no second question."""
        self._terminal_tools: dict[str, str] = {}
        self._open_tools: dict[str, str] = {}
        self._permission_ids: dict[Any, str] = {}
        self._turn_lock = asyncio.Lock()
        self._stop_lock = asyncio.Lock()
        self._discarded = False
        self._starting: asyncio.Future[None] | None = None
        self.ready = False
        """True once the handshake is done and the agent's session is open."""
        self.turn_active = False
        self._stop_reason: str | None = None
        """Why Cockpit is stopping a turn that runs (the session closed, Cockpit quit)."""
        self._turn_idle = asyncio.Event()
        self._turn_idle.set()
        self._cancelling = False
        self._stopping = False
        self._exit_reported = False
        self._replayed_users = 0
        self._background: set[asyncio.Future[None]] = set()

    # -- status -------------------------------------------------------------------------------

    def _set_status(self, status: str, detail: str = "", *, turn_ended: bool = False) -> None:
        self.status = status
        self._emit(StatusEvent(self.id, status, detail, turn_ended))

    # -- the ordered inbox --------------------------------------------------------------------

    def _tap(self, message: dict[str, Any]) -> bool:
        """Called by the transport for every incoming message, in arrival order. Returns
        True for a `session/update`: it is taken here, as wire JSON, and the SDK is spared
        validating and dispatching it (a task, a pydantic model and a telemetry span per
        streamed token, only to be turned back into JSON for the store). It never raises:
        a message it cannot read is a notice (and a request still goes to the SDK, which
        answers it), so the loop reading the agent goes on."""
        try:
            return self._take(message)
        except Exception:
            log.exception("session %s: could not read a message from the agent", self.id)
            method = message.get("method")
            self._malformed(f"a {method or 'response'} Cockpit could not read", message)
            return method == "session/update" and "id" not in message

    def _take(self, message: dict[str, Any]) -> bool:
        method = message.get("method")
        params = message.get("params")
        if method == "session/update" and "id" not in message and not isinstance(params, dict):
            self._malformed("a session/update whose params are not an object", params)
            return True  # the SDK would only log a validation traceback and drop it
        if not isinstance(params, dict):
            return False
        if method == "session/update" and "id" not in message:
            if (
                params.get("sessionId") != self.agent_session_id
                and self.agent_session_id is not None
            ):
                self._inbox.put_nowait(
                    note(
                        self.id,
                        "notice",
                        "The agent sent an update for another session "
                        f"({params.get('sessionId')!r}); it was ignored.",
                    )
                )
                return True
            update = params.get("update")
            if isinstance(update, dict):
                try:
                    update = checked_update(update)
                except BadUpdate as problem:
                    self._malformed(f"a session/update ({problem})", update)
                    return True
            if not isinstance(update, Mapping):
                self._malformed("a session/update whose update is not an object", update)
            elif update.get("sessionUpdate") in TEXT_UPDATES and not isinstance(
                update.get("content"), dict
            ):
                self._malformed(
                    f"a text chunk ({update['sessionUpdate']}) whose content is not an object",
                    update,
                )
            else:
                self._inbox.put_nowait(update)
            return True
        elif method == "session/request_permission":
            if (unreadable := permission_request_problem(params)) is not None:
                # The SDK refuses it with an error to the agent; the transcript says so too.
                self._malformed(
                    f"a permission request that does not follow ACP ({unreadable}; answered "
                    "with an error)",
                    params,
                )
                return False
            tool_call = params.get("toolCall")
            if isinstance(tool_call, dict) and isinstance(tool_call.get("toolCallId"), str):
                # The tool call a permission is about becomes (or updates) its row, in order:
                # some agents ask before they ever send the tool call itself.
                self._inbox.put_nowait({**tool_call, "sessionUpdate": "tool_call_update"})
                self._permission_ids[message.get("id")] = tool_call["toolCallId"]
        elif method == "$/cancel_request":
            tool_call_id = self._permission_ids.pop(params.get("requestId"), None)
            asked = self._pending_by_tool.get(tool_call_id, {}) if tool_call_id is not None else {}
            for pending in list(asked.values()):
                if not pending.answer.done():
                    task = asyncio.ensure_future(self._decide(pending, None, "agent"))
                    self._background.add(task)
                    task.add_done_callback(self._background.discard)
        return False

    def _dropped(self, what: str) -> None:
        self._inbox.put_nowait(note(self.id, "notice", f"Ignored {what} from the agent."))

    def _malformed(self, what: str, value: Any) -> None:
        """A notice for an update Cockpit cannot fold, keeping (a bounded preview of) what
        the agent sent."""
        raw = json.dumps(value, ensure_ascii=False, default=repr)
        kept: dict[str, Any] = {"received": raw[:RECEIVED_KEPT]}
        if len(raw) > RECEIVED_KEPT:
            kept["receivedLength"] = len(raw)
        self._inbox.put_nowait(
            note(
                self.id,
                "notice",
                f"Ignored {what} from the agent: {preview(raw.encode('utf-8', 'replace'))}",
                **kept,
            )
        )

    async def _consume(self) -> None:
        """Apply the inbox to the store, in order, and emit frames in batches, until it
        meets a stop marker: everything before the marker is applied and shown, nothing
        after it is taken (a later consumer does)."""
        stopping = False
        while not stopping:
            items: list[Any] = []
            item = await self._inbox.get()
            while True:
                if item is STOP_CONSUMING:
                    stopping = True
                    break
                items.append(item)
                if self._inbox.empty() or len(items) >= 512:
                    break
                item = self._inbox.get_nowait()
            frames: list[Frame] = []
            changed = False
            failed: Exception | None = None
            try:
                changed, failed = await self._apply_items(items, frames)
            finally:  # a consumer cancelled mid-batch still shows what it stored
                self._flush_frames(frames)
            if changed:
                self._emit(SessionEvent(self.id))
            # A write the store keeps and retries (the disk is full) was reported once, by
            # the engine; a toast for each batch of a streaming reply would bury the screen.
            if failed is not None and failed is not self._store.failure:
                self._emit(
                    ProblemEvent(
                        self.id, f"Cockpit could not store what the agent sent: {describe(failed)}"
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
                    chunk = chunk_from_update(self.id, item)
                applied = await self._store.apply(chunk)
            except Exception as error:
                log.exception("could not store an update of session %s", self.id)
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
                self._replayed_users += 1
            try:
                self._track_tools(applied)
            except Exception:  # a consumer that died here lost the rest of its batch
                log.exception("could not follow the tool calls of session %s", self.id)
        return changed, failed

    def _flush_frames(self, frames: list[Frame]) -> None:
        if frames:
            self._emit(FramesEvent(self.id, tuple(frames)))

    def _track_tools(self, frames: list[Frame]) -> None:
        for frame in frames:
            if frame.kind != "tool" or frame.payload is None:
                continue
            tool_call_id = str(frame.payload.get("toolCallId", ""))
            status = str(frame.payload.get("status") or "pending")
            if status in FINISHED_TOOL_STATES:
                self._open_tools.pop(tool_call_id, None)
            else:
                self._open_tools[tool_call_id] = status
            for item in listed(frame.payload.get("content")):  # a 7 there killed the consumer
                if isinstance(item, Mapping) and item.get("type") == "terminal":
                    self._terminal_tools[str(item.get("terminalId"))] = tool_call_id

    def _ensure_consumer(self) -> None:
        if self._discarded:
            raise UnknownSession(self.id)
        if self._consumer is None or self._consumer.done():
            self._consumer = asyncio.create_task(self._consume(), name=f"consume-{self.id}")
            self._consumer.add_done_callback(self._consumer_ended)

    def _consumer_ended(self, consumer: asyncio.Task[None]) -> None:
        """A consumer that stopped at its marker leaves what came after it (a last row of
        Cockpit's own, a barrier someone waits on) to the next one, started at once."""
        if (
            consumer is self._consumer
            and not consumer.cancelled()
            and not self._inbox.empty()
            and not self._discarded
        ):
            self._ensure_consumer()

    async def _settle(self) -> None:
        """Wait until everything queued so far is in the store."""
        self._ensure_consumer()
        barrier = _Barrier(asyncio.get_running_loop().create_future())
        self._inbox.put_nowait(barrier)
        await barrier.done

    async def _record(self, chunk: Chunk) -> None:
        """Queue a row Cockpit writes itself and wait until it is committed; raises the
        store's error when it could not be."""
        self._ensure_consumer()
        durable = _Durable(chunk, asyncio.get_running_loop().create_future())
        self._inbox.put_nowait(durable)
        await durable.done

    async def _tell(self, chunk: Chunk) -> None:
        """Record a row Cockpit writes itself; when the store cannot take it, the user still
        hears of it (a problem event) and the session goes on. A session that is gone
        takes nothing."""
        if self._discarded:
            return
        try:
            await self._record(chunk)
        except Exception as error:
            log.exception("could not record a row of session %s", self.id)
            self._emit(ProblemEvent(self.id, f"{chunk.text} (not saved: {describe(error)})"))

    # -- starting and stopping ----------------------------------------------------------------

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
        """Spawn the agent, shake hands, and open (or reload) its ACP session."""
        self.ready = False
        await self._claim()
        self._stopping = False
        self._exit_reported = False
        self._ensure_consumer()
        self._set_status(Status.STARTING, self.spec.label)
        log_path = self._data_dir / "logs" / f"{self.id}.log"
        try:
            self.process = await AgentProcess.spawn(
                self.spec, self.root, log_path, {"COCKPIT_DATA_DIR": str(self._data_dir)}
            )
        except (FileNotFoundError, NotADirectoryError, PermissionError) as error:
            await self._fail(str(error))
        transport = AgentTransport(
            self.process.stdout, self.process.stdin, tap=self._tap, on_dropped=self._dropped
        )
        self.conn = ClientSideConnection(cast(Any, _Client(self)), transport)
        self._watcher = asyncio.create_task(self._watch(self.process), name=f"watch-{self.id}")
        try:
            await self._handshake()
        except StartError:
            raise
        except TimeoutError:
            await self._fail(
                f"The agent did not answer within {self._handshake_timeout:g} s while starting.",
                stop=True,
            )
        except (RequestError, ValidationError, ConnectionError, OSError) as error:
            await self._fail(f"The agent failed while starting: {describe(error)}", stop=True)
        except Exception as error:  # a store error, or a bug: the session says so and goes on
            log.exception("session %s did not start", self.id)
            await self._fail(f"Cockpit could not start the agent: {describe(error)}", stop=True)
        self.ready = True
        self._set_status(Status.READY)

    async def _claim(self) -> None:
        """Become the session's only writer before an agent runs for it. When another
        Cockpit writes it, SessionBusy says so on the session's status (not as a row: the
        transcript is the other Cockpit's to write)."""
        try:
            await self._store.claim(self.id)
        except SessionBusy as error:
            self._set_status(Status.ERROR, str(error))
            raise

    async def _fail(self, message: str, *, stop: bool = False) -> NoReturn:
        if stop:
            await self._shutdown()
        tail = self.process.stderr_tail() if self.process is not None else ""
        if tail:
            message += f"\n\nLast lines the agent wrote to stderr:\n{tail}"
        self._exit_reported = True
        await self._tell(note(self.id, "error", message))
        try:
            await self._store.update_session(self.id, status=Status.ERROR)
        except Exception:
            log.exception("could not store the status of session %s", self.id)
        self._set_status(Status.ERROR, message.splitlines()[0])
        raise StartError(message)

    async def _handshake(self) -> None:
        assert self.conn is not None
        init = await asyncio.wait_for(
            self.conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                    terminal=True,
                ),
                client_info=Implementation(name="cockpit", title="Cockpit", version=__version__),
            ),
            self._handshake_timeout,
        )
        if init.protocol_version != PROTOCOL_VERSION:
            await self._fail(
                f"The agent speaks ACP version {init.protocol_version}; Cockpit speaks version "
                f"{PROTOCOL_VERSION}.",
                stop=True,
            )
        self.capabilities = (
            init.agent_capabilities.model_dump(by_alias=True, exclude_none=True)
            if init.agent_capabilities
            else {}
        )
        if self.agent_session_id is None:
            await self._new_session()
        else:
            await self._reopen()

    async def _new_session(self) -> None:
        assert self.conn is not None
        response = await asyncio.wait_for(
            self.conn.new_session(cwd=str(self.root), mcp_servers=[]), self._handshake_timeout
        )
        self.agent_session_id = response.session_id
        await self._save_session_state(response)

    async def _save_session_state(self, response: Any) -> None:
        fields: dict[str, Any] = {"agent_session_id": self.agent_session_id, "status": Status.READY}
        if getattr(response, "modes", None) is not None:
            fields["modes"] = response.modes.model_dump(by_alias=True, exclude_none=True)
        if getattr(response, "config_options", None) is not None:
            fields["config_options"] = [
                o.model_dump(by_alias=True, exclude_none=True) for o in response.config_options
            ]
        await self._store.update_session(self.id, **fields)
        self._emit(SessionEvent(self.id))

    async def _reopen(self) -> None:
        """Reconnect to the agent's own session: load it (replay), resume it, or say honestly
        that the agent starts afresh."""
        assert self.conn is not None
        assert self.agent_session_id is not None
        stored = await self._store.page_before(self.id, max_rows=1)
        session_caps = self.capabilities.get("sessionCapabilities") or {}
        if self.capabilities.get("loadSession"):
            window = await self._store.begin_replay(self.id)
            self._replayed_users = 0
            try:
                response = await asyncio.wait_for(
                    self.conn.load_session(
                        cwd=str(self.root), session_id=self.agent_session_id, mcp_servers=[]
                    ),
                    self._handshake_timeout * 4,
                )
            except RequestError as error:
                await self._settle()
                await self._store.end_replay(self.id)
                await self._fresh_session(
                    f"the agent could not load its session ({describe(error)})"
                )
                return
            except BaseException:  # it timed out, or died: what it sends next is live again
                with contextlib.suppress(Exception):
                    await self._store.end_replay(self.id)
                raise
            await self._settle()
            await self._store.end_replay(self.id)
            turns = self._store.turn_of(self.id) or 0
            if window.keep:
                message = (
                    "Reconnected: the agent reloaded its session and replayed "
                    f"{self._replayed_users} turn(s) into the transcript."
                )
            elif stored.rows and turns > 0 and self._replayed_users == 0:
                message = (
                    f"Reconnected, but the agent replayed none of the {turns} earlier turn(s): it "
                    "may not remember them. The transcript above is Cockpit's own record."
                )
            else:
                message = (
                    "Reconnected: the agent reloaded its session; the transcript is "
                    "Cockpit's own record."
                )
            await self._tell(note(self.id, "notice", message))
            await self._save_session_state(response)
        elif "resume" in session_caps:
            try:
                resumed = await asyncio.wait_for(
                    self.conn.resume_session(
                        cwd=str(self.root), session_id=self.agent_session_id, mcp_servers=[]
                    ),
                    self._handshake_timeout,
                )
            except RequestError as error:
                await self._fresh_session(
                    f"the agent could not resume its session ({describe(error)})"
                )
                return
            await self._tell(note(self.id, "notice", "Reconnected: the agent resumed its session."))
            await self._save_session_state(resumed)
        else:
            await self._fresh_session("the agent cannot reload sessions")

    async def _fresh_session(self, why: str) -> None:
        self.agent_session_id = None
        await self._new_session()
        await self._tell(
            note(
                self.id,
                "notice",
                f"Started a new agent session: {why}. The agent does not remember the earlier "
                "turns; the transcript above is Cockpit's own record.",
            )
        )

    async def _watch(self, process: AgentProcess) -> None:
        """Notice the agent's death even when no call is pending."""
        code = await process.wait()
        if self._stopping or self._exit_reported:
            return
        if self.turn_active:
            return  # the turn reports it, with the exit code
        await self._report_exit(code)

    async def _report_exit(self, code: int) -> None:
        if self._exit_reported:
            return
        self._exit_reported = True
        self.ready = False
        await self._close_open("exit", "the agent exited", "failed")
        tail = self.process.stderr_tail() if self.process is not None else ""
        message = f"The agent exited with {describe_exit(code)}."
        if tail:
            message += f"\n\nLast lines the agent wrote to stderr:\n{tail}"
        message += "\n\nSend a prompt to restart it."
        await self._tell(note(self.id, "error", message))
        try:
            await self._store.update_session(self.id, status=Status.EXITED)
        except Exception:
            log.exception("could not store the status of session %s", self.id)
        self._set_status(Status.EXITED, f"exited with {describe_exit(code)}")
        if self.conn is not None:
            await self.conn.close()
        await self._terminals.close()

    async def stop(self, reason: str = "the session was closed") -> None:
        """Stop the agent (its whole process group); the transcript stays. A turn that runs
        is cancelled first, and ends with a row saying why it stopped (`reason`). Stops
        asked for at once (a close, then a quit) run one after the other."""
        async with self._stop_lock:
            await self._stop(reason)

    async def _stop(self, reason: str) -> None:
        await self._cut_start(reason)
        if self.turn_active:
            self._stop_reason = reason
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.cancel(), 2)
            with contextlib.suppress(TimeoutError):  # the agent may end the turn by itself
                await asyncio.wait_for(self._turn_idle.wait(), STOP_GRACE)
        await self._shutdown()
        with contextlib.suppress(TimeoutError):  # and the turn records how it ended
            await asyncio.wait_for(self._turn_idle.wait(), STOP_GRACE)
        if self.status not in (Status.ERROR, Status.EXITED):
            with contextlib.suppress(Exception):
                await self._store.update_session(self.id, status=Status.CLOSED)
            self._set_status(Status.CLOSED)
        consumer = self._consumer
        if consumer is not None and not consumer.done():
            # Everything the agent sent before it stopped is stored and shown before the
            # session is let go: the consumer ends at a marker after it (a loaded machine
            # takes its time; only a hung store is given up on, and then cut short).
            self._inbox.put_nowait(STOP_CONSUMING)
            try:
                await asyncio.wait_for(asyncio.shield(consumer), DRAIN_TIMEOUT)
            except Exception:
                log.exception("session %s: what the agent sent was not all stored", self.id)
                consumer.cancel()
                with contextlib.suppress(BaseException):
                    await consumer
        if self._consumer is consumer:  # not one started meanwhile for a last row
            self._consumer = None
        with contextlib.suppress(Exception):
            await self._store.release(self.id)  # another Cockpit may continue it now

    async def _cut_start(self, reason: str) -> None:
        """End a start still under way before stopping: the agent it spawns is stopped with
        the rest (a session deleted while its agent started left that agent running,
        writing into a session that was gone)."""
        starting = self._starting
        if starting is None or starting.done() or starting is asyncio.current_task():
            return
        starting.cancel()
        await asyncio.wait({starting})
        await self._tell(
            note(self.id, "notice", f"The agent was stopped while it started: {reason}.")
        )

    async def _shutdown(self) -> None:
        self._stopping = True
        self.ready = False
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self._close_open("stop", "the session was stopped", "cancelled"), 2
            )
        for pending in list(self.pending.values()):
            if not pending.answer.done():
                pending.answer.set_result(None)
        conn, process = self.conn, self.process
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
        if self._watcher is not None:
            with contextlib.suppress(BaseException):
                await self._watcher
        await self._terminals.close()
        self.conn = None

    def discard(self) -> None:
        """Cancel what still runs for a session that is gone (deleted after its stop, or
        the engine closed): nothing is written for it from now on."""
        self._discarded = True
        if self._consumer is not None:
            self._consumer.cancel()
            self._consumer = None
        for task in list(self._background):
            task.cancel()

    @property
    def running(self) -> bool:
        """True while an agent process is attached and alive."""
        return (
            self.process is not None and self.process.returncode is None and self.conn is not None
        )

    # -- turns --------------------------------------------------------------------------------

    async def prompt(self, text: str, blocks: Sequence[ContentBlock] = ()) -> str:
        """Run one turn; returns its stop reason ("error" when it failed: the session then
        holds a row saying why). The prompt is stored before anything else happens, and one
        typed while the agent starts waits for it to be ready."""
        async with self._turn_lock:
            await self._claim()  # SessionBusy before the prompt is stored or sent
            payload = (
                {"blocks": [b.model_dump(by_alias=True, exclude_none=True) for b in blocks]}
                if blocks
                else None
            )
            _, frames = await self._store.begin_turn(self.id, text, payload)
            self._emit(FramesEvent(self.id, tuple(frames)))
            await self._name_after(text)
            try:
                await self.start()  # the prompt is stored first: a failed start loses no word
            except StartError:
                await self._end_turn("error")
                return "error"
            return await self._run_turn(text, blocks)

    async def _run_turn(self, text: str, blocks: Sequence[ContentBlock]) -> str:
        conn, agent_session_id = self.conn, self.agent_session_id
        if conn is None or agent_session_id is None:  # it died between its start and now
            await self._tell(
                note(self.id, "error", "The agent stopped before the prompt went out.")
            )
            await self._end_turn("error")
            return "error"
        self.turn_active = True
        self._turn_idle.clear()
        self._cancelling = False
        self._stop_reason = None
        self._allowed_commands.clear()
        self._set_status(Status.WORKING)
        stop_reason = "error"
        try:
            await self._store.update_session(self.id, status=Status.WORKING)
            mentioned = await self._mentions(text)
            response = await conn.prompt(
                session_id=agent_session_id,
                prompt=[text_block(text), *blocks, *mentioned],
            )
            stop_reason = str(response.stop_reason)
            await self._settle()
            await self._close_unanswered()
            usage = _usage_of(response)
            if usage:
                await self._tell(Chunk(self.id, "usage_update", data={"lastTurn": usage}))
                self._emit(SessionEvent(self.id))
            if self._stop_reason is not None:
                await self._tell_stopped()
            elif stop_reason != "end_turn":  # a reply cut short says so, read back too
                words = _STOP_WORDS.get(stop_reason, f"The turn stopped: {stop_reason}.")
                await self._tell(note(self.id, "notice", words))
        except ConnectionError:
            stop_reason = "error"
            code = await self._exit_code()
            await self._settle()
            if self._stop_reason is not None:
                await self._tell_stopped()
            else:
                await self._report_exit(code if code is not None else -1)
        except (RequestError, ValidationError) as error:
            stop_reason = "error"
            await self._settle()
            await self._tell(
                note(self.id, "error", f"The agent failed the turn: {describe(error)}")
            )
        except Exception as error:  # a store error, or a bug: the turn fails visibly
            stop_reason = "error"
            log.exception("the turn of session %s failed", self.id)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._settle(), 2)
            await self._tell(
                note(self.id, "error", f"The turn failed inside Cockpit: {describe(error)}")
            )
        finally:
            self.turn_active = False
            self._turn_idle.set()
        await self._end_turn(stop_reason)
        return stop_reason

    async def _exit_code(self) -> int | None:
        """The agent's exit code once the connection to it broke. It is given a moment to
        exit by itself, and then stopped: an agent that closed its output and lives on
        held the turn, and `cockpit run`, forever."""
        process = self.process
        if process is None:
            return None
        try:
            return await asyncio.wait_for(asyncio.shield(process.wait()), EXIT_GRACE)
        except TimeoutError:
            log.warning(
                "session %s: the connection broke and the agent lives; stopping it", self.id
            )
            await self._tell(
                note(
                    self.id,
                    "notice",
                    "The connection to the agent broke while it went on running: Cockpit "
                    "stopped it.",
                )
            )
            return await process.stop()

    async def _tell_stopped(self) -> None:
        await self._tell(
            note(
                self.id,
                "notice",
                f"The turn was stopped: {self._stop_reason}. The reply above is cut short.",
            )
        )

    async def _end_turn(self, stop_reason: str) -> None:
        """Seal the turn's last message and say the session is ready again; a store that
        fails here is reported, and the session still leaves the working state."""
        try:
            await self._store.end_turn(self.id)
            if self.status not in (Status.EXITED, Status.ERROR):
                await self._store.update_session(self.id, status=Status.READY)
        except Exception as error:
            log.exception("could not end the turn of session %s", self.id)
            problem = f"Could not save the end of the turn: {describe(error)}"
            self._emit(ProblemEvent(self.id, problem))
        self._cancelling = False
        if self.status not in (Status.EXITED, Status.ERROR, Status.CLOSED):
            self._set_status(Status.READY, stop_reason, turn_ended=True)

    async def _mentions(self, text: str) -> list[ContentBlock]:
        """Files the prompt mentions with `@path`: embedded when the agent takes embedded
        context, else as links; a mention that cannot be sent becomes a notice row."""
        if not find_mentions(text):
            return []
        embedded = bool((self.capabilities.get("promptCapabilities") or {}).get("embeddedContext"))
        blocks, problems = await asyncio.to_thread(mention_blocks, text, self.root, embedded)
        for problem in problems:
            await self._tell(note(self.id, "notice", problem))
        return list(blocks)

    async def _name_after(self, prompt: str) -> None:
        """A session is titled by its first prompt line until the user or the agent names it."""
        record = await self._store.get_session(self.id)
        if record is not None and record.title is None:
            await self._store.update_session(self.id, title=first_line(prompt))
            self._emit(SessionEvent(self.id))

    async def cancel(self) -> bool:
        """Cancel the running turn as the spec says; the prompt still returns its stop reason."""
        if not self.turn_active or self.conn is None or self.agent_session_id is None:
            return False
        self._cancelling = True
        self._set_status(Status.CANCELLING)
        with contextlib.suppress(ConnectionError):
            await self.conn.cancel(session_id=self.agent_session_id)
        await self._close_open("cancel", None, "cancelled")
        return True

    async def _close_unanswered(self) -> None:
        """The agent ended its turn while its questions waited: none is waiting any more,
        and the row says so (not that the user or the turn cancelled it)."""
        await self._decide_pending(UNANSWERED, "the agent ended its turn first")

    async def _decide_pending(self, decided_by: str, reason: str | None) -> None:
        """Answer every pending request "cancelled", together: each still writes its row
        before its answer, and a thousand waiting cost one pass of the store's writer, not
        a thousand turns of it."""
        await asyncio.gather(
            *(
                self._decide(pending, None, decided_by, reason=reason)
                for pending in list(self.pending.values())
            )
        )

    async def _close_open(self, decided_by: str, reason: str | None, tool_status: str) -> None:
        """Answer every pending permission request `cancelled` (saying why) and mark every
        open tool call `tool_status`: nothing stays waiting on an agent that will not go on."""
        await self._decide_pending(decided_by, reason)
        await self._settle()
        for tool_call_id in list(self._open_tools):
            self._inbox.put_nowait(
                Chunk(
                    self.id,
                    "tool_call_update",
                    data={"toolCallId": tool_call_id, "status": tool_status},
                    from_cockpit=True,
                )
            )
        await self._settle()

    async def set_mode(self, mode_id: str) -> None:
        """Switch the agent's session mode."""
        assert self.conn is not None
        assert self.agent_session_id is not None
        await self.conn.set_session_mode(session_id=self.agent_session_id, mode_id=mode_id)
        self._inbox.put_nowait(
            Chunk(self.id, "current_mode_update", data={"currentModeId": mode_id})
        )
        await self._settle()
        self._emit(SessionEvent(self.id))

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """Set a config option (the model is one); the agent answers with the full list."""
        assert self.conn is not None
        assert self.agent_session_id is not None
        response = await self.conn.set_config_option(
            config_id=config_id, session_id=self.agent_session_id, value=value
        )
        options = [o.model_dump(by_alias=True, exclude_none=True) for o in response.config_options]
        self._inbox.put_nowait(
            Chunk(self.id, "config_option_update", data={"configOptions": options})
        )
        await self._settle()
        self._emit(SessionEvent(self.id))

    # -- permissions --------------------------------------------------------------------------

    async def ask_permission(
        self, tool_call: dict[str, Any], options: list[dict[str, Any]]
    ) -> RequestPermissionResponse:
        """A permission request: answered by a remembered "always", a policy, or the user."""
        request = PermissionRequest(
            uuid.uuid4().hex[:10], self.id, tool_call, tuple(options), self._store.now()
        )
        pending = _Pending(request)
        why = ambiguity(request.options)
        chosen = None
        if why is None and not (self._cancelling or self._stopping):
            chosen = await self._automatic(request)
        if why is not None:
            await self._decide(pending, None, REFUSED, reason=why)
        elif self._cancelling or self._stopping:  # checked after the rules were read too:
            await self._decide(pending, None, "cancel")  # a cancel meanwhile closed the rest
        elif chosen is not None:
            await self._decide(pending, *chosen)
        elif self._exit_reported or not self.running:
            await self._decide(pending, None, "exit", reason="the agent exited")
        else:
            self.pending[request.id] = pending
            self._pending_by_tool.setdefault(request.tool_call_id, {})[request.id] = pending
            self._set_status(Status.WAITING, request.title)
            self._emit(PermissionEvent(request, resolved=False))
        option_id = await pending.answer
        if option_id is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option_id)
        )

    async def _automatic(self, request: PermissionRequest) -> tuple[str, str, str | None] | None:
        """An answer that needs no one: a remembered "always", the caller's policy (the
        command line's --yes), or Cockpit's permission policy for this session."""
        if remembered_key(request.kind, request.title) in self._always:
            option = option_of_kind(request.options, ("allow_always", "allow_once"))
            if option is not None:
                return str(option["optionId"]), "remembered", None
        if self.policy is not None:
            option_id = self.policy(request)
            if option_id is not None:
                return option_id, "policy", None
        rules, overrides = await self._rules()
        scope = "session" if request.kind in overrides else "global"
        decision = decide(rules, request.tool_call, self.root, scope)
        if decision.action == "ask":
            return None
        option = policy_choice(request.options, allow=decision.action == "allow")
        return (str(option["optionId"]), "policy", decision.reason) if option is not None else None

    async def _rules(self) -> tuple[Policy, dict[str, str]]:
        """The permission rules in force in this session, and the session's own among them."""
        record = await self._store.get_session(self.id)
        overrides = (record.info or {}).get("policy") if record is not None else None
        own = dict(overrides) if isinstance(overrides, dict) else {}
        return self.permissions.with_overrides(own), own

    async def answer(
        self, request_id: str, option_id: str | None, decided_by: str = "user"
    ) -> None:
        """The user's answer to a pending request (None cancels it)."""
        pending = self.pending.get(request_id)
        if pending is None:
            raise KeyError(f"no pending permission request {request_id!r}")
        if option_id is not None and find_option(pending.request.options, option_id) is None:
            raise ValueError(f"the agent offered no option {option_id!r}")
        await self._decide(pending, option_id, decided_by)

    async def _decide(
        self,
        pending: _Pending,
        option_id: str | None,
        decided_by: str,
        rule: str | None = None,
        *,
        reason: str | None = None,
    ) -> None:
        """Write the decision row, THEN answer the agent. `reason` says why a request was
        cancelled when it was not the user's cancel (the agent exited...)."""
        if pending.answer.done() or pending.deciding:
            return
        pending.deciding = True
        request = pending.request
        option = find_option(request.options, option_id) if option_id is not None else None
        if decided_by == REFUSED:
            text = f"Refused: {request.title} ({reason}); the agent was told it was cancelled."
        elif decided_by == UNANSWERED:
            text = f"Unanswered: {request.title} ({reason})"
        elif option is None and reason:
            text = f"Cancelled: {request.title} ({reason})"
        else:
            text = decision_text(request.title, option, decided_by, rule)
        try:
            await self._record(
                note(
                    self.id,
                    "permission",
                    text,
                    toolCallId=request.tool_call_id,
                    rule=rule,
                    **({"reason": reason} if reason else {}),
                    optionId=option_id,
                    optionKind=option.get("kind") if option else None,
                    decidedBy=decided_by,
                    options=list(request.options),
                )
            )
        except Exception as error:
            # Nothing the transcript does not hold may be allowed: the agent hears
            # "cancelled", and the user is told why.
            log.exception("could not record a decision of session %s", self.id)
            option_id, option = None, None
            await self._tell(
                note(
                    self.id,
                    "error",
                    f"Could not record the answer to {request.title} ({describe(error)}); the "
                    "agent was told the request was cancelled.",
                )
            )
        if option is not None and option.get("kind") == "allow_always":
            self._always.add(remembered_key(request.kind, request.title))
        allowed = option is not None and str(option.get("kind")).startswith("allow")
        if allowed and (line := command_of(request.tool_call)) is not None:
            self._allowed_commands.append(line)
        if not pending.answer.done():
            pending.answer.set_result(option_id)
        if self.pending.pop(request.id, None) is not None:
            asked = self._pending_by_tool.get(request.tool_call_id, {})
            asked.pop(request.id, None)
            if not asked:
                self._pending_by_tool.pop(request.tool_call_id, None)
            self._emit(PermissionEvent(request, resolved=True, option_id=option_id))
            if not self.pending and self.status == Status.WAITING:
                self._set_status(Status.WORKING)

    # -- files and terminals ------------------------------------------------------------------

    async def read_file(self, path: str, line: int | None, limit: int | None) -> str:
        try:
            return await asyncio.to_thread(read_text, self.root, path, line, limit, self._own)
        except FileNotFoundError as error:
            if self.spec.missing_file == "empty":
                return ""
            raise RequestError.resource_not_found(path) from error
        except (OSError, ValueError) as error:  # refused, too large, a folder, unreadable
            await self._refused("read", path, error)
            raise RequestError.invalid_params({"path": path, "reason": str(error)}) from error

    async def write_file(self, path: str, content: str) -> None:
        try:
            await asyncio.to_thread(write_text, self.root, path, content, self._own)
        except (OSError, ValueError) as error:
            await self._refused("write", path, error)
            raise RequestError.invalid_params({"path": path, "reason": str(error)}) from error

    async def _refused(self, action: str, path: str, error: Exception) -> None:
        """A row for every file request Cockpit did not carry out (some were refused in
        silence, and a NUL in a path came back as an internal error)."""
        shown = preview(path.encode("utf-8", "replace"))
        await self._tell(
            note(self.id, "notice", f"Refused the agent's {action} of {shown}: {error}.")
        )

    async def create_terminal(
        self, command: str, args: list[str], env: dict[str, str], cwd: str | None, limit: int | None
    ) -> str:
        if not await self._may_run(shell_command(command, args), cwd):
            raise RequestError.invalid_params(
                {"command": command, "reason": "the command was not allowed"}
            )
        try:
            terminal = await self._terminals.create(command, args, env, cwd, limit)
        except Refused as error:
            await self._refused("terminal in", cwd or "", error)
            raise RequestError.invalid_params({"cwd": cwd, "reason": str(error)}) from error
        except OSError as error:
            raise RequestError.invalid_params({"command": command, "reason": str(error)}) from error
        watcher = asyncio.create_task(self._watch_terminal(terminal), name=terminal.id)
        self._background.add(watcher)
        watcher.add_done_callback(self._background.discard)
        return terminal.id

    async def _may_run(self, argv: Sequence[str], cwd: str | None) -> bool:
        """Whether a command the agent wants run in a terminal may run. The policy's
        `execute` rule sees every one: `allow` runs it; otherwise a command the agent asked
        for this turn, and was allowed, runs once, and any other is put to the rules and
        the user like the agent's own requests (a `reject` rule refuses it, with a row)."""
        lines = command_lines(argv)
        rules, _ = await self._rules()
        if rules.action("execute") == "allow":
            return True
        for line in lines:
            if line in self._allowed_commands:
                self._allowed_commands.remove(line)
                return True
        shown = lines[0]
        response = await self.ask_permission(
            {
                "toolCallId": f"terminal-{uuid.uuid4().hex[:8]}",
                "title": f"Run {shown}",
                "kind": "execute",
                "rawInput": {"command": shown, "cwd": cwd or str(self.root)},
            },
            [
                {"optionId": "run", "name": "Run it", "kind": "allow_once"},
                {"optionId": "skip", "name": "Do not run it", "kind": "reject_once"},
            ],
        )
        outcome = response.outcome
        return isinstance(outcome, AllowedOutcome) and outcome.option_id == "run"

    async def _watch_terminal(self, terminal: Any) -> None:
        """While a command runs, keep its output on its tool call row a few times a second,
        so the card shows it live (and a crash of Cockpit loses at most that interval)."""
        shown = -1
        while terminal.process.returncode is None and not terminal.released:
            await asyncio.sleep(TERMINAL_REFRESH)
            if terminal.received != shown and terminal.id in self._terminal_tools:
                shown = terminal.received
                self._attach_output(terminal)

    def terminal(self, terminal_id: str) -> Any:
        try:
            return self._terminals.get(terminal_id)
        except KeyError as error:
            raise RequestError.invalid_params(
                {"terminalId": terminal_id, "reason": str(error)}
            ) from error

    async def wait_terminal(self, terminal_id: str) -> Any:
        self.terminal(terminal_id)
        terminal = await self._terminals.wait(terminal_id)
        self._attach_output(terminal)
        return terminal

    def kill_terminal(self, terminal_id: str) -> None:
        self.terminal(terminal_id)
        self._terminals.kill(terminal_id)

    async def release_terminal(self, terminal_id: str) -> None:
        self.terminal(terminal_id)
        terminal = await self._terminals.release(terminal_id)
        self._attach_output(terminal)

    def _attach_output(self, terminal: Any) -> None:
        """Keep a terminal's output on its tool call row, so it survives restarts."""
        tool_call_id = self._terminal_tools.get(terminal.id)
        if tool_call_id is None:
            return
        status = terminal.exit_status()
        output = {
            "output": terminal.text(),
            "truncated": terminal.truncated,
            "exitStatus": {"exitCode": status[0], "signal": status[1]} if status else None,
            "command": terminal.argv,
        }
        self._inbox.put_nowait(
            Chunk(
                self.id,
                "tool_call_update",
                data={"toolCallId": tool_call_id, "terminalOutput": {terminal.id: output}},
                from_cockpit=True,
            )
        )


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


def describe(error: BaseException) -> str:
    """An error as one line for the user."""
    if isinstance(error, RequestError):
        data = f" {error.data}" if getattr(error, "data", None) else ""
        return f"{error} (code {error.code}){data}"
    if isinstance(error, ValidationError):
        first = error.errors()[0]["msg"]
        return f"it sent a reply Cockpit cannot read ({error.error_count()} problem(s): {first})"
    return describe_error(error)
