"""What an agent's message must look like before anything in Cockpit uses it.

An agent is untrusted: a line nested a thousand levels deep overflowed the decoder's stack,
an object as a response's `id` could not be looked up, a list as an update's kind could not
be compared, and a mode id that was an object could not be stored. Each of those killed
the loop that reads the agent or the task that stores its updates, and the turn never
ended. These checks are pure and cheap; what fails them is dropped with a notice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from acp.schema import (
    AgentPlanUpdate,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionInfoUpdate,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
)
from pydantic import BaseModel, ValidationError

MAX_DEPTH: Final = 64
"""The deepest nesting of arrays and objects taken from an agent. ACP's own messages are a
handful of levels deep; a tool's raw input may add some. Deeper ones are dropped before
any recursive code (the decoder, the store's cleaning, pydantic) sees them."""

SCHEMAS: Final[Mapping[str, type[BaseModel]]] = {
    "available_commands_update": AvailableCommandsUpdate,
    "current_mode_update": CurrentModeUpdate,
    "config_option_update": ConfigOptionUpdate,
    "session_info_update": SessionInfoUpdate,
    "usage_update": UsageUpdate,
    "tool_call": ToolCallStart,
    "tool_call_update": ToolCallProgress,
    "plan": AgentPlanUpdate,
}
"""The SDK's schema for each update whose fields Cockpit reads beyond its text: session
metadata (the command list completion reads, the mode and options the status line
shows), tool calls (a card iterates their content and locations) and plans (their
entries are read one by one). Text chunks, the
stream's bulk, are checked by the store's fold instead."""

_NAMED: Final[Mapping[str, frozenset[str]]] = {
    kind: frozenset(field.alias or name for name, field in schema.model_fields.items())
    for kind, schema in SCHEMAS.items()
}
"""The wire names of the fields each schema reads (the others are kept as sent)."""


def may_nest_deeper(line: bytes, limit: int = MAX_DEPTH) -> bool:
    """False when `line` cannot hold more than `limit` nested arrays and objects (it has
    no more brackets than that), which settles almost every line without decoding it."""
    return line.count(b"[") + line.count(b"{") > limit


def nested_deeper(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when arrays and objects in `value` nest more than `limit` deep (walked without
    recursion, so a deep value cannot overflow the stack here either)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def envelope_problem(message: Mapping[str, Any]) -> str | None:
    """What makes a decoded JSON-RPC message unusable, or None: an id that is not a
    string or an integer, a method that is not a string, a response with no id, an error
    that is not an object."""
    if "id" in message:
        request_id = message["id"]
        if request_id is not None and (
            isinstance(request_id, bool) or not isinstance(request_id, str | int)
        ):
            return "a message whose id is not a string or an integer"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "a message whose method is not a string"
        return None
    if "id" not in message:
        return "a message that is no request, notification or response"
    if "error" in message and not isinstance(message["error"], dict):
        return "an error response whose error is not an object"
    return None


class BadUpdate(ValueError):
    """A `session/update` Cockpit cannot use; the message says what is wrong with it."""


def checked_update(update: Mapping[str, Any]) -> Mapping[str, Any]:
    """A `session/update` fit to use, or BadUpdate: its kind must be a string, and session
    metadata and tool calls must follow the SDK's schema for their kind. They come back as
    the schema reads them (a command whose `input` is a string loses its input, as the SDK
    salvages it, instead of reaching the completion list that read it as an object; a
    tool call's status that is a number is dropped), with the fields the schema does not
    name kept as sent. Everything else comes back as it is: the hot path of text chunks
    costs one type check."""
    kind = update.get("sessionUpdate")
    if not isinstance(kind, str):
        raise BadUpdate("its kind is not a string")
    schema = SCHEMAS.get(kind)
    if schema is None:
        return update
    try:
        model = schema.model_validate(update)
    except ValidationError as error:
        raise BadUpdate(first_problem(error)) from None
    kept = {name: value for name, value in update.items() if name not in _NAMED[kind]}
    return {**kept, **model.model_dump(mode="json", by_alias=True, exclude_none=True)}


def first_problem(error: ValidationError) -> str:
    """The first problem pydantic found, and where: `options: Input should be a valid
    list`."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])
