"""The ACP shapes the clients read, as frozen records: a tool call and what it holds (text,
diffs, terminals, raw output), a permission option, the agent's modes, config options and
commands, a plan, and a session's usage. One pure function per shape (`read_...`) turns the
JSON a row or a session stores into its record.

The JSON itself does not change: rows and sessions travel and are stored as the agent sent
them (the engine checks them with the SDK's models on the way in), and a client reads the
records from them. So a stored value written by an older Cockpit, or edited by hand, is
read too: a field of the wrong type reads as absent, and a value that is not even an
object reads as `Unknown`, which the screen shows as such. No reader ever raises.

Part of the contract (`cockpit.api` re-exports it): no Textual, no SDK, no engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cockpit.text.command_line import readable_command

__all__ = [
    "ARCHIVED",
    "ATTACHMENT_META",
    "FIELD_KINDS",
    "KEY_FIELD",
    "RACE_INFO",
    "REMOVED",
    "SHELL_STATES",
    "SIGN_IN_KINDS",
    "WORKTREE_ARCHIVE_INFO",
    "WORKTREE_INFO",
    "AgentCommand",
    "Attachment",
    "ConfigOption",
    "ConfigValue",
    "Cost",
    "DiffContent",
    "ExitStatus",
    "Form",
    "FormField",
    "Location",
    "Mode",
    "Modes",
    "PermissionOption",
    "Plan",
    "PlanEntry",
    "RaceEntry",
    "RawOutput",
    "ShellRun",
    "SignIn",
    "SignInMethod",
    "TerminalContent",
    "TerminalOutput",
    "TextContent",
    "ToolCall",
    "ToolContent",
    "TurnTokens",
    "Unknown",
    "Usage",
    "Worktree",
    "WorktreeArchive",
    "read_attachments",
    "read_command",
    "read_config_option",
    "read_modes",
    "read_permission_option",
    "read_plan",
    "read_race",
    "read_shell_run",
    "read_sign_in_method",
    "read_sign_in_methods",
    "read_tool_call",
    "read_usage",
    "read_worktree",
    "read_worktree_archive",
]


@dataclass(frozen=True)
class Unknown:
    """A stored value that does not fit the record it should be (a tool call stored as a
    list, say): the screen says so instead of failing."""

    shape: str
    """What it should have been ("tool call", "plan"...)."""
    found: str
    """How it was stored instead, in words ("as a list", "without an id")."""

    @property
    def sentence(self) -> str:
        """What the screen says in its place."""
        return f"Cockpit cannot read this {self.shape}: it was stored {self.found}."


def _found(value: object) -> str:
    """How a JSON value was stored, in words, for `Unknown` (never the value itself: it may
    be anything, of any length)."""
    if isinstance(value, Mapping):
        return "without the fields it needs"
    words = {list: "as a list", str: "as a text", bool: "as a truth value", int: "as a number"}
    for kind, word in words.items():
        if isinstance(value, kind):
            return word
    return "as a number" if isinstance(value, float) else "as something else"


def _text(value: object) -> str | None:
    """A field shown as text: None when absent or empty, else its words (an agent may send
    a number where ACP says text; it shows as written)."""
    return str(value) if value else None


def _number(value: object) -> float | None:
    """A count or an amount: None unless it is a number (a bool is not one)."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _items(value: object) -> list[Any]:
    """The items of a field that should hold a list: none when it holds anything else."""
    return value if isinstance(value, list) else []


# -- tool calls ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffContent:
    """A change to one file: its text before (None for a new file) and after."""

    path: str | None
    old_text: str | None
    new_text: str


@dataclass(frozen=True)
class TextContent:
    """Text a tool call shows (Markdown)."""

    text: str


@dataclass(frozen=True)
class TerminalContent:
    """A terminal whose output the tool call shows, live while it runs."""

    terminal_id: str


ToolContent = DiffContent | TextContent | TerminalContent


@dataclass(frozen=True)
class Location:
    """A place a tool call acts on."""

    path: str
    line: int | None = None


@dataclass(frozen=True)
class ExitStatus:
    """How a terminal's command ended: its exit code, or the signal that killed it."""

    code: int | None
    signal: str | None


