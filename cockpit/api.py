"""The contract between the engine and its clients (the TUI, the command line): every
request they may make (`EngineAPI`) and every event they may receive, as frozen
dataclasses.

The UI and the command line are typed against this module and import nothing else of the
engine's; the engine implements it in process (`cockpit.engine.core.Engine`), and the
client of the service implements it a second time over a socket (`cockpit.remote`). So
everything here is plain data that can cross a wire: the records are the store's own
(`store.model`, pure dataclasses), and nothing here does I/O. Methods that return at once
answer from state the events keep current; the others are requests. `METHODS` lists every
member of the contract once, with how it reaches an engine in the service.
"""

from __future__ import annotations

import enum
import functools
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from cockpit.records import *  # noqa: F403 (the records are part of the contract)
from cockpit.records import (
    Form,
    PermissionOption,
    Plan,
    PlanEntry,
    SignIn,
    ToolCall,
    read_permission_option,
    read_tool_call,
)
from cockpit.records import __all__ as _records
from cockpit.text.textout import listed
from store.errors import SchemaError, SessionBusy, StoreUnreadable, UnknownSession
from store.model import Frame, Page, Row, SessionRecord

__all__ = [
    "ALLOW_KINDS",
    "DEFAULT_AGENT",
    "MISSING_FILE_POLICIES",
    "REJECT_KINDS",
    "METHODS",
    "RUN_INFO",
    "AgentInfo",
    "AgentSpec",
    "CHECKPOINT_PHASES",
    "AttentionEvent",
    "CallKind",
    "Checkpoint",
    "EngineAPI",
    "EngineEvent",
    "FileChange",
    "FileMatch",
    "Frame",
    "FramesEvent",
    "LinkEvent",
    "Listener",
    "ModelCall",
    "ModelCalls",
    "NotSaved",
    "Page",
    "PermissionEvent",
    "PermissionRequest",
    "ProblemEvent",
    "ReaderAPI",
    "ResyncEvent",
    "RestorePlan",
    "Row",
    "SavingEvent",
    "SchemaError",
    "ServiceStopped",
    "SessionBusy",
    "SessionEvent",
    "SessionRecord",
    "StartError",
    "Status",
    "StatusEvent",
    "StoreUnreadable",
    "UnknownSession",
    "RepositoryInfo",
    "CleanupItem",
    "WorktreeListing",
    "MergeResult",
    "McpServerState",
    "WorktreeRequest",
    "WorktreeStatus",
    "is_run",
    "option_of_kind",
    "policy_choice",
    *_records,
]


class StartError(RuntimeError):
    """The agent could not be started; the session holds an error row saying why."""


class NotSaved(RuntimeError):
    """The store could not take a write the client asked for (the disk is full, the file
    turned read-only): what was asked is not stored. The message says why, in one line.
    Clients catch this rather than the database's own errors, which stay the engine's."""


DEFAULT_AGENT = "demo"
"""The agent a new session runs when none is named: the bundled demo (no keys, no network)."""

AGENT_NICE = 10
"""How much lower than Cockpit's own an agent's CPU priority is, by default (0 to 19)."""

RUN_INFO = "run"
"""The key of a session's `info` that is true when `cockpit run` made the session."""


def is_run(record: SessionRecord) -> bool:
    """True for a session `cockpit run` made: `ls` and the rail mark it, after a restart
    too, since the mark is stored with the session."""
    return bool((record.info or {}).get(RUN_INFO))


class Status:
    """A live session's state, as the rail shows it."""

    STARTING = "starting"
    READY = "ready"
    WORKING = "working"
    CANCELLING = "cancelling"
    """The user cancelled the running turn; the agent has not ended it yet."""
    WAITING = "waiting"
    """A question waits for the user: a permission request, or a form to fill."""
    CLOSED = "closed"
    """No agent process; prompting starts one."""
    EXITED = "exited"
    """The agent died; prompting restarts it."""
    ERROR = "error"
    """The agent could not be started."""


ALLOW_KINDS = ("allow_once", "allow_always")
"""The kinds of an agent's option that allow, the narrowest first."""
REJECT_KINDS = ("reject_once", "reject_always")
"""The kinds of an agent's option that reject, the narrowest first."""


def option_of_kind(
    options: Iterable[Mapping[str, Any]], kinds: Iterable[str]
) -> Mapping[str, Any] | None:
    """The first option whose kind is one of `kinds`, in the order of `kinds`."""
    listed = list(options)
    for kind in kinds:
        for option in listed:
            if option.get("kind") == kind:
                return option
    return None


def policy_choice(options: Iterable[Mapping[str, Any]], allow: bool) -> Mapping[str, Any] | None:
    """The option a blanket answer picks: the narrowest allow, or the narrowest reject (a
    policy of the engine's, or a client with no one to ask)."""
    return option_of_kind(options, ALLOW_KINDS if allow else REJECT_KINDS)


