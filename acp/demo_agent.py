"""Cockpit's scripted demo agent: an ACP agent over stdio with no keys and no network.

Cockpit launches it by path (`python acp/demo_agent.py [flags]`). It streams the way real
agents do (3-4 character chunks, no messageId, an empty chunk opening every block) and
keeps each session's history so `session/load` can replay it.

Scenario words (whole words, any case, anywhere in the prompt; several combine, running in
this order with `think` first):

  tour        a guided tour of Cockpit (the reply when no word is given)
  think       a short thought block before the reply
  plan        a three-step plan, each step marked in progress, then completed
  ids         a thought and a reply whose chunks all carry a messageId
  table       a long markdown reply: headings, tables, lists and code
  bench       the streaming benchmark: ~50 KB of markdown in 4-character chunks, as fast
              as possible, ending with a marker line (`bench 25000` sets the size)
  resend      one message re-sent whole, re-spaced, as a snapshot and as a recap
  tools       reads a file, edits one and runs a command, asking permission
  build       runs a command that prints for a second and a half (its output shows live)
  flood       runs a command that prints 20 KB, past the terminal's 4 KB output limit (the
              card keeps the end and says the start was cut)
  permission  one edit that waits for your permission decision
  commands    sends a new list of slash commands
  modes       switches the session to plan mode
  escape      a reply holding terminal escape sequences
  outside     tries to reach files outside the session folder
  unknown     an unknown update kind and a tool update before its start
  garbage     non-protocol lines on stdout, then a normal reply
  huge        one 10 MiB message chunk
  stderr      writes 1 MiB of log lines to stderr, then replies
  slow        slows the whole turn and adds a long reply (try cancelling it)
  crash       dies mid-reply with exit code 3

Flags:

  --hang-initialize   never answer `initialize`
  --start-delay S     take S seconds to answer `initialize` (a slow agent's start)
  --protocol-version N  answer `initialize` with protocol version N (to test refusal)
  --slow              stream every turn slowly
  --exit-on-start N   exit with code N before reading anything
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, cast

from acp.core import Agent, AgentSideConnection, RequestError, run_agent
from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_available_commands,
    update_current_mode,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.meta import PROTOCOL_VERSION
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AudioContentBlock,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CloseSessionResponse,
    CurrentModeUpdate,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PlanEntry,
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
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    ToolKind,
    UnstructuredCommandInput,
    UserMessageChunk,
)

try:
    from store.workload import BENCH_SIZE, benchmark_reply, markdown_reply, paragraph, token_pieces
except ImportError:  # run by path from a checkout: put the project root on the path
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from store.workload import BENCH_SIZE, benchmark_reply, markdown_reply, paragraph, token_pieces

SCENARIOS: dict[str, str] = {
    "tour": "a guided tour of Cockpit (the reply when no word is given)",
    "think": "a short thought block before the reply",
    "plan": "a three-step plan, each step marked in progress, then completed",
    "ids": "a thought and a reply whose chunks all carry a messageId",
    "table": "a long markdown reply: headings, tables, lists and code",
    "bench": "the streaming benchmark: ~50 KB in 4-character chunks, ending with a marker",
    "resend": "one message re-sent whole, re-spaced, as a snapshot and as a recap",
    "tools": "reads a file, edits one and runs a command, asking permission",
    "build": "runs a command that prints for a second and a half (its output shows live)",
    "flood": "runs a command that prints 20 KB, past the 4 KB output limit (the end is kept)",
    "permission": "one edit that waits for your permission decision",
    "commands": "sends a new list of slash commands",
    "modes": "switches the session to plan mode",
    "escape": "a reply holding terminal escape sequences",
    "outside": "tries to reach files outside the session folder",
    "unknown": "an unknown update kind and a tool update before its start",
    "garbage": "non-protocol lines on stdout, then a normal reply",
    "huge": "one 10 MiB message chunk",
    "stderr": "writes 1 MiB of log lines to stderr, then replies",
    "slow": "slows the whole turn and adds a long reply (try cancelling it)",
    "crash": "dies mid-reply with exit code 3",
}
"""Every scenario word and what it does. Words combine in this order, `think` first."""

AGENT_NAME = "cockpit-demo"
AGENT_TITLE = "Cockpit demo agent"
AGENT_VERSION = "1.0"

MODES = {"ask": "Ask before edits", "accept": "Accept edits", "plan": "Plan only"}
MODELS = {"demo-fast": "Fast", "demo-smart": "Smart"}
DEFAULT_MODE = "ask"
DEFAULT_MODEL = "demo-fast"
MODEL_OPTION_ID = "model"

SLOW_DELAY = 0.05
"""Seconds between chunks in a slow turn: long enough for a client to cancel mid-stream."""
COMMANDS_DELAY = 0.02
"""Seconds to wait after answering session/new before announcing the slash commands."""
PERMISSION_GRACE = 1.0
"""Seconds a cancelled turn still waits for the client to answer a pending permission."""
HUGE_SIZE = 10 * 1024 * 1024
STDERR_SIZE = 1024 * 1024
READ_LINES = 10
NOTES_FILE = "demo-notes.md"
CRASH_CODE = 3
READ_LIMIT = 50 * 1024 * 1024
PARAGRAPH_BREAK = "\n\n"

PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow-always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]
DECISIONS = {"allow": "allowed once", "allow-always": "always allowed", "accept": "accept mode"}
"""The permission outcomes that allow a tool to run, as the summary words them."""

ContentBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
Update = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
)
TextKind = Literal["agent", "thought"]


class TurnCancelled(Exception):
    """Raised between chunks and steps once the client cancelled the turn."""


# Texts ------------------------------------------------------------------------------------

TOUR_INTRO = """\
# Welcome to Cockpit

Cockpit is a terminal cockpit for many ACP agent sessions at once. Agents speak the Agent
Client Protocol over stdio; every message they stream is folded into **one row** of a local
SQLite store, so long sessions page fast and survive restarts.

