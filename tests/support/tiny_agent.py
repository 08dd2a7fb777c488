"""A tiny ACP agent on the real SDK, with configurable capabilities, for the engine tests.

Run by path: `python tests/support/tiny_agent.py [--caps load,resume] [--resume-fails]` (other
arguments are ignored, so it can stand in for an agent run as `gemini --acp`).

- `--caps`: what it advertises: `load` (session/load, which replays nothing), `resume`
  (session/resume), both, or `none`; `mcp-http`, `mcp-sse`: the MCP transports it takes
  besides stdio; `logout`: it signs out when asked (`logout`, which its SDK does not
  route: it adds the route), and asks to sign in again.
- `--resume-fails`: session/resume answers with an error.
- `--start sleep=S | busy=S | chatter=S`: what it does before it answers `initialize`:
  sleeps S seconds (no CPU, no output), burns CPU for S seconds, or has a helper write
  a line to its stderr five times a second for S seconds. The helper runs in a session
  of its own, so that the agent's process group uses no CPU meanwhile: only what it
  writes shows it is alive.
- `--load ...`: the same, before it answers `session/load`.
- `--auth env:VAR | terminal | browser | key | fails`: it asks to be signed in (session/new
  answers -32000 until `authenticate` succeeded in this process), offering one way: an
  `env_var` method reading VAR (it fails unless VAR is in its environment), a `terminal`
  method whose login (this program with `--login`) writes `tiny-login` in the session's
  folder, a browser sign-in (it prints an address on stderr, then waits doing nothing for
  `TINY_BROWSER_WAIT` seconds, 0.3 by default, and succeeds), a key method (gemini-cli's
  `_meta["api-key"]`: the key comes in the request; `key-length` says how long it was),
  or a method
  whose sign-in always fails. `--auth-at prompt` asks at the first prompt instead.
- `--login`: the terminal login: writes `tiny-login` in the current folder (with the
  value of `TINY_LOGIN` in the environment) and exits. With `TINY_LOGIN_CODE` set, it
  first prints a sign-in address and asks for the code shown there, reads one line from
  its input and writes that line instead; a line other than the variable's value fails
  the login (exit 1), printing the line back.
- `client-caps` (a prompt word): says the client's capabilities, as JSON.
- `--commands NAME,...`: the slash commands it announces just after a new session (as
  gemini announces its `/help`); a prompt that starts with `/` is answered "command: "
  and the prompt as it came.

Words in the prompt pick what a turn does (the reply is "ok" otherwise):

- `ask-and-exit`: starts a tool call, asks permission for it, then exits with code 9
  before any answer.
- `ask`: asks permission for a tool call whose title holds escape sequences, then says
  which option was chosen.
- `ask-twins`, `ask-twins-always`, `ask-none`: ask permission with ambiguous options (an
  allow and a reject sharing one id; none at all), then say what they were told.
- `ask-and-check`: asks permission, and the moment it has the answer reads Cockpit's
  database (`COCKPIT_DATA_DIR/cockpit.db`) for the decision rows, then says what it was
  told and what it found: "told: yes; decisions stored: 1".
- `ask-many [n=N] [gap=S]`: asks N permissions at once (tool calls `call_0`...; with
  `gap`, the k-th k*S seconds after the first), waits for every answer, then says how many
  were allowed and how many cancelled.
- `max_tokens`, `refusal`: a short reply, then that stop reason.
- `cancelled`: a short reply, then the stop reason `cancelled`, though no one cancelled.
- `fail`: the prompt is answered with a JSON-RPC error; the agent stays up.
- `read=PATH`: reads PATH (relative to the session's folder) through the client and says
  how many characters came back, or why not.
- `read-missing`: reads `missing.txt` in the session's folder through the client and
  says what came back (`read: ''`, or `read failed: ...`), then the value of
  `GEMINI_CLI_NO_RELAUNCH` in its environment.
- `usage`: a short reply, then usage and a Gemini-style `_meta` quota in the response.
- `hostile [n=N] [seed=S] [huge=B]`: N raw lines drawn from seed S that no agent may hurt
  Cockpit with (`hostile_lines`), one of them B bytes long, then "still here after K valid
  chunks" (the valid ones say `w0 w1 ...`).
- `close-stdout`: says "closing", closes its output and lives on for a minute.
- `ask-and-leave`: asks permission, and ends its turn without waiting for the answer.
- `write=PATH`: writes "tiny" to PATH (relative to the session's folder) through the
  client and says "wrote", or why not.
- `term=CMD` / `ask-term=CMD`: runs `sh -c CMD` in a client terminal (asking permission
  for CMD first with `ask-term`), and says its exit code and output, or why not.
- `bad`: raw lines a misbehaving agent may write (a `session/update` whose params or update
  is not an object, a text chunk whose content is not an object, a 100 KB update that is a
  string), then "still here".
- `refuse [n=N]`: N raw requests off ACP's schema or of methods no client serves
  (`MALFORMED_REQUESTS`, in turn; one of each by default), one line each, then waits for
  every answer and says which error codes came back, and for how many of them Cockpit's
  database (`COCKPIT_DATA_DIR/cockpit.db`) held the refusal as the answer came:
  "answers: -32601 x2, -32602 x11; stored before their answer: 13/13".
- `raw=NAME`: the raw requests `RAW_REQUESTS[NAME]`, and the error codes of their
  answers: "answers: [-32602, -32602]".
- `withdraw-form [after=S]`: asks a form (`RAW_REQUESTS["a-form"]`), withdraws it S
  seconds later (1 by default) with `$/cancel_request`, and says what it was answered:
  "withdrawn: {'action': 'cancel'}".
- `meta-read=PATH`: reads PATH (relative to the session's folder) in a raw request whose
  `_meta` names the request's own params (`path`, and `self`), and says what came back.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sqlite3
import sys
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from acp.connection import StreamDirection, StreamEvent
from acp.core import Agent, AgentSideConnection, RequestError, run_agent
from acp.helpers import start_tool_call, update_agent_message_text, update_available_commands
from acp.schema import (
    AgentAuthCapabilities,
    AgentCapabilities,
    AuthenticateResponse,
    AuthEnvVar,
    AuthMethodAgent,
    AvailableCommand,
    EnvVarAuthMethod,
    InitializeResponse,
    LoadSessionResponse,
    LogoutCapabilities,
    LogoutRequest,
    LogoutResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    RequestPermissionResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionResumeCapabilities,
    TerminalAuthMethod,
    ToolCallUpdate,
    Usage,
)

EXIT_CODE = 9
CHATTY = Path(__file__).with_name("chatty_agent.py")
"""Its helper writes to the agent's stderr for `--start chatter=S`."""
ESCAPED_TITLE = "Delete \x1b]0;pwned\x07\x1b[31meverything\x1b[0m"
BAD_LINES = (
    {"jsonrpc": "2.0", "method": "session/update", "params": "x"},
    {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "{sid}", "update": "y"}},
    {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "{sid}",
            "update": {"sessionUpdate": "agent_message_chunk", "content": "not a block"},
        },
    },
    {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "{sid}", "update": "z" * 100_000},
    },
)

