"""The plan tool over real MCP stdio: `python -m cockpit.plan_server` started by the mcp
SDK's client, talking to a stand-in for the engine's plan socket. Every failure reaches
the model as a tool result marked as an error, with a sentence it can act on."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from cockpit.plan_protocol import MOST_ITEMS, MOST_LINE_BYTES, answer_line, plan_to_wire, read_items
from tests.support.checkout import tree_first
from tests.support.plan_socket import HANG, plan_socket

THREE = [
    {"content": "Read the code", "status": "in_progress", "priority": "high"},
    {"content": "Write the fix", "status": "pending"},
    {"content": "Run the tests", "status": "pending"},
]


def plan_server(env: Mapping[str, str]) -> StdioServerParameters:
    """The plan server as an agent starts it, waiting at most a second for an answer."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "cockpit.plan_server"],
        env=tree_first({**env, "COCKPIT_PLAN_TIMEOUT": "1"}),
    )


def text_of(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


async def call(env: Mapping[str, str], tool: str, arguments: dict[str, Any]) -> CallToolResult:
    [result] = await calls(env, [(tool, arguments)])
    return result


async def calls(
    env: Mapping[str, str], asked: list[tuple[str, dict[str, Any]]]
) -> list[CallToolResult]:
    """Each call of `asked` in turn, through one plan server."""
    async with Client(plan_server(env)) as client:
        return [await client.call_tool(tool, arguments) for tool, arguments in asked]


async def test_it_offers_two_tools_that_ask_for_the_whole_list() -> None:
    async with Client(plan_server({})) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"update_plan", "read_plan"}
    update = tools["update_plan"]
    assert "WHOLE list" in (update.description or "")
    assert update.input_schema["required"] == ["items"]
    item = update.input_schema["properties"]["items"]["items"]
    assert item["properties"]["status"]["enum"] == [
        "pending",
        "in_progress",
        "completed",
        "cancelled",
    ]
    assert "start or resume" in (tools["read_plan"].description or "")


async def test_a_saved_plan_answers_with_cockpits_words_and_the_call_as_sent() -> None:
    async with plan_socket() as socket:
        env = socket.environment(session="session-7", token="tok-7")
        result = await call(env, "update_plan", {"items": THREE, "explanation": "First pass."})
    assert not result.is_error
    assert text_of(result) == "Saved revision 1: 0 of 3 done; in progress: Read the code."
    [asked] = socket.calls
    assert (asked["token"], asked["session"], asked["method"]) == (
        "tok-7",
        "session-7",
        "update_plan",
    )
    assert asked["params"] == {"items": THREE, "explanation": "First pass."}


async def test_read_plan_gives_the_plan_in_words_whoever_wrote_it() -> None:
    plan = plan_to_wire(4, "user", read_items(THREE), None)  # type: ignore[arg-type]
    async with plan_socket() as socket:
        socket.answers.append(answer_line(True, "ok", plan))
        result = await call(socket.environment(), "read_plan", {})
    assert not result.is_error
    assert text_of(result).splitlines() == [
        "Plan revision 4, written by the user: 0 of 3 done; in progress: Read the code.",
        "1. [~] Read the code",
        "2. [ ] Write the fix",
        "3. [ ] Run the tests",
    ]
    assert socket.methods() == ["read_plan"]


async def test_read_plan_with_no_plan_says_how_to_write_one() -> None:
    async with plan_socket() as socket:
        result = await call(socket.environment(), "read_plan", {})
    assert not result.is_error
    assert "no plan yet" in text_of(result)


async def test_a_plan_past_the_bounds_is_refused_here_and_never_sent() -> None:
    too_many = [{"content": f"step {n}", "status": "pending"} for n in range(MOST_ITEMS + 1)]
    async with plan_socket() as socket:
        many, long, bad, wordy, none = await calls(
            socket.environment(),
            [
                ("update_plan", {"items": too_many}),
                ("update_plan", {"items": [{"content": "x" * 501, "status": "pending"}]}),
                ("update_plan", {"items": [{"content": "a", "status": "done"}]}),
                ("update_plan", {"items": THREE, "explanation": "y" * 2001}),
                ("update_plan", {}),
            ],
        )
    assert all(result.is_error for result in (many, long, bad, wordy, none))
    assert text_of(many) == f"Not saved: a plan holds at most {MOST_ITEMS} items; this one has 51."
    assert "item 1 has 501 characters" in text_of(long)
    assert "status 'done'; use one of pending" in text_of(bad)
    assert "`explanation` must be a text of at most 2000 characters" in text_of(wordy)
    assert text_of(none) == (
        "Not saved: `items` must be a list of steps, each {content, status, priority?}."
    )
    assert socket.calls == []


async def test_a_refusal_by_cockpit_is_an_error_result_with_its_words() -> None:
    async with plan_socket() as socket:
        socket.answers.append(answer_line(False, "Refused: this token is not for that session."))
        result = await call(socket.environment(), "update_plan", {"items": THREE})
    assert result.is_error
    assert text_of(result) == "Refused: this token is not for that session."


async def test_no_socket_is_an_error_result_saying_the_plan_was_not_saved() -> None:
    async with plan_socket() as socket:
        env = socket.environment()
    result = await call(env, "update_plan", {"items": THREE})
    assert result.is_error
    assert text_of(result).startswith("Cockpit did not answer: the plan was not saved")
    assert "plan socket is not there" in text_of(result)


async def test_a_silent_socket_is_an_error_result_after_the_timeout() -> None:
    async with plan_socket() as socket:
        socket.answers.append(HANG)
        result = await call(socket.environment(), "read_plan", {})
    assert result.is_error
    assert text_of(result) == (
        "Cockpit did not answer: the plan was not read (it gave no answer within 1 seconds)."
        " Carry on with the work and try again later; do not keep a separate plan of your"
        " own meanwhile."
    )


async def test_a_garbage_answer_is_an_error_result() -> None:
    async with plan_socket() as socket:
        socket.answers += [b"not json at all\n", b"[1, 2]\n", b'{"text": "no ok"}\n']
        results = await calls(socket.environment(), [("update_plan", {"items": THREE})] * 3)
    for result in results:
        assert result.is_error
        assert "the plan was not saved (its answer could not be read)" in text_of(result)


async def test_an_answer_past_the_line_bound_is_an_error_result() -> None:
    async with plan_socket() as socket:
        socket.answers.append(answer_line(True, "x" * MOST_LINE_BYTES))
        result = await call(socket.environment(), "update_plan", {"items": THREE})
    assert result.is_error
    assert "the plan was not saved (its answer was too long to read)" in text_of(result)


async def test_no_environment_is_an_error_result_naming_what_is_missing() -> None:
    result = await call({}, "update_plan", {"items": THREE})
    assert result.is_error
    assert "started without COCKPIT_PLAN_SOCKET, COCKPIT_PLAN_SESSION, COCKPIT_PLAN_TOKEN" in (
        text_of(result)
    )


def test_the_server_exits_when_its_stdin_closes() -> None:
    server = plan_server({})
    process = subprocess.Popen(
        [server.command, *server.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server.env,
    )
    assert process.stdin is not None
    process.stdin.close()
    try:
        assert process.wait(timeout=15) == 0
    finally:
        process.kill()
    assert process.stdout is not None and process.stdout.read() == b""
