"""Cockpit's Claude agent: a coding agent on the Anthropic Messages API, spoken to over ACP.

Cockpit launches it by path (`python acp/claude_agent.py`). It needs ANTHROPIC_API_KEY
(and honours ANTHROPIC_BASE_URL); without a key, session/new and session/prompt fail with
ACP's auth-required error.

Its history is an append-only chunk log (`store.chunklog`): one entry per sealed block,
written as the block seals, in `$COCKPIT_DATA_DIR/claude-agent/<session>.db`. Every model
request is `store.requests.compose_request` over that log, so earlier steps are sent as
the same bytes every time and the prompt cache prefix grows step by step; every call is
recorded with the log position it was built from, so `cockpit inspect` can show it.

Files and commands go through the client (`fs/*`, `terminal/*`, permission requests), so
the client sees, confines and records them; listings and searches (find, grep) run here.
Modes: ask (edits and commands ask first), accept (edits go ahead, commands ask), plan (no
edits, no commands).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import logging
import os
import posixpath
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import anthropic
from acp.core import Agent, AgentSideConnection, RequestError, run_agent
from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_current_mode,
    update_tool_call,
)
from acp.meta import PROTOCOL_VERSION
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    AudioContentBlock,
    AuthenticateResponse,
    AuthEnvVar,
    ClientCapabilities,
    CloseSessionResponse,
    EmbeddedResourceContentBlock,
    EnvVarAuthMethod,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    TextContentBlock,
    TextResourceContents,
    ToolCallLocation,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
    Usage,
    UserMessageChunk,
)

try:
    from store import entries as log_entries
    from store.chunklog import ChunkLog, log_path
    from store.entries import Draft, Entry
    from store.requests import RequestSpec, compose_request, thinking_config
except ImportError:  # run by path from a checkout: put the project root on the path
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from store import entries as log_entries
    from store.chunklog import ChunkLog, log_path
    from store.entries import Draft, Entry
    from store.requests import RequestSpec, compose_request, thinking_config

log = logging.getLogger("claude-agent")

AGENT_NAME = "cockpit-claude"
AGENT_TITLE = "Claude (built-in)"
AGENT_VERSION = "1.0"

KEY_VARIABLE = "ANTHROPIC_API_KEY"
NO_KEY = (
    "Set ANTHROPIC_API_KEY to an Anthropic API key (and ANTHROPIC_BASE_URL to use a "
    "gateway), then start the session again."
)

DEFAULT_MODELS = {
    "claude-sonnet-4-6": "Claude Sonnet 4.6",
    "claude-opus-4-6": "Claude Opus 4.6",
    "claude-haiku-4-5": "Claude Haiku 4.5",
}
MODES = {"ask": "Ask before edits", "accept": "Accept edits", "plan": "Plan only"}
THINKING = {"off": "Off", "adaptive": "On"}
"""Thinking settings: "adaptive" turns thinking on, as the model takes it (adaptive on the
newest models, a token budget on older ones: `store.requests.thinking_config`)."""
MODEL_OPTION, THINKING_OPTION = "model", "thinking"

MAX_TOKENS = int(os.environ.get("COCKPIT_CLAUDE_MAX_TOKENS") or 16000)
MAX_STEPS = int(os.environ.get("COCKPIT_CLAUDE_MAX_STEPS") or 60)
"""Model calls one turn may make before it stops with `max_turn_requests`."""
READ_LIMIT = 100_000
"""Characters of a file, or of a command's output, handed to the model."""
READ_LINES = 2000
OUTPUT_BYTES = 256 * 1024
COMMAND_TIMEOUT = 120
LIST_ENTRIES = 500
LIST_SKIP = (".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache")
READ_BUFFER = 50 * 1024 * 1024

PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow-always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]
ALLOWING = frozenset({"allow", "allow-always"})

ContentBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def models() -> dict[str, str]:
    """The model choices, the first the default; ANTHROPIC_MODEL, when set, comes first."""
    chosen = os.environ.get("ANTHROPIC_MODEL", "").strip()
    if chosen and chosen not in DEFAULT_MODELS:
        return {chosen: chosen, **DEFAULT_MODELS}
    if chosen:
        return {chosen: DEFAULT_MODELS[chosen], **DEFAULT_MODELS}
    return dict(DEFAULT_MODELS)


# The model's instructions and tools ------------------------------------------------------

SYSTEM_PROMPT = """\
You are Claude, a coding agent working inside Cockpit, a terminal cockpit for coding \
agents. You help the user with software engineering work in their project folder:

    {cwd}

Relative paths are resolved against that folder; you cannot reach files outside it.

# How to work
- Read before you change: use list_files, search and read_file to understand the code, \
then make focused changes with edit_file (a unique piece of text replaced) or write_file \
(a whole new file). Keep the style of the surrounding code.
- Use run_command for builds, tests, linters and git. Commands run in a shell in the \
project folder and must not wait for input.
- The user sees every tool call. Edits and commands may need their permission: if they \
reject one, do not retry it; say what you wanted to do and ask how to proceed.
- The session may be in plan mode, where edits and commands are refused: then describe \
the plan precisely instead of changing anything.
- Be concise. Answer in Markdown. When you are done, say what you changed and how you \
checked it.
"""


def system_prompt(cwd: str) -> str:
    """The system prompt for a session folder (fixed for the session: it heads the cache)."""
    return SYSTEM_PROMPT.format(cwd=cwd)


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Any:
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": properties, "required": required},
    }