## Real agents

- `cockpit agents` lists the known agents and which are installed.
- `cockpit run --agent gemini "explain this repo"` uses a named agent.
- `--agent-cmd "CMD ARGS"` runs any ACP command instead.
- Add your own as entries in `agents.toml` in Cockpit's config folder.

## Keys

- **Enter** sends the prompt, **Esc** cancels the running turn.
- **1-9** answer a question the agent asks (its own options).
- **Ctrl+N** opens a new session; **Ctrl+Up** / **Ctrl+Down** switch sessions.
- **Ctrl+O** is the inbox of everything waiting for you; **Ctrl+G** goes to the next one.
- **F1** lists every key; **Ctrl+P** is the command palette; **Ctrl+Q** quits.

## Headless commands

- `cockpit run "PROMPT"` runs one turn and prints the reply.
- `cockpit ls` lists the stored sessions.
- `cockpit show SESSION` prints a session's transcript.

## This demo agent

No keys, no network: it follows a script. Put these words in a prompt (they combine):

"""

THOUGHT = (
    "The user wants to see how a thought streams. I will reason in a few short sentences "
    "first, then answer. A client should fold this into its own row, apart from the reply."
)
THINK_REPLY = (
    "I thought it over first: that block arrived as `agent_thought_chunk` updates, and this "
    "reply as `agent_message_chunk` updates."
)
IDS_THOUGHT = "Every chunk of this thought carries the same messageId."
IDS_REPLY = (
    "Every chunk of this reply carries one messageId too, different from the thought's, so "
    "a client can fold by id instead of by adjacency."
)
PLAN_STEPS = (
    ("Survey the project folder", "Surveyed the folder: nothing needs to move."),
    ("Draft the change", "Drafted the change in my head; it stays small."),
    ("Check the result", "Checked the result: all three steps are done."),
)
RESEND_TEXT = (
    "This message is sent several times on purpose: first token by token, then whole, "
    "then with its spacing changed, then as a longer snapshot."
)
RESEND_TAIL = " And one more sentence."
RESEND_DONE = "Done re-sending."
ESCAPE_TEXT = (
    "Escape sequences ahead: \x1b[31mred\x1b[0m text, a title change \x1b]0;pwned\x07 and a "
    "bell \x07. A client should show them harmlessly, never obey them."
)
GARBAGE_LINES = (
    "this is not json",
    "\x1b[1;31mALERT\x1b[0m: \x1b[32mcoloured text\x1b[0m that is not json either",
    "42",
    "[1, 2]",
    '"a string"',
    "null",
    '{"jsonrpc": "2.0", "method": "unknown/notification", "params": {}}',
)
GARBAGE_REPLY = "Still here after the garbage."
CRASH_TEXT = (
    "This reply will never finish: the demo agent is about to crash on purpose, in the "
    "middle of a sentence, so that the client can show"
)
NOTES_TEXT = (
    "# Demo notes\n\n"
    "Written by the Cockpit demo agent after asking for permission.\n\n"
    "- It read a file, asked before this edit, and then ran one command.\n"
    "- Delete this file whenever you like.\n"
)
TERMINAL_ARGS = ["-c", "print('hello from the terminal')"]

BUILD_ARGS = [
    "-c",
    "import time\nfor step in range(1, 6):\n"
    "    print(f'build step {step} of 5', flush=True)\n    time.sleep(0.3)\nprint('built')",
]
"""A command that prints for about a second and a half: its card shows the output live."""

OUTPUT_LIMIT = 4096
"""The `outputByteLimit` the demo agent asks for on its terminals."""
FLOOD_LINES = 400
FLOOD_ARGS = [
    "-c",
    f"for n in range(1, {FLOOD_LINES + 1}):\n"
    f"    print(f'flood line {{n:03d}} of {FLOOD_LINES}: ' + 'x' * 30)",
]
"""A command that prints about 20 KB, five times the output limit."""

COMMANDS = {
    "tour": "A guided tour of Cockpit",
    "table": "A long markdown reply",
    "tools": "Read, edit and run, with permission",
    "plan": "A three-step plan",
}
MORE_COMMANDS = {**COMMANDS, "deploy": "Pretend to deploy somewhere"}
COMMAND_HINTS = {"plan": "what to plan", "deploy": "environment"}


def tour_text() -> str:
    """The default reply: what Cockpit is, how to add agents, and this agent's words."""
    rows = "".join(f"| `{word}` | {text} |\n" for word, text in SCENARIOS.items())
    return TOUR_INTRO + "| word | what it shows |\n|------|---------------|\n" + rows


def slow_text(rng: random.Random) -> str:
    """A long reply (well over 200 chunks) for the slow scenario."""
    parts = ["# A slow reply\n\n"]
    while sum(map(len, parts)) < 1200:
        parts.append(paragraph(rng, rng.randint(12, 24)) + "\n\n")
    return "".join(parts)


def huge_text() -> str:
    """Exactly HUGE_SIZE characters of numbered lines."""
    sample = len("line 0000001 of the huge reply\n")
    count = HUGE_SIZE // sample + 2
    text = "".join(f"line {n:07d} of the huge reply\n" for n in range(1, count))
    return text[:HUGE_SIZE]


def stderr_log() -> str:
    """At least STDERR_SIZE characters of log lines."""
    lines: list[str] = []
    size = 0
    number = 0
    while size < STDERR_SIZE:
        number += 1
        line = f"demo agent: log line {number:06d}: nothing is wrong, this is just noise\n"
        lines.append(line)
        size += len(line)
    return "".join(lines)


def respaced(text: str) -> str:
    """`text` with its whitespace changed but not its words: a re-send a client must spot."""
    words = text.split(" ")
    return "  ".join(words[:4]) + "\n" + " ".join(words[4:])


# Prompts ----------------------------------------------------------------------------------


