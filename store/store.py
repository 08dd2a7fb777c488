"""The transcript store: folds chunks into one row per message and persists them in SQLite.

One `Store` owns one database file with one writer connection and one reader
connection (WAL, so reads never wait for a flush). The open message of each session
lives in memory and is written on a short timer, when it seals (the agent's stream moves
on to another kind, a tool call or a plan; the turn ends) and at close, so a crash loses
at most the last flush interval of one open message and never a sealed one. Durable facts
(a prompt, a tool call, a permission decision, a notice) are committed before `apply`
returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final

import aiosqlite

from store.chunks import META_UPDATES, Chunk
from store.errors import UnknownSession, WriteConflict
from store.fold import ReplayWindow
from store.folding import LiveRow, SessionFold, dump_json
from store.locks import SessionLocks
from store.model import Frame, Page, Row, SessionRecord
from store.paging import PAGE_BYTES, PAGE_ROWS, page_length
from store.schema import migrate, refuse_newer, schema_version

log = logging.getLogger(__name__)

FLUSH_INTERVAL: Final = 0.1
"""Seconds an open message may stay unwritten while it streams."""

RETRY_LIMIT: Final = 2.0
"""Seconds at most between two attempts to write what a failed write left in memory (the
disk was full): retrying costs a write of everything held, so a disk that stays full is
tried every two seconds, not in a busy loop."""

MIN_RETRY: Final = 0.01
"""The shortest wait before a retry, so that a store flushing at once does not spin."""

WriteWatcher = Callable[[Exception | None], object]
"""Told the error when writing starts failing, and None once everything is written."""


def retry_delay(interval: float, failures: int) -> float:
    """Seconds before the next flush after `failures` failed writes in a row: the flush
    interval when none failed, then doubling from it up to RETRY_LIMIT (or the interval
    itself when that is longer): a disk that frees soon is written soon, one that stays
    full is not hammered."""
    if failures <= 0:
        return interval
    limit = max(interval, RETRY_LIMIT)
    return min(max(interval, MIN_RETRY) * 2.0 ** min(failures - 1, 64), limit)


_NO_SEQ: Final = 2**62

_JSON_COLUMNS: Final = frozenset(
    {"modes", "config_options", "commands", "usage", "info", "command"}
)
_QUIET_COLUMNS: Final = frozenset({"unread", "draft"})
"""What the user did with a session (read it, wrote a draft), which does not make it newer."""
_SESSION_COLUMNS: Final = (
    frozenset({"agent", "title", "status", "agent_session_id", "cwd"})
    | _JSON_COLUMNS
    | _QUIET_COLUMNS
)

_UPSERT_ROWS: Final = 512
"""Rows per upsert statement (11 parameters each, well under SQLite's 32766)."""


WRITE_COLUMNS: Final = "session, seq, key, kind, role, turn, bytes, created, updated, payload, text"
"""The columns a written row fills, in the order of `row_values`."""


def row_values(row: Row) -> tuple[Any, ...]:
    """A row as the values of WRITE_COLUMNS."""
    payload = dump_json(row.payload) if row.payload is not None else None
    return (
        row.session,
        row.seq,
        row.key,
        row.kind,
        row.role,
        row.turn,
        row.bytes,
        row.created,
        row.updated,
        payload,
        row.text,
    )


def _insert(rows: int) -> str:
    """One statement writing `rows` rows this store has never written: it inserts them and
    overwrites nothing (a seq or key already taken is skipped, and missing from what the
    statement returns). A single statement is atomic on its own, so a commit of up to
    _UPSERT_ROWS rows costs one round trip to the database thread."""
    values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * rows)
    return (
        f"INSERT INTO messages ({WRITE_COLUMNS}) VALUES {values}"
        " ON CONFLICT DO NOTHING RETURNING session, seq"
    )


def _upsert(rows: int) -> str:
    """One statement writing `rows` rows this store has written before: each updates its
    stored row only while that row still has the same key (else it is skipped, and missing
    from what the statement returns), and is inserted again if it went away."""
    values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * rows)
    return (
        f"INSERT INTO messages ({WRITE_COLUMNS}) VALUES {values}"
        " ON CONFLICT (session, seq) DO UPDATE SET"
        " bytes = excluded.bytes, updated = excluded.updated,"
        " payload = excluded.payload, text = excluded.text"
        " WHERE messages.key = excluded.key"
        " RETURNING session, seq"
    )


