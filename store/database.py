"""The database file and its connections: made owner-only before the first byte, refused
untouched when a newer Cockpit wrote it, migrated, then opened as one writer connection and
one query-only reader (WAL, so reads never wait for a flush). A reader with no writer
(`cockpit ls` with no service) opens it read-only, and writes nothing at all."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Final

import aiosqlite

from store.errors import StoreUnreadable
from store.schema import migrate, refuse_newer, schema_version

READ_ONLY_WAIT: Final = 0.5
"""Seconds a read-only reader waits for a writer that holds the database (SQLite's busy
timeout) before it gives up and says so."""


def prepare_database_file(path: Path, *, tighten: bool = True) -> None:
    """Create the database's folder (0700 when we create it) and the file itself 0600.

    SQLite gives its -wal and -shm files the database file's permissions, so the
    transcript is owner-only from the first byte. With `tighten=False` an existing file
    keeps its mode: the caller tightens it once it knows the database is its own (a
    database from a newer Cockpit is refused untouched).
    """
    if not path.parent.exists():
        path.parent.mkdir(parents=True, mode=0o700)
        os.chmod(path.parent, 0o700)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(descriptor)
    if tighten:
        tighten_mode(path)


def tighten_mode(path: Path) -> None:
    """Make the database owner-only (0600), and its -wal and -shm files when they exist."""
    os.chmod(path, 0o600)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.chmod(path.with_name(path.name + suffix), 0o600)


async def _connect(db_path: Path) -> aiosqlite.Connection:
    """A connection to the database, opened whole even when its opener is cancelled
    meanwhile (a Ctrl-C as Cockpit starts), and then closed: cut short, its thread went on
    and reported to an event loop that had closed (a traceback as the command ended)."""
    opening = asyncio.ensure_future(_opened(aiosqlite.connect(db_path, isolation_level=None)))
    try:
        return await asyncio.shield(opening)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await (await opening).close()
        raise


async def _opened(connection: aiosqlite.Connection) -> aiosqlite.Connection:
    return await connection


async def open_connections(db_path: Path) -> tuple[aiosqlite.Connection, aiosqlite.Connection]:
    """The writer and reader connections of the database at `db_path`, created and migrated
    as needed; neither is left open when opening fails."""
    prepare_database_file(db_path, tighten=False)
    writer = await _connect(db_path)
    reader: aiosqlite.Connection | None = None
    try:
        await writer.execute("PRAGMA busy_timeout = 5000")
        # A database from a newer Cockpit is refused before anything writes to it or
        # changes its mode: it stays exactly as that Cockpit left it.
        refuse_newer(await schema_version(writer), str(db_path))
        tighten_mode(db_path)
        await writer.execute("PRAGMA journal_mode = WAL")
        await writer.execute("PRAGMA synchronous = NORMAL")
        await writer.execute("PRAGMA foreign_keys = ON")
        await migrate(writer, str(db_path))
        reader = await _connect(db_path)
        reader.row_factory = sqlite3.Row
        await reader.execute("PRAGMA busy_timeout = 5000")
        await reader.execute("PRAGMA query_only = ON")
    except BaseException:
        await writer.close()
        if reader is not None:
            await reader.close()
        raise
    return writer, reader


def read_only_uri(path: Path, *, immutable: bool) -> str:
    """SQLite's URI for reading the database at `path` without writing to it; `immutable`:
    read the file as it is, taking no lock and opening no -wal or -shm file."""
    query = "mode=ro&immutable=1" if immutable else "mode=ro"
    return f"{path.absolute().as_uri()}?{query}"


def quiet_file(path: Path) -> bool:
    """True when the database file holds all there is: its -wal file is gone or empty (the
    last writer folded it into the database; a writer that failed at its start on a full
    disk leaves an empty one) and no rollback journal was left by a crash. Such a file is
    read as it is: SQLite's read-only mode would create the -wal and -shm files a WAL
    reader uses, and on a full disk fail to."""
    wal = path.with_name(path.name + "-wal")
    try:
        if wal.stat().st_size > 0:
            return False
    except FileNotFoundError:
        pass
    return not path.with_name(path.name + "-journal").exists()


async def open_read_only(path: Path) -> aiosqlite.Connection:
    """A connection that reads the database at `path` and never writes: no migration, no
    lock a writer would wait on (a WAL reader's mark at most), no file created. SchemaError
    when a newer Cockpit wrote it, StoreUnreadable when it cannot be read."""
    immutable = quiet_file(path)
    try:
        connection = await aiosqlite.connect(
            read_only_uri(path, immutable=immutable),
            uri=True,
            isolation_level=None,
            timeout=READ_ONLY_WAIT,
        )
    except sqlite3.Error as error:
        raise unreadable(path, error) from error
    try:
        connection.row_factory = sqlite3.Row
        await connection.execute("PRAGMA query_only = ON")
        refuse_newer(await schema_version(connection), str(path))
    except sqlite3.Error as error:
        await connection.close()
        raise unreadable(path, error) from error
    except BaseException:
        await connection.close()
        raise
    return connection


def unreadable(path: Path, error: sqlite3.Error) -> StoreUnreadable:
    """Why the database at `path` could not be read, as one sentence a user can act on."""
    said = str(error)
    if isinstance(error, sqlite3.DatabaseError) and "not a database" in said:
        return StoreUnreadable(
            f"{path} is not a Cockpit store (SQLite says: {said}); set COCKPIT_HOME or"
            " --data-dir to use another one"
        )
    if "locked" in said or "busy" in said:
        return StoreUnreadable(
            f"{path} is held by a writer that did not let go within {READ_ONLY_WAIT:g} s;"
            " try again in a moment"
        )
    return StoreUnreadable(f"{path} could not be read (SQLite says: {said})")