TOOL = {"toolCallId": "call_m", "title": "Delete the notes", "kind": "delete"}
OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]
MALFORMED_REQUESTS: tuple[tuple[str, Any], ...] = (
    ("session/request_permission",  # options not a list, and a title with escape sequences
     {"sessionId": "{sid}", "toolCall": {**TOOL, "title": ESCAPED_TITLE}, "options": "allow"}),
    ("session/request_permission", {"sessionId": "{sid}", "options": OPTIONS}),  # no toolCall
    ("session/request_permission",  # a numeric toolCallId
     {"sessionId": "{sid}", "toolCall": {**TOOL, "toolCallId": 7}, "options": OPTIONS}),
    ("session/request_permission",  # an option of a kind ACP does not have
     {"sessionId": "{sid}", "toolCall": TOOL,
      "options": [{"optionId": "yes", "name": "Allow", "kind": "maybe"}]}),
    ("session/request_permission", {"toolCall": TOOL, "options": OPTIONS}),  # no sessionId
    ("session/request_permission", [TOOL, OPTIONS]),  # params that are a list
    ("session/request_permission", None),  # no params at all
    ("fs/read_text_file", {"sessionId": "{sid}", "path": 5}),
    ("fs/write_text_file", {"sessionId": "{sid}", "path": "notes.txt"}),  # no content
    ("terminal/create", {"sessionId": "{sid}", "command": ["rm", "-rf", "/"]}),
    ("terminal/output", {"sessionId": "{sid}"}),  # no terminalId
    ("no/such_method", {"sessionId": "{sid}"}),
    ("_vendor/extension", {"sessionId": "{sid}"}),
)  # fmt: skip
"""Requests a client must refuse (method, params; `{sid}` is the session's id): the SDK
answers each with "Invalid params" or "Method not found"."""

