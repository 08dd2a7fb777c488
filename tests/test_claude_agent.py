"""The built-in Claude agent (`acp/claude_agent.py`) end to end: a real agent subprocess,
Cockpit's real engine and store, the real SDKs, and a fake Messages API on 127.0.0.1 that
records every request and accounts for the prompt cache (`tests/fake_anthropic.py`).

Every test that streams also runs the live-stream check: the transcript rebuilt from the
frames the engine emitted equals the rows the store persisted.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from cockpit.engine import Engine
from cockpit.events import PermissionRequest, Status
from cockpit.live import StartError
from cockpit.ui.bubbles import AgentBubble
from cockpit.ui.composer import Composer
from cockpit.ui.permission import PermissionPrompt, RequestDiff
from store.chunklog import ChunkLog, log_path
from store.entries import Entry
from store.requests import breakpoint_paths, without_breakpoints
from tests.engine_helpers import allow_all, assert_live_equals_stored, open_engine, rows_of
from tests.fake_anthropic import (
    FakeAnthropic,
    Reply,
    http_error,
    redacted,
    reply,
    text,
    thinking,
    tool,
)
from tests.ui_helpers import make_app, wait_until

ROOT = Path(__file__).resolve().parent.parent
APP = "def main():\n    return 'hello'\n\n\ndef helper():\n    return 2\n"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The fake API, and the environment that points the agent at it."""
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        for name in ("ANTHROPIC_MODEL", "ANTHROPIC_AUTH_TOKEN", "COCKPIT_CLAUDE_MAX_STEPS"):
            monkeypatch.delenv(name, raising=False)
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "README.md").write_text("# Demo project\n\nIt prints hello.\n")
    (folder / "src" / "app.py").write_text(APP)
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def kinds(rows: list[Any]) -> list[str]:
    return [row.kind for row in rows]


