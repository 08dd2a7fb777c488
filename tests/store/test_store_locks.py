"""Two writers on one database: a session is written by one Store at a time (a lock per
session), other sessions stay free, and a write never overwrites another writer's row."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import stat
import sys
from pathlib import Path

import pytest

from store import SessionBusy, WriteConflict, note
from store.locks import SessionLocks
from store.store import Store
from tests.support.helpers import feed, new_session, reply, texts, update

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import asyncio, sys
from store import note
from store.store import Store

async def main(path, session, count):
    async with await Store.open(path) as store:
        await store.begin_turn(session, "child")
        print("READY", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        for n in range(count):
            await store.apply(note(session, "notice", f"child {n}"))
        print("DONE", flush=True)
        await asyncio.to_thread(sys.stdin.readline)

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def stored(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        rows = db.execute(sql).fetchall()
    db.close()
    return rows


async def test_a_second_store_cannot_write_a_session_the_first_writes(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    a = await Store.open(path)
    b = await Store.open(path)  # one process, two open lock files: flock still excludes
    try:
        session = await new_session(a)
        other = await new_session(a)
        await a.begin_turn(session, "A1")
        with pytest.raises(SessionBusy, match=rf"Session {session} is open in another Cockpit"):
            await b.begin_turn(session, "B1")
        with pytest.raises(SessionBusy) as busy:
            await b.apply(note(session, "notice", "B1"))
        assert busy.value.session == session
        assert f"process {os.getpid()}" in str(busy.value)
        with pytest.raises(SessionBusy):
            await b.delete_session(session)
        await a.apply(note(session, "notice", "A2"))
        # Reading takes no lock; another session is free to write.
        assert texts((await b.page_before(session)).rows) == [("user", "A1"), ("notice", "A2")]
        assert {s.id for s in await b.list_sessions()} == {session, other}
        await b.begin_turn(other, "B on its own session")
        await a.apply(note(session, "notice", "A3"))
    finally:
        await a.close()
    # A closed store has let go: the other continues the session after its last row.
    _, frames = await b.begin_turn(session, "B at last")
    assert frames[0].seq == 4
    await b.close()
    assert stored(path, f"SELECT seq, text FROM messages WHERE session = '{session}'") == [
        (1, "A1"),
        (2, "A2"),
        (3, "A3"),
        (4, "B at last"),
    ]


async def test_the_lock_file_is_owner_only_and_goes_with_its_store(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path) as store:
        session = await new_session(store)
        lock = SessionLocks(path).path(session)
        assert not lock.exists()  # creating a session does not write it
        await store.begin_turn(session, "go")
        assert lock.parent == tmp_path / "locks"
        assert stat.S_IMODE(lock.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600
        assert lock.read_text() == f"{os.getpid()}\n"
    assert not lock.exists()


async def test_release_hands_a_session_over(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path, flush_interval=3600) as a, await Store.open(path) as b:
        session = await new_session(a)
        await a.begin_turn(session, "first")
        await feed(a, [reply(session, "an answer still open")])
        await a.release(session)  # the open answer is written, the session let go
        _, frames = await b.begin_turn(session, "second")
        assert frames[0].seq == 3
        with pytest.raises(SessionBusy):
            await a.apply(reply(session, "too late"))
        assert texts(await b.all_rows(session)) == [
            ("user", "first"),
            ("agent", "an answer still open"),
            ("user", "second"),
        ]


async def test_a_session_another_process_writes_is_busy_and_others_stay_free(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    count = 150
    store = await Store.open(path)
    try:
        theirs = await new_session(store)
        ours = await new_session(store)
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CHILD,
            str(path),
            theirs,
            str(count),
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert child.stdin is not None
        assert child.stdout is not None
        try:
            assert await asyncio.wait_for(child.stdout.readline(), 30) == b"READY\n"
            with pytest.raises(SessionBusy, match=rf"{theirs} is open in another Cockpit"):
                await store.begin_turn(theirs, "mine too?")
            with pytest.raises(SessionBusy, match=f"process {child.pid}"):
                await store.apply(note(theirs, "notice", "mine too?"))
            # Both processes write at once, each its own session: SQLite serialises them.
            child.stdin.write(b"go\n")
            await child.stdin.drain()
            for n in range(count):
                await store.apply(note(ours, "notice", f"parent {n}"))
            assert await asyncio.wait_for(child.stdout.readline(), 30) == b"DONE\n"
            with pytest.raises(SessionBusy):
                await store.begin_turn(theirs, "still theirs")
            child.stdin.write(b"done\n")
            await child.stdin.drain()
            assert await asyncio.wait_for(child.wait(), 30) == 0
        finally:
            if child.returncode is None:
                child.kill()
                await child.wait()
        assert texts(await store.all_rows(theirs)) == [
            ("user", "child"),
            *(("notice", f"child {n}") for n in range(count)),
        ]
        assert texts(await store.all_rows(ours)) == [
            ("notice", f"parent {n}") for n in range(count)
        ]
        # The child has exited: the session is free, and continues after the child's rows.
        _, frames = await store.begin_turn(theirs, "mine now")
        assert frames[0].seq == count + 2
    finally:
        await store.close()


@pytest.fixture
def no_session_locks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two writers of one session, as if the lock were not there (or not honoured)."""
    monkeypatch.setattr(SessionLocks, "claim", lambda self, session: True)