@dataclass(frozen=True)
class TerminalOutput:
    """What a terminal printed, kept on its tool call (Cockpit's own field)."""

    output: str
    truncated: bool
    exit_status: ExitStatus | None
    """None while it runs."""


@dataclass(frozen=True)
class RawOutput:
    """What an agent without client terminals reports a tool call produced (Codex does)."""

    texts: tuple[str, ...]
    """Its printed text, in the order `stdout`, `stderr`, `output`, `formatted_output`
    (or the whole raw output when it is text)."""
    exit_code: int | None


@dataclass(frozen=True)
class ToolCall:
    """A tool call with all its updates merged, as a tool row (or a permission request)
    holds it."""

    id: str | None = None
    title: str | None = None
    kind: str | None = None
    status: str = "pending"
    locations: tuple[Location, ...] = ()
    content: tuple[ToolContent, ...] = ()
    terminals: Mapping[str, TerminalOutput] | None = None
    """Output of the terminals the call embeds, by terminal id."""
    raw_output: RawOutput | None = None
    """None when the agent reports none."""
    command: str | None = None
    """The command line it would run, when the agent says (`rawInput`)."""

    @property
    def diffs(self) -> tuple[DiffContent, ...]:
        """The changes it makes (or would make)."""
        return tuple(item for item in self.content if isinstance(item, DiffContent))

    @property
    def has_terminal(self) -> bool:
        """True when it embeds a terminal."""
        return any(isinstance(item, TerminalContent) for item in self.content)

    def terminal(self, terminal_id: str) -> TerminalOutput | None:
        """A terminal's output, None until it has some."""
        return (self.terminals or {}).get(terminal_id)


def read_tool_call(payload: object) -> ToolCall | Unknown:
    """The tool call a row's payload (or a permission request) holds; an empty one for no
    payload yet."""
    if payload is None:
        return ToolCall()
    if not isinstance(payload, Mapping):
        return Unknown("tool call", _found(payload))
    content = (_content(item) for item in _items(payload.get("content")))
    terminals = payload.get("terminalOutput")
    return ToolCall(
        id=_text(payload.get("toolCallId")),
        title=_text(payload.get("title")),
        kind=_text(payload.get("kind")),
        status=str(payload.get("status") or "pending"),
        locations=tuple(
            Location(str(loc["path"]), _line(loc.get("line")))
            for loc in _items(payload.get("locations"))
            if isinstance(loc, Mapping) and loc.get("path")
        ),
        content=tuple(item for item in content if item is not None),
        terminals={
            str(key): _terminal(data)
            for key, data in terminals.items()
            if isinstance(data, Mapping)
        }
        if isinstance(terminals, Mapping)
        else None,
        raw_output=_raw_output(payload.get("rawOutput")),
        command=_command(payload.get("rawInput")),
    )