def prompt_text(blocks: Sequence[ContentBlock]) -> str:
    """The prompt's text: its text blocks concatenated."""
    return "".join(block.text for block in blocks if isinstance(block, TextContentBlock))


def mentions(blocks: Sequence[ContentBlock]) -> list[str]:
    """One note per mentioned file: embedded resources with their size, links by URI."""
    notes: list[str] = []
    for block in blocks:
        if isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                notes.append(f"`{resource.uri}` ({len(resource.text)} characters)")
            else:
                notes.append(f"`{resource.uri}` (binary, {len(resource.blob)} base64 characters)")
        elif isinstance(block, ResourceContentBlock):
            notes.append(f"`{block.uri}` (a link)")
    return notes


def scenario_words(text: str) -> list[str]:
    """The scenario words in `text`, in running order; the tour when there are none."""
    lowered = text.lower()
    found = {word for word in SCENARIOS if re.search(rf"\b{word}\b", lowered)}
    return [word for word in SCENARIOS if word in found] or ["tour"]


def turn_seed(text: str) -> int:
    """A seed from the prompt, so the same prompt always streams the same pieces."""
    return zlib.crc32(text.encode("utf-8"))


# Session state and history ----------------------------------------------------------------


class Session:
    """What the agent remembers about one session. (A plain class, not a dataclass, so a
    client can load this file by path without registering it in sys.modules.)"""

    def __init__(
        self,
        session_id: str,
        cwd: str,
        mode: str = DEFAULT_MODE,
        model: str = DEFAULT_MODEL,
        history: list[dict[str, str]] | None = None,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.mode = mode
        self.model = model
        self.history: list[dict[str, str]] = history or []
        self.cancel = asyncio.Event()
        self.commands_due = True
        """True until the slash commands were announced for this session."""


def data_root() -> Path:
    """Where histories live: `$COCKPIT_DATA_DIR/demo-agent`, else a private temp folder."""
    configured = os.environ.get("COCKPIT_DATA_DIR")
    if configured:
        return Path(configured).expanduser() / "demo-agent"
    owner = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"cockpit-demo-{owner}" / "demo-agent"


def private_dir(path: Path) -> Path:
    """Create `path` and any missing parents owner-only (0700); return it."""
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
        folder.chmod(0o700)
    return path


def history_path(session_id: str) -> Path | None:
    """The history file of `session_id`, or None for an id that is not a plain name."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,128}", session_id):
        return None
    return data_root() / f"{session_id}.json"


def save_session(session: Session) -> None:
    """Write the session's history file (0600) atomically, so a crash never truncates it."""
    path = history_path(session.session_id)
    if path is None:
        return
    private_dir(path.parent)
    record = {
        "sessionId": session.session_id,
        "cwd": session.cwd,
        "mode": session.mode,
        "model": session.model,
        "history": session.history,
    }
    temporary = path.with_suffix(".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    os.replace(temporary, path)


def read_saved(session_id: str) -> dict[str, Any] | None:
    """The saved record of `session_id`, or None when there is none."""
    path = history_path(session_id)
    if path is None or not path.is_file():
        return None
    with path.open(encoding="utf-8") as handle:
        record = json.load(handle)
    return record if isinstance(record, dict) else None


def not_found(session_id: str) -> RequestError:
    """The clear error for a session this agent has no history of."""
    path = history_path(session_id)
    error = RequestError.resource_not_found(path.as_uri() if path else session_id)
    error.data = {
        **(error.data or {}),
        "sessionId": session_id,
        "reason": "the demo agent has no saved history for this session",
    }
    return error


# Protocol pieces --------------------------------------------------------------------------


def session_modes(current: str) -> SessionModeState:
    """The mode list, with `current` selected."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=mode, name=name) for mode, name in MODES.items()],
    )


def config_options(model: str) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The full config option list: one model selector with `model` selected."""
    choices = [SessionConfigSelectOption(value=value, name=name) for value, name in MODELS.items()]
    return [
        SessionConfigOptionSelect(
            type="select",
            id=MODEL_OPTION_ID,
            name="Model",
            category="model",
            current_value=model,
            options=choices,
        )
    ]


def command_list(commands: dict[str, str]) -> AvailableCommandsUpdate:
    """An `available_commands_update` for `commands`, with input hints where they apply."""
    return update_available_commands(
        AvailableCommand(
            name=name,
            description=description,
            input=AvailableCommandInput(UnstructuredCommandInput(hint=COMMAND_HINTS[name]))
            if name in COMMAND_HINTS
            else None,
        )
        for name, description in commands.items()
    )


def text_chunk(kind: TextKind, text: str, message_id: str | None) -> Update:
    """One text chunk of a reply or a thought (the SDK builders take no message id)."""
    chunk: Update
    if kind == "thought":
        chunk = update_agent_thought_text(text)
    else:
        chunk = update_agent_message_text(text)
    if message_id is not None:
        chunk.message_id = message_id
    return chunk


def error_text(error: RequestError) -> str:
    """A client error as one line: message, code and data."""
    data = f": {json.dumps(error.data)}" if error.data else ""
    return f"{error} (code {error.code}){data}"


def first_file(cwd: str) -> str | None:
    """The file the read tool shows: README.md, else the first regular file by name."""
    readme = os.path.join(cwd, "README.md")
    if os.path.isfile(readme):
        return readme
    try:
        names = sorted(entry.name for entry in os.scandir(cwd) if entry.is_file())
    except OSError:
        return None
    return os.path.join(cwd, names[0]) if names else None


def local_text(path: str) -> str | None:
    """The current text of `path`, or None when it does not exist (a diff's old text)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def make_escape_link(cwd: str) -> str:
    """Create `<cwd>/escape-link` pointing at cwd's parent unless it exists; say what happened."""
    link = os.path.join(cwd, "escape-link")
    if os.path.lexists(link):
        return f"`{link}` already existed"
    try:
        os.symlink(os.path.dirname(os.path.abspath(cwd)), link)
    except OSError as error:
        return f"could not create `{link}`: {error}"
    return f"created `{link}` pointing at the parent folder"


def write_stderr(text: str) -> None:
    """Write `text` to stderr and flush, so it reaches the client before anything else."""
    sys.stderr.write(text)
    sys.stderr.flush()


# One turn ---------------------------------------------------------------------------------


class Turn:
    """One prompt being answered: the streaming primitives, cancel checks and the record
    of the reply messages as a client folds them (for the session history)."""

    def __init__(self, agent: DemoAgent, session: Session, text: str) -> None:
        self.agent = agent
        self.prompt = text
        self.conn = agent.connection()
        self.session = session
        self.session_id = session.session_id
        self.cancel = session.cancel
        self.rng = random.Random(turn_seed(text))
        self.slow = agent.slow
        self.replies: list[str] = []
        self.reply_open = False
        """True while the last update was an id-less reply: a client appends the next one."""

    # -- pacing and cancel

    def check(self) -> None:
        """Stop the turn if the client cancelled it."""
        if self.cancel.is_set():
            raise TurnCancelled

    async def pause(self) -> None:
        """Yield between chunks (and wait in a slow turn) so a cancel can arrive."""
        if self.slow:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.cancel.wait(), SLOW_DELAY)
        else:
            await asyncio.sleep(0)
        self.check()

    # -- sending

    async def update(self, update: Update) -> None:
        """Send any non-text update; it ends the open reply, as it does in a client."""
        self.reply_open = False
        await self.conn.session_update(session_id=self.session_id, update=update)

    async def chunk(self, kind: TextKind, text: str, message_id: str | None = None) -> None:
        """Send one text chunk as is, with no opener and no change to the record."""
        update = text_chunk(kind, text, message_id)
        await self.conn.session_update(session_id=self.session_id, update=update)

    async def stream(
        self,
        text: str,
        kind: TextKind = "agent",
        message_id: str | None = None,
        whole: bool = False,
        piece_size: int | None = None,
    ) -> None:
        """Stream a block: an empty opening chunk, then 3-4 character pieces (exactly
        `piece_size` when given, or the text as one chunk when `whole`), yielding between
        chunks."""
        continuing = kind == "agent" and message_id is None and self.reply_open
        if continuing and not whole:
            text = PARAGRAPH_BREAK + text  # a client glues this onto the open reply
        if kind == "agent" and not continuing:
            self.replies.append("")
        self.reply_open = False
        await self.chunk(kind, "", message_id)
        if whole:
            pieces: Iterable[str] = [text]
        elif piece_size:
            pieces = (text[i : i + piece_size] for i in range(0, len(text), piece_size))
        else:
            pieces = token_pieces(text, self.rng)
        for piece in pieces:
            await self.pause()
            await self.chunk(kind, piece, message_id)
            if kind == "agent":
                self.replies[-1] += piece
        self.reply_open = kind == "agent" and message_id is None

    async def say(self, text: str) -> None:
        """Stream an id-less reply."""
        await self.stream(text)

    async def raw_line(self, line: str) -> None:
        """Write one whole line straight onto the protocol stream, bypassing the SDK."""
        writer = self.agent.writer
        writer.write(line.encode("utf-8") + b"\n")
        await writer.drain()

    # -- tool calls

    def call_id(self) -> str:
        """A fresh tool call id."""
        return f"call_{uuid.uuid4().hex[:12]}"

    async def start_tool(
        self,
        call_id: str,
        title: str,
        kind: ToolKind,
        path: str | None = None,
        content: Sequence[Any] | None = None,
    ) -> None:
        """Report a new pending tool call."""
        locations = [ToolCallLocation(path=path)] if path else None
        raw_input = {"path": path} if path else None
        await self.update(
            start_tool_call(
                call_id,
                title,
                kind=kind,
                status="pending",
                content=content,
                locations=locations,
                raw_input=raw_input,
            )
        )

    async def finish_tool(self, call_id: str, ok: bool, text: str, *extra: Any) -> None:
        """Report a tool call completed or failed, with `extra` content and `text`."""
        content = [*extra, tool_content(text_block(text))]
        status: Literal["completed", "failed"] = "completed" if ok else "failed"
        await self.update(update_tool_call(call_id, status=status, content=content))

    async def progress(self, call_id: str, *content: Any) -> None:
        """Mark a tool call in progress, replacing its content when some is given."""
        await self.update(
            update_tool_call(call_id, status="in_progress", content=list(content) or None)
        )

    async def ask_permission(self, call: ToolCallUpdate) -> str:
        """The chosen option id (an unknown one counts as "reject"), or "cancelled". Every
        call asks: remembering "Always allow" is left to the client. After a cancel the
        client gets a short grace to answer "cancelled" (as it must) before the turn stops
        waiting."""
        request = asyncio.ensure_future(
            self.conn.request_permission(
                session_id=self.session_id, tool_call=call, options=PERMISSION_OPTIONS
            )
        )
        cancelled = asyncio.ensure_future(self.cancel.wait())
        await asyncio.wait({request, cancelled}, return_when=asyncio.FIRST_COMPLETED)
        cancelled.cancel()
        try:
            response = await asyncio.wait_for(request, None if request.done() else PERMISSION_GRACE)
        except TimeoutError:
            return "cancelled"
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome) or self.cancel.is_set():
            return "cancelled"
        known = {option.option_id for option in PERMISSION_OPTIONS}
        return outcome.option_id if outcome.option_id in known else "reject"

    # -- client capabilities

    async def read_file(self, path: str, limit: int | None = None) -> str:
        """Read through the client (fs/read_text_file); a RequestError when it refuses."""
        if not self.agent.can("read"):
            raise RequestError.method_not_found("fs/read_text_file")
        response = await self.conn.read_text_file(
            session_id=self.session_id, path=path, limit=limit
        )
        return response.content

    async def write_file(self, path: str, content: str) -> None:
        """Write through the client (fs/write_text_file); a RequestError when it refuses."""
        if not self.agent.can("write"):
            raise RequestError.method_not_found("fs/write_text_file")
        await self.conn.write_text_file(session_id=self.session_id, path=path, content=content)

    # -- history

    def commit(self) -> None:
        """Append the prompt and the reply messages to the history and save it (once)."""
        if self.prompt:
            self.session.history.append({"role": "user", "text": self.prompt})
        self.prompt = ""
        self.session.history.extend(
            {"role": "agent", "text": reply} for reply in self.replies if reply
        )
        self.replies = []
        save_session(self.session)


