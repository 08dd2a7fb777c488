"""The engine in process: `cockpit.api.EngineAPI` over the store and the live sessions.

It owns the store and every live session. A view reads pages from it and subscribes to
its events; it never touches ACP or SQL. Nothing here imports Textual, which is what
lets the engine run as a background process that a terminal attaches to.

It is longer than this project's other modules because it is the whole `EngineAPI`
surface in one class; each method is a few lines that hand the work to the module doing it
(`session`, `unread`, `exports`, `file_search`, `policy`, `automatic_answers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Collection, Coroutine, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from acp import RequestError

from cockpit.acp_types import ContentBlock
from cockpit.api import (
    ARCHIVED,
    RACE_INFO,
    REMOVED,
    RUN_INFO,
    WORKTREE_ARCHIVE_INFO,
    WORKTREE_INFO,
    AgentInfo,
    AgentSpec,
    Checkpoint,
    CleanupItem,
    Contender,
    EngineEvent,
    FileChange,
    FileMatch,
    FramesEvent,
    Listener,
    McpServerState,
    MergeResult,
    ModelCalls,
    PermissionRequest,
    Plan,
    PlanEntry,
    ProblemEvent,
    ProjectInfo,
    RaceEntry,
    RepositoryInfo,
    RestorePlan,
    SavingEvent,
    ServiceStopped,
    SessionEvent,
    ShellRun,
    SignIn,
    StartError,
    Status,
    Worktree,
    WorktreeArchive,
    WorktreeListing,
    WorktreeRequest,
    WorktreeStatus,
    read_race,
    read_shell_run,
    read_worktree,
    read_worktree_archive,
)
from cockpit.bounds import draft_refusal, draft_too_long
from cockpit.compat.acp_private import send_request
from cockpit.config_file import Fixed, Source
from cockpit.engine.automatic_answers import AutomaticAnswers
from cockpit.engine.checkpoints import Checkpoints
from cockpit.engine.checkpoints.rules import restore_done
from cockpit.engine.errors import describe, not_opened, saved
from cockpit.engine.exports import export_target, write_export
from cockpit.engine.file_search import FileSearch
from cockpit.engine.folders import list_folders
from cockpit.engine.inbox import SessionInbox
from cockpit.engine.mcp.config import McpEntry, mcp_file
from cockpit.engine.mcp.handing import hand, handing_note, handing_states
from cockpit.engine.mcp.repository import approvable, hand_repository
from cockpit.engine.model_calls import model_calls
from cockpit.engine.permission_broker import AutoAnswer
from cockpit.engine.plans import PlanKeeper
from cockpit.engine.plans.keeper import McpServer
from cockpit.engine.policy import (
    Policy,
    describe_rules,
    policy_file,
    rule_set,
    session_rules,
)
from cockpit.engine.races import (
    commit_message,
    contender,
    contender_title,
    merged_words,
    verdict,
)
from cockpit.engine.recovery import recover
from cockpit.engine.registry import AgentsFile, Registry, executable
from cockpit.engine.session import LiveSession
from cockpit.engine.session_names import session_named
from cockpit.engine.shell_runs import attachment_blocks
from cockpit.engine.stall import STALL_ENV, STALL_LIMIT, stall_limit_setting
from cockpit.engine.stored_agents import AGENT_SETTINGS, stored_agent
from cockpit.engine.unread import Unread
from cockpit.engine.worktrees import (
    archive,
    changes,
    cleanup,
    committing,
    discarding,
    merging,
    pushing,
)
from cockpit.engine.worktrees.approvals import APPROVALS_NAME, Approvals
from cockpit.engine.worktrees.archive import (
    ARCHIVES_NAME,
    archived_words,
    refusal_to_start,
    restored_words,
)
from cockpit.engine.worktrees.create import (
    commit_of,
    make_worktree,
    remove_worktree,
    repository,
    top_of,
)
from cockpit.engine.worktrees.git import GitError
from cockpit.engine.worktrees.preparing import read_project, session_project
from cockpit.engine.worktrees.readying import Readied, ready
from cockpit.engine.worktrees.settings import (
    WorktreeSettings,
    default_settings,
    read_settings,
)
from cockpit.engine.worktrees.settings import settings_file as worktree_settings_file
from cockpit.engine.worktrees.status import disk_size, worktree_status
from cockpit.environment import Environment, current
from cockpit.listeners import Listeners
from cockpit.paths import config_dir, private_dir
from cockpit.paths import data_dir as default_data_dir
from cockpit.pending import first_waiting, waiting, waiting_count
from cockpit.plan_protocol import SERVER_NAME as PLAN_SERVER
from cockpit.plan_protocol import item_to_wire, read_explanation, read_items
from cockpit.policy_rule import check_rule
from cockpit.text.textout import session_title, transcript_markdown
from store import Page, Row, SessionBusy, SessionRecord, note
from store.paging import PAGE_BYTES, PAGE_ROWS
from store.store import Store

log = logging.getLogger(__name__)

T = TypeVar("T")

HANDSHAKE_TIMEOUT = 120.0
"""Seconds an agent may take to start (initialize and session/new), at most. One that does
nothing for the stall limit (`cockpit.engine.stall`) fails sooner."""

NOT_SAVED = (
    "Cockpit cannot save the transcript: {why}. What the agents send is kept in memory and "
    "saved as soon as there is room; quitting before then loses it."
)
"""What the user is told the moment the store stops writing (the disk is full)."""


TURN_STATES = frozenset({Status.WORKING, Status.CANCELLING, Status.WAITING})
"""A session's states while a turn runs: its agent may be writing its files."""


@contextlib.contextmanager
def _git_refusal() -> Iterator[None]:
    """A git failure as the contract's kind of refusal: a sentence in a ValueError."""
    try:
        yield
    except GitError as error:
        raise ValueError(str(error)) from error


