"""A disk that fills while a reply streams, at the store: SQLite's own SQLITE_FULL (see
tests/support/full_disk.py). A failed write loses nothing: what it held stays in memory, reads
still show it, the store says so once, and it is written when room returns, by the store
itself, next to everything stored before, which stays as it was."""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.cli.exits import saving_message
from cockpit.ui.session_states import quit_question
from cockpit.ui.status_rules import fit_status, status_parts
from store.store import Store
from store.workload import markdown_reply
from store.writer import RETRY_LIMIT, retry_delay
from tests.support.full_disk import fill, free
from tests.support.helpers import feed, new_session, pieces, reply, session_record, texts, update
from tests.support.waiting import eventually

FULL = "database or disk is full"


def on_disk(path: Path) -> list[tuple[object, ...]]:
    """(kind, text) of every row the database file holds, read by another connection."""
    with sqlite3.connect(path) as db:
        return db.execute("SELECT kind, text FROM messages ORDER BY seq").fetchall()


def long_reply(seed: int = 5, size: int = 60_000) -> str:
    return markdown_reply(random.Random(seed), size)


async def wait_for(condition: Callable[[], bool], seconds: float = 10) -> None:
    await eventually(condition, seconds)


async def close_anyway(store: Store) -> None:
    with contextlib.suppress(sqlite3.Error):
        await store.close()


# -- the pure rule ------------------------------------------------------------------------------


@given(st.floats(0, 10_000), st.integers(0, 10_000))
def test_a_retry_waits_longer_each_time_up_to_a_bound_and_never_not_at_all(
    interval: float, failures: int
) -> None:
    delay = retry_delay(interval, failures)
    if failures == 0:
        assert delay == interval
        return
    assert interval <= delay <= max(interval, RETRY_LIMIT)
    assert delay > 0  # a store that flushes at once does not spin on a full disk
    assert retry_delay(interval, failures + 1) >= delay
    assert retry_delay(interval, failures + 64) == max(interval, RETRY_LIMIT)


@given(st.text(max_size=80), st.sampled_from(["ready", "working", "waiting"]), st.integers(9, 300))
def test_a_store_that_cannot_write_is_the_first_thing_the_status_line_says(
    why: str, live: str, width: int
) -> None:
    parts = status_parts(session_record(), "Demo agent", live, not_saved=why)
    assert fit_status(parts, width).startswith("NOT SAVED")
    assert not fit_status(status_parts(session_record(), "Demo agent", live), width).startswith(
        "NOT SAVED"
    )


def test_quitting_while_the_transcript_is_not_saved_is_asked_first() -> None:
    assert quit_question(0, 0) is None
    assert quit_question(0, 0, FULL) == (
        f"Quit Cockpit? the transcript is not saved ({FULL}); what is not saved is lost."
    )
    assert quit_question(1, 0, FULL) == (
        f"Quit Cockpit? 1 turn is running and the transcript is not saved ({FULL}); every "
        "agent stops with it and what is not saved is lost."
    )


def test_cockpit_run_says_whether_a_full_disk_lost_anything() -> None:
    assert saving_message(FULL, (0, 0)) == (
        f"the transcript could not be saved for a while ({FULL}); all of it is saved now"
    )
    assert saving_message(FULL, (1, 600_000)) == (
        f"the transcript could not be saved ({FULL}): 1 message (600,000 characters) could "
        "not be stored in full"
    )
    assert "3 messages (12 characters)" in saving_message(FULL, (3, 12))


# -- the store ----------------------------------------------------------------------------------


async def test_a_flush_on_a_full_disk_fails_with_its_own_error_and_loses_nothing(
    tmp_path: Path,
) -> None:
    """A reply, a draft and a mode in one transaction: the draft did not fit, SQLite rolled
    the transaction back by itself (SQLITE_FULL outside a statement journal), the ROLLBACK
    after it failed ("cannot rollback - no transaction is active") and hid why, and the
    session updates of that flush were dropped."""
    path = tmp_path / "c.db"
    store = await Store.open(path, flush_interval=3600)
    try:
        session = await new_session(store)
        await store.begin_turn(session, "write a lot")
        await feed(store, [reply(session, p) for p in pieces("a reply that was stored, ")])
        await store.flush()
        await fill(store)
        await feed(store, [reply(session, p) for p in pieces("and its end")])
        store.mark(session, draft="a long draft " * 3000)
        await feed(store, [update(session, sessionUpdate="current_mode_update", currentModeId="x")])
        with pytest.raises(sqlite3.OperationalError, match=FULL):
            await store.flush()
        stored = [("user", "write a lot"), ("agent", "a reply that was stored, ")]
        assert on_disk(path) == stored
        await free(store)
        await store.flush()
        assert on_disk(path) == [stored[0], ("agent", "a reply that was stored, and its end")]
        record = await store.get_session(session)
        assert record is not None and record.modes == {"currentModeId": "x"}
        assert record.draft == "a long draft " * 3000
    finally:
        await close_anyway(store)


