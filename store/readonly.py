"""The store read on its own, with nothing written: what `cockpit ls` and `cockpit show`
read when no service runs. Opening it migrates nothing, recovers nothing and creates
nothing (a missing store is an empty one), so it answers at once on a full disk, beside a
writer that holds the store, or from a folder the user cannot write."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final, TypeVar

import aiosqlite

from store.database import open_read_only, unreadable
from store.locks import SessionLocks
from store.model import Row, SessionRecord
from store.reader import TranscriptReader
from store.sql import session_from_db

T = TypeVar("T")

ADDED_SESSION_COLUMNS: Final = {"unread": "0", "draft": "''"}
"""The session columns later migrations added, and what a store from before them means by
their absence: a reader that cannot migrate reads them as these values."""


def sessions_query(columns: set[str]) -> str:
    """Every session, newest first, from a `sessions` table with these columns (those it
    lacks read as ADDED_SESSION_COLUMNS say)."""
    missing = "".join(
        f", {value} AS {name}"
        for name, value in ADDED_SESSION_COLUMNS.items()
        if name not in columns
    )
    return f"SELECT *{missing} FROM sessions ORDER BY updated DESC, id"


class ReadOnlyStore:
    """A store opened to read only. Open it with `await ReadOnlyStore.open(path)`; close it
    with `close()`. Each read fails with StoreUnreadable, saying why, when SQLite cannot
    read the file."""

    def __init__(self, path: Path, connection: aiosqlite.Connection | None, query: str) -> None:
        self.path = path
        self._connection = connection
        """None: no store is there (or it has no tables yet), and it holds no session."""
        self._query = query
        self._locks = SessionLocks(path)

    @classmethod
    async def open(cls, path: Path) -> ReadOnlyStore:
        """The store at `path`, read-only (SchemaError when a newer Cockpit wrote it)."""
        if not await asyncio.to_thread(path.exists):
            return cls(path, None, "")
        connection = await open_read_only(path)
        try:
            async with connection.execute("PRAGMA table_info(sessions)") as cursor:
                columns = {str(record["name"]) for record in await cursor.fetchall()}
        except sqlite3.Error as error:
            await connection.close()
            raise unreadable(path, error) from error
        except BaseException:
            await connection.close()
            raise
        if not columns:  # created, never written: no session yet
            await connection.close()
            return cls(path, None, "")
        return cls(path, connection, sessions_query(columns))

    async def close(self) -> None:
        if self._connection is not None:
            await self._connection.close()
            self._connection = None

    async def _reading(self, read: Callable[[aiosqlite.Connection], Awaitable[T]], empty: T) -> T:
        """`read` on the connection (`empty` when there is no store), a failure said plainly."""
        if self._connection is None:
            return empty
        try:
            return await read(self._connection)
        except sqlite3.Error as error:
            raise unreadable(self.path, error) from error

    async def list_sessions(self) -> list[SessionRecord]:
        """Every stored session, most recently updated first."""

        async def read(connection: aiosqlite.Connection) -> list[SessionRecord]:
            async with connection.execute(self._query) as cursor:
                return [session_from_db(record) for record in await cursor.fetchall()]

        return await self._reading(read, [])

    async def all_rows(self, session: str) -> list[Row]:
        """Every row of a session, oldest first, read page by page."""

        async def read(connection: aiosqlite.Connection) -> list[Row]:
            return await TranscriptReader(connection, {}).all_rows(session)

        return await self._reading(read, [])

    def writer_elsewhere(self, session: str) -> int | None:
        """The process id of a live Cockpit that writes this session now, else None (its
        lock file is read, never locked)."""
        return self._locks.writer_elsewhere(session)
