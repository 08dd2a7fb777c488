"""An agent that completes the handshake and then sends hundreds of seeded hostile lines
(`tiny_agent.hostile_lines`): through `cockpit run`, the engine and the TUI, nothing
crashes or hangs, every valid chunk is stored in order, every request the SDK refuses is
a row, and the session takes the next prompt. A longer run:
`.venv/bin/python -m tests.support.hostile --lines 10000`."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from acp.schema import ReadTextFileRequest, RequestPermissionRequest, WriteTextFileRequest
from pydantic import BaseModel, ValidationError

from cockpit.api import AgentSpec, Status
from cockpit.ui.transcript import TranscriptView
from store import Row
from tests.cli.test_cli import cockpit
from tests.engine.test_engine_restart import TINY
from tests.support.engine_helpers import assert_live_equals_stored, open_engine, rows_of
from tests.support.tiny_agent import hostile_lines
from tests.support.ui_helpers import make_app, send, settled, wait_until

LINES = 600

LISTED = 100
"""Refused requests listed one row each in a turn; a row counts the rest."""

SDK_MODELS: Mapping[str, type[BaseModel]] = {
    "session/request_permission": RequestPermissionRequest,
    "fs/read_text_file": ReadTextFileRequest,
    "fs/write_text_file": WriteTextFileRequest,
}
"""The SDK's models for the requests among the hostile lines that a client serves."""

UNKNOWN_CONTENT = "[unknown content]"
"""What a content block without a type reads as (`store.chunks.content_text`)."""


def valid_words(count: int) -> str:
    """The text the valid chunks among the hostile lines carry, in order."""
    return "".join(f"w{number} " for number in range(count))


def agent_text(rows: list[Row] | list[tuple[str, str]]) -> str:
    """The agent's text in these rows, without the placeholders for content blocks of a
    type Cockpit does not know (an object with the wrong fields reads as one)."""
    pairs = [(r.kind, r.text) if isinstance(r, Row) else r for r in rows]
    text = "".join(text for kind, text in pairs if kind == "agent")
    return text.replace(UNKNOWN_CONTENT, "")


def told_count(text: str) -> int:
    """The number of valid chunks the agent says it sent."""
    return int(text.rsplit("still here after ", 1)[1].split()[0])


def refused_by_the_sdk(prompt: str, session_id: str) -> list[str]:
    """The methods of the requests among the hostile lines of `prompt` that the SDK
    answers with an error by itself: params off its model, or a method no client serves."""
    settings = dict(word.split("=", 1) for word in prompt.split() if "=" in word)
    lines = hostile_lines(
        int(settings.get("seed", "0")),
        session_id,
        int(settings.get("n", "500")),
        int(settings.get("huge", "1000000")),
    )
    methods = []
    for line in lines:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            continue
        request_id = message.get("id")
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            continue  # no request, or one the transport drops
        model = SDK_MODELS.get(message["method"])
        try:
            if model is not None:
                model.model_validate(message.get("params"))
                continue
        except ValidationError:
            pass
        methods.append(message["method"])
    return methods


def check_refused_rows(rows: Sequence[tuple[str, str, Any]], expected: list[str]) -> None:
    """Each request the SDK refused left a row, in order, of (kind, text, payload) rows;
    past LISTED refused requests in the turn, the rest are counted in one row."""
    payloads = [payload if isinstance(payload, dict) else {} for _, _, payload in rows]
    screened = [p["method"] for p in payloads if p.get("answer")]
    counts = [p["refusedCount"] for p in payloads if p.get("refusedCount")]
    listed = [text for _, text, _ in rows if text.startswith("Refused")]
    assert expected, "the hostile lines hold requests the SDK refuses"
    if not counts:
        assert screened == expected
    else:  # the file requests Cockpit refused itself are counted there too
        (count,) = counts
        assert len(listed) == LISTED and screened == expected[: len(screened)]
        assert len(screened) + count >= len(expected)