PATH = {"type": "string", "description": "A path, relative to the project folder."}
TOOLS: tuple[dict[str, Any], ...] = (
    _tool(
        "read_file",
        "Read a text file. Returns its content; long files are cut, so use offset and limit "
        "to read them in parts.",
        {
            "path": PATH,
            "offset": {"type": "integer", "description": "First line to read (1-based)."},
            "limit": {"type": "integer", "description": "How many lines to read."},
        },
        ["path"],
    ),
    _tool(
        "write_file",
        "Create a file, or replace a whole file, with the given content.",
        {"path": PATH, "content": {"type": "string", "description": "The complete new text."}},
        ["path", "content"],
    ),
    _tool(
        "edit_file",
        "Replace a piece of text in a file. old_text must appear exactly once in the file "
        "(include enough surrounding lines), unless replace_all is true.",
        {
            "path": PATH,
            "old_text": {"type": "string", "description": "The exact text to replace."},
            "new_text": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence."},
        },
        ["path", "old_text", "new_text"],
    ),
    _tool(
        "run_command",
        "Run a shell command in the project folder and return its output and exit code.",
        {
            "command": {"type": "string", "description": "The command line (run by /bin/sh)."},
            "timeout_seconds": {
                "type": "integer",
                "description": f"Kill the command after this long (default {COMMAND_TIMEOUT}).",
            },
        },
        ["command"],
    ),
    _tool(
        "list_files",
        "List the files and folders under a folder, a few levels deep.",
        {
            "path": {**PATH, "description": "A folder (default: the project folder)."},
            "depth": {"type": "integer", "description": "Levels to descend (default 3)."},
        },
        [],
    ),
    _tool(
        "search",
        "Search file contents for an extended regular expression (grep -E). Returns "
        "matching lines as path:line:text.",
        {
            "pattern": {"type": "string", "description": "The regular expression."},
            "path": {**PATH, "description": "A file or folder (default: the project folder)."},
            "glob": {"type": "string", "description": "Only files whose name matches, e.g. *.py"},
        },
        ["pattern"],
    ),
)
TOOL_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "run_command": "execute",
    "list_files": "search",
    "search": "search",
}
CHANGES = frozenset({"write_file", "edit_file", "run_command"})
"""Tools that change something: refused in plan mode, and asked for in ask mode."""


# Session state ---------------------------------------------------------------------------


def data_root() -> Path:
    """The data dir the logs live under: COCKPIT_DATA_DIR (set by Cockpit), else COCKPIT_HOME,
    else the user data folder Cockpit itself uses."""
    for variable in ("COCKPIT_DATA_DIR", "COCKPIT_HOME"):
        value = os.environ.get(variable)
        if value:
            return Path(value).expanduser()
    import platformdirs

    return platformdirs.user_data_path("cockpit", appauthor=False)


@dataclass
class Queued:
    """A prompt that arrived while a turn ran, and the answer its request waits for."""

    text: str
    answer: asyncio.Future[StopReason]


@dataclass
class Session:
    """One session: its settings, its log (in memory and on disk) and the running turn."""

    id: str
    cwd: str
    log: ChunkLog
    entries: list[Entry]
    mode: str = "ask"
    model: str = ""
    thinking: str = "off"
    task: asyncio.Task[PromptResponse] | None = None
    queued: list[Queued] = field(default_factory=list)
    """Prompts that arrived while a turn ran, waiting for the next step boundary."""

    def spec(self) -> RequestSpec:
        """The request settings of a turn that starts now (a turn keeps them to its end)."""
        return RequestSpec(
            model=self.model,
            max_tokens=MAX_TOKENS,
            system=system_prompt(self.cwd),
            tools=TOOLS,
            thinking=thinking_config(self.model, self.thinking, MAX_TOKENS),
        )

    async def append(self, turn: str, step: int, draft: Draft) -> Entry:
        """Write a sealed block to the log (committed on return) and keep it in memory. A
        cancel cannot split the two: memory and disk always hold the same entries, which is
        what lets `cockpit inspect` rebuild exactly what was sent."""

        async def write() -> Entry:
            entry = await self.log.append(turn, step, draft)
            bisect.insort(self.entries, entry, key=lambda held: held.seq)
            return entry

        return await asyncio.shield(write())

    async def save_settings(self) -> None:
        await self.log.set_meta(
            cwd=self.cwd, mode=self.mode, model=self.model, thinking=self.thinking
        )


def session_modes(current: str) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=mode, name=name) for mode, name in MODES.items()],
    )


def config_options(
    session: Session,
) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The model selector and the thinking selector, with the session's values selected."""

    def select(option: str, name: str, category: Any, value: str, choices: dict[str, str]) -> Any:
        return SessionConfigOptionSelect(
            type="select",
            id=option,
            name=name,
            category=category,
            current_value=value,
            options=[SessionConfigSelectOption(value=v, name=n) for v, n in choices.items()],
        )

    return [
        select(MODEL_OPTION, "Model", "model", session.model, models()),
        select(THINKING_OPTION, "Thinking", "thought_level", session.thinking, THINKING),
    ]


def prompt_text(blocks: Sequence[ContentBlock]) -> str:
    """A prompt as the text the model reads: text blocks, embedded files, linked files."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f'\n<file uri="{resource.uri}">\n{resource.text}\n</file>\n')
            else:
                parts.append(f"\n[binary file {resource.uri} not included]\n")
        elif isinstance(block, ResourceContentBlock):
            parts.append(f" @{block.uri} ")
        else:
            parts.append(f"\n[{block.type} not included]\n")
    return "".join(parts)


def no_key() -> RequestError:
    return RequestError.auth_required({"message": NO_KEY, "variable": KEY_VARIABLE})


def api_key() -> str:
    """The API key, or the auth-required error saying what to set."""
    key = os.environ.get(KEY_VARIABLE, "").strip()
    if not key:
        raise no_key()
    return key


def describe_api_error(error: anthropic.APIError) -> str:
    """An API failure as one line a user can act on."""
    if isinstance(error, anthropic.APIStatusError):
        detail = error.body.get("error") if isinstance(error.body, dict) else None
        if isinstance(detail, dict):
            kind, message = detail.get("type", "error"), detail.get("message", "")
        else:
            kind, message = "error", str(error.message)
        status = error.status_code
        where = f"HTTP {status}" if status != 200 else "during the stream"
        return f"The Anthropic API failed ({kind}, {where}): {message}"
    if isinstance(error, anthropic.APITimeoutError):
        return "The Anthropic API did not answer in time."
    if isinstance(error, anthropic.APIConnectionError):
        return f"Could not reach the Anthropic API: {error}"
    return f"The Anthropic API failed: {error}"


# Paths -----------------------------------------------------------------------------------


class ToolFailure(Exception):
    """A tool could not do its job; the message goes back to the model as an error."""


def resolve(cwd: str, path: str | None) -> str:
    """An absolute path inside `cwd` for a path the model gave (ToolFailure outside it,
    symbolic links followed: a link out of the folder is outside it too)."""
    raw = (path or ".").strip() or "."
    joined = posixpath.normpath(raw if posixpath.isabs(raw) else posixpath.join(cwd, raw))
    if not inside(posixpath.normpath(cwd), joined) or not inside(
        os.path.realpath(cwd), os.path.realpath(joined)
    ):
        raise ToolFailure(f"{path} is outside the project folder {cwd}; it cannot be reached.")
    return joined


def inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def relative(cwd: str, path: str) -> str:
    """`path` as the user would write it: relative to the project folder."""
    return posixpath.relpath(path, cwd) if path.startswith(cwd) else path


def argument_path(cwd: str, path: str) -> str:
    """A resolved path as a program argument (find, grep): relative to the project folder
    and led by `./` (or absolute), so a name like `-fprint` can never read as an option or
    an expression."""
    shown = relative(cwd, path)
    if shown == "." or shown.startswith("/"):
        return shown
    return f"./{shown}"


def clip(text: str, limit: int = READ_LIMIT) -> str:
    """`text` cut to `limit` characters, saying so."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... cut: {len(text) - limit} more characters]"