def _line(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value else None


def _content(item: object) -> ToolContent | None:
    if not isinstance(item, Mapping):
        return None
    kind = item.get("type")
    if kind == "diff":
        path, old = item.get("path"), item.get("oldText")
        return DiffContent(
            None if path is None else str(path),
            None if old is None else str(old),
            str(item.get("newText") or ""),
        )
    if kind == "content":
        block = item.get("content")
        if isinstance(block, Mapping) and isinstance(block.get("text"), str):
            return TextContent(block["text"])
    if kind == "terminal":
        return TerminalContent(str(item.get("terminalId")))
    return None


def _terminal(data: Mapping[str, Any]) -> TerminalOutput:
    status = data.get("exitStatus")
    exit_status = None
    if isinstance(status, Mapping):
        code, signal = status.get("exitCode"), status.get("signal")
        exit_status = ExitStatus(
            code if isinstance(code, int) else None, None if signal is None else str(signal)
        )
    return TerminalOutput(str(data.get("output") or ""), bool(data.get("truncated")), exit_status)


RAW_TEXTS = ("stdout", "stderr", "output", "formatted_output")
"""The fields of a raw output that hold what the command printed (Codex's names)."""


def _raw_output(raw: object) -> RawOutput | None:
    if not raw:
        return None
    if isinstance(raw, str):
        return RawOutput((raw,), None)
    if not isinstance(raw, Mapping):
        return RawOutput((), None)
    texts = tuple(raw[name] for name in RAW_TEXTS if isinstance(raw.get(name), str) and raw[name])
    found = raw.get("exit_code", raw.get("exitCode"))
    return RawOutput(
        texts, found if isinstance(found, int) and not isinstance(found, bool) else None
    )


def _command(raw: object) -> str | None:
    """The command line in a tool call's `rawInput` (`command`, with `args` when the agent
    splits them out)."""
    if not isinstance(raw, Mapping):
        return None
    command, args = raw.get("command"), raw.get("args")
    if isinstance(command, list):
        return readable_command(str(part) for part in command)
    if not isinstance(command, str) or not command:
        return None
    if isinstance(args, list) and args:
        return readable_command([command, *(str(arg) for arg in args)])
    return command


# -- permission options -------------------------------------------------------------------------


@dataclass(frozen=True)
class PermissionOption:
    """One of the agent's answers to a permission request."""

    option_id: str
    name: str | None
    kind: str
    """allow_once, allow_always, reject_once, reject_always ("" when the agent gives none)."""


def read_permission_option(value: object) -> PermissionOption | Unknown:
    """One option of a permission request; Unknown without an id to answer with."""
    if not isinstance(value, Mapping) or value.get("optionId") is None:
        return Unknown("option", _found(value))
    name, kind = value.get("name"), value.get("kind")
    return PermissionOption(
        str(value["optionId"]),
        None if name is None else str(name),
        "" if kind is None else str(kind),
    )


# -- modes, config options, commands ------------------------------------------------------------


FIELD_KINDS = ("string", "number", "integer", "boolean", "choice", "choices")
"""What a form field takes: text, a number, a whole number, yes or no, one of a list, or
any of a list."""


@dataclass(frozen=True)
class FormField:
    """One field of a form an agent asks the user to fill (`elicitation/create`), read
    from the JSON schema it sent (`cockpit.form_rules.read_form`), its text made safe to
    show."""

    name: str
    """The key its value is sent back under."""
    kind: str
    """One of FIELD_KINDS."""
    title: str = ""
    description: str = ""
    required: bool = False
    default: str | float | bool | tuple[str, ...] | None = None
    minimum: float | None = None
    """The least value of a number."""
    maximum: float | None = None
    """The greatest value of a number."""
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    """The fewest values a multi-select takes."""
    max_items: int | None = None
    values: tuple[str, ...] = ()
    """What a choice may be, as sent back."""
    labels: tuple[str, ...] = ()
    """What each of `values` is called on screen (the value itself when it has no title)."""
    secret: bool = False
    """True when its name or title says it holds a secret: masked on screen and in rows."""

    @property
    def label(self) -> str:
        """What the field is called on screen."""
        return self.title or self.name


@dataclass(frozen=True)
class Form:
    """What an agent asks the user (`elicitation/create`): a form to fill, or a link to
    open (`url`, never opened without the user)."""

    message: str
    fields: tuple[FormField, ...] = ()
    url: str = ""
    """The link of a URL-mode question; empty for a form."""
    elicitation_id: str = ""
    """The agent's id of a URL-mode question, which its `elicitation/complete` names."""
    title: str = ""

    @property
    def is_link(self) -> bool:
        """True for a link to open rather than a form to fill."""
        return bool(self.url)


@dataclass(frozen=True)
class Mode:
    """One of the agent's modes."""

    id: str
    name: str | None


@dataclass(frozen=True)
class Modes:
    """The agent's modes and the current one."""

    current_id: str | None = None
    available: tuple[Mode, ...] = ()

    @property
    def current(self) -> Mode | None:
        """The current mode, when the agent lists it."""
        return next((mode for mode in self.available if mode.id == self.current_id), None)


def read_modes(value: object) -> Modes:
    """A session's modes (none when it stores none, or something else)."""
    if not isinstance(value, Mapping):
        return Modes()
    current = value.get("currentModeId")
    return Modes(
        _text(current),
        tuple(
            Mode(str(mode["id"]), _text(mode.get("name")))
            for mode in _items(value.get("availableModes"))
            if isinstance(mode, Mapping) and mode.get("id") is not None
        ),
    )


@dataclass(frozen=True)
class ConfigValue:
    """One value a select option can take."""

    value: str
    name: str | None


@dataclass(frozen=True)
class ConfigOption:
    """One of the agent's config options: a select (the model, a thinking level) or a
    boolean."""

    id: str
    name: str | None
    type: str | None
    category: str | None
    current: str | bool | None
    values: tuple[ConfigValue, ...] = ()
    """A select's values, groups flattened."""

    @property
    def label(self) -> str:
        """Its name, or its id when it has none."""
        return self.name or self.id

    @property
    def current_name(self) -> str | None:
        """The display name of the current value."""
        for value in self.values:
            if value.value == self.current:
                return value.name or value.value
        return str(self.current) if self.current is not None else None


def read_config_option(value: object) -> ConfigOption | Unknown:
    """One config option of a session; Unknown without an id to set it by."""
    if not isinstance(value, Mapping) or value.get("id") is None:
        return Unknown("option", _found(value))
    current = value.get("currentValue")
    return ConfigOption(
        str(value["id"]),
        _text(value.get("name")),
        _text(value.get("type")),
        _text(value.get("category")),
        current if isinstance(current, bool) or current is None else str(current),
        tuple(_config_values(value.get("options"))),
    )


def _config_values(entries: object) -> list[ConfigValue]:
    values: list[ConfigValue] = []
    for entry in _items(entries):
        if not isinstance(entry, Mapping):
            continue
        group = _items(entry.get("options")) if "options" in entry else [entry]
        values.extend(
            ConfigValue(str(choice.get("value")), _text(choice.get("name")))
            for choice in group
            if isinstance(choice, Mapping)
        )
    return values


@dataclass(frozen=True)
class AgentCommand:
    """A slash command the agent offers."""

    name: str
    description: str = ""
    hint: str = ""
    """What its input is, when it takes one."""


def read_command(value: object) -> AgentCommand | Unknown:
    """One of the agent's commands; Unknown without a name."""
    if not isinstance(value, Mapping) or not value.get("name"):
        return Unknown("command", _found(value))
    given = value.get("input")
    hint = given.get("hint") if isinstance(given, Mapping) else None
    return AgentCommand(str(value["name"]), str(value.get("description") or ""), str(hint or ""))


# -- plans --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanEntry:
    """One step of a session's plan."""

    content: str
    status: str = "pending"
    """pending, in_progress, completed, or cancelled (the plan tool's; ACP has three)."""
    priority: str | None = None
    """high, medium or low, when the writer gave one."""


@dataclass(frozen=True)
class Plan:
    """A session's plan, as its plan row holds it: whichever wrote it last, the agent's own
    plan updates (`agent`), the plan tool (`tool`) or the user (`user`), each write the
    next revision of the session's plan."""

    entries: tuple[PlanEntry, ...] = ()
    revision: int = 0
    author: str = "agent"
    explanation: str | None = None


def read_plan(payload: object) -> Plan | Unknown:
    """The plan a plan row's payload holds; an empty one for no payload."""
    if payload is None:
        return Plan()
    if not isinstance(payload, Mapping):
        return Unknown("plan", _found(payload))
    revision, author, explanation = (
        payload.get("revision"), payload.get("author"), payload.get("explanation")
    )  # fmt: skip
    return Plan(
        tuple(
            PlanEntry(
                str(entry.get("content", "")),
                "pending" if entry.get("status") is None else str(entry["status"]),
                None if entry.get("priority") is None else str(entry["priority"]),
            )
            for entry in _items(payload.get("entries"))
            if isinstance(entry, Mapping)
        ),
        revision if isinstance(revision, int) else 0,
        author if isinstance(author, str) else "agent",
        explanation if isinstance(explanation, str) else None,
    )


# -- the user's commands --------------------------------------------------------------------------

SHELL_STATES = ("running", "exited", "killed", "failed", "cut")
"""Where a command the user ran stands: running, ended by itself (with its exit code),
killed (by the user, or with its session), never started (the row says why), or cut:
Cockpit stopped while it ran (it crashed), so how it ended is not known."""


@dataclass(frozen=True)
class ShellRun:
    """A command the user ran with `!`, as its row's payload holds it (the row's text is
    its output)."""

    command: str
    state: str = "running"
    exit_code: int | None = None
    signal: str | None = None
    left_out: int = 0
    """Characters of output left out of the middle (the row keeps the head and the tail)."""
    takes_input: bool = False
    """It reads the lines the user sends (`send_input`: an agent's login), while it runs."""

    @property
    def running(self) -> bool:
        """True until the command ended (or was found never to have started)."""
        return self.state == "running"


def read_shell_run(payload: object) -> ShellRun | Unknown:
    """The run a shell row's payload describes."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("command"), str):
        return Unknown("command", _found(payload))
    state = payload.get("state")
    code = _number(payload.get("exitCode"))
    left_out = _number(payload.get("leftOut"))
    return ShellRun(
        payload["command"],
        state if state in SHELL_STATES else "failed",
        int(code) if code is not None else None,
        _text(payload.get("signal")),
        int(left_out) if left_out else 0,
        payload.get("input") is True and state == "running",
    )


@dataclass(frozen=True)
class Attachment:
    """The output of a command the user ran, sent with a prompt (a user row's payload
    keeps each block the prompt carried; this is one of them, as the bubble names it)."""

    command: str
    characters: int


ATTACHMENT_META = "cockpit"
"""The `_meta` key of a prompt's block that is a command's output (its value names the
command: `{"shell": row key, "command": text}`)."""


def read_attachments(payload: object) -> tuple[Attachment, ...]:
    """The commands' outputs a user row's prompt carried, in order."""
    if not isinstance(payload, Mapping):
        return ()
    found: list[Attachment] = []
    for block in _items(payload.get("blocks")):
        meta = block.get("_meta") if isinstance(block, Mapping) else None
        ours = meta.get(ATTACHMENT_META) if isinstance(meta, Mapping) else None
        if isinstance(ours, Mapping) and isinstance(ours.get("command"), str):
            text = block.get("text")
            found.append(Attachment(ours["command"], len(text) if isinstance(text, str) else 0))
    return tuple(found)


# -- usage --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cost:
    """What the session cost so far."""

    amount: float
    currency: str = "USD"


@dataclass(frozen=True)
class TurnTokens:
    """The tokens of the last turn, as the agent reported them with its stop reason."""

    input: float | None = None
    output: float | None = None
    thought: float | None = None
    cached_read: float | None = None
    cached_write: float | None = None


@dataclass(frozen=True)
class Usage:
    """How much of its context a session uses, what it cost, and its last turn's tokens."""

    used: float | None = None
    size: float | None = None
    cost: Cost | None = None
    last_turn: TurnTokens | None = None


def read_usage(value: object) -> Usage:
    """A session's usage (none when it stores none, or something else)."""
    if not isinstance(value, Mapping):
        return Usage()
    cost, last = value.get("cost"), value.get("lastTurn")
    amount = _number(cost.get("amount")) if isinstance(cost, Mapping) else None
    return Usage(
        _number(value.get("used")),
        _number(value.get("size")),
        None
        if amount is None or not isinstance(cost, Mapping)
        else Cost(amount, str(cost.get("currency") or "USD")),
        None
        if not isinstance(last, Mapping)
        else TurnTokens(
            _number(last.get("inputTokens")),
            _number(last.get("outputTokens")),
            _number(last.get("thoughtTokens")),
            _number(last.get("cachedReadTokens")),
            _number(last.get("cachedWriteTokens")),
        ),
    )


# -- worktree sessions --------------------------------------------------------------------------

WORKTREE_INFO = "worktree"
"""The key of a session's `info` that holds its worktree, for a session in one."""


@dataclass(frozen=True)
class Worktree:
    """Where a worktree session works: the user's checkout it was made from, its own
    worktree (the session's root), its branch, and the base it was made from."""

    repo: str
    """The top folder of the user's checkout."""
    path: str
    """The worktree's folder: the session's root."""
    branch: str
    base: str
    """What the user picked to start from: a branch's name, or "HEAD"."""
    base_commit: str
    """The commit the branch was made from (full sha)."""
    base_branch: str | None = None
    """For a base of "HEAD": the branch checked out in the checkout then (None: a
    detached HEAD), which the session's work merges back into."""
    copied: tuple[str, ...] = ()
    """The files `.cockpit.toml` had copied in from the checkout: never staged."""
    ports: tuple[int, ...] = ()
    """The free ports the session was given (`COCKPIT_PORT`, `COCKPIT_PORTS`)."""


def read_worktree(info: object) -> Worktree | None:
    """The worktree of a session, from its `info` (None for a session in none, or one
    whose stored worktree lacks a field: it is then shown as a plain session)."""
    if not isinstance(info, Mapping):
        return None
    value = info.get(WORKTREE_INFO)
    if not isinstance(value, Mapping):
        return None
    found = [value.get(name) for name in ("repo", "path", "branch", "base", "base_commit")]
    texts = [item for item in found if isinstance(item, str) and item]
    if len(texts) != len(found):
        return None
    repo, path, branch, base, base_commit = texts
    came = value.get("base_branch")
    copied, ports = value.get("copied"), value.get("ports")
    return Worktree(
        repo,
        path,
        branch,
        base,
        base_commit,
        came if isinstance(came, str) and came else None,
        tuple(p for p in copied if isinstance(p, str)) if isinstance(copied, list | tuple) else (),
        tuple(p for p in ports if isinstance(p, int) and not isinstance(p, bool) and 0 < p < 65536)
        if isinstance(ports, list | tuple)
        else (),
    )


WORKTREE_ARCHIVE_INFO = "worktree_archive"
"""The key of a worktree session's `info` that says its worktree is archived (or removed
by a cleanup), and where what was kept of it lies."""

ARCHIVED, REMOVED = "archived", "removed"
"""The states of a worktree that is not there on purpose: archived (its branch and its
uncommitted work are kept, it can be restored) or removed by a cleanup (nothing kept)."""


@dataclass(frozen=True)
class WorktreeArchive:
    """What became of a worktree session's worktree that Cockpit took away."""

    state: str
    """`archived` or `removed`."""
    folder: str = ""
    """Where what was kept lies (the patch, the ignored files): "" when nothing was."""
    patch: bool = False
    """The worktree had uncommitted changes or untracked files: they are in the patch."""
    at: float = 0.0
    """When it was taken away (the engine's clock)."""


def read_worktree_archive(info: object) -> WorktreeArchive | None:
    """What became of a session's worktree (None: it is where it was made, or missing)."""
    if not isinstance(info, Mapping):
        return None
    value = info.get(WORKTREE_ARCHIVE_INFO)
    if not isinstance(value, Mapping) or value.get("state") not in (ARCHIVED, REMOVED):
        return None
    folder, at = value.get("folder"), value.get("at")
    return WorktreeArchive(
        str(value["state"]),
        folder if isinstance(folder, str) else "",
        value.get("patch") is True,
        float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0,
    )


# -- races ----------------------------------------------------------------------------------------

RACE_INFO = "race"
"""The key of a session's `info` that makes it a contender of a race."""


@dataclass(frozen=True)
class RaceEntry:
    """A session's place in a race: one prompt sent to several agents, each in its own
    worktree."""

    id: str
    prompt: str
    at: float
    """When the race began (the engine's clock)."""
    ended: float | None = None
    """When the contender's turn ended (None: it has not)."""
    test: str | None = None
    """The row of the run of the repository's test command in its worktree (None: none
    ran)."""


def read_race(info: object) -> RaceEntry | None:
    """The race a session runs in (None: none, or what is stored is not one)."""
    value = info.get(RACE_INFO) if isinstance(info, Mapping) else None
    if not isinstance(value, Mapping):
        return None
    race, prompt, at = value.get("id"), value.get("prompt"), _number(value.get("at"))
    if not isinstance(race, str) or not race or not isinstance(prompt, str) or at is None:
        return None
    ended, test = _number(value.get("ended")), value.get("test")
    return RaceEntry(race, prompt, at, ended, test if isinstance(test, str) and test else None)


# -- signing the agent in -------------------------------------------------------------------------

SIGN_IN_KINDS = ("agent", "env_var", "terminal", "key")
"""How a sign-in method works: the agent does it itself (a browser sign-in), it reads
variables from its environment, it runs its own login command in a terminal, or it takes a
key in the request (gemini-cli's `_meta["api-key"]`)."""

KEY_FIELD = "api-key"
"""The name a key method's secret goes under, in `authenticate`'s values and on the wire to
the agent."""


@dataclass(frozen=True)
class SignInMethod:
    """One way the agent offers to sign in, as its `initialize` answer lists it."""

    id: str
    name: str
    description: str = ""
    kind: str = "agent"
    """One of `SIGN_IN_KINDS`."""
    variables: tuple[str, ...] = ()
    """The environment variables an `env_var` method reads (the user gives their values)."""
    args: tuple[str, ...] = ()
    """What a `terminal` method adds to the agent's command to run its login."""
    env: Mapping[str, str] | None = None
    """What a `terminal` method adds to the environment of that login."""
    link: str = ""
    """Where the user gets the credentials, when the agent says."""

    @property
    def fields(self) -> tuple[str, ...]:
        """The values the user types for this method: its variables, or the key."""
        return (KEY_FIELD,) if self.kind == "key" else self.variables

    def login(self, command: Sequence[str]) -> tuple[str, ...]:
        """The login a `terminal` method runs: the agent's own command with its `args`
        (its `env` goes on top of the user's environment: `login_env`)."""
        return (*command, *self.args)

    def login_env(self, user: Mapping[str, str], agent: Mapping[str, str]) -> dict[str, str]:
        """The environment the login runs with: the user's, the agent's own variables on
        top, and the method's `env` on top of those."""
        return {**user, **agent, **(self.env or {})}

    @property
    def label(self) -> str:
        """The method in a line: its name, and its description when it has one."""
        return f"{self.name}: {self.description}" if self.description else self.name


@dataclass(frozen=True)
class SignIn:
    """A session whose agent asks the user to sign in: the agent's own words and the ways
    it offers, in its order."""

    session: str
    message: str
    methods: tuple[SignInMethod, ...]
    logout: bool = False
    """The agent can also sign out (`/logout`)."""

    def method(self, method_id: str) -> SignInMethod | None:
        """The method with this id, if the agent offers one."""
        return next((m for m in self.methods if m.id == method_id), None)


def read_sign_in_method(data: object) -> SignInMethod | None:
    """One entry of an `initialize` answer's `authMethods`; None for one without an id
    (no `authenticate` could name it). A type Cockpit does not know reads as "agent": the
    agent then does what it needs itself."""
    if not isinstance(data, Mapping) or not _text(data.get("id")):
        return None
    meta = data.get("_meta")
    kind = str(data.get("type") or "agent")
    if kind not in SIGN_IN_KINDS:
        kind = "agent"
    if kind == "agent" and isinstance(meta, Mapping) and "api-key" in meta:
        kind = "key"
    variables = tuple(
        str(entry["name"])
        for entry in _items(data.get("vars"))
        if isinstance(entry, Mapping) and _text(entry.get("name"))
    )
    env = data.get("env")
    return SignInMethod(
        str(data["id"]),
        _text(data.get("name")) or str(data["id"]),
        _text(data.get("description")) or "",
        kind,
        variables,
        tuple(str(arg) for arg in _items(data.get("args"))),
        {str(k): str(v) for k, v in env.items()} if isinstance(env, Mapping) else None,
        _text(data.get("link")) or "",
    )


def read_sign_in_methods(data: object) -> tuple[SignInMethod, ...]:
    """The methods of an `initialize` answer's `authMethods`, the unreadable left out."""
    read = (read_sign_in_method(entry) for entry in _items(data))
    return tuple(method for method in read if method is not None)
