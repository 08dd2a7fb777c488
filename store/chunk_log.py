"""The Claude agent's chunk log on disk: one SQLite file per agent session (aiosqlite).

Three tables: `entries` (the append-only log, one row per sealed block, committed before
`append` returns, so a crash loses at most the one block still streaming), `calls` (one
row per model call: the log position and settings its request was built from, then its
response or failure and its usage) and `contexts` (each distinct system prompt and tool
list once, by content hash). With those, `cockpit inspect` rebuilds every request through
`store.requests.compose_request`, the function the agent sent it through.

Files live in `<data dir>/claude-agent/<session id>.db`, owner-only, in WAL mode.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import aiosqlite

from store.database import prepare_database_file, tighten_mode
from store.entries import Draft, Entry, dump, make_entry
from store.requests import RequestSpec

AGENT_FOLDER: Final = "claude-agent"
"""The folder of the data dir that holds the Claude agent's logs."""

_SESSION_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")

_MIGRATIONS: Final[tuple[str, ...]] = (
    """
    CREATE TABLE meta (
        name  TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE entries (
        seq     INTEGER PRIMARY KEY,
        turn    TEXT    NOT NULL,
        step    INTEGER NOT NULL,
        role    TEXT    NOT NULL,
        type    TEXT    NOT NULL,
        created REAL    NOT NULL,
        data    TEXT    NOT NULL
    );
    CREATE TABLE contexts (
        key    TEXT PRIMARY KEY,
        system TEXT NOT NULL,
        tools  TEXT NOT NULL
    );
    CREATE TABLE calls (
        number      INTEGER PRIMARY KEY,
        turn        TEXT    NOT NULL,
        step        INTEGER NOT NULL,
        upto        INTEGER NOT NULL,
        model       TEXT    NOT NULL,
        max_tokens  INTEGER NOT NULL,
        thinking    TEXT,
        context     TEXT    NOT NULL REFERENCES contexts(key),
        status      TEXT    NOT NULL,
        stop_reason TEXT,
        response    TEXT,
        error       TEXT,
        usage       TEXT,
        started     REAL    NOT NULL,
        ended       REAL
    );
    """,
)
"""_MIGRATIONS[i] takes a log file from schema version i to i + 1."""

CALL_STATES: Final = frozenset({"running", "ok", "error", "cancelled"})


class ChunkLogError(RuntimeError):
    """The log file cannot be used (missing, or written by a newer Cockpit)."""


def log_path(data_dir: Path, session_id: str) -> Path:
    """The log file of `session_id`; ValueError for an id that is not a plain name."""
    if not _SESSION_ID.fullmatch(session_id):
        raise ValueError(f"not a session id: {session_id!r}")
    return data_dir / AGENT_FOLDER / f"{session_id}.db"