RAW_REQUESTS: dict[str, tuple[tuple[str, Any], ...]] = {
    "no-terminal": tuple(
        (method, {"sessionId": "{sid}", "terminalId": "term-\x1b[2J"})
        for method in ("terminal/output", "terminal/wait_for_exit", "terminal/kill",
                       "terminal/release")
    ),
    "no-program": (("terminal/create", {"sessionId": "{sid}", "command": "/no/such/program"}),),
    "bad-forms": tuple(
        ("elicitation/create", {"sessionId": "{sid}", "message": "m", **mode})
        for mode in (
            {"mode": "form", "requestedSchema": {"properties": {"address": {
                "type": "object", "properties": {"street": {"type": "string"}}}}}},
            {"mode": "form", "requestedSchema": {"properties": 5}},
            {"mode": "form", "requestedSchema": {"properties": {
                f"f{n}": {"type": "string"} for n in range(5000)}}},
            {"mode": "form", "requestedSchema": {"properties": {
                "x": {"type": "string", "title": "t" * 300_000}}}},
            {"mode": "form", "requestedSchema": {"properties": {
                "x": {"type": "string", "enum": [1, 2]}}}},
            {"mode": "form", "requestedSchema": {"properties": {
                "x": {"type": "array", "items": {"type": "object"}}}}},
            {"mode": "url", "elicitationId": "e1", "url": "javascript:alert(1)"},
            {"mode": "_custom"},
        )
    ),
    "a-form": (("elicitation/create", {
        "sessionId": "{sid}", "mode": "form", "message": "Your name?",
        "requestedSchema": {"properties": {"name": {"type": "string"}}},
    }),),
    "escape-form": (("elicitation/create", {
        "sessionId": "{sid}", "mode": "form", "message": "hi \x1b]0;pwned\x07 there",
        "requestedSchema": {"properties": {"name": {
            "type": "string", "title": "Name \x1b[31mred\x1b[0m", "description": "\x1b[2J"}}},
    }),),
}  # fmt: skip
"""Requests Cockpit cannot serve: terminals it never made, a program that does not exist
(both follow ACP's schema); forms it refuses (`bad-forms`: off the schema, a nested
object, 5,000 fields, a 300 KB title, a list of objects, a link that is not a web
address, a mode of no known kind); and a form whose texts hold escape sequences
(`escape-form`), which waits for its answer."""


