"""A writer killed with SIGKILL mid-stream loses no sealed message and corrupts nothing."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from store.store import Store
from tests.support.crash_writer import SESSION, message

ROOT = Path(__file__).resolve().parents[2]


def test_sigkill_mid_stream_keeps_every_sealed_row(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.support.crash_writer", str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    sealed: list[str] = []
    flushed: dict[str, int] = {}
    deadline = time.monotonic() + 60
    try:
        assert child.stdout is not None
        while time.monotonic() < deadline:
            line = child.stdout.readline()
            assert line, "the writer died on its own"
            word, key, *rest = line.split()
            if word == "SEALED":
                sealed.append(key)
            else:
                flushed[key] = int(rest[0])
            # Kill in the middle of a message, after some of it was flushed.
            if len(sealed) >= 4 and key not in sealed and flushed.get(key, 0) > 400:
                break
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert len(sealed) >= 4, "the writer was too slow to reach the kill point"

    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = db.execute(
            "SELECT seq, key, kind, text FROM messages WHERE session = ? ORDER BY seq", (SESSION,)
        ).fetchall()
    keys = [key for _, key, _, _ in rows]
    assert len(keys) == len(set(keys)), "a row was duplicated"
    replies = {key: text for _, key, kind, text in rows if kind == "agent"}
    for number, key in enumerate(sealed, start=1):
        assert replies[key] == message(number), f"sealed message {number} was damaged"
    open_key = max(flushed, key=lambda key: int(key.rsplit("@", 1)[1]))
    assert open_key not in sealed
    expected = message(len(sealed) + 1)
    held = replies[open_key]
    assert expected.startswith(held), "the open message holds text that was never sent"
    assert len(held) >= flushed[open_key], "the open message lost what a flush had written"
    prompts = [text for _, _, kind, text in rows if kind == "user"]
    assert prompts == [f"prompt {n}" for n in range(1, len(sealed) + 2)]


async def test_a_killed_store_reopens_and_continues(tmp_path: Path) -> None:
    test_sigkill_mid_stream_keeps_every_sealed_row(tmp_path)
    async with await Store.open(tmp_path / "c.db") as store:
        before = await store.all_rows(SESSION)
        turn, frames = await store.begin_turn(SESSION, "after the crash")
        assert frames[0].seq == before[-1].seq + 1
        assert turn == before[-1].turn + 1