def dumped(value: Any) -> str:
    return json.dumps(without_breakpoints(value))


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
    return subprocess.run(
        [sys.executable, "-m", "cockpit", "inspect", *args],
        cwd=ROOT,
        env={**os.environ, "COCKPIT_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
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
    async with open_engine(home, policy=allow_all) as (engine, recorder):
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
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    await four_step_turn(home, project, fake)
    bodies = fake.bodies()
    assert [len(body["messages"]) for body in bodies] == [1, 3, 5, 7]
    for index, earlier in enumerate(bodies):
        for later in bodies[index + 1 :]:
            assert dumped(later["system"]) == dumped(earlier["system"])
            assert dumped(later["tools"]) == dumped(earlier["tools"])
            sent = earlier["messages"]
            assert [dumped(m) for m in later["messages"][: len(sent)]] == [dumped(m) for m in sent]
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
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    session = await four_step_turn(home, project, fake)
    bodies = [recorded.body for recorded in fake.requests]
    result = inspect(home, session, "--json")
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
    full = inspect(home, session[:5], "2", "--full")
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
    short = inspect(home, session)
    assert short.returncode == 0, short.stderr
    assert short.stdout.count("=== call ") == 4
    assert (
        "tools: read_file, write_file, edit_file, run_command, list_files, search" in short.stdout
    )
    assert "chars; --full shows all]" in short.stdout  # the system prompt is cut
    assert "model calls: 4 · input" in short.stdout
    agent_session = document["agentSession"]
    by_agent_id = inspect(home, agent_session, "1", "--json")
    assert json.loads(by_agent_id.stdout)["calls"][0]["request"] == bodies[0]
    missing = inspect(home, session, "9")
    assert missing.returncode == 2 and "there is no call 9 (the session made 4)" in missing.stderr


async def test_inspect_refuses_a_session_of_another_agent(home: Path, project: Path) -> None:
    async with open_engine(home) as (engine, _recorder):
        record = await engine.create_session("demo", project)
        await engine.prompt(record.id, "hello")
    result = inspect(home, record.id)
    assert result.returncode == 2
    assert "only sessions of the built-in Claude agent" in result.stderr
    assert inspect(home, "nothing-like-this").returncode == 2


async def test_a_signed_empty_thinking_block_is_sent_back(
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(
            thinking("", "sig-empty"),
            redacted("opaque-blob"),
            tool("read_file", {"path": "src/app.py", "offset": 4, "limit": 2}),
        ),
        reply(text("It has two functions.")),
    )
    async with open_engine(home) as (engine, recorder):
        record = await engine.create_session("claude", project)
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
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(tool("run_command", {"command": "echo one"})),
        reply(text("Ran it, and I saw your second message.")),
    )
    async with open_engine(home) as (engine, recorder):
        record = await engine.create_session("claude", project)
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
        entries = await agent_log(engine, home, record.id)
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


async def test_cancel_stops_the_stream_at_once_and_keeps_what_arrived(
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    long_text = " ".join(f"word{n}" for n in range(600))
    fake.script(Reply([text(long_text)], delay=0.01), reply(text("Fine, stopping there.")))
    async with open_engine(home) as (engine, recorder):
        record = await engine.create_session("claude", project)
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
        entries = await agent_log(engine, home, record.id)
        assert [(e.type, e.data.get("kind") or e.data.get("text")) for e in entries] == [
            ("text", "write a lot"),
            ("text", partial),
            ("system", "cancelled"),
        ]
        assert await engine.prompt(record.id, "stop") == "end_turn"
    messages = fake.bodies()[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [{"type": "text", "text": partial}]
    calls = json.loads(inspect(home, record.id, "--json").stdout)["calls"]
    assert [call["status"] for call in calls] == ["cancelled", "ok"]
    assert calls[0]["response"]["content"][0]["partial"] is True


async def test_cancel_while_a_command_waits_for_permission(
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(text("Running it."), tool("run_command", {"command": "echo never"})))
    fake.script(reply(text("OK.")))
    async with open_engine(home) as (engine, recorder):
        record = await engine.create_session("claude", project)
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
    home: Path, project: Path, fake: FakeAnthropic
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
    async with open_engine(home) as (engine, recorder):
        record = await engine.create_session("claude", project)
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
    calls = json.loads(inspect(home, record.id, "--json").stdout)["calls"]
    assert [call["status"] for call in calls] == ["error", "error", "ok"]
    assert "the fake server broke" in calls[0]["error"]
    text_out = inspect(home, record.id, "1").stdout
    assert "failure: The Anthropic API failed (api_error, HTTP 500)" in text_out


async def test_a_refusal_ends_the_turn_and_leaves_the_context(
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(text("Fine.")))
    fake.script(reply(text("I can't help with"), stop="refusal"))
    fake.script(reply(text("Sure.")))
    async with open_engine(home) as (engine, recorder):
        record = await engine.create_session("claude", project)
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
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    fake.script(
        reply(
            text("Writing."),
            tool("write_file", {"path": "x.txt", "content": "y"}),
            stop="max_tokens",
        )
    )
    async with open_engine(home, policy=allow_all) as (engine, recorder):
        record = await engine.create_session("claude", project)
        assert await engine.prompt(record.id, "write x") == "max_tokens"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        assert any("output token limit" in row.text for row in rows if row.kind == "agent")
        assert not recorder.asked
        assert not (project / "x.txt").exists()
        entries = await agent_log(engine, home, record.id)
        (result,) = [entry for entry in entries if entry.type == "tool_result"]
        assert result.data["isError"] is True


async def test_without_a_key_the_agent_says_what_to_set(
    home: Path, project: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    async with open_engine(home) as (engine, _recorder):
        record = await engine.create_session("claude", project)
        with pytest.raises(StartError, match="ANTHROPIC_API_KEY"):
            await engine.start(record.id)
        (row,) = await rows_of(engine, record.id)
        assert row.kind == "error" and "code -32000" in row.text
    assert fake.requests == []


async def test_a_reloaded_session_needs_the_key_to_prompt(
    home: Path, project: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.script(reply(text("Hi.")))
    async with open_engine(home) as (engine, _recorder):
        record = await engine.create_session("claude", project)
        assert await engine.prompt(record.id, "hello") == "end_turn"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    async with open_engine(home) as (engine, _recorder):
        assert await engine.prompt(record.id, "again") == "error"
        rows = await rows_of(engine, record.id)
        assert [row.kind for row in rows[-3:]] == ["user", "notice", "error"]
        assert "Reconnected" in rows[-2].text  # the reload itself needs no key
        assert "code -32000" in rows[-1].text and "ANTHROPIC_API_KEY" in rows[-1].text


async def test_session_load_after_a_restart_replays_the_same_transcript(
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    fake.script(*FOUR_STEPS)
    fake.script(reply(thinking("Short one.", "sig-2"), text("Second turn.")))
    async with open_engine(home, policy=allow_all) as (engine, _recorder):
        original = await engine.create_session("claude", project)
        assert await engine.prompt(original.id, "look around") == "end_turn"
        assert await engine.prompt(original.id, "and again") == "end_turn"
        before = await rows_of(engine, original.id)
        agent_session = (await engine.session(original.id)).agent_session_id
    async with open_engine(home) as (engine, recorder):
        # A new engine and a new agent process; a session that holds no transcript yet
        # keeps what the agent replays from its log.
        imported = await engine.create_session("claude", project)
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
    home: Path, project: Path, fake: FakeAnthropic
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
    async with open_engine(home) as (engine, recorder):
        record = await engine.create_session("claude", project)

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
        assert (project / "README.md").read_text() == "# Demo project\n\nIt greets.\n"
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
    async with open_engine(home) as (engine, recorder):
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
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    edit = {"path": "README.md", "old_text": "hello", "new_text": "bye"}
    fake.script(reply(tool("edit_file", edit)), reply(text("I would change hello to bye.")))
    fake.script(
        reply(tool("write_file", {"path": "new.txt", "content": "x\n"})), reply(text("OK."))
    )
    async with open_engine(home) as (engine, recorder):
        record = await engine.create_session("claude", project)
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
    assert (project / "README.md").read_text().endswith("It prints hello.\n")
    assert not (project / "new.txt").exists()
    plan_result = fake.bodies()[1]["messages"][2]["content"][0]
    assert plan_result["is_error"] is True and "plan mode" in plan_result["content"]
    rejected = fake.bodies()[3]["messages"][-1]["content"][0]
    assert rejected["is_error"] is True and "rejected" in rejected["content"]


async def test_model_and_thinking_are_config_options(
    home: Path, project: Path, fake: FakeAnthropic
) -> None:
    fake.script(reply(text("one")), reply(text("two")))
    async with open_engine(home) as (engine, _recorder):
        record = await engine.create_session("claude", project)
        await engine.start(record.id)
        options = (await engine.session(record.id)).config_options or ()
        model = next(o for o in options if o["id"] == "model")
        assert model["category"] == "model"
        assert model["currentValue"] == model["options"][0]["value"] == "claude-sonnet-4-6"
        assert await engine.prompt(record.id, "first") == "end_turn"
        await engine.set_config_option(record.id, "model", "claude-haiku-4-5")
        await engine.set_config_option(record.id, "thinking", "adaptive")
        assert await engine.prompt(record.id, "second") == "end_turn"
    first, second = fake.bodies()
    assert (first["model"], "thinking" in first) == ("claude-sonnet-4-6", False)
    assert (second["model"], second["thinking"]) == ("claude-haiku-4-5", {"type": "adaptive"})


async def test_through_the_tui_an_edit_is_asked_inline_and_answered_with_a_key(
    tmp_path: Path, project: Path, fake: FakeAnthropic
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
    app = make_app(tmp_path, project, agent="claude")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        session = app.current or ""
        composer = app.query_one(Composer)
        composer.focus()
        await pilot.press(*"reword the readme", "enter")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        assert app.query(RequestDiff)
        await pilot.pause()
        await pilot.press("1")
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        await pilot.pause()
        assert (project / "README.md").read_text() == "# Demo project\n\nIt greets.\n"
        bubbles = [bubble.text for bubble in app.query(AgentBubble)]
        assert bubbles == ["Editing the readme.", "Edited."]
        rows = await app.engine.store.all_rows(session)
        assert next(r.text for r in rows if r.kind == "permission").startswith("Allowed once")