@dataclass(frozen=True)
class PermissionRequest:
    """An agent asks before it acts: the tool call and the agent's own options."""

    id: str
    session: str
    tool_call: Mapping[str, Any]
    options: tuple[Mapping[str, Any], ...]
    created: float = field(default_factory=time.time)
    form: Form | None = None
    """Set when the agent asks the user to fill a form or open a link (`elicitation/create`)
    rather than to allow a tool call: it has no options, and is answered with
    `answer_form`."""

    @property
    def tool_call_id(self) -> str:
        """The tool call this request is about."""
        return str(self.tool_call.get("toolCallId", ""))

    @functools.cached_property
    def call(self) -> ToolCall:
        """The tool call as a record, read once (an unreadable one reads as empty)."""
        call = read_tool_call(self.tool_call)
        return call if isinstance(call, ToolCall) else ToolCall()

    @functools.cached_property
    def choices(self) -> tuple[PermissionOption, ...]:
        """The agent's options as records, read once, in its order; one without an id
        (that no answer could name) is left out."""
        read = (read_permission_option(option) for option in self.options)
        return tuple(option for option in read if isinstance(option, PermissionOption))

    @property
    def title(self) -> str:
        """What the agent wants to do, in its words."""
        return self.call.title or "a tool call"

    @property
    def kind(self) -> str:
        """The tool kind (read, edit, execute...), "other" when the agent gives none."""
        return self.call.kind or "other"

    def diffs(self) -> list[Mapping[str, Any]]:
        """The diff contents the request carries, as the agent sent them (the records
        are `call.diffs`)."""
        return [
            item
            for item in listed(self.tool_call.get("content"))
            if isinstance(item, Mapping) and item.get("type") == "diff"
        ]


@dataclass(frozen=True)
class FramesEvent:
    """Rows of a session changed: fold these frames into the view."""

    session: str
    frames: tuple[Frame, ...]


@dataclass(frozen=True)
class StatusEvent:
    """A session's live state changed."""

    session: str
    status: str
    detail: str = ""
    turn_ended: bool = False
    """True when this change ends a turn (`detail` is then its stop reason)."""


@dataclass(frozen=True)
class PermissionEvent:
    """A permission request appeared (resolved=False) or was answered (resolved=True)."""

    request: PermissionRequest
    resolved: bool
    option_id: str | None = None


@dataclass(frozen=True)
class SessionEvent:
    """A session's stored fields changed (title, mode, options, commands, usage)."""

    session: str


@dataclass(frozen=True)
class AttentionEvent:
    """A session became unread (it did something the user has not seen) or was read."""

    session: str
    unread: bool


@dataclass(frozen=True)
class ProblemEvent:
    """Something went wrong that the session's transcript could not record (the store
    failed, or another Cockpit writes the session): the user must still hear of it."""

    session: str | None
    message: str


@dataclass(frozen=True)
class SavingEvent:
    """Writing the transcript started failing (`problem` says why in one line: the disk is
    full) or works again (None). Until then what the agents send is held in memory and
    retried, and it is lost if Cockpit quits; the status line says so while it lasts. (A
    problem event with the whole story comes with the failure.)"""

    problem: str | None


@dataclass(frozen=True)
class ResyncEvent:
    """What the client holds may be stale (it attached again to the service, or fell behind
    and events were dropped): read again what is shown; a read replaces, so nothing is lost
    or doubled. An engine in the client's own process never sends it."""

    reason: str


@dataclass(frozen=True)
class LinkEvent:
    """The connection to the Cockpit service was cut (`problem` says so in one line) or
    works again (None). Meanwhile statuses may be stale and requests fail; the status line
    says so while it lasts. An engine in the client's own process never sends it."""

    problem: str | None


@dataclass(frozen=True)
class ServiceStopped:
    """The service said it stops for good: the user stopped it (`cockpit service stop`), or
    its store was removed under it. A client then starts no service by itself (it would undo
    the user's stop) and says why until the user starts one again."""

    reason: str
    """Why, in words ("stopped by `cockpit service stop`")."""
    lost: tuple[int, int] = (0, 0)
    """Messages and characters it could not keep (written to a store that was gone, or
    never written at all)."""
    store_gone: bool = False
    """True when its store was removed or replaced under it."""


EngineEvent = (
    FramesEvent
    | StatusEvent
    | PermissionEvent
    | SessionEvent
    | AttentionEvent
    | ProblemEvent
    | SavingEvent
    | ResyncEvent
    | LinkEvent
)

Listener = Callable[[EngineEvent], object]


# -- agents -----------------------------------------------------------------------------------


MISSING_FILE_POLICIES = frozenset({"error", "empty"})
"""How an agent's read of a missing file may be answered (`AgentSpec.missing_file`)."""


@dataclass(frozen=True)
class AgentSpec:
    """How to run one agent: a registry entry, or a command given on the command line."""

    name: str
    command: tuple[str, ...]
    title: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    install: str = ""
    missing_file: str = "error"
    """How a read of a missing file inside the root is answered: the JSON-RPC "resource
    not found" error, or (for agents that read before they create) empty content."""
    nice: int = AGENT_NICE
    """How many steps below Cockpit's own CPU priority the agent and the commands it runs
    through Cockpit work (0 to 19; 0 keeps Cockpit's)."""
    source: str = "bundled"
    terminal_env: tuple[str, ...] = ()
    """Secret-looking variables of Cockpit's environment (`*_API_KEY`, `*_TOKEN`...) that the
    commands the agent runs through `terminal/create` keep; the others are removed."""
    overrides: Mapping[str, str] = field(default_factory=dict)
    """Settings given on the command line (`--missing-file`) over the entry's or the
    defaults; a session stores them, so that it reopens with them."""

    @property
    def label(self) -> str:
        """The title, or the name when there is none."""
        return self.title or self.name


@dataclass(frozen=True)
class AgentInfo:
    """An agent the engine knows, and whether its program is installed where the engine
    runs (which may be another machine than the screen's)."""

    spec: AgentSpec
    installed: bool