def hostile_lines(seed: int, session_id: str, count: int, huge: int) -> list[bytes]:
    """`count` lines an agent must never be able to hurt Cockpit with, drawn from `seed`,
    among which valid text chunks carry the words `w0 w1 ...`, in order.

    Garbage and invalid UTF-8, JSON that is no object, arrays and updates nested hundreds
    of levels deep, ids that are objects, lists or booleans, responses to ids never asked,
    errors that are strings, unknown methods, every update kind with wrong types in its
    fields, NUL, lone surrogates and escape sequences in text, and one line of `huge`
    bytes."""
    rng = random.Random(seed)
    sid = session_id

    def update(fields: dict[str, Any]) -> Any:
        return {"jsonrpc": "2.0", "method": "session/update",
                "params": {"sessionId": sid, "update": fields}}  # fmt: skip

    def nested(depth: int) -> Any:
        value: Any = "bottom"
        for _ in range(depth):
            value = [value] if rng.random() < 0.5 else {"x": value}
        return value

    wrong: list[Any] = [
        None,
        7,
        -1.5,
        True,
        "s",
        [],
        [1, "a"],
        {},
        {"a": {"b": []}},
        "\x00",
        "\ud800",
    ]
    kinds = ["agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "tool_call",
             "tool_call_update", "plan", "available_commands_update", "current_mode_update",
             "config_option_update", "session_info_update", "usage_update", "unknown_kind"]  # fmt: skip
    fields = ["content", "toolCallId", "title", "status", "kind", "entries", "availableCommands",
              "currentModeId", "configOptions", "used", "size", "cost", "messageId", "rawInput",
              "locations"]  # fmt: skip
    lines: list[bytes] = []
    words = 0
    for number in range(count):
        roll = rng.randrange(16)
        if roll < 4:  # a valid chunk, which must be stored
            text = f"w{words} "
            words += 1
            message: Any = update(
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
            )
        elif roll == 4:
            lines.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))))
            continue
        elif roll == 5:
            message = rng.choice([42, None, "x", [], [1, 2], True, 1.5])
        elif roll == 6:
            depth = rng.choice([100, 400, 900, 990, 1500, 5000])
            lines.append(b"[" * depth + b"]" * depth)
            continue
        elif roll == 7:
            message = update({"sessionUpdate": "agent_message_chunk",
                              "content": nested(rng.choice([70, 400, 900]))})  # fmt: skip
        elif roll == 8:
            message = {"jsonrpc": "2.0", "id": rng.choice([{"a": 1}, [1], True, 1.5, None, 99999]),
                       "result": rng.choice([None, {}, [], "x"])}  # fmt: skip
            if rng.random() < 0.5:
                message = {**{k: v for k, v in message.items() if k != "result"},
                           "error": rng.choice(["boom", 5, [], {"code": "x"}, None])}  # fmt: skip
        elif roll == 9:
            message = {"jsonrpc": "2.0", "method": rng.choice(["no/such", "fs/nothing", 5, []]),
                       "params": {}}  # fmt: skip
            if rng.random() < 0.5:
                message["id"] = f"u{number}"
        elif roll == 10:
            message = {"jsonrpc": "2.0", "method": "session/update",
                       "params": {"sessionId": sid, "update": {"sessionUpdate": rng.choice(wrong)}}}  # fmt: skip
        elif roll == 11:
            message = {"jsonrpc": "2.0", "id": f"p{number}", "method": "session/request_permission",
                       "params": {"sessionId": sid, "toolCall": rng.choice(wrong),
                                  "options": rng.choice(wrong)}}  # fmt: skip
        elif roll == 12:
            message = {"jsonrpc": "2.0", "id": f"f{number}",
                       "method": rng.choice(["fs/read_text_file", "fs/write_text_file"]),
                       "params": {"sessionId": sid, "path": rng.choice([*wrong, "../outside.txt", "", "."]),
                                  "content": "x"}}  # fmt: skip
        elif roll == 13:
            text = rng.choice(["\x1b]0;owned\x07", "\x1b[2J", "nul\x00", "\ud800", "\x9b31m"])
            message = update(
                {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": text}}
            )
        else:
            fields_of: dict[str, Any] = {"sessionUpdate": rng.choice(kinds)}
            for name in rng.sample(fields, rng.randrange(1, 5)):
                fields_of[name] = rng.choice(wrong)
            message = update(fields_of)
        lines.append(json.dumps(message).encode())
    lines.insert(rng.randrange(len(lines) + 1), b'{"jsonrpc": "2.0", "x": "' + b"y" * huge + b'"}')
    seen_to_crash = [  # each of these ended Cockpit once
        update({"sessionUpdate": "available_commands_update", "availableCommands": [
            {"name": "web", "description": "search", "input": "a string"},
            {"name": "plan", "description": "plan it", "input": {"hint": "what"}}]}),
        update({"sessionUpdate": "current_mode_update", "currentModeId": {"id": "x"}}),
        update({"sessionUpdate": ["agent_message_chunk"], "content": {"type": "text"}}),
        {"jsonrpc": "2.0", "id": {"a": 1}, "result": {}},
    ]  # fmt: skip
    return [json.dumps(message).encode() for message in seen_to_crash] + lines


def described(server: Any) -> str:
    """An MCP server an agent was handed, in a few words: its name, its type, and its
    variables or headers (the plan tool's by name only: its token is never shown)."""
    kind = getattr(server, "type", None) or "stdio"
    pairs = getattr(server, "env", None) or getattr(server, "headers", None) or []
    secret = server.name == "cockpit-plan"
    values = ",".join(pair.name if secret else f"{pair.name}={pair.value}" for pair in pairs)
    return f"{server.name}:{kind}:{values}"


class TinyAgent:
    """Answers just enough of ACP; a plain class, not a subclass of the SDK's Protocol."""

    def __init__(self, writer: asyncio.StreamWriter, options: argparse.Namespace) -> None:
        self.writer = writer
        self.caps = set(options.caps.split(",")) - {"none", ""}
        self.servers: dict[str, list[Any]] = {}
        """The MCP servers each session was handed as it opened."""
        self.resume_fails = options.resume_fails
        self.start = options.start
        self.load = options.load
        self.commands = [name for name in options.commands.split(",") if name]
        self.conn: AgentSideConnection | None = None
        self.background: set[asyncio.Future[Any]] = set()
        self.folders: dict[str, str] = {}
        self.answers: dict[str, dict[str, Any]] = {}
        """The client's answers to the raw requests this agent wrote, by their ids."""
        self.answered = asyncio.Event()
        self.stored_first: dict[str, int] = {}
        """How many refused requests Cockpit's database held as each answer came."""
        self.auth = options.auth
        self.auth_at = options.auth_at
        self.signed_in = not options.auth
        self.key_length = 0
        """How long the key a key sign-in brought was (the key itself is not kept)."""
        self.cwd = os.getcwd()

    def observe(self, event: StreamEvent) -> None:
        """The SDK shows this agent every message; the answers to its raw requests are
        kept (its own connection drops them: it did not send them)."""
        message = event.message
        request_id = message.get("id")
        incoming = event.direction == StreamDirection.INCOMING
        if incoming and str(request_id).startswith("raw-") and "method" not in message:
            self.answers[str(request_id)] = message
            self.stored_first[str(request_id)] = stored_refusals()
            self.answered.set()

    async def send_raw(
        self, session_id: str, requests: Sequence[tuple[str, Any]]
    ) -> list[dict[str, Any] | None]:
        """Write these requests (method, params; `{sid}` is the session's id) as raw lines,
        with the ids `raw-0`, `raw-1`..., and wait a minute at most for every answer."""
        self.answers.clear()
        self.stored_first.clear()
        for number, (method, params) in enumerate(requests):
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": f"raw-{number}", "method": method}
            if params is not None:
                message["params"] = params
            raw = json.dumps(message).replace("{sid}", session_id)
            self.writer.write(raw.encode() + b"\n")
            await self.writer.drain()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while len(self.answers) < len(requests) and loop.time() < deadline:
            self.answered.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.answered.wait(), deadline - loop.time())
        return [self.answers.get(f"raw-{number}") for number in range(len(requests))]

    async def refuse(self, session_id: str, count: int) -> str:
        """`refuse`: `count` malformed requests, the codes of the answers that came, and
        how many of them Cockpit had stored as refused by the time their answer came."""
        requests = [MALFORMED_REQUESTS[n % len(MALFORMED_REQUESTS)] for n in range(count)]
        answers = await self.send_raw(session_id, requests)
        codes = Counter(
            str((answer.get("error") or {}).get("code", "no error"))
            for answer in answers
            if answer is not None
        )
        first = sum(self.stored_first.get(f"raw-{n}", 0) > n for n in range(count))
        listed = ", ".join(f"{code} x{times}" for code, times in sorted(codes.items()))
        missing = count - codes.total()
        return (
            f"answers: {listed}" + (f"; {missing} unanswered" if missing else "")
            + f"; stored before their answer: {first}/{count}"
        )  # fmt: skip

    async def meta_read(self, session_id: str, path: str) -> str:
        """`meta-read=PATH`: reads PATH with a `_meta` whose keys name the request's own
        params (and `self`), and says what came back."""
        meta = {"path": 5, "self": 1, "trace": "kept"}
        params = {"sessionId": "{sid}", "path": path, "_meta": meta}
        (answer,) = await self.send_raw(session_id, [("fs/read_text_file", params)])
        if answer is None:
            return "no answer"
        if "error" in answer:
            return f"read failed: {answer['error'].get('message')}"
        return f"read: {answer['result']['content']}"

    def on_connect(self, conn: AgentSideConnection) -> None:
        self.conn = conn

    def auth_methods(self) -> list[Any]:
        """The one way `--auth` offers."""
        kind, _, variable = self.auth.partition(":")
        if kind == "env":
            return [EnvVarAuthMethod(
                type="env_var", id="tiny-key", name=f"Use {variable}",
                description=f"Set {variable} to your key.", vars=[AuthEnvVar(name=variable)],
            )]  # fmt: skip
        if kind == "terminal":
            return [TerminalAuthMethod(
                type="terminal", id="tiny-terminal", name="Log in in a terminal",
                description="Runs the tiny agent's own login.", args=["--login"],
                env={"TINY_LOGIN": "yes"},
            )]  # fmt: skip
        if kind == "browser":
            return [AuthMethodAgent(
                id="tiny-browser", name="Log in with a browser", description="Opens a page."
            )]  # fmt: skip
        if kind == "fails":
            return [AuthMethodAgent(id="tiny-fails", name="Never works")]
        if kind == "key":  # as gemini-cli offers its API key
            return [AuthMethodAgent(
                id="tiny-api-key", name="Tiny API key", description="Paste your key.",
                field_meta={"api-key": {"provider": "tiny"}},
            )]  # fmt: skip
        return []

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        kind, _, variable = self.auth.partition(":")
        if kind == "env" and not os.environ.get(variable):
            raise RequestError.auth_required({"message": f"{variable} is not set"})
        if kind == "terminal" and not (Path(self.cwd) / "tiny-login").exists():
            raise RequestError.auth_required({"message": "run the login first"})
        if kind == "browser":
            print("open https://login.example.com/device?code=TINY to sign in", file=sys.stderr)
            sys.stderr.flush()
            await asyncio.sleep(float(os.environ.get("TINY_BROWSER_WAIT", "0.3")))
        if kind == "fails":
            raise RequestError.internal_error({"message": "the sign-in server said no"})
        if kind == "key":
            key = str(kwargs.get("api-key") or "")
            if not key:
                raise RequestError.auth_required({"message": "no key came with the request"})
            self.key_length = len(key)
        self.signed_in = True
        return AuthenticateResponse()

    async def logout(self, **kwargs: Any) -> LogoutResponse:
        """Sign out (`--caps logout`): the next session or prompt asks to sign in again."""
        self.signed_in = not self.auth
        if self.auth and self.auth.startswith("terminal"):
            (Path(self.cwd) / "tiny-login").unlink(missing_ok=True)
        return LogoutResponse()

    def must_sign_in(self, at: str) -> None:
        """-32000 while `--auth` waits for a sign-in at this point (`--auth-at`)."""
        if not self.signed_in and self.auth_at == at:
            raise RequestError.auth_required({"message": "sign in to use the tiny agent"})

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        await self.first(self.start)
        caps = kwargs.get("client_capabilities")
        self.client_caps = caps.model_dump(by_alias=True, exclude_none=True) if caps else {}
        return InitializeResponse(
            auth_methods=self.auth_methods(),
            protocol_version=min(protocol_version, 1),
            agent_capabilities=AgentCapabilities(
                mcp_capabilities=McpCapabilities(
                    http="mcp-http" in self.caps, sse="mcp-sse" in self.caps
                ),
                load_session="load" in self.caps,
                auth=AgentAuthCapabilities(
                    logout=LogoutCapabilities() if "logout" in self.caps else None
                ),
                session_capabilities=SessionCapabilities(
                    resume=SessionResumeCapabilities() if "resume" in self.caps else None
                ),
            ),
        )

    async def first(self, doing: str) -> None:
        """What `--start` or `--load` asks of it before it answers."""
        what, _, value = doing.partition("=")
        if what == "sleep":
            await asyncio.sleep(float(value))
        elif what == "busy":
            end = time.monotonic() + float(value)
            while time.monotonic() < end:
                pass
        elif what == "chatter":
            command = [sys.executable, "-I", "-S", str(CHATTY), "--helper", value]
            helper = await asyncio.create_subprocess_exec(*command, start_new_session=True)
            await helper.wait()

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self.must_sign_in("start")
        session_id = uuid.uuid4().hex
        self.folders[session_id] = cwd
        self.servers[session_id] = list(kwargs.get("mcp_servers") or [])
        if self.commands:
            self.background.add(asyncio.ensure_future(self.announce(session_id)))
        return NewSessionResponse(session_id=session_id)

    async def announce(self, session_id: str) -> None:
        """The `--commands`, once the session's response has gone out."""
        assert self.conn is not None
        await asyncio.sleep(0.1)
        commands = [AvailableCommand(name=name, description=f"the agent's {name}")
                    for name in self.commands]  # fmt: skip
        await self.conn.session_update(
            session_id=session_id, update=update_available_commands(commands)
        )

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        self.must_sign_in("start")
        self.servers[session_id] = list(kwargs.get("mcp_servers") or [])
        await self.first(self.load)
        return LoadSessionResponse()  # it says yes, and replays nothing

    async def resume_session(
        self, cwd: str, session_id: str, **kwargs: Any
    ) -> ResumeSessionResponse:
        if self.resume_fails:
            raise RequestError.internal_error({"reason": "this tiny agent forgot everything"})
        return ResumeSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def say(self, session_id: str, text: str) -> None:
        assert self.conn is not None
        await self.conn.session_update(
            session_id=session_id, update=update_agent_message_text(text)
        )

    async def ask(
        self, session_id: str, title: str, options: list[PermissionOption] | None = None
    ) -> RequestPermissionResponse:
        assert self.conn is not None
        return await self.conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="call_1", title=title, kind="delete"),
            options=[
                PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ]
            if options is None
            else options,
        )

    async def run_terminal(self, session_id: str, settings: dict[str, str]) -> str:
        """`term=CMD` / `ask-term=CMD`: CMD run by `sh -c` in a client terminal."""
        assert self.conn is not None
        command = settings.get("ask-term") or settings["term"]
        if "ask-term" in settings:
            answer = await self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id="call_t",
                    title=f"Run {command}",
                    kind="execute",
                    raw_input={"command": command},
                ),
                options=[
                    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                ],
            )
            if getattr(answer.outcome, "option_id", None) != "yes":
                return "not allowed"
        try:
            terminal = await self.conn.create_terminal(
                session_id=session_id, command="/bin/sh", args=["-c", command]
            )
        except RequestError as error:
            return f"terminal failed: {error}"
        await self.conn.wait_for_terminal_exit(
            session_id=session_id, terminal_id=terminal.terminal_id
        )
        output = await self.conn.terminal_output(
            session_id=session_id, terminal_id=terminal.terminal_id
        )
        await self.conn.release_terminal(session_id=session_id, terminal_id=terminal.terminal_id)
        code = output.exit_status.exit_code if output.exit_status else None
        return f"exit {code}: {output.output.strip()}"

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        assert self.conn is not None
        self.must_sign_in("prompt")
        words = " ".join(getattr(block, "text", "") for block in prompt).split()
        if words and words[0].startswith("/"):
            await self.say(session_id, f"command: {' '.join(words)}")
            return PromptResponse(stop_reason="end_turn")
        if "key-length" in words:
            await self.say(session_id, f"key: {self.key_length} characters")
            return PromptResponse(stop_reason="end_turn")
        if "client-caps" in words:  # what the client said in `initialize` it can do
            await self.say(session_id, json.dumps(self.client_caps, sort_keys=True))
            return PromptResponse(stop_reason="end_turn")
        if "mcp-servers" in words:  # the MCP servers it was handed: name, type, env names
            await self.say(session_id, "; ".join(map(described, self.servers.get(session_id, []))))
            return PromptResponse(stop_reason="end_turn")
        if "echo" in words:  # what reached the agent, in its escaped form (ascii())
            said = ascii(" ".join(getattr(block, "text", "") for block in prompt))
            await self.say(session_id, f"echo: {said}")
            return PromptResponse(stop_reason="end_turn")
        if "ask-and-exit" in words:
            await self.conn.session_update(
                session_id=session_id,
                update=start_tool_call("call_1", "Delete everything", kind="delete"),
            )
            self.background.add(asyncio.ensure_future(self.ask(session_id, "Delete everything")))
            await asyncio.sleep(0.5)  # the question reaches the client; then the agent dies
            await self.writer.drain()
            sys.stderr.write("tiny agent: exiting while a question is open\n")
            sys.stderr.flush()
            os._exit(EXIT_CODE)
        if "hostile" in words:
            settings = dict(word.split("=", 1) for word in words if "=" in word)
            lines = hostile_lines(
                int(settings.get("seed", "0")),
                session_id,
                int(settings.get("n", "500")),
                int(settings.get("huge", "1000000")),
            )
            for hostile in lines:
                self.writer.write(hostile + b"\n")
                await self.writer.drain()
            valid = sum(b'"text": "w' in hostile for hostile in lines)
            await self.say(session_id, f"still here after {valid} valid chunks")
            return PromptResponse(stop_reason="end_turn")
        if "close-stdout" in words:  # the connection breaks; the agent lives on
            await self.say(session_id, "closing")
            await self.writer.drain()
            os.close(sys.stdout.fileno())
            await asyncio.sleep(60)
            return PromptResponse(stop_reason="end_turn")
        if any(word.startswith("raw=") for word in words):
            settings = dict(word.split("=", 1) for word in words if "=" in word)
            raw_answers = await self.send_raw(session_id, RAW_REQUESTS[settings["raw"]])
            codes = [(a.get("error") or {}).get("code") if a else None for a in raw_answers]
            await self.say(session_id, f"answers: {codes}")
            return PromptResponse(stop_reason="end_turn")
        if any(word.startswith("meta-read=") for word in words):
            settings = dict(word.split("=", 1) for word in words if "=" in word)
            path = os.path.join(self.folders.get(session_id, os.getcwd()), settings["meta-read"])
            await self.say(session_id, await self.meta_read(session_id, path))
            return PromptResponse(stop_reason="end_turn")
        if "refuse" in words:
            settings = dict(word.split("=", 1) for word in words if "=" in word)
            count = int(settings.get("n", str(len(MALFORMED_REQUESTS))))
            await self.say(session_id, await self.refuse(session_id, count))
            return PromptResponse(stop_reason="end_turn")
        if "bad" in words:
            for line in BAD_LINES:
                raw = json.dumps(line).replace("{sid}", session_id)
                self.writer.write(raw.encode() + b"\n")
            await self.writer.drain()
            await self.say(session_id, "still here")
            return PromptResponse(stop_reason="end_turn")
        if "ask-many" in words:
            settings = dict(word.split("=", 1) for word in words if "=" in word)
            count, gap = int(settings.get("n", "100")), float(settings.get("gap", "0"))

            async def ask_one(number: int) -> RequestPermissionResponse:
                assert self.conn is not None
                await asyncio.sleep(number * gap)
                return await self.conn.request_permission(
                    session_id=session_id,
                    tool_call=ToolCallUpdate(
                        tool_call_id=f"call_{number}", title=f"Delete file {number}", kind="delete"
                    ),
                    options=[
                        PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                        PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                    ],
                )

            answers = await asyncio.gather(*(ask_one(number) for number in range(count)))
            chosen = [getattr(answer.outcome, "option_id", None) for answer in answers]
            allowed = chosen.count("yes")
            await self.say(
                session_id, f"asked {count}: {allowed} allowed, {chosen.count(None)} cancelled"
            )
            return PromptResponse(stop_reason="cancelled" if None in chosen else "end_turn")
        if "ask-and-check" in words:
            outcome = (await self.ask(session_id, "Delete the notes")).outcome
            stored = stored_decisions()  # before anything else: the answer is in, the row?
            told = getattr(outcome, "option_id", "cancelled")
            await self.say(session_id, f"told: {told}; decisions stored: {stored}")
            return PromptResponse(stop_reason="end_turn")
        for word, options in AMBIGUOUS.items():
            if word in words:
                outcome = (await self.ask(session_id, "Delete the notes", options)).outcome
                await self.say(
                    session_id, f"answered: {getattr(outcome, 'option_id', 'cancelled')}"
                )
                return PromptResponse(stop_reason="end_turn")
        if "ask" in words:
            outcome = (await self.ask(session_id, ESCAPED_TITLE)).outcome
            await self.say(session_id, f"answered: {getattr(outcome, 'option_id', 'cancelled')}")
            return PromptResponse(stop_reason="end_turn")
        if "ask-and-leave" in words:
            self.background.add(asyncio.ensure_future(self.ask(session_id, "Delete the notes")))
            await asyncio.sleep(0.3)  # the question reaches the client; no answer awaited
            await self.say(session_id, "leaving")
            return PromptResponse(stop_reason="end_turn")
        settings = dict(word.split("=", 1) for word in words if "=" in word)
        if "write" in settings:
            path = os.path.join(self.folders.get(session_id, os.getcwd()), settings["write"])
            try:
                await self.conn.write_text_file(session_id=session_id, path=path, content="tiny")
                answer = "wrote"
            except RequestError as error:
                answer = f"write failed: {error}"
            await self.say(session_id, answer)
            return PromptResponse(stop_reason="end_turn")
        if "term" in settings or "ask-term" in settings:
            await self.say(session_id, await self.run_terminal(session_id, settings))
            return PromptResponse(stop_reason="end_turn")
        if "withdraw-form" in words:  # a form asked, then withdrawn with $/cancel_request
            asking = asyncio.ensure_future(self.send_raw(session_id, RAW_REQUESTS["a-form"]))
            await asyncio.sleep(float(settings.get("after", "1")))
            withdraw = {"jsonrpc": "2.0", "method": "$/cancel_request",
                        "params": {"requestId": "raw-0"}}  # fmt: skip
            self.writer.write(json.dumps(withdraw).encode() + b"\n")
            await self.writer.drain()
            (withdrawn,) = await asking
            await self.say(session_id, f"withdrawn: {(withdrawn or {}).get('result')}")
            return PromptResponse(stop_reason="end_turn")
        if "fail" in words:
            raise RequestError.internal_error({"reason": "the tiny agent fails this turn"})
        reads = [word.removeprefix("read=") for word in words if word.startswith("read=")]
        if reads:
            path = os.path.join(self.folders.get(session_id, os.getcwd()), reads[0])
            try:
                content = (await self.conn.read_text_file(session_id=session_id, path=path)).content
                answer = f"read {len(content)} characters"
            except RequestError as error:
                answer = f"read failed: {error}"
            await self.say(session_id, answer)
            return PromptResponse(stop_reason="end_turn")
        if "read-missing" in words:
            path = os.path.join(self.folders.get(session_id, os.getcwd()), "missing.txt")
            try:
                content = (await self.conn.read_text_file(session_id=session_id, path=path)).content
                answer = f"read: {content!r}"
            except RequestError as error:
                answer = f"read failed: {error} (code {error.code})"
            relaunch = os.environ.get("GEMINI_CLI_NO_RELAUNCH")
            await self.say(session_id, f"{answer}; GEMINI_CLI_NO_RELAUNCH={relaunch}")
            return PromptResponse(stop_reason="end_turn")
        await self.say(session_id, "ok")
        if "cancelled" in words:
            return PromptResponse(stop_reason="cancelled")
        if "max_tokens" in words or "refusal" in words:
            return PromptResponse(stop_reason="max_tokens" if "max_tokens" in words else "refusal")
        if "usage" in words:
            return PromptResponse(
                stop_reason="end_turn",
                usage=Usage(total_tokens=30, input_tokens=20, output_tokens=10),
                field_meta={"quota": {"token_count": {"input_tokens": 20, "output_tokens": 10}}},
            )
        return PromptResponse(stop_reason="end_turn")