# One turn --------------------------------------------------------------------------------


class ModelFailure(Exception):
    """The model call failed; the turn ends with this message (and the HTTP status)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class OpenBlock:
    """A content block still streaming."""

    kind: str
    message_id: str = ""
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    call_id: str = ""
    name: str = ""
    data: str = ""

    @property
    def text(self) -> str:
        return "".join(self.parts)


@dataclass
class Call:
    """A tool call the model made in this step."""

    id: str
    name: str
    input: dict[str, Any]
    title: str
    kind: ToolKind
    locations: list[str]


@dataclass
class StepResult:
    """What one model call produced."""

    stop_reason: str
    calls: list[Call]


@dataclass
class Outcome:
    """What a tool returns to the model, and how the client shows it."""

    content: str
    ok: bool = True
    shown: list[Any] = field(default_factory=list)
    """ACP tool content for the final update (defaults to the text)."""
    replay: list[Any] | None = None
    """ACP tool content for a reload, when it differs (a terminal is gone by then)."""


class Turn:
    """One prompt being answered: the step loop, the stream, the tools."""

    def __init__(
        self, agent: ClaudeAgent, session: Session, usage: dict[str, int] | None = None
    ) -> None:
        self.agent = agent
        self.session = session
        self.conn = agent.connection()
        self.id = uuid.uuid4().hex[:16]
        self.spec = session.spec()
        """The model and thinking settings, fixed for the whole turn: with thinking on, the
        API refuses a tool-loop step whose last assistant message does not open with a
        thinking block, so a setting changed mid-turn applies from the next turn."""
        self.step = 0
        self.open: dict[int, OpenBlock] = {}
        self.unanswered: dict[str, Call] = {}
        self.joined: list[Queued] = []
        """Queued prompts this turn logged: their requests are answered when it ends."""
        self.usage = (
            usage if usage is not None else {"input": 0, "write": 0, "read": 0, "output": 0}
        )
        self.notes = 0
        self.response: dict[str, Any] = {"content": []}
        """What the current model call returned so far (recorded for `cockpit inspect`)."""
        self.call_usage: dict[str, int] = {}

    # -- sending ------------------------------------------------------------------------------

    async def send(self, update: Any) -> None:
        await self.conn.session_update(session_id=self.session.id, update=update)

    async def note(self, kind: str, text: str) -> None:
        """A visible agent message that the model never sees (logged as a system note)."""
        self.notes += 1
        message_id = f"{self.id}-note-{self.notes}"
        await self.session.append(
            self.id, self.step, log_entries.system_note(kind, text, message_id)
        )
        await self.send(message_chunk(text, message_id))

    # -- the loop -----------------------------------------------------------------------------

    async def run(self, text: str | None) -> PromptResponse:
        """Answer one prompt (None: the queued prompts a previous turn left unanswered); a
        cancel, an API error or a stop reason ends the loop. Prompts still queued when the
        turn is cancelled or fails are logged after its end, so none is lost."""
        try:
            if text is not None:  # the prompt is logged before any call
                prompt = log_entries.user_text(text, f"{self.id}-user-0")
                await self.session.append(self.id, 0, prompt)
            await self.take_queued()
            stop = await self.loop()
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            await self.settle("Cancelled by the user before the tool finished.", notify=False)
            await self.session.append(self.id, self.step, log_entries.system_note("cancelled"))
            await self.take_queued()
            stop = "cancelled"
        except ModelFailure as failure:
            await self.settle("Not run: the model call failed.")
            await self.session.append(
                self.id,
                self.step,
                log_entries.error(str(failure), f"{self.id}-error-{self.step}", failure.status),
            )
            await self.take_queued()
            raise api_request_error(failure) from failure
        return PromptResponse(stop_reason=stop, usage=self.usage_total())

    async def loop(self) -> StopReason:
        while True:
            if self.step >= MAX_STEPS:
                await self.note(
                    "max_turn_requests",
                    f"I stopped after {MAX_STEPS} model calls in one turn. "
                    "Send a prompt to let me continue.",
                )
                return "max_turn_requests"
            self.step += 1
            result = await self.call_model()
            if result.stop_reason in ("max_tokens", "model_context_window_exceeded"):
                await self.settle("Not run: the reply was cut at the output token limit.")
                what = (
                    "its context window is full"
                    if result.stop_reason == "model_context_window_exceeded"
                    else "it reached the output token limit"
                )
                await self.note("max_tokens", f"The model stopped: {what}.")
                return "max_tokens"
            if result.stop_reason == "refusal":
                await self.settle("Not run: the model refused.")
                await self.note(
                    log_entries.REFUSAL,
                    "The model declined to continue. This prompt and its reply are left out of "
                    "the context of later prompts.",
                )
                return "refusal"
            for call in result.calls:
                await self.run_tool(call)
            queued = await self.take_queued()
            if not result.calls and not queued:
                return "end_turn"

    async def take_queued(self) -> bool:
        """Log the prompts that arrived during this step, after its tool results, and show
        each where it lands (as a user message under the id a replay sends it with). Their
        requests join this turn."""
        taken = 0
        while self.session.queued:  # one may arrive while another is written
            item = self.session.queued.pop(0)
            taken += 1
            self.joined.append(item)  # before the write: a cancel now still answers it
            message_id = f"{self.id}-user-{self.step}-{len(self.joined)}"
            draft = log_entries.user_text(item.text, message_id)
            await self.session.append(self.id, self.step, draft)
            await self.send(user_chunk(item.text, message_id))
        return taken > 0

    async def settle(self, why: str, notify: bool = True) -> None:
        """Give every tool call of this step that has no result an error result, so the log
        stays a valid conversation. After a cancel the client is not told: it marks the
        open calls cancelled itself."""
        for call in list(self.unanswered.values()):
            await self.record_result(call, Outcome(why, ok=False), notify)

    def usage_total(self) -> Usage:
        used = self.usage
        total_input = used["input"] + used["write"] + used["read"]
        return Usage(
            input_tokens=total_input,
            output_tokens=used["output"],
            cached_read_tokens=used["read"],
            cached_write_tokens=used["write"],
            total_tokens=total_input + used["output"],
        )

    # -- the model call -----------------------------------------------------------------------

    async def call_model(self) -> StepResult:
        """Send the request composed from the log, stream the reply into the client and the
        log (each block written as it seals), and record the call for `cockpit inspect`."""
        session = self.session
        spec = self.spec
        request = compose_request(session.entries, spec)
        upto = session.entries[-1].seq
        number = await asyncio.shield(session.log.begin_call(self.id, self.step, upto, spec))
        self.open = {}
        self.response = {"content": []}
        self.call_usage = {}
        calls: list[Call] = []
        stop_reason = "end_turn"
        try:
            client = self.agent.client()
            stream = await cast(Any, client.messages).create(**request)
            async with stream:
                async for event in stream:
                    stop_reason = await self.on_event(event, calls) or stop_reason
        except asyncio.CancelledError:
            await self.seal_partial()
            await self.end_call(number, "cancelled", None)
            raise
        except anthropic.APIError as error:
            await self.seal_partial()
            message = describe_api_error(error)
            await self.end_call(number, "error", None, message)
            raise ModelFailure(message, getattr(error, "status_code", None)) from error
        except Exception as error:  # a bug or an unexpected reply: recorded, then reported
            log.exception("the model call failed")
            await self.seal_partial()
            message = f"The model call failed unexpectedly: {error!r}"
            await self.end_call(number, "error", None, message)
            raise ModelFailure(message) from error
        self.response["stop_reason"] = stop_reason
        await self.end_call(number, "ok", stop_reason)
        return StepResult(stop_reason, calls)

    async def end_call(
        self, number: int, status: str, stop_reason: str | None, error: str | None = None
    ) -> None:
        used = self.call_usage
        self.usage["input"] += used.get("input_tokens", 0)
        self.usage["write"] += used.get("cache_creation_input_tokens", 0)
        self.usage["read"] += used.get("cache_read_input_tokens", 0)
        self.usage["output"] += used.get("output_tokens", 0)
        await asyncio.shield(
            self.session.log.end_call(
                number,
                status=status,
                stop_reason=stop_reason,
                response=self.response,
                usage=used or None,
                error=error,
            )
        )

    def take_usage(self, usage: Any) -> None:
        if usage is None:
            return
        for name in (
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        ):
            value = getattr(usage, name, None)
            if isinstance(value, int):
                self.call_usage[name] = value

    async def on_event(self, event: Any, calls: list[Call]) -> str | None:
        """Apply one stream event; returns the stop reason when the event carries one."""
        kind = event.type
        if kind == "message_start":
            self.response["id"] = event.message.id
            self.response["model"] = event.message.model
            self.take_usage(event.message.usage)
        elif kind == "content_block_start":
            self.start_block(event.index, event.content_block)
        elif kind == "content_block_delta":
            await self.on_delta(event.index, event.delta)
        elif kind == "content_block_stop":
            block = self.open.pop(event.index, None)
            if block is not None:
                call = await self.seal(block)
                if call is not None:
                    calls.append(call)
        elif kind == "message_delta":
            self.take_usage(event.usage)
            return cast(str | None, event.delta.stop_reason)
        return None

    def start_block(self, index: int, block: Any) -> None:
        message_id = f"{self.id}-{self.step}-{index}"
        if block.type == "text":
            self.open[index] = OpenBlock("text", message_id, [block.text or ""])
        elif block.type == "thinking":
            self.open[index] = OpenBlock(
                "thinking", message_id, [block.thinking or ""], block.signature or ""
            )
        elif block.type == "redacted_thinking":
            self.open[index] = OpenBlock("redacted", data=block.data)
        elif block.type == "tool_use":
            self.open[index] = OpenBlock("tool_use", call_id=block.id, name=block.name)
        else:
            self.open[index] = OpenBlock("ignored")

    async def on_delta(self, index: int, delta: Any) -> None:
        block = self.open.get(index)
        if block is None:
            return
        if delta.type == "text_delta" and delta.text:
            block.parts.append(delta.text)
            await self.send(message_chunk(delta.text, block.message_id))
        elif delta.type == "thinking_delta" and delta.thinking:
            block.parts.append(delta.thinking)
            await self.send(thought_chunk(delta.thinking, block.message_id))
        elif delta.type == "signature_delta":
            block.signature += delta.signature
        elif delta.type == "input_json_delta":
            block.parts.append(delta.partial_json)

    async def seal(self, block: OpenBlock) -> Call | None:
        """Write a finished block to the log; a tool call is also announced to the client."""
        content: list[Any] = self.response["content"]
        if block.kind == "text" and block.text:
            await self.session.append(
                self.id, self.step, log_entries.assistant_text(block.text, block.message_id)
            )
            content.append({"type": "text", "text": block.text})
        elif block.kind == "thinking" and (block.signature or block.text):
            await self.session.append(
                self.id,
                self.step,
                log_entries.thinking(block.text, block.signature, block.message_id),
            )
            content.append(
                {"type": "thinking", "thinking": block.text, "signature": block.signature}
            )
        elif block.kind == "redacted":
            await self.session.append(self.id, self.step, log_entries.redacted_thinking(block.data))
            content.append({"type": "redacted_thinking", "data": block.data})
        elif block.kind == "tool_use":
            call = self.make_call(block)
            display = {"title": call.title, "kind": call.kind, "locations": call.locations}
            await self.session.append(
                self.id, self.step, log_entries.tool_call(call.id, call.name, call.input, display)
            )
            content.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
            )
            self.unanswered[call.id] = call
            await self.send(
                start_tool_call(
                    call.id,
                    call.title,
                    kind=call.kind,
                    status="pending",
                    locations=[ToolCallLocation(path=p) for p in call.locations] or None,
                    raw_input=call.input,
                )
            )
            return call
        return None

    async def seal_partial(self) -> None:
        """After a cancel or a failure mid-stream: keep the text that streamed (it is valid
        history), drop an unsigned thinking block and an unfinished tool call."""
        for index in sorted(self.open):
            block = self.open[index]
            if block.kind == "text" and block.text.strip():
                await self.seal(block)
                self.response["content"][-1]["partial"] = True
        self.open = {}

    def make_call(self, block: OpenBlock) -> Call:
        raw = block.text.strip()
        try:
            parsed = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            parsed = {"_unparsed": raw}
        arguments = parsed if isinstance(parsed, dict) else {"value": parsed}
        title, locations = describe_call(self.session.cwd, block.name, arguments)
        kind = TOOL_KINDS.get(block.name, "other")
        return Call(block.call_id, block.name, arguments, title, kind, locations)

    # -- tools --------------------------------------------------------------------------------

    async def run_tool(self, call: Call) -> None:
        """Run one tool call (asking first when the mode says so) and log its result."""
        try:
            outcome = await self.tool_outcome(call)
        except ToolFailure as failure:
            outcome = Outcome(str(failure), ok=False)
        except RequestError as error:
            outcome = Outcome(f"The client refused: {client_error(error)}", ok=False)
        await self.record_result(call, outcome)

    async def record_result(self, call: Call, outcome: Outcome, notify: bool = True) -> None:
        status: Literal["completed", "failed"] = "completed" if outcome.ok else "failed"
        shown = outcome.shown or [tool_content(text_block(clip(outcome.content, 4000)))]
        replay = outcome.replay if outcome.replay is not None else shown
        display = {
            "status": status,
            "content": [item.model_dump(by_alias=True, exclude_none=True) for item in replay],
        }
        self.unanswered.pop(call.id, None)
        await self.session.append(
            self.id,
            self.step,
            log_entries.tool_result(
                call.id, call.name, clip(outcome.content), not outcome.ok, display
            ),
        )
        if notify:
            await self.send(update_tool_call(call.id, status=status, content=shown))

    async def tool_outcome(self, call: Call) -> Outcome:
        name, arguments = call.name, call.input
        if "_unparsed" in arguments:
            raise ToolFailure("The tool input was not valid JSON; send it again.")
        if name in CHANGES and self.session.mode == "plan":
            raise ToolFailure(
                "Not allowed in plan mode: describe the change instead. The user can switch "
                "the session to another mode to let you apply it."
            )
        handler = {
            "read_file": self.read_file,
            "write_file": self.write_file,
            "edit_file": self.edit_file,
            "run_command": self.run_command,
            "list_files": self.list_files,
            "search": self.search,
        }.get(name)
        if handler is None:
            raise ToolFailure(f"There is no tool called {name!r}.")
        return await handler(call)

    async def progress(self, call: Call, *content: Any) -> None:
        await self.send(
            update_tool_call(call.id, status="in_progress", content=list(content) or None)
        )

    async def permission(self, call: Call, content: list[Any], raw: dict[str, Any]) -> bool:
        """Ask the client; True when the user allowed it. A dismissed request counts as a
        rejection (a real cancel cancels this whole task instead)."""
        request = ToolCallUpdate(
            tool_call_id=call.id,
            title=call.title,
            kind=call.kind,
            status="pending",
            content=content,
            locations=[ToolCallLocation(path=p) for p in call.locations] or None,
            raw_input=raw,
        )
        response = await self.conn.request_permission(
            session_id=self.session.id, tool_call=request, options=PERMISSION_OPTIONS
        )
        outcome = response.outcome
        return isinstance(outcome, AllowedOutcome) and outcome.option_id in ALLOWING

    async def read_text(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        response = await self.conn.read_text_file(
            session_id=self.session.id, path=path, line=line, limit=limit
        )
        return response.content

    async def existing_text(self, path: str) -> str | None:
        """The current text of a file, or None when it does not exist yet."""
        try:
            return await self.read_text(path)
        except RequestError as error:
            if error.code == -32002:
                return None
            raise

    async def read_file(self, call: Call) -> Outcome:
        path = resolve(self.session.cwd, call.input.get("path"))
        offset = int_arg(call.input, "offset")
        limit = int_arg(call.input, "limit")
        await self.progress(call)
        text = await self.read_text(path, offset, limit or READ_LINES)
        lines = text.count("\n")
        note = ""
        if limit is None and lines >= READ_LINES:
            first = offset or 1
            note = f"\n[... showing lines {first}-{first + READ_LINES - 1}; use offset to read on]"
        summary = f"Read {lines} line(s) of {relative(self.session.cwd, path)}"
        return Outcome(clip(text) + note, shown=[tool_content(text_block(summary))])

    async def write_file(self, call: Call) -> Outcome:
        path = resolve(self.session.cwd, call.input.get("path"))
        content = str_arg(call.input, "content", empty=True)
        old = await self.existing_text(path)
        return await self.change_file(call, path, old, content, "Wrote")

    async def edit_file(self, call: Call) -> Outcome:
        path = resolve(self.session.cwd, call.input.get("path"))
        old_text = str_arg(call.input, "old_text")
        new_text = str_arg(call.input, "new_text", empty=True)
        old = await self.existing_text(path)
        if old is None:
            raise ToolFailure(f"{relative(self.session.cwd, path)} does not exist; use write_file.")
        count = old.count(old_text)
        if count == 0:
            raise ToolFailure("old_text was not found in the file; read it again and retry.")
        if count > 1 and not call.input.get("replace_all"):
            raise ToolFailure(
                f"old_text appears {count} times; add surrounding lines to make it unique, "
                "or set replace_all."
            )
        return await self.change_file(call, path, old, old.replace(old_text, new_text), "Edited")

    async def change_file(
        self, call: Call, path: str, old: str | None, new: str, verb: str
    ) -> Outcome:
        diff = tool_diff_content(path, new, old)
        if self.session.mode != "accept" and not await self.permission(
            call, [diff], {"path": path}
        ):
            return Outcome("The user rejected this change; nothing was written.", ok=False)
        await self.progress(call, diff)
        await self.conn.write_text_file(session_id=self.session.id, path=path, content=new)
        lines = new.count("\n") + (0 if new.endswith("\n") or not new else 1)
        summary = f"{verb} {relative(self.session.cwd, path)} ({lines} line(s))."
        return Outcome(summary, shown=[diff, tool_content(text_block(summary))])

    async def run_command(self, call: Call) -> Outcome:
        command = str_arg(call.input, "command")
        timeout = int_arg(call.input, "timeout_seconds") or COMMAND_TIMEOUT
        shown = tool_content(text_block(f"$ {command}"))
        if not await self.permission(call, [shown], {"command": command}):
            return Outcome("The user rejected this command; it did not run.", ok=False)
        return await self.in_terminal(call, "/bin/sh", ["-c", command], command, timeout)

    async def list_files(self, call: Call) -> Outcome:
        path = resolve(self.session.cwd, call.input.get("path"))
        depth = max(1, min(int_arg(call.input, "depth") or 3, 10))
        prune: list[str] = []
        for name in LIST_SKIP:
            prune += ["-o", "-name", name] if prune else ["-name", name]
        args = [argument_path(self.session.cwd, path), "-maxdepth", str(depth)]
        args += ["(", *prune, ")", "-prune", "-o", "-print"]
        outcome = await self.run_here("find", args, COMMAND_TIMEOUT)
        if not outcome.ok:
            head = outcome.content.partition("\n")[0]
            return Outcome(
                f"Could not list {relative(self.session.cwd, path)}: find failed. "
                + clip(outcome.content),
                ok=False,
                shown=[tool_content(text_block(f"find failed: {head}"))],
            )
        names = sorted(line for line in outcome.content.splitlines()[1:] if line.strip())
        listing = "\n".join(names[:LIST_ENTRIES])
        if len(names) > LIST_ENTRIES:
            listing += f"\n[... {len(names) - LIST_ENTRIES} more]"
        summary = f"{len(names)} entries"
        return Outcome(listing or "(empty)", outcome.ok, [tool_content(text_block(summary))])

    async def search(self, call: Call) -> Outcome:
        pattern = str_arg(call.input, "pattern")
        path = resolve(self.session.cwd, call.input.get("path"))
        args = ["-rnIE", "--color=never"]
        args += [f"--exclude-dir={name}" for name in LIST_SKIP]
        glob = call.input.get("glob")
        if isinstance(glob, str) and glob.strip():
            args.append(f"--include={glob.strip()}")
        args += ["-e", pattern, "--", argument_path(self.session.cwd, path)]
        outcome = await self.run_here("grep", args, COMMAND_TIMEOUT, found=(0, 1))
        lines = outcome.content.splitlines()[1:]
        matches = [line for line in lines if line.strip()]
        summary = f"{len(matches)} matching line(s)"
        return Outcome(
            "\n".join(matches) or "No matches.",
            outcome.ok,
            [tool_content(text_block(summary))],
        )

    async def run_here(
        self, program: str, args: list[str], seconds: int, found: tuple[int, ...] = (0,)
    ) -> Outcome:
        """Run a listing or a search (find, grep: programs this agent composes itself and
        that change nothing) in the agent's own process, as real agents run their Glob and
        Grep tools: a client terminal is for the user's commands, and Cockpit asks before
        it runs one the agent did not ask for. The first line is the exit status."""
        process = await asyncio.create_subprocess_exec(
            program,
            *args,
            cwd=self.session.cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), seconds)
        except TimeoutError:
            process.kill()
            await process.wait()
            return Outcome(f"Killed after {seconds} s.", ok=False)
        text = output[:OUTPUT_BYTES].decode("utf-8", "replace")
        head = f"Exit code {process.returncode}."
        if len(output) > OUTPUT_BYTES:
            head += " (later output was cut)"
        return Outcome(f"{head}\n{clip(text)}", process.returncode in found)

    async def in_terminal(
        self,
        call: Call,
        program: str,
        args: list[str],
        command: str | None,
        seconds: int,
        found: tuple[int, ...] = (0,),
    ) -> Outcome:
        """Run a program in a client terminal shown in the tool call; the outcome's first
        line is the exit status, the rest the output."""
        sid = self.session.id
        terminal = await self.conn.create_terminal(
            session_id=sid,
            command=program,
            args=args,
            cwd=self.session.cwd,
            output_byte_limit=OUTPUT_BYTES,
        )
        ref = tool_terminal_ref(terminal.terminal_id)
        await self.progress(call, ref)
        timed_out = False
        finished = False
        try:
            try:
                status = await asyncio.wait_for(
                    self.conn.wait_for_terminal_exit(
                        session_id=sid, terminal_id=terminal.terminal_id
                    ),
                    seconds,
                )
                code, signal_name = status.exit_code, status.signal
            except TimeoutError:
                timed_out = True
                await self.conn.kill_terminal(session_id=sid, terminal_id=terminal.terminal_id)
                code, signal_name = None, "killed"
            result = await self.conn.terminal_output(
                session_id=sid, terminal_id=terminal.terminal_id
            )
            finished = True
        finally:
            with contextlib.suppress(Exception):
                if not finished:
                    await self.conn.kill_terminal(session_id=sid, terminal_id=terminal.terminal_id)
                await self.conn.release_terminal(session_id=sid, terminal_id=terminal.terminal_id)
        if timed_out:
            head = f"Killed after {seconds} s."
        elif code is None:
            head = f"Ended by signal {signal_name}."
        else:
            head = f"Exit code {code}."
        output = result.output or ""
        if result.truncated:
            head += " (older output was cut)"
        ok = not timed_out and code in found
        text = f"{head}\n{clip(output)}"
        shown = [ref, tool_content(text_block(head))]
        label = f"$ {command}\n" if command else ""
        replay = [tool_content(text_block(f"{label}{clip(output, 4000)}{head}"))]
        return Outcome(text, ok, shown, replay)


def describe_call(cwd: str, name: str, arguments: dict[str, Any]) -> tuple[str, list[str]]:
    """A tool call's title and the paths it touches, for the client."""
    path = arguments.get("path")
    where = ""
    locations: list[str] = []
    if isinstance(path, str) or name in ("list_files", "search"):
        try:
            absolute = resolve(cwd, path if isinstance(path, str) else None)
            where = relative(cwd, absolute)
            locations = [absolute]
        except ToolFailure:
            where = str(path)
    if name == "read_file":
        return f"Read {where}", locations
    if name == "write_file":
        return f"Write {where}", locations
    if name == "edit_file":
        return f"Edit {where}", locations
    if name == "run_command":
        command = str(arguments.get("command", ""))
        line = command.splitlines()[0] if command else ""
        return f"Run `{line[:80]}`" + ("…" if len(line) > 80 or "\n" in command else ""), []
    if name == "list_files":
        return f"List {where}", locations
    if name == "search":
        return f"Search {str(arguments.get('pattern', ''))[:60]!r} in {where}", locations
    return f"{name} (unknown tool)", locations


