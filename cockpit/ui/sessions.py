"""The session records the screen shows, and the session chosen: one object owns them and
reads them from the engine; what changed in the background is read outside the message
queue and told through a callback."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from cockpit.api import EngineAPI
from cockpit.text.textout import session_title
from cockpit.ui.one_line import clean_line, short_folder
from store import SessionRecord


class Sessions:
    """Every session's record, the one chosen, and the background reads of changed ones."""

    def __init__(
        self,
        engine: Callable[[], EngineAPI],
        read: Callable[[str], None],
        report_failure: Callable[[str, Exception], None],
    ) -> None:
        self._engine = engine
        self._read = read
        """Told each session read in the background (the rail shows it)."""
        self._report_failure = report_failure
        self.records: dict[str, SessionRecord] = {}
        self.current: str | None = None
        """The session chosen: the rail highlights it and the composer writes to it (its
        transcript follows as soon as its page is read)."""
        self._stale: set[str] = set()
        """Background sessions whose record changed and has not been read yet."""
        self._stale_reader: asyncio.Task[None] | None = None

    async def reload(self) -> None:
        """Read every record again."""
        self.records = {record.id: record for record in await self._engine().sessions()}

    def ordered(self) -> list[SessionRecord]:
        """The records as the rail lists them, newest first."""
        return sorted(self.records.values(), key=lambda record: (-record.created, record.id))

    async def fresh(self, session: str) -> SessionRecord | None:
        """Read one record now (None, and forgotten, when it was deleted)."""
        try:
            record = await self._engine().session(session)
        except KeyError:
            self.records.pop(session, None)
            return None
        self.records[session] = record
        return record

    def title_of(self, session: str) -> str:
        record = self.records.get(session)
        return session_title(record) if record else session

    def choices(self) -> list[tuple[str, str, str]]:
        """(id, title, details) of every session, for the command palette."""
        return [
            (r.id, clean_line(session_title(r)), clean_line(f"{r.agent} · {short_folder(r.cwd)}"))
            for r in self.ordered()
        ]

    def take_stale(self, session: str) -> bool:
        """True when `session`'s record changed in the background and waits to be read (it
        is read by the caller, first, from now on)."""
        if session not in self._stale:
            return False
        self._stale.discard(session)
        return True

    def refresh_later(self, session: str) -> None:
        """A background session's record changed: read it outside the message queue. When
        eight turns start at once, eight reads behind eight writers would hold the user's
        keys back for a second; the rail can wait for them."""
        self._stale.add(session)
        if self._stale_reader is None or self._stale_reader.done():
            self._stale_reader = asyncio.create_task(self._read_stale())

    async def _read_stale(self) -> None:
        try:
            while self._stale:
                session = self._stale.pop()
                try:
                    record = await self._engine().session(session)
                except KeyError:
                    self.records.pop(session, None)
                else:
                    if session in self.records:  # not deleted while it was read
                        self.records[session] = record
                self._read(session)
        except Exception as error:
            self._report_failure("read a session", error)

    def close(self) -> None:
        """Stop reading in the background (the app is closing)."""
        if self._stale_reader is not None:
            self._stale_reader.cancel()