def _row_writes(
    statement: Callable[[int], str], rows: Sequence[Row]
) -> list[tuple[str, tuple[Any, ...], int]]:
    """`rows` as statements of at most _UPSERT_ROWS rows each: (sql, parameters, rows)."""
    writes = []
    for start in range(0, len(rows), _UPSERT_ROWS):
        group = [row_values(row) for row in rows[start : start + _UPSERT_ROWS]]
        writes.append((statement(len(group)), tuple(p for row in group for p in row), len(group)))
    return writes


_ROW_COLUMNS: Final = "session, seq, key, kind, role, turn, text, payload, bytes, created, updated"


def _conflict(session: str, seqs: Sequence[int]) -> WriteConflict:
    where = ", ".join(map(str, sorted(seqs)[:8])) + (", ..." if len(seqs) > 8 else "")
    return WriteConflict(
        session,
        f"Session {session} was written by another Cockpit: the database already holds other "
        f"messages at seq {where}. They were not overwritten, and this Cockpit's messages "
        "there are not saved.",
    )


def _load(value: str | None) -> Any:
    return json.loads(value) if value is not None else None


def _row_from_db(record: Sequence[Any]) -> Row:
    session, seq, key, kind, role, turn, text, payload, size, created, updated = record
    return Row(session, seq, key, kind, role, turn, text, _load(payload), size, created, updated)


