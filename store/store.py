"""The transcript store: folds chunks into one row per message and persists them in SQLite.

One `Store` owns one database file with one writer connection and one reader
connection (WAL, so reads never wait for a flush). The open message of each session
lives in memory and is written on a short timer, when it seals (the agent's stream moves
on to another kind, a tool call or a plan; the turn ends) and at close, so a crash loses
at most the last flush interval of one open message and never a sealed one. Durable facts
(a prompt, a tool call, a permission decision, a notice) are committed before `apply`
returns.

This class is the one users construct; it owns the sessions' folds and the session
records, and hands the rest to one module per job: `store.database` opens the file,
`store.writer` writes (flushes, commits, retries after a failed write), `store.reader`
reads pages and rows, and `store.sql` is how rows and sessions look in SQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final

import aiosqlite

from store.chunks import META_UPDATES, Chunk
from store.database import open_connections
from store.errors import UnknownSession
from store.fold_rules import ReplayWindow
from store.locks import SessionLocks
from store.model import Frame, Page, Row, SessionRecord
from store.paging import PAGE_BYTES, PAGE_ROWS
from store.reader import TranscriptReader
from store.replay import stored_prompt, stored_text
from store.session_fold import SessionFold, dump_json
from store.sql import (
    JSON_COLUMNS,
    QUIET_COLUMNS,
    ROW_COLUMNS,
    SESSION_COLUMNS,
    meta_statements,
    row_from_db,
    session_from_db,
)
from store.writer import TranscriptWriter, WriteWatcher

FLUSH_INTERVAL: Final = 0.1
"""Seconds an open message may stay unwritten while it streams."""


def file_identity(path: Path) -> tuple[int, int] | None:
    """The device and inode of the file at `path` (None when there is none): the same
    path naming another file is another store."""
    try:
        status = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return status.st_dev, status.st_ino


RECITED_KINDS: Final = ("agent", "thought", "plan")
"""The rows of a turn a replay's recital compares what the agent replays with."""


def _unwritten(fold: SessionFold, kinds: Sequence[str], first: int, end: int) -> list[Row]:
    """The rows of these kinds from seq `first` to `end` that the fold holds unwritten (a
    write failed: the disk is full), as they stand: reads from the file miss them."""
    return [
        row.snapshot()
        for row in fold.unsaved.values()
        if row.kind in kinds and first <= row.seq < end
    ]