# Scenarios --------------------------------------------------------------------------------


async def run_tour(turn: Turn) -> None:
    """The default reply."""
    await turn.say(tour_text())


async def run_think(turn: Turn) -> None:
    """A thought block; the reply comes from the other words (or a short one of its own)."""
    await turn.stream(THOUGHT, kind="thought")


async def run_plan(turn: Turn) -> None:
    """A plan whose steps run one by one; every plan update carries the complete list."""
    statuses: list[Literal["pending", "in_progress", "completed"]] = ["pending"] * len(PLAN_STEPS)

    def plan() -> AgentPlanUpdate:
        return update_plan(
            PlanEntry(content=title, priority="medium", status=status)
            for (title, _), status in zip(PLAN_STEPS, statuses, strict=True)
        )

    await turn.update(plan())
    for index, (_, sentence) in enumerate(PLAN_STEPS):
        turn.check()
        statuses[index] = "in_progress"
        await turn.update(plan())
        await turn.say(sentence)
        statuses[index] = "completed"
        await turn.update(plan())


async def run_ids(turn: Turn) -> None:
    """A thought and a reply with a messageId on every chunk, a different id for each."""
    await turn.stream(IDS_THOUGHT, kind="thought", message_id=uuid.uuid4().hex)
    await turn.stream(IDS_REPLY, message_id=uuid.uuid4().hex)