# -- answers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileMatch:
    """A file under a session's folder that an `@` completion found: its path relative to
    the folder (POSIX), and the offsets of the characters the query matched, to highlight."""

    path: str
    positions: tuple[int, ...] = ()


@dataclass(frozen=True)
class ModelCall:
    """One call the built-in Claude agent made to the model (`cockpit inspect`): the request
    exactly as sent, rebuilt from its chunk log by the function that built it, the answer
    or the failure, and the usage."""

    number: int
    turn: str
    step: int
    upto: int
    """The last seq of the chunk log the request included."""
    model: str
    status: str
    stop_reason: str | None
    started: float
    ended: float | None
    usage: Mapping[str, int] | None
    request: Mapping[str, Any]
    response: Mapping[str, Any] | None
    error: str | None


@dataclass(frozen=True)
class ModelCalls:
    """The model calls of one session of the built-in Claude agent."""

    session: str | None
    """The Cockpit session; None when it was named by the agent's own session id."""
    agent_session: str
    log: str
    """The chunk log's file, where the engine read it."""
    total: int
    """How many calls the session made (`calls` may hold only the one asked for)."""
    calls: tuple[ModelCall, ...]


# -- worktree sessions ------------------------------------------------------------------------


@dataclass(frozen=True)
class WorktreeRequest:
    """A new session asks for a worktree of its own: on a new branch from `base`, or on an
    existing `branch`, with the user's uncommitted changes copied in or not."""

    base: str = "HEAD"
    """What the new branch starts from: "HEAD" (the checkout's current commit) or a
    branch's name."""
    branch: str | None = None
    """An existing branch to work on instead of a new one."""
    carry_changes: bool = False
    """Copy the checkout's uncommitted changes (and untracked files) into the worktree;
    the checkout keeps them."""


@dataclass(frozen=True)
class RepositoryInfo:
    """The git repository a folder lies in, as the new-session dialog offers it."""

    top: str
    """The checkout's top folder."""
    branch: str | None
    """The branch checked out (None: a detached HEAD)."""
    dirty: bool
    """The checkout has uncommitted changes or untracked files."""
    branches: tuple[str, ...] = ()
    """The local branches, by name."""


@dataclass(frozen=True)
class ProjectInfo:
    """What a repository's committed `.cockpit.toml` asks of its worktree sessions, and
    which of its commands the user approved (only those run)."""

    top: str
    """The checkout's top folder: what an approval is for."""
    setup: str | None = None
    setup_approved: bool = False
    test: str | None = None
    test_approved: bool = False
    copy: tuple[str, ...] = ()
    """The files copied in from the checkout (never staged)."""
    ports: int = 0
    """How many free ports each session gets."""
    problems: tuple[str, ...] = ()
    """What in the file is wrong, and left out."""
    mcp: tuple[tuple[str, bool], ...] = ()
    """Each MCP server it asks its sessions' agents be handed, as the text approved
    (name, command or URL and every value), and whether the user approved it."""

    @property
    def unapproved(self) -> list[tuple[str, str]]:
        """The (kind, command) pairs not approved yet: setup, test, then MCP servers."""
        found = [
            ("setup", self.setup, self.setup_approved),
            ("test", self.test, self.test_approved),
            *(("mcp", text, done) for text, done in self.mcp),
        ]
        return [(kind, command) for kind, command, done in found if command and not done]


@dataclass(frozen=True)
class Contender:
    """One session of a race, as the comparison shows it."""

    session: str
    agent: str
    status: str
    """The session's status now (`working` while its turn runs)."""
    files: int = 0
    added: int = 0
    removed: int = 0
    """Files changed against the base, and lines added and removed in them."""
    test: str = "none"
    """The repository's test command in its worktree: `passed`, `failed`, `running`,
    `waiting` (the turn has not ended), `not approved`, or `none` (no test command)."""
    seconds: float | None = None
    """From the race's start to the end of its turn (None: it has not ended)."""
    tokens: float | None = None
    """The tokens of its turn, as its agent reported them (None: it did not)."""
    cost: float | None = None
    currency: str = "USD"
    worktree: str = ""
    """`archived` or `removed` once its worktree went (then nothing more is read)."""


@dataclass(frozen=True)
class WorktreeStatus:
    """Where a worktree session's work stands, as the rail shows it."""

    branch: str
    changed: int = 0
    """Files changed and not committed, untracked ones included."""
    ahead: int = 0
    """Commits on the branch that its base has not."""
    behind: int = 0
    """Commits on the base that the branch has not."""
    missing: bool = False
    """The worktree's folder is gone (deleted by hand)."""


@dataclass(frozen=True)
class WorktreeListing:
    """One worktree session's worktree, as `cockpit worktrees` lists it."""

    session: str
    title: str
    repo: str
    path: str
    branch: str
    base: str
    size: int
    """Bytes the worktree takes on disk (0 when it is missing)."""
    status: WorktreeStatus
    archived: bool = False
    """The worktree was archived (`archive_worktree`): gone on purpose, not missing."""


