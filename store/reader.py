"""The store's read side: pages bounded by rows and bytes, single rows and the newest seqs,
read on the reader connection and merged with the rows still in memory, so a read always
shows the latest text."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import aiosqlite

from store.chunks import SHELL_UPDATE
from store.model import Page, Row
from store.paging import PAGE_BYTES, PAGE_ROWS, page_length
from store.session_fold import SessionFold
from store.sql import ROW_COLUMNS, row_from_db

log = logging.getLogger(__name__)

_NO_SEQ: Final = 2**62


class TranscriptReader:
    """Reads a store's rows. The folds are the store's own dict of the sessions it writes,
    whose unwritten rows every read includes."""

    def __init__(self, connection: aiosqlite.Connection, folds: Mapping[str, SessionFold]) -> None:
        self._connection = connection
        self._folds = folds
        self._lock = asyncio.Lock()
        """One read transaction at a time on the reader connection."""

    def _unwritten(self, session: str) -> dict[int, Row]:
        """The rows of a session held in memory, as they stand now, by seq."""
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
        reader = self._connection
        async with self._lock:
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
                        f"SELECT {ROW_COLUMNS} FROM messages"
                        " WHERE session = ? AND seq BETWEEN ? AND ?",
                        (session, min(chosen), max(chosen)),
                    ) as cur:
                        stored = {record[1]: row_from_db(record) for record in await cur.fetchall()}
            finally:
                await reader.execute("COMMIT")
        return order, count, stored

    async def read(self, sql: str, parameters: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """One statement on the reader connection, never inside a page's read transaction:
        there it would see the database as it was when the page began (a session created
        meanwhile not there yet). It runs to its end even when its caller is cancelled (a
        client of the service that goes away mid-request): cut before its cursor closed, the
        statement would stay open, and every later read would see the database as it was
        then. Its failure is its caller's to hear; with the caller gone (the store closed
        under a statement no one waits for), it is dropped, not logged as never retrieved."""
        statement = asyncio.ensure_future(self._read(sql, parameters))
        statement.add_done_callback(_retrieved)
        return await asyncio.shield(statement)

    async def _read(self, sql: str, parameters: Sequence[Any]) -> list[sqlite3.Row]:
        async with self._lock, self._connection.execute(sql, parameters) as cur:
            return list(await cur.fetchall())

    async def row(self, session: str, key: str) -> Row | None:
        """The latest version of one row, by key."""
        for row in self._unwritten(session).values():
            if row.key == key:
                return row
        records = await self.read(
            f"SELECT {ROW_COLUMNS} FROM messages WHERE session = ? AND key = ?", (session, key)
        )
        return row_from_db(records[0]) if records else None

    async def last_of_kind(self, session: str, kind: str) -> Row | None:
        """The newest row of this kind in a session (its latest plan, say)."""
        unwritten = [r for r in self._unwritten(session).values() if r.kind == kind]
        records = await self.read(
            f"SELECT {ROW_COLUMNS} FROM messages WHERE session = ? AND kind = ?"
            " ORDER BY seq DESC LIMIT 1",
            (session, kind),
        )
        stored = [row_from_db(record) for record in records]
        return max([*unwritten, *stored], key=lambda row: row.seq, default=None)

    async def running_commands(self) -> list[Row]:
        """Rows of the user's commands, in every session, that last said they were running
        (what a Cockpit that stopped while they ran left)."""
        records = await self.read(
            f"SELECT {ROW_COLUMNS} FROM messages WHERE kind = ?"
            " AND json_extract(payload, '$.state') = 'running' ORDER BY session, seq",
            (SHELL_UPDATE,),
        )
        return [row_from_db(record) for record in records]

    async def latest_seqs(self) -> dict[str, int]:
        """The newest seq of every session that has rows (one index probe per session)."""
        records = await self.read("SELECT session, MAX(seq) FROM messages GROUP BY session")
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


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Mark a finished task's failure as seen (its awaiter, if any, hears it too)."""
    if not task.cancelled():
        task.exception()