class Engine:
    """Sessions, their agents and their transcripts."""

    detaches = False
    """The agents run in this process: they stop when its client quits."""
    link_problem: str | None = None
    """Nothing to lose touch with: the engine is in this process."""
    service_stopped: ServiceStopped | None = None
    """No service to stop: the engine is in this process."""

    def __init__(
        self,
        store: Store,
        registry: Registry | Source[Registry],
        data_dir: Path,
        *,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        stall_limit: float = STALL_LIMIT,
        auto_answer: AutoAnswer | None = None,
        policy: Policy | Source[Policy] | None = None,
        settings: Source[dict[str, Any]] | None = None,
        mcp: Source[tuple[McpEntry, ...]] | None = None,
    ) -> None:
        self.store = store
        self._agent_source: Source[Registry] = (
            Fixed(registry) if isinstance(registry, Registry) else registry
        )
        """`agents.toml`, read when an agent is looked up (or a registry a test fixed)."""
        self._policy_source: Source[Policy] = (
            Fixed(policy or Policy()) if policy is None or isinstance(policy, Policy) else policy
        )
        """`policy.toml`, read when a permission is decided (or a policy fixed)."""
        self._settings_source: Source[dict[str, Any]] = settings or Fixed({})
        """`settings.json`, read when a worktree is made (where it goes, its branch's name)."""
        self._mcp_source: Source[tuple[McpEntry, ...]] = mcp or Fixed(())
        """`mcp.toml`, read as an agent opens its session (the user's MCP servers)."""
        self.data_dir = data_dir
        self.approvals = Approvals(data_dir / APPROVALS_NAME)
        """The setup and test commands of repositories the user approved."""
        self.handshake_timeout = handshake_timeout
        self.stall_limit = stall_limit
        self._answers = AutomaticAnswers(auto_answer)
        self._live: dict[str, LiveSession] = {}
        self._listeners = Listeners()
        self._specs: dict[str, AgentSpec] = {}
        self._environments: dict[str, Environment] = {}
        """For each session, the world of the last request that may start its agent: the
        agent (re)starts with it. Kept in memory only, never stored or logged."""
        self.environment_required = False
        """True in the service: a start must come with its client's environment (the
        service's own is a stale copy of the user's); in process, this process's own is
        the user's."""
        self.plans = PlanKeeper(store, self._inbox_of)
        """Each session's plan, and the plan tool's socket and tokens."""
        self._handed: dict[str, list[McpServerState]] = {}
        """The MCP servers each session's agent was handed as it last opened its session."""
        self._unread = Unread(store, self._emit)
        """Which sessions the user has not seen since they did something."""
        self._tasks: set[asyncio.Future[Any]] = set()
        """Prompts sent with `send` and writes made in the background."""
        self._sends: dict[str, set[asyncio.Future[Any]]] = {}
        """The prompts sent with `send` to each session that have not ended."""
        self.saving_problem: str | None = None
        """Why the store cannot write (one line), while it cannot: what waits is held in
        memory and retried."""
        self.saving_failure: str | None = None
        """Why the first write that failed while this engine ran failed (None: none did),
        kept once writes work again."""
        self.setting_problems: list[str] = []
        """What is wrong with the settings read once at start (COCKPIT_STALL_LIMIT)."""
        self._files = FileSearch()
        store.watch_writes(self._on_writes)

    @classmethod
    async def open(
        cls,
        data_dir: Path | None = None,
        *,
        registry: Registry | None = None,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        stall_limit: float | None = None,
        auto_answer: AutoAnswer | None = None,
        clock: Callable[[], float] = time.time,
        policy: Policy | None = None,
        config: Path | None = None,
    ) -> Engine:
        """Open the store in `data_dir` (COCKPIT_HOME or the user data folder by default);
        `clock` stamps rows and sessions (tests fix it). `agents.toml` and `policy.toml`
        are read from `config` (Cockpit's config folder by default) when they are used,
        unless a `registry` or `permissions` is given, which then holds. Unless given, the
        stall limit is COCKPIT_STALL_LIMIT's (a bad value is a problem, and the default
        holds)."""
        folder = private_dir(data_dir or default_data_dir())
        database = folder / "cockpit.db"
        try:
            store = await Store.open(database, clock=clock)
        except sqlite3.Error as error:  # a full disk, a file that is not a database
            raise not_opened(database, error) from error
        try:  # cut short (a Ctrl-C as Cockpit starts): the store's threads must not linger
            config = config or config_dir()
            setting_problems: list[str] = []
            if stall_limit is None:
                stall_limit, problem = stall_limit_setting(os.environ.get(STALL_ENV))
                if problem:
                    log.warning("%s", problem)
                    setting_problems.append(problem)
            engine = cls(
                store,
                registry or AgentsFile(config),
                folder,
                handshake_timeout=handshake_timeout,
                stall_limit=stall_limit,
                auto_answer=auto_answer,
                policy=policy or policy_file(config),
                settings=worktree_settings_file(config),
                mcp=mcp_file(config),
            )
            engine.setting_problems = setting_problems
            try:
                await recover(store, engine._unread)
            except sqlite3.Error as error:  # it opened, but cannot take recovery's notes
                raise not_opened(database, error) from error
        except BaseException:
            # The store's last flush may fail as recovery did: what is raised is the first
            # failure (recovery's notes are written by the next open, the session still
            # being mid-turn on disk).
            with contextlib.suppress(sqlite3.Error):
                await store.close()
            raise
        return engine

    async def close(self, reason: str = "Cockpit quit") -> None:
        """Stop every agent (a running turn ends with a row saying `reason`) and close the
        store."""
        await asyncio.gather(
            *(live.stop(reason) for live in self._live.values()), return_exceptions=True
        )
        self.kill_agents()  # any a failed stop left running
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for live in self._live.values():
            live.discard()
        self._live.clear()
        await self.plans.close()
        await self._files.close()
        with saved():  # the last flush: what it could not write, `unwritten` counts
            await self.store.close()

    async def reattach(self) -> None:
        """Nothing to start again: the engine is in this process."""

    def kill_agents(self) -> None:
        """Kill every agent still running, at once (the last step of a shutdown that could
        not stop them in order: no agent outlives its engine)."""
        for live in self._live.values():
            if live.process is not None:
                live.process.kill()

    async def __aenter__(self) -> Engine:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- events -------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every event; returns the function that unsubscribes."""
        return self._listeners.subscribe(listener)

    def _on_writes(self, failure: Exception | None) -> None:
        """The store's writes started failing, or work again. A row cannot say so (it could
        not be stored either): every client hears it as a problem, and as a state the
        status line keeps until the store has written everything it held."""
        if failure is None:
            self.saving_problem = None
            self._emit(SavingEvent(None))
            return
        why = describe(failure)
        self.saving_failure = self.saving_failure or why
        self.saving_problem = why
        self._emit(ProblemEvent(None, NOT_SAVED.format(why=why)))
        self._emit(SavingEvent(why))

    def _emit(self, event: EngineEvent) -> None:
        self._unread.noticed(event)
        self._listeners.emit(event)

    # -- configuration ------------------------------------------------------------------------

    @property
    def registry(self) -> Registry:
        """The agents as `agents.toml` says now."""
        return self._current(self._agent_source)

    @property
    def policy(self) -> Policy:
        """The global permission policy as `policy.toml` says now."""
        return self._current(self._policy_source)

    @policy.setter
    def policy(self, policy: Policy) -> None:
        """Fix the global policy: the file is no longer read."""
        self._policy_source = Fixed(policy)

    @property
    def problems(self) -> list[str]:
        """What is wrong with the configuration now (a broken policy file...): what a
        client shows when it attaches. Each file is looked at again first."""
        self._current(self._agent_source)
        self._current(self._policy_source)
        self._current(self._mcp_source)
        sources = [
            *self._agent_source.problems,
            *self._policy_source.problems,
            *self._mcp_source.problems,
        ]
        return [*self.setting_problems, *sources]

    def _current(self, source: Source[T]) -> T:
        """The value `source` holds now; a problem with a version of its file seen for
        the first time is told to every client (once), and logged."""
        value, new = source.read()
        for problem in new:
            log.warning("%s", problem)
            self._emit(ProblemEvent(None, problem))
        return value

    # -- sessions -----------------------------------------------------------------------------

    async def create_session(
        self,
        agent: str | AgentSpec,
        cwd: str | Path,
        title: str | None = None,
        *,
        run: bool = False,
        worktree: WorktreeRequest | None = None,
        env: Environment | None = None,
    ) -> SessionRecord:
        """Store a new session for `agent` (a registry name, looked up in `agents.toml` as
        it is now, or a spec) in folder `cwd`; `run` marks it as made by `cockpit run`; its
        agent will start with `env` (see `start`). With `worktree`, the session works in a
        worktree of its own, made first (ValueError saying why when it cannot be)."""
        registry = self.registry
        spec = registry.get(agent) if isinstance(agent, str) else agent
        folder = await asyncio.to_thread(lambda: Path(cwd).expanduser().resolve())
        if not await asyncio.to_thread(folder.is_dir):
            raise NotADirectoryError(f"{folder} is not a folder")
        session_id, made, readied = None, None, None
        if worktree is not None:
            session_id = secrets.token_hex(4)
            readied = await self._make_worktree(folder, worktree, title, session_id)
            made = readied.worktree
            folder = Path(made.path)
        try:
            with saved():
                record = await self.store.create_session(
                    agent=spec.name,
                    command=spec.command,
                    cwd=str(folder),
                    title=title,
                    session_id=session_id,
                )
                info: dict[str, Any] = {RUN_INFO: True} if run else {}
                if spec.overrides:  # settings given on the command line: the session keeps them
                    info[AGENT_SETTINGS] = dict(spec.overrides)
                if made is not None:
                    info[WORKTREE_INFO] = dataclasses.asdict(made)
                if info:
                    await self.store.update_session(record.id, info=info)
                    record = dataclasses.replace(record, info=info)
        except BaseException:
            if made is not None and worktree is not None:  # no session: no worktree either
                await remove_worktree(made, delete_branch=worktree.branch is None)
            raise
        if registry.agents.get(spec.name) != spec:  # not an entry: it runs as it was given
            self._specs[record.id] = spec
        self._remember(record.id, env)
        self._emit(SessionEvent(record.id))
        if readied is not None:
            await self._first_in_worktree(record.id, readied, env)
        return record

    async def _make_worktree(
        self, folder: Path, request: WorktreeRequest, title: str | None, session_id: str
    ) -> Readied:
        """The worktree of new session `session_id`, made as `settings.json` says now and
        readied as its repository's `.cockpit.toml` asks."""
        try:
            settings = self._worktree_settings()
            made = await make_worktree(
                folder,
                request,
                folder=settings.folder,
                prefix=settings.prefix,
                title=title,
                session_id=session_id,
            )
        except GitError as error:  # a sentence already: the contract's kind of refusal
            raise ValueError(str(error)) from error
        try:
            return await ready(made, self.approvals, await self._ports_taken())
        except BaseException:
            await remove_worktree(made, delete_branch=request.branch is None)
            raise

    async def _ports_taken(self) -> set[int]:
        """The ports every stored worktree session was given."""
        records = await self.sessions()
        return {port for r in records if (w := read_worktree(r.info)) for port in w.ports}

    async def _first_in_worktree(
        self, session_id: str, readied: Readied, env: Environment | None
    ) -> None:
        """Tell what the repository's file left out, and run what it asks first (the
        setup) as `!commands`: the user sees them run. What fails is reported; the session
        stays."""
        try:
            for text in readied.notes:
                await self.add_notice(session_id, text)
            for command in readied.commands:
                await self.run_shell(session_id, command, env=env)
        except Exception as error:
            await self.report(session_id, f"Cockpit could not ready the worktree: {error}")

    def _worktree_settings(self) -> WorktreeSettings:
        """Where worktrees go and how their branches begin, as `settings.json` says now
        (ValueError for a branch prefix git would refuse)."""
        values, _ = self._settings_source.read()  # the interface reports a broken file
        return read_settings(self.data_dir, values) if values else default_settings(self.data_dir)

    async def repository(self, cwd: str) -> RepositoryInfo | None:
        """The git repository folder `cwd` lies in (None: none, or no git here)."""
        folder = await asyncio.to_thread(lambda: Path(cwd).expanduser())
        if not await asyncio.to_thread(folder.is_dir):
            return None
        return await repository(folder)

    # -- races ------------------------------------------------------------------------------

    async def race(
        self,
        agents: Sequence[str],
        cwd: str,
        prompt: str,
        base: str = "HEAD",
        allow: Sequence[str] | None = (),
        *,
        env: Environment | None = None,
    ) -> list[SessionRecord]:
        """Send `prompt` to each of `agents`, each in a worktree of its own from `base`;
        each contender's approved test runs in its worktree once its turn ends. Every agent
        is looked up first: one not known makes nothing (KeyError)."""
        if not agents:
            raise ValueError("A race needs at least one agent.")
        if not prompt.strip():
            raise ValueError("A race needs a prompt.")
        specs = [self.registry.get(agent) for agent in agents]
        race_id, at = secrets.token_hex(3), self.now()
        made: list[SessionRecord] = []
        for number, spec in enumerate(specs, 1):
            title = contender_title(spec.name, number, prompt)
            record = await self.create_session(
                spec, cwd, title, worktree=WorktreeRequest(base=base), env=env
            )
            entry = {"id": race_id, "prompt": prompt, "at": at}
            made.append(await self._set_race(record, entry))
        for record in made:
            if allow is None or allow:  # before its prompt: a question may come at once
                self.allow_automatically(record.id, allow)
            self._background(self._race_turn(record.id, prompt))
        return made

    async def _set_race(self, record: SessionRecord, entry: dict[str, Any]) -> SessionRecord:
        """Store a contender's place in its race; the record as it now is."""
        info = {**(record.info or {}), RACE_INFO: entry}
        with saved():
            await self.store.update_session(record.id, info=info)
        self._emit(SessionEvent(record.id))
        return dataclasses.replace(record, info=info)

    async def _race_turn(self, session_id: str, prompt: str) -> None:
        """A contender's turn, then its test: what fails is a row in its transcript."""
        try:
            await self.prompt(session_id, prompt)
        except Exception as error:
            log.exception("the race turn of session %s failed", session_id)
            await self.report(session_id, f"The prompt could not be sent: {describe(error)}")
        try:
            record = await self.session(session_id)
            entry = read_race(record.info)
            if entry is None:
                return
            ended = self.now()
            key = await self._race_test(record)  # stored with the end: never "ended, no test"
            done = {**dict((record.info or {})[RACE_INFO]), "ended": ended}
            await self._set_race(record, {**done, "test": key} if key is not None else done)
        except Exception as error:
            log.exception("the race test of session %s failed", session_id)
            await self.report(session_id, f"The test could not be run: {describe(error)}")

    async def _race_test(self, record: SessionRecord) -> str | None:
        """Run the repository's approved test command in the contender's worktree; the key
        of its row (None: no test command, or not approved)."""
        worktree = read_worktree(record.info)
        if worktree is None:
            return None
        config = await read_project(worktree.repo, worktree.base_commit)
        if config.test is None or not self.approvals.approved(worktree.repo, "test", config.test):
            return None
        return await self.run_shell(record.id, config.test, env=self._environment(record.id))

    async def race_standings(self, race_id: str) -> list[Contender]:
        """The contenders of a race, oldest first."""
        found = []
        for record in sorted(await self.sessions(), key=lambda r: r.created):
            entry = read_race(record.info)
            if entry is not None and entry.id == race_id:
                found.append(await self._standing(record, entry))
        return found

    async def keep_contender(self, session_id: str) -> list[str]:
        """Keep one contender of a race: commit its work, merge it into its base branch in
        the user's checkout, then archive the others; what was done, in sentences.
        ValueError (nothing archived) when it is in no race or the merge is refused."""
        record = await self.session(session_id)
        entry = read_race(record.info)
        if entry is None:
            raise ValueError(f"Session {session_id} is in no race.")
        await self._idle_worktree(session_id, "keep it")  # its work is not done yet
        said = []
        with contextlib.suppress(ValueError):  # nothing left to commit
            said.append(await self.commit_worktree(session_id, commit_message(entry.prompt)))
        result = await self.merge_worktree(session_id)
        if result.refusal is not None:
            raise ValueError(result.refusal)
        said.append(merged_words(result))
        for other in await self.race_standings(entry.id):
            if other.session != session_id and not other.worktree:
                said.append(await self.archive_worktree(other.session))
        return said

    async def _standing(self, record: SessionRecord, entry: RaceEntry) -> Contender:
        worktree = read_worktree(record.info)
        gone = read_worktree_archive(record.info) is not None
        changed: list[FileChange] = []
        if worktree is not None and not gone:
            with contextlib.suppress(ValueError, GitError):
                changed = await changes.changes(worktree)
        run = None
        if entry.test is not None:
            row = await self.row(record.id, entry.test)
            found = read_shell_run(row.payload) if row is not None else None
            run = found if isinstance(found, ShellRun) else None
        command, approved = None, False
        if worktree is not None and run is None:
            with contextlib.suppress(ValueError, GitError):
                config = await read_project(worktree.repo, worktree.base_commit)
                command = config.test
                approved = command is not None and self.approvals.approved(
                    worktree.repo, "test", command
                )
        test = verdict(command, approved, entry, run)
        return contender(record, entry, self.status(record.id), changed, test)

    async def project(self, cwd: str, base: str = "HEAD") -> ProjectInfo:
        """What `.cockpit.toml` at `base` of the repository `cwd` lies in asks, and which of
        its commands the user approved (ValueError: no repository, or no such base)."""
        folder = await asyncio.to_thread(lambda: Path(cwd).expanduser())
        try:
            top = await top_of(folder)
            config = await read_project(top, await commit_of(top, base))
        except GitError as error:
            raise ValueError(str(error)) from error
        approved = self.approvals.approved
        servers, refused = approvable(config.mcp)
        return ProjectInfo(
            str(top),
            config.setup,
            config.setup is not None and approved(str(top), "setup", config.setup),
            config.test,
            config.test is not None and approved(str(top), "test", config.test),
            config.copy,
            config.ports,
            (*config.problems, *refused),
            tuple((text, approved(str(top), "mcp", text)) for text in servers),
        )

    async def approve_command(self, repository: str, kind: str, command: str) -> None:
        """Approve `command` as the `kind` command of `repository` (OSError when the
        approval cannot be kept)."""
        await asyncio.to_thread(self.approvals.approve, repository, kind, command)

    async def worktree_status(self, session_id: str) -> WorktreeStatus | None:
        """Where a worktree session's work stands now (None for a session in none; a
        status that git cannot read is None too, and the rail shows none)."""
        worktree = read_worktree((await self.session(session_id)).info)
        if worktree is None:
            return None
        try:
            return await worktree_status(worktree)
        except GitError:
            return None

    async def _worktree_sessions(
        self,
    ) -> list[tuple[SessionRecord, Worktree, WorktreeArchive | None]]:
        """Every session with a worktree of its own that no cleanup removed, most recent
        first, with what became of its worktree (None: it is where it was made)."""
        found = []
        for record in await self.store.list_sessions():
            worktree = read_worktree(record.info)
            gone = read_worktree_archive(record.info)
            if worktree is not None and (gone is None or gone.state != REMOVED):
                found.append((record, worktree, gone))
        return found

    async def worktrees(self) -> list[WorktreeListing]:
        """Every worktree session's worktree, most recent session first, with its size
        and its status."""
        found = []
        for record, worktree, gone in await self._worktree_sessions():
            try:
                status = await worktree_status(worktree)
            except GitError:
                status = WorktreeStatus(worktree.branch)
            size = 0 if status.missing else await asyncio.to_thread(disk_size, Path(worktree.path))
            found.append(
                WorktreeListing(
                    record.id,
                    record.title or "",
                    worktree.repo,
                    worktree.path,
                    status.branch,
                    worktree.base,
                    size,
                    status,
                    archived=gone is not None,
                )
            )
        return found

    # -- the lifecycle of worktree sessions ---------------------------------------------------

    async def _worktree_of(self, session_id: str) -> tuple[SessionRecord, Worktree]:
        record = await self.session(session_id)
        worktree = read_worktree(record.info)
        gone = read_worktree_archive(record.info)
        if worktree is None or (gone is not None and gone.state == REMOVED):
            raise ValueError(f"Session {session_id} has no worktree of its own.")
        return record, worktree

    async def _set_archive(self, record: SessionRecord, value: dict[str, Any] | None) -> None:
        """Record what became of a session's worktree (None: it is back)."""
        info = dict(record.info or {})
        if value is None:
            info.pop(WORKTREE_ARCHIVE_INFO, None)
        else:
            info[WORKTREE_ARCHIVE_INFO] = value
        with saved():
            await self.store.update_session(record.id, info=info)

    async def _stop_all(self, session_id: str, reason: str) -> list[str]:
        """Stop a session's agent (with its terminals) and the commands the user ran in it,
        and let its live object go (a prompt to it reads its record again); what ran."""
        live = self._live.get(session_id)
        if live is None:
            return []
        ran = ["its agent"] if live.running else []
        ran += ["your commands"] if live.shells.running() else []
        for task in self._sends.pop(session_id, set()):
            task.cancel()
        await live.stop(reason)
        if live.checkpoints is not None:  # its kept index is written no more
            await live.checkpoints.settled()
        self._live.pop(session_id, None)
        live.discard()
        return ran

    async def archive_worktree(self, session_id: str) -> str:
        """Archive a worktree session's worktree: stop what runs in it, keep its
        uncommitted work (see `archive.save_work`), record that, then remove it."""
        record, worktree = await self._worktree_of(session_id)
        if read_worktree_archive(record.info) is not None:
            raise ValueError(f"Session {session_id} is archived already.")
        if not await asyncio.to_thread(Path(worktree.path).is_dir):
            raise ValueError(
                f"The worktree of session {session_id} is missing (deleted by hand): restore"
                " it from its branch, or clean it up."
            )
        ran = await self._stop_all(session_id, "the session was archived")
        folder = self.data_dir / ARCHIVES_NAME / session_id
        try:
            kept = await archive.save_work(worktree, folder)
        except (GitError, OSError) as error:
            await asyncio.to_thread(archive.forget, folder)
            said = f"Nothing was archived: the work could not be kept ({error})."
            raise ValueError(said) from error
        value = {"state": ARCHIVED, "folder": str(folder), "patch": kept.patch, "at": self.now()}
        await self._set_archive(record, value)
        try:
            await archive.remove(worktree)
        except GitError as error:
            raise ValueError(f"The work is kept, but the worktree stays: {error}") from error
        self._emit(SessionEvent(session_id))
        return archived_words(session_id, worktree, kept, ran)

    async def restore_worktree(self, session_id: str) -> str:
        """Make an archived (or missing) worktree again from its branch and put back what
        its archive kept; the agent starts again at the next prompt."""
        record, worktree = await self._worktree_of(session_id)
        gone = read_worktree_archive(record.info)
        if gone is None and await asyncio.to_thread(Path(worktree.path).is_dir):
            raise ValueError(f"The worktree of session {session_id} is there: nothing to restore.")
        try:
            await archive.make_again(worktree)
            kept = archive.Kept(False, ())
            if gone is not None and gone.folder:
                kept = await archive.put_back(worktree, Path(gone.folder))
        except GitError as error:
            raise ValueError(f"The worktree could not be restored: {error}") from error
        await self._set_archive(record, None)
        if gone is not None and gone.folder:
            await asyncio.to_thread(archive.forget, Path(gone.folder))
        self._emit(SessionEvent(session_id))
        return restored_words(session_id, worktree, kept)

    async def cleanup_plan(self, merged_only: bool = False) -> list[CleanupItem]:
        """Every worktree session's worktree with what removing it would lose, most recent
        session first (only those that would lose nothing: `merged_only`)."""
        items = []
        for record, worktree, gone in await self._worktree_sessions():
            try:
                item = await cleanup.inspect(
                    record.id, record.title or "", worktree, gone, record.updated
                )
            except GitError as error:  # its repository is gone, or git cannot read it
                item = CleanupItem(
                    record.id, record.title or "", worktree.path, worktree.branch,
                    worktree.base, 0, False, (f"git cannot read it: {error}",),
                    record.updated, missing=True, archived=gone is not None,
                )  # fmt: skip
            if not merged_only or not item.unmerged:
                items.append(item)
        return items

    async def clean_worktrees(self, session_ids: Sequence[str], force: bool = False) -> list[str]:
        """Remove these sessions' worktrees whole (see `cleanup.remove_everything`); one
        that would lose work is kept, saying why, unless `force`. The sessions and their
        transcripts stay."""
        said = []
        for session_id in session_ids:
            try:
                record, worktree = await self._worktree_of(session_id)
            except KeyError:
                said.append(f"Skipped {session_id}: there is no such session.")
                continue
            except ValueError as error:
                said.append(f"Skipped {session_id}: {error}")
                continue
            gone = read_worktree_archive(record.info)
            try:
                item = await cleanup.inspect(
                    session_id, record.title or "", worktree, gone, record.updated
                )
                refused = None if force else cleanup.refusal(item)
                if refused:
                    said.append(refused)
                    continue
                await self._stop_all(session_id, "its worktree was removed")
                await self._set_archive(record, {"state": REMOVED, "at": self.now()})
                said.append(await cleanup.remove_everything(session_id, worktree, gone))
            except GitError as error:
                said.append(f"Could not remove {session_id}: {error}")
                continue
            self._emit(SessionEvent(session_id))
        return said

    # -- reviewing and merging worktree sessions ----------------------------------------------

    async def _worktree(self, session_id: str) -> Worktree:
        """The worktree of a worktree session; ValueError for a session in none."""
        _, worktree = await self._worktree_of(session_id)
        return worktree

    async def _idle_worktree(self, session_id: str, doing: str) -> Worktree:
        """The worktree of a session whose agent is not in a turn (ValueError when it is:
        its files would change under `doing`)."""
        worktree = await self._worktree(session_id)
        if self.status(session_id) in TURN_STATES:
            raise ValueError(f"A turn runs in this session: wait for it (or cancel it) to {doing}.")
        return worktree

    async def worktree_changes(self, session_id: str) -> list[FileChange]:
        """Every file a worktree session changed against its base, committed or not."""
        worktree = await self._worktree(session_id)
        with _git_refusal():
            return await changes.changes(worktree)

    async def commit_worktree(self, session_id: str, message: str) -> str:
        """Commit everything in a worktree session's worktree on its branch."""
        worktree = await self._idle_worktree(session_id, "commit")
        with _git_refusal():
            said = await committing.commit(worktree, message)
        self._emit(SessionEvent(session_id))
        return said

    async def merge_worktree(
        self, session_id: str, fast_forward_only: bool = False, dry_run: bool = False
    ) -> MergeResult:
        """Merge a worktree session's branch into its base branch in the user's checkout."""
        worktree = await self._worktree(session_id)
        with _git_refusal():
            return await merging.merge(
                worktree, session_id, fast_forward_only=fast_forward_only, dry_run=dry_run
            )

    async def discard_worktree(self, session_id: str) -> str:
        """Put a worktree session's branch and files back at its base, undoably."""
        worktree = await self._idle_worktree(session_id, "discard its work")
        with _git_refusal():
            return await discarding.discard(worktree, session_id)

    async def undo_discard(self, session_id: str) -> str:
        """Bring back what the last discard of a worktree session put away."""
        worktree = await self._idle_worktree(session_id, "undo the discard")
        with _git_refusal():
            return await discarding.undo_discard(worktree, session_id)

    async def push_worktree(self, session_id: str, remote: str = "origin") -> str:
        """Push a worktree session's branch to `remote`, tracking it."""
        worktree = await self._worktree(session_id)
        with _git_refusal():
            return await pushing.push(worktree, remote)

    async def sessions(self) -> list[SessionRecord]:
        """Every stored session, most recent first."""
        return await self.store.list_sessions()

    async def session(self, session_id: str) -> SessionRecord:
        """One stored session (KeyError when unknown)."""
        record = await self.store.get_session(session_id)
        if record is None:
            raise KeyError(f"no session {session_id!r}")
        return record

    async def find_session(self, prefix: str) -> SessionRecord:
        """The session `prefix` names (`session_named`: the start of its id or title;
        KeyError when none or several)."""
        return session_named(await self.store.list_sessions(), prefix)

    async def model_calls(self, session: str, call: int | None = None) -> ModelCalls:
        """What the built-in Claude agent sent the model (see `ReaderAPI.model_calls`)."""
        return await model_calls(self.data_dir, self, session, call)

    def agents(self) -> list[AgentInfo]:
        """Every agent of the registry as `agents.toml` says now, and whether its program
        is installed here."""
        return [
            AgentInfo(spec, executable(spec) is not None) for spec in self.registry.agents.values()
        ]

    def agent_of(self, record: SessionRecord) -> AgentSpec:
        """How to run a stored session's agent: the spec it was created with when that was
        a command, else `stored_agent` with the registry as it is now."""
        if record.id in self._specs:
            return self._specs[record.id]
        return stored_agent(record, self.registry)

    async def folders(self, partial: str) -> list[str]:
        """The folders a typed path may go on to, here (see `folders.list_folders`): a big
        folder takes milliseconds to read, so it is read off the event loop."""
        return await asyncio.to_thread(list_folders, partial)

    async def rename(self, session_id: str, title: str) -> None:
        """Give a session a title (NotSaved when the store refuses it; on a full disk the
        store holds the change and writes it when there is room)."""
        with saved():
            await self.store.update_session(session_id, title=title)
        live = self._live.get(session_id)
        if live is not None:
            live.record = dataclasses.replace(live.record, title=title)
        self._emit(SessionEvent(session_id))

    async def delete(self, session_id: str) -> None:
        """Stop a session's agent and forget the session and its transcript (a prompt
        still waiting to be sent to it is dropped with it). A worktree session's worktree,
        the branch Cockpit made, its refs and its archive go too; one with unmerged work
        is refused (ValueError saying why: nothing is deleted). NotSaved when the store
        refuses it: the session and its transcript stay."""
        record = await self.session(session_id)
        worktree = read_worktree(record.info)
        gone = read_worktree_archive(record.info)
        if worktree is not None:
            with _git_refusal():
                item = await cleanup.inspect(
                    session_id, record.title or "", worktree, gone, record.updated
                )
            if item.unmerged:
                raise ValueError(
                    f"Session {session_id} was not deleted: its worktree holds work merged"
                    f" nowhere ({', '.join(item.unmerged)}). Merge it, or remove it with"
                    " `cockpit worktrees clean --force`, then delete the session."
                )
        for task in self._sends.pop(session_id, set()):
            task.cancel()
        await self.stop(session_id)
        if worktree is not None:
            with _git_refusal():
                await cleanup.remove_everything(session_id, worktree, gone)
        with saved():  # the session stays, whole: the delete is one transaction
            await self.store.delete_session(session_id)
        live = self._live.pop(session_id, None)
        if live is not None:
            live.discard()
        self._unread.forget(session_id)
        self._environments.pop(session_id, None)
        self.plans.forget(session_id)
        self._handed.pop(session_id, None)
        self._emit(SessionEvent(session_id))

    async def set_session_policy(self, session_id: str, kind: str, action: str | None) -> str:
        """Override the permission policy for one tool kind in one session (None removes
        the override); what changed, in words. A kind or action that does not exist is
        refused (ValueError); NotSaved when the store refuses the change."""
        check_rule(kind, action)
        record = await self.session(session_id)
        info = dict(record.info or {})
        rules = dict(info.get("policy") or {})
        if action is None:
            rules.pop(kind, None)
        else:
            rules[kind] = action
        info["policy"] = rules
        with saved():
            await self.store.update_session(session_id, info=info)
        self._emit(SessionEvent(session_id))
        return rule_set(self.policy, kind, action)

    async def session_policy(self, session_id: str) -> str:
        """The permission rules in force in a session, in words."""
        record = await self.session(session_id)
        return describe_rules(self.policy, session_rules(record.info))

    async def export(self, session_id: str, target: str = "", replace: bool = False) -> Path:
        """Write the transcript as Markdown: into Cockpit's `exports/` folder unless told
        where (relative to the session's folder), never over a file unless `replace`
        (FileExistsError); where it went goes into the transcript."""
        record = await self.session(session_id)
        title = session_title(record)
        path = export_target(self.data_dir, record.cwd, title, session_id, target)
        text = transcript_markdown(await self.rows(session_id), title)
        await asyncio.to_thread(write_export, path, text, replace=replace, data_dir=self.data_dir)
        await self.add_notice(session_id, f"Exported this transcript to {path}")
        return path

    async def find_files(self, session_id: str, query: str, limit: int = 8) -> list[FileMatch]:
        """Files under the session's folder that match `query` best (`@` completion)."""
        record = await self.session(session_id)
        return await self._files.find(record.cwd, query, limit)

    # -- checkpoints --------------------------------------------------------------------------

    async def _checkpoints(self, session_id: str) -> Checkpoints:
        """The checkpoints of a session: its live session's, else read from git alone.
        ValueError for a session that has no worktree."""
        live = self._live.get(session_id)
        if live is not None and live.checkpoints is not None:
            return live.checkpoints
        record = await self.session(session_id)
        made = read_worktree(record.info)
        if made is None:
            raise ValueError(NO_WORKTREE)
        return Checkpoints(session_id, Path(made.path), made.copied)

    async def checkpoints(self, session_id: str) -> list[Checkpoint]:
        """The session's checkpoints, oldest first (none without a worktree)."""
        try:
            book = await self._checkpoints(session_id)
        except ValueError:
            return []
        with git_said():
            return await book.read_all()

    async def turn_changes(self, session_id: str, turn: int) -> list[FileChange]:
        """What turn `turn` changed, after what changed outside a turn before it."""
        book = await self._checkpoints(session_id)
        with git_said():
            return await book.changes(turn)

    async def restore_preview(self, session_id: str, checkpoint: str) -> RestorePlan:
        """What restoring `checkpoint` would do now, and why it cannot be done if so."""
        book = await self._checkpoints(session_id)
        live = self._live.get(session_id)
        with git_said():
            return await book.plan(checkpoint, live.restore_refusal() if live else None)

    async def restore(self, session_id: str, checkpoint: str) -> str:
        """Put the files back as `checkpoint` holds them, after checkpointing them as they
        are; that checkpoint's id comes back, and a notice in the transcript says what was
        done and how to undo it."""
        book = await self._checkpoints(session_id)  # ValueError without a worktree
        live = await self._live_session(session_id)  # what runs in it refuses a restore
        with git_said():
            made, plan = await book.restore(checkpoint, live.restore_refusal)
        await self.add_notice(session_id, restore_done(plan, made))
        return made.id

    # -- what the user has seen --------------------------------------------------------------

    def show(self, session_id: str | None, viewer: str = "") -> None:
        """The session the user has on screen now (None: none). It is read; while it is shown,
        its rows growing and its turns ending are seen as they happen. Any other session
        that does something becomes unread until the user shows it. `viewer` tells apart
        the screens attached to one engine (the service's clients)."""
        self._unread.show(session_id, viewer)

    def watch(self, session_ids: Collection[str]) -> None:
        """Every frame reaches every listener in this process: nothing to choose."""

    def unread(self, session_id: str) -> bool:
        """True when the session did something (a row grew, a turn ended) the user has not
        seen since they last showed it."""
        return self._unread.unread(session_id)

    def save_draft(self, session_id: str, text: str) -> None:
        """Keep the prompt the user is writing for a session (across switches and restarts;
        written with the store's next flush). One past `DRAFT_BYTES` is refused
        (ValueError) and the stored draft stays: every client reads every draft each time
        it lists the sessions."""
        if draft_too_long(text):
            raise ValueError(draft_refusal(text))
        self.store.mark(session_id, draft=text)

    async def add_notice(self, session_id: str, text: str) -> None:
        """A row of Cockpit's own in a session's transcript (where an export went...)."""
        with saved():
            frames = await self.store.apply(note(session_id, "notice", text))
        self._emit(FramesEvent(session_id, tuple(frames)))

    async def report(self, session_id: str | None, message: str) -> None:
        """Tell the user something went wrong: an error row in the session when the store
        takes it, else a problem event (the UI shows it); never raises."""
        if session_id is not None:
            try:
                frames = await self.store.apply(note(session_id, "error", message))
            except Exception:
                log.exception("could not record an error in session %s", session_id)
            else:
                self._emit(FramesEvent(session_id, tuple(frames)))
                return
        self._emit(ProblemEvent(session_id, message))

    def _background(self, work: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        """Run work that no caller waits for (a write, a prompt's turn); the engine cancels
        what is left of it when it closes, and a failure is logged."""
        task: asyncio.Future[Any] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("work in the background failed", exc_info=task.exception())

    # -- live sessions ------------------------------------------------------------------------

    async def _mcp_servers(
        self, session_id: str, capabilities: Mapping[str, Any]
    ) -> list[McpServer]:
        """The MCP servers the session's agent is handed as it opens its session: the plan
        tool, then the user's (`mcp.toml`, as it is now) that this agent can take, then
        those its repository's `.cockpit.toml` asks for that the user approved, the
        session saying which and why others were left out. When the plan tool's socket
        cannot be made (its folder is another user's link), the agent starts without it,
        and the session says why."""
        live = self._live.get(session_id)
        notes: list[str] = []
        try:
            servers: list[McpServer] = list(await self.plans.servers(session_id))
            states = [McpServerState(PLAN_SERVER, "stdio", True)]
        except OSError as error:
            servers = []
            states = [McpServerState(PLAN_SERVER, "stdio", False, describe(error))]
            notes.append(f"The plan tool is off for this start of the agent: {describe(error)}")
        entries = self._current(self._mcp_source)
        takes = capabilities.get("mcpCapabilities") or {}
        if live is not None:
            world = self._environment(session_id)
            variables = world.variables if world is not None else {}
            handing = hand(entries, live.spec.name, takes, variables)
            states += handing_states(entries, handing)
            servers += handing.servers
            notes += [told] if (told := handing_note(handing)) else []
            found = await session_project(live.record.cwd, live.record.info)
            if found is not None and found[1].mcp:
                top, config = found
                approved = functools.partial(self.approvals.approved, top, "mcp")
                taken = {state.name for state in states}
                theirs, their_states = await asyncio.to_thread(
                    hand_repository, config.mcp, live.spec.name, takes, top, approved, taken
                )
                servers += theirs.servers
                states += their_states
                told = handing_note(theirs, "The repository's")
                notes += [told] if told else []
        self._handed[session_id] = states
        for said in notes:
            if live is not None:
                await live.inbox.tell(note(session_id, "notice", said))
        return servers

    async def mcp_servers(self, session_id: str) -> list[McpServerState]:
        """The MCP servers the session's agent was handed as it last opened its session."""
        await self.session(session_id)  # UnknownSession for no such session
        return list(self._handed.get(session_id, ()))

    # -- signing the agent in -----------------------------------------------------------------

    async def sign_in(self, session_id: str) -> SignIn | None:
        """How the session's agent asks the user to sign in, while it does (None else)."""
        await self.session(session_id)  # UnknownSession for no such session
        live = self._live.get(session_id)
        return live.sign_in.needed if live is not None else None

    async def authenticate(
        self,
        session_id: str,
        method_id: str,
        values: Mapping[str, str] | None = None,
        *,
        env: Environment | None = None,
    ) -> str:
        """Sign the session's agent in the way `method_id` names, with the values it needs
        (an `env_var` method's variables, a key method's key): kept in memory for this
        session only, never stored. The agent starts again, signs in, and opens its session;
        what happened, in a sentence. ValueError for a way the agent does not offer or a
        value left out; StartError (with a row saying why) when signing in fails."""
        self._remember(session_id, env)
        live = await self._live_session(session_id)
        method = live.sign_in.choose(method_id, values or {})
        if live.running:
            await live.stop("the agent signs in again")
        await live.start()
        said = f"Signed in with {method.name}."
        await live.inbox.tell(note(session_id, "notice", said))
        return said

    async def run_login(
        self, session_id: str, method_id: str, *, env: Environment | None = None
    ) -> str:
        """Run a `terminal` way's login (the agent's own command with the way's arguments)
        where the agents run, in the session's root, as a card whose input is what the
        user sends (`send_input`): a code a browser page shows is pasted there. Once it
        ends well, the agent is signed in with that way (`authenticate`); its row says how
        it ended. The key of its row. ValueError for a way that is not a terminal one."""
        world = env if env is not None or self.environment_required else current()
        if world is None:
            raise ValueError("The login was not run: the request brought no environment.")
        live = await self._live_session(session_id)
        method = next((m for m in live.sign_in.offered if m.id == method_id), None)
        if method is None or method.kind != "terminal":
            raise ValueError(f"The agent offers no terminal login {method_id!r}.")
        spec = self.agent_of(await self.session(session_id))
        login = Environment(method.login_env(world.variables, spec.env), world.umask)

        async def ended(code: int | None) -> None:
            if code != 0:
                return  # its row says how it ended; the agent still asks
            try:
                await self.authenticate(session_id, method.id, env=world)
            except (StartError, ValueError):  # a row says why; the agent still asks
                log.info("signing session %s in after its login failed", session_id)

        with saved():
            return await live.shells.run_with_input(method.login(spec.command), login, ended)

    async def send_input(self, session_id: str, text: str) -> bool:
        """Send a line the user typed to what runs in the session and reads it (a login
        run by `run_login`); False when nothing there reads input."""
        live = self._live.get(session_id)
        return live is not None and live.shells.send_line(text)

    async def logout(self, session_id: str, *, env: Environment | None = None) -> str:
        """Sign the session's agent out, where the agent offers it; what happened, in a
        sentence. ValueError when the agent offers no sign-out."""
        live = await self._running(session_id, env)
        if not live.sign_in.logout:
            raise ValueError(
                "This agent offers no sign-out (its `initialize` answer does not list "
                "`auth.logout`): sign out with the agent's own program."
            )
        assert live.conn is not None
        try:
            await send_request(live.conn, "logout", {})
        except RequestError as error:
            raise ValueError(f"The agent did not sign out: {describe(error)}") from error
        live.sign_in.forget()
        said = "Signed out: the agent asks you to sign in again on its next start."
        await live.inbox.tell(note(session_id, "notice", said))
        return said

    async def _inbox_of(self, session_id: str) -> SessionInbox:
        """Where a row Cockpit writes in a session goes (its live session's inbox)."""
        return (await self._live_session(session_id)).inbox

    async def _live_session(self, session_id: str) -> LiveSession:
        live = self._live.get(session_id)
        if live is None:
            record = await self.session(session_id)
            live = self._live.get(session_id)  # one made while the record was read
        if live is None:
            if read_worktree_archive(record.info) is not None:
                raise ValueError(refusal_to_start(session_id, record.info))
            live = LiveSession(
                record,
                self.agent_of(record),
                self.store,
                self._emit,
                data_dir=self.data_dir,
                handshake_timeout=self.handshake_timeout,
                stall_limit=self.stall_limit,
                auto_answer=self._answers.for_session(session_id),
                policy=lambda: self.policy,
                environment=lambda: self._environment(session_id),
                mcp_servers=lambda capabilities: self._mcp_servers(session_id, capabilities),
            )
            self._live[session_id] = live
        elif live.status in (Status.CLOSED, Status.EXITED, Status.ERROR) and not live.running:
            live.spec = self.agent_of(live.record)  # its next start runs the entry as it is now
        return live

    def allow_automatically(self, session_id: str, kinds: Sequence[str] | None = None) -> None:
        """Allow this session's questions without asking: every one (`kinds` None) or those
        of these kinds (`cockpit run --yes`, `--allow read,edit`). Decided before the rules
        and the user, and recorded as such; it lasts while the engine runs."""
        self._answers.allow(session_id, kinds)

    def live_sessions(self) -> list[str]:
        """The sessions with a live session object (an agent running, starting or stopped
        since Cockpit opened), in the order they were opened."""
        return list(self._live)

    def live_title(self, session_id: str) -> str:
        """The title of a live session, from memory: `cockpit service status` answers
        without reading the store, where other clients' reads may be queued."""
        live = self._live.get(session_id)
        return (live.record.title or "") if live is not None else ""

    def status(self, session_id: str) -> str:
        """The live state of a session (CLOSED when no agent runs for it)."""
        live = self._live.get(session_id)
        return live.status if live is not None else Status.CLOSED

    async def running_elsewhere(self, session_ids: Sequence[str]) -> list[str]:
        """Those of these sessions another Cockpit process holds (see
        `Store.writer_elsewhere`)."""
        return [
            session
            for session in session_ids
            if session not in self._live and self.store.writer_elsewhere(session) is not None
        ]

    def _remember(self, session_id: str, env: Environment | None) -> None:
        """Keep the world of a request that may start the session's agent. In process, no
        world given is this process's own, now."""
        if env is None and not self.environment_required:
            env = current()
        if env is not None:
            self._environments[session_id] = env

    def _environment(self, session_id: str) -> Environment | None:
        """The world the session's agent starts with (None: no request brought one)."""
        return self._environments.get(session_id)

    async def start(
        self,
        session_id: str,
        handshake_timeout: float | None = None,
        *,
        env: Environment | None = None,
    ) -> None:
        """Start the session's agent (reloading its session when it was stored), giving it
        `handshake_timeout` seconds to answer from now on (None: the engine's own). `env` is
        the world of the client asking (None in process: this process's own); an agent that
        runs already keeps its own, and the next start uses this one."""
        self._remember(session_id, env)
        live = await self._live_session(session_id)
        if handshake_timeout is not None:
            live.handshake_timeout = handshake_timeout
        await live.start()  # at once when it is up; after a stop under way when it stops

    async def stop(self, session_id: str, reason: str = "the session was closed") -> None:
        """Stop the session's agent; the transcript stays and reopens without it (a turn
        that runs ends with a row saying `reason`)."""
        live = self._live.get(session_id)
        if live is not None:
            await live.stop(reason)

    async def prompt(
        self,
        session_id: str,
        text: str,
        blocks: Sequence[ContentBlock] = (),
        *,
        then_stop: bool = False,
        env: Environment | None = None,
    ) -> str:
        """Send a prompt (starting the agent with `env` if needed); returns the turn's stop
        reason. `then_stop` stops the agent once this turn ends (see `Turns.prompt`)."""
        self._remember(session_id, env)
        live = await self._live_session(session_id)
        with saved():  # the prompt could not be stored, so it was never sent
            return await live.prompt(text, blocks, then_stop=then_stop)

    def send(
        self,
        session_id: str,
        text: str,
        blocks: Sequence[ContentBlock] = (),
        *,
        attach: Sequence[str] = (),
        env: Environment | None = None,
    ) -> None:
        """Send a prompt and return at once: the turn runs in the engine, not in its caller
        (a screen that goes away does not cut it), and whatever goes wrong with it is a row
        in the session (or a problem event when the store cannot take one). `attach` names
        rows of the user's commands whose output goes with it."""
        self._remember(session_id, env)
        task = self._background(self._send(session_id, text, blocks, tuple(attach)))
        sends = self._sends.setdefault(session_id, set())
        sends.add(task)
        task.add_done_callback(sends.discard)

    async def _send(
        self,
        session_id: str,
        text: str,
        blocks: Sequence[ContentBlock],
        attach: Sequence[str] = (),
    ) -> None:
        try:
            if attach:
                rows = [await self.row(session_id, key) for key in attach]
                blocks = [*blocks, *attachment_blocks(row for row in rows if row is not None)]
            await self.prompt(session_id, text, blocks)  # a failed start is a row already
        except SessionBusy as error:  # another Cockpit writes it: not ours to write in
            self._emit(ProblemEvent(session_id, str(error)))
        except Exception as error:
            log.exception("a prompt of session %s failed", session_id)
            await self.report(session_id, f"The prompt could not be sent: {describe(error)}")

    async def run_shell(
        self, session_id: str, command: str, *, env: Environment | None = None
    ) -> str:
        """Run a command the user typed (`!command`) in the session's root, with `env`, the
        world of the client asking (in process: this one's); the key of its row, stored
        before it starts (NotSaved when it cannot be: it never runs). The agent need not
        run, and does not start for it."""
        world = env if env is not None or self.environment_required else current()
        if world is None:  # the service's own world is a stale copy of the user's
            raise ValueError("The command was not run: the request brought no environment.")
        live = await self._live_session(session_id)
        with saved():
            return await live.shells.run(command, world)

    async def stop_shell(self, session_id: str) -> bool:
        """Kill the commands the user runs in a session; False when none runs."""
        live = self._live.get(session_id)
        return await live.shells.stop() if live is not None else False

    async def cancel(self, session_id: str) -> bool:
        """Cancel the running turn; False when none runs."""
        live = self._live.get(session_id)
        return await live.cancel() if live is not None else False

    async def set_mode(
        self, session_id: str, mode_id: str, *, env: Environment | None = None
    ) -> None:
        """Switch the agent's mode (starting it with `env` if it is not running)."""
        await (await self._running(session_id, env)).set_mode(mode_id)

    async def set_config_option(
        self,
        session_id: str,
        config_id: str,
        value: str | bool,
        *,
        env: Environment | None = None,
    ) -> None:
        """Set one of the agent's config options (the model is one), starting it with `env`
        if it is not running."""
        await (await self._running(session_id, env)).set_config_option(config_id, value)

    async def _running(self, session_id: str, env: Environment | None) -> LiveSession:
        await self.start(session_id, env=env)
        return self._live[session_id]

    # -- permissions --------------------------------------------------------------------------

    def _requests(self, session_id: str | None) -> Iterator[PermissionRequest]:
        """The requests waiting in one live session (or in all: None), in the order asked."""
        lives = self._live.values() if session_id is None else [self._live.get(session_id)]
        for live in lives:
            if live is not None:
                for pending in live.pending.values():
                    yield pending.request

    def pending_permissions(self, session_id: str | None = None) -> list[PermissionRequest]:
        """Requests waiting for the user, oldest first."""
        return waiting(self._requests(session_id), session_id)

    def pending_count(self, session_id: str | None = None) -> int:
        """How many requests wait for the user, in one session or in all, without listing
        them (the rail, the status line and the title ask at every event)."""
        return waiting_count(self._requests(session_id), session_id)

    def first_pending(self, session_id: str) -> PermissionRequest | None:
        """The request of a session that has waited longest: the one its prompt shows."""
        return first_waiting(self._requests(session_id), session_id)

    async def answer_permission(
        self, request_id: str, option_id: str | None, decided_by: str = "user"
    ) -> None:
        """Answer a pending request with one of the agent's options (None cancels it);
        `decided_by` says who answered, for the decision row."""
        for live in self._live.values():
            if request_id in live.pending:
                await live.answer(request_id, option_id, decided_by)
                return
        raise KeyError(f"no pending permission request {request_id!r}")

    async def answer_form(
        self,
        request_id: str,
        action: str,
        values: Mapping[str, Any] | None = None,
        decided_by: str = "user",
    ) -> None:
        """Answer a pending form: "accept" with its values, "decline" or "cancel"."""
        for live in self._live.values():
            if request_id in live.pending:
                await live.broker.forms.answer(request_id, action, values, decided_by)
                return
        raise KeyError(f"no pending form {request_id!r}")

    # -- reading ------------------------------------------------------------------------------

    async def page(
        self,
        session_id: str,
        before_seq: int | None = None,
        max_rows: int = PAGE_ROWS,
        max_bytes: int = PAGE_BYTES,
    ) -> Page:
        """The page of rows before `before_seq` (the tail by default), from the store."""
        return await self.store.page_before(session_id, before_seq, max_rows, max_bytes)

    async def rows_after(self, session_id: str, seq: int) -> Page:
        """The rows after `seq`, bounded like a page."""
        return await self.store.rows_after(session_id, seq)

    async def rows(self, session_id: str) -> list[Row]:
        """Every row of a session, oldest first (an export; `cockpit show`)."""
        return await self.store.all_rows(session_id)

    async def row(self, session_id: str, key: str) -> Row | None:
        """The row with this key, if the session has one."""
        return await self.store.row(session_id, key)

    async def last_row(self, session_id: str, kind: str) -> Row | None:
        """The session's newest row of this kind (its plan, its last error...)."""
        return await self.store.last_of_kind(session_id, kind)

    async def read_plan(self, session_id: str) -> Plan | None:
        """The session's plan, whoever wrote it last; None before any."""
        await self.session(session_id)  # UnknownSession for no such session
        return await self.plans.read(session_id)

    async def update_plan(
        self, session_id: str, entries: Sequence[PlanEntry], explanation: str | None = None
    ) -> Plan:
        """Write the session's whole plan as the user (see `EngineAPI.update_plan`)."""
        checked = read_items([item_to_wire(entry) for entry in entries])
        if isinstance(checked, str):
            raise ValueError(checked.replace("Not saved: ", "The plan was not saved: ", 1))
        if read_explanation(explanation) is False:
            raise ValueError("The plan was not saved: its explanation is too long.")
        with saved():
            return await self.plans.update(session_id, checked, explanation or None, "user")

    def now(self) -> float:
        """The engine's clock: what rows and sessions are stamped with."""
        return self.store.now()

    def unwritten(self, session_id: str | None = None) -> tuple[int, int]:
        """Messages and characters the store holds in memory because writes fail (of every
        session, or of one)."""
        return self.store.unwritten(session_id)


NO_WORKTREE = (
    "This session has no worktree of its own: Cockpit keeps checkpoints only for sessions "
    "in their own worktree."
)


@contextlib.contextmanager
def git_said() -> Iterator[None]:
    """A git failure as a ValueError that says what git said (it crosses the wire)."""
    try:
        yield
    except GitError as error:
        raise ValueError(f"Git could not do it: {error}") from error


async def shutdown(engine: Engine) -> None:
    """Close the engine, whatever state the loop is in."""
    with contextlib.suppress(Exception):
        await engine.close()