@pytest.mark.usefixtures("no_session_locks")
async def test_a_write_never_overwrites_another_writers_row(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    a = await Store.open(path, flush_interval=3600)
    b = await Store.open(path, flush_interval=3600)
    try:
        session = await new_session(a)
        await a.apply(note(session, "notice", "A1"))
        await b.apply(note(session, "notice", "B1"))  # b reads where the session ends: seq 2
        with pytest.raises(WriteConflict, match=rf"Session {session} .* at seq 2\."):
            await a.apply(note(session, "notice", "A2"))  # a's memory also says seq 2
        assert stored(path, "SELECT seq, text FROM messages") == [(1, "A1"), (2, "B1")]
        await b.close()
        with pytest.raises(WriteConflict):
            await a.close()  # its last flush still finds B1 there, and leaves it
        assert stored(path, "SELECT seq, text FROM messages") == [(1, "A1"), (2, "B1")]
    finally:
        for store in (a, b):
            with contextlib.suppress(WriteConflict):
                await store.close()


@pytest.mark.usefixtures("no_session_locks")
async def test_an_update_never_overwrites_a_row_with_another_key(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path, flush_interval=3600) as store:
        session = await new_session(store)
        await store.apply(
            update(
                session, sessionUpdate="tool_call", toolCallId="t", title="Run", status="pending"
            )
        )
        await store.flush()
        with sqlite3.connect(path) as db:  # another writer puts its own message at seq 1
            db.execute(
                "UPDATE messages SET key = 'agent:0:@1', kind = 'agent', payload = NULL,"
                " text = 'theirs' WHERE seq = 1"
            )
        db.close()
        await store.apply(
            update(session, sessionUpdate="tool_call_update", toolCallId="t", status="completed")
        )
        with pytest.raises(WriteConflict, match="at seq 1"):
            await store.flush()
        assert stored(path, "SELECT seq, key, text FROM messages") == [(1, "agent:0:@1", "theirs")]
        with pytest.raises(WriteConflict):
            await store.close()
    assert stored(path, "SELECT seq, key, text FROM messages") == [(1, "agent:0:@1", "theirs")]


async def test_a_session_held_by_a_live_process_names_it_and_a_dead_one_does_not(
    tmp_path: Path,
) -> None:
    """`writer_elsewhere` reads the holder from the lock file without locking it: a live
    holder is named, the store's own lock and a holder killed with its file left are not."""
    path = tmp_path / "c.db"
    store = await Store.open(path)
    try:
        theirs = await new_session(store)
        ours = await new_session(store)
        await store.begin_turn(ours, "mine")
        assert store.writer_elsewhere(ours) is None  # held here, not elsewhere
        assert store.writer_elsewhere(theirs) is None  # held by no one
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CHILD,
            str(path),
            theirs,
            "0",
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert child.stdout is not None
        try:
            assert await asyncio.wait_for(child.stdout.readline(), 30) == b"READY\n"
            assert store.writer_elsewhere(theirs) == child.pid
        finally:
            child.kill()
            await child.wait()
        assert SessionLocks(path).path(theirs).exists(), "the killed holder's file is gone"
        assert store.writer_elsewhere(theirs) is None  # its file stays; its pid is dead
        await store.begin_turn(theirs, "mine now")  # and the session is free
    finally:
        await store.close()
