"""The shape every agent message must have before Cockpit uses it (`cockpit.engine.wire`)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from cockpit.engine.refusals import refusal
from cockpit.engine.wire import (
    BadUpdate,
    checked_update,
    envelope_problem,
    may_nest_deeper,
    nested_deeper,
)
from tests.store.test_captures import ALL_CAPTURES, frames_of

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2), children, max_size=3)
    ),
    max_leaves=40,
)


def depth(value: Any) -> int:
    """How deep arrays and objects nest in `value`, the recursive way (a reference)."""
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


@given(JSON, st.integers(min_value=0, max_value=8))
def test_nesting_is_measured_as_the_recursive_reference_does(value: Any, limit: int) -> None:
    assert nested_deeper(value, limit) == (depth(value) > limit)
    if depth(value) > limit:  # the cheap bracket count never lets a deep line by
        assert may_nest_deeper(json.dumps(value).encode(), limit)


def test_a_line_with_few_brackets_is_not_walked() -> None:
    assert not may_nest_deeper(b'{"a": [1, {"b": 2}]}', 3)
    assert may_nest_deeper(b'{"a": [1, {"b": [2]}]}', 3)


def test_envelopes() -> None:
    assert envelope_problem({"jsonrpc": "2.0", "id": 1, "result": {}}) is None
    assert envelope_problem({"jsonrpc": "2.0", "id": "a", "method": "m"}) is None
    assert envelope_problem({"jsonrpc": "2.0", "method": "m"}) is None
    assert envelope_problem({"jsonrpc": "2.0", "id": None, "error": {"code": 1}}) is None
    for bad_id in ({"a": 1}, [1], True, 1.5):
        assert envelope_problem({"id": bad_id, "result": None}) is not None
    assert envelope_problem({"method": 5}) is not None
    assert envelope_problem({"result": 1}) is not None
    assert envelope_problem({"id": 1, "error": "x"}) is not None


def problem(update: dict[str, Any]) -> str | None:
    try:
        checked_update(update)
    except BadUpdate as error:
        return str(error)
    return None


def test_updates_are_checked_against_the_sdk_schema_for_session_metadata() -> None:
    assert problem({"sessionUpdate": ["agent_message_chunk"]}) == "its kind is not a string"
    assert problem({"sessionUpdate": "current_mode_update", "currentModeId": "ask"}) is None
    mode = problem({"sessionUpdate": "current_mode_update", "currentModeId": {"x": 1}})
    assert mode is not None and mode.startswith("currentModeId")
    assert problem({"sessionUpdate": "available_commands_update", "availableCommands": "x"})
    chunk = {"sessionUpdate": "agent_message_chunk", "content": 5}
    assert checked_update(chunk) is chunk  # not metadata: as it came, at no cost
    assert problem({"sessionUpdate": "something_new"}) is None  # kept as received


def test_metadata_comes_back_as_the_schema_reads_it_with_unnamed_fields_kept() -> None:
    """A command whose input is a string crashed the completion list as soon as the user
    typed `/`: the SDK's schema salvages such an input to none."""
    commands = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "web", "description": "d", "input": "a string"},
            {"name": "plan", "description": "p", "input": {"hint": "what to plan"}},
        ],
        "vendorField": 1,
    }
    assert checked_update(commands) == {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "web", "description": "d"},
            {"name": "plan", "description": "p", "input": {"hint": "what to plan"}},
        ],
        "vendorField": 1,
    }


def without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def test_every_message_real_agents_sent_passes_as_it_was() -> None:
    """The checks refuse nothing Claude Code, Gemini CLI, Codex or OpenCode sent, and
    leave their metadata as they sent it (but for fields sent as null: Claude Code's
    commands say `"input": null`, which reads as no input either way)."""
    checked = 0
    for capture in ALL_CAPTURES:
        for record in frames_of(capture):
            frame = record["frame"]
            if record["dir"] != "agent->client":
                continue
            assert envelope_problem(frame) is None, frame
            assert not nested_deeper(frame), frame
            if "id" in frame and "method" in frame:  # a request: Cockpit serves it as sent
                assert refusal(frame) is None, capture
                checked += 1
            update = (frame.get("params") or {}).get("update")
            if frame.get("method") == "session/update" and isinstance(update, dict):
                assert without_nulls(checked_update(update)) == without_nulls(update), capture

                checked += 1
    assert checked > 100


def test_a_permission_request_off_the_schema_says_where() -> None:
    request = {"sessionId": "s", "toolCall": 7, "options": "x"}
    refused = refusal({"id": 1, "method": "session/request_permission", "params": request})
    assert refused is not None
    problem = refused.reason.removeprefix("not a valid ACP request: ")
    assert problem.split(":")[0] in ("toolCall", "options")


def test_tool_calls_follow_the_schema_or_are_refused() -> None:
    start = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x"}
    assert problem({**start, "content": 7}) is not None
    assert problem({**start, "locations": "here"}) is not None
    assert checked_update({**start, "status": 5, "rawInput": {"a": [1]}}) == {
        **start,
        "rawInput": {"a": [1]},
    }  # a status that is a number is no status, as the SDK reads it


def test_plans_follow_the_schema_or_are_refused() -> None:
    """The long hostile run sent a plan whose entries were numbers: the store's fold
    raised on each, and the update was lost without a notice. Entries that are no entry
    are dropped, as the SDK salvages them; entries that are no list refuse the update."""
    entry = {"content": "a", "priority": "high", "status": "pending"}
    assert checked_update({"sessionUpdate": "plan", "entries": [1, entry, 2]}) == {
        "sessionUpdate": "plan",
        "entries": [entry],
    }
    assert problem({"sessionUpdate": "plan", "entries": "all"}) == (
        "entries: Input should be a valid list"
    )