async def test_what_a_full_disk_held_back_is_written_by_the_store_itself_when_room_returns(
    tmp_path: Path,
) -> None:
    """The agent has stopped sending: no chunk comes to schedule another flush, and a timed
    flush that failed was the last word."""
    path = tmp_path / "c.db"
    store = await Store.open(path, flush_interval=0.02)
    try:
        session = await new_session(store)
        await store.begin_turn(session, "write a lot")
        await fill(store)
        failing = asyncio.Event()

        def watch(error: Exception | None) -> None:
            if error is not None:
                failing.set()

        store.watch_writes(watch)
        text = long_reply(7)
        await feed(store, [reply(session, p) for p in pieces(text)])
        await asyncio.wait_for(failing.wait(), 10)  # a timed flush failed
        assert on_disk(path) == [("user", "write a lot")]
        await free(store)
        await wait_for(lambda: on_disk(path) == [("user", "write a lot"), ("agent", text)])
    finally:
        await close_anyway(store)


async def test_reads_go_on_while_the_disk_is_full(tmp_path: Path) -> None:
    """A read writes waiting metadata first (read-your-writes): on a full disk that write
    failed, and so did the read, and every read after it (the app could not list its
    sessions)."""
    path = tmp_path / "c.db"
    store = await Store.open(path, flush_interval=3600)
    try:
        session = await new_session(store)
        await fill(store)
        store.mark(session, draft="half a prompt " * 2000)
        await feed(store, [reply(session, "a reply " * 2000)])
        record = await store.get_session(session)
        assert record is not None and record.draft == ""
        assert [r.id for r in await store.list_sessions()] == [session]
        assert texts(await store.all_rows(session)) == [("agent", "a reply " * 2000)]
        await free(store)
        await store.flush()
        record = await store.get_session(session)
        assert record is not None and record.draft == "half a prompt " * 2000
    finally:
        await close_anyway(store)


async def test_a_full_disk_is_told_once_and_so_is_its_end(tmp_path: Path) -> None:
    """Watchers hear the first failure and the flush that wrote everything, nothing in
    between; sealed messages stored before, and one sealed while the disk was full, end up
    whole and in order."""
    path = tmp_path / "c.db"
    store = await Store.open(path, flush_interval=3600)
    heard: list[Exception | None] = []
    store.watch_writes(heard.append)
    try:
        session = await new_session(store)
        await store.begin_turn(session, "first")
        await feed(store, [reply(session, p) for p in pieces("a sealed reply, stored")])
        await store.end_turn(session)
        await store.begin_turn(session, "second")
        await fill(store)
        text = long_reply(9)
        await feed(store, [reply(session, p) for p in pieces(text)])
        tool = update(session, sessionUpdate="tool_call", toolCallId="t1", title="Read a file")
        with pytest.raises(sqlite3.OperationalError, match=FULL):
            await store.apply(tool)  # it seals the reply, which cannot be written
        assert isinstance(store.failure, sqlite3.OperationalError)
        assert heard == [store.failure]
        assert store.unwritten() == (2, len(text))
        for _ in range(3):
            with pytest.raises(sqlite3.OperationalError, match=FULL):
                await store.flush()
        assert len(heard) == 1
        before = [("user", "first"), ("agent", "a sealed reply, stored"), ("user", "second")]
        assert on_disk(path) == before
        await free(store)
        await store.flush()
        assert heard[1:] == [None] and store.failure is None
        assert store.unwritten() == (0, 0)
        assert on_disk(path) == [*before, ("agent", text), ("tool", "")]
    finally:
        await close_anyway(store)


async def test_closing_on_a_disk_that_stays_full_says_why_and_what_it_loses(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    store = await Store.open(path, flush_interval=3600)
    session = await new_session(store)
    await store.begin_turn(session, "write a lot")
    await fill(store)
    text = long_reply(11)
    await feed(store, [reply(session, p) for p in pieces(text)])
    await feed(store, [update(session, sessionUpdate="current_mode_update", currentModeId="x")])
    with pytest.raises(sqlite3.OperationalError, match=FULL):
        await store.close()
    assert store.unwritten() == (1, len(text))
    assert on_disk(path) == [("user", "write a lot")]
    async with await Store.open(path) as reopened:  # closed: nothing holds the file
        assert texts(await reopened.all_rows(session)) == [("user", "write a lot")]


async def test_session_changes_on_a_full_disk_are_held_and_land_in_the_order_asked(
    tmp_path: Path,
) -> None:
    """A status or title that could not be written was lost: a "ready" never saved left
    "working" stored, and the next start said the turn had stopped midway. Held in line,
    an older change never lands after a newer one either."""
    path = tmp_path / "c.db"
    store = await Store.open(path, flush_interval=3600)
    try:
        session = await new_session(store)
        await store.update_session(session, status="working")
        await fill(store)
        long_title = "a title that does not fit " * 4000
        await store.update_session(session, status="waiting", title=long_title)  # no room
        assert isinstance(store.failure, sqlite3.OperationalError)
        await store.update_session(session, status="ready")  # would fit: waits its turn
        record = await store.get_session(session)
        assert record is not None and record.status == "working"  # what the disk holds
        await free(store)
        await store.flush()
        record = await store.get_session(session)
        assert record is not None
        assert (record.status, record.title) == ("ready", long_title)
    finally:
        await close_anyway(store)