def int_arg(arguments: dict[str, Any], name: str) -> int | None:
    value = arguments.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ToolFailure(f"{name} must be a whole number.")
    try:
        return max(1, int(value))
    except ValueError as error:
        raise ToolFailure(f"{name} must be a whole number.") from error


def str_arg(arguments: dict[str, Any], name: str, empty: bool = False) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or (not empty and not value):
        raise ToolFailure(f"{name} is required and must be a non-empty string.")
    return value


def client_error(error: RequestError) -> str:
    data = f": {json.dumps(error.data)}" if error.data else ""
    return f"{error} (code {error.code}){data}"


def api_request_error(failure: ModelFailure) -> RequestError:
    """The JSON-RPC error a failed model call ends the turn with."""
    status = failure.status
    if status in (401, 403):
        return RequestError.auth_required({"message": f"{failure} {NO_KEY}"})
    return RequestError(-32603, str(failure), {"status": status} if status else None)


def message_chunk(text: str, message_id: str) -> AgentMessageChunk:
    return AgentMessageChunk(
        session_update="agent_message_chunk", content=text_block(text), message_id=message_id
    )


def thought_chunk(text: str, message_id: str) -> AgentThoughtChunk:
    return AgentThoughtChunk(
        session_update="agent_thought_chunk", content=text_block(text), message_id=message_id
    )