class Store:
    """The transcript store. Open it with `await Store.open(path)`; close it with `close()`."""

    def __init__(
        self,
        path: Path,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        flush_interval: float,
        clock: Callable[[], float],
    ) -> None:
        self.path = path
        self._writer = writer
        self._reader = reader
        self._clock = clock
        self._folds: dict[str, SessionFold] = {}
        """The sessions this store writes, shared with its reader and writer."""
        self._locks: dict[str, asyncio.Lock] = {}
        self._write_lock = asyncio.Lock()
        self._sessions = SessionLocks(path)
        """The sessions this store writes, each locked against other writers."""
        self._deleted: set[str] = set()
        """Sessions deleted while this store was open: never written again."""
        self._identity: tuple[int, int] | None = None
        """The database file's device and inode when it was opened."""
        self._reads = TranscriptReader(reader, self._folds)
        self._writes = TranscriptWriter(writer, self._write_lock, self._folds, flush_interval)

    def now(self) -> float:
        """The store's clock: what rows and sessions are stamped with."""
        return self._clock()

    # -- opening and closing -----------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        flush_interval: float = FLUSH_INTERVAL,
        clock: Callable[[], float] = time.time,
    ) -> Store:
        """Open (creating and migrating as needed) the store at `path`."""
        db_path = Path(path)
        writer, reader = await open_connections(db_path)
        store = cls(db_path, writer, reader, flush_interval, clock)
        store._identity = file_identity(db_path)
        return store

    async def close(self) -> None:
        """Write everything still in memory and close the database."""
        if self._writes.closed:
            return
        await self._writes.idle()
        for fold in self._folds.values():
            fold.end_late_replay(self._clock())  # what a late replay's window held is kept
        try:
            await self.flush()
        finally:
            # Even when the last write fails, the connections (and their threads) must go,
            # or the process could never exit; and a retry that failure scheduled with them.
            self._writes.stop()
            self._sessions.release_all()
            await self._reader.close()
            await self._writer.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # -- sessions ------------------------------------------------------------------------------

    async def create_session(
        self,
        *,
        agent: str,
        command: Sequence[str],
        cwd: str,
        title: str | None = None,
        session_id: str | None = None,
    ) -> SessionRecord:
        """Store a new session and return it."""
        now = self._clock()
        async with self._write_lock:
            for _ in range(8):
                new_id = session_id or secrets.token_hex(4)
                try:
                    await self._writer.execute(
                        "INSERT INTO sessions (id, agent, command, cwd, title, created, updated)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (new_id, agent, dump_json(list(command)), cwd, title, now, now),
                    )
                    break
                except sqlite3.IntegrityError:
                    if session_id is not None:
                        raise
            else:  # pragma: no cover - eight random 32-bit collisions in a row
                raise RuntimeError("could not allocate a session id")
        record = await self.get_session(new_id)
        assert record is not None
        return record

    async def get_session(self, session_id: str) -> SessionRecord | None:
        """The stored session with this id, or None (metadata waiting for a flush included)."""
        await self._metadata_written()
        records = await self._reads.read("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return session_from_db(records[0]) if records else None

    async def list_sessions(self) -> list[SessionRecord]:
        """Every stored session, most recently updated first."""
        await self._metadata_written()
        records = await self._reads.read("SELECT * FROM sessions ORDER BY updated DESC, id")
        return [session_from_db(record) for record in records]

    async def _metadata_written(self) -> None:
        """Read-your-writes for session metadata: write what waits for the timer, and let a
        flush already under way finish (the write lock is first come, first served). While
        writes fail (the disk is full) a read does not try again: it shows what is stored,
        and the retry timer writes the rest."""
        if self._writes.meta and self._writes.failure is None:
            with contextlib.suppress(sqlite3.Error):  # recorded, reported and retried
                await self.flush()
        async with self._write_lock:
            pass

    async def update_session(self, session_id: str, **fields: Any) -> None:
        """Change stored fields of a session (title, status, agent_session_id, modes, ...).

        While writes fail (the disk is full) the change waits in line behind what failed
        before it, and a change that fails goes into that line: both are written by the
        retry, in the order asked, so an older status never lands after a newer one. A
        change held that way cannot tell an unknown session (its UPDATE then does nothing)."""
        unknown = set(fields) - SESSION_COLUMNS
        if unknown:
            raise ValueError(f"not session fields: {sorted(unknown)}")
        if not fields:
            return
        names = sorted(fields)
        values = [
            dump_json(fields[name])
            if name in JSON_COLUMNS and fields[name] is not None
            else fields[name]
            for name in names
        ]
        assignments = ", ".join(f"{name} = ?" for name in names)
        if not set(names) <= QUIET_COLUMNS:
            assignments += ", updated = ?"
            values.append(self._clock())
        statement = (f"UPDATE sessions SET {assignments} WHERE id = ?", (*values, session_id))
        if self._writes.failure is not None:
            self._writes.meta.append(statement)
            self._writes.schedule_flush()
            return
        try:
            async with self._write_lock:
                cursor = await self._writer.execute(*statement)
        except sqlite3.OperationalError as error:  # the disk is full: held and retried
            self._writes.meta.append(statement)
            self._writes.write_failed(error)
            return
        if cursor.rowcount == 0:
            raise UnknownSession(session_id)

    def mark(self, session_id: str, **fields: Any) -> None:
        """Change what the user did with a session (read it, wrote a draft) without waiting:
        written with the next flush, in the order asked, and seen by every read of the
        session before then (the metadata path). Not activity: `updated` stays."""
        unknown = set(fields) - QUIET_COLUMNS
        if unknown:
            raise ValueError(f"not marks of a session: {sorted(unknown)}")
        names = sorted(fields)
        assignments = ", ".join(f"{name} = ?" for name in names)
        self._writes.meta.append(
            (
                f"UPDATE sessions SET {assignments} WHERE id = ?",
                (*(fields[name] for name in names), session_id),
            )
        )
        self._writes.schedule_flush()

    async def delete_session(self, session_id: str) -> None:
        """Forget a session and its whole transcript (SessionBusy while another Cockpit
        writes it). A delete the database refuses leaves the session as it was: stored,
        what it held in memory still held, and writable."""
        self._sessions.claim(session_id)
        self._deleted.add(session_id)  # nothing starts writing it from now on
        fold = self._folds.pop(session_id, None)
        try:
            await self._writes.commit(
                (),
                [
                    ("DELETE FROM messages WHERE session = ?", (session_id,)),
                    ("DELETE FROM sessions WHERE id = ?", (session_id,)),
                ],
            )
        except sqlite3.Error:  # refused: still stored, and what was held of it is held again
            self._deleted.discard(session_id)
            if fold is not None:
                self._folds.setdefault(session_id, fold)
            raise
        finally:
            if session_id not in self._folds:  # a fold kept writes it: its lock stays
                self._sessions.release(session_id)

    # -- folding chunks into sessions ---------------------------------------------------------

    async def _fold(self, session: str) -> SessionFold:
        fold = self._folds.get(session)
        if fold is not None:
            return fold
        # The fold hands out seqs from memory: only one store may write a session, so take
        # its lock (SessionBusy when another Cockpit writes it) before reading where it ends.
        claimed = self._sessions.claim(session)
        try:
            async with self._writer.execute(
                "SELECT 1 FROM sessions WHERE id = ?", (session,)
            ) as cur:
                if await cur.fetchone() is None or session in self._deleted:
                    raise UnknownSession(session)
            async with self._writer.execute(
                "SELECT seq, turn FROM messages WHERE session = ? ORDER BY seq DESC LIMIT 1",
                (session,),
            ) as cur:
                last = await cur.fetchone()
            async with self._writer.execute(
                "SELECT json_extract(payload, '$.revision') FROM messages"
                " WHERE session = ? AND kind = 'plan' ORDER BY seq DESC LIMIT 1",
                (session,),
            ) as cur:
                plan = await cur.fetchone()
        except BaseException:
            if claimed and session not in self._folds:
                self._sessions.release(session)
            raise
        if session in self._deleted:  # deleted while its end was read
            raise UnknownSession(session)
        self._sessions.claim(session)  # still ours, even if a concurrent first call failed
        next_seq, turn = (last[0] + 1, last[1]) if last else (1, 0)
        revision = plan[0] if plan is not None and isinstance(plan[0], int) else 0
        fold = self._folds.setdefault(session, SessionFold(session, next_seq, turn, revision))
        self._locks.setdefault(session, asyncio.Lock())
        return fold

    async def claim(self, session: str) -> None:
        """Become the writer of a session before anything is written to it: SessionBusy
        when another Cockpit writes it, UnknownSession when it is not stored. (Writing
        claims a session by itself; this lets a caller find out before it starts work.)"""
        await self._fold(session)

    def writer_elsewhere(self, session: str) -> int | None:
        """The process id of another live Cockpit that writes this session now, else None."""
        return self._sessions.writer_elsewhere(session)

    async def release(self, session: str) -> None:
        """Write what this store holds of a session, forget it and give up its lock, so
        another Cockpit can continue it. Writing it again claims it again."""
        if session in self._folds:
            async with self._locks[session]:
                fold = self._folds.get(session)
                if fold is not None:
                    # What a late replay's window held is kept; the next read shows it.
                    fold.end_late_replay(self._clock())
                    fold.seal()
                    await self._writes.commit(list(fold.unsaved.values()))
                    del self._folds[session]
        self._sessions.release(session)

    @contextlib.asynccontextmanager
    async def _holding(self, session: str) -> AsyncIterator[SessionFold]:
        """The session's fold, with the session's lock held. The fold is looked up once the
        lock is ours: one taken before waiting may have been released (or the session
        deleted) meanwhile, and what was folded into it then would never be written."""
        await self._fold(session)  # its lock exists once it does
        async with self._locks[session]:
            yield await self._fold(session)

    async def apply(self, chunk: Chunk) -> list[Frame]:
        """Fold one chunk into its session's transcript and return the frames for views.

        Rows that seal, and durable facts, are committed before this returns.
        """
        fold = self._folds.get(chunk.session) or await self._fold(chunk.session)
        lock = self._locks[chunk.session]
        if lock.locked() or fold.needs(chunk) is not None or fold.recital_wants(chunk) is not None:
            # Loading a stored row awaits: hold the session's place in line meanwhile.
            async with self._holding(chunk.session) as fold:
                key = fold.needs(chunk)
                if key is not None:
                    async with self._writer.execute(
                        f"SELECT {ROW_COLUMNS} FROM messages WHERE session = ? AND key = ?",
                        (chunk.session, key),
                    ) as cur:
                        record = await cur.fetchone()
                    if record is not None:
                        fold.adopt(row_from_db(record))
                await self._load_recited_turn(fold, chunk)
                frames, now = fold.apply(chunk, self._clock())
        else:
            frames, now = fold.apply(chunk, self._clock())
        if chunk.update in META_UPDATES:
            self._writes.meta.extend(meta_statements(chunk))
        if now:
            await self._writes.commit(now)
        if fold.unsaved or self._writes.meta:
            self._writes.schedule_flush()
        return frames

    async def begin_turn(
        self, session: str, prompt: str, payload: Mapping[str, Any] | None = None
    ) -> tuple[int, list[Frame]]:
        """Open the next turn with the user's prompt, committed before it is sent anywhere."""
        async with self._holding(session) as fold:
            rows = fold.begin_turn(prompt, payload, self._clock())
            await self._writes.commit(rows)
            return fold.turn, [rows[-1].frame()]

    async def end_turn(self, session: str) -> list[Frame]:
        """Seal the open message and write it: the turn's stop reason has arrived. A late
        replay's window closes with it; returns the frames of what it held, now kept."""
        async with self._holding(session) as fold:
            frames, rows = fold.end_turn(self._clock())
            await self._writes.commit(rows)
            return frames

    async def begin_replay(self, session: str) -> ReplayWindow:
        """Start applying history an agent replays on `session/load` (rule 5). When the
        store holds the transcript, its user messages are what the replay is told by."""
        async with self._holding(session) as fold:
            _, rows = fold.end_late_replay(self._clock())
            await self._writes.commit([*rows, fold.seal()])
            async with self._writer.execute(
                "SELECT seq, turn, text FROM messages WHERE session = ? AND kind = 'user' "
                "AND seq < ?",
                (session, fold.next_seq),
            ) as cur:
                stored = {seq: (seq, turn, text) for seq, turn, text in await cur.fetchall()}
            for row in _unwritten(fold, ("user",), 0, fold.next_seq):
                stored[row.seq] = (row.seq, row.turn, row.text)
            prompts = [stored_prompt(*stored[seq]) for seq in sorted(stored)]
            window, rows = fold.begin_replay(prompts, self._clock())
            await self._writes.commit(rows)
            return window

    async def load_answered(self, session: str) -> None:
        """The agent answered `session/load`. What it replays after the answer is still
        dropped while it recites the stored transcript in order (`store.replay`): the
        first update that does not is live, and the turn after the load ends it."""
        async with self._holding(session) as fold:
            await self._writes.commit([fold.load_answered()])

    async def end_replay(self, session: str) -> list[Frame]:
        """Close the replay window (a late replay's too): later chunks are live again.
        Returns the frames of what a late replay's window held, now kept."""
        async with self._holding(session) as fold:
            frames, rows = fold.end_replay(self._clock())
            await self._writes.commit(rows)
            return frames

    async def _load_recited_turn(self, fold: SessionFold, chunk: Chunk) -> None:
        """Hand the recital the stored replies, thoughts and plans of the turn it recites,
        when judging this chunk needs them."""
        wanted = fold.recital_wants(chunk)
        if wanted is None or fold.recital is None:
            return
        turn, first, end = wanted
        async with self._writer.execute(
            f"SELECT {ROW_COLUMNS} FROM messages WHERE session = ? AND seq >= ? AND seq < ? "
            f"AND kind IN ({', '.join('?' * len(RECITED_KINDS))})",
            (chunk.session, first, end, *RECITED_KINDS),
        ) as cur:
            rows = {row.seq: row for row in map(row_from_db, await cur.fetchall())}
        rows.update((row.seq, row) for row in _unwritten(fold, RECITED_KINDS, first, end))
        fold.recital.load(
            turn, [stored_text(r.seq, r.kind, r.text, r.payload) for _, r in sorted(rows.items())]
        )

    def turn_of(self, session: str) -> int | None:
        """The current turn of a session the writer has touched, else None."""
        fold = self._folds.get(session)
        return fold.turn if fold is not None else None

    # -- writing (see store.writer) -----------------------------------------------------------

    @property
    def failure(self) -> Exception | None:
        """Why the last write failed, while what it could not write waits in memory for a
        retry; None once a flush has written everything."""
        return self._writes.failure

    def watch_writes(self, watcher: WriteWatcher) -> Callable[[], None]:
        """Call `watcher` with the error when writing starts failing (the disk is full), and
        with None once a flush has written everything held meanwhile; nothing in between,
        however many retries fail. Returns the function that stops it."""
        return self._writes.watch_writes(watcher)

    def unwritten(self, session: str | None = None) -> tuple[int, int]:
        """The rows held in memory that are not written as they stand, and their characters
        (of every session, or of one): what closing now would lose when the last write
        fails."""
        return self._writes.unwritten(session)

    def file_replaced(self) -> bool:
        """True once the database file this store writes is no longer at its path (its
        folder removed, or another file put there): what it writes from then on goes to a
        file nobody can open again."""
        return file_identity(self.path) != self._identity

    async def written_since(self, since: float) -> tuple[int, int]:
        """The messages written (or changed) since the time `since`, and their characters:
        what a store removed since then has lost of what it was told to keep."""
        async with self._reader.execute(
            "SELECT count(*), coalesce(sum(length(text)), 0) FROM messages WHERE updated >= ?",
            (since,),
        ) as cursor:
            found = await cursor.fetchone()
        return (int(found[0]), int(found[1])) if found is not None else (0, 0)

    async def flush(self) -> None:
        """Write every row that changed since it was last written, and session metadata (a
        failed write keeps what it held in memory for a retry)."""
        await self._writes.flush()

    # -- reading (see store.reader) -----------------------------------------------------------

    async def page_before(
        self,
        session: str,
        before_seq: int | None = None,
        max_rows: int = PAGE_ROWS,
        max_bytes: int = PAGE_BYTES,
    ) -> Page:
        """The page of rows just before `before_seq` (the tail when None), oldest first,
        bounded by `max_rows` rows and `max_bytes` bytes; rows still in memory included."""
        return await self._reads.page_before(session, before_seq, max_rows, max_bytes)

    async def rows_after(
        self,
        session: str,
        after_seq: int,
        max_rows: int = PAGE_ROWS,
        max_bytes: int = PAGE_BYTES,
    ) -> Page:
        """The rows just after `after_seq`, oldest first, bounded like a page."""
        return await self._reads.rows_after(session, after_seq, max_rows, max_bytes)

    async def row(self, session: str, key: str) -> Row | None:
        """The latest version of one row, by key."""
        return await self._reads.row(session, key)

    async def last_of_kind(self, session: str, kind: str) -> Row | None:
        """The newest row of this kind in a session (its latest plan, say)."""
        return await self._reads.last_of_kind(session, kind)

    async def running_commands(self) -> list[Row]:
        """Rows of the user's commands that last said they were running."""
        return await self._reads.running_commands()

    async def latest_seqs(self) -> dict[str, int]:
        """The newest seq of every session that has rows (one index probe per session)."""
        return await self._reads.latest_seqs()

    async def all_rows(self, session: str) -> list[Row]:
        """Every row of a session, oldest first, read page by page (for export and tests)."""
        return await self._reads.all_rows(session)