AMBIGUOUS = {
    "ask-twins": [  # allow and reject under one id: whichever is meant, "x" is sent
        PermissionOption(option_id="x", name="Allow", kind="allow_once"),
        PermissionOption(option_id="x", name="Reject", kind="reject_once"),
    ],
    "ask-twins-always": [
        PermissionOption(option_id="x", name="Reject", kind="reject_once"),
        PermissionOption(option_id="x", name="Always allow", kind="allow_always"),
    ],
    "ask-none": [],
}
"""Prompt words that ask permission with options Cockpit must refuse, and those options."""


def stored_decisions() -> int:
    """How many permission decision rows Cockpit's database holds, read through a
    connection of this process's own (as another reader of the file would)."""
    path = Path(os.environ["COCKPIT_DATA_DIR"]) / "cockpit.db"
    with sqlite3.connect(path, timeout=5) as db:
        (count,) = db.execute("SELECT count(*) FROM messages WHERE kind = 'permission'").fetchone()
    return int(count)


def stored_refusals() -> int:
    """How many refused requests Cockpit's database holds: the rows that list one, and
    what the row counting the rest says."""
    path = Path(os.environ["COCKPIT_DATA_DIR"]) / "cockpit.db"
    with sqlite3.connect(path, timeout=5) as db:
        (listed, counted) = db.execute(
            "SELECT sum(text LIKE 'Refused%'), "
            "coalesce(sum(json_extract(payload, '$.refusedCount')), 0) FROM messages"
        ).fetchone()
    return int(listed or 0) + int(counted)


