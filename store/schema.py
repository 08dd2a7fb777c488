"""The database schema as a list of versioned migrations (`PRAGMA user_version`).

Each migration is a small function that takes the database from version N-1 to N.
A database written by a newer Cockpit is refused, never altered.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable

import aiosqlite

from store.errors import SchemaError


async def _run(db: aiosqlite.Connection, script: str) -> None:
    """Run a DDL script statement by statement inside the caller's transaction
    (`executescript` would commit it)."""
    statement = ""
    for piece in script.split(";"):
        statement += piece + ";"
        if sqlite3.complete_statement(statement):
            if statement.strip(" \n;"):
                await db.execute(statement)
            statement = ""
    if statement.strip(" \n;"):
        raise SchemaError(f"incomplete statement in a migration: {statement.strip()!r}")


async def _v1_sessions_and_messages(db: aiosqlite.Connection) -> None:
    """Sessions, and one row per message, identified by (session, seq) and (session, key)."""
    await _run(
        db,
        """
        CREATE TABLE sessions (
            id               TEXT PRIMARY KEY,
            agent            TEXT NOT NULL,
            command          TEXT NOT NULL,          -- JSON argv
            agent_session_id TEXT,
            cwd              TEXT NOT NULL,
            title            TEXT,
            status           TEXT NOT NULL DEFAULT 'idle',
            created          REAL NOT NULL,
            updated          REAL NOT NULL,
            modes            TEXT,                   -- JSON
            config_options   TEXT,                   -- JSON
            commands         TEXT,                   -- JSON
            usage            TEXT,                   -- JSON
            info             TEXT                    -- JSON
        );
        CREATE TABLE messages (
            session TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq     INTEGER NOT NULL,
            key     TEXT    NOT NULL,
            kind    TEXT    NOT NULL,
            role    TEXT    NOT NULL,
            turn    INTEGER NOT NULL,
            bytes   INTEGER NOT NULL,
            created REAL    NOT NULL,
            updated REAL    NOT NULL,
            payload TEXT,                            -- JSON
            text    TEXT    NOT NULL,                -- last: big texts stay out of index scans
            PRIMARY KEY (session, seq),
            UNIQUE (session, key)
        );
        """,
    )


async def _v2_byte_pages_and_read_marks(db: aiosqlite.Connection) -> None:
    """A covering index so a page's byte budget is computed without reading any text; the
    last seq the user has seen per session (finished-unread turns); and triggers that keep
    a session's `updated` current with its newest write, inside the writing statement."""
    await _run(
        db,
        """
        CREATE INDEX messages_page ON messages(session, seq, bytes);
        ALTER TABLE sessions ADD COLUMN last_read_seq INTEGER NOT NULL DEFAULT 0;
        CREATE TRIGGER messages_touch_insert AFTER INSERT ON messages BEGIN
            UPDATE sessions SET updated = NEW.updated WHERE id = NEW.session;
        END;
        CREATE TRIGGER messages_touch_update AFTER UPDATE OF text, payload ON messages BEGIN
            UPDATE sessions SET updated = NEW.updated WHERE id = NEW.session;
        END;
        """,
    )


async def _v3_unread_marks_and_drafts(db: aiosqlite.Connection) -> None:
    """Whether the session did something the user has not seen (a reply that grows after they
    left counts, which a seq cannot tell: a message keeps its first seq), replacing the read
    seq; and the prompt the user was writing for it, kept across restarts."""
    await _run(
        db,
        """
        ALTER TABLE sessions ADD COLUMN unread INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN draft TEXT NOT NULL DEFAULT '';
        UPDATE sessions SET unread = 1 WHERE last_read_seq <
            (SELECT coalesce(MAX(seq), 0) FROM messages WHERE messages.session = sessions.id);
        """,
    )


Migration = Callable[[aiosqlite.Connection], Awaitable[None]]

MIGRATIONS: tuple[Migration, ...] = (
    _v1_sessions_and_messages,
    _v2_byte_pages_and_read_marks,
    _v3_unread_marks_and_drafts,
)
"""MIGRATIONS[i] upgrades a database from version i to version i + 1."""

LATEST = len(MIGRATIONS)


async def schema_version(db: aiosqlite.Connection) -> int:
    """The database's `user_version`: 0 for a new file."""
    async with db.execute("PRAGMA user_version") as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


def refuse_newer(version: int, path: str) -> None:
    """Raise SchemaError when `version` is from a newer Cockpit than this one."""
    if version > LATEST:
        raise SchemaError(
            f"{path} was written by a newer Cockpit (schema version {version}; this one knows "
            f"up to {LATEST}). Upgrade Cockpit, or set COCKPIT_HOME to use another store."
        )


async def migrate(db: aiosqlite.Connection, path: str, target: int = LATEST) -> int:
    """Bring the database up to `target`, one transaction per migration; return the version.

    Raises SchemaError for a database from a newer Cockpit, leaving it untouched.
    """
    version = await schema_version(db)
    refuse_newer(version, path)
    for index in range(version, target):
        await db.execute("BEGIN IMMEDIATE")
        try:
            await MIGRATIONS[index](db)
            await db.execute(f"PRAGMA user_version = {index + 1}")
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise
    return max(version, target)