async def run_table(turn: Turn) -> None:
    """A long markdown reply."""
    await turn.say("# A long markdown reply\n\n" + markdown_reply(random.Random(7), 6000))


async def run_resend(turn: Turn) -> None:
    """One message streamed, then re-sent exactly, re-spaced, as a snapshot, and as a recap
    after a tool call; then a short closing reply."""
    if turn.reply_open:  # so the message starts its own row instead of extending a reply
        await turn.stream("Next, the same message several times.", kind="thought")
    await turn.say(RESEND_TEXT)
    await turn.pause()
    await turn.chunk("agent", RESEND_TEXT)
    await turn.pause()
    await turn.chunk("agent", respaced(RESEND_TEXT))
    await turn.pause()
    full = RESEND_TEXT + RESEND_TAIL
    await turn.chunk("agent", full)
    turn.replies[-1] = full
    call_id = turn.call_id()
    await turn.start_tool(call_id, "Recap check", "think")
    await turn.finish_tool(call_id, True, "The next chunk repeats the whole message.")
    await turn.pause()
    await turn.chunk("agent", full)
    await turn.say(RESEND_DONE)  # a new message: the recap above belongs to the first one


async def tool_read(turn: Turn) -> str:
    """Read the first lines of a file of the session folder through the client."""
    path = first_file(turn.session.cwd)
    call_id = turn.call_id()
    if path is None:
        await turn.say("First I would read a file, but this folder has none.")
        await turn.start_tool(call_id, "Read (nothing to read)", "read", turn.session.cwd)
        await turn.finish_tool(call_id, True, "Nothing to read: the folder holds no file.")
        return "found nothing to read"
    name = os.path.basename(path)
    await turn.say(f"First I will read `{name}`.")
    await turn.start_tool(call_id, f"Read {name}", "read", path)
    await turn.progress(call_id)
    try:
        text = await turn.read_file(path, limit=READ_LINES)
    except RequestError as error:
        await turn.finish_tool(call_id, False, error_text(error))
        return f"could not read `{name}`"
    lines = text.splitlines()[:READ_LINES]
    await turn.finish_tool(call_id, True, "\n".join(lines))
    return f"read {len(lines)} line(s) of `{name}`"


async def tool_edit(turn: Turn) -> str:
    """Write demo-notes.md through the client after asking permission (not in accept mode)."""
    path = os.path.join(turn.session.cwd, NOTES_FILE)
    diff = tool_diff_content(path, NOTES_TEXT, local_text(path))
    call_id = turn.call_id()
    title = f"Write {NOTES_FILE}"
    await turn.start_tool(call_id, title, "edit", path, [diff])
    decision = "accept"
    if turn.session.mode != "accept":
        call = ToolCallUpdate(
            tool_call_id=call_id,
            title=title,
            kind="edit",
            status="pending",
            content=[diff],
            locations=[ToolCallLocation(path=path)],
        )
        decision = await turn.ask_permission(call)
    if decision == "cancelled":
        raise TurnCancelled  # no tool update: the client marks the call cancelled itself
    if decision not in DECISIONS:
        await turn.finish_tool(call_id, False, "You rejected the edit; nothing was written.")
        return f"did not write `{NOTES_FILE}`: you rejected it"
    await turn.progress(call_id)
    try:
        await turn.write_file(path, NOTES_TEXT)
    except RequestError as error:
        await turn.finish_tool(call_id, False, error_text(error), diff)
        return f"could not write `{NOTES_FILE}`"
    await turn.finish_tool(call_id, True, f"Wrote {len(NOTES_TEXT)} characters.", diff)
    return f"wrote `{NOTES_FILE}` ({DECISIONS[decision]})"


