"""The database file and its connections: made owner-only before the first byte, refused
untouched when a newer Cockpit wrote it, migrated, then opened as one writer connection and
one query-only reader (WAL, so reads never wait for a flush)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import aiosqlite

from store.schema import migrate, refuse_newer, schema_version


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


async def open_connections(db_path: Path) -> tuple[aiosqlite.Connection, aiosqlite.Connection]:
    """The writer and reader connections of the database at `db_path`, created and migrated
    as needed; neither is left open when opening fails."""
    prepare_database_file(db_path, tighten=False)
    writer = await aiosqlite.connect(db_path, isolation_level=None)
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
        reader = await aiosqlite.connect(db_path, isolation_level=None)
        reader.row_factory = sqlite3.Row
        await reader.execute("PRAGMA busy_timeout = 5000")
        await reader.execute("PRAGMA query_only = ON")
    except BaseException:
        await writer.close()
        if reader is not None:
            await reader.close()
        raise
    return writer, reader
