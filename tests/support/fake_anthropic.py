"""A fake Anthropic Messages API on 127.0.0.1, for the Claude agent's tests and benchmark.

It answers `POST /v1/messages` with scripted server-sent events (text, thinking with a
signature, redacted thinking, tool_use streamed as input_json_delta), or with a scripted
HTTP error or a mid-stream error event. It records every request body exactly as it
arrived, and computes usage the way a prompt cache would: the request is cut into blocks
(tools, then system, then each message's content), each block position is identified
by a hash of everything before it (cache_control markers excluded, the model included),
every breakpoint writes its prefix to the cache, and the longest prefix already written
that ends within LOOKBACK blocks before one of the request's breakpoints is read.

It refuses, with a 400 invalid_request_error as the API does, the thinking parameters the
API refuses (`invalid_request`): adaptive thinking on a model older than Opus/Sonnet 4.6, a
budget below 1024 or not below max_tokens, and a tool-loop step whose last assistant
message does not open with a thinking block while thinking is on. A refused request is
recorded (with `rejected` saying why) and consumes no scripted reply.

Runs in a thread, so both async tests and agent subprocesses can talk to it.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LOOKBACK = 20
"""Blocks before a breakpoint the cache looks back for an earlier entry (as the API does)."""
ADAPTIVE_MODELS = ("claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-7")
"""The models this fake knows to take `{"type": "adaptive"}` thinking; others refuse it."""
ADAPTIVE_ONLY = ("claude-opus-4-7",)
"""Models that refuse `{"type": "enabled"}` thinking."""
MIN_BUDGET = 1024


@dataclass
class Block:
    """One scripted content block of a reply."""

    type: str
    text: str = ""
    signature: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    data: str = ""


def text(value: str) -> Block:
    return Block("text", text=value)


def thinking(value: str, signature: str = "sig-fake") -> Block:
    return Block("thinking", text=value, signature=signature)


def redacted(data: str) -> Block:
    return Block("redacted_thinking", data=data)


def tool(name: str, arguments: dict[str, Any], call_id: str | None = None) -> Block:
    return Block("tool_use", name=name, input=arguments, id=call_id)


@dataclass
class Reply:
    """What the server answers to one request."""

    blocks: list[Block] = field(default_factory=list)
    stop_reason: str | None = None
    """Defaults to tool_use when a block is a tool call, else end_turn."""
    delay: float = 0.0
    """Seconds between events (a slow stream a test can cancel)."""
    fail_after: int | None = None
    """Send an SSE error event after this many events."""
    status: int = 200
    """An HTTP error status instead of a stream."""
    error_type: str = "api_error"
    error_message: str = "Internal server error"
    gate: threading.Event | None = None
    """When given, the stream waits for it before its first event."""


def reply(*blocks: Block, stop: str | None = None, delay: float = 0.0) -> Reply:
    return Reply(list(blocks), stop_reason=stop, delay=delay)


def http_error(status: int, error_type: str, message: str) -> Reply:
    return Reply(status=status, error_type=error_type, error_message=message)


@dataclass
class Recorded:
    """One request as the server saw it, and what it answered."""

    raw: bytes
    body: dict[str, Any]
    headers: dict[str, str]
    usage: dict[str, int]
    message_id: str
    aborted: bool = False
    """True when the client closed the stream before the server finished it."""
    rejected: str | None = None
    """Why the server refused the request (a 400 invalid_request_error), or None."""
    finished: threading.Event = field(default_factory=threading.Event)


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip(item) for item in value]
    return value


def units(body: Mapping[str, Any]) -> list[tuple[Any, bool]]:
    """The request cut into cacheable blocks, in prefix order, each with whether it carries
    a breakpoint."""
    found: list[tuple[Any, bool]] = []
    for item in body.get("tools") or ():
        found.append((["tool", _strip(item)], "cache_control" in item))
    system = body.get("system")
    if isinstance(system, str):
        found.append((["system", {"type": "text", "text": system}], False))
    else:
        for block in system or ():
            found.append((["system", _strip(block)], "cache_control" in block))
    for message in body.get("messages") or ():
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for index, block in enumerate(blocks):
            unit = ["message", message.get("role"), index == 0, _strip(block)]
            found.append((unit, isinstance(block, dict) and "cache_control" in block))
    return found


def invalid_request(body: Mapping[str, Any]) -> str | None:
    """Why the real API would refuse this request's thinking with a 400
    invalid_request_error, or None when it would take it."""
    config = body.get("thinking")
    if not isinstance(config, Mapping) or config.get("type") == "disabled":
        return None
    model = str(body.get("model"))
    kind = config.get("type")
    if kind == "adaptive":
        if not model.startswith(ADAPTIVE_MODELS):
            return f"thinking.type: adaptive thinking is not supported on the model {model}."
    elif kind == "enabled":
        if model.startswith(ADAPTIVE_ONLY):
            return f"thinking.type.enabled is not supported for {model}; use adaptive."
        budget = config.get("budget_tokens")
        if not isinstance(budget, int) or budget < MIN_BUDGET:
            return f"thinking.enabled.budget_tokens: Input should be >= {MIN_BUDGET}."
        if budget >= int(body.get("max_tokens") or 0):
            return "`max_tokens` must be greater than `thinking.budget_tokens`."
    else:
        return f"thinking.type: unknown type {kind!r}."
    messages = list(body.get("messages") or ())
    last = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"),
        None,
    )
    if last is None:
        return None
    in_tool_loop = any(
        isinstance(block, Mapping) and block.get("type") == "tool_result"
        for message in messages[last + 1 :]
        if isinstance(message.get("content"), list)
        for block in message["content"]
    )
    content = messages[last].get("content")
    first = content[0].get("type") if isinstance(content, list) and content else "text"
    if in_tool_loop and first not in ("thinking", "redacted_thinking"):
        return (
            f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
            f"found `{first}`. When `thinking` is enabled, a final `assistant` message must "
            "start with a thinking block (preceeding the lastmost set of `tool_use` and "
            "`tool_result` blocks)."
        )
    return None


def tokens(unit: Any) -> int:
    """A deterministic stand-in for a tokenizer: about four characters a token."""
    return max(1, (len(json.dumps(unit, separators=(",", ":"))) + 3) // 4)


class PromptCache:
    """The cache model (see the module docstring)."""

    def __init__(self, lookback: int = LOOKBACK) -> None:
        self.lookback = lookback
        self.written: set[str] = set()

    def usage(self, body: Mapping[str, Any]) -> dict[str, int]:
        cut = units(body)
        digest = hashlib.sha256(str(body.get("model")).encode())
        hashes = [digest.hexdigest()]
        sizes = [0]
        for unit, _ in cut:
            digest = digest.copy()
            digest.update(json.dumps(unit, separators=(",", ":")).encode("utf-8", "surrogatepass"))
            hashes.append(digest.hexdigest())
            sizes.append(sizes[-1] + tokens(unit))
        breakpoints = [index + 1 for index, (_, marked) in enumerate(cut) if marked]
        read = 0
        for point in breakpoints:
            for position in range(point, max(0, point - self.lookback) - 1, -1):
                if position > 0 and hashes[position] in self.written:
                    read = max(read, position)
                    break
        last = max(breakpoints, default=0)
        write = sizes[last] - sizes[read] if last > read else 0
        for point in breakpoints:
            self.written.add(hashes[point])
        return {
            "input_tokens": sizes[-1] - sizes[max(last, read)],
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": sizes[read],
        }


def _pieces(value: str, size: int) -> Iterator[str]:
    for start in range(0, len(value), size):
        yield value[start : start + size]


class _Aborted(Exception):
    """The client went away mid-stream."""


class FakeAnthropic:
    """The fake server. Use as a context manager; `url` is its ANTHROPIC_BASE_URL."""

    def __init__(
        self,
        *replies: Reply,
        default: Callable[[dict[str, Any]], Reply] | None = None,
        lookback: int = LOOKBACK,
        piece: int = 5,
    ) -> None:
        self.queue: list[Reply] = list(replies)
        self.default = default or (lambda body: reply(text("ok")))
        self.cache = PromptCache(lookback)
        self.piece = piece
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._gates: list[threading.Event] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        for gate in self._gates:
            gate.set()
        self._server.shutdown()
        self._server.server_close()

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self.queue.extend(replies)

    def bodies(self) -> list[dict[str, Any]]:
        return [recorded.body for recorded in self.requests]

    def wait_for(self, condition: Callable[[], bool], timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError("the fake Anthropic server waited in vain")
            time.sleep(0.01)

    # -- serving -------------------------------------------------------------------------------

    def _next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}_fake_{self._ids:04d}"

    def _take(self, raw: bytes, headers: dict[str, str]) -> tuple[Recorded, Reply]:
        body = json.loads(raw)
        rejected = invalid_request(body)
        with self._lock:
            if rejected is not None:
                recorded = Recorded(raw, body, headers, {}, self._next_id("msg"), rejected=rejected)
                self.requests.append(recorded)
                return recorded, http_error(400, "invalid_request_error", rejected)
            scripted = self.queue.pop(0) if self.queue else self.default(body)
            for block in scripted.blocks:
                if block.type == "tool_use" and block.id is None:
                    block.id = self._next_id("toolu")
            if scripted.gate is not None:
                self._gates.append(scripted.gate)
            usage = self.cache.usage(body) if scripted.status == 200 else {}
            recorded = Recorded(raw, body, headers, usage, self._next_id("msg"))
            self.requests.append(recorded)
        return recorded, scripted

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                if self.path.split("?")[0] != "/v1/messages":
                    self.send_error(404)
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                recorded, scripted = fake._take(raw, headers)
                try:
                    if scripted.status != 200:
                        self._error(scripted)
                    else:
                        self._stream(recorded, scripted)
                except (_Aborted, BrokenPipeError, ConnectionResetError):
                    recorded.aborted = True
                finally:
                    recorded.finished.set()

            def _error(self, scripted: Reply) -> None:
                payload = json.dumps(
                    {
                        "type": "error",
                        "error": {"type": scripted.error_type, "message": scripted.error_message},
                    }
                ).encode()
                self.send_response(scripted.status)
                self.send_header("content-type", "application/json")
                self.send_header("x-should-retry", "false")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _event(self, name: str, data: dict[str, Any], delay: float) -> None:
                if delay:
                    time.sleep(delay)
                try:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                except OSError as error:
                    raise _Aborted from error

            def _stream(self, recorded: Recorded, scripted: Reply) -> None:
                if scripted.gate is not None:
                    scripted.gate.wait(30)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                events = list(fake._events(recorded, scripted))
                for number, (name, data) in enumerate(events):
                    if scripted.fail_after is not None and number == scripted.fail_after:
                        error = {"type": scripted.error_type, "message": scripted.error_message}
                        self._event("error", {"type": "error", "error": error}, 0)
                        return
                    self._event(name, data, scripted.delay)

        return Handler

    def _events(self, recorded: Recorded, scripted: Reply) -> Iterator[tuple[str, dict[str, Any]]]:
        body = recorded.body
        has_tool = any(block.type == "tool_use" for block in scripted.blocks)
        stop = scripted.stop_reason or ("tool_use" if has_tool else "end_turn")
        yield (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": recorded.message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**recorded.usage, "output_tokens": 1},
                },
            },
        )
        output = 0
        for index, block in enumerate(scripted.blocks):
            yield from self._block_events(index, block)
            output += tokens([block.text, block.input, block.signature, block.data])
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": output},
            },
        )
        yield "message_stop", {"type": "message_stop"}

    def _block_events(self, index: int, block: Block) -> Iterator[tuple[str, dict[str, Any]]]:
        def delta(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            return "content_block_delta", {
                "type": "content_block_delta",
                "index": index,
                "delta": payload,
            }

        start: dict[str, Any]
        if block.type == "text":
            start = {"type": "text", "text": ""}
        elif block.type == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
        elif block.type == "redacted_thinking":
            start = {"type": "redacted_thinking", "data": block.data}
        else:
            start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        if block.type == "text":
            for part in _pieces(block.text, self.piece):
                yield delta({"type": "text_delta", "text": part})
        elif block.type == "thinking":
            for part in _pieces(block.text, self.piece):
                yield delta({"type": "thinking_delta", "thinking": part})
            yield delta({"type": "signature_delta", "signature": block.signature})
        elif block.type == "tool_use":
            for part in _pieces(json.dumps(block.input), self.piece + 2):
                yield delta({"type": "input_json_delta", "partial_json": part})
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