@dataclass(frozen=True)
class CleanupItem:
    """One worktree session's worktree as the cleanup lists it: what removing it would
    take away, and whether anything of it is not merged."""

    session: str
    title: str
    path: str
    branch: str
    base: str
    """What the branch merges into (a branch's name, or a commit)."""
    size: int
    """Bytes it takes: the worktree and what an archive of it kept."""
    merged: bool
    """The base holds the branch's commits, or a squash of them."""
    unmerged: tuple[str, ...]
    """What would be lost, in words ("2 commits not in main", "3 uncommitted files"):
    empty when nothing would."""
    last_activity: float
    """When the session last did something (the engine's clock)."""
    missing: bool = False
    """The worktree's folder was deleted by hand."""
    archived: bool = False
    """The worktree was archived: its folder is gone on purpose."""


@dataclass(frozen=True)
class McpServerState:
    """One MCP server as the agent of a session last opened it: handed to it, or left out
    and why (the plan tool's, the user's from `mcp.toml`, a repository's from its
    `.cockpit.toml`)."""

    name: str
    transport: str
    """stdio, http or sse."""
    handed: bool
    why: str = ""
    """Why it was left out, in words (empty when it was handed)."""
    repository: str = ""
    """The checkout whose `.cockpit.toml` asks for it (empty: Cockpit's or the user's)."""
    approval: str = ""
    """What approving it approves (`approve_command(repository, "mcp", approval)`), for
    a repository's server left out only because it is not approved yet."""


@dataclass(frozen=True)
class Checkpoint:
    """The files of a worktree session at one moment: a commit of Cockpit's own under
    `refs/cockpit/<session>/<id>`, on no branch, made as a turn starts and ends and
    before a restore (so the restore can be undone)."""

    id: str
    """Its number in the session ("1", "2"...), what `restore` takes."""
    turn: int
    phase: str
    """"start" or "end" of `turn`, or "restore": made just before a restore."""
    commit: str
    time: float
    changed: int
    """Files that differ from the checkpoint before it (from HEAD for the first)."""


CHECKPOINT_PHASES = ("start", "end", "restore")


@dataclass(frozen=True)
class FileChange:
    """One file changed: by a worktree session against its base (committed on its branch
    or not, untracked included), or by a turn (or between two turns, `outside` one), with
    both its texts when it is text under the size bound, for the diff rendering."""

    path: str
    status: str
    """"added", "modified" or "deleted"."""
    old_text: str | None = None
    """The text before (None: added, or not readable)."""
    new_text: str | None = None
    """The text after (None: deleted, or not readable)."""
    readable: bool = True
    """False for a binary file or one over the size bound: no texts are given."""
    binary: bool = False
    """True when the file is known to be binary (else an unreadable file is too large)."""
    outside: bool = False
    """True when it changed between the previous turn's end and this turn's start."""


@dataclass(frozen=True)
class RestorePlan:
    """What putting a session's files back as a checkpoint holds them would do, before it
    is done: the user reads it and says yes."""

    checkpoint: str
    overwrite: tuple[str, ...] = ()
    create: tuple[str, ...] = ()
    delete: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    """Files the checkpoint holds that are ignored now: they are left as they are."""
    refusal: str | None = None
    """Why it cannot be done now (a turn or a command runs), else None."""


@dataclass(frozen=True)
class MergeResult:
    """What merging a worktree session's branch into its base branch did, or would do (a
    dry run), or why it was not done."""

    merged: bool
    how: str = ""
    """"fast-forward" or "merge commit" (what it did, or what a dry run would do)."""
    target: str = ""
    """The base branch merged into."""
    commit: str = ""
    """The base branch's commit after the merge (full sha)."""
    conflicts: tuple[str, ...] = ()
    """Files the merge would conflict on: nothing was changed."""
    refusal: str | None = None
    """Why it was not done, in a sentence (None when it was, or would be)."""


# -- the engine -------------------------------------------------------------------------------


class ReaderAPI(Protocol):
    """What the commands that only read the store ask (`ls`, `show`, `inspect`): the
    engine answers it, and so does the store read on its own when no service runs."""

    async def close(self, reason: str = "Cockpit quit") -> None:
        """Let go of what was read through."""

    async def sessions(self) -> list[SessionRecord]:
        """Every stored session, most recent first."""

    async def find_session(self, prefix: str) -> SessionRecord:
        """The session `prefix` names: the start of its id, else its title or the start
        of it (KeyError, saying why and listing those it fits, when none or several)."""

    def status(self, session_id: str) -> str:
        """The live state of a session (CLOSED when no agent runs for it)."""

    async def running_elsewhere(self, session_ids: Sequence[str]) -> list[str]:
        """Those of these sessions another Cockpit process runs now."""

    async def rows(self, session_id: str) -> list[Row]:
        """Every row of a session, oldest first."""

    async def model_calls(self, session: str, call: int | None = None) -> ModelCalls:
        """What the built-in Claude agent sent the model in `session` (a session, the start
        of its id, or the agent's own session id), or only call number `call`. KeyError,
        saying why, when there is no such session or it has no chunk log; ValueError when
        its log cannot be read."""