async def tool_execute(
    turn: Turn, args: list[str] = TERMINAL_ARGS, title: str = "Run a command"
) -> str:
    """Run a command in a client terminal after asking permission (always asked)."""
    call_id = turn.call_id()
    command = f"{sys.executable} {' '.join(args)}"
    await turn.start_tool(call_id, title, "execute")
    call = ToolCallUpdate(
        tool_call_id=call_id,
        title=title,
        kind="execute",
        status="pending",
        content=[tool_content(text_block(command))],
        raw_input={"command": sys.executable, "args": args},
    )
    decision = await turn.ask_permission(call)
    if decision == "cancelled":
        raise TurnCancelled
    if decision not in DECISIONS:
        await turn.finish_tool(call_id, False, "You rejected the command; nothing ran.")
        return "did not run the command: you rejected it"
    if not turn.agent.can("terminal"):
        await turn.finish_tool(call_id, False, "The client offers no terminal.")
        return "could not run the command: the client offers no terminal"
    try:
        code, output = await run_in_terminal(turn, call_id, args)
    except RequestError as error:
        await turn.finish_tool(call_id, False, error_text(error))
        return "could not run the command"
    return f"ran a command (exit code {code}, output {output.strip()!r})"


async def run_in_terminal(turn: Turn, call_id: str, args: list[str]) -> tuple[int | None, str]:
    """Create a client terminal, embed it in the tool call, wait, collect, release."""
    conn = turn.conn
    sid = turn.session_id
    terminal = await conn.create_terminal(
        session_id=sid,
        command=sys.executable,
        args=args,
        cwd=turn.session.cwd,
        output_byte_limit=OUTPUT_LIMIT,
    )
    embedded = tool_terminal_ref(terminal.terminal_id)
    await turn.progress(call_id, embedded)
    try:
        status = await conn.wait_for_terminal_exit(session_id=sid, terminal_id=terminal.terminal_id)
        result = await conn.terminal_output(session_id=sid, terminal_id=terminal.terminal_id)
    finally:
        await conn.release_terminal(session_id=sid, terminal_id=terminal.terminal_id)
    code = status.exit_code
    await turn.finish_tool(call_id, code == 0, result.output or "(no output)", embedded)
    return code, result.output


async def run_tools(turn: Turn) -> None:
    """Three tool calls (read, edit, execute), a sentence before each, then a summary."""
    done = [await tool_read(turn)]
    turn.check()
    await turn.say(f"Now I will write a few notes to `{NOTES_FILE}`.")
    done.append(await tool_edit(turn))
    turn.check()
    await turn.say("Last, I will run a short command in a terminal.")
    done.append(await tool_execute(turn))
    await turn.say("Summary: I " + "; I ".join(done) + ".")


async def run_build(turn: Turn) -> None:
    """One command that takes a while and prints as it goes."""
    await turn.say("Building the project.")
    result = await tool_execute(turn, BUILD_ARGS, "Build the project")
    await turn.say(f"Done: I {result}.")


async def run_flood(turn: Turn) -> None:
    """One command whose output is five times the terminal's output limit."""
    await turn.say("Running a command that prints far more than the terminal keeps.")
    result = await tool_execute(turn, FLOOD_ARGS, "Print 20 KB")
    if result.startswith("ran a command"):
        result = f"ran it; the terminal kept only the last {OUTPUT_LIMIT:,} bytes of its output"
    await turn.say(f"Done: I {result}.")


async def run_permission(turn: Turn) -> None:
    """One edit that waits for the permission answer, then says what was decided."""
    await turn.say(f"I would like to write `{NOTES_FILE}`; I am asking first.")
    result = await tool_edit(turn)
    await turn.say(f"Decision received: I {result}.")


async def run_commands(turn: Turn) -> None:
    """Announce a changed command list and list it."""
    await turn.update(command_list(MORE_COMMANDS))
    lines = "".join(
        f"- `/{name}`"
        + (f" `<{COMMAND_HINTS[name]}>`" if name in COMMAND_HINTS else "")
        + f": {text}\n"
        for name, text in MORE_COMMANDS.items()
    )
    await turn.say("The slash commands are now:\n\n" + lines)


async def run_modes(turn: Turn) -> None:
    """Switch the session to plan mode on the agent's own initiative."""
    turn.session.mode = "plan"
    save_session(turn.session)
    await turn.update(update_current_mode("plan"))
    await turn.say(f"I switched this session to **{MODES['plan']}** mode (`plan`).")


async def run_escape(turn: Turn) -> None:
    """A reply with colour codes, a title-setting OSC sequence and a bell."""
    await turn.say(ESCAPE_TEXT)


async def attempt_outside(
    turn: Turn, kind: ToolKind, title: str, path: str, action: Callable[[], Awaitable[str]]
) -> str:
    """Report one attempt to leave the session folder as a tool call; describe the outcome."""
    call_id = turn.call_id()
    await turn.start_tool(call_id, title, kind, path)
    try:
        result = await action()
    except RequestError as error:
        await turn.finish_tool(call_id, False, error_text(error))
        return f"- {title}: refused: {error_text(error)}\n"
    await turn.finish_tool(call_id, True, f"Not refused: {result}")
    return f"- {title}: **not refused** ({result})\n"


async def run_outside(turn: Turn) -> None:
    """Try to read and write outside the session folder through the client."""
    cwd = turn.session.cwd
    await turn.say("I will now try to reach files outside this session's folder.")
    link_note = make_escape_link(cwd)

    async def read(path: str) -> str:
        return f"read {len(await turn.read_file(path))} characters"

    async def write(path: str) -> str:
        await turn.write_file(path, "written by the Cockpit demo agent\n")
        return "wrote the file"

    up = os.path.join(cwd, "..", "outside.txt")
    linked = os.path.join(cwd, "escape-link", "outside.txt")
    target = "/tmp/cockpit-demo-outside.txt"
    report = [
        await attempt_outside(turn, "read", f"Read {up}", up, lambda: read(up)),
        await attempt_outside(
            turn, "read", "Read /etc/hostname", "/etc/hostname", lambda: read("/etc/hostname")
        ),
        await attempt_outside(turn, "edit", f"Write {target}", target, lambda: write(target)),
        await attempt_outside(turn, "read", f"Read {linked}", linked, lambda: read(linked)),
    ]
    await turn.say(f"What happened ({link_note}):\n\n" + "".join(report))