def _session_from_db(record: sqlite3.Row) -> SessionRecord:
    def tupled(value: Any) -> tuple[Mapping[str, Any], ...] | None:
        return tuple(value) if isinstance(value, list) else None

    return SessionRecord(
        id=record["id"],
        agent=record["agent"],
        command=tuple(_load(record["command"]) or ()),
        cwd=record["cwd"],
        title=record["title"],
        status=record["status"],
        agent_session_id=record["agent_session_id"],
        created=record["created"],
        updated=record["updated"],
        modes=_load(record["modes"]),
        config_options=tupled(_load(record["config_options"])),
        commands=tupled(_load(record["commands"])),
        usage=_load(record["usage"]),
        info=_load(record["info"]),
        unread=bool(record["unread"]),
        draft=record["draft"],
    )


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
        self._flush_interval = flush_interval
        self._clock = clock
        self._folds: dict[str, SessionFold] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._write_lock = asyncio.Lock()
        self._read_lock = asyncio.Lock()
        """One read transaction at a time on the reader connection."""
        self._sessions = SessionLocks(path)
        """The sessions this store writes, each locked against other writers."""
        self._timer: asyncio.TimerHandle | None = None
        self._flush_task: asyncio.Task[None] | None = None
        self._closed = False
        self._failure: Exception | None = None
        self._failures = 0
        """Writes failed in a row since everything was last written."""
        self._watchers: list[WriteWatcher] = []
        self._meta: list[tuple[str, tuple[Any, ...]]] = []
        self._deleted: set[str] = set()
        """Sessions deleted while this store was open: never written again."""
        """Session metadata updates (mode, usage...) waiting for the next flush."""

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
        return cls(db_path, writer, reader, flush_interval, clock)

    async def close(self) -> None:
        """Write everything still in memory and close the database."""
        if self._closed:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._flush_task is not None:
            await asyncio.gather(self._flush_task, return_exceptions=True)
        try:
            await self.flush()
        finally:
            # Even when the last write fails, the connections (and their threads) must go,
            # or the process could never exit; and a retry that failure scheduled with them.
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
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
        records = await self._read("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return _session_from_db(records[0]) if records else None

    async def list_sessions(self) -> list[SessionRecord]:
        """Every stored session, most recently updated first."""
        await self._metadata_written()
        records = await self._read("SELECT * FROM sessions ORDER BY updated DESC, id")
        return [_session_from_db(record) for record in records]

    async def _metadata_written(self) -> None:
        """Read-your-writes for session metadata: write what waits for the timer, and let a
        flush already under way finish (the write lock is first come, first served). While
        writes fail (the disk is full) a read does not try again: it shows what is stored,
        and the retry timer writes the rest."""
        if self._meta and self._failure is None:
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
        unknown = set(fields) - _SESSION_COLUMNS
        if unknown:
            raise ValueError(f"not session fields: {sorted(unknown)}")
        if not fields:
            return
        names = sorted(fields)
        values = [
            dump_json(fields[name])
            if name in _JSON_COLUMNS and fields[name] is not None
            else fields[name]
            for name in names
        ]
        assignments = ", ".join(f"{name} = ?" for name in names)
        if not set(names) <= _QUIET_COLUMNS:
            assignments += ", updated = ?"
            values.append(self._clock())
        statement = (f"UPDATE sessions SET {assignments} WHERE id = ?", (*values, session_id))
        if self._failure is not None:
            self._meta.append(statement)
            self._schedule_flush()
            return
        try:
            async with self._write_lock:
                cursor = await self._writer.execute(*statement)
        except sqlite3.OperationalError as error:  # the disk is full: held and retried
            self._meta.append(statement)
            self._write_failed(error)
            return
        if cursor.rowcount == 0:
            raise UnknownSession(session_id)

    def mark(self, session_id: str, **fields: Any) -> None:
        """Change what the user did with a session (read it, wrote a draft) without waiting:
        written with the next flush, in the order asked, and seen by every read of the
        session before then (the metadata path). Not activity: `updated` stays."""
        unknown = set(fields) - _QUIET_COLUMNS
        if unknown:
            raise ValueError(f"not marks of a session: {sorted(unknown)}")
        names = sorted(fields)
        assignments = ", ".join(f"{name} = ?" for name in names)
        self._meta.append(
            (
                f"UPDATE sessions SET {assignments} WHERE id = ?",
                (*(fields[name] for name in names), session_id),
            )
        )
        self._schedule_flush()

    async def delete_session(self, session_id: str) -> None:
        """Forget a session and its whole transcript (SessionBusy while another Cockpit
        writes it)."""
        self._sessions.claim(session_id)
        self._deleted.add(session_id)  # nothing starts writing it from now on
        self._folds.pop(session_id, None)
        try:
            await self._commit(
                (),
                [
                    ("DELETE FROM messages WHERE session = ?", (session_id,)),
                    ("DELETE FROM sessions WHERE id = ?", (session_id,)),
                ],
            )
        finally:
            self._sessions.release(session_id)

    # -- the write side -----------------------------------------------------------------------

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
        except BaseException:
            if claimed and session not in self._folds:
                self._sessions.release(session)
            raise
        if session in self._deleted:  # deleted while its end was read
            raise UnknownSession(session)
        self._sessions.claim(session)  # still ours, even if a concurrent first call failed
        next_seq, turn = (last[0] + 1, last[1]) if last else (1, 0)
        fold = self._folds.setdefault(session, SessionFold(session, next_seq, turn))
        self._locks.setdefault(session, asyncio.Lock())
        return fold

    async def claim(self, session: str) -> None:
        """Become the writer of a session before anything is written to it: SessionBusy
        when another Cockpit writes it, UnknownSession when it is not stored. (Writing
        claims a session by itself; this lets a caller find out before it starts work.)"""
        await self._fold(session)

    async def release(self, session: str) -> None:
        """Write what this store holds of a session, forget it and give up its lock, so
        another Cockpit can continue it. Writing it again claims it again."""
        if session in self._folds:
            async with self._locks[session]:
                fold = self._folds.get(session)
                if fold is not None:
                    fold.seal()
                    await self._commit(list(fold.unsaved.values()))
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
        if lock.locked() or fold.needs(chunk) is not None:
            # Loading a stored row awaits: hold the session's place in line meanwhile.
            async with self._holding(chunk.session) as fold:
                key = fold.needs(chunk)
                if key is not None:
                    async with self._writer.execute(
                        f"SELECT {_ROW_COLUMNS} FROM messages WHERE session = ? AND key = ?",
                        (chunk.session, key),
                    ) as cur:
                        record = await cur.fetchone()
                    if record is not None:
                        fold.adopt(_row_from_db(record))
                frames, now = fold.apply(chunk, self._clock())
        else:
            frames, now = fold.apply(chunk, self._clock())
        if chunk.update in META_UPDATES:
            self._meta.extend(_meta_statements(chunk))
        if now:
            await self._commit(now)
        if fold.unsaved or self._meta:
            self._schedule_flush()
        return frames

    async def begin_turn(
        self, session: str, prompt: str, payload: Mapping[str, Any] | None = None
    ) -> tuple[int, list[Frame]]:
        """Open the next turn with the user's prompt, committed before it is sent anywhere."""
        async with self._holding(session) as fold:
            rows = fold.begin_turn(prompt, payload, self._clock())
            await self._commit(rows)
            return fold.turn, [rows[-1].frame()]

    async def end_turn(self, session: str) -> None:
        """Seal the open message and write it: the turn's stop reason has arrived."""
        async with self._holding(session) as fold:
            await self._commit([fold.seal()])

    async def begin_replay(self, session: str) -> ReplayWindow:
        """Start applying history an agent replays on `session/load` (rule 5)."""
        async with self._holding(session) as fold:
            window, sealed = fold.begin_replay()
            await self._commit([sealed])
            return window

    async def end_replay(self, session: str) -> None:
        """Close the replay window: later chunks are live again."""
        async with self._holding(session) as fold:
            await self._commit([fold.end_replay()])

    def turn_of(self, session: str) -> int | None:
        """The current turn of a session the writer has touched, else None."""
        fold = self._folds.get(session)
        return fold.turn if fold is not None else None

    # -- write failures -----------------------------------------------------------------------

    @property
    def failure(self) -> Exception | None:
        """Why the last write failed, while what it could not write waits in memory for a
        retry; None once a flush has written everything."""
        return self._failure

    def watch_writes(self, watcher: WriteWatcher) -> Callable[[], None]:
        """Call `watcher` with the error when writing starts failing (the disk is full), and
        with None once a flush has written everything held meanwhile; nothing in between,
        however many retries fail. Returns the function that stops it."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    def unwritten(self) -> tuple[int, int]:
        """The rows held in memory that are not written as they stand, and their characters:
        what closing now would lose when the last write fails."""
        rows = [row for fold in self._folds.values() for row in fold.unsaved.values()]
        return len(rows), sum(row.length for row in rows)

    def _write_failed(self, error: Exception) -> None:
        """A write failed. What it held stays in memory (a row stays unsaved until a write
        settles it; metadata goes back in line) and the timer tries again, later after each
        failure (`retry_delay`), for as long as the store is open. Watchers hear of the
        first failure only."""
        self._failures += 1
        first = self._failure is None
        self._failure = error
        self._schedule_flush()
        if first:
            log.error("writing the transcript failed; what it holds is retried", exc_info=error)
            self._tell_watchers(error)

    def _all_written(self) -> None:
        """A flush wrote everything: writes work again, and watchers hear so."""
        self._failures = 0
        if self._failure is not None:
            self._failure = None
            log.warning("the transcript is written again")
            self._tell_watchers(None)

    def _tell_watchers(self, error: Exception | None) -> None:
        for watcher in list(self._watchers):
            try:
                watcher(error)
            except Exception:
                log.exception("a watcher of the store's writes failed")

    # -- writing ------------------------------------------------------------------------------

    def _schedule_flush(self) -> None:
        if self._timer is None and not self._closed:
            loop = asyncio.get_running_loop()
            delay = retry_delay(self._flush_interval, self._failures)
            self._timer = loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self.flush())
        task.add_done_callback(self._timed_flush_done)
        self._flush_task = task

    def _timed_flush_done(self, task: asyncio.Task[None]) -> None:
        """Log a timed flush that failed, once: a failed write was logged as it failed, and
        a disk that stays full must not fill the log with a retry every two seconds."""
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        if not isinstance(error, sqlite3.Error):  # a database error was logged as it failed
            log.error("writing the transcript failed", exc_info=error)

    async def flush(self) -> None:
        """Write every row that changed since it was last written, and session metadata.

        One transaction for all of it; when that fails, each session's rows are written on
        their own, so a session that cannot be written (a disk error on its row, another
        writer) never keeps the others from being saved. What is not written stays in
        memory and is retried (see `_write_failed`)."""
        meta, self._meta = self._meta, []
        rows = [row for fold in self._folds.values() for row in fold.unsaved.values()]
        retrying = self._failure is not None  # reported already: a retry logs nothing more
        try:
            await self._commit(rows, meta)
        except Exception as error:
            if len(self._folds) < 2:
                if _may_succeed_later(error):
                    self._meta[:0] = meta  # back in line, ahead of newer updates
                raise
            if not retrying:
                log.exception("writing the transcript failed; writing each session apart")
            await self._commit_apart(meta, retrying)
        self._all_written()

    async def _commit_apart(
        self, meta: Sequence[tuple[str, tuple[Any, ...]]], retrying: bool
    ) -> None:
        failed: Exception | None = None
        kept: list[tuple[str, tuple[Any, ...]]] = []
        for statement in meta:
            try:
                await self._commit((), [statement])
            except Exception as error:
                if _may_succeed_later(error):
                    kept.append(statement)
                failed = error
        self._meta[:0] = kept  # back in line, ahead of newer updates
        for fold in list(self._folds.values()):
            try:
                await self._commit(list(fold.unsaved.values()))
            except Exception as error:
                if not retrying:
                    log.exception("could not write session %s", fold.session)
                failed = error
        if failed is not None:
            raise failed

    async def _commit(
        self,
        rows: Iterable[LiveRow | None],
        statements: Sequence[tuple[str, tuple[Any, ...]]] = (),
    ) -> None:
        """Write these rows (as they are now) and statements in one transaction."""
        batch = [
            (row, row.version, row.snapshot()) for row in rows if row is not None and row.unsaved
        ]
        if not batch and not statements:
            return
        async with self._write_lock:
            # Under the write lock every earlier write of these rows is settled, so `saved`
            # tells a row never written (an insert, which must not overwrite anything) from
            # one this store wrote before (an update of its own row, with the same key).
            writes = [
                *_row_writes(_insert, [r for row, _, r in batch if row.saved < 0]),
                *_row_writes(_upsert, [r for row, _, r in batch if row.saved >= 0]),
                *((sql, params, 0) for sql, params in statements),
            ]
            written: set[tuple[str, int]] = set()
            try:
                await self._write_all(writes, written)
            except Exception as error:
                self._write_failed(error)
                raise
            # A row whose place holds another writer's message is not written (nor settled:
            # it stays in memory); every other row is, so one conflict holds nothing up.
            for row, version, snapshot in batch:
                fold = self._folds.get(row.session)
                if fold is not None and (snapshot.session, snapshot.seq) in written:
                    fold.settle(row, version)
        _check_written(batch, written)

    async def _write_all(
        self, writes: Sequence[tuple[str, tuple[Any, ...], int]], written: set[tuple[str, int]]
    ) -> None:
        """Make these writes in one transaction (a single statement is one by itself)."""
        if len(writes) == 1:
            await self._write(writes[0], written)
            return
        await self._writer.execute("BEGIN IMMEDIATE")
        try:
            for write in writes:
                await self._write(write, written)
            await self._writer.execute("COMMIT")
        except BaseException:
            # On SQLITE_FULL or an I/O error SQLite may have rolled the transaction back
            # itself: a ROLLBACK then fails ("no transaction is active") and would hide why.
            if self._writer.in_transaction:
                await self._writer.execute("ROLLBACK")
            raise

    async def _write(
        self, write: tuple[str, tuple[Any, ...], int], written: set[tuple[str, int]]
    ) -> None:
        sql, params, rows = write
        if rows:
            for session, seq in await self._writer.execute_fetchall(sql, params):
                written.add((session, seq))
        else:
            await self._writer.execute(sql, params)

    # -- the read side ------------------------------------------------------------------------

    def _unwritten(self, session: str) -> dict[int, Row]:
        fold = self._folds.get(session)
        if fold is None:
            return {}
        return {seq: row.snapshot() for seq, row in fold.unsaved.items()}

    async def page_before(
        self,
        session: str,
        before_seq: int | None = None,
        max_rows: int = PAGE_ROWS,
        max_bytes: int = PAGE_BYTES,
    ) -> Page:
        """The page of rows just before `before_seq` (the tail when None), oldest first.

        The page is filled newest first up to `max_rows` rows and `max_bytes` bytes, and
        always holds at least one row when any exists. Rows still in memory are included:
        a read always shows the latest text.
        """
        bound = before_seq if before_seq is not None else _NO_SEQ
        return await self._page(
            session,
            "seq < ? ORDER BY seq DESC",
            bound,
            lambda seq: seq < bound,
            max_rows,
            max_bytes,
            newest_first=True,
        )

    async def rows_after(
        self,
        session: str,
        after_seq: int,
        max_rows: int = PAGE_ROWS,
        max_bytes: int = PAGE_BYTES,
    ) -> Page:
        """The rows just after `after_seq`, oldest first, bounded like a page."""
        return await self._page(
            session,
            "seq > ? ORDER BY seq ASC",
            after_seq,
            lambda seq: seq > after_seq,
            max_rows,
            max_bytes,
            newest_first=False,
        )

    async def _page(
        self,
        session: str,
        where: str,
        bound: int,
        in_range: Callable[[int], bool],
        max_rows: int,
        max_bytes: int,
        *,
        newest_first: bool,
    ) -> Page:
        unwritten = {seq: row for seq, row in self._unwritten(session).items() if in_range(seq)}
        # The read runs to its end even when its caller is cancelled (a user switching
        # sessions twice in a row): cut inside its transaction, it would leave the reader
        # unable to start another one, and every later read would fail.
        order, count, stored = await asyncio.shield(
            self._read_page(session, where, bound, unwritten, max_rows, max_bytes, newest_first)
        )
        chosen = order[:count]
        rows = []
        for seq in sorted(chosen):
            memory, disk = unwritten.get(seq), stored.get(seq)
            if memory is None or (disk is not None and len(disk.text) > len(memory.text)):
                assert disk is not None
                rows.append(disk)
            else:
                rows.append(memory)
        return Page(tuple(rows), has_more=len(order) > count)

    async def _read_page(
        self,
        session: str,
        where: str,
        bound: int,
        unwritten: Mapping[int, Row],
        max_rows: int,
        max_bytes: int,
        newest_first: bool,
    ) -> tuple[list[int], int, dict[int, Row]]:
        """The seqs a page may hold (in reading order), how many it takes, and the stored
        rows among them, read in one transaction so sizes and rows agree."""
        reader = self._reader
        async with self._read_lock:
            if reader.in_transaction:  # never expected; a reader must not stay stuck
                log.warning("the transcript reader was left inside a transaction")
                await reader.execute("ROLLBACK")
            await reader.execute("BEGIN")
            try:
                async with reader.execute(
                    f"SELECT seq, bytes FROM messages WHERE session = ? AND {where} LIMIT ?",
                    (session, bound, max_rows + 1),
                ) as cur:
                    sizes = {seq: size for seq, size in await cur.fetchall()}
                for seq, row in unwritten.items():
                    sizes[seq] = row.bytes
                order = sorted(sizes, reverse=newest_first)[: max_rows + 1]
                count = page_length([sizes[seq] for seq in order], max_rows, max_bytes)
                chosen = order[:count]
                stored: dict[int, Row] = {}
                if chosen:
                    async with reader.execute(
                        f"SELECT {_ROW_COLUMNS} FROM messages"
                        " WHERE session = ? AND seq BETWEEN ? AND ?",
                        (session, min(chosen), max(chosen)),
                    ) as cur:
                        stored = {
                            record[1]: _row_from_db(record) for record in await cur.fetchall()
                        }
            finally:
                await reader.execute("COMMIT")
        return order, count, stored

    async def _read(self, sql: str, parameters: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """One statement on the reader connection, never inside a page's read transaction:
        there it would see the database as it was when the page began (a session created
        meanwhile not there yet)."""
        async with self._read_lock, self._reader.execute(sql, parameters) as cur:
            return list(await cur.fetchall())

    async def row(self, session: str, key: str) -> Row | None:
        """The latest version of one row, by key."""
        for row in self._unwritten(session).values():
            if row.key == key:
                return row
        records = await self._read(
            f"SELECT {_ROW_COLUMNS} FROM messages WHERE session = ? AND key = ?", (session, key)
        )
        return _row_from_db(records[0]) if records else None

    async def last_of_kind(self, session: str, kind: str) -> Row | None:
        """The newest row of this kind in a session (its latest plan, say)."""
        unwritten = [r for r in self._unwritten(session).values() if r.kind == kind]
        records = await self._read(
            f"SELECT {_ROW_COLUMNS} FROM messages WHERE session = ? AND kind = ?"
            " ORDER BY seq DESC LIMIT 1",
            (session, kind),
        )
        stored = [_row_from_db(record) for record in records]
        return max([*unwritten, *stored], key=lambda row: row.seq, default=None)

    async def latest_seqs(self) -> dict[str, int]:
        """The newest seq of every session that has rows (one index probe per session)."""
        records = await self._read("SELECT session, MAX(seq) FROM messages GROUP BY session")
        latest = {session: seq for session, seq in records}
        for session, fold in self._folds.items():
            if fold.next_seq > 1:
                latest[session] = max(latest.get(session, 0), fold.next_seq - 1)
        return latest

    async def all_rows(self, session: str) -> list[Row]:
        """Every row of a session, oldest first, read page by page (for export and tests)."""
        rows: list[Row] = []
        after = 0
        while True:
            page = await self.rows_after(session, after)
            rows.extend(page.rows)
            if not page.has_more or not page.rows:
                return rows
            after = page.rows[-1].seq


def _meta_statements(chunk: Chunk) -> list[tuple[str, tuple[Any, ...]]]:
    """The session updates one metadata chunk makes (mode, options, commands, usage, info)."""
    data, session = chunk.data, chunk.session
    where = " WHERE id = ?"
    # A value of the wrong shape changes nothing: a mode id that is an object could not be
    # bound, and a list that is not one would be read back as one.
    if chunk.update == "current_mode_update":
        mode = data.get("currentModeId")
        if not isinstance(mode, str):
            return []
        return [
            (
                "UPDATE sessions SET modes = json_set(coalesce(modes, '{}'), '$.currentModeId', ?)"
                + where,
                (mode, session),
            )
        ]
    if chunk.update == "config_option_update":
        options = data.get("configOptions") or []
        if not isinstance(options, list):
            return []
        return [("UPDATE sessions SET config_options = ?" + where, (dump_json(options), session))]
    if chunk.update == "available_commands_update":
        commands = data.get("availableCommands") or []
        if not isinstance(commands, list):
            return []
        return [("UPDATE sessions SET commands = ?" + where, (dump_json(commands), session))]
    fields = {name: value for name, value in data.items() if name != "sessionUpdate"}
    if chunk.update == "usage_update":
        return [
            (
                "UPDATE sessions SET usage = json_patch(coalesce(usage, '{}'), ?)" + where,
                (dump_json(fields), session),
            )
        ]
    title = data.get("title")
    return [
        (
            "UPDATE sessions SET title = coalesce(?, title),"
            " info = json_patch(coalesce(info, '{}'), ?)" + where,
            (title if isinstance(title, str) else None, dump_json(fields), session),
        )
    ]


def _may_succeed_later(error: Exception) -> bool:
    """True for a write error a later attempt may not meet (the disk was full, an I/O error,
    the database locked: an OperationalError), so what failed is kept for it; a statement
    that is itself wrong (a constraint, a value that cannot be bound) fails every time."""
    return isinstance(error, sqlite3.OperationalError)


def _check_written(
    batch: Sequence[tuple[LiveRow, int, Row]], written: set[tuple[str, int]]
) -> None:
    """Raise WriteConflict when a row of `batch` was not written: its place holds another
    message (another writer's), which a write must never overwrite."""
    missing = [r for _, _, r in batch if (r.session, r.seq) not in written]
    if missing:
        raise _conflict(
            missing[0].session, [r.seq for r in missing if r.session == missing[0].session]
        )