class EngineAPI(Protocol):
    """Everything the UI and the command line may ask of the engine."""

    @property
    def problems(self) -> Sequence[str]:
        """Configuration problems met while opening (a broken policy file...)."""

    @property
    def detaches(self) -> bool:
        """True when quitting this client leaves the agents running (the service owns
        them); False when they stop with it (the engine runs in this process)."""

    @property
    def saving_problem(self) -> str | None:
        """Why the transcript cannot be written now (the disk is full), else None."""

    @property
    def saving_failure(self) -> str | None:
        """Why the first write that failed while this engine ran failed (None: none did)."""

    @property
    def link_problem(self) -> str | None:
        """Why the engine cannot be reached now (the service's connection was cut and it is
        being attached again), else None; always None in process."""

    @property
    def service_stopped(self) -> ServiceStopped | None:
        """Why the service stopped for good, when it said so as it stopped (the client then
        waits for `reattach`); None while it runs, after a cut, and always in process."""

    async def reattach(self) -> None:
        """Start the service again (after it stopped for good) and attach to it; nothing in
        process. ConnectionError when it cannot be reached."""

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every event; returns the function that unsubscribes."""

    async def close(self, reason: str = "Cockpit quit") -> None:
        """Let go of the engine (in process: stop every agent and close the store;
        NotSaved when its last write fails)."""

    def now(self) -> float:
        """The engine's clock: what rows and sessions are stamped with."""

    def unwritten(self) -> tuple[int, int]:
        """Messages and characters the store holds in memory because writes fail."""

    # agents
    def agents(self) -> list[AgentInfo]:
        """Every agent the engine can run, in the registry's order."""

    def agent_of(self, record: SessionRecord) -> AgentSpec:
        """How a stored session's agent runs."""

    async def folders(self, partial: str) -> list[str]:
        """The names of the folders a typed path may go on to, where the agents run (the
        new-session dialog's completion): those in the folder `partial` ends in, up to its
        last `/`, that start with the rest of it; an absolute path or one from `~` (the
        home there). At most `folder_completion.FOLDERS_LIMIT`, sorted; none when that
        folder cannot be read."""

    # sessions
    async def create_session(
        self,
        agent: str | AgentSpec,
        cwd: str | Path,
        title: str | None = None,
        *,
        run: bool = False,
        worktree: WorktreeRequest | None = None,
    ) -> SessionRecord:
        """Store a new session for `agent` (a registry name or a spec) in folder `cwd`;
        `run` marks it as made by `cockpit run` (see `is_run`). With `worktree`, `cwd`
        must lie in a git repository: the session works in a worktree of its own, made
        now (see `read_worktree`; ValueError saying why when it cannot be). NotSaved when
        the store cannot take it."""

    async def repository(self, cwd: str) -> RepositoryInfo | None:
        """The git repository folder `cwd` lies in, where the engine runs (None: none, or
        no git there)."""

    async def race(
        self,
        agents: Sequence[str],
        cwd: str,
        prompt: str,
        base: str = "HEAD",
        allow: Sequence[str] | None = (),
    ) -> list[SessionRecord]:
        """Send `prompt` to each of `agents` (a name may come again: one agent several
        times), each in a worktree of its own from `base` of the repository `cwd` lies in;
        when each turn ends, the repository's approved test command runs in its worktree.
        `allow` is what each contender may do without asking, set before its prompt goes
        (as `allow_automatically` takes it: nothing, every kind with None, or these).
        The sessions, in order. KeyError for an agent not known (nothing is made then),
        ValueError when `cwd` is in no repository or `base` names nothing."""

    async def race_standings(self, race_id: str) -> list[Contender]:
        """The contenders of a race, in the order they were made (none: no such race)."""

    async def keep_contender(self, session_id: str) -> list[str]:
        """Keep one contender of its race: commit its work, merge it into its base branch
        in the user's checkout, archive the others; what was done, in sentences. ValueError
        saying why (nothing archived) when the merge is refused."""

    async def project(self, cwd: str, base: str = "HEAD") -> ProjectInfo:
        """What `.cockpit.toml` at `base` of the repository `cwd` lies in asks, where the
        engine runs (ValueError when `cwd` is in no repository, or `base` names nothing)."""

    async def approve_command(self, repository: str, kind: str, command: str) -> None:
        """Approve `command` as the `kind` ("setup" or "test") command of `repository` (a
        checkout's top folder): from now on it runs there, until its text changes."""

    async def worktree_status(self, session_id: str) -> WorktreeStatus | None:
        """Where a worktree session's work stands now (None for a session in none)."""

    async def worktrees(self) -> list[WorktreeListing]:
        """Every worktree session's worktree, most recent session first."""

    async def archive_worktree(self, session_id: str) -> str:
        """Archive a worktree session's worktree: stop its agent and the commands its
        terminals run, keep its uncommitted work and its branch, remove the worktree; what
        was kept, in words (ValueError saying why when it cannot be)."""

    async def restore_worktree(self, session_id: str) -> str:
        """Make an archived (or deleted by hand) worktree again from its branch and put back
        what was kept; what came back, in words (ValueError saying why when it cannot)."""

    async def cleanup_plan(self, merged_only: bool = False) -> list[CleanupItem]:
        """Every worktree session's worktree, with what removing it would lose (only those
        that would lose nothing: `merged_only`), most recent session first."""

    async def clean_worktrees(self, session_ids: Sequence[str], force: bool = False) -> list[str]:
        """Remove these sessions' worktrees, branches (those Cockpit made), Cockpit's refs
        and archives; one sentence per session. Unmerged work is kept, saying why, unless
        `force`."""

    async def worktree_changes(self, session_id: str) -> list[FileChange]:
        """Every file a worktree session changed against where its branch left its base:
        committed on the branch, staged, unstaged and untracked (not ignored), by path.
        ValueError for a session in no worktree, or one git cannot read."""

    async def commit_worktree(self, session_id: str, message: str) -> str:
        """Commit everything in a worktree session's worktree (`git add -A`) on its branch;
        a sentence saying what was committed. ValueError saying why not (no message,
        nothing to commit, a turn runs)."""

    async def merge_worktree(
        self, session_id: str, fast_forward_only: bool = False, dry_run: bool = False
    ) -> MergeResult:
        """Merge a worktree session's branch into its base branch in the user's checkout,
        tested first in git's object store: a conflict, a dirty checkout or another
        branch checked out changes nothing and says why. `dry_run` only tells what it
        would do."""

    async def discard_worktree(self, session_id: str) -> str:
        """Put a worktree session's branch and files back at its base, its ignored files
        kept, after keeping what was there under a ref of Cockpit's; a sentence saying how
        to undo it. ValueError while a turn runs."""

    async def undo_discard(self, session_id: str) -> str:
        """Bring back what the last discard of a worktree session put away (its branch and
        its files); a sentence. ValueError when there is none."""

    async def push_worktree(self, session_id: str, remote: str = "origin") -> str:
        """Push a worktree session's branch to `remote`, tracking it (`git push -u`); a
        sentence. ValueError saying why not (no such remote, git refused)."""

    async def sessions(self) -> list[SessionRecord]:
        """Every stored session, most recent first."""

    async def session(self, session_id: str) -> SessionRecord:
        """One stored session (KeyError when unknown)."""

    async def find_session(self, prefix: str) -> SessionRecord:
        """The session `prefix` names: the start of its id, else its title or the start
        of it (KeyError, saying why and listing those it fits, when none or several)."""

    async def rename(self, session_id: str, title: str) -> None:
        """Give a session a title (NotSaved when the store refuses it)."""

    async def delete(self, session_id: str) -> None:
        """Stop a session's agent and forget the session and its transcript (NotSaved when
        the store refuses it: the session stays, whole). A worktree session's worktree,
        the branch Cockpit made for it, its refs and its archive go with it; ValueError
        saying why, and nothing deleted, when its worktree holds work merged nowhere."""

    async def set_session_policy(self, session_id: str, kind: str, action: str | None) -> str:
        """Override the permission rule for one tool kind in one session (None removes the
        override); what changed, in words. ValueError for a kind or action that is none,
        NotSaved when the store refuses it."""

    async def session_policy(self, session_id: str) -> str:
        """The permission rules in force in a session, in words."""

    async def export(self, session_id: str, target: str = "", replace: bool = False) -> Path:
        """Write the transcript as Markdown where `target` says (relative to the session's
        folder; Cockpit's exports folder when empty) and note it in the transcript.
        FileExistsError when the file exists and `replace` is False; NotSaved when the
        file was written but the store refused the note."""

    async def find_files(self, session_id: str, query: str, limit: int = 8) -> list[FileMatch]:
        """Files under the session's folder that match `query` best (`@` completion)."""

    # checkpoints (a session in its own worktree keeps them)
    async def checkpoints(self, session_id: str) -> list[Checkpoint]:
        """The session's checkpoints, oldest first: one as each turn starts and ends, and
        one before each restore (none for a session without a worktree). ValueError,
        saying why, when git cannot read them."""

    async def turn_changes(self, session_id: str, turn: int) -> list[FileChange]:
        """What changed between the previous turn's end and turn `turn`'s start (`outside`
        a turn), then what the turn changed (so far, while it runs). KeyError when the turn
        has no checkpoint; ValueError when the session has no worktree or git fails."""

    async def restore_preview(self, session_id: str, checkpoint: str) -> RestorePlan:
        """What putting the files back as `checkpoint` (its number, or the start of its
        commit) would overwrite, create and delete, and why it cannot be done now if it
        cannot. Nothing changes. KeyError for no such checkpoint."""

    async def restore(self, session_id: str, checkpoint: str) -> str:
        """Put the session's working files back as `checkpoint` holds them (never HEAD, the
        branch, the index, or an ignored file), after checkpointing them as they are: the
        id of that checkpoint comes back, and restoring it undoes this. ValueError, saying
        why, while a turn or a command runs; KeyError for no such checkpoint."""

    # what the user has seen
    def show(self, session_id: str | None) -> None:
        """The session the user has on screen now (None: none); it is read, and its frames
        come to this client."""

    def watch(self, session_ids: Collection[str]) -> None:
        """Sessions whose frames this client wants besides the one it shows (`cockpit run`
        follows its own). Over a socket the others send status, questions and unread marks
        but no frames; an engine in this process sends every frame anyway."""

    def unread(self, session_id: str) -> bool:
        """True when the session did something the user has not seen."""

    def save_draft(self, session_id: str, text: str) -> None:
        """Keep the prompt the user is writing for a session."""

    async def add_notice(self, session_id: str, text: str) -> None:
        """A row of Cockpit's own in a session's transcript (NotSaved when the store cannot
        take it)."""

    async def report(self, session_id: str | None, message: str) -> None:
        """Tell the user something went wrong (an error row, else a problem event)."""

    # live sessions
    def status(self, session_id: str) -> str:
        """The live state of a session (a `Status`)."""

    async def running_elsewhere(self, session_ids: Sequence[str]) -> list[str]:
        """Those of these sessions that another Cockpit process (one started with --local)
        runs now: what it stored of their state is that process's word."""

    async def start(self, session_id: str, handshake_timeout: float | None = None) -> None:
        """Start the session's agent (reloading its session when it was stored), giving it
        `handshake_timeout` seconds to answer from now on (None: the engine's own)."""

    async def stop(self, session_id: str, reason: str = "the session was closed") -> None:
        """Stop the session's agent; the transcript stays."""

    async def prompt(self, session_id: str, text: str, *, then_stop: bool = False) -> str:
        """Send a prompt and wait for the turn; returns its stop reason. `then_stop` stops
        the agent once this turn ends, unless another prompt waits for it (`cockpit run`:
        the engine does it, so it happens when the caller went away mid-turn too).
        NotSaved when the prompt cannot be stored: it is then never sent."""

    def send(self, session_id: str, text: str, *, attach: Sequence[str] = ()) -> None:
        """Send a prompt and return at once: the turn runs in the engine. `attach` names
        rows of the session's commands (`run_shell`) whose output goes with the prompt,
        bounded (its head and its tail)."""

    async def run_shell(self, session_id: str, command: str) -> str:
        """Run `command` as the user, where the agents run: the user's shell (`$SHELL -c`)
        in the session's root, with the environment of the client asking and no input.
        Its row is stored before it starts (NotSaved when it cannot be: it never runs), and
        grows with its output; the key of that row comes back at once, the command goes on
        in the engine until it ends, `stop_shell` kills it or its session is closed."""

    async def stop_shell(self, session_id: str) -> bool:
        """Kill the commands the user runs in a session; False when none runs."""

    async def cancel(self, session_id: str) -> bool:
        """Cancel the running turn; False when none runs."""

    async def set_mode(self, session_id: str, mode_id: str) -> None:
        """Switch the agent's mode."""

    async def set_config_option(self, session_id: str, config_id: str, value: str | bool) -> None:
        """Set one of the agent's config options (the model is one)."""

    # permissions
    def allow_automatically(self, session_id: str, kinds: Sequence[str] | None = None) -> None:
        """Allow this session's questions without asking: all (`kinds` None) or of these kinds
        (`cockpit run --yes`, `--allow KINDS`)."""

    def pending_permissions(self, session_id: str | None = None) -> list[PermissionRequest]:
        """Requests waiting for the user, oldest first."""

    def pending_count(self, session_id: str | None = None) -> int:
        """How many requests wait for the user, in one session or in all."""

    def first_pending(self, session_id: str) -> PermissionRequest | None:
        """The request of a session that has waited longest."""

    async def answer_permission(
        self, request_id: str, option_id: str | None, decided_by: str = "user"
    ) -> None:
        """Answer a pending request with one of the agent's options (None cancels it)."""

    async def answer_form(
        self,
        request_id: str,
        action: str,
        values: Mapping[str, Any] | None = None,
        decided_by: str = "user",
    ) -> None:
        """Answer a pending form (a request with a `form`): "accept" with its `values`
        (text is coerced as the form's schema says), "decline" or "cancel". KeyError when
        no such form waits; ValueError saying which field is wrong when the values do not
        fit. Nothing answers a form on its own: `allow_automatically` never does."""

    # reading
    async def page(self, session_id: str, before_seq: int | None = None) -> Page:
        """The page of rows before `before_seq` (the tail by default)."""

    async def rows_after(self, session_id: str, seq: int) -> Page:
        """The rows after `seq`, bounded like a page."""

    async def rows(self, session_id: str) -> list[Row]:
        """Every row of a session, oldest first."""

    async def row(self, session_id: str, key: str) -> Row | None:
        """The row with this key, if the session has one."""

    async def last_row(self, session_id: str, kind: str) -> Row | None:
        """The session's newest row of this kind (its plan, its last error...)."""

    # the plan (Cockpit keeps one per session; the agent reads and writes it with its tool)
    async def read_plan(self, session_id: str) -> Plan | None:
        """The session's plan, whoever wrote it last (the agent's own plan updates, its plan
        tool, the user); None before any. UnknownSession for no such session."""

    async def update_plan(
        self, session_id: str, entries: Sequence[PlanEntry], explanation: str | None = None
    ) -> Plan:
        """Write the session's whole plan as the user: its next revision, returned once it
        is stored; the agent reads it back with its plan tool. ValueError saying why for a
        plan past the bounds (`cockpit.plan_protocol`), NotSaved when the store refuses."""

    async def mcp_servers(self, session_id: str) -> list[McpServerState]:
        """The MCP servers the session's agent was handed when it last opened its session
        since Cockpit started, and those left out with why (none before that)."""

    # signing the agent in
    async def sign_in(self, session_id: str) -> SignIn | None:
        """How the session's agent asks the user to sign in, while it does: its words and
        the ways it offers (None when it asks nothing)."""

    async def authenticate(
        self, session_id: str, method_id: str, values: Mapping[str, str] | None = None
    ) -> str:
        """Sign the session's agent in the way `method_id` names, with the values its
        fields need (`SignInMethod.fields`), kept in memory for this session only and
        never stored; the agent starts again, signs in and opens its session. A sentence
        saying so; ValueError for a way not offered or a value left out, StartError (with
        a row saying why) when the sign-in fails. A `terminal` method's login command
        (`SignInMethod.login`) is the client's to run first, where the agents run."""

    async def run_login(self, session_id: str, method_id: str) -> str:
        """Run a `terminal` way's login where the agents run, in the session's root, with
        the environment of the client asking: a card whose row grows with what it prints,
        and whose input is what `send_input` sends (a code pasted from a browser page).
        Once it ends well, the agent is signed in with that way. The key of its row at
        once; `stop_shell` kills it. ValueError for a way that is no terminal one."""

    async def send_input(self, session_id: str, text: str) -> bool:
        """Send a line the user typed to what runs in the session and reads input (a
        login from `run_login`), never to the agent; False when nothing there reads it."""

    async def logout(self, session_id: str) -> str:
        """Sign the session's agent out; a sentence. ValueError when it offers no
        sign-out, or refused it."""

    async def model_calls(self, session: str, call: int | None = None) -> ModelCalls:
        """What the built-in Claude agent sent the model (see `ReaderAPI.model_calls`)."""