async def run_unknown(turn: Turn) -> None:
    """An update kind no client knows, then a tool call updated before it is started."""
    notification = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": turn.session_id,
            "update": {"sessionUpdate": "brand_new_kind", "payload": {"answer": 42}},
        },
    }
    await turn.raw_line(json.dumps(notification))
    turn.reply_open = False
    call_id = turn.call_id()
    await turn.update(update_tool_call(call_id, status="in_progress", title="Late start"))
    await turn.update(start_tool_call(call_id, "Late start", kind="other", status="in_progress"))
    await turn.finish_tool(call_id, True, "Started after its first update.")
    await turn.say(
        "I sent a `brand_new_kind` update and a tool call whose first update came before its start."
    )


async def run_garbage(turn: Turn) -> None:
    """Lines that are not protocol messages on the protocol stream, then a reply."""
    for line in GARBAGE_LINES:
        await turn.raw_line(line)
    await turn.say(GARBAGE_REPLY)


async def run_bench(turn: Turn) -> None:
    """The streaming benchmark's reply, in 4-character chunks as fast as they can go."""
    sizes = [int(number) for number in re.findall(r"\b(\d{3,7})\b", turn.prompt)]
    await turn.stream(benchmark_reply(sizes[0] if sizes else BENCH_SIZE), piece_size=4)
    await flush_protocol(turn.agent.writer)
    write_stderr(f"demo agent: bench reply sent at {time.time():.3f}\n")  # for latency figures


async def run_huge(turn: Turn) -> None:
    """One 10 MiB message chunk after the usual empty opener."""
    await turn.stream(huge_text(), whole=True)


async def run_stderr(turn: Turn) -> None:
    """A flood of log lines on stderr, then a reply."""
    write_stderr(stderr_log())
    await turn.say("I wrote 1 MiB of log lines to stderr, and I am still answering.")


async def run_slow(turn: Turn) -> None:
    """A long reply with a pause between chunks."""
    turn.slow = True
    await turn.say(slow_text(turn.rng))


async def run_crash(turn: Turn) -> None:
    """Part of a reply, then a deliberate crash with exit code 3."""
    await turn.say(CRASH_TEXT)
    turn.commit()
    await flush_protocol(turn.agent.writer)
    write_stderr("demo agent: crashing on purpose\n")
    sys.stdout.flush()
    os._exit(CRASH_CODE)


HANDLERS: dict[str, Callable[[Turn], Awaitable[None]]] = {
    "tour": run_tour,
    "think": run_think,
    "plan": run_plan,
    "ids": run_ids,
    "table": run_table,
    "bench": run_bench,
    "resend": run_resend,
    "tools": run_tools,
    "build": run_build,
    "flood": run_flood,
    "permission": run_permission,
    "commands": run_commands,
    "modes": run_modes,
    "escape": run_escape,
    "outside": run_outside,
    "unknown": run_unknown,
    "garbage": run_garbage,
    "huge": run_huge,
    "stderr": run_stderr,
    "slow": run_slow,
    "crash": run_crash,
}


async def run_turn(turn: Turn, words: list[str], notes: list[str]) -> None:
    """The thought first (if asked for), then the mentioned files, then each word in order."""
    rest = [word for word in words if word != "think"]
    if "think" in words:
        await run_think(turn)
    if "slow" in words:
        turn.slow = True
    if notes:
        await turn.say(f"I received {len(notes)} mentioned file(s): {', '.join(notes)}.")
    for word in rest:
        turn.check()
        await HANDLERS[word](turn)
    if not rest:
        await turn.say(THINK_REPLY)


async def flush_protocol(writer: asyncio.StreamWriter) -> None:
    """Wait until everything written to the protocol stream has left the process."""
    await writer.drain()
    for _ in range(200):
        if writer.transport.get_write_buffer_size() == 0:
            return
        await asyncio.sleep(0.01)


# The agent --------------------------------------------------------------------------------