def user_chunk(text: str, message_id: str) -> UserMessageChunk:
    return UserMessageChunk(
        session_update="user_message_chunk", content=text_block(text), message_id=message_id
    )


# Replaying a log -------------------------------------------------------------------------


def replay_updates(entries: Sequence[Entry]) -> list[Any]:
    """The session/update notifications that show a stored log again: each message whole,
    under the messageId it streamed with, and each tool call with its final state."""
    updates: list[Any] = []
    for entry in entries:
        data = entry.data
        if entry.type == "text" and entry.role == "user":
            updates.append(user_chunk(str(data.get("text", "")), entry.message_id or ""))
        elif entry.type == "text":
            updates.append(message_chunk(str(data.get("text", "")), entry.message_id or ""))
        elif entry.type == "thinking" and data.get("thinking"):
            updates.append(thought_chunk(str(data["thinking"]), entry.message_id or ""))
        elif entry.type == "tool_call":
            display = data.get("display") or {}
            updates.append(
                start_tool_call(
                    str(data["id"]),
                    str(display.get("title") or data.get("name")),
                    kind=cast(ToolKind, display.get("kind") or "other"),
                    status="pending",
                    locations=[ToolCallLocation(path=p) for p in display.get("locations") or ()]
                    or None,
                    raw_input=data.get("input"),
                )
            )
        elif entry.type == "tool_result":
            display = data.get("display") or {}
            status = cast(
                ToolCallStatus,
                display.get("status") or ("failed" if data.get("isError") else "completed"),
            )
            updates.append(
                update_tool_call(
                    str(data["id"]), status=status, content=display.get("content") or None
                )
            )
        elif entry.type == "error" or (entry.type == "system" and data.get("text")):
            text = str(data.get("message") or data.get("text") or "")
            updates.append(message_chunk(text, entry.message_id or f"{entry.turn}-{entry.seq}"))
    return updates


