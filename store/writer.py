"""The store's write side: what changed is written in one transaction per commit, new
rows inserted without overwriting anything and rows written before updated only while their
place still holds them. A write that fails (the disk is full) leaves what it held in memory
and is retried on a timer that backs off; watchers hear when writing starts failing and
when everything is written again."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import aiosqlite

from store.errors import WriteConflict
from store.model import Row
from store.session_fold import LiveRow, SessionFold
from store.sql import insert_sql, row_writes, upsert_sql

log = logging.getLogger(__name__)

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


class TranscriptWriter:
    """Writes a store's rows and session metadata, coalesced on a timer and retried after
    failures. The folds are the store's own dict of the sessions it writes (the store adds
    and removes them); the lock is the store's write lock, which its other writes share."""

    def __init__(
        self,
        connection: aiosqlite.Connection,
        lock: asyncio.Lock,
        folds: Mapping[str, SessionFold],
        flush_interval: float,
    ) -> None:
        self._connection = connection
        self._lock = lock
        self._folds = folds
        self._flush_interval = flush_interval
        self._timer: asyncio.TimerHandle | None = None
        self._flush_task: asyncio.Task[None] | None = None
        self._writing: set[asyncio.Future[None]] = set()
        """The writes under way (each runs to its end, its caller cancelled or not)."""
        self.closed = False
        """True once the store closes: no flush is scheduled from then on."""
        self._failure: Exception | None = None
        self._failures = 0
        """Writes failed in a row since everything was last written."""
        self._watchers: list[WriteWatcher] = []
        self.meta: list[tuple[str, tuple[Any, ...]]] = []
        """Session metadata updates (mode, usage...) waiting for the next flush."""

    async def idle(self) -> None:
        """Cancel the flush timer and let a timed flush, and every write, under way finish
        (closing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._flush_task is not None:
            await asyncio.gather(self._flush_task, return_exceptions=True)
        await asyncio.gather(*self._writing, return_exceptions=True)

    def stop(self) -> None:
        """Schedule no flush from now on, and cancel a retry the last failure scheduled."""
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

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

    def unwritten(self, session: str | None = None) -> tuple[int, int]:
        """The rows held in memory that are not written as they stand, and their characters
        (of every session, or of one): what closing now would lose when the last write
        fails."""
        folds = self._folds.values() if session is None else [self._folds.get(session)]
        rows = [row for fold in folds if fold is not None for row in fold.unsaved.values()]
        return len(rows), sum(row.length for row in rows)

    def write_failed(self, error: Exception) -> None:
        """A write failed. What it held stays in memory (a row stays unsaved until a write
        settles it; metadata goes back in line) and the timer tries again, later after each
        failure (`retry_delay`), for as long as the store is open. Watchers hear of the
        first failure only."""
        self._failures += 1
        first = self._failure is None
        self._failure = error
        self.schedule_flush()
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

    def schedule_flush(self) -> None:
        """Flush on the timer (one at a time): after the flush interval while writes work,
        later after each failure in a row (`retry_delay`); never once the store closes."""
        if self._timer is None and not self.closed:
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
        memory and is retried (see `write_failed`)."""
        meta, self.meta = self.meta, []
        rows = [row for fold in self._folds.values() for row in fold.unsaved.values()]
        retrying = self._failure is not None  # reported already: a retry logs nothing more
        try:
            await self.commit(rows, meta)
        except Exception as error:
            if len(self._folds) < 2:
                if _may_succeed_later(error):
                    self.meta[:0] = meta  # back in line, ahead of newer updates
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
                await self.commit((), [statement])
            except Exception as error:
                if _may_succeed_later(error):
                    kept.append(statement)
                failed = error
        self.meta[:0] = kept  # back in line, ahead of newer updates
        for fold in list(self._folds.values()):
            try:
                await self.commit(list(fold.unsaved.values()))
            except Exception as error:
                if not retrying:
                    log.exception("could not write session %s", fold.session)
                failed = error
        if failed is not None:
            raise failed

    async def commit(
        self,
        rows: Iterable[LiveRow | None],
        statements: Sequence[tuple[str, tuple[Any, ...]]] = (),
    ) -> None:
        """Write these rows (as they are now) and statements in one transaction.

        The write runs to its end even when its caller is cancelled (a prompt's task
        cancelled by a delete, a consumer by a stop): cut between its BEGIN and its COMMIT,
        it left the connection inside that transaction, and every later write went into it
        uncommitted: unseen by reads, lost on exit, while the rows counted as written."""
        batch = [
            (row, row.version, row.snapshot()) for row in rows if row is not None and row.unsaved
        ]
        if not batch and not statements:
            return
        writing = asyncio.ensure_future(self._commit(batch, statements))
        self._writing.add(writing)
        writing.add_done_callback(self._written)
        await asyncio.shield(writing)

    def _written(self, writing: asyncio.Future[None]) -> None:
        """Forget a write once done; read its outcome, which its caller, cancelled, did not
        (a failure was logged where it failed), so that asyncio does not warn of it."""
        self._writing.discard(writing)
        if not writing.cancelled():
            writing.exception()

    async def _commit(
        self,
        batch: Sequence[tuple[LiveRow, int, Row]],
        statements: Sequence[tuple[str, tuple[Any, ...]]],
    ) -> None:
        async with self._lock:
            # Under the write lock every earlier write of these rows is settled, so `saved`
            # tells a row never written (an insert, which must not overwrite anything) from
            # one this store wrote before (an update of its own row, with the same key).
            writes = [
                *row_writes(insert_sql, [r for row, _, r in batch if row.saved < 0]),
                *row_writes(upsert_sql, [r for row, _, r in batch if row.saved >= 0]),
                *((sql, params, 0) for sql, params in statements),
            ]
            written: set[tuple[str, int]] = set()
            try:
                await self._write_all(writes, written)
            except Exception as error:
                self.write_failed(error)
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
        await self._connection.execute("BEGIN IMMEDIATE")
        try:
            for write in writes:
                await self._write(write, written)
            await self._connection.execute("COMMIT")
        except BaseException:
            # On SQLITE_FULL or an I/O error SQLite may have rolled the transaction back
            # itself: a ROLLBACK then fails ("no transaction is active") and would hide why.
            if self._connection.in_transaction:
                await self._connection.execute("ROLLBACK")
            raise

    async def _write(
        self, write: tuple[str, tuple[Any, ...], int], written: set[tuple[str, int]]
    ) -> None:
        sql, params, rows = write
        if rows:
            for session, seq in await self._connection.execute_fetchall(sql, params):
                written.add((session, seq))
        else:
            await self._connection.execute(sql, params)


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


def _conflict(session: str, seqs: Sequence[int]) -> WriteConflict:
    """The error that says which seqs of `session` another writer holds (eight at most)."""
    where = ", ".join(map(str, sorted(seqs)[:8])) + (", ..." if len(seqs) > 8 else "")
    return WriteConflict(
        session,
        f"Session {session} was written by another Cockpit: the database already holds other "
        f"messages at seq {where}. They were not overwritten, and this Cockpit's messages "
        "there are not saved.",
    )
