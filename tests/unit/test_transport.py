"""The hardened transport: only JSON objects reach the SDK; everything dropped is reported."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

from cockpit.engine.transport import AgentTransport


class Sink:
    """A StreamWriter stand-in that records what was written."""

    def __init__(self) -> None:
        self.data = b""
        self.closed = False

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


def transport_for(
    data: bytes, max_line: int = 1000
) -> tuple[AgentTransport, list[dict[str, Any]], list[str], Sink]:
    reader = asyncio.StreamReader(limit=64)
    reader.feed_data(data)
    reader.feed_eof()
    tapped: list[dict[str, Any]] = []

    def tap(message: dict[str, Any]) -> bool:
        tapped.append(message)
        return message.get("method") == "taken"

    dropped: list[str] = []
    sink = Sink()
    writer = cast(asyncio.StreamWriter, sink)
    transport = AgentTransport(
        reader, writer, tap=tap, on_dropped=dropped.append, max_line=max_line
    )
    return transport, tapped, dropped, sink


async def test_garbage_is_dropped_and_reported_and_objects_pass_in_order() -> None:
    good = [{"jsonrpc": "2.0", "method": "session/update", "params": {"n": n}} for n in range(3)]
    lines = [
        json.dumps(good[0]),
        "this is not json",
        "\x1b[31mcoloured\x1b[0m",
        "42",
        "[1, 2]",
        '"a string"',
        "null",
        "",
        "   ",
        json.dumps(good[1]),
        json.dumps({"pad": "x" * 1500}),  # over the 1000-byte limit, read in 64-byte parts
        json.dumps(good[2]),
    ]
    transport, tapped, dropped, _ = transport_for(("\n".join(lines) + "\n").encode())
    received = []
    while (message := await transport.receive()) is not None:
        received.append(message)
    assert received == good
    assert tapped == good
    assert dropped[:6] == [
        "a line that is not JSON: this is not json",
        "a line that is not JSON: \\x1b[31mcoloured\\x1b[0m",
        "a JSON line that is not an object: 42",
        "a JSON line that is not an object: [1, 2]",
        'a JSON line that is not an object: "a string"',
        "a JSON line that is not an object: null",
    ]
    assert dropped[6].startswith("a line of 1,") and "1,000-byte limit" in dropped[6]
    assert len(dropped) == 7


async def test_a_long_line_within_the_limit_arrives_whole_and_a_last_line_without_newline_counts() -> (
    None
):
    big = {"jsonrpc": "2.0", "method": "x", "params": {"text": "y" * 5000}}
    transport, _, dropped, _ = transport_for(
        json.dumps(big).encode() + b"\n" + b'{"id": 1}', max_line=10_000
    )
    assert await transport.receive() == big
    assert await transport.receive() == {"id": 1}
    assert await transport.receive() is None
    assert dropped == []


async def test_send_writes_one_line_per_message() -> None:
    transport, _, _, sink = transport_for(b"")
    await transport.send(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"t": "é\n"}}
    )
    assert sink.data.count(b"\n") == 1
    assert json.loads(sink.data) == {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"t": "é\n"},
    }
    await transport.close()
    assert sink.closed


async def test_messages_the_tap_takes_are_not_passed_on() -> None:
    lines = [
        {"method": "taken", "n": 1},
        {"method": "kept"},
        {"method": "taken", "n": 2},
        {"id": 3},
    ]
    transport, tapped, _, _ = transport_for(
        ("\n".join(json.dumps(m) for m in lines) + "\n").encode()
    )
    received = []
    while (message := await transport.receive()) is not None:
        received.append(message)
    assert received == [{"method": "kept"}, {"id": 3}]
    assert tapped == lines


async def test_lines_that_killed_the_reading_loop_are_dropped_and_it_goes_on() -> None:
    """A line nested past the decoder's stack, ids that cannot be looked up, an error that
    is a string, a message nested past the limit: each is reported, and the next message
    still arrives."""
    good = {"jsonrpc": "2.0", "method": "session/update", "params": {"n": 1}}
    # 400 levels: the decoder takes it, and recursive code after it would not.
    deep_update = (
        '{"jsonrpc": "2.0", "method": "session/update", "params": '
        + '{"u": ' * 400 + "1" + "}" * 400 + "}"
    )  # fmt: skip
    lines = [
        "[" * 5000 + "]" * 5000,
        json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "result": {}}),
        json.dumps({"jsonrpc": "2.0", "id": [1], "error": {"code": 1, "message": "x"}}),
        json.dumps({"jsonrpc": "2.0", "id": True, "result": None}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "error": "boom"}),
        json.dumps({"jsonrpc": "2.0", "method": ["x"], "params": {}}),
        json.dumps({"jsonrpc": "2.0", "x": "neither"}),
        deep_update,
        json.dumps(good),
    ]
    transport, tapped, dropped, _ = transport_for(
        ("\n".join(lines) + "\n").encode(), max_line=1_000_000
    )
    assert await transport.receive() == good
    assert tapped == [good]
    assert [d.split(":")[0] for d in dropped] == [
        "a line nested too deeply to read",
        "a message whose id is not a string or an integer",
        "a message whose id is not a string or an integer",
        "a message whose id is not a string or an integer",
        "an error response whose error is not an object",
        "a message whose method is not a string",
        "a message that is no request, notification or response",
        "a message nested deeper than 64 levels",
    ]


async def test_each_request_is_screened_and_waited_for_before_the_sdk_has_it() -> None:
    """A request the SDK will refuse has its row stored before the SDK sees it (and
    answers): the screen is awaited, and such a request skips the tap. Notifications and
    responses are not screened."""
    lines = [
        {"jsonrpc": "2.0", "method": "session/update", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "refused", "params": []},
        {"jsonrpc": "2.0", "id": 2, "method": "served", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
    ]
    reader = asyncio.StreamReader()
    reader.feed_data("".join(json.dumps(line) + "\n" for line in lines).encode())
    reader.feed_eof()
    events: list[str] = []

    def tap(message: dict[str, Any]) -> bool:
        events.append(f"tap {message.get('method', 'response')}")
        return False

    async def screen(message: dict[str, Any]) -> bool:
        events.append(f"screen {message['method']}")
        await asyncio.sleep(0.01)  # the row being stored
        events.append(f"stored {message['method']}")
        return bool(message["method"] == "refused")

    transport = AgentTransport(
        reader, cast(asyncio.StreamWriter, Sink()), tap=tap, on_dropped=print, screen=screen
    )
    while (message := await transport.receive()) is not None:
        events.append(f"sdk {message.get('method', 'response')}")
    assert events == [
        "tap session/update",
        "sdk session/update",
        "screen refused",
        "stored refused",
        "sdk refused",
        "screen served",
        "stored served",
        "tap served",
        "sdk served",
        "tap response",
        "sdk response",
    ]