# The agent -------------------------------------------------------------------------------


class ClaudeAgent:
    """The ACP agent the SDK dispatches to (a plain class: acp.Agent is a Protocol whose
    stubs would answer unimplemented methods with null instead of "method not found")."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.client_caps: ClientCapabilities | None = None
        self._conn: AgentSideConnection | None = None
        self._client: anthropic.AsyncAnthropic | None = None

    def on_connect(self, conn: AgentSideConnection) -> None:
        self._conn = conn

    def connection(self) -> AgentSideConnection:
        if self._conn is None:
            raise RequestError.internal_error({"details": "no client connection yet"})
        return self._conn

    def client(self) -> anthropic.AsyncAnthropic:
        """The API client (ANTHROPIC_BASE_URL is read by the SDK itself)."""
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(api_key=api_key())
        return self._client

    def session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "reason": "unknown session: create or load it first"}
            )
        return session

    async def close(self) -> None:
        """Stop every turn and close every log (the process is ending)."""
        for session in list(self.sessions.values()):
            await self.forget(session)
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.close()

    async def forget(self, session: Session) -> None:
        if session.task is not None and not session.task.done():
            session.task.cancel()
            with contextlib.suppress(BaseException):
                await session.task
        self.sessions.pop(session.id, None)
        await session.log.close()

    # -- lifecycle ----------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_caps = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, embedded_context=True),
                session_capabilities=SessionCapabilities(close=SessionCloseCapabilities()),
            ),
            auth_methods=[
                EnvVarAuthMethod(
                    type="env_var",
                    id="anthropic-api-key",
                    name="Anthropic API key",
                    description=NO_KEY,
                    vars=[AuthEnvVar(name=KEY_VARIABLE, label="Anthropic API key")],
                    link="https://console.anthropic.com/settings/keys",
                )
            ],
            agent_info=Implementation(name=AGENT_NAME, title=AGENT_TITLE, version=AGENT_VERSION),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        api_key()
        return AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        api_key()
        session_id = uuid.uuid4().hex
        log_file = await ChunkLog.open(log_path(data_root(), session_id))
        session = Session(session_id, cwd, log_file, [], model=next(iter(models())))
        await session.save_settings()
        self.sessions[session_id] = session
        return NewSessionResponse(
            session_id=session_id,
            modes=session_modes(session.mode),
            config_options=config_options(session),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Reopen a session from its log and replay it, message by message, with the ids it
        streamed under."""
        try:
            path = log_path(data_root(), session_id)
        except ValueError:
            raise RequestError.resource_not_found(session_id) from None
        if not await asyncio.to_thread(path.is_file):
            error = RequestError.resource_not_found(path.as_uri())
            error.data = {**(error.data or {}), "reason": "this agent has no log of that session"}
            raise error
        previous = self.sessions.get(session_id)
        if previous is not None:
            await self.forget(previous)
        log_file = await ChunkLog.open(path)
        meta = await log_file.meta()
        entries = await log_file.entries()
        choices = models()
        session = Session(
            session_id,
            cwd,
            log_file,
            entries,
            mode=meta["mode"] if meta.get("mode") in MODES else "ask",
            model=meta.get("model") or next(iter(choices)),
            thinking=meta["thinking"] if meta.get("thinking") in THINKING else "off",
        )
        await session.save_settings()
        self.sessions[session_id] = session
        conn = self.connection()
        for update in replay_updates(entries):
            await conn.session_update(session_id=session_id, update=update)
        return LoadSessionResponse(
            modes=session_modes(session.mode), config_options=config_options(session)
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        session = self.sessions.get(session_id)
        if session is not None:
            await self.forget(session)
        return CloseSessionResponse()

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self.session(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params({"modeId": mode_id, "known": list(MODES)})
        session.mode = mode_id
        await session.save_settings()
        await self.connection().session_update(
            session_id=session_id, update=update_current_mode(mode_id)
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self.session(session_id)
        choices = {MODEL_OPTION: models(), THINKING_OPTION: THINKING}.get(config_id)
        if choices is None:
            raise RequestError.invalid_params(
                {"configId": config_id, "known": ["model", "thinking"]}
            )
        if not isinstance(value, str) or value not in choices:
            raise RequestError.invalid_params({"value": value, "known": list(choices)})
        if config_id == MODEL_OPTION:
            session.model = value
        else:
            session.thinking = value
        await session.save_settings()
        return SetSessionConfigOptionResponse(config_options=config_options(session))

    # -- turns --------------------------------------------------------------------------------

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the running turn at once: its task is cancelled wherever it waits."""
        session = self.sessions.get(session_id)
        if session is not None and session.task is not None and not session.task.done():
            session.task.cancel()

    async def prompt(
        self, prompt: list[ContentBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Run a turn; a prompt that arrives while one runs joins it at the next step."""
        session = self.session(session_id)
        api_key()
        text = prompt_text(prompt)
        if session.task is not None and not session.task.done():
            answer: asyncio.Future[StopReason] = asyncio.get_running_loop().create_future()
            session.queued.append(Queued(text, answer))
            return PromptResponse(stop_reason=await answer)
        task = asyncio.ensure_future(self.run_turns(session, text))
        session.task = task
        try:
            return await task
        finally:
            if session.task is task:
                session.task = None

    async def run_turns(self, session: Session, text: str) -> PromptResponse:
        """Run a turn for `text`. When it stops short (max_tokens, a refusal, the step limit)
        with prompts still queued, the next turn answers them at once: the user asked
        something. Every prompt that joined is answered with how the last turn ended; a
        prompt left queued by a cancel or a failure was logged by the turn."""
        joined: list[Queued] = []
        usage = {"input": 0, "write": 0, "read": 0, "output": 0}
        stop: StopReason | None = None
        failure: BaseException | None = None
        prompt: str | None = text
        try:
            while True:
                turn = Turn(self, session, usage)
                try:
                    response = await turn.run(prompt)
                finally:
                    joined += turn.joined
                if not session.queued:
                    stop = response.stop_reason
                    return response
                prompt = None  # the queued prompts open the next turn
        except BaseException as error:
            failure = error
            raise
        finally:
            # A prompt still queued here arrived during a second cancel: it was not logged,
            # but its request is answered all the same.
            joined += session.queued
            session.queued = []
            answer_all(joined, stop, failure)


def answer_all(
    joined: Sequence[Queued], stop: StopReason | None, error: BaseException | None
) -> None:
    """Answer the prompts that joined a turn: with its stop reason, or its error."""
    for item in joined:
        if item.answer.done():
            continue
        if stop is not None:
            item.answer.set_result(stop)
        elif isinstance(error, Exception):
            item.answer.set_exception(error)
        else:
            item.answer.set_result("cancelled")


# Entry point -----------------------------------------------------------------------------


async def protocol_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams on stdin and a private duplicate of stdout; fd 1 and sys.stdout are then
    pointed at stderr, so a stray print can never corrupt the protocol."""
    loop = asyncio.get_running_loop()
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=READ_BUFFER)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, protocol_out
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def serve() -> None:
    """Run the agent until the client closes stdin."""
    reader, writer = await protocol_streams()
    agent = ClaudeAgent()
    try:
        await run_agent(
            cast(Agent, agent),
            input_stream=writer,
            output_stream=reader,
            use_unstable_protocol=True,
        )
    finally:
        await agent.close()


def main() -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="claude agent: %(levelname)s %(message)s"
    )
    started = time.monotonic()
    asyncio.run(serve())
    log.debug("served for %.1f s", time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