# -- how each method of the contract reaches the engine --------------------------------------


class CallKind(enum.Enum):
    """How a member of `EngineAPI` reaches an engine that runs in the service."""

    LOCAL = "local"
    """Answered by the client itself, from the state the events keep current or from its
    own (a property, `subscribe`, `show`): never a call."""
    READ = "read"
    """A call that changes nothing: one a cut cuts short is sent again once the client has
    attached again (twice is as good as once), so a screen reading its transcript as the
    link blinks gets its page, not an error. The service drops a read whose client has
    gone (no one waits for it)."""
    ONCE = "once"
    """A call sent once: the service may have run it when the link is cut, so the caller
    hears of the cut. The service finishes it even when its client has gone."""
    START = "start"
    """A call sent once that may start an agent, or runs a command as the user: the service
    runs it with the environment its client's hello brought (the engine's `env` argument,
    which never crosses the wire as an argument)."""


METHODS: Mapping[str, CallKind] = MappingProxyType(
    {
        "problems": CallKind.LOCAL,
        "detaches": CallKind.LOCAL,
        "saving_problem": CallKind.LOCAL,
        "saving_failure": CallKind.LOCAL,
        "link_problem": CallKind.LOCAL,
        "service_stopped": CallKind.LOCAL,
        "reattach": CallKind.LOCAL,
        "subscribe": CallKind.LOCAL,
        "close": CallKind.LOCAL,
        "now": CallKind.LOCAL,
        "unwritten": CallKind.READ,
        # A client asks for the list in the background each time it lists it; after a cut
        # the state it attaches with brings the list, so a call cut short is not sent again.
        "agents": CallKind.ONCE,
        "agent_of": CallKind.READ,
        "folders": CallKind.READ,
        "create_session": CallKind.START,
        "repository": CallKind.READ,
        "race": CallKind.START,
        "race_standings": CallKind.READ,
        "keep_contender": CallKind.ONCE,
        "project": CallKind.READ,
        "approve_command": CallKind.ONCE,
        "worktree_status": CallKind.READ,
        "worktrees": CallKind.READ,
        "archive_worktree": CallKind.ONCE,
        "restore_worktree": CallKind.ONCE,
        "cleanup_plan": CallKind.READ,
        "clean_worktrees": CallKind.ONCE,
        "worktree_changes": CallKind.READ,
        "commit_worktree": CallKind.ONCE,
        "merge_worktree": CallKind.ONCE,
        "discard_worktree": CallKind.ONCE,
        "undo_discard": CallKind.ONCE,
        "push_worktree": CallKind.ONCE,
        "sessions": CallKind.READ,
        "session": CallKind.READ,
        "find_session": CallKind.READ,
        "rename": CallKind.ONCE,
        "delete": CallKind.ONCE,
        "set_session_policy": CallKind.ONCE,
        "session_policy": CallKind.READ,
        "export": CallKind.ONCE,
        "find_files": CallKind.READ,
        "checkpoints": CallKind.READ,
        "turn_changes": CallKind.READ,
        "restore_preview": CallKind.READ,
        "restore": CallKind.ONCE,
        "show": CallKind.LOCAL,
        "watch": CallKind.LOCAL,
        "unread": CallKind.LOCAL,
        "save_draft": CallKind.ONCE,
        "add_notice": CallKind.ONCE,
        "report": CallKind.ONCE,
        "status": CallKind.LOCAL,
        "running_elsewhere": CallKind.READ,
        "start": CallKind.START,
        "stop": CallKind.ONCE,
        "prompt": CallKind.START,
        "send": CallKind.START,
        "run_shell": CallKind.START,
        "stop_shell": CallKind.ONCE,
        "cancel": CallKind.ONCE,
        "set_mode": CallKind.START,
        "set_config_option": CallKind.START,
        "allow_automatically": CallKind.ONCE,
        "pending_permissions": CallKind.LOCAL,
        "pending_count": CallKind.LOCAL,
        "first_pending": CallKind.LOCAL,
        "answer_permission": CallKind.ONCE,
        "answer_form": CallKind.ONCE,
        "page": CallKind.READ,
        "rows_after": CallKind.READ,
        "rows": CallKind.READ,
        "row": CallKind.READ,
        "last_row": CallKind.READ,
        "read_plan": CallKind.READ,
        "update_plan": CallKind.ONCE,
        "mcp_servers": CallKind.READ,
        "sign_in": CallKind.READ,
        "authenticate": CallKind.START,
        "run_login": CallKind.START,
        "send_input": CallKind.ONCE,
        "logout": CallKind.START,
        "model_calls": CallKind.READ,
    }
)
"""Every member of `EngineAPI`, by name, and how it reaches the engine: the contract's one
list of methods. The service runs by name the calls in it (every kind but LOCAL) and
nothing else (`cockpit.protocol.CALLS`); a client over the socket sends reads again after a
cut (`cockpit.protocol.READS`). `show` and `watch` travel as notifications of their own."""
