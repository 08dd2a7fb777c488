"""The wire projection: the Messages API request of a model call, as a pure function of the
chunk log (`store.entries`). No I/O.

`compose_request` is the ONE function the Claude agent sends through and `cockpit inspect`
prints through, so what inspect shows is what was sent. The grouping rules:

- consecutive user prompts become one user message (one text block each);
- each step's thinking, text and tool calls become one assistant message, in seq order;
- that step's tool results become the next user message; a prompt that arrived mid-turn
  was logged after them, so it follows as its own user message;
- errors and system notes are display-only; a turn the model refused is left out whole.

Entries never change once written, so every earlier step serialises to the same bytes in
every later request and the prompt-cache prefix grows instead of breaking. Cache
breakpoints sit on the system prompt (which caches the tools before it), on the newest
message, and on the message the previous request ended with (so a step wider than the
API's lookback window still reads the previous prefix).

`thinking_config` is the request's thinking parameter, a pure function of the model, the
thinking setting and max_tokens: the newest models take adaptive thinking, older ones a
token budget.

`naive_request` is the builder this design replaced (one assistant message and one
result message per turn, regrouped on every request); it exists for the benchmark.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from store.entries import REFUSAL, Entry

EPHEMERAL: Final[Mapping[str, str]] = {"type": "ephemeral"}
MISSING_RESULT: Final = (
    "No result was recorded for this tool call: the agent stopped before the tool finished."
)
EMPTY_RESULT: Final = "(no output)"

Message = dict[str, Any]
Builder = Callable[[Sequence[Entry]], list[Message]]

MIN_THINKING_BUDGET: Final = 1024
"""The smallest budget_tokens the API takes for `{"type": "enabled"}` thinking."""
ADAPTIVE_SINCE: Final = (4, 6)
"""The first model version that takes `{"type": "adaptive"}` thinking (Opus and Sonnet 4.6);
Opus 4.7 and later take nothing else."""
_VERSION_AFTER = re.compile(r"(?:opus|sonnet|haiku)-(\d{1,2})(?:[-.](\d{1,2}))?(?!\d)")
"""claude-sonnet-4-6, claude-haiku-4-5-20251001, claude-opus-4-20250514 (a date is no minor)."""
_VERSION_BEFORE = re.compile(r"claude-(\d{1,2})(?:[-.](\d{1,2}))?-(?:opus|sonnet|haiku)")
"""The older naming: claude-3-7-sonnet-20250219, claude-3-haiku-20240307."""


@dataclass(frozen=True)
class RequestSpec:
    """Everything a request holds besides the log: the model, limits, system prompt, tools
    and thinking configuration (None leaves thinking out of the request)."""

    model: str
    max_tokens: int
    system: str
    tools: tuple[Mapping[str, Any], ...] = field(default=())
    thinking: Mapping[str, Any] | None = None


def model_version(model: str) -> tuple[int, int] | None:
    """The (major, minor) version in a Claude model id, also inside a Bedrock or Vertex id;
    None when the id does not say (a gateway alias, a model this code does not know)."""
    found = _VERSION_AFTER.search(model) or _VERSION_BEFORE.search(model)
    if found is None:
        return None
    return int(found.group(1)), int(found.group(2) or 0)


def takes_adaptive_thinking(model: str) -> bool:
    """True for the models that take `{"type": "adaptive"}` thinking: Claude Opus 4.6, Sonnet
    4.6 and every later model. An id without a version is taken to be a newer model."""
    version = model_version(model)
    return version is None or version >= ADAPTIVE_SINCE


def thinking_config(model: str, setting: str, max_tokens: int) -> dict[str, Any] | None:
    """The request's `thinking` parameter for a model, a thinking setting ("off" or on) and
    the request's max_tokens; None leaves thinking out. A model older than 4.6 takes a token
    budget, which must be at least MIN_THINKING_BUDGET and below max_tokens: three quarters
    of max_tokens, leaving the rest for the answer. When max_tokens leaves no room for the
    smallest budget, thinking stays off (the API would refuse the request)."""
    if setting == "off":
        return None
    if takes_adaptive_thinking(model):
        return {"type": "adaptive"}
    budget = min(max_tokens - 1, max(MIN_THINKING_BUDGET, max_tokens * 3 // 4))
    if budget < MIN_THINKING_BUDGET:
        return None
    return {"type": "enabled", "budget_tokens": budget}


def refused_turns(entries: Iterable[Entry]) -> frozenset[str]:
    """Turns that ended in a refusal: ACP says they leave the context of later prompts."""
    return frozenset(
        entry.turn
        for entry in entries
        if entry.type == "system" and entry.data.get("kind") == REFUSAL
    )


def wire_block(entry: Entry) -> dict[str, Any] | None:
    """The content block an entry becomes, or None when it sends nothing (empty text, an
    unsigned thinking block, a display-only entry)."""
    data = entry.data
    if entry.type == "text":
        text = data.get("text")
        if not isinstance(text, str) or not text.strip():
            return None
        return {"type": "text", "text": text}
    if entry.type == "thinking":
        if "redacted" in data:
            return {"type": "redacted_thinking", "data": data["redacted"]}
        signature = data.get("signature")
        if not isinstance(signature, str) or not signature:
            return None  # the API refuses a thinking block it did not sign
        return {"type": "thinking", "thinking": data.get("thinking") or "", "signature": signature}
    if entry.type == "tool_call":
        return {
            "type": "tool_use",
            "id": data["id"],
            "name": data["name"],
            "input": data.get("input") or {},
        }
    if entry.type == "tool_result":
        return result_block(
            str(data["id"]), str(data.get("content") or ""), bool(data.get("isError"))
        )
    return None


def result_block(call_id: str, content: str, is_error: bool) -> dict[str, Any]:
    """A tool_result block (an empty result says so: the API refuses empty content)."""
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": content or EMPTY_RESULT,
    }
    if is_error:
        block["is_error"] = True
    return block


@dataclass
class _Group:
    """Consecutive entries that become one message."""

    key: tuple[str, ...]
    blocks: list[dict[str, Any]]

    @property
    def kind(self) -> str:
        return self.key[0]


def _group_key(entry: Entry) -> tuple[str, ...] | None:
    if entry.role == "user":
        return ("user",)
    if entry.role == "assistant":
        return ("assistant", entry.turn, str(entry.step))
    if entry.role == "tool":
        return ("results", entry.turn, str(entry.step))
    return None


def _groups(entries: Sequence[Entry]) -> list[_Group]:
    refused = refused_turns(entries)
    groups: list[_Group] = []
    for entry in entries:
        if entry.is_display_only or entry.turn in refused:
            continue
        key = _group_key(entry)
        block = wire_block(entry)
        if key is None or block is None:
            continue
        if groups and groups[-1].key == key:
            groups[-1].blocks.append(block)
        else:
            groups.append(_Group(key, [block]))
    return groups


def _missing(calls: Sequence[str]) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [result_block(call_id, MISSING_RESULT, True) for call_id in calls],
    }


def wire_messages(entries: Sequence[Entry]) -> list[Message]:
    """The request's messages, without cache breakpoints. A tool call left without a result
    (the agent died mid-step) gets an error result, so the request stays valid; an orphan
    result is dropped."""
    messages: list[Message] = []
    open_calls: list[str] = []
    for group in _groups(entries):
        if group.kind == "results":
            if not open_calls:
                continue
            kept = [block for block in group.blocks if block["tool_use_id"] in open_calls]
            answered = {block["tool_use_id"] for block in kept}
            kept += [
                result_block(call_id, MISSING_RESULT, True)
                for call_id in open_calls
                if call_id not in answered
            ]
            messages.append({"role": "user", "content": kept})
            open_calls = []
            continue
        if open_calls:
            messages.append(_missing(open_calls))
            open_calls = []
        if group.kind == "assistant":
            messages.append({"role": "assistant", "content": group.blocks})
            open_calls = [b["id"] for b in group.blocks if b["type"] == "tool_use"]
        else:
            messages.append({"role": "user", "content": group.blocks})
    if open_calls:
        messages.append(_missing(open_calls))
    return messages


def naive_messages(entries: Sequence[Entry]) -> list[Message]:
    """The replaced builder: per turn, its prompts, then ONE assistant message holding every
    step's blocks, then ONE message of every result. Each new step inserts blocks in the
    middle of what the previous request sent, so the cached prefix breaks."""
    refused = refused_turns(entries)
    turns: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for entry in entries:
        if entry.is_display_only or entry.turn in refused:
            continue
        block = wire_block(entry)
        if block is None:
            continue
        parts = turns.setdefault(entry.turn, {"user": [], "assistant": [], "tool": []})
        parts[entry.role if entry.role in parts else "user"].append(block)
    messages: list[Message] = []
    for parts in turns.values():
        for role, blocks in (("user", parts["user"]), ("assistant", parts["assistant"])):
            if blocks:
                messages.append({"role": role, "content": blocks})
        if parts["tool"]:
            messages.append({"role": "user", "content": parts["tool"]})
    return messages


def _marked(message: Message) -> Message:
    content = list(message["content"])
    content[-1] = {**content[-1], "cache_control": dict(EPHEMERAL)}
    return {**message, "content": content}


def place_breakpoints(messages: Sequence[Message]) -> list[Message]:
    """A copy of `messages` with cache breakpoints on the newest message and on the message
    before the last assistant message (where the previous request ended). Only user
    messages are marked; the input is left untouched."""
    marked = list(messages)
    targets: set[int] = set()
    if marked and marked[-1]["role"] == "user" and marked[-1]["content"]:
        targets.add(len(marked) - 1)
    last_assistant = next(
        (i for i in range(len(marked) - 1, -1, -1) if marked[i]["role"] == "assistant"), None
    )
    if last_assistant is not None and last_assistant > 0:
        previous = marked[last_assistant - 1]
        if previous["role"] == "user" and previous["content"]:
            targets.add(last_assistant - 1)
    for index in targets:
        marked[index] = _marked(marked[index])
    return marked


def _json_copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def compose_request(
    entries: Sequence[Entry], spec: RequestSpec, *, builder: Builder = wire_messages
) -> dict[str, Any]:
    """The complete body of the streaming Messages API call for a log ending at `entries`."""
    request: dict[str, Any] = {
        "model": spec.model,
        "max_tokens": spec.max_tokens,
        "system": [{"type": "text", "text": spec.system, "cache_control": dict(EPHEMERAL)}],
    }
    if spec.tools:
        request["tools"] = [_json_copy(tool) for tool in spec.tools]
    request["messages"] = place_breakpoints(builder(entries))
    if spec.thinking is not None:
        request["thinking"] = _json_copy(spec.thinking)
    request["stream"] = True
    return request


def naive_request(entries: Sequence[Entry], spec: RequestSpec) -> dict[str, Any]:
    """The same request built the replaced way (for the cache benchmark)."""
    return compose_request(entries, spec, builder=naive_messages)


def breakpoint_paths(request: Mapping[str, Any]) -> list[str]:
    """Where a request's cache breakpoints sit, e.g. `system[0]`, `messages[4].content[1]`."""
    paths: list[str] = []
    for name in ("tools", "system"):
        for index, block in enumerate(request.get(name) or ()):
            if isinstance(block, Mapping) and "cache_control" in block:
                paths.append(f"{name}[{index}]")
    for number, message in enumerate(request.get("messages") or ()):
        content = message.get("content")
        if isinstance(content, list):
            for index, block in enumerate(content):
                if isinstance(block, Mapping) and "cache_control" in block:
                    paths.append(f"messages[{number}].content[{index}]")
    return paths


def without_breakpoints(value: Any) -> Any:
    """A copy of a request (or any part of one) with every `cache_control` removed: the
    content a prompt cache compares."""
    if isinstance(value, Mapping):
        return {k: without_breakpoints(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_breakpoints(item) for item in value]
    return value