@pytest.mark.parametrize("seed", [1, 2])
def test_cockpit_run_survives_hostile_lines_and_stores_every_valid_chunk(
    tmp_path: Path, seed: int
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    command = f"{sys.executable} {TINY}"
    started = time.monotonic()
    prompt = f"hostile n={LINES} seed={seed} huge=1000000"
    result = cockpit(home, "run", "--cwd", str(project), "--agent-cmd", command, prompt)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 60
    assert "Traceback" not in result.stderr and result.stderr == ""
    with sqlite3.connect(home / "cockpit.db") as db:
        stored = db.execute("SELECT kind, text, payload FROM messages ORDER BY seq").fetchall()
        (agent_session_id,) = db.execute("SELECT agent_session_id FROM sessions").fetchone()
        (integrity,) = db.execute("PRAGMA integrity_check").fetchone()
    assert integrity == "ok"
    rows = [(kind, text) for kind, text, _ in stored]
    text = agent_text(rows)
    count = told_count(text)
    assert count > LINES // 8
    assert text == valid_words(count) + f"still here after {count} valid chunks"
    assert not (project.parent / "outside.txt").exists()
    check_refused_rows(
        [(kind, text, json.loads(payload or "null")) for kind, text, payload in stored],
        refused_by_the_sdk(prompt, agent_session_id),
    )


async def test_the_engine_survives_hostile_lines_and_the_session_takes_the_next_prompt(
    tmp_path: Path,
) -> None:
    await engine_takes_hostile_lines(tmp_path, f"hostile n={LINES} seed=3", short=True)


async def engine_takes_hostile_lines(tmp_path: Path, prompt: str, short: bool = False) -> None:
    """The engine takes the `hostile` prompt and then the next one; every valid chunk is
    stored in order, and each kind of refusal leaves a notice (also run by tests.support.hostile)."""
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home") as (engine, recorder):
        spec = AgentSpec(name="tiny", command=(sys.executable, TINY))
        record = await engine.create_session(spec, project)
        assert await engine.prompt(record.id, prompt) == "end_turn"
        assert await engine.prompt(record.id, "hello") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert rows[-1].text == "ok"
        text = agent_text(rows[:-1])
        count = told_count(text)
        assert text == valid_words(count) + f"still here after {count} valid chunks"
        notices = [r.text for r in rows if r.kind == "notice"]
        assert any("nested too deeply" in n for n in notices)
        assert any("currentModeId" in n for n in notices)
        session = await engine.session(record.id)
        check_refused_rows(
            [(r.kind, r.text, r.payload) for r in rows],
            refused_by_the_sdk(prompt, session.agent_session_id or ""),
        )
        assert not recorder.asked  # not one of them became a question
        # Only values of the right shape were kept (a long run holds valid ones too).
        assert isinstance((session.modes or {}).get("currentModeId", ""), str)
        assert all(isinstance(c.get("input") or {}, dict) for c in session.commands or ())
        if short:  # the last command list is the one that crashed the app once
            assert [c.get("input") for c in session.commands or ()] == [None, {"hint": "what"}]
        assert_live_equals_stored(recorder, record.id, rows)


async def test_the_tui_survives_hostile_lines_and_completes_commands_after_them(
    tmp_path: Path,
) -> None:
    """Typing `/` after a command list whose entry has a string for its input ended the
    app; so did a metadata flush that could not bind a mode id that was an object."""
    await tui_takes_hostile_lines(tmp_path, f"hostile n={LINES} seed=4")


async def tui_takes_hostile_lines(tmp_path: Path, prompt: str, timeout: float = 60) -> None:
    """The TUI takes the `hostile` prompt, completes `/` and takes the next prompt (also
    run by tests.support.hostile)."""
    config = tmp_path / "home" / "config"
    config.mkdir(parents=True)
    (config / "agents.toml").write_text(
        f'[agents.tiny]\ncommand = ["{sys.executable}", "{TINY}"]\n'
    )
    app = make_app(tmp_path, agent="tiny")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        session = app.current or ""
        await send(app, pilot, prompt)
        await wait_until(lambda: any("still here" in r for r in shown_texts(app)), timeout=timeout)
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        view = app.query_one(TranscriptView)
        await wait_until(  # a turn of hundreds of rows mounts no more (once the last is in)
            lambda: len(view.model) <= view.limit, what="the window bound to its limit"
        )
        await pilot.press("slash", "w", "e")
        await settled(pilot)
        assert app.is_running
        await pilot.press("ctrl+a", "ctrl+k", *"hello", "enter")
        await wait_until(lambda: shown_texts(app)[-1:] == ["ok"], timeout=30)
        assert app.is_running


def shown_texts(app: object) -> list[str]:
    view = app.query_one(TranscriptView)  # type: ignore[attr-defined]
    return [bubble.text for bubble in view.model]


async def test_an_agent_that_closes_its_output_and_lives_on_ends_the_turn(
    tmp_path: Path,
) -> None:
    """The turn waited for the agent to exit, and an agent that closed its output but went
    on running held it, and `cockpit run`, forever."""
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home") as (engine, _):
        spec = AgentSpec(name="tiny", command=(sys.executable, TINY))
        record = await engine.create_session(spec, project)
        started = time.monotonic()
        assert await engine.prompt(record.id, "close-stdout") == "error"
        assert time.monotonic() - started < 20
        live = engine._live[record.id]
        assert live.process is not None and live.process.returncode is not None
        texts = [r.text for r in await rows_of(engine, record.id)]
        assert "closing" in texts
        assert any(t.startswith("The connection to the agent broke") for t in texts)
        assert await engine.prompt(record.id, "hello") == "end_turn"  # it starts again
        assert (await rows_of(engine, record.id))[-1].text == "ok"


async def test_every_file_request_cockpit_refuses_leaves_a_row(tmp_path: Path) -> None:
    """A FIFO was read forever; a 2 GB sparse file and the folder itself were refused in
    silence."""
    project = tmp_path / "project"
    project.mkdir()
    os.mkfifo(project / "pipe")
    with open(project / "sparse", "wb") as handle:
        handle.truncate(2 * 1024**3)
    async with open_engine(tmp_path / "home") as (engine, _):
        spec = AgentSpec(name="tiny", command=(sys.executable, TINY))
        record = await engine.create_session(spec, project)
        for name in ("pipe", "sparse", "."):
            turn = engine.prompt(record.id, f"read={name}")
            assert await asyncio.wait_for(turn, 20) == "end_turn"
        rows = await rows_of(engine, record.id)
        replies = [r.text for r in rows if r.kind == "agent"]
        assert all(reply.startswith("read failed: ") for reply in replies) and len(replies) == 3
        refused = [r.text for r in rows if r.text.startswith("Refused the agent's read of")]
        assert len(refused) == 3
        assert "not a regular file" in refused[0] and "2,147,483,648 bytes" in refused[1]
        assert "is a folder" in refused[2]