def context_key(system: str, tools: Sequence[Mapping[str, Any]]) -> str:
    """The content hash a system prompt and tool list are stored under."""
    blob = json.dumps([system, list(tools)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One model call: where in the log its request was built, with which settings, and
    how it ended. `upto` is the last seq the request included."""

    number: int
    turn: str
    step: int
    upto: int
    model: str
    max_tokens: int
    thinking: Mapping[str, Any] | None
    context: str
    status: str
    stop_reason: str | None
    response: Mapping[str, Any] | None
    error: str | None
    usage: Mapping[str, int] | None
    started: float
    ended: float | None


def _loads(value: str | None) -> Any:
    return json.loads(value) if value is not None else None


def _call(record: Sequence[Any]) -> CallRecord:
    (number, turn, step, upto, model, max_tokens, thinking, context, status, stop_reason) = record[
        :10
    ]
    response, error, usage, started, ended = record[10:]
    return CallRecord(
        number=number,
        turn=turn,
        step=step,
        upto=upto,
        model=model,
        max_tokens=max_tokens,
        thinking=_loads(thinking),
        context=context,
        status=status,
        stop_reason=stop_reason,
        response=_loads(response),
        error=error,
        usage=_loads(usage),
        started=started,
        ended=ended,
    )


_CALL_COLUMNS: Final = (
    "number, turn, step, upto, model, max_tokens, thinking, context, status, stop_reason,"
    " response, error, usage, started, ended"
)


class ChunkLog:
    """One session's log. Open with `await ChunkLog.open(path)`; close with `close()`."""

    def __init__(
        self, path: Path, db: aiosqlite.Connection, next_seq: int, clock: Callable[[], float]
    ) -> None:
        self.path = path
        self._db = db
        self._next_seq = next_seq
        self._clock = clock
        self._contexts: set[str] = set()

    @classmethod
    async def open(
        cls, path: Path, *, create: bool = True, clock: Callable[[], float] = time.time
    ) -> ChunkLog:
        """Open (creating, owner-only, and migrating as needed) the log at `path`. With
        `create=False` a missing file is a ChunkLogError instead."""
        if not create and not await asyncio.to_thread(path.is_file):
            raise ChunkLogError(f"no chunk log at {path}")
        await asyncio.to_thread(prepare_database_file, path, tighten=False)
        db = await aiosqlite.connect(path, isolation_level=None)
        try:
            await db.execute("PRAGMA busy_timeout = 5000")
            _refuse_newer(await _version(db), path)
            await asyncio.to_thread(tighten_mode, path)
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA synchronous = NORMAL")
            await _migrate(db, path)
            async with db.execute("SELECT COALESCE(MAX(seq), 0) FROM entries") as cursor:
                row = await cursor.fetchone()
        except BaseException:
            await db.close()
            raise
        return cls(path, db, int(row[0] if row else 0) + 1, clock)

    async def close(self) -> None:
        """Close the file (every entry is already committed)."""
        await self._db.close()

    # -- the log ------------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """The seq of the newest entry (0 when the log is empty)."""
        return self._next_seq - 1

    async def append(self, turn: str, step: int, draft: Draft) -> Entry:
        """Write one sealed block and return it as the log holds it (committed on return).
        The seq is taken before the write, so appends never collide; writes run in order."""
        entry = make_entry(self._next_seq, turn, step, draft, self._clock())
        self._next_seq += 1
        await self._db.execute(
            "INSERT INTO entries (seq, turn, step, role, type, created, data)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (entry.seq, turn, step, entry.role, entry.type, entry.created, dump(entry.data)),
        )
        return entry

    async def entries(self, upto: int | None = None) -> list[Entry]:
        """The log in seq order, up to and including `upto` when given."""
        query = "SELECT seq, turn, step, role, type, data, created FROM entries"
        parameters: tuple[Any, ...] = ()
        if upto is not None:
            query += " WHERE seq <= ?"
            parameters = (upto,)
        async with self._db.execute(query + " ORDER BY seq", parameters) as cursor:
            rows = await cursor.fetchall()
        return [
            Entry(seq, turn, step, role, kind, json.loads(data), created)
            for seq, turn, step, role, kind, data, created in rows
        ]

    # -- session settings ---------------------------------------------------------------------

    async def meta(self) -> dict[str, str]:
        """The session's stored settings (cwd, mode, model...)."""
        async with self._db.execute("SELECT name, value FROM meta") as cursor:
            rows = await cursor.fetchall()
        return {str(name): str(value) for name, value in rows}

    async def set_meta(self, **values: str) -> None:
        """Store session settings."""
        await self._db.executemany(
            "INSERT INTO meta (name, value) VALUES (?, ?)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            list(values.items()),
        )

    # -- model calls --------------------------------------------------------------------------

    async def _save_context(self, system: str, tools: Sequence[Mapping[str, Any]]) -> str:
        key = context_key(system, tools)
        if key not in self._contexts:
            await self._db.execute(
                "INSERT OR IGNORE INTO contexts (key, system, tools) VALUES (?, ?, ?)",
                (key, system, json.dumps(list(tools), separators=(",", ":"))),
            )
            self._contexts.add(key)
        return key

    async def begin_call(self, turn: str, step: int, upto: int, spec: RequestSpec) -> int:
        """Record a model call before it is sent; returns its number (1, 2, ...)."""
        context = await self._save_context(spec.system, spec.tools)
        cursor = await self._db.execute(
            "INSERT INTO calls (turn, step, upto, model, max_tokens, thinking, context, status,"
            " started) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?)",
            (
                turn,
                step,
                upto,
                spec.model,
                spec.max_tokens,
                json.dumps(spec.thinking) if spec.thinking is not None else None,
                context,
                self._clock(),
            ),
        )
        number = cursor.lastrowid
        assert number is not None
        return int(number)

    async def end_call(
        self,
        number: int,
        *,
        status: str,
        stop_reason: str | None = None,
        response: Mapping[str, Any] | None = None,
        usage: Mapping[str, int] | None = None,
        error: str | None = None,
    ) -> None:
        """Record how a call ended: its response (what arrived of it) or failure, and usage."""
        if status not in CALL_STATES:
            raise ValueError(f"not a call state: {status!r}")
        await self._db.execute(
            "UPDATE calls SET status = ?, stop_reason = ?, response = ?, usage = ?, error = ?,"
            " ended = ? WHERE number = ?",
            (
                status,
                stop_reason,
                json.dumps(response) if response is not None else None,
                json.dumps(usage) if usage is not None else None,
                error,
                self._clock(),
                number,
            ),
        )

    async def calls(self) -> list[CallRecord]:
        """Every model call, oldest first."""
        async with self._db.execute(f"SELECT {_CALL_COLUMNS} FROM calls ORDER BY number") as cur:
            rows = await cur.fetchall()
        return [_call(row) for row in rows]

    async def spec_of(self, call: CallRecord) -> RequestSpec:
        """The settings a call's request was built with."""
        async with self._db.execute(
            "SELECT system, tools FROM contexts WHERE key = ?", (call.context,)
        ) as cursor:
            row = await cursor.fetchone()
        if row is None:
            raise ChunkLogError(f"call {call.number}: its system prompt and tools are missing")
        system, tools = row
        return RequestSpec(
            model=call.model,
            max_tokens=call.max_tokens,
            system=system,
            tools=tuple(json.loads(tools)),
            thinking=call.thinking,
        )


async def _version(db: aiosqlite.Connection) -> int:
    async with db.execute("PRAGMA user_version") as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


def _refuse_newer(version: int, path: Path) -> None:
    """A log from a newer Cockpit is refused before anything in it is changed."""
    if version > len(_MIGRATIONS):
        raise ChunkLogError(
            f"{path} was written by a newer Cockpit (chunk log version {version}; this one "
            f"knows up to {len(_MIGRATIONS)})."
        )


async def _migrate(db: aiosqlite.Connection, path: Path) -> None:
    """Bring the file to the newest schema, one transaction per step; refuse a newer one."""
    version = await _version(db)
    _refuse_newer(version, path)
    for index in range(version, len(_MIGRATIONS)):
        await db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(_MIGRATIONS[index]):
                await db.execute(statement)
            await db.execute(f"PRAGMA user_version = {index + 1}")
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise


def _statements(script: str) -> list[str]:
    """A DDL script split into complete statements (run inside the caller's transaction)."""
    statements: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                statements.append(pending.strip())
            pending = ""
    return statements