def route_logout() -> None:
    """Have the SDK route `logout` to the agent: its schema has the request, its router
    not (this is a test agent: it patches its own SDK)."""
    from acp.agent import connection

    build = getattr(connection, "build_agent_router")  # noqa: B009 (not exported)

    def with_logout(agent: Any, use_unstable_protocol: bool = False) -> Any:
        router = build(agent, use_unstable_protocol=use_unstable_protocol)
        router.route_request("logout", LogoutRequest, agent, "logout")
        return router

    setattr(connection, "build_agent_router", with_logout)  # noqa: B010


async def serve(options: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    agent = TinyAgent(writer, options)
    if "logout" in agent.caps:
        route_logout()
    await run_agent(
        cast(Agent, agent),
        input_stream=writer,
        output_stream=reader,
        use_unstable_protocol=True,
        observers=[agent.observe],
    )


def login() -> None:
    """The terminal login (`--login`), asking for a pasted code when told to."""
    value = os.environ.get("TINY_LOGIN", "")
    code = os.environ.get("TINY_LOGIN_CODE")
    if code is not None:
        print("Open https://login.example.com/device and paste the code it shows:", flush=True)
        value = sys.stdin.readline().strip()
        if value != code:
            print(f"That code is wrong: {value}", flush=True)
            sys.exit(1)
    Path("tiny-login").write_text(value, encoding="utf-8")
    print("logged in")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--caps", default="none")
    parser.add_argument("--resume-fails", action="store_true")
    parser.add_argument("--start", default="")
    parser.add_argument("--load", default="")
    parser.add_argument("--commands", default="")
    parser.add_argument("--auth", default="")
    parser.add_argument("--auth-at", default="start")
    parser.add_argument("--login", action="store_true")
    options = parser.parse_known_args()[0]
    if options.login:
        login()
        return
    asyncio.run(serve(options))  # other arguments (`--acp`...) are ignored


if __name__ == "__main__":
    main()