class DemoAgent:
    """The ACP agent the SDK dispatches to: each method answers one ACP request."""

    def __init__(self, writer: asyncio.StreamWriter, slow: bool, hang: bool) -> None:
        self.writer = writer
        self.slow = slow
        self.hang = hang
        self.protocol_version: int | None = None
        """A version to answer initialize with instead of negotiating (a test switch)."""
        self.start_delay = 0.0
        """Seconds `initialize` waits before it answers (a slow start)."""
        self.sessions: dict[str, Session] = {}
        self.client_caps: ClientCapabilities | None = None
        self._conn: AgentSideConnection | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: AgentSideConnection) -> None:
        """Keep the connection: it is how the agent calls the client."""
        self._conn = conn

    def connection(self) -> AgentSideConnection:
        """The client connection (set by the SDK before any request arrives)."""
        if self._conn is None:
            raise RequestError.internal_error({"details": "no client connection yet"})
        return self._conn

    def can(self, ability: Literal["read", "write", "terminal"]) -> bool:
        """Whether the client advertised `ability` in initialize."""
        caps = self.client_caps
        if caps is None:
            return False
        if ability == "terminal":
            return bool(caps.terminal)
        fs = caps.fs
        if fs is None:
            return False
        return bool(fs.read_text_file if ability == "read" else fs.write_text_file)

    def session(self, session_id: str) -> Session:
        """The live session `session_id`; an invalid-params error when it is unknown."""
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "reason": "unknown session: create or load it first"}
            )
        return session

    def later(self, work: Awaitable[None]) -> None:
        """Run `work` in the background, keeping a reference until it ends."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def announce_commands(self, session_id: str) -> None:
        """Send the slash commands just after the session response went out."""
        await asyncio.sleep(COMMANDS_DELAY)
        await self.commands_if_due(session_id)

    async def commands_if_due(self, session_id: str) -> None:
        """Announce the slash commands once; a prompt calls this first, so the announcement
        never lands in the middle of a streamed reply (where it would split the reply)."""
        session = self.sessions.get(session_id)
        if session is None or not session.commands_due:
            return
        session.commands_due = False
        await self.connection().session_update(session_id=session_id, update=command_list(COMMANDS))

    # -- lifecycle

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Negotiate the version and advertise what this agent supports."""
        if self.hang:
            await asyncio.Event().wait()
        await asyncio.sleep(self.start_delay)
        self.client_caps = client_capabilities
        return InitializeResponse(
            protocol_version=self.protocol_version or min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, embedded_context=True),
                session_capabilities=SessionCapabilities(close=SessionCloseCapabilities()),
            ),
            agent_info=Implementation(name=AGENT_NAME, title=AGENT_TITLE, version=AGENT_VERSION),
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        """Open a session in `cwd`; the slash commands follow the response."""
        session = Session(session_id=uuid.uuid4().hex, cwd=cwd)
        self.sessions[session.session_id] = session
        save_session(session)
        self.later(self.announce_commands(session.session_id))
        return NewSessionResponse(
            session_id=session.session_id,
            modes=session_modes(session.mode),
            config_options=config_options(session.model),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Replay a saved session's history, one whole-text update per message, then answer."""
        record = read_saved(session_id)
        if record is None:
            raise not_found(session_id)
        mode, model = str(record.get("mode")), str(record.get("model"))
        session = Session(
            session_id=session_id,
            cwd=cwd,
            mode=mode if mode in MODES else DEFAULT_MODE,
            model=model if model in MODELS else DEFAULT_MODEL,
            history=[entry for entry in record.get("history", []) if isinstance(entry, dict)],
        )
        self.sessions[session_id] = session
        conn = self.connection()
        for entry in session.history:
            text = str(entry.get("text", ""))
            update: Update
            if entry.get("role") == "user":
                update = update_user_message_text(text)
            else:
                update = update_agent_message_text(text)
            await conn.session_update(session_id=session_id, update=update)
        self.later(self.announce_commands(session_id))
        return LoadSessionResponse(
            modes=session_modes(session.mode), config_options=config_options(session.model)
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Forget the session (its history file stays, so it can be loaded again)."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.cancel.set()
        return CloseSessionResponse()

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """Switch mode on the client's request and confirm it with a mode update."""
        session = self.session(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params({"modeId": mode_id, "known": list(MODES)})
        session.mode = mode_id
        save_session(session)
        await self.connection().session_update(
            session_id=session_id, update=update_current_mode(mode_id)
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Change the model option; answer with the full option list."""
        session = self.session(session_id)
        if config_id != MODEL_OPTION_ID:
            raise RequestError.invalid_params({"configId": config_id, "known": ["model"]})
        if not isinstance(value, str) or value not in MODELS:
            raise RequestError.invalid_params({"value": value, "known": list(MODELS)})
        session.model = value
        save_session(session)
        return SetSessionConfigOptionResponse(config_options=config_options(session.model))

    # -- turns

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Flag the running turn of `session_id`; it stops at its next chunk or step."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel.set()

    async def prompt(
        self, prompt: list[ContentBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        """Answer one prompt by running its scenario words; record it in the history."""
        session = self.session(session_id)
        session.cancel = asyncio.Event()  # before any await, so an early cancel is kept
        await self.commands_if_due(session_id)
        text = prompt_text(prompt)
        turn = Turn(self, session, text)
        texts = (block.text for block in prompt if isinstance(block, TextContentBlock))
        words = scenario_words("\n".join(texts))  # joined apart: block ends are word ends
        try:
            await run_turn(turn, words, mentions(prompt))
        except TurnCancelled:
            pass
        finally:
            turn.commit()
        stop: StopReason = "cancelled" if session.cancel.is_set() else "end_turn"
        return PromptResponse(stop_reason=stop)


# Entry point ------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line flags."""
    parser = argparse.ArgumentParser(description="Cockpit's scripted demo ACP agent.")
    parser.add_argument("--hang-initialize", action="store_true", help="never answer initialize")
    parser.add_argument(
        "--start-delay", type=float, default=0.0, metavar="S", help="answer initialize after S s"
    )
    parser.add_argument("--slow", action="store_true", help="stream every turn slowly")
    parser.add_argument(
        "--protocol-version", type=int, metavar="N", help="answer initialize with version N"
    )
    parser.add_argument(
        "--exit-on-start", type=int, metavar="CODE", help="exit with CODE before reading"
    )
    return parser.parse_args(argv)


async def protocol_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams on stdin and a private copy of stdout; fd 1 and sys.stdout then point at
    stderr, so a stray print (ours or a library's) can never corrupt the protocol."""
    loop = asyncio.get_running_loop()
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=READ_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, protocol_out
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def serve(options: argparse.Namespace) -> None:
    """Run the agent until the client closes stdin."""
    reader, writer = await protocol_streams()
    agent = DemoAgent(writer, slow=options.slow, hang=options.hang_initialize)
    agent.protocol_version = options.protocol_version
    agent.start_delay = options.start_delay
    # A plain class on purpose: acp.Agent is a Protocol whose stubs would answer the methods
    # this agent does not implement with null instead of "method not found".
    await run_agent(
        cast(Agent, agent), input_stream=writer, output_stream=reader, use_unstable_protocol=True
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the flags, then serve the protocol on stdio."""
    options = parse_args(argv)
    if options.exit_on_start is not None:
        write_stderr("demo agent: exiting at start\n")
        return int(options.exit_on_start)
    asyncio.run(serve(options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
