"""The store read on its own (`store.readonly`), as `cockpit ls` and `show` read it with no
service: it reads what the store wrote, beside a writer or after one, from any schema this
Cockpit knows, and writes nothing at all: no byte of the file, no -wal or -shm, no folder,
no migration, no lock a writer waits on."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import aiosqlite
import pytest
from hypothesis import given
from hypothesis import strategies as st

from store import Row, SchemaError, SessionRecord, StoreUnreadable, note
from store.database import READ_ONLY_WAIT, quiet_file, read_only_uri
from store.readonly import ADDED_SESSION_COLUMNS, ReadOnlyStore, sessions_query
from store.schema import LATEST, migrate
from store.store import Store
from tests.support.helpers import feed, new_session, pieces, reply

FileState = dict[str, tuple[bytes, int]]


def files_of(folder: Path) -> FileState:
    """Every file of a folder, with its bytes and its modification time."""
    return {
        entry.name: (entry.read_bytes(), entry.stat().st_mtime_ns)
        for entry in folder.iterdir()
        if entry.is_file()
    }


async def written(path: Path) -> tuple[list[str], Store]:
    """A store with two sessions, one with a streamed reply, still open (its writer holds
    the -wal), and the ids of its sessions."""
    store = await Store.open(path)
    first = await new_session(store)
    second = await new_session(store, "other")
    await store.begin_turn(first, "hello")
    await feed(store, [reply(first, p) for p in pieces("A reply in pieces. " * 20)])
    await store.end_turn(first)
    await store.apply(note(second, "notice", "a notice"))
    return [first, second], store


async def read_all(path: Path) -> tuple[list[SessionRecord], list[Row]]:
    """The sessions and every row, read-only."""
    reader = await ReadOnlyStore.open(path)
    try:
        sessions = await reader.list_sessions()
        rows = [row for s in sessions for row in await reader.all_rows(s.id)]
        return sessions, rows
    finally:
        await reader.close()


async def test_it_reads_what_the_store_wrote_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cockpit.db"
    ids, store = await written(path)
    expected_sessions = await store.list_sessions()
    expected_rows = [row for i in ids for row in await store.all_rows(i)]
    await store.close()  # the writer folds its -wal into the file and removes it
    before = files_of(tmp_path)
    assert sorted(before) == ["cockpit.db"]
    sessions, rows = await read_all(path)
    assert sessions == expected_sessions
    assert sorted(rows, key=str) == sorted(expected_rows, key=str)
    assert files_of(tmp_path) == before, "the read changed a byte, a time or made a file"


async def test_beside_a_writer_it_reads_what_is_committed_and_holds_no_one_up(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cockpit.db"
    ids, store = await written(path)
    try:
        assert not quiet_file(path), "the writer has no -wal"
        reader = await ReadOnlyStore.open(path)
        try:
            assert {s.id for s in await reader.list_sessions()} == set(ids)
            rows = await reader.all_rows(ids[0])
            assert rows[-1].text == "A reply in pieces. " * 20
            started = time.monotonic()
            await store.apply(note(ids[1], "notice", "written while a reader is open"))
            assert time.monotonic() - started < 1, "the writer waited for the reader"
            assert [r.text for r in await reader.all_rows(ids[1])][-1] == (
                "written while a reader is open"
            )
        finally:
            await reader.close()
    finally:
        await store.close()


@pytest.mark.parametrize("version", range(1, LATEST))
async def test_a_store_of_an_older_cockpit_is_read_without_migrating_it(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "cockpit.db"
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await migrate(db, str(path), target=version)
        await db.execute(
            "INSERT INTO sessions (id, agent, command, cwd, title, created, updated)"
            " VALUES ('s1', 'demo', '[\"demo\"]', '/', 'old', 1.0, 2.0)"
        )
    before = files_of(tmp_path)
    (record,), _rows = await read_all(path)
    assert (record.id, record.title, record.unread, record.draft) == ("s1", "old", False, "")
    assert files_of(tmp_path) == before
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (version,)


def test_the_columns_later_migrations_added_are_read_as_their_defaults() -> None:
    query = sessions_query({"id", "agent", "unread"})
    assert query == "SELECT *, '' AS draft FROM sessions ORDER BY updated DESC, id"
    everything = {"id", *ADDED_SESSION_COLUMNS}
    assert sessions_query(everything) == "SELECT * FROM sessions ORDER BY updated DESC, id"


async def test_no_store_is_an_empty_one_and_nothing_is_made(tmp_path: Path) -> None:
    assert await read_all(tmp_path / "none" / "cockpit.db") == ([], [])
    assert not (tmp_path / "none").exists()
    (tmp_path / "cockpit.db").touch()  # created by a Cockpit that stopped at once
    assert await read_all(tmp_path / "cockpit.db") == ([], [])
    assert sorted(files_of(tmp_path)) == ["cockpit.db"]


async def test_a_file_that_is_not_a_store_is_said_in_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "cockpit.db"
    path.write_bytes(b"these are not the bytes of a database, " * 100)
    with pytest.raises(StoreUnreadable) as raised:
        await read_all(path)
    message = str(raised.value)
    assert message.startswith(f"{path} is not a Cockpit store (SQLite says:")
    assert "\n" not in message


async def test_a_store_of_a_newer_cockpit_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "cockpit.db"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    before = files_of(tmp_path)
    with pytest.raises(SchemaError, match="newer Cockpit"):
        await read_all(path)
    assert files_of(tmp_path) == before


async def test_a_writer_that_holds_the_whole_file_is_waited_for_briefly(tmp_path: Path) -> None:
    """A store in rollback-journal mode (a copy made by another tool) under an exclusive
    transaction: the reader waits READ_ONLY_WAIT, then says why, at once."""
    path = tmp_path / "cockpit.db"
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await migrate(db, str(path))
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute(
            "INSERT INTO sessions (id, agent, command, cwd, created, updated)"
            " VALUES ('s1', 'demo', '[]', '/', 1.0, 1.0)"
        )
        assert not quiet_file(path), "no rollback journal"
        started = time.monotonic()
        with pytest.raises(StoreUnreadable, match="held by a writer"):
            await read_all(path)
        assert READ_ONLY_WAIT <= time.monotonic() - started < READ_ONLY_WAIT + 2
    finally:
        holder.execute("ROLLBACK")
        holder.close()


async def test_a_store_in_a_folder_whose_name_means_something_in_a_uri(tmp_path: Path) -> None:
    folder = tmp_path / "a b?mode=rw#%41"
    folder.mkdir()
    ids, store = await written(folder / "cockpit.db")
    await store.close()
    sessions, _rows = await read_all(folder / "cockpit.db")
    assert {s.id for s in sessions} == set(ids)


@given(st.text(st.characters(exclude_categories=["Cs"], exclude_characters="/\0")))
def test_the_uri_names_the_file_and_only_ever_reads(name: str) -> None:
    """Whatever a folder is called, its name cannot add to the URI's query (`?mode=rw`)."""
    path = Path("/stores") / (name or "x")
    for immutable in (False, True):
        uri = read_only_uri(path, immutable=immutable)
        location, _, query = uri.partition("?")
        assert location == path.as_uri() and "#" not in location
        assert query == ("mode=ro&immutable=1" if immutable else "mode=ro")


async def test_it_reads_beside_an_empty_wal_a_full_disk_left(tmp_path: Path) -> None:
    """A writer that failed at its start on a full disk leaves an empty -wal and a -shm it
    could not grow: the file holds everything, and is read as it is."""
    path = tmp_path / "cockpit.db"
    ids, store = await written(path)
    await store.close()
    (tmp_path / "cockpit.db-wal").write_bytes(b"")
    (tmp_path / "cockpit.db-shm").write_bytes(b"\0\0\0")
    assert quiet_file(path)
    before = files_of(tmp_path)
    sessions, _rows = await read_all(path)
    assert {s.id for s in sessions} == set(ids)
    assert files_of(tmp_path) == before
