"""`RemoteEngine`: the contract (`cockpit.api.EngineAPI`) over the service's socket.

Each request is a `cockpit/call` of its own name (`cockpit.api.METHODS`); the questions the
contract answers at once (a session's status, what waits, what is unread) are answered from
a mirror of the service's state, taken when the client attaches and kept current by the
events that follow. After a cut the client attaches again, takes the state afresh and tells
its listeners to read again (`ResyncEvent`): a read replaces what they hold, and the frames
after it are guarded by length, so nothing is lost or doubled across the cut.

This module holds only the contract's methods. The connection and attaching again are
`cockpit.remote.link`, the mirror `cockpit.remote.mirror`, the sending in order
`cockpit.remote.sending`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from cockpit import protocol
from cockpit.api import (
    AgentInfo,
    AgentSpec,
    Checkpoint,
    CleanupItem,
    Contender,
    EngineAPI,
    EngineEvent,
    FileChange,
    FileMatch,
    Listener,
    McpServerState,
    MergeResult,
    ModelCalls,
    Page,
    PermissionRequest,
    Plan,
    PlanEntry,
    ProblemEvent,
    ProjectInfo,
    RepositoryInfo,
    RestorePlan,
    Row,
    ServiceStopped,
    SessionRecord,
    SignIn,
    Status,
    WorktreeListing,
    WorktreeRequest,
    WorktreeStatus,
)
from cockpit.listeners import Listeners
from cockpit.pending import first_waiting, waiting, waiting_count
from cockpit.remote.link import Connector, ServiceLink
from cockpit.remote.mirror import Mirror
from cockpit.remote.sending import Sending


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
        self._listeners = Listeners()
        self._sending = Sending()
        self._mirror = Mirror()
        self._link = ServiceLink(
            connector,
            self._sending,
            on_event=self._on_event,
            on_state=self._mirror.take,
            on_attached=self._on_attached,
            emit=self._emit,
            name=name,
            hello_timeout=hello_timeout,
            send_environment=send_environment,
        )
        self._shown: str | None = None
        self._watched: frozenset[str] = frozenset()
        self._asking_agents = False
        self._unwritten = (0, 0)

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
        await engine._link.open()
        return engine

    @property
    def service(self) -> dict[str, Any]:
        """What the service said of itself when this client attached (pid, version)."""
        return self._link.service

    @property
    def links_lost(self) -> int:
        """Connections lost while attached; each is told by one ResyncEvent once attached
        again (a cut while attaching again only costs a try)."""
        return self._link.links_lost

    @property
    def reattaching(self) -> bool:
        """Trying to attach again by itself after a cut (see `ServiceLink.reattaching`)."""
        return self._link.reattaching

    def link_said(self, words: str) -> None:
        """The link's own command said `words` (one clean line): while the link is cut, they
        say why better than its usual words do."""
        self._link.said(words)

    # -- what the link hands back -------------------------------------------------------------

    def _on_event(self, event: EngineEvent) -> None:
        """An event of the service: the mirror takes it, then the listeners hear it."""
        unknown = self._mirror.apply(event)
        if unknown is not None:
            self._sending.background(self._learn_spec(unknown))
        self._emit(event)

    def _on_attached(self) -> None:
        """Attached (again): say what this client shows and watches."""
        self._send_watch()
        if self._shown is not None:
            self._link.notify(protocol.SHOW, {"session": self._shown})

    async def _learn_spec(self, session_id: str) -> None:
        try:
            record = await self.session(session_id)
        except KeyError:
            self._mirror.specs.pop(session_id, None)  # deleted
            return
        self._mirror.specs[session_id] = await self._call("agent_of", record=record)

    def _emit(self, event: EngineEvent) -> None:
        self._listeners.emit(event)

    async def _call(self, name: str, **args: Any) -> Any:
        """Run one of the engine's methods in the service; its result, or its error."""
        return await self._link.call(name, **args)

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
        return self._link.problem

    @property
    def service_stopped(self) -> ServiceStopped | None:
        return self._link.stopped

    async def reattach(self) -> None:
        """Attach again to a service that stopped for good: the connector starts one."""
        await self._link.reattach()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self._listeners.subscribe(listener)

    async def close(self, reason: str = "Cockpit quit") -> None:
        """Detach: the service and its agents go on."""
        if self._link.closing:
            return
        with contextlib.suppress(Exception):
            if self._link.attached:
                self._unwritten = await asyncio.wait_for(self._call("unwritten"), 2)
        await self._link.close()

    def now(self) -> float:
        return time.time() + self._mirror.clock_offset

    def unwritten(self) -> tuple[int, int]:
        return tuple(self._unwritten)  # type: ignore[return-value]

    def agents(self) -> list[AgentInfo]:
        """The agents the service knew when last asked. Each call asks again, in the
        background (the service reads its `agents.toml` when it is used), so a list
        shown again shows what the file says now."""
        if self._link.attached and not self._asking_agents and _loop_runs():
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

    async def folders(self, partial: str) -> list[str]:
        return list(await self._call("folders", partial=partial))

    def show(self, session_id: str | None) -> None:
        self._shown = session_id
        self._send_watch()
        self._link.notify(protocol.SHOW, {"session": session_id})
        if session_id is not None:
            self._mirror.unread.discard(session_id)

    def watch(self, session_ids: Collection[str]) -> None:
        self._watched = frozenset(session_ids)
        self._send_watch()

    def _send_watch(self) -> None:
        """Ask for the frames of what is shown and watched, and of nothing else."""
        sessions = set(self._watched) | ({self._shown} if self._shown else set())
        self._link.notify(protocol.WATCH, {"sessions": sorted(sessions)})

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
        worktree: WorktreeRequest | None = None,
    ) -> SessionRecord:
        record: SessionRecord = await self._call(
            "create_session", agent=agent, cwd=str(cwd), title=title, run=run, worktree=worktree
        )
        if isinstance(agent, AgentSpec):
            self._mirror.specs[record.id] = agent
        return record

    async def repository(self, cwd: str) -> RepositoryInfo | None:
        info: RepositoryInfo | None = await self._call("repository", cwd=cwd)
        return info

    async def race(
        self,
        agents: Sequence[str],
        cwd: str,
        prompt: str,
        base: str = "HEAD",
        allow: Sequence[str] | None = (),
    ) -> list[SessionRecord]:
        kinds = None if allow is None else list(allow)
        made: list[SessionRecord] = await self._call(
            "race", agents=list(agents), cwd=cwd, prompt=prompt, base=base, allow=kinds
        )
        return made

    async def race_standings(self, race_id: str) -> list[Contender]:
        found: list[Contender] = await self._call("race_standings", race_id=race_id)
        return found

    async def keep_contender(self, session_id: str) -> list[str]:
        said: list[str] = await self._call("keep_contender", session_id=session_id)
        return said

    async def project(self, cwd: str, base: str = "HEAD") -> ProjectInfo:
        info: ProjectInfo = await self._call("project", cwd=cwd, base=base)
        return info

    async def approve_command(self, repository: str, kind: str, command: str) -> None:
        await self._call("approve_command", repository=repository, kind=kind, command=command)

    async def worktree_status(self, session_id: str) -> WorktreeStatus | None:
        status: WorktreeStatus | None = await self._call("worktree_status", session_id=session_id)
        return status

    async def worktrees(self) -> list[WorktreeListing]:
        return list(await self._call("worktrees"))

    async def archive_worktree(self, session_id: str) -> str:
        said: str = await self._call("archive_worktree", session_id=session_id)
        return said

    async def restore_worktree(self, session_id: str) -> str:
        said: str = await self._call("restore_worktree", session_id=session_id)
        return said

    async def cleanup_plan(self, merged_only: bool = False) -> list[CleanupItem]:
        return list(await self._call("cleanup_plan", merged_only=merged_only))

    async def clean_worktrees(self, session_ids: Sequence[str], force: bool = False) -> list[str]:
        said = await self._call("clean_worktrees", session_ids=list(session_ids), force=force)
        return list(said)

    async def worktree_changes(self, session_id: str) -> list[FileChange]:
        return list(await self._call("worktree_changes", session_id=session_id))

    async def commit_worktree(self, session_id: str, message: str) -> str:
        return str(await self._call("commit_worktree", session_id=session_id, message=message))

    async def merge_worktree(
        self, session_id: str, fast_forward_only: bool = False, dry_run: bool = False
    ) -> MergeResult:
        result: MergeResult = await self._call(
            "merge_worktree",
            session_id=session_id,
            fast_forward_only=fast_forward_only,
            dry_run=dry_run,
        )
        return result

    async def discard_worktree(self, session_id: str) -> str:
        return str(await self._call("discard_worktree", session_id=session_id))

    async def undo_discard(self, session_id: str) -> str:
        return str(await self._call("undo_discard", session_id=session_id))

    async def push_worktree(self, session_id: str, remote: str = "origin") -> str:
        return str(await self._call("push_worktree", session_id=session_id, remote=remote))

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

    async def checkpoints(self, session_id: str) -> list[Checkpoint]:
        return list(await self._call("checkpoints", session_id=session_id))

    async def turn_changes(self, session_id: str, turn: int) -> list[FileChange]:
        return list(await self._call("turn_changes", session_id=session_id, turn=turn))

    async def restore_preview(self, session_id: str, checkpoint: str) -> RestorePlan:
        plan: RestorePlan = await self._call(
            "restore_preview", session_id=session_id, checkpoint=checkpoint
        )
        return plan

    async def restore(self, session_id: str, checkpoint: str) -> str:
        return str(await self._call("restore", session_id=session_id, checkpoint=checkpoint))

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

    def send(self, session_id: str, text: str, *, attach: Sequence[str] = ()) -> None:
        def failed(error: Exception) -> None:
            self._emit(ProblemEvent(session_id, f"The prompt could not be sent: {error}"))

        self._sending.in_order(
            lambda: self._call("send", session_id=session_id, text=text, attach=list(attach)),
            failed,
        )

    async def run_shell(self, session_id: str, command: str) -> str:
        return str(await self._call("run_shell", session_id=session_id, command=command))

    async def stop_shell(self, session_id: str) -> bool:
        return bool(await self._call("stop_shell", session_id=session_id))

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

    async def answer_form(
        self,
        request_id: str,
        action: str,
        values: Mapping[str, Any] | None = None,
        decided_by: str = "user",
    ) -> None:
        await self._call(
            "answer_form",
            request_id=request_id,
            action=action,
            values=dict(values) if values is not None else None,
            decided_by=decided_by,
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

    async def read_plan(self, session_id: str) -> Plan | None:
        plan: Plan | None = await self._call("read_plan", session_id=session_id)
        return plan

    async def mcp_servers(self, session_id: str) -> list[McpServerState]:
        servers: list[McpServerState] = await self._call("mcp_servers", session_id=session_id)
        return servers

    async def sign_in(self, session_id: str) -> SignIn | None:
        needed: SignIn | None = await self._call("sign_in", session_id=session_id)
        return needed

    async def authenticate(
        self, session_id: str, method_id: str, values: Mapping[str, str] | None = None
    ) -> str:
        said: str = await self._call(
            "authenticate", session_id=session_id, method_id=method_id, values=dict(values or {})
        )
        return said

    async def run_login(self, session_id: str, method_id: str) -> str:
        return str(await self._call("run_login", session_id=session_id, method_id=method_id))

    async def send_input(self, session_id: str, text: str) -> bool:
        return bool(await self._call("send_input", session_id=session_id, text=text))

    async def logout(self, session_id: str) -> str:
        said: str = await self._call("logout", session_id=session_id)
        return said

    async def update_plan(
        self, session_id: str, entries: Sequence[PlanEntry], explanation: str | None = None
    ) -> Plan:
        plan: Plan = await self._call(
            "update_plan", session_id=session_id, entries=list(entries), explanation=explanation
        )
        return plan


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
