"""The chunk log on disk (`store.chunk_log`): committed on append, owner-only, calls and
contexts recorded so a request can be rebuilt exactly."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

from store import entries as e
from store.chunk_log import ChunkLog, ChunkLogError, log_path
from store.requests import RequestSpec, compose_request

ROOT = Path(__file__).resolve().parents[2]
SPEC = RequestSpec("claude-test", 500, "system text", ({"name": "t", "input_schema": {}},))


async def test_entries_round_trip_and_seq_continues_after_reopening(tmp_path: Path) -> None:
    path = log_path(tmp_path, "abc")
    log = await ChunkLog.open(path)
    first = await log.append("t1", 0, e.user_text("hello", "u1"))
    await log.append("t1", 1, e.thinking("", "sig", "m1"))
    await log.append("t1", 1, e.tool_call("c1", "read_file", {"path": "a", "n": [1, 2]}))
    await log.set_meta(cwd="/x", mode="ask")
    in_memory = [first, *(await log.entries())[1:]]
    await log.close()
    reopened = await ChunkLog.open(path)
    stored = await reopened.entries()
    assert stored == in_memory
    assert [entry.seq for entry in stored] == [1, 2, 3]
    assert await reopened.meta() == {"cwd": "/x", "mode": "ask"}
    assert (await reopened.append("t2", 0, e.user_text("again", "u2"))).seq == 4
    assert [entry.seq for entry in await reopened.entries(upto=2)] == [1, 2]
    await reopened.close()
    assert path == tmp_path / "claude-agent" / "abc.db"
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_session_id_must_be_a_plain_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a session id"):
        log_path(tmp_path, "../escape")


async def test_a_missing_log_is_not_created_when_reading(tmp_path: Path) -> None:
    with pytest.raises(ChunkLogError, match="no chunk log"):
        await ChunkLog.open(tmp_path / "missing.db", create=False)
    assert not (tmp_path / "missing.db").exists()


async def test_a_log_from_a_newer_cockpit_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE future (x)")
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    path.chmod(0o644)
    before = path.read_bytes()
    with pytest.raises(ChunkLogError, match="newer Cockpit"):
        await ChunkLog.open(path)
    assert path.read_bytes() == before
    assert path.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["newer.db"]
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    db.close()


async def test_calls_record_what_rebuilds_the_exact_request(tmp_path: Path) -> None:
    log = await ChunkLog.open(tmp_path / "s.db")
    await log.append("t", 0, e.user_text("q", "u"))
    sent = compose_request(await log.entries(), SPEC)
    number = await log.begin_call("t", 1, log.last_seq, SPEC)
    await log.append("t", 1, e.assistant_text("a", "m"))
    await log.end_call(
        number,
        status="ok",
        stop_reason="end_turn",
        response={"content": [{"type": "text", "text": "a"}]},
        usage={"input_tokens": 3, "output_tokens": 1},
    )
    other = RequestSpec("claude-test", 500, "another system", ())
    second = await log.begin_call("t", 2, log.last_seq, other)
    (call, running) = await log.calls()
    assert (call.number, call.status, call.upto, call.usage) == (
        1,
        "ok",
        1,
        {"input_tokens": 3, "output_tokens": 1},
    )
    assert (running.number, running.status, running.ended) == (second, "running", None)
    rebuilt = compose_request(await log.entries(call.upto), await log.spec_of(call))
    assert json.dumps(rebuilt) == json.dumps(sent)
    assert (await log.spec_of(running)).system == "another system"
    with pytest.raises(ValueError, match="call state"):
        await log.end_call(second, status="finished")
    await log.close()


CRASHER = textwrap.dedent(
    """
    import asyncio, os, sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from store import entries as e
    from store.chunk_log import ChunkLog

    async def main():
        log = await ChunkLog.open(Path({path!r}))
        await log.append("t", 0, e.user_text("prompt", "u"))
        await log.append("t", 1, e.assistant_text("sealed block", "m"))
        os._exit(9)  # dies with a block open: nothing closed, nothing flushed by hand

    asyncio.run(main())
    """
)


async def test_a_crash_keeps_every_sealed_block(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    script = CRASHER.format(root=str(ROOT), path=str(path))
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stderr=asyncio.subprocess.PIPE
    )
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 9, stderr
    log = await ChunkLog.open(path)
    assert [entry.data.get("text") for entry in await log.entries()] == ["prompt", "sealed block"]
    await log.close()
    assert os.stat(path).st_mode & 0o077 == 0
