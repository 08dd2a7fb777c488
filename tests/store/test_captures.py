"""Recorded sessions of real agents replayed through the store's chunk path.

Each capture (claude-agent-acp 0.23.1, gemini-cli 0.61.0, codex-acp 0.16.0, run offline
against scripted models) is the JSON-RPC traffic of one real run, every frame as the agent
sent it. Every agent->client `session/update` goes through `chunk_from_update` and
`Store.apply`, exactly as the engine feeds them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from store import ViewTranscript, chunk_from_update
from store.store import Store

ALL_CAPTURES = sorted((Path(__file__).parents[1] / "captures").glob("*.jsonl"))
CAPTURES = [c for c in ALL_CAPTURES if '"method": "session/load"' not in c.read_text()]
"""The captures of a session from its start. One that reloads a session replays history
the store must hold first: tests/support/late_replay.py stores it, tests/test_*_late_replay.py play it."""
TEXT_KINDS = {
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "user_message_chunk": "user",
}
METADATA = {
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
}


def frames_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def expected_messages(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """What a reader of the capture sees: the prompt, each maximal run of same-kind text
    chunks (minus empty block openers) as one message, and one entry per tool call.
    Session metadata (a command list, usage) is not part of the transcript: a run of text
    goes on across it."""
    messages: list[tuple[str, str]] = []
    tools: set[str] = set()
    open_kind = None
    for record in records:
        frame = record["frame"]
        if frame.get("method") == "session/prompt":
            messages.append(("user", "".join(b.get("text", "") for b in frame["params"]["prompt"])))
            open_kind = None
        if frame.get("method") != "session/update":
            continue
        update = frame["params"]["update"]
        if update["sessionUpdate"] in METADATA:
            continue
        kind = TEXT_KINDS.get(update["sessionUpdate"])
        text = update.get("content", {}).get("text", "") if kind else ""
        if kind and not text:
            continue
        if kind and kind == open_kind:
            messages[-1] = (kind, messages[-1][1] + text)
        elif kind:
            messages.append((kind, text))
            open_kind = kind
        else:
            open_kind = None
            tool = update.get("toolCallId")
            if tool and tool not in tools:
                tools.add(tool)
                messages.append(("tool", ""))
    return messages


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.stem for c in CAPTURES])
async def test_a_recorded_session_folds_into_one_row_per_message(
    store: Store, capture: Path
) -> None:
    records = frames_of(capture)
    session = (await store.create_session(agent=capture.stem, command=["x"], cwd="/")).id
    view = ViewTranscript()
    for record in records:
        frame = record["frame"]
        method = frame.get("method")
        if method == "session/prompt":
            text = "".join(block.get("text", "") for block in frame["params"]["prompt"])
            _, frames = await store.begin_turn(session, text)
        elif method == "session/update":
            frames = await store.apply(chunk_from_update(session, frame["params"]["update"]))
        else:
            if "stopReason" in frame.get("result", {}):
                await store.end_turn(session)
            frames = []
        for live in frames:
            view.apply(live)
    rows = await store.all_rows(session)
    expected = expected_messages(records)
    assert [(r.kind, r.text if r.kind != "tool" else "") for r in rows] == expected
    assert all(r.text or r.kind == "tool" for r in rows), "an empty bubble"
    assert [(b.key, b.text) for b in view] == [(r.key, r.text) for r in rows]
    calls = {
        r["frame"]["params"]["update"].get("toolCallId")
        for r in records
        if r["frame"].get("method") == "session/update"
        and r["frame"]["params"]["update"]["sessionUpdate"] in ("tool_call", "tool_call_update")
    }
    tools = [r for r in rows if r.kind == "tool"]
    assert len(tools) == len(calls)
    assert all(r.payload and r.payload.get("status") == "completed" for r in tools)
    stored = await store.get_session(session)
    assert stored is not None
    assert stored.commands or stored.usage


async def test_codex_final_update_keeps_its_raw_output(store: Store) -> None:
    capture = next(c for c in CAPTURES if c.stem == "codex-acp-tool-write-permission")
    session = (await store.create_session(agent="codex", command=["codex-acp"], cwd="/")).id
    for record in frames_of(capture):
        if record["frame"].get("method") == "session/update":
            await store.apply(chunk_from_update(session, record["frame"]["params"]["update"]))
    (tool,) = [r for r in await store.all_rows(session) if r.kind == "tool"]
    assert tool.payload is not None
    assert "rawOutput" in tool.payload
    assert tool.payload["content"][0]["type"] == "diff"
