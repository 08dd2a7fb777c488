"""The built-in Claude agent (`acp/claude_agent.py`) end to end: a real agent subprocess,
Cockpit's real engine and store, the real SDKs, and a fake Messages API on 127.0.0.1 that
records every request and accounts for the prompt cache (`tests/support/fake_anthropic.py`).

Every test that streams also runs the live-stream check: the transcript rebuilt from the
frames the engine emitted equals the rows the store persisted.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from cockpit import client
from cockpit.api import PermissionRequest, StartError, Status
from cockpit.engine.core import Engine
from cockpit.engine.reading import StoreReader
from cockpit.ui.bubbles import AgentBubble, UserBubble
from cockpit.ui.composer import Composer
from cockpit.ui.permission_prompt import PermissionPrompt, RequestDiff
from cockpit.ui.tool_card import ToolCard
from store.chunk_log import ChunkLog, log_path
from store.entries import Entry
from store.requests import breakpoint_paths, thinking_config, without_breakpoints
from tests.support.engine_helpers import allow_all, assert_live_equals_stored, open_engine, rows_of
from tests.support.fake_anthropic import (
    FakeAnthropic,
    Reply,
    http_error,
    invalid_request,
    redacted,
    reply,
    text,
    thinking,
    tool,
)
from tests.support.forked_cockpit import run_command
from tests.support.service_helpers import services_stopped
from tests.support.ui_helpers import make_app, wait_until

ROOT = Path(__file__).resolve().parents[2]
MAX_TOKENS = 16000
"""The agent's default max_tokens (COCKPIT_CLAUDE_MAX_TOKENS is cleared for the tests)."""
APP = "def main():\n    return 'hello'\n\n\ndef helper():\n    return 2\n"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The fake API, and the environment that points the agent at it."""
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        for name in (
            "ANTHROPIC_MODEL",
            "ANTHROPIC_AUTH_TOKEN",
            "COCKPIT_CLAUDE_MAX_STEPS",
            "COCKPIT_CLAUDE_MAX_TOKENS",
        ):
            monkeypatch.delenv(name, raising=False)
        yield server


@pytest.fixture
def sample_app(tmp_path: Path) -> Path:
    """A small project with a README and a program, for the agent to read and edit."""
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "README.md").write_text("# Demo project\n\nIt prints hello.\n")
    (folder / "src" / "app.py").write_text(APP)
    return folder


def kinds(rows: list[Any]) -> list[str]:
    return [row.kind for row in rows]


def dumped(value: Any) -> str:
    return json.dumps(without_breakpoints(value))


MARKER = b',"cache_control":{"type":"ephemeral"}'
"""A cache breakpoint as the SDK serialises it (compact, after the block's other keys)."""


def raw_values(raw: bytes, opening: str) -> tuple[list[str], list[bytes]]:
    """The members of the JSON object (opening "{") or array (opening "[") that `raw` holds,
    each as the exact bytes that were sent, with their keys (an array has none)."""
    text = raw.decode()
    decoder = json.JSONDecoder()
    closing = "}" if opening == "{" else "]"
    assert text[0] == opening, text[:40]
    keys: list[str] = []
    values: list[bytes] = []
    index = 1
    while text[index] != closing:
        if opening == "{":
            key, index = decoder.raw_decode(text, index)
            assert text[index] == ":", "the SDK sends compact JSON"
            keys.append(key)
            index += 1
        start = index
        _, index = decoder.raw_decode(text, start)
        values.append(text[start:index].encode())
        if text[index] == ",":
            index += 1
    return keys, values


def raw_members(raw: bytes) -> dict[str, bytes]:
    """A request body's top-level members as sent (the SDK orders them its own way)."""
    keys, values = raw_values(raw, "{")
    return dict(zip(keys, values, strict=True))


def unmarked(raw: bytes) -> bytes:
    """Raw JSON with its cache breakpoints cut out: the bytes a prompt cache compares."""
    cut = raw.replace(MARKER, b"")
    assert b"cache_control" not in cut, "a breakpoint serialised in an unexpected form"
    return cut


def mid_turn_prompt(engine: Engine, session: str, text: str) -> asyncio.Future[Any]:
    """Send a prompt straight to the agent while a turn runs (Cockpit itself waits)."""
    live = engine._live[session]
    assert live.conn is not None and live.agent_session_id is not None
    return asyncio.ensure_future(
        live.conn.prompt(session_id=live.agent_session_id, prompt=[text_block(text)])
    )


async def agent_log(engine: Engine, home: Path, session: str) -> list[Entry]:
    """The agent's chunk log of a Cockpit session."""
    record = await engine.session(session)
    assert record.agent_session_id is not None
    log = await ChunkLog.open(log_path(home, record.agent_session_id), create=False)
    try:
        return await log.entries()
    finally:
        await log.close()


def inspect(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_command(
        ["inspect", *args], env={**os.environ, "COCKPIT_HOME": str(home)}, cwd=ROOT, timeout=60
    )


FOUR_STEPS = (
    reply(
        thinking("Look at the readme first.", "sig-step-1"),
        text("I will read the readme."),
        tool("read_file", {"path": "README.md"}),
    ),
    reply(tool("list_files", {}), tool("search", {"pattern": "def [a-z]+", "glob": "*.py"})),
    reply(text("Now a quick check."), tool("run_command", {"command": "echo checked"})),
    reply(text("All done: the project prints hello.")),
)


async def four_step_turn(home: Path, project: Path, fake: FakeAnthropic) -> str:
    fake.script(*FOUR_STEPS)
    async with open_engine(home, auto_answer=allow_all) as (engine, recorder):
        record = await engine.create_session("claude", project)
        assert await engine.prompt(record.id, "look around") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        assert kinds(rows) == [
            "user",
            "thought",
            "agent",
            "tool",
            "tool",
            "tool",
            "agent",
            "tool",
            "permission",
            "agent",
        ]
        tools = [row.payload or {} for row in rows if row.kind == "tool"]
        assert [(t["kind"], t["status"]) for t in tools] == [
            ("read", "completed"),
            ("search", "completed"),
            ("search", "completed"),
            ("execute", "completed"),
        ]
        (terminal,) = tools[3]["terminalOutput"].values()
        assert terminal["output"] == "checked\n"
        # Every text chunk carried a messageId: no row was folded by adjacency.
        assert all("@" not in row.key for row in rows if row.kind in ("agent", "thought"))
        return record.id


async def test_earlier_steps_are_sent_byte_identical_and_the_cache_grows(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    await four_step_turn(data_home, sample_app, fake)
    bodies = fake.bodies()
    assert [len(body["messages"]) for body in bodies] == [1, 3, 5, 7]
    for index, earlier in enumerate(bodies):
        for later in bodies[index + 1 :]:
            assert dumped(later["system"]) == dumped(earlier["system"])
            assert dumped(later["tools"]) == dumped(earlier["tools"])
            sent = earlier["messages"]
            assert [dumped(m) for m in later["messages"][: len(sent)]] == [dumped(m) for m in sent]
    # The same on the bytes that went over the wire (the SDK re-serialises the request, so
    # this is what the API saw): system and tools are identical, and every earlier request's
    # messages, breakpoints aside, open the later request's messages byte for byte.
    raws = [raw_members(recorded.raw) for recorded in fake.requests]
    for index, earlier_raw in enumerate(raws):
        _, sent_raw = raw_values(earlier_raw["messages"], "[")
        assert len(sent_raw) == len(bodies[index]["messages"])
        for later_raw in raws[index + 1 :]:
            assert later_raw["system"] == earlier_raw["system"]
            assert later_raw["tools"] == earlier_raw["tools"]
            _, kept = raw_values(later_raw["messages"], "[")
            assert [unmarked(m) for m in kept[: len(sent_raw)]] == [unmarked(m) for m in sent_raw]
            prefix = unmarked(earlier_raw["messages"])[:-1]  # without the closing bracket
            assert unmarked(later_raw["messages"]).startswith(prefix + b",")
    assert [breakpoint_paths(body) for body in bodies] == [
        ["system[0]", "messages[0].content[0]"],
        ["system[0]", "messages[0].content[0]", "messages[2].content[0]"],
        ["system[0]", "messages[2].content[0]", "messages[4].content[1]"],
        ["system[0]", "messages[4].content[1]", "messages[6].content[0]"],
    ]
    last = bodies[-1]["messages"]
    assert last[1]["content"][0] == {
        "type": "thinking",
        "thinking": "Look at the readme first.",
        "signature": "sig-step-1",
    }
    assert last[2]["content"][0]["content"] == "# Demo project\n\nIt prints hello.\n"
    assert "README.md" in last[4]["content"][0]["content"]
    assert "src/app.py:1:def main():" in last[4]["content"][1]["content"]
    assert last[6]["content"][0]["content"] == "Exit code 0.\nchecked\n"
    usages = [recorded.usage for recorded in fake.requests]
    for before, after in pairwise(usages):
        everything_before = sum(before.values())
        assert after["cache_read_input_tokens"] == everything_before  # the whole prefix read
    headers = fake.requests[0].headers
    assert "sk-test-key" in (headers.get("x-api-key", ""), headers.get("authorization", "")[7:])


async def test_inspect_prints_exactly_what_the_server_received(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    session = await four_step_turn(data_home, sample_app, fake)
    bodies = [recorded.body for recorded in fake.requests]
    result = inspect(data_home, session, "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert [call["request"] for call in document["calls"]] == bodies
    assert [call["usage"] for call in document["calls"]] == [
        {**recorded.usage, "output_tokens": call["usage"]["output_tokens"]}
        for recorded, call in zip(fake.requests, document["calls"], strict=True)
    ]
    assert [call["stopReason"] for call in document["calls"]] == [
        "tool_use",
        "tool_use",
        "tool_use",
        "end_turn",
    ]
    assert document["calls"][3]["response"]["content"] == [
        {"type": "text", "text": "All done: the project prints hello."}
    ]
    full = inspect(data_home, session[:5], "2", "--full")
    assert full.returncode == 0, full.stderr
    start = full.stdout.index("request:\n") + len("request:\n")
    printed, _ = json.JSONDecoder().raw_decode(full.stdout, start)
    assert printed == bodies[1]
    assert "=== call 2 of 4 " in full.stdout
    usage = fake.requests[1].usage
    assert (
        f"usage: input {usage['input_tokens']:,} · cache write "
        f"{usage['cache_creation_input_tokens']:,} · cache read "
        f"{usage['cache_read_input_tokens']:,} · output" in full.stdout
    )
    assert "breakpoints: system[0], messages[0].content[0], messages[2].content[0]" in full.stdout
    short = inspect(data_home, session)
    assert short.returncode == 0, short.stderr
    assert short.stdout.count("=== call ") == 4
    assert (
        "tools: read_file, write_file, edit_file, run_command, list_files, search" in short.stdout
    )
    assert "chars; --full shows all]" in short.stdout  # the system prompt is cut
    assert "model calls: 4 · input" in short.stdout
    agent_session = document["agentSession"]
    by_agent_id = inspect(data_home, agent_session, "1", "--json")
    assert json.loads(by_agent_id.stdout)["calls"][0]["request"] == bodies[0]
    missing = inspect(data_home, session, "9")
    assert missing.returncode == 2 and "there is no call 9 (the session made 4)" in missing.stderr


async def test_inspect_refuses_a_session_of_another_agent(
    data_home: Path, sample_app: Path
) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("demo", sample_app)
        await engine.prompt(record.id, "hello")
    result = inspect(data_home, record.id)
    assert result.returncode == 2
    assert "only sessions of the built-in Claude agent" in result.stderr
    assert inspect(data_home, "nothing-like-this").returncode == 2


async def test_a_signed_empty_thinking_block_is_sent_back(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(
            thinking("", "sig-empty"),
            redacted("opaque-blob"),
            tool("read_file", {"path": "src/app.py", "offset": 4, "limit": 2}),
        ),
        reply(text("It has two functions.")),
    )
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        assert await engine.prompt(record.id, "what is in app.py?") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        assert "thought" not in kinds(rows)  # nothing to show, but it is not lost
    second = fake.bodies()[1]["messages"]
    assert second[1]["content"][:2] == [
        {"type": "thinking", "thinking": "", "signature": "sig-empty"},
        {"type": "redacted_thinking", "data": "opaque-blob"},
    ]
    assert second[2]["content"][0]["content"] == "\n\ndef helper():\n"[1:]


async def test_a_prompt_sent_mid_turn_lands_after_the_tool_results(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(tool("run_command", {"command": "echo one"})),
        reply(text("Ran it, and I saw your second message.")),
    )
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        extra: list[asyncio.Future[Any]] = []

        def on_ask(request: PermissionRequest) -> None:
            live = engine._live[record.id]
            assert live.conn is not None and live.agent_session_id is not None
            extra.append(
                asyncio.ensure_future(
                    live.conn.prompt(
                        session_id=live.agent_session_id,
                        prompt=[text_block("and then check the readme")],
                    )
                )
            )

            async def allow_later() -> None:
                await asyncio.sleep(0.3)
                await engine.answer_permission(request.id, "allow")

            extra.append(asyncio.ensure_future(allow_later()))

        recorder.on_ask = on_ask
        assert await engine.prompt(record.id, "run it") == "end_turn"
        joined = await asyncio.wait_for(extra[0], 5)
        assert joined.stop_reason == "end_turn"
        entries = await agent_log(engine, data_home, record.id)
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
    # The agent shows the prompt where it landed: after the command, before the answer,
    # under the messageId it is logged (and replayed) with.
    assert [(row.kind, row.text) for row in rows if row.kind != "permission"][-3:] == [
        ("tool", ""),
        ("user", "and then check the readme"),
        ("agent", "Ran it, and I saw your second message."),
    ]
    queued = next(e for e in entries if e.data.get("text") == "and then check the readme")
    assert queued.message_id and queued.message_id in rows[-2].key
    assert len(fake.requests) == 2
    messages = fake.bodies()[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "user"]
    assert messages[2]["content"][0]["type"] == "tool_result"
    assert messages[3]["content"][0]["text"] == "and then check the readme"
    assert [(entry.role, entry.type, entry.step) for entry in entries] == [
        ("user", "text", 0),
        ("assistant", "tool_call", 1),
        ("tool", "tool_result", 1),
        ("user", "text", 1),
        ("assistant", "text", 2),
    ]


@pytest.mark.parametrize("stop", ["max_tokens", "refusal"])
async def test_a_prompt_queued_when_the_model_stops_short_is_answered(
    stop: str, data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    """The reply is cut (or refused) while a second prompt waits: the agent answers the
    second prompt at once, in a turn of its own, and both requests get a response."""
    gate = threading.Event()
    fake.script(
        Reply([text("The first answer is cut")], stop_reason=stop, gate=gate),
        reply(text("Here is the answer to the second question.")),
    )
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        turn = asyncio.create_task(engine.prompt(record.id, "first question"))
        await recorder.wait_for(lambda: len(fake.requests) == 1)
        joined = mid_turn_prompt(engine, record.id, "second question")
        await asyncio.sleep(0.5)  # the agent queues it while the first call waits
        gate.set()
        assert await asyncio.wait_for(turn, 10) == "end_turn"
        assert (await asyncio.wait_for(joined, 5)).stop_reason == "end_turn"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        entries = await agent_log(engine, data_home, record.id)
    texts = [(row.kind, row.text) for row in rows]
    cut = texts.index(("agent", "The first answer is cut"))
    second = texts.index(("user", "second question"))
    answer = texts.index(("agent", "Here is the answer to the second question."))
    assert cut < second < answer
    assert [e.data["text"] for e in entries if e.role == "user"] == [
        "first question",
        "second question",
    ]
    assert len(fake.requests) == 2
    messages = fake.bodies()[1]["messages"]
    if stop == "max_tokens":
        assert [m["role"] for m in messages] == ["user", "assistant", "user"]
        assert messages[1]["content"] == [{"type": "text", "text": "The first answer is cut"}]
    else:  # the refused turn leaves the context; the second prompt opened a turn of its own
        assert [m["role"] for m in messages] == ["user"]
    assert messages[-1]["content"][0]["text"] == "second question"


async def test_a_prompt_queued_when_the_turn_is_cancelled_is_kept(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    """Cancel ends the turn; a prompt that waited for it is logged after the cancel, shown,
    answered `cancelled`, sent with the next prompt and replayed after a restart."""
    long_text = " ".join(f"word{n}" for n in range(600))
    fake.script(Reply([text(long_text)], delay=0.01), reply(text("Short, then.")))
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        turn = asyncio.create_task(engine.prompt(record.id, "write a lot"))
        await recorder.wait_for(
            lambda: any(b.kind == "agent" and len(b.text) > 40 for b in recorder.view(record.id))
        )
        joined = mid_turn_prompt(engine, record.id, "and keep it short")
        await asyncio.sleep(0.3)
        assert await engine.cancel(record.id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        assert (await asyncio.wait_for(joined, 5)).stop_reason == "cancelled"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        assert [row.text for row in rows if row.kind == "user"] == [
            "write a lot",
            "and keep it short",
        ]
        entries = await agent_log(engine, data_home, record.id)
        assert [(e.type, e.data.get("kind") or e.data.get("text")) for e in entries[-2:]] == [
            ("system", "cancelled"),
            ("text", "and keep it short"),
        ]
        assert await engine.prompt(record.id, "go on") == "end_turn"
        agent_session = (await engine.session(record.id)).agent_session_id
    messages = fake.bodies()[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [block["text"] for block in messages[2]["content"]] == ["and keep it short", "go on"]
    async with open_engine(data_home) as (engine, _recorder):
        imported = await engine.create_session("claude", sample_app)
        await engine.store.update_session(imported.id, agent_session_id=agent_session)
        await engine.start(imported.id)
        replayed = await rows_of(engine, imported.id)
    assert [row.text for row in replayed if row.kind == "user"] == [
        "write a lot",
        "and keep it short",
        "go on",
    ]


async def test_a_prompt_queued_when_the_model_call_fails_is_kept(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    long_text = " ".join(f"word{n}" for n in range(300))
    fake.script(
        Reply([text(long_text)], delay=0.01, fail_after=120, error_type="overloaded_error"),
        reply(text("Back.")),
    )
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        turn = asyncio.create_task(engine.prompt(record.id, "write a lot"))
        await recorder.wait_for(
            lambda: any(b.kind == "agent" and len(b.text) > 20 for b in recorder.view(record.id))
        )
        joined = mid_turn_prompt(engine, record.id, "and then stop")
        assert await asyncio.wait_for(turn, 10) == "error"
        with pytest.raises(RequestError, match="overloaded_error"):
            await asyncio.wait_for(joined, 5)
        entries = await agent_log(engine, data_home, record.id)
        assert [e.type for e in entries[-2:]] == ["error", "text"]
        assert entries[-1].data["text"] == "and then stop"
        assert await engine.prompt(record.id, "again") == "end_turn"
    last = fake.bodies()[1]["messages"][-1]
    assert [block["text"] for block in last["content"]] == ["and then stop", "again"]


async def test_a_path_that_looks_like_an_option_stays_a_path(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    """`find -fprint -maxdepth ...` would create a file called -maxdepth: every path the
    agent hands to find or grep starts with ./ instead."""
    fake.script(
        reply(
            tool("list_files", {"path": "-fprint"}),
            tool("list_files", {"path": "-fprint x"}),
            tool("search", {"pattern": "-e", "path": "-r"}),
            tool("list_files", {"path": "src"}),
        ),
        reply(text("Nothing there.")),
    )
    before = sorted(str(path) for path in sample_app.rglob("*"))
    async with open_engine(data_home, auto_answer=allow_all) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        assert await engine.prompt(record.id, "list -fprint") == "end_turn"
        assert_live_equals_stored(recorder, record.id, await rows_of(engine, record.id))
    assert sorted(str(path) for path in sample_app.rglob("*")) == before
    results = fake.bodies()[1]["messages"][2]["content"]
    for result, name in zip(results[:3], ["-fprint", "-fprint x", "-r"], strict=True):
        assert result["is_error"] is True
        assert f"./{name}" in result["content"] and "No such file or directory" in result["content"]
    assert "Could not list -fprint: find failed." in results[0]["content"]
    assert results[3]["content"].splitlines() == ["./src", "./src/app.py"]


async def test_cancel_stops_the_stream_at_once_and_keeps_what_arrived(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    long_text = " ".join(f"word{n}" for n in range(600))
    fake.script(Reply([text(long_text)], delay=0.01), reply(text("Fine, stopping there.")))
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        turn = asyncio.create_task(engine.prompt(record.id, "write a lot"))
        await recorder.wait_for(
            lambda: any(b.kind == "agent" and len(b.text) > 40 for b in recorder.view(record.id))
        )
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert await engine.cancel(record.id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        assert loop.time() - started < 2
        await recorder.wait_for(fake.requests[0].finished.is_set, 5)
        assert fake.requests[0].aborted  # the HTTP stream was closed, not read to the end
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        (partial,) = [row.text for row in rows if row.kind == "agent"]
        assert long_text.startswith(partial) and len(partial) < len(long_text)
        entries = await agent_log(engine, data_home, record.id)
        assert [(e.type, e.data.get("kind") or e.data.get("text")) for e in entries] == [
            ("text", "write a lot"),
            ("text", partial),
            ("system", "cancelled"),
        ]
        assert await engine.prompt(record.id, "stop") == "end_turn"
    messages = fake.bodies()[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [{"type": "text", "text": partial}]
    calls = json.loads(inspect(data_home, record.id, "--json").stdout)["calls"]
    assert [call["status"] for call in calls] == ["cancelled", "ok"]
    assert calls[0]["response"]["content"][0]["partial"] is True


async def test_cancel_while_a_command_waits_for_permission(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(text("Running it."), tool("run_command", {"command": "echo never"})))
    fake.script(reply(text("OK.")))
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        turn = asyncio.create_task(engine.prompt(record.id, "run something"))
        await recorder.wait_for(lambda: bool(recorder.asked))
        assert await engine.cancel(record.id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        (tool_row,) = [row for row in rows if row.kind == "tool"]
        assert tool_row.payload is not None and tool_row.payload["status"] == "cancelled"
        assert await engine.prompt(record.id, "never mind") == "end_turn"
    result = fake.bodies()[1]["messages"][2]["content"][0]
    assert result["is_error"] is True and "Cancelled by the user" in result["content"]


async def test_a_model_error_fails_the_turn_visibly_and_the_session_goes_on(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    fake.script(http_error(500, "api_error", "the fake server broke"))
    fake.script(
        Reply(
            [text("This answer will be cut short by the server.")],
            fail_after=6,
            error_type="overloaded_error",
            error_message="Overloaded",
        )
    )
    fake.script(reply(text("Back again.")))
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        assert await engine.prompt(record.id, "first") == "error"
        rows = await rows_of(engine, record.id)
        assert rows[-1].kind == "error"
        assert (
            "The Anthropic API failed (api_error, HTTP 500): the fake server broke" in rows[-1].text
        )
        assert await engine.prompt(record.id, "second") == "error"
        rows = await rows_of(engine, record.id)
        assert "(overloaded_error, during the stream): Overloaded" in rows[-1].text
        (partial,) = [row.text for row in rows if row.kind == "agent"]
        assert "This answer will be cut short".startswith(partial)
        assert await engine.prompt(record.id, "third") == "end_turn"
        assert_live_equals_stored(recorder, record.id, await rows_of(engine, record.id))
    third = fake.bodies()[2]["messages"]
    assert dumped(third) == dumped(
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": partial}]},
            {"role": "user", "content": [{"type": "text", "text": "third"}]},
        ]
    )
    calls = json.loads(inspect(data_home, record.id, "--json").stdout)["calls"]
    assert [call["status"] for call in calls] == ["error", "error", "ok"]
    assert "the fake server broke" in calls[0]["error"]
    text_out = inspect(data_home, record.id, "1").stdout
    assert "failure: The Anthropic API failed (api_error, HTTP 500)" in text_out


async def test_a_refusal_ends_the_turn_and_leaves_the_context(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(text("Fine.")))
    fake.script(reply(text("I can't help with"), stop="refusal"))
    fake.script(reply(text("Sure.")))
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        assert await engine.prompt(record.id, "hello") == "end_turn"
        assert await engine.prompt(record.id, "something refused") == "refusal"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        texts = [row.text for row in rows]
        assert any("declined to continue" in t for t in texts)
        assert any(row.kind == "notice" and "refused" in row.text for row in rows)
        assert await engine.prompt(record.id, "something else") == "end_turn"
    third = fake.bodies()[2]["messages"]
    assert [block["text"] for m in third for block in m["content"]] == [
        "hello",
        "Fine.",
        "something else",
    ]


async def test_max_tokens_stops_without_running_a_cut_tool_call(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(
            text("Writing."),
            tool("write_file", {"path": "x.txt", "content": "y"}),
            stop="max_tokens",
        )
    )
    async with open_engine(data_home, auto_answer=allow_all) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        assert await engine.prompt(record.id, "write x") == "max_tokens"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        assert any("output token limit" in row.text for row in rows if row.kind == "agent")
        assert not recorder.asked
        assert not (sample_app / "x.txt").exists()
        entries = await agent_log(engine, data_home, record.id)
        (result,) = [entry for entry in entries if entry.type == "tool_result"]
        assert result.data["isError"] is True


async def test_without_a_key_the_agent_says_what_to_set(
    data_home: Path, sample_app: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("claude", sample_app)
        with pytest.raises(StartError, match="ANTHROPIC_API_KEY"):
            await engine.start(record.id)
        (row,) = await rows_of(engine, record.id)
        assert row.kind == "error"
        assert "Authentication required: Set ANTHROPIC_API_KEY to an Anthropic API key" in row.text
        assert "{" not in row.text  # the error's data as a sentence, not as a dict
    assert fake.requests == []


async def test_a_blank_prompt_is_refused_before_the_model_is_called(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    """A prompt of white space only (another ACP client may send one) would make a request
    with no message, which the model refuses: the agent says so and calls nothing."""
    fake.script(reply(text("Hi.")))
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("claude", sample_app)
        assert await engine.prompt(record.id, " \r\n") == "error"
        error = (await rows_of(engine, record.id))[-1]
        assert error.kind == "error" and "The prompt has no text" in error.text
        assert fake.requests == []
        assert await engine.prompt(record.id, "hello") == "end_turn"  # the session goes on
    assert len(fake.requests) == 1


async def test_a_reloaded_session_needs_the_key_to_prompt(
    data_home: Path, sample_app: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.script(reply(text("Hi.")))
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("claude", sample_app)
        assert await engine.prompt(record.id, "hello") == "end_turn"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    async with open_engine(data_home) as (engine, _recorder):
        assert await engine.prompt(record.id, "again") == "error"
        rows = await rows_of(engine, record.id)
        assert [row.kind for row in rows[-3:]] == ["user", "notice", "error"]
        assert "Reconnected" in rows[-2].text  # the reload itself needs no key
        assert "Authentication required: Set ANTHROPIC_API_KEY" in rows[-1].text


async def test_session_load_after_a_restart_replays_the_same_transcript(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    fake.script(*FOUR_STEPS)
    fake.script(reply(thinking("Short one.", "sig-2"), text("Second turn.")))
    async with open_engine(data_home, auto_answer=allow_all) as (engine, _recorder):
        original = await engine.create_session("claude", sample_app)
        assert await engine.prompt(original.id, "look around") == "end_turn"
        assert await engine.prompt(original.id, "and again") == "end_turn"
        before = await rows_of(engine, original.id)
        agent_session = (await engine.session(original.id)).agent_session_id
    async with open_engine(data_home) as (engine, recorder):
        # A new engine and a new agent process; a session that holds no transcript yet
        # keeps what the agent replays from its log.
        imported = await engine.create_session("claude", sample_app)
        await engine.store.update_session(imported.id, agent_session_id=agent_session)
        await engine.start(imported.id)
        after = await rows_of(engine, imported.id)
        assert_live_equals_stored(recorder, imported.id, after)

    def shown(rows: list[Any]) -> list[tuple[Any, ...]]:
        return [
            (row.turn, row.kind, row.text)
            if row.kind != "tool"
            else (
                row.turn,
                "tool",
                row.payload["title"],
                row.payload["status"],
                row.payload["kind"],
            )
            for row in rows
            if row.kind in ("user", "agent", "thought", "tool")
        ]

    assert shown(after) == shown(before)
    assert [row.key for row in after if row.kind in ("agent", "thought")] == [
        row.key for row in before if row.kind in ("agent", "thought")
    ]
    assert "replayed 2 turn(s)" in after[-1].text


async def test_prompt_edit_with_permission_command_and_resume(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(
            text("Editing the readme."),
            tool(
                "edit_file",
                {"path": "README.md", "old_text": "It prints hello.", "new_text": "It greets."},
            ),
        ),
        reply(tool("run_command", {"command": "cat README.md"})),
        reply(text("Edited and checked.")),
    )
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)

        def answer(request: PermissionRequest) -> None:
            asyncio.get_running_loop().create_task(engine.answer_permission(request.id, "allow"))

        recorder.on_ask = answer
        assert await engine.prompt(record.id, "reword the readme") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        assert [request.kind for request in recorder.asked] == ["edit", "execute"]
        diff = recorder.asked[0].diffs()[0]
        assert diff["oldText"].endswith("It prints hello.\n") and diff["newText"].endswith(
            "It greets.\n"
        )
        assert (sample_app / "README.md").read_text() == "# Demo project\n\nIt greets.\n"
        decisions = [row.text for row in rows if row.kind == "permission"]
        assert [d.split(":")[0] for d in decisions] == ["Allowed once", "Allowed once"]
        command = next(
            row.payload or {}
            for row in rows
            if row.kind == "tool" and (row.payload or {}).get("kind") == "execute"
        )
        (terminal,) = command["terminalOutput"].values()
        assert terminal["output"] == "# Demo project\n\nIt greets.\n"
        last_request = fake.bodies()[-1]
    fake.script(reply(text("Yes, it still greets.")))
    async with open_engine(data_home) as (engine, recorder):
        assert await engine.prompt(record.id, "still fine?") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert any(row.kind == "notice" and "Reconnected" in row.text for row in rows)
        assert_live_equals_stored(recorder, record.id, rows[-3:])
    resumed = fake.bodies()[-1]["messages"]
    sent = last_request["messages"]
    assert [dumped(m) for m in resumed[: len(sent)]] == [dumped(m) for m in sent]
    assert resumed[len(sent)] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Edited and checked."}],
    }
    assert fake.requests[-1].usage["cache_read_input_tokens"] == sum(
        fake.requests[-2].usage.values()
    )


async def test_plan_mode_refuses_edits_and_a_rejection_is_reported(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    edit = {"path": "README.md", "old_text": "hello", "new_text": "bye"}
    fake.script(reply(tool("edit_file", edit)), reply(text("I would change hello to bye.")))
    fake.script(
        reply(tool("write_file", {"path": "new.txt", "content": "x\n"})), reply(text("OK."))
    )
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)
        await engine.set_mode(record.id, "plan")
        assert await engine.prompt(record.id, "change it") == "end_turn"
        assert not recorder.asked
        await engine.set_mode(record.id, "ask")

        def reject(request: PermissionRequest) -> None:
            asyncio.get_running_loop().create_task(engine.answer_permission(request.id, "reject"))

        recorder.on_ask = reject
        assert await engine.prompt(record.id, "write a file") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        statuses = [(row.payload or {}).get("status") for row in rows if row.kind == "tool"]
        assert statuses == ["failed", "failed"]
    assert (sample_app / "README.md").read_text().endswith("It prints hello.\n")
    assert not (sample_app / "new.txt").exists()
    plan_result = fake.bodies()[1]["messages"][2]["content"][0]
    assert plan_result["is_error"] is True and "plan mode" in plan_result["content"]
    rejected = fake.bodies()[3]["messages"][-1]["content"][0]
    assert rejected["is_error"] is True and "rejected" in rejected["content"]


async def test_model_and_thinking_are_config_options(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(text("one")), reply(text("two")), reply(text("three")))
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("claude", sample_app)
        await engine.start(record.id)
        options = (await engine.session(record.id)).config_options or ()
        model = next(o for o in options if o["id"] == "model")
        assert model["category"] == "model"
        assert model["currentValue"] == model["options"][0]["value"] == "claude-sonnet-4-6"
        assert await engine.prompt(record.id, "first") == "end_turn"
        await engine.set_config_option(record.id, "model", "claude-haiku-4-5")
        await engine.set_config_option(record.id, "thinking", "adaptive")
        assert await engine.prompt(record.id, "second") == "end_turn"
        await engine.set_config_option(record.id, "model", "claude-opus-4-6")
        assert await engine.prompt(record.id, "third") == "end_turn"
    first, second, third = fake.bodies()
    assert not any(recorded.rejected for recorded in fake.requests)
    assert (first["model"], "thinking" in first) == ("claude-sonnet-4-6", False)
    # Haiku 4.5 predates adaptive thinking (the API refuses it there): it takes a budget.
    budget = second["thinking"]["budget_tokens"]
    assert second["model"] == "claude-haiku-4-5"
    assert second["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert 1024 <= budget < second["max_tokens"]
    assert second["thinking"] == thinking_config("claude-haiku-4-5", "adaptive", MAX_TOKENS)
    assert (third["model"], third["thinking"]) == ("claude-opus-4-6", {"type": "adaptive"})


async def test_the_fake_api_refuses_the_thinking_the_real_one_refuses(
    fake: FakeAnthropic,
) -> None:
    haiku: dict[str, Any] = {
        "model": "claude-haiku-4-5",
        "max_tokens": 2000,
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert invalid_request(haiku) is None
    assert (
        invalid_request({**haiku, "thinking": {"type": "enabled", "budget_tokens": 1500}}) is None
    )
    for config in (
        {"type": "adaptive"},
        {"type": "enabled", "budget_tokens": 2000},  # not below max_tokens
        {"type": "enabled", "budget_tokens": 1000},  # below the minimum
    ):
        assert invalid_request({**haiku, "thinking": config}) is not None, config
    sonnet = {**haiku, "model": "claude-sonnet-4-6", "thinking": {"type": "adaptive"}}
    assert invalid_request(sonnet) is None
    call = {"type": "tool_use", "id": "t1", "name": "list_files", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "x"}
    loop = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]
    refused = invalid_request({**sonnet, "messages": loop})
    assert refused is not None and "must start with a thinking block" in refused
    assert invalid_request({**haiku, "messages": loop}) is None  # thinking off: no rule
    signed = {"type": "thinking", "thinking": "", "signature": "sig"}
    loop[1] = {"role": "assistant", "content": [signed, call]}
    assert invalid_request({**sonnet, "messages": loop}) is None
    # Over HTTP: a 400 invalid_request_error, recorded, and no scripted reply used up.
    fake.script(reply(text("kept")))
    import anthropic  # here: the SDK takes a second to import, in every test process

    client = anthropic.AsyncAnthropic(api_key="sk-test-key", base_url=fake.url, max_retries=0)
    try:
        with pytest.raises(anthropic.BadRequestError, match="invalid_request_error"):
            await client.messages.create(**{**haiku, "thinking": {"type": "adaptive"}})
    finally:
        await client.close()
    assert fake.requests[0].rejected is not None and len(fake.queue) == 1


async def test_a_thinking_change_mid_turn_applies_from_the_next_turn(
    data_home: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    """With thinking on, the API refuses a tool-loop step whose last assistant message does
    not open with a thinking block: a turn keeps the settings it started with."""
    fake.script(
        reply(tool("run_command", {"command": "echo one"})),
        reply(text("Ran it.")),
        reply(thinking("Read it first.", "sig-read"), tool("read_file", {"path": "README.md"})),
        reply(thinking("It says hello.", "sig-end"), text("It prints hello.")),
    )
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("claude", sample_app)

        def on_ask(request: PermissionRequest) -> None:
            async def switch_then_allow() -> None:
                await engine.set_config_option(record.id, "thinking", "adaptive")
                await engine.answer_permission(request.id, "allow")

            asyncio.get_running_loop().create_task(switch_then_allow())

        recorder.on_ask = on_ask
        assert await engine.prompt(record.id, "run it") == "end_turn"
        recorder.on_ask = None
        assert await engine.prompt(record.id, "what does the readme say?") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
    assert not any(recorded.rejected for recorded in fake.requests)
    assert [body.get("thinking") for body in fake.bodies()] == [
        None,
        None,
        {"type": "adaptive"},
        {"type": "adaptive"},
    ]
    fourth = fake.bodies()[3]["messages"]
    assert fourth[-2]["content"][0]["type"] == "thinking"


async def test_through_the_tui_an_edit_is_asked_inline_and_answered_with_a_key(
    tmp_path: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    """The whole path a user takes: a prompt typed in the composer, the edit's diff asked
    inline, `1` allows it, the file changes and the reply shows as one bubble."""

    fake.script(
        reply(
            text("Editing the readme."),
            tool(
                "edit_file",
                {"path": "README.md", "old_text": "It prints hello.", "new_text": "It greets."},
            ),
        ),
        reply(text("Edited.")),
    )
    app = make_app(tmp_path, sample_app, agent="claude")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        session = app.current or ""
        composer = app.query_one(Composer)
        composer.focus()
        await pilot.press(*"reword the readme", "enter")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        await wait_until(lambda: app.query(RequestDiff), what="the edit's diff in the question")
        await pilot.pause()
        await pilot.press("1")
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        await pilot.pause()
        assert (sample_app / "README.md").read_text() == "# Demo project\n\nIt greets.\n"
        bubbles = [bubble.text for bubble in app.query(AgentBubble)]
        assert bubbles == ["Editing the readme.", "Edited."]
        rows = await app.engine.rows(session)
        assert next(r.text for r in rows if r.kind == "permission").startswith("Allowed once")


async def test_through_the_tui_a_command_runs_and_the_session_resumes_in_a_new_app(
    tmp_path: Path, sample_app: Path, fake: FakeAnthropic
) -> None:
    """A command asked inline and allowed with `1`, its output in its card; then the app
    closes, a new app on the same home reopens the session with its transcript, and a new
    prompt continues it (the agent reloads its log and sends the earlier history)."""
    fake.script(
        reply(text("Checking."), tool("run_command", {"command": "echo hello from the tui"})),
        reply(text("It printed hello.")),
    )
    app = make_app(tmp_path, sample_app, agent="claude")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        session = app.current or ""
        composer = app.query_one(Composer)
        composer.focus()
        await pilot.press(*"check it", "enter")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        await pilot.pause()
        await pilot.press("1")
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        await pilot.pause()
        (card,) = app.query(ToolCard)
        if not card.expanded:  # a command that succeeded folds; open it
            card.focus()
            await pilot.press("enter")
            await pilot.pause()
        assert card.expanded
        shown = app.export_screenshot().replace("&#160;", " ")
        assert "hello from the tui" in shown and "exit 0" in shown
        assert [b.text for b in app.query(AgentBubble)] == ["Checking.", "It printed hello."]
        first_call = fake.bodies()[-1]["messages"]
    assert len(first_call) == 3 and first_call[2]["content"][0]["content"] == (
        "Exit code 0.\nhello from the tui\n"
    )

    fake.script(reply(text("Still hello.")))
    again = make_app(tmp_path, sample_app, agent="claude")
    async with again.run_test(size=(120, 40)) as pilot:
        await wait_until(lambda: again.current == session and len(again.query(AgentBubble)) == 2)
        await pilot.pause()
        assert [b.text for b in again.query(UserBubble)] == ["check it"]
        assert [b.text for b in again.query(AgentBubble)] == ["Checking.", "It printed hello."]
        assert len(again.query(ToolCard)) == 1
        composer = again.query_one(Composer)
        composer.focus()
        await pilot.press(*"still?", "enter")
        await wait_until(
            lambda: [b.text for b in again.query(AgentBubble)][-1:] == ["Still hello."], 30
        )
        await wait_until(lambda: again.engine.status(session) == Status.READY)
        assert [b.text for b in again.query(UserBubble)] == ["check it", "still?"]
        rows = await again.engine.rows(session)
        assert sum(row.kind == "agent" for row in rows) == 3  # the replay added no copies
    resumed = fake.bodies()[-1]["messages"]
    assert [dumped(m) for m in resumed[:3]] == [dumped(m) for m in first_call]
    assert resumed[3] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "It printed hello."}],
    }
    assert resumed[4]["content"] == [
        {"type": "text", "text": "still?", "cache_control": {"type": "ephemeral"}}
    ]


async def test_inspect_reads_the_same_calls_through_the_service_as_from_the_store(
    data_home: Path, sample_app: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`model_calls` of the contract: the store read on its own (no service runs) and the
    store's service, over its socket, answer the same calls, and `cockpit inspect` prints
    the same document either way."""
    session = await four_step_turn(data_home, sample_app, fake)
    alone = await StoreReader.open(data_home)
    try:
        read = await alone.model_calls(session[:6])
    finally:
        await alone.close()
    assert (read.session, read.total, [c.number for c in read.calls]) == (session, 4, [1, 2, 3, 4])
    assert [dict(c.request) for c in read.calls] == [r.body for r in fake.requests]
    local = inspect(data_home, session, "--json")
    assert local.returncode == 0, local.stderr
    monkeypatch.delenv("COCKPIT_LOCAL")
    with services_stopped(data_home):
        await client.start_service(data_home)
        engine = await client.open_engine(data_home, reach=client.Reach(), start=False)
        try:
            assert await engine.model_calls(session) == read
            assert (await engine.model_calls(session, 2)).calls == read.calls[1:2]
        finally:
            await engine.close()
        attached = await asyncio.to_thread(inspect, data_home, session, "--json")
        assert attached.returncode == 0, attached.stderr
        assert json.loads(attached.stdout) == json.loads(local.stdout)
        refused = await asyncio.to_thread(inspect, data_home, "nothing-like-this")
        assert refused.returncode == 2 and refused.stderr.startswith("cockpit: no session")
